//! Hand-written examples from the spec digest (`shared/spec/DIGEST.md`).

use serde_json::json;
use stateless_mcp::protocol::{
    CachePolicy, CacheScope, ClientCapabilities, DiscoverResult, ErrorObject, ErrorResponse,
    Implementation, Notification, ProgressParams, RequestId, RequestMeta,
};

use super::{digest_discover_result, example_capabilities, golden_result, parse_meta};
use crate::support::schema::assert_valid;

#[test]
fn discover_exchange() {
    let request = json!({"jsonrpc": "2.0", "id": "discover-1", "method": "server/discover",
        "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                             "io.modelcontextprotocol/clientCapabilities": {}}}});
    assert_valid("DiscoverRequest", &request);
    assert_valid("JSONRPCRequest", &request);
    let meta = parse_meta(&request["params"]).unwrap();
    assert_eq!(
        meta,
        RequestMeta::new("2026-07-28", ClientCapabilities::default())
    );

    let response =
        json!({"jsonrpc": "2.0", "id": "discover-1", "result": digest_discover_result()});
    assert_valid("DiscoverResultResponse", &response);
    let result: DiscoverResult = serde_json::from_value(response["result"].clone()).unwrap();
    assert_eq!(result.supported_versions, ["2026-07-28"]);
    assert_eq!(result.capabilities, example_capabilities());
    assert_eq!(
        result.cache,
        CachePolicy::new(3_600_000, CacheScope::Public)
    );
    assert_eq!(
        result.meta.server_info.as_ref().unwrap().name,
        "ExampleServer"
    );
    golden_result("DiscoverResult", &result, &digest_discover_result());
}

#[test]
fn tools_call_request() {
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "get_weather", "arguments": {"location": "Seattle, WA"},
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientInfo": {"name": "ExampleClient", "version": "1.0.0"},
                      "io.modelcontextprotocol/clientCapabilities": {}}}});
    assert_valid("CallToolRequest", &request);
    let meta = parse_meta(&request["params"]).unwrap();
    assert_eq!(meta.protocol_version, "2026-07-28");
    assert_eq!(
        meta.client_info,
        Some(Implementation::new("ExampleClient", "1.0.0"))
    );
    assert_eq!(meta.progress_token, None);
    assert_eq!(meta.log_level, None);
    assert_eq!(
        serde_json::to_value(&meta).unwrap(),
        request["params"]["_meta"]
    );
    let id: RequestId = serde_json::from_value(request["id"].clone()).unwrap();
    assert_eq!(id, RequestId::Number(1));
}

#[test]
fn progress_notification() {
    let wire = json!({"jsonrpc": "2.0", "method": "notifications/progress",
        "params": {"progressToken": "abc123", "progress": 50, "total": 100, "message": "…"}});
    assert_valid("ProgressNotification", &wire);
    let params: ProgressParams = serde_json::from_value(wire["params"].clone()).unwrap();
    assert_eq!(
        params,
        ProgressParams::new("abc123".into(), 50.0, Some(100.0), Some("…".into()))
    );
    let again = serde_json::to_value(Notification::new("notifications/progress", params)).unwrap();
    assert_valid("ProgressNotification", &again);
    assert_eq!(again["params"]["progress"].as_f64(), Some(50.0));
    assert_eq!(again["params"]["progressToken"], "abc123");
}

#[test]
fn error_responses() {
    for (wire, def) in [
        (
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32022,
                "message": "Unsupported protocol version",
                "data": {"supported": ["2026-07-28", "2025-11-25"], "requested": "1900-01-01"}}}),
            "UnsupportedProtocolVersionError",
        ),
        (
            json!({"jsonrpc": "2.0", "id": 5, "error": {"code": -32602,
                "message": "Resource not found", "data": {"uri": "file:///nonexistent.txt"}}}),
            "JSONRPCErrorResponse",
        ),
        (
            json!({"jsonrpc": "2.0", "error": {"code": -32600, "message": "Batch requests are not supported"}}),
            "JSONRPCErrorResponse",
        ),
    ] {
        assert_valid(def, &wire);
        let parsed: ErrorResponse = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(serde_json::to_value(&parsed).unwrap(), wire);
    }
    let parsed: ErrorResponse = serde_json::from_value(json!({"jsonrpc": "2.0", "id": 5,
        "error": {"code": -32602, "message": "Resource not found",
                  "data": {"uri": "file:///nonexistent.txt"}}}))
    .unwrap();
    assert_eq!(
        parsed,
        ErrorResponse::new(
            Some(RequestId::Number(5)),
            ErrorObject::resource_not_found("file:///nonexistent.txt")
        )
    );
}
