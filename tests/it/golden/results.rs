//! Results: tools/call, resources/read, prompts/get, completion/complete, server/discover.

use std::sync::Arc;

use serde_json::json;
use stateless_mcp::protocol::{
    CachePolicy, CacheScope, CallToolResult, CompleteResult, ContentBlock, DiscoverResult,
    GetPromptResult, Implementation, MAX_COMPLETION_VALUES, PromptMessage, ReadResourceResult,
    Resource, ResourceContents, Role, SERVER_INFO_KEY, ServerCapabilities,
};

use super::{
    digest_discover_result, example_capabilities, golden, golden_result, server_info_json, stamped,
};

#[test]
fn call_tool_result_text() {
    let r = CallToolResult::text("hello");
    assert!(!r.is_error());
    golden_result(
        "CallToolResult",
        &r,
        &json!({"resultType": "complete", "content": [{"type": "text", "text": "hello"}]}),
    );

    let mut r = r;
    r.meta = stamped();
    golden_result(
        "CallToolResult",
        &r,
        &json!({"resultType": "complete", "content": [{"type": "text", "text": "hello"}],
                "_meta": server_info_json()}),
    );
}

#[test]
fn call_tool_result_error() {
    let r = CallToolResult::error("Invalid date: use YYYY-MM-DD");
    assert!(r.is_error());
    golden_result(
        "CallToolResult",
        &r,
        &json!({"resultType": "complete", "isError": true,
                "content": [{"type": "text", "text": "Invalid date: use YYYY-MM-DD"}]}),
    );
}

#[test]
fn call_tool_result_structured() {
    let r = CallToolResult::structured(json!({"sum": 3.5, "terms": [1, 2.5]}));
    assert!(!r.is_error());
    golden_result(
        "CallToolResult",
        &r,
        &json!({"resultType": "complete",
                "content": [{"type": "text", "text": r#"{"sum":3.5,"terms":[1,2.5]}"#}],
                "structuredContent": {"sum": 3.5, "terms": [1, 2.5]}}),
    );

    // structuredContent may be any JSON value, not only an object.
    for value in [json!([1, 2, 3]), json!("plain"), json!(42), json!(false)] {
        let r = CallToolResult::structured(value.clone());
        golden_result(
            "CallToolResult",
            &r,
            &json!({"resultType": "complete",
                    "content": [{"type": "text", "text": value.to_string()}],
                    "structuredContent": value}),
        );
    }
}

#[test]
fn call_tool_result_every_content_block() {
    let mut r = CallToolResult::new(vec![
        ContentBlock::text("t"),
        ContentBlock::image(b"img", "image/png"),
        ContentBlock::audio(b"snd", "audio/wav"),
        ContentBlock::resource(ResourceContents::text("file:///a", "a")),
        ContentBlock::resource(ResourceContents::blob("file:///b", b"b")),
        ContentBlock::resource_link(Resource::new("file:///c", "c")),
    ]);
    r.meta = stamped();
    r.meta
        .extra
        .insert("com.example/requestCost".into(), json!(3));
    golden_result(
        "CallToolResult",
        &r,
        &json!({"resultType": "complete", "content": [
                    {"type": "text", "text": "t"},
                    {"type": "image", "data": "aW1n", "mimeType": "image/png"},
                    {"type": "audio", "data": "c25k", "mimeType": "audio/wav"},
                    {"type": "resource", "resource": {"uri": "file:///a", "text": "a"}},
                    {"type": "resource", "resource": {"uri": "file:///b", "blob": "Yg=="}},
                    {"type": "resource_link", "uri": "file:///c", "name": "c"}],
                "_meta": {SERVER_INFO_KEY: {"name": "golden-server", "version": "1.2.3"},
                          "com.example/requestCost": 3}}),
    );
}

#[test]
fn read_resource_result() {
    let mut r = ReadResourceResult::new(vec![
        ResourceContents::text("file:///a.txt", "alpha").with_mime_type("text/plain"),
        ResourceContents::blob("file:///a.txt#raw", b"alpha"),
    ]);
    r.cache = Some(CachePolicy::new(30_000, CacheScope::Private));
    r.meta = stamped();
    golden_result(
        "ReadResourceResult",
        &r,
        &json!({"resultType": "complete",
                "contents": [{"uri": "file:///a.txt", "mimeType": "text/plain", "text": "alpha"},
                             {"uri": "file:///a.txt#raw", "blob": "YWxwaGE="}],
                "ttlMs": 30000, "cacheScope": "private",
                "_meta": server_info_json()}),
    );

    let mut one: ReadResourceResult = ResourceContents::text("demo://x", "x").into();
    assert_eq!(one.cache, None, "the server fills in the cache policy");
    one.cache = Some(CachePolicy::new(0, CacheScope::Public));
    golden_result(
        "ReadResourceResult",
        &one,
        &json!({"resultType": "complete", "contents": [{"uri": "demo://x", "text": "x"}],
                "ttlMs": 0, "cacheScope": "public"}),
    );
}

#[test]
fn get_prompt_result() {
    let messages = vec![
        PromptMessage::user_text("Review this code"),
        PromptMessage::new(Role::Assistant, ContentBlock::image(b"img", "image/jpeg")),
        PromptMessage::new(
            Role::User,
            ContentBlock::resource(ResourceContents::text("file:///main.rs", "fn main() {}")),
        ),
    ];
    golden(
        "PromptMessage",
        &messages[0],
        &json!({"role": "user", "content": {"type": "text", "text": "Review this code"}}),
    );
    let mut r = GetPromptResult::new(messages).with_description("A code review prompt");
    r.meta = stamped();
    golden_result(
        "GetPromptResult",
        &r,
        &json!({"resultType": "complete", "description": "A code review prompt",
                "messages": [
                    {"role": "user", "content": {"type": "text", "text": "Review this code"}},
                    {"role": "assistant", "content": {"type": "image", "data": "aW1n", "mimeType": "image/jpeg"}},
                    {"role": "user", "content": {"type": "resource",
                        "resource": {"uri": "file:///main.rs", "text": "fn main() {}"}}}],
                "_meta": server_info_json()}),
    );
    golden_result(
        "GetPromptResult",
        &GetPromptResult::new(vec![]),
        &json!({"resultType": "complete", "messages": []}),
    );
}

#[test]
fn complete_result_small() {
    let r = CompleteResult::from_values(vec!["python".into(), "pytorch".into()]);
    golden_result(
        "CompleteResult",
        &r,
        &json!({"resultType": "complete",
                "completion": {"values": ["python", "pytorch"], "total": 2, "hasMore": false}}),
    );
    golden_result(
        "CompleteResult",
        &CompleteResult::from_values(vec![]),
        &json!({"resultType": "complete", "completion": {"values": [], "total": 0, "hasMore": false}}),
    );
}

#[test]
fn complete_result_caps_at_100_values() {
    assert_eq!(MAX_COMPLETION_VALUES, 100);
    let values = |n: usize| (0..n).map(|i| format!("v{i}")).collect::<Vec<_>>();

    let exactly = CompleteResult::from_values(values(100));
    golden_result(
        "CompleteResult",
        &exactly,
        &json!({"resultType": "complete",
                "completion": {"values": values(100), "total": 100, "hasMore": false}}),
    );

    let mut over = CompleteResult::from_values(values(150));
    assert_eq!(over.completion.values.len(), 100);
    assert_eq!(
        over.completion.values.last().map(String::as_str),
        Some("v99")
    );
    over.meta = stamped();
    golden_result(
        "CompleteResult",
        &over,
        &json!({"resultType": "complete",
                "completion": {"values": values(100), "total": 150, "hasMore": true},
                "_meta": server_info_json()}),
    );
}

#[test]
fn discover_result() {
    let minimal = DiscoverResult::new(
        vec!["2026-07-28".into()],
        ServerCapabilities::default(),
        CachePolicy::default(),
    );
    golden_result(
        "DiscoverResult",
        &minimal,
        &json!({"resultType": "complete", "supportedVersions": ["2026-07-28"],
                "capabilities": {}, "ttlMs": 60000, "cacheScope": "public"}),
    );

    let mut full = DiscoverResult::new(
        vec!["2026-07-28".into()],
        example_capabilities(),
        CachePolicy::new(3_600_000, CacheScope::Public),
    );
    full.instructions = Some("optional natural-language guidance".into());
    full.meta.server_info = Some(Arc::new(Implementation::new("ExampleServer", "1.0.0")));
    golden_result("DiscoverResult", &full, &digest_discover_result());
}
