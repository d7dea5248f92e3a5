//! Every `ErrorObject` constructor, alone and inside an error response.

use serde_json::{Value, json};
use stateless_mcp::protocol::{
    ClientCapabilities, ErrorCode, ErrorObject, ErrorResponse, RequestId,
};

use super::golden;
use crate::support::schema::assert_valid;

/// Validates `error` as a wire object, inside an error response with and without an id, and
/// round-trips the response.
#[track_caller]
fn check_error(error: &ErrorObject, object_def: Option<&str>, response_def: &str) -> Value {
    let object = serde_json::to_value(error).unwrap();
    assert_valid("Error", &object);
    if let Some(def) = object_def {
        assert_valid(def, &object);
    }
    for id in [Some(RequestId::Number(3)), Some(RequestId::from("x")), None] {
        let response = ErrorResponse::new(id.clone(), error.clone());
        let mut expected = json!({"jsonrpc": "2.0", "error": object});
        if let Some(id) = &id {
            expected["id"] = serde_json::to_value(id).unwrap();
        }
        golden("JSONRPCErrorResponse", &response, &expected);
        assert_valid(response_def, &expected);
        assert_valid("JSONRPCResponse", &expected);
        assert_eq!(response.id, id);
    }
    object
}

#[test]
fn standard_json_rpc_errors() {
    let cases = [
        (
            ErrorObject::parse_error("Parse error"),
            ErrorCode::ParseError,
            -32700,
            "ParseError",
        ),
        (
            ErrorObject::invalid_request("Invalid Request"),
            ErrorCode::InvalidRequest,
            -32600,
            "InvalidRequestError",
        ),
        (
            ErrorObject::invalid_params("Invalid cursor"),
            ErrorCode::InvalidParams,
            -32602,
            "InvalidParamsError",
        ),
        (
            ErrorObject::internal_error("Internal error"),
            ErrorCode::InternalError,
            -32603,
            "InternalError",
        ),
    ];
    for (error, kind, code, def) in cases {
        assert_eq!(error.kind(), Some(kind));
        assert_eq!(kind.code(), code);
        let object = check_error(&error, Some(def), "JSONRPCErrorResponse");
        assert_eq!(object, json!({"code": code, "message": error.message}));
    }
    // DIGEST §10: the invalid-cursor error, exactly.
    assert_eq!(
        serde_json::to_value(ErrorObject::invalid_params("Invalid cursor")).unwrap(),
        json!({"code": -32602, "message": "Invalid cursor"})
    );
    assert_eq!(ErrorObject::parse_error("x").http_status(), 400);
    assert_eq!(ErrorObject::internal_error("x").http_status(), 500);
}

#[test]
fn method_not_found_error() {
    let error = ErrorObject::method_not_found("prompts/list", "no prompts");
    assert_eq!(error.kind(), Some(ErrorCode::MethodNotFound));
    assert_eq!(error.http_status(), 404);
    let object = check_error(&error, Some("MethodNotFoundError"), "JSONRPCErrorResponse");
    assert_eq!(
        object,
        json!({"code": -32601, "message": "Method not found: prompts/list",
               "data": {"method": "prompts/list", "reason": "no prompts"}})
    );
}

#[test]
fn invalid_params_and_resource_not_found_errors() {
    let with = ErrorObject::invalid_params_with("Unknown tool: nope", json!({"name": "nope"}));
    let object = check_error(&with, Some("InvalidParamsError"), "JSONRPCErrorResponse");
    assert_eq!(
        object,
        json!({"code": -32602, "message": "Unknown tool: nope", "data": {"name": "nope"}})
    );

    // DIGEST §13.5, exactly; never the retired -32002.
    let error = ErrorObject::resource_not_found("file:///nonexistent.txt");
    assert_eq!(error.kind(), Some(ErrorCode::InvalidParams));
    let object = check_error(&error, Some("InvalidParamsError"), "JSONRPCErrorResponse");
    assert_eq!(
        object,
        json!({"code": -32602, "message": "Resource not found",
               "data": {"uri": "file:///nonexistent.txt"}})
    );
}

#[test]
fn header_mismatch_error() {
    let error = ErrorObject::header_mismatch("Mcp-Method header does not match method");
    assert_eq!(error.kind(), Some(ErrorCode::HeaderMismatch));
    assert_eq!(error.http_status(), 400);
    let object = check_error(&error, None, "HeaderMismatchError");
    assert_eq!(
        object,
        json!({"code": -32020, "message": "Mcp-Method header does not match method"})
    );
}

#[test]
fn missing_client_capability_error() {
    let error = ErrorObject::missing_client_capability(&ClientCapabilities::elicitation_form());
    assert_eq!(
        error.kind(),
        Some(ErrorCode::MissingRequiredClientCapability)
    );
    assert_eq!(error.http_status(), 400);
    let object = check_error(&error, None, "MissingRequiredClientCapabilityError");
    assert_eq!(
        object,
        json!({"code": -32021, "message": "Missing required client capability",
               "data": {"requiredCapabilities": {"elicitation": {}}}})
    );
    assert_valid(
        "ClientCapabilities",
        &object["data"]["requiredCapabilities"],
    );

    let sampling = ErrorObject::missing_client_capability(&ClientCapabilities::sampling());
    let object = check_error(&sampling, None, "MissingRequiredClientCapabilityError");
    assert_eq!(
        object["data"],
        json!({"requiredCapabilities": {"sampling": {}}})
    );
}

#[test]
fn unsupported_protocol_version_error() {
    let error =
        ErrorObject::unsupported_protocol_version(&["2026-07-28", "2025-11-25"], "1900-01-01");
    assert_eq!(error.kind(), Some(ErrorCode::UnsupportedProtocolVersion));
    assert_eq!(error.http_status(), 400);
    check_error(&error, None, "UnsupportedProtocolVersionError");
    // DIGEST §5, exactly.
    let response =
        serde_json::to_value(ErrorResponse::new(Some(RequestId::Number(1)), error)).unwrap();
    assert_eq!(
        response,
        json!({"jsonrpc": "2.0", "id": 1,
               "error": {"code": -32022, "message": "Unsupported protocol version",
                         "data": {"supported": ["2026-07-28", "2025-11-25"], "requested": "1900-01-01"}}})
    );
}

#[test]
fn error_codes_are_this_revisions() {
    for code in [-32002, -32042, -32000, -32099, 0] {
        assert_eq!(ErrorCode::from_code(code), None, "{code}");
    }
    let e: ErrorObject = serde_json::from_value(json!({"code": -32002, "message": "old"})).unwrap();
    assert_eq!(e.kind(), None);
    assert_eq!(e.http_status(), 400);
}
