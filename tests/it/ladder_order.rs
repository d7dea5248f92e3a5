//! The order of the validation ladder's checks, as a property (proptest): a request with any
//! combination of defects is refused with the code of the first defect in ladder order
//! (DESIGN §3), whatever the others: `_meta` → `-32602`; `MCP-Protocol-Version` header ≠
//! body → `-32020`; version not supported → `-32022`; `Mcp-Method` ≠ body → `-32020`;
//! unknown method → `-32601`; bad params (unknown tool) → `-32602`; an input request the
//! client has no capability for → `-32021`. Fuzzing finds crashes; this pins the order,
//! where a fuzzer has no oracle. Driven through `Server::handle`; answers schema-checked.

use bytes::Bytes;
use proptest::prelude::*;
use serde_json::{Value, json};
use stateless_mcp::Server;
use stateless_mcp::extend::{Mirrored, MirroredHeaders, Outcome};

use crate::support::{VERSION, checked_messages, fixtures_server};

/// Which defects a request has, in ladder order.
#[derive(Debug, Clone, Copy)]
struct Defects {
    meta_incomplete: bool,
    version_header_differs: bool,
    version_unsupported: bool,
    method_header_differs: bool,
    unknown_method: bool,
    unknown_tool: bool,
    missing_capability: bool,
}

impl Defects {
    /// The code the ladder must answer: that of the first defect, or none.
    fn expected(self) -> Option<i64> {
        [
            (self.meta_incomplete, -32602),
            (self.version_header_differs, -32020),
            (self.version_unsupported, -32022),
            (self.method_header_differs, -32020),
            (self.unknown_method, -32601),
            (self.unknown_tool, -32602),
            (self.missing_capability, -32021),
        ]
        .into_iter()
        .find_map(|(on, code)| on.then_some(code))
    }

    /// The request: body and mirrored headers.
    fn request(self) -> (Bytes, MirroredHeaders<'static>, &'static str) {
        let version = if self.version_unsupported {
            "1999-01-01"
        } else {
            VERSION
        };
        let method = if self.unknown_method {
            "no/such_method"
        } else {
            "tools/call"
        };
        let tool = if self.unknown_tool {
            "no_such_tool"
        } else if self.missing_capability {
            "test_input_required_result_elicitation"
        } else {
            "echo"
        };
        let mut meta = json!({ "io.modelcontextprotocol/protocolVersion": version });
        if !self.meta_incomplete {
            let caps = if self.missing_capability {
                json!({})
            } else {
                json!({"elicitation": {"form": {}}})
            };
            meta["io.modelcontextprotocol/clientCapabilities"] = caps;
        }
        let body = json!({
            "jsonrpc": "2.0", "id": 9, "method": method,
            "params": {"name": tool, "arguments": {"text": "hi"}, "_meta": meta},
        });
        let headers = MirroredHeaders {
            protocol_version: Mirrored::Value(if self.version_header_differs {
                "2025-06-18".into()
            } else {
                version.into()
            }),
            method: Mirrored::Value(if self.method_header_differs {
                "tools/list".into()
            } else {
                method.into()
            }),
            name: Mirrored::Value(tool.into()),
            params: Vec::new(),
        };
        (Bytes::from(body.to_string()), headers, method)
    }
}

fn defects() -> impl Strategy<Value = Defects> {
    proptest::array::uniform7(any::<bool>()).prop_map(|d| Defects {
        meta_incomplete: d[0],
        version_header_differs: d[1],
        version_unsupported: d[2],
        method_header_differs: d[3],
        unknown_method: d[4],
        unknown_tool: d[5],
        missing_capability: d[6],
    })
}

/// The answer's message, schema-checked.
async fn answer(server: &Server, d: Defects) -> Value {
    let (body, headers, method) = d.request();
    let reply = match server.handle(&body, Some(&headers), http::Extensions::new()) {
        Outcome::Ready(r) => r,
        Outcome::Running(r) => r.reply.await,
        other => panic!("unexpected outcome {other:?} for {d:?}"),
    };
    let text = String::from_utf8(reply.to_bytes().to_vec()).unwrap();
    let mut messages = checked_messages("application/json", &text, Some(method));
    assert_eq!(messages.len(), 1);
    messages.remove(0)
}

#[test]
fn the_first_defect_in_ladder_order_decides_the_error() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let server = runtime.block_on(async { fixtures_server() });
    let config = ProptestConfig {
        cases: 256,
        ..ProptestConfig::default()
    };
    proptest!(config, |(d in defects())| {
        let message = runtime.block_on(answer(&server, d));
        prop_assert_eq!(&message["id"], &json!(9), "{:?}: {}", d, message);
        match d.expected() {
            Some(code) => prop_assert_eq!(
                message["error"]["code"].as_i64(),
                Some(code),
                "{:?}: {}",
                d,
                message
            ),
            None => prop_assert_eq!(
                &message["result"]["content"][0]["text"],
                &json!("hi"),
                "{:?}: {}",
                d,
                message
            ),
        }
    });
}
