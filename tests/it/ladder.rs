//! The JSON-RPC and protocol validation ladder (DESIGN §3, DIGEST §4.8): one test per rung,
//! each pinning the HTTP status, the JSON-RPC code, and whether the request id is echoed
//! (an unreadable id must leave `id` out, never send `null`).

use serde_json::{Value, json};

use crate::support::{Client, Exchange, TestServer, VERSION, fixtures_server, start, with_meta};

type Headers = Vec<(String, String)>;
/// One HTTP request: headers and body.
type Req = (Headers, String);

const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

/// The HTTP status and JSON-RPC code a request must be refused with.
type Want = (u16, i64);
const PARSE_ERROR: Want = (400, -32700);
const INVALID_REQUEST: Want = (400, -32600);
const INVALID_PARAMS: Want = (400, -32602);
const HEADER_MISMATCH: Want = (400, -32020);
const NOT_FOUND: Want = (404, -32601);

async fn setup() -> (TestServer, Client) {
    let srv = start(fixtures_server()).await;
    let c = Client::new(&srv.url);
    (srv, c)
}

/// A well-formed request: the standard headers (with `Mcp-Name` where one is needed) and
/// the standard `_meta` merged into `params`.
fn req(method: &str, id: Value, params: Value) -> Req {
    let params = with_meta(params);
    let named = matches!(method, "tools/call" | "prompts/get" | "resources/read");
    let name = params.get("name").or(params.get("uri"));
    let name = name.and_then(Value::as_str).filter(|_| named);
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    (Client::headers(method, name), body.to_string())
}

/// A `tools/list` request carrying exactly `body`.
fn list_raw(body: String) -> Req {
    (Client::headers("tools/list", None), body)
}

/// A `tools/list` request with `params` sent exactly as given.
fn list_params(id: Value, params: Value) -> Req {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": params});
    list_raw(body.to_string())
}

/// `_meta` with `key` set to `value`, or removed when `None`.
fn meta_with(key: &str, value: Option<Value>) -> Value {
    let mut m = crate::support::meta();
    let obj = m.as_object_mut().unwrap();
    match value {
        Some(v) => obj.insert(key.to_owned(), v),
        None => obj.remove(key),
    };
    m
}

/// `r` with header `name` set to `value` (removed when `None`); other headers kept.
fn set_header((mut h, body): Req, name: &str, value: Option<&str>) -> Req {
    h.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
    if let Some(v) = value {
        h.push((name.to_owned(), v.to_owned()));
    }
    (h, body)
}

/// Checks one JSON error reply with this status and code that echoes `id`, or has no `id`
/// member at all when `id` is `None`. Returns the error object.
fn check_error(x: &Exchange, status: u16, code: i64, id: Option<&Value>) -> Result<Value, String> {
    let r = x.messages.last().cloned().unwrap_or(Value::Null);
    let ok = x.messages.len() == 1
        && x.content_type().starts_with("application/json")
        && x.status == status
        && r.pointer("/error/code") == Some(&json!(code))
        && r.get("id") == id;
    if ok {
        Ok(r["error"].clone())
    } else {
        Err(format!("got {} {}", x.status, x.body))
    }
}

fn expect_error(x: &Exchange, (status, code): Want, id: Option<Value>) -> Value {
    let want = format!("want {status} / {code} / id {id:?}");
    check_error(x, status, code, id.as_ref()).unwrap_or_else(|e| panic!("{want}, {e}"))
}

/// Sends every request on `c` and asserts each gets the error (status, code, id), naming
/// every case that does not. Returns the error objects.
async fn errors_on(
    c: &Client,
    reqs: impl IntoIterator<Item = Req>,
    (status, code): Want,
    id: Option<Value>,
) -> Vec<Value> {
    let (mut errors, mut wrong) = (Vec::new(), Vec::new());
    for (headers, body) in reqs {
        let x = c.send(headers.clone(), body.clone(), None).await;
        match check_error(&x, status, code, id.as_ref()) {
            Ok(e) => errors.push(e),
            Err(e) => wrong.push(format!("{headers:?} {body}\n    -> {e}")),
        }
    }
    assert!(
        wrong.is_empty(),
        "expected {status} / {code} / id {id:?} for:\n{}",
        wrong.join("\n")
    );
    errors
}

/// Like [`errors_on`], on a fresh fixtures server.
async fn errors(reqs: impl IntoIterator<Item = Req>, want: Want, id: Option<Value>) -> Vec<Value> {
    let (_s, c) = setup().await;
    errors_on(&c, reqs, want, id).await
}

/// An id the error must echo.
fn id(v: impl Into<Value>) -> Option<Value> {
    Some(v.into())
}

fn bodies<const N: usize>(b: [&str; N]) -> impl Iterator<Item = Req> {
    b.into_iter().map(|s| list_raw(s.to_owned()))
}

fn list_body(id: Value) -> String {
    req("tools/list", id, json!({})).1
}

#[tokio::test]
async fn invalid_json_empty_body_and_trailing_garbage_are_parse_errors_without_id() {
    let truncated = r#"{"jsonrpc":"2.0","id":1,"method":"#;
    let trailing_comma = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list",}"#;
    let empty = ["", "  \r\n\t "];
    let cases = bodies([
        truncated,
        "{not json}",
        "nope",
        trailing_comma,
        empty[0],
        empty[1],
    ]);
    let ok = list_body(json!(1));
    let garbage = [format!("{ok} x"), format!("{ok}{ok}"), format!("{ok},")];
    errors(cases.chain(garbage.map(list_raw)), PARSE_ERROR, None).await;
}

#[tokio::test]
async fn batch_or_scalar_is_invalid_request_without_id() {
    let one = list_body(json!(1));
    let batches = [format!("[{one}]"), format!("[{one},{one}]"), "[]".into()];
    let scalars = bodies(["42", r#""tools/list""#, "null", "true"]);
    errors(
        batches.map(list_raw).into_iter().chain(scalars),
        INVALID_REQUEST,
        None,
    )
    .await;
}

#[tokio::test]
async fn missing_or_wrong_jsonrpc_is_invalid_request_with_id() {
    let cases = [None, id("1.0"), id(2.0), Some(Value::Null)].map(|v| {
        let mut msg = json!({"id": 11, "method": "tools/list", "params": with_meta(json!({}))});
        if let Some(v) = v {
            msg["jsonrpc"] = v;
        }
        list_raw(msg.to_string())
    });
    errors(cases, INVALID_REQUEST, id(11)).await;
}

#[tokio::test]
async fn missing_method_is_invalid_request_with_id() {
    let msg = json!({"jsonrpc": "2.0", "id": "m", "params": with_meta(json!({}))});
    let cases = [list_raw(msg.to_string())];
    errors(cases, INVALID_REQUEST, id("m")).await;
}

#[tokio::test]
async fn method_not_a_string_is_invalid_request_with_id() {
    let cases = [
        json!(5),
        json!(["tools/list"]),
        json!({"name": "tools/list"}),
    ]
    .map(|m| {
        let msg = json!({"jsonrpc": "2.0", "id": 3, "method": m, "params": with_meta(json!({}))});
        list_raw(msg.to_string())
    });
    errors(cases, INVALID_REQUEST, id(3)).await;
}

#[tokio::test]
async fn null_or_non_integer_id_is_invalid_request_without_id() {
    let ids = [
        json!(null),
        json!(1.5),
        json!(true),
        json!({"n": 1}),
        json!([1]),
    ];
    errors(ids.map(|id| list_raw(list_body(id))), INVALID_REQUEST, None).await;
}

#[tokio::test]
async fn posted_response_is_invalid_request_with_id() {
    let (_s, c) = setup().await;
    let result = json!({"jsonrpc": "2.0", "id": 7, "result": {}});
    errors_on(&c, [list_raw(result.to_string())], INVALID_REQUEST, id(7)).await;
    let error = json!({"jsonrpc": "2.0", "id": "e", "error": {"code": -32603, "message": "x"}});
    errors_on(&c, [list_raw(error.to_string())], INVALID_REQUEST, id("e")).await;
}

#[tokio::test]
async fn notification_is_accepted_with_empty_body() {
    let (_s, c) = setup().await;
    let n = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 1}})
    .to_string();
    let h = Client::headers("notifications/cancelled", None);
    let x = c.send(h, n.clone(), None).await;
    assert_eq!((x.status, x.body.as_str()), (202, ""));
    // Notification POSTs need no routing headers.
    let plain = vec![("content-type".into(), "application/json".into())];
    let x = c.send(plain, n, None).await;
    assert_eq!((x.status, x.body.as_str()), (202, ""));
    // A notification that is not valid JSON-RPC is refused, without an id.
    let bad = json!({"jsonrpc": "1.0", "method": "notifications/cancelled"});
    errors_on(&c, [list_raw(bad.to_string())], INVALID_REQUEST, None).await;
}

#[tokio::test]
async fn missing_params_meta_or_required_meta_field_is_invalid_params() {
    let no_params = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"});
    // The MCP-Protocol-Version header is present and correct throughout: the body is what
    // is malformed, so -32602 and not -32020.
    let cases = [
        json!(null),
        json!({}),
        json!({"cursor": null}),
        json!({"_meta": null}),
        json!({"_meta": meta_with(PROTOCOL_VERSION, None)}),
        json!({"_meta": meta_with(CAPABILITIES, None)}),
    ];
    let cases = cases.map(|p| list_params(json!(4), p));
    let all = std::iter::once(list_raw(no_params.to_string())).chain(cases);
    errors(all, INVALID_PARAMS, id(4)).await;
}

#[tokio::test]
async fn params_or_meta_not_an_object_is_invalid_params() {
    // By-position params must not be read as the named members.
    let cases = [
        json!([crate::support::meta()]),
        json!("x"),
        json!(5),
        json!({"_meta": [VERSION, {}]}),
        json!({"_meta": "x"}),
    ];
    let cases = cases.map(|p| list_params(json!(5), p));
    errors(cases, INVALID_PARAMS, id(5)).await;
}

#[tokio::test]
async fn wrong_typed_meta_fields_are_invalid_params() {
    let cases = [
        (PROTOCOL_VERSION, json!(20260728)),
        (CAPABILITIES, json!("all")),
        (CAPABILITIES, json!([])),
        ("io.modelcontextprotocol/clientInfo", json!("it 1.0")),
        ("io.modelcontextprotocol/clientInfo", json!(["it", "1.0"])),
        ("progressToken", json!(true)),
        ("progressToken", json!(1.5)),
    ];
    let cases = cases.map(|(k, v)| list_params(json!(9), json!({"_meta": meta_with(k, Some(v))})));
    errors(cases, INVALID_PARAMS, id(9)).await;
}

#[tokio::test]
async fn invalid_log_level_is_invalid_params() {
    let cases = [json!("loud"), json!("INFO"), json!(3)].map(|l| {
        let meta = meta_with("io.modelcontextprotocol/logLevel", Some(l));
        list_params(json!(10), json!({"_meta": meta}))
    });
    errors(cases, INVALID_PARAMS, id(10)).await;
}

#[tokio::test]
async fn missing_protocol_version_header_is_header_mismatch() {
    let r = set_header(list_raw(list_body(json!(12))), "mcp-protocol-version", None);
    errors([r], HEADER_MISMATCH, id(12)).await;
}

#[tokio::test]
async fn protocol_version_header_differing_from_body_is_header_mismatch() {
    let older = set_header(
        list_raw(list_body(json!(13))),
        "mcp-protocol-version",
        Some("2025-11-25"),
    );
    // A supported header with an unsupported body version: the contradiction wins.
    let meta = meta_with(PROTOCOL_VERSION, id("v999.0.0"));
    let newer = list_params(json!(13), json!({"_meta": meta}));
    errors([older, newer], HEADER_MISMATCH, id(13)).await;
}

#[tokio::test]
async fn unsupported_version_names_supported_and_echoes_requested() {
    let (_s, c) = setup().await;
    let discover = c.request("server/discover", json!(0), Value::Null).await;
    let advertised = discover.result()["supportedVersions"].clone();
    for version in ["1900-01-01", "v999.0.0", "2025-11-25"] {
        let meta = meta_with(PROTOCOL_VERSION, id(version));
        let r = list_params(json!("v"), json!({"_meta": meta}));
        let r = set_header(r, "mcp-protocol-version", Some(version));
        let e = errors_on(&c, [r], (400, -32022), id("v")).await.remove(0);
        assert_eq!(e["data"]["supported"], json!([VERSION]), "{e}");
        assert_eq!(e["data"]["requested"], json!(version), "{e}");
        for v in e["data"]["supported"].as_array().unwrap() {
            assert!(
                advertised.as_array().unwrap().contains(v),
                "{v} not in {advertised}"
            );
        }
    }
}

#[tokio::test]
async fn mcp_method_missing_mismatched_or_recased_is_header_mismatch() {
    let values = [None, Some("tools/call"), Some("TOOLS/LIST"), Some("")];
    let cases = values.map(|v| set_header(list_raw(list_body(json!(15))), "mcp-method", v));
    errors(cases, HEADER_MISMATCH, id(15)).await;
}

#[tokio::test]
async fn repeated_mcp_method_header_is_header_mismatch() {
    let (mut h, body) = list_raw(list_body(json!(19)));
    h.push(("mcp-method".into(), "tools/list".into()));
    errors([(h, body)], HEADER_MISMATCH, id(19)).await;
}

#[tokio::test]
async fn header_checks_precede_method_lookup() {
    let r = set_header(req("no/such", json!(16), json!({})), "mcp-method", None);
    errors([r], HEADER_MISMATCH, id(16)).await;
}

/// A valid request of each method that needs `Mcp-Name`, and that name.
fn named_requests() -> Vec<(Req, &'static str)> {
    let prompt = "test_prompt_with_arguments";
    let resource = "test://static-text";
    [
        (
            "tools/call",
            "echo",
            json!({"name": "echo", "arguments": {"text": "x"}}),
        ),
        (
            "prompts/get",
            prompt,
            json!({"name": prompt, "arguments": {"arg1": "a", "arg2": "b"}}),
        ),
        ("resources/read", resource, json!({"uri": resource})),
    ]
    .into_iter()
    .map(|(method, name, params)| (req(method, json!(20), params), name))
    .collect()
}

fn b64(s: &str) -> String {
    use base64::Engine as _;
    let encoded = base64::engine::general_purpose::STANDARD.encode(s);
    format!("=?base64?{encoded}?=")
}

#[tokio::test]
async fn mcp_name_missing_or_mismatched_is_header_mismatch() {
    let (_s, c) = setup().await;
    for (r, name) in named_requests() {
        let ok = c.send(r.0.clone(), r.1.clone(), None).await;
        assert_eq!(ok.status, 200, "control: {}", ok.body);
        let upper = name.to_uppercase();
        let cases =
            [None, Some("other"), Some(&*upper)].map(|v| set_header(r.clone(), "mcp-name", v));
        errors_on(&c, cases, HEADER_MISMATCH, id(20)).await;
    }
}

#[tokio::test]
async fn mcp_name_base64_form_is_decoded() {
    let (_s, c) = setup().await;
    for (r, name) in named_requests() {
        let (h, body) = set_header(r, "mcp-name", Some(&b64(name)));
        let x = c.send(h, body, None).await;
        assert_eq!(x.status, 200, "{name}: {}", x.body);
        assert!(x.response().get("result").is_some(), "{}", x.body);
    }
}

#[tokio::test]
async fn mcp_name_bad_base64_or_uppercase_sentinel_is_rejected() {
    // "ZWNobw==" is "echo": unpadded is invalid, and an uppercase sentinel is a literal.
    let values = [
        "=?base64?!!not base64!!?=",
        "=?base64?ZWNobw?=",
        "=?BASE64?ZWNobw==?=",
    ];
    let (echo, _) = named_requests().into_iter().next().unwrap();
    let cases = values.map(|v| set_header(echo.clone(), "mcp-name", Some(v)));
    errors(cases, HEADER_MISMATCH, id(20)).await;
}

fn custom_headers_call(region: &str, header: Option<&str>) -> Req {
    let params = json!({"name": "test_custom_headers", "arguments": {"region": region}});
    set_header(
        req("tools/call", json!(23), params),
        "mcp-param-region",
        header,
    )
}

#[tokio::test]
async fn mcp_param_missing_or_mismatched_is_header_mismatch() {
    let mismatched_b64 = b64("eu-west");
    let values = [
        None,
        Some("eu-west"),
        Some("US-EAST"),
        Some(&*mismatched_b64),
    ];
    let cases = values.map(|v| custom_headers_call("us-east", v));
    errors(cases, HEADER_MISMATCH, id(23)).await;
}

#[tokio::test]
async fn mcp_param_plain_and_base64_values_match() {
    let (_s, c) = setup().await;
    for (region, header) in [
        ("us-east", "us-east".to_owned()),
        ("us-east", b64("us-east")),
        ("Zürich", b64("Zürich")),
        (" padded ", b64(" padded ")),
        // A literal that merely looks like base64 is compared as is.
        ("SGVsbG8=", "SGVsbG8=".to_owned()),
    ] {
        let (h, body) = custom_headers_call(region, Some(&header));
        let x = c.send(h, body, Some("tools/call")).await;
        assert_eq!(x.status, 200, "{region:?} / {header}: {}", x.body);
        assert_eq!(
            x.result()["content"][0]["text"],
            format!("region: {region}")
        );
    }
}

#[tokio::test]
async fn removed_methods_are_not_found_with_id() {
    let (_s, c) = setup().await;
    let removed = [
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
    ];
    for method in removed {
        let params = json!({"uri": "test://static-text", "level": "info"});
        errors_on(
            &c,
            [req(method, json!(method), params)],
            NOT_FOUND,
            id(method),
        )
        .await;
    }
    // With legacy support off, a legacy client's handshake, without any modern header or
    // `_meta`, learns the versions. (On, it starts a session: see `legacy_sessions`.)
    let off = start(
        stateless_mcp::fixtures::conformance(stateless_mcp::fixtures::demo(
            stateless_mcp::Server::builder().legacy(false),
        ))
        .build()
        .unwrap(),
    )
    .await;
    let c = Client::new(&off.url);
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "old", "version": "1"}}});
    let h = vec![("content-type".into(), "application/json".into())];
    let e = errors_on(&c, [(h, init.to_string())], NOT_FOUND, id(1)).await;
    assert!(
        e[0].to_string().contains(VERSION),
        "names no version: {}",
        e[0]
    );
}

#[tokio::test]
async fn unknown_method_is_not_found() {
    let cases = [req("tools/frobnicate", json!(24), json!({}))];
    errors(cases, NOT_FOUND, id(24)).await;
}

#[tokio::test]
async fn unknown_tool_is_invalid_params_with_id() {
    let r = req(
        "tools/call",
        json!("t"),
        json!({"name": "invalid_tool_name", "arguments": {}}),
    );
    let e = errors([r], INVALID_PARAMS, id("t")).await;
    assert!(
        e[0]["message"]
            .as_str()
            .unwrap()
            .contains("invalid_tool_name"),
        "{}",
        e[0]
    );
}

#[tokio::test]
async fn tool_arguments_not_an_object_are_invalid_params() {
    let cases = [json!(["hi"]), json!("hi"), json!(5)].map(|a| {
        req(
            "tools/call",
            json!(26),
            json!({"name": "echo", "arguments": a}),
        )
    });
    errors(cases, INVALID_PARAMS, id(26)).await;
}

#[tokio::test]
async fn tool_arguments_failing_schema_are_a_tool_error() {
    let (_s, c) = setup().await;
    for args in [json!({"text": 5}), json!({})] {
        let params = json!({"name": "echo", "arguments": args});
        let x = c.request("tools/call", json!(27), params).await;
        assert_eq!(x.status, 200, "{}", x.body);
        let r = x.result();
        assert_eq!(r["isError"], true, "{r}");
        let text = r["content"][0]["text"].as_str().unwrap_or_default();
        assert!(
            text.contains("text"),
            "message does not name the problem: {r}"
        );
    }
}

#[tokio::test]
async fn prompt_errors_are_invalid_params() {
    let p = "test_prompt_with_arguments";
    let cases = [
        json!({"name": "no_such_prompt"}),
        json!({"name": p, "arguments": {"arg1": "a"}}),
        json!({"name": p}),
        json!({"name": p, "arguments": {"arg1": "a", "arg2": 5}}),
        json!({"name": p, "arguments": ["a", "b"]}),
    ];
    let cases = cases.map(|q| req("prompts/get", json!(28), q));
    errors(cases, INVALID_PARAMS, id(28)).await;
}

#[tokio::test]
async fn unknown_resource_is_invalid_params_with_uri_never_32002() {
    let uris = [
        "test://no-such-resource",
        "test://template/1/other",
        "file:///nonexistent.txt",
    ];
    let cases = uris.map(|u| req("resources/read", json!(29), json!({"uri": u})));
    let e = errors(cases, INVALID_PARAMS, id(29)).await;
    for (e, uri) in e.iter().zip(uris) {
        assert_eq!(e["data"]["uri"], uri, "{e}");
    }
}

#[tokio::test]
async fn resource_uri_without_scheme_is_invalid_params() {
    let cases = ["static-text", "/etc/passwd", ""]
        .map(|u| req("resources/read", json!(30), json!({"uri": u})));
    errors(cases, INVALID_PARAMS, id(30)).await;
}

#[tokio::test]
async fn bad_cursor_is_invalid_params() {
    let (_s, c) = setup().await;
    for method in [
        "tools/list",
        "resources/list",
        "resources/templates/list",
        "prompts/list",
    ] {
        let cases =
            ["garbage", "djEueC45OTk"].map(|k| req(method, json!(31), json!({"cursor": k})));
        for e in errors_on(&c, cases, INVALID_PARAMS, id(31)).await {
            assert_eq!(e["message"], "Invalid cursor", "{method}: {e}");
        }
        let cases =
            [json!(5), json!({"offset": 1})].map(|k| req(method, json!(32), json!({"cursor": k})));
        errors_on(&c, cases, INVALID_PARAMS, id(32)).await;
    }
}

#[tokio::test]
async fn completion_with_unknown_reference_is_invalid_params() {
    let (_s, c) = setup().await;
    let complete = |reference: Value| {
        let params = json!({"ref": reference, "argument": {"name": "arg1", "value": "pa"}});
        req("completion/complete", json!(33), params)
    };
    let (h, body) = complete(json!({"type": "ref/prompt", "name": "test_prompt_with_arguments"}));
    let ok = c.send(h, body, Some("completion/complete")).await;
    assert_eq!(ok.status, 200, "control: {}", ok.body);
    let cases = [
        json!({"type": "ref/prompt", "name": "no_such_prompt"}),
        json!({"type": "ref/resource", "uri": "nope://nothing"}),
        json!({"type": "ref/nothing"}),
    ];
    errors_on(&c, cases.map(complete), INVALID_PARAMS, id(33)).await;
}

#[tokio::test]
async fn missing_client_capability_names_it() {
    let (_s, c) = setup().await;
    let params = json!({"name": "test_missing_capability", "arguments": {}});
    let r = req("tools/call", json!(35), params.clone());
    let e = errors_on(&c, [r], (400, -32021), id(35)).await;
    assert!(
        e[0]["data"]["requiredCapabilities"]["sampling"].is_object(),
        "{}",
        e[0]
    );
    let mut with = params;
    with["_meta"] = json!({CAPABILITIES: {"sampling": {}}});
    let x = c.request("tools/call", json!(36), with).await;
    assert_eq!(x.status, 200, "{}", x.body);
    assert_ne!(x.result()["isError"], true, "{}", x.body);
}

#[tokio::test]
async fn large_integer_id_is_echoed_exactly() {
    let (_s, c) = setup().await;
    let big = 1_800_000_000_000_i64;
    let x = c.request("tools/list", json!(big), json!({})).await;
    assert_eq!(x.response()["id"], json!(big));
    assert!(x.body.contains("\"id\":1800000000000"), "{}", x.body);
    let x = c
        .request("tools/call", json!(big), json!({"name": "nope"}))
        .await;
    expect_error(&x, INVALID_PARAMS, id(big));
    assert!(x.body.contains("\"id\":1800000000000"), "{}", x.body);
}

#[tokio::test]
async fn string_ids_are_echoed_as_strings() {
    let (_s, c) = setup().await;
    for s in ["abc", "", "1", "ünï-côdé 🎉", "with \"quotes\""] {
        let x = c.request("tools/list", json!(s), json!({})).await;
        assert_eq!(x.response()["id"], json!(s), "{}", x.body);
        let x = c.request("no/such", json!(s), json!({})).await;
        expect_error(&x, NOT_FOUND, id(s));
    }
}
