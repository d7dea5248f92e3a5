//! Multi-round-trip requests: `input_required`, retries carrying `inputResponses` and
//! sealed `requestState`, across server instances sharing a key ring, and every way a
//! state can be misused. Dispatch only, so through the in-process test client (every
//! message checked against the schema; `http_status` is what the transport would send).

use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use stateless_mcp::handler::Principal;
use stateless_mcp::protocol::ResourceContents;
use stateless_mcp::testing::{Response, TestClient};
use stateless_mcp::{HandlerError, InputRequired, RequestContext, ResourceDef, Server, ToolDef};

use stateless_mcp::settings::StateKeys;

use crate::support::in_process;

const K1: &str = "k1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
const K2: &str = "k2:HxscGRoYFxYVFBMSERAPDg0MCwoJCAcGBQQDAgEAAAA=";

#[derive(Deserialize, JsonSchema)]
struct Booking {
    city: String,
}

#[derive(Deserialize)]
struct Confirm {
    ok: bool,
}

/// A server with the conformance fixtures, a `book` tool that asks for confirmation and
/// carries the city in its state, and a resource that asks before it can be read.
fn server(keys: &str, ttl: Duration) -> Server {
    let b = stateless_mcp::fixtures::conformance(Server::builder())
        .state_keys(keys.parse::<StateKeys>().unwrap())
        .state_ttl(ttl)
        .tool(
            ToolDef::new("book").handler(|ctx: RequestContext, args: Booking| async move {
                let input = ctx.input();
                if let (Some(city), Some(Confirm { ok })) = (
                    input.state::<String>(),
                    input.accepted::<Confirm>("confirm"),
                ) {
                    assert_eq!(city, args.city, "state is bound to the arguments");
                    let who = ctx
                        .principal()
                        .and_then(|p| p.subject.clone())
                        .unwrap_or_else(|| "anonymous".into());
                    return Ok(format!("{who} booked {city}: {ok}"));
                }
                Err(HandlerError::from(
                    InputRequired::new()
                        .elicit_form(
                            "confirm",
                            format!("Book {}?", args.city),
                            json!({"type": "object", "properties": {"ok": {"type": "boolean"}}}),
                        )
                        .state(&args.city),
                ))
            }),
        )
        .tool(
            ToolDef::new("login").handler(|ctx: RequestContext, _: Empty| async move {
                if ctx.input().elicitation("login").is_some() {
                    return Ok("logged in");
                }
                Err(InputRequired::new()
                    .elicit_url("login", "Sign in", "https://example.com/login")
                    .into())
            }),
        )
        .resource(ResourceDef::new("vault://secret", "secret").handler(
            |ctx: RequestContext, uri| async move {
                match ctx.input().accepted::<Confirm>("unlock") {
                    Some(Confirm { ok: true }) => Ok(ResourceContents::text(uri, "the secret")),
                    _ => Err(InputRequired::new()
                        .elicit_form(
                            "unlock",
                            "Unlock the vault?",
                            json!({"type": "object", "properties": {"ok": {"type": "boolean"}}}),
                        )
                        .state(&"vault")
                        .into()),
                }
            },
        ));
    b.build().unwrap()
}

#[derive(Deserialize, JsonSchema)]
struct Empty {}

fn serve(keys: &str) -> TestClient {
    in_process::client(server(keys, Duration::from_secs(600)))
}

/// A caller as an authentication layer would present it.
fn user(name: &str) -> Principal {
    Principal::new(name).with_issuer("https://issuer.test")
}

fn caps(c: Value) -> Value {
    json!({"io.modelcontextprotocol/clientCapabilities": c})
}

fn elicit_caps() -> Value {
    caps(json!({"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {}}))
}

async fn call(client: &TestClient, params: Value) -> Response {
    client.request("tools/call", params).await.unwrap()
}

fn book(city: &str, extra: Value) -> Value {
    let mut p = json!({"name": "book", "arguments": {"city": city}, "_meta": elicit_caps()});
    for (k, v) in extra.as_object().unwrap() {
        p[k] = v.clone();
    }
    p
}

fn confirm() -> Value {
    json!({"confirm": {"action": "accept", "content": {"ok": true}}})
}

/// Round 1 of `book`: the sealed state.
async fn first_round(client: &TestClient, city: &str) -> String {
    let r1 = call(client, book(city, json!({}))).await;
    assert_eq!(r1.http_status, 200);
    let result = r1.result().unwrap();
    assert_eq!(result["resultType"], "input_required");
    assert_eq!(
        result["inputRequests"]["confirm"]["method"],
        "elicitation/create"
    );
    assert!(
        result.get("ttlMs").is_none(),
        "input_required is never cacheable"
    );
    result["requestState"].as_str().unwrap().to_owned()
}

fn reason(ex: &Response) -> String {
    assert_eq!(ex.http_status, 400, "{}", ex.message);
    let e = ex
        .error()
        .unwrap_or_else(|| panic!("an error: {}", ex.message));
    assert_eq!(e.code, -32602, "{}", ex.message);
    e.data
        .as_ref()
        .and_then(|d| d["reason"].as_str())
        .unwrap_or_else(|| panic!("a reason in {}", ex.message))
        .to_owned()
}

#[tokio::test]
async fn a_state_sealed_by_one_instance_is_accepted_by_another_with_the_same_keys() {
    let a = serve(K1);
    let b = serve(K1);
    let state = first_round(&a, "Lisbon").await;
    assert!(state.starts_with("v1.k1."), "{state}");
    let r2 = call(
        &b,
        book(
            "Lisbon",
            json!({"inputResponses": confirm(), "requestState": state}),
        ),
    )
    .await;
    assert_eq!(r2.http_status, 200, "{}", r2.message);
    assert_eq!(r2.result().unwrap()["resultType"], "complete");
    assert_eq!(
        r2.result().unwrap()["content"][0]["text"],
        "anonymous booked Lisbon: true"
    );
}

#[tokio::test]
async fn every_tampering_and_replay_is_rejected_with_invalid_params() {
    let a = serve(K1);
    let client = a;
    let state = first_round(&client, "Oslo").await;
    let retry = |city: &str, state: Value| {
        book(
            city,
            json!({"inputResponses": confirm(), "requestState": state}),
        )
    };

    let appended = call(&client, retry("Oslo", json!(format!("{state}-TAMPERED")))).await;
    assert!(
        ["malformed", "tampered"].contains(&reason(&appended).as_str()),
        "{}",
        appended.message
    );

    let mut bytes = state.clone().into_bytes();
    let i = bytes.len() - 10;
    bytes[i] = if bytes[i] == b'A' { b'B' } else { b'A' };
    let flipped = call(
        &client,
        retry("Oslo", json!(String::from_utf8(bytes).unwrap())),
    )
    .await;
    assert_eq!(reason(&flipped), "tampered");

    let other_args = call(&client, retry("Paris", json!(state))).await;
    assert_eq!(reason(&other_args), "wrong_params");

    let other_method = json!({"uri": "vault://secret", "requestState": state,
                                  "inputResponses": {"unlock": {"action": "accept", "content": {"ok": true}}},
                                  "_meta": elicit_caps()});
    let read = client
        .request("resources/read", other_method)
        .await
        .unwrap();
    assert_eq!(reason(&read), "wrong_method");

    let foreign = serve(K2);
    let r = call(&foreign, retry("Oslo", json!(state))).await;
    assert_eq!(reason(&r), "unknown_key");

    let not_a_string = call(&client, retry("Oslo", json!(42))).await;
    assert_eq!(not_a_string.error().unwrap().code, -32602);
    assert_eq!(not_a_string.http_status, 400);

    // A fresh, untouched state still works: nothing above consumed or poisoned it.
    let ok = call(&client, retry("Oslo", json!(state))).await;
    assert_eq!(ok.result().unwrap()["resultType"], "complete");
}

#[tokio::test]
async fn a_state_is_bound_to_its_caller() {
    let client = serve(K1);
    let as_user = |name: &str, params: Value| {
        let client = client.clone().principal(user(name));
        async move { client.request("tools/call", params).await.unwrap() }
    };
    let r1 = as_user("alice", book("Rome", json!({}))).await;
    let state = r1.result().unwrap()["requestState"]
        .as_str()
        .unwrap()
        .to_owned();
    let retry = book(
        "Rome",
        json!({"inputResponses": confirm(), "requestState": state}),
    );
    let bob = as_user("bob", retry.clone()).await;
    assert_eq!(reason(&bob), "wrong_principal");
    let anonymous = call(&client, retry.clone()).await;
    assert_eq!(reason(&anonymous), "wrong_principal");
    let alice = as_user("alice", retry).await;
    assert_eq!(
        alice.result().unwrap()["content"][0]["text"],
        "alice booked Rome: true"
    );
}

#[tokio::test]
async fn expired_states_are_rejected() {
    let client = in_process::client(server(K1, Duration::from_secs(1)));
    let state = first_round(&client, "Bern").await;
    // The expiry has one-second resolution: wait until it has certainly passed.
    tokio::time::sleep(Duration::from_millis(2100)).await;
    let r = call(
        &client,
        book(
            "Bern",
            json!({"inputResponses": confirm(), "requestState": state}),
        ),
    )
    .await;
    assert_eq!(reason(&r), "expired");
}

#[tokio::test]
async fn key_rotation_old_keys_open_and_the_newest_seals() {
    let old = serve(K1);
    let rotated = serve(&format!("{K2},{K1}"));
    let old_state = first_round(&old, "Turin").await;
    let r = call(
        &rotated,
        book(
            "Turin",
            json!({"inputResponses": confirm(), "requestState": old_state}),
        ),
    )
    .await;
    assert_eq!(r.result().unwrap()["resultType"], "complete");
    let new_state = first_round(&rotated, "Turin").await;
    assert!(new_state.starts_with("v1.k2."), "{new_state}");
    let r = call(
        &old,
        book(
            "Turin",
            json!({"inputResponses": confirm(), "requestState": new_state}),
        ),
    )
    .await;
    assert_eq!(reason(&r), "unknown_key");
}

#[tokio::test]
async fn undeclared_capabilities_are_never_requested() {
    let client = serve(K1);
    // Form elicitation, client declares sampling only.
    let r = call(
        &client,
        json!({"name": "test_input_required_result_elicitation", "arguments": {},
               "_meta": caps(json!({"sampling": {}}))}),
    )
    .await;
    assert_eq!(r.http_status, 400);
    assert_eq!(r.error().unwrap().code, -32021);
    assert_eq!(
        r.message["error"]["data"]["requiredCapabilities"],
        json!({"elicitation": {"form": {}}})
    );
    // URL elicitation, client declares form mode only (`{}`).
    let r = call(
        &client,
        json!({"name": "login", "arguments": {}, "_meta": caps(json!({"elicitation": {}}))}),
    )
    .await;
    assert_eq!(r.error().unwrap().code, -32021);
    assert_eq!(
        r.message["error"]["data"]["requiredCapabilities"],
        json!({"elicitation": {"url": {}}})
    );
    // With URL mode declared, the URL request goes out; `accept` completes it.
    let url_caps = caps(json!({"elicitation": {"url": {}}}));
    let r = call(
        &client,
        json!({"name": "login", "arguments": {}, "_meta": url_caps}),
    )
    .await;
    assert_eq!(
        r.result().unwrap()["inputRequests"]["login"]["params"],
        json!({"mode": "url", "message": "Sign in", "url": "https://example.com/login"})
    );
    // The fallback path: a handler that checks capabilities asks only for what it may.
    let r = call(
        &client,
        json!({"name": "test_input_required_result_capabilities", "arguments": {},
               "_meta": caps(json!({"roots": {}}))}),
    )
    .await;
    let requests = r.result().unwrap()["inputRequests"].as_object().unwrap();
    assert_eq!(requests.keys().collect::<Vec<_>>(), ["client_roots"]);
}

#[tokio::test]
async fn missing_answers_ask_again_and_malformed_ones_are_invalid_params() {
    let client = serve(K1);
    let elicit = |responses: Value| {
        json!({"name": "test_input_required_result_elicitation", "arguments": {},
               "inputResponses": responses, "_meta": elicit_caps()})
    };
    let wrong_key = call(
        &client,
        elicit(json!({"wrong": {"action": "accept", "content": {"name": "x"}}})),
    )
    .await;
    assert_eq!(wrong_key.result().unwrap()["resultType"], "input_required");
    let declined = call(&client, elicit(json!({"user_name": {"action": "decline"}}))).await;
    assert_eq!(declined.result().unwrap()["resultType"], "input_required");
    for bad in [
        json!(null),
        json!(12345),
        json!({"user_name": 12345}),
        json!([]),
    ] {
        let r = call(&client, elicit(bad.clone())).await;
        assert_eq!(r.http_status, 400, "{bad}: {}", r.message);
        assert_eq!(r.error().unwrap().code, -32602, "{bad}");
        assert_eq!(r.message["id"], json!(r.request_id));
    }
    let extra = call(
        &client,
        elicit(
            json!({"user_name": {"action": "accept", "content": {"name": "Ada"}},
                      "unknown": {"action": "accept", "content": {}}}),
        ),
    )
    .await;
    assert_eq!(extra.result().unwrap()["content"][0]["text"], "Hello, Ada!");
}

#[tokio::test]
async fn resources_and_prompts_can_ask_for_input_and_lists_cannot() {
    let client = serve(K1);
    let r1 = client
        .request(
            "resources/read",
            json!({"uri": "vault://secret", "_meta": elicit_caps()}),
        )
        .await
        .unwrap();
    let result = r1.result().unwrap();
    assert_eq!(result["resultType"], "input_required");
    let state = result["requestState"].as_str().unwrap();
    let r2 = client
        .request(
            "resources/read",
            json!({"uri": "vault://secret", "requestState": state, "_meta": elicit_caps(),
                   "inputResponses": {"unlock": {"action": "accept", "content": {"ok": true}}}}),
        )
        .await
        .unwrap();
    assert_eq!(r2.result().unwrap()["contents"][0]["text"], "the secret");

    let p1 = client
        .request(
            "prompts/get",
            json!({"name": "test_input_required_result_prompt", "_meta": elicit_caps()}),
        )
        .await
        .unwrap();
    assert_eq!(p1.result().unwrap()["resultType"], "input_required");
    let p2 = client
        .request("prompts/get", json!({"name": "test_input_required_result_prompt", "_meta": elicit_caps(),
                   "inputResponses": {"user_context": {"action": "accept", "content": {"context": "ctx"}}}}),
        )
        .await
        .unwrap();
    assert_eq!(
        p2.result().unwrap()["messages"][0]["content"]["text"],
        "Context: ctx"
    );

    for method in ["tools/list", "prompts/list", "server/discover"] {
        let r = client
            .request(method, json!({"_meta": elicit_caps()}))
            .await
            .unwrap();
        assert_ne!(r.result().unwrap()["resultType"], "input_required");
    }
}

#[tokio::test]
async fn multi_round_state_carries_earlier_answers() {
    let a = serve(K1);
    let b = serve(K1);
    let tool = |responses: Value, state: Option<&str>| {
        let mut p = json!({"name": "test_input_required_result_multi_round", "arguments": {},
                           "inputResponses": responses, "_meta": elicit_caps()});
        if let Some(s) = state {
            p["requestState"] = json!(s);
        }
        p
    };
    let r1 = call(&a, tool(json!({}), None)).await;
    let s1 = r1.result().unwrap()["requestState"]
        .as_str()
        .unwrap()
        .to_owned();
    let r2 = call(
        &b,
        tool(
            json!({"step1": {"action": "accept", "content": {"name": "Alice"}}}),
            Some(&s1),
        ),
    )
    .await;
    let s2 = r2.result().unwrap()["requestState"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_ne!(s1, s2);
    assert!(r2.result().unwrap()["inputRequests"].get("step2").is_some());
    let r3 = call(
        &a,
        tool(
            json!({"step2": {"action": "accept", "content": {"color": "blue"}}}),
            Some(&s2),
        ),
    )
    .await;
    assert_eq!(
        r3.result().unwrap()["content"][0]["text"],
        "Alice likes blue"
    );
    println!(
        "sealed state sizes: round 1 {} bytes, round 2 {} bytes",
        s1.len(),
        s2.len()
    );
}
