//! Typed arguments read from their JSON text (a tool whose input schema is plain: no
//! `serde_json::Value` between the request and the handler's type) answer exactly as the
//! general way does (read as a `Value`, validated by the compiled schema, read into the
//! type): the same tool behind a layer, which always takes the general way, is the oracle.
//! Each request is sent as raw text (duplicated members, escapes and numbers a `Value`
//! cannot keep apart are part of the battery); every answer is schema-checked.

use bytes::Bytes;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use stateless_mcp::extend::Outcome;
use stateless_mcp::{HandlerError, RequestContext, Server, ToolDef};

use crate::support::{VERSION, checked_messages};

#[derive(Deserialize, JsonSchema)]
struct Query {
    /// What to look up.
    query: String,
    /// At most this many results.
    limit: Option<u32>,
    /// A weight.
    #[schemars(range(min = -3, max = 3))]
    weight: Option<i8>,
    /// Exact match?
    exact: Option<bool>,
    /// A ratio.
    ratio: Option<f64>,
}

async fn answer(_ctx: RequestContext, q: Query) -> Result<String, HandlerError> {
    Ok(format!(
        "{}|{:?}|{:?}|{:?}|{:?}",
        q.query, q.limit, q.weight, q.exact, q.ratio
    ))
}

fn server() -> Server {
    Server::builder()
        .tool(ToolDef::new("direct").handler(answer))
        // A layer sees the arguments as a `Value`: this tool always goes the general way.
        .tool(
            ToolDef::new("general")
                .handler(answer)
                .layer(tower::layer::util::Identity::new()),
        )
        .build()
        .unwrap()
}

/// The answer to `tools/call` of `tool` with `arguments` (raw JSON text), schema-checked,
/// with the tool's name written as `TOOL`.
async fn call(server: &Server, tool: &str, arguments: &str) -> Value {
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{tool}","arguments":{arguments},"_meta":{meta}}}}}"#
    );
    let reply = match server.handle(&Bytes::from(body), None, Default::default()) {
        Outcome::Ready(r) => r,
        Outcome::Running(r) => r.reply.await,
        other => panic!("unexpected outcome {other:?} for {arguments}"),
    };
    let text = String::from_utf8(reply.to_bytes().to_vec()).unwrap();
    let mut messages = checked_messages("application/json", &text, Some("tools/call"));
    assert_eq!(messages.len(), 1, "{text}");
    let named = messages.remove(0).to_string().replace(tool, "TOOL");
    serde_json::from_str(&named).unwrap()
}

#[tokio::test]
async fn arguments_read_from_their_text_answer_as_through_a_value() {
    let server = server();
    let battery = [
        // Valid, every way a plain schema admits.
        (r#"{"query":"q"}"#, Some("q|None|None|None|None")),
        (
            r#"{"query":"a \"b\" \u00e9","limit":7,"weight":-3,"exact":true,"ratio":0.25}"#,
            Some("a \"b\" é|Some(7)|Some(-3)|Some(true)|Some(0.25)"),
        ),
        (
            r#" { "query" : "q" , "limit" : null , "extra" : [1, {"x": [null]}] } "#,
            Some("q|None|None|None|None"),
        ),
        (
            r#"{"qu\u0065ry":"escaped name"}"#,
            Some("escaped name|None|None|None|None"),
        ),
        (
            r#"{"query":"q","ratio":3}"#,
            Some("q|None|None|None|Some(3.0)"),
        ),
        // Duplicated members: the last one counts, as in a `Value`.
        (
            r#"{"query":"first","query":"last"}"#,
            Some("last|None|None|None|None"),
        ),
        (
            r#"{"query":5,"query":"last"}"#,
            Some("last|None|None|None|None"),
        ),
        // Admitted by the schema, not by the type: both answer the type's error.
        (r#"{"query":"q","limit":4294967296}"#, None),
        (r#"{"query":"q","weight":3.0}"#, None),
        // Refused by the schema.
        (r#"{}"#, None),
        (r#"{"query":null}"#, None),
        (r#"{"query":["q"]}"#, None),
        (r#"{"query":"q","limit":-1}"#, None),
        (r#"{"query":"q","limit":"7"}"#, None),
        (r#"{"query":"q","weight":4}"#, None),
        (r#"{"query":"q","weight":-4}"#, None),
        (r#"{"query":"q","exact":"yes"}"#, None),
        (r#"{"query":"q","ratio":"1"}"#, None),
        (r#"{"query":"last","query":5}"#, None),
        // Not an object.
        (r#"[]"#, None),
        (r#""q""#, None),
        (r#"7"#, None),
        (r#"null"#, None),
    ];
    // Long arguments take the general way on both tools.
    let long = format!(r#"{{"query":"{}","limit":2}}"#, "x".repeat(300));
    let long_answer = format!("{}|Some(2)|None|None|None", "x".repeat(300));
    let battery = battery
        .into_iter()
        .map(|(a, e)| (a.to_owned(), e.map(str::to_owned)))
        .chain([(long, Some(long_answer))]);
    for (arguments, expected) in battery {
        let (arguments, expected) = (arguments.as_str(), expected.as_deref());
        let direct = call(&server, "direct", arguments).await;
        let general = call(&server, "general", arguments).await;
        assert_eq!(direct, general, "{arguments}");
        let result = &direct["result"];
        match expected {
            Some(text) => {
                assert_eq!(result["isError"], Value::Null, "{arguments}: {direct}");
                assert_eq!(result["content"][0]["text"], text, "{arguments}");
            }
            None => assert!(
                result["isError"] == true || direct["error"]["code"] == -32602,
                "{arguments}: {direct}"
            ),
        }
    }
}
