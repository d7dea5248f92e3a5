//! Mangled input never takes the server down: thousands of mutated messages go straight
//! through `Server::handle`, and every reply is one valid JSON-RPC message.

use serde_json::{Value, json};
use stateless_mcp::extend::{Mirrored, MirroredHeaders, Outcome};

use crate::support::{fixtures_server, schema, with_meta};

/// A small deterministic generator (xorshift), so a failure reproduces.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const INTERESTING: &[&[u8]] = &[
    b"null",
    b"[]",
    b"{}",
    b"\"\"",
    b"-1",
    b"1e999",
    b"\\u0000",
    b"\xff",
    b"{\"a\":",
    b"]",
    b"9999999999999999999999",
    b"true",
    b"\"_meta\"",
    b"\"id\":null,",
];

fn mutate(rng: &mut Rng, seed: &[u8]) -> Vec<u8> {
    let mut b = seed.to_vec();
    for _ in 0..=rng.below(4) {
        if b.is_empty() {
            b.push(b'{');
        }
        let at = rng.below(b.len());
        match rng.below(5) {
            0 => b[at] = rng.next() as u8,
            1 => {
                b.remove(at);
            }
            2 => b.truncate(at),
            3 => {
                let piece = INTERESTING[rng.below(INTERESTING.len())];
                b.splice(at..at, piece.iter().copied());
            }
            _ => {
                let end = (at + rng.below(16)).min(b.len());
                let copy = b[at..end].to_vec();
                b.splice(at..at, copy);
            }
        }
    }
    b
}

fn seeds() -> Vec<(String, Vec<u8>)> {
    let req = |method: &str, params: Value| {
        let body =
            json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": with_meta(params)});
        (method.to_owned(), body.to_string().into_bytes())
    };
    vec![
        req(
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "hi"}}),
        ),
        req(
            "tools/call",
            json!({"name": "test_custom_headers", "arguments": {"region": "eu"}}),
        ),
        req("tools/list", json!({"cursor": "djEuYWJjLjc"})),
        req("resources/read", json!({"uri": "test://template/1/data"})),
        req(
            "prompts/get",
            json!({"name": "test_prompt_with_arguments", "arguments": {"arg1": "a", "arg2": "b"}}),
        ),
        req(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "name", "value": "A"}}),
        ),
        req("server/discover", json!({})),
    ]
}

#[tokio::test]
async fn mutated_messages_always_get_a_valid_reply() {
    let server = fixtures_server();
    let mut rng = Rng(0x5eed_1234_abcd_ef01);
    let mut outcomes = [0usize; 3];
    for round in 0..6000 {
        let all = seeds();
        let (method, seed) = &all[round % all.len()];
        let body = mutate(&mut rng, seed);
        let mirror = MirroredHeaders {
            protocol_version: Mirrored::Value("2026-07-28".into()),
            method: Mirrored::Value(method.clone().into()),
            name: if rng.below(2) == 0 {
                Mirrored::Absent
            } else {
                Mirrored::Value("echo".into())
            },
            params: Vec::new(),
        };
        let reply = match server.handle(
            &bytes::Bytes::from(body.clone()),
            Some(&mirror),
            Default::default(),
        ) {
            Outcome::Accepted => {
                outcomes[0] += 1;
                continue;
            }
            Outcome::Ready(r) => {
                outcomes[1] += 1;
                r
            }
            Outcome::Running(r) => {
                outcomes[2] += 1;
                drop(r.events);
                r.reply.await
            }
            // A listen stream never ends by itself; its first message is the ack.
            _ => {
                outcomes[2] += 1;
                continue;
            }
        };
        let v: Value = serde_json::from_slice(&reply.to_bytes()).unwrap_or_else(|e| {
            panic!(
                "reply is not JSON ({e}) for input {:?}",
                String::from_utf8_lossy(&body)
            )
        });
        schema::check_message(&v, None);
        assert_eq!(reply.error_code.is_some(), v.get("error").is_some());
    }
    // The mutations reach every branch, so the test means something.
    assert!(
        outcomes.iter().all(|&n| n > 0),
        "outcomes (accepted, ready, running): {outcomes:?}"
    );
}
