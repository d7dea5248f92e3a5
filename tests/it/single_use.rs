//! Single-use `requestState`: the retry carrying it runs once; a replay on the same or
//! another replica sharing the replay store is refused with `-32602` / `replayed`; without a
//! reachable store the retry fails closed.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use stateless_mcp::backends::MemoryReplayStore;
use stateless_mcp::extend::ReplayStore;
use stateless_mcp::settings::StateKeys;
use stateless_mcp::{HandlerError, InputRequired, RequestContext, Server, ToolDef};

use crate::support::{Client, Exchange, TestServer, start};

const KEYS: &str = "k1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";

#[derive(Deserialize, JsonSchema)]
struct Payment {
    amount: u32,
}

/// `pay` asks for confirmation with a single-use state; `quote` does the same with an
/// ordinary state.
async fn replica(store: Arc<dyn ReplayStore>) -> TestServer {
    let ask = |single_use: bool| {
        move |ctx: RequestContext, p: Payment| async move {
            if let Some(amount) = ctx.input().state::<u32>() {
                return Ok(format!("paid {amount}"));
            }
            let ask = InputRequired::new()
                .elicit_form(
                    "confirm",
                    "Pay?",
                    json!({"type": "object", "properties": {"ok": {"type": "boolean"}}}),
                )
                .state(&p.amount);
            Err(HandlerError::from(if single_use {
                ask.single_use()
            } else {
                ask
            }))
        }
    };
    let server = Server::builder()
        .state_keys(KEYS.parse::<StateKeys>().unwrap())
        .replay_store(store)
        .tool(ToolDef::new("pay").handler(ask(true)))
        .tool(ToolDef::new("quote").handler(ask(false)))
        .build()
        .unwrap();
    start(server).await
}

fn params(tool: &str, extra: Value) -> Value {
    let mut p = json!({"name": tool, "arguments": {"amount": 5},
        "_meta": {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}}});
    for (k, v) in extra.as_object().unwrap() {
        p[k] = v.clone();
    }
    p
}

async fn call(srv: &TestServer, tool: &str, extra: Value) -> Exchange {
    Client::new(&srv.url)
        .request("tools/call", json!(1), params(tool, extra))
        .await
}

/// Round 1: the sealed state.
async fn state(srv: &TestServer, tool: &str) -> String {
    let r = call(srv, tool, json!({})).await;
    assert_eq!(r.result()["resultType"], "input_required", "{}", r.body);
    r.result()["requestState"].as_str().unwrap().to_owned()
}

fn retry(state: &str) -> Value {
    json!({"requestState": state,
           "inputResponses": {"confirm": {"action": "accept", "content": {"ok": true}}}})
}

fn assert_paid(r: &Exchange) {
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.result()["content"][0]["text"], "paid 5", "{}", r.body);
}

fn assert_replayed(r: &Exchange) {
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(r.error_code(), -32602, "{}", r.body);
    assert_eq!(
        r.response()["error"]["data"]["reason"],
        "replayed",
        "{}",
        r.body
    );
    assert_eq!(r.response()["id"], 1, "the error echoes the id");
}

#[tokio::test]
async fn a_single_use_state_runs_once_per_replica_with_the_memory_store() {
    let srv = replica(Arc::new(MemoryReplayStore::default())).await;
    let s = state(&srv, "pay").await;
    assert_paid(&call(&srv, "pay", retry(&s)).await);
    assert_replayed(&call(&srv, "pay", retry(&s)).await);
    // A fresh round gives a fresh state, which works once.
    let again = state(&srv, "pay").await;
    assert_ne!(again, s);
    assert_paid(&call(&srv, "pay", retry(&again)).await);
    // An ordinary state may be retried (e.g. after a lost response).
    let q = state(&srv, "quote").await;
    assert_paid(&call(&srv, "quote", retry(&q)).await);
    assert_paid(&call(&srv, "quote", retry(&q)).await);
}

#[cfg(all(feature = "redis", feature = "external-tests"))]
#[tokio::test]
async fn a_replay_on_another_replica_is_refused_through_redis_and_an_unreachable_store_fails_closed()
 {
    use stateless_mcp::backends::RedisReplayStore;

    use crate::support::brokers::RedisServer;

    let mut redis = RedisServer::start();
    let store = || -> Arc<dyn ReplayStore> {
        Arc::new(RedisReplayStore::connect(&redis.url(), "single-use-test").unwrap())
    };
    let (a, b) = (replica(store()).await, replica(store()).await);
    let s = state(&a, "pay").await;
    assert_paid(&call(&b, "pay", retry(&s)).await);
    assert_replayed(&call(&a, "pay", retry(&s)).await);
    assert_replayed(&call(&b, "pay", retry(&s)).await);

    // Redis forgets the id when the state expires.
    let key = {
        let client = ::redis::Client::open(redis.url()).unwrap();
        let mut conn = client.get_multiplexed_async_connection().await.unwrap();
        let keys: Vec<String> = ::redis::cmd("KEYS")
            .arg("single-use-test.replay.*")
            .query_async(&mut conn)
            .await
            .unwrap();
        assert_eq!(keys.len(), 1, "{keys:?}");
        let ttl_ms: i64 = ::redis::cmd("PTTL")
            .arg(&keys[0])
            .query_async(&mut conn)
            .await
            .unwrap();
        assert!(
            (1..=600_000).contains(&ttl_ms),
            "expires with the state: {ttl_ms}"
        );
        keys[0].clone()
    };
    assert!(key.starts_with("single-use-test.replay."));

    let fresh = state(&a, "pay").await;
    redis.kill();
    let r = call(&b, "pay", retry(&fresh)).await;
    assert_eq!(r.error_code(), -32603, "{}", r.body);
    assert_eq!(r.response()["id"], 1);
    redis.restart();
    // Once the store is back, the state (never claimed) works, once; a replica whose
    // connection broke meanwhile reconnects on its next claim.
    let mut ok = call(&b, "pay", retry(&fresh)).await;
    for _ in 0..50 {
        if ok.status == 200 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        ok = call(&b, "pay", retry(&fresh)).await;
    }
    assert_paid(&ok);
    assert_replayed(&call(&a, "pay", retry(&fresh)).await);
}
