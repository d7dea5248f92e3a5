//! Multi-round-trip and subscription shapes (the types exist now; their behaviour comes with
//! the next issue), plus `_meta` details: application keys and a `null` structured result.

use std::collections::BTreeMap;

use serde_json::{Value, json};
use stateless_mcp::protocol::{
    AcknowledgedParams, CallToolResult, CreateMessageParams, CreateMessageResult, ElicitAction,
    ElicitParams, ElicitResult, InputRequest, InputRequiredResult, InputResponse, JsonObject,
    ListChangedParams, ListRootsParams, ListRootsResult, Notification, RequestId, RequestMeta,
    ResourceUpdatedParams, SamplingMessage, SubscriptionFilter, SubscriptionMeta,
    SubscriptionsListenResult,
};

use super::{golden, golden_result};
use crate::support::schema::assert_valid;

fn object(v: Value) -> JsonObject {
    v.as_object().unwrap().clone()
}

#[test]
fn input_required_result_with_every_kind_of_request() {
    let mut requests = BTreeMap::new();
    requests.insert(
        "name".to_owned(),
        InputRequest::Elicit(ElicitParams::form(
            "What is your name?",
            object(json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]})),
        )),
    );
    requests.insert(
        "login".to_owned(),
        InputRequest::Elicit(ElicitParams::url(
            "Sign in",
            "https://auth.example.com/start",
        )),
    );
    requests.insert(
        "capital".to_owned(),
        InputRequest::CreateMessage(CreateMessageParams::new(
            vec![SamplingMessage::user_text("What is the capital of France?")],
            100,
        )),
    );
    requests.insert(
        "roots".to_owned(),
        InputRequest::ListRoots(ListRootsParams::default()),
    );
    let result = InputRequiredResult::new(Some(requests), Some("opaque".into()));
    golden(
        "InputRequiredResult",
        &result,
        &json!({
            "resultType": "input_required",
            "inputRequests": {
                "capital": {"method": "sampling/createMessage", "params": {
                    "messages": [{"role": "user", "content": {"type": "text", "text": "What is the capital of France?"}}],
                    "maxTokens": 100}},
                "login": {"method": "elicitation/create", "params": {
                    "mode": "url", "message": "Sign in", "url": "https://auth.example.com/start"}},
                "name": {"method": "elicitation/create", "params": {
                    "mode": "form", "message": "What is your name?",
                    "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}},
                "roots": {"method": "roots/list", "params": {}}
            },
            "requestState": "opaque"
        }),
    );
    let state_only = InputRequiredResult::new(None, Some("retry-now".into()));
    golden(
        "InputRequiredResult",
        &state_only,
        &json!({"resultType": "input_required", "requestState": "retry-now"}),
    );
}

#[test]
fn input_responses_read_by_shape() {
    let elicit: InputResponse =
        serde_json::from_value(json!({"action": "accept", "content": {"name": "octocat"}}))
            .unwrap();
    assert!(matches!(
        &elicit,
        InputResponse::Elicit(ElicitResult {
            action: ElicitAction::Accept,
            content: Some(_),
            ..
        })
    ));
    let sampled: InputResponse = serde_json::from_value(json!({"role": "assistant",
        "content": {"type": "text", "text": "Paris."}, "model": "m", "stopReason": "endTurn"}))
    .unwrap();
    assert!(matches!(
        sampled,
        InputResponse::CreateMessage(CreateMessageResult { .. })
    ));
    let roots: InputResponse = serde_json::from_value(
        json!({"roots": [{"uri": "file:///test/root", "name": "Test Root"}]}),
    )
    .unwrap();
    assert!(
        matches!(&roots, InputResponse::ListRoots(ListRootsResult { roots, .. }) if roots.len() == 1)
    );
    for (def, v) in [("ElicitResult", &elicit), ("ListRootsResult", &roots)] {
        assert_valid(def, &serde_json::to_value(v).unwrap());
    }
}

#[test]
fn listen_stream_messages() {
    let meta = SubscriptionMeta {
        subscription_id: RequestId::from("listen-1"),
    };
    let mut filter = SubscriptionFilter::default();
    filter.tools_list_changed = Some(true);
    filter.resource_subscriptions = Some(vec!["file:///project/config.json".into()]);
    let ack = Notification::new(
        "notifications/subscriptions/acknowledged",
        AcknowledgedParams {
            meta: meta.clone(),
            notifications: filter,
        },
    );
    let v = serde_json::to_value(&ack).unwrap();
    assert_eq!(
        v,
        json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": {
            "_meta": {"io.modelcontextprotocol/subscriptionId": "listen-1"},
            "notifications": {"toolsListChanged": true, "resourceSubscriptions": ["file:///project/config.json"]}}})
    );
    assert_valid("SubscriptionsAcknowledgedNotification", &v);
    let changed = serde_json::to_value(Notification::new(
        "notifications/tools/list_changed",
        ListChangedParams { meta: meta.clone() },
    ))
    .unwrap();
    assert_valid("ToolListChangedNotification", &changed);
    let updated = serde_json::to_value(Notification::new(
        "notifications/resources/updated",
        ResourceUpdatedParams {
            meta,
            uri: "file:///project/config.json".into(),
        },
    ))
    .unwrap();
    assert_valid("ResourceUpdatedNotification", &updated);
    golden_result(
        "SubscriptionsListenResult",
        &SubscriptionsListenResult::new(RequestId::Number(7)),
        &json!({"resultType": "complete", "_meta": {"io.modelcontextprotocol/subscriptionId": 7}}),
    );
}

#[test]
fn application_meta_keys_reach_handlers() {
    let raw = serde_json::value::to_raw_value(&json!({"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "com.example/tenant": "acme"
    }}))
    .unwrap();
    let meta = RequestMeta::from_params(Some(&raw)).unwrap();
    assert_eq!(meta.extra.get("com.example/tenant"), Some(&json!("acme")));
    let back = serde_json::to_value(&meta).unwrap();
    assert_eq!(back["com.example/tenant"], "acme");
    assert_valid("RequestMetaObject", &back);
}

#[test]
fn null_structured_content_survives() {
    let r = CallToolResult::structured(Value::Null);
    golden_result(
        "CallToolResult",
        &r,
        &json!({"resultType": "complete", "content": [{"type": "text", "text": "null"}], "structuredContent": null}),
    );
}
