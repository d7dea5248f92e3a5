//! Idempotent tool calls on one server (in-process store): a tool that honours idempotency
//! keys runs once per key; a retry gets the first result; the same key with other arguments
//! is refused (422); a duplicate waits for the first call, or is told to retry (409); a store
//! that cannot answer refuses the call (503), never runs it unguarded. Keys come from the
//! `Idempotency-Key` header or `_meta`, and are scoped to the caller and the tool.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use stateless_mcp::extend::{IdempotencyClaim, IdempotencyStore};
use stateless_mcp::protocol::CallToolResult;
use stateless_mcp::settings::IdempotencySettings;
use stateless_mcp::{Error, HandlerError, RequestContext, Server, ToolDef};

use crate::support::{Client, Exchange, request_parts, start, start_with_test_principal};

/// The `_meta` key that carries an idempotency key.
const META_KEY: &str = "dev.stateless-mcp/idempotency-key";

#[derive(Deserialize, JsonSchema)]
struct Pay {
    amount: u32,
}

/// Counts the runs of each tool.
#[derive(Default)]
struct Runs {
    pay: AtomicU64,
    slow: AtomicU64,
    refuse: AtomicU64,
    plain: AtomicU64,
}

fn builder(runs: &Arc<Runs>) -> stateless_mcp::ServerBuilder {
    let (r1, r2, r3, r4) = (runs.clone(), runs.clone(), runs.clone(), runs.clone());
    Server::builder()
        .tool(ToolDef::new("pay").idempotency_keys(true).handler(
            move |_ctx: RequestContext, args: Pay| {
                let n = r1.pay.fetch_add(1, Ordering::SeqCst) + 1;
                async move { Ok::<_, HandlerError>(format!("payment {n} of {}", args.amount)) }
            },
        ))
        .tool(ToolDef::new("slow_pay").idempotency_keys(true).handler(
            move |_ctx: RequestContext, args: Pay| {
                let r = r2.clone();
                async move {
                    tokio::time::sleep(Duration::from_millis(300)).await;
                    let n = r.slow.fetch_add(1, Ordering::SeqCst) + 1;
                    Ok::<_, HandlerError>(format!("slow payment {n} of {}", args.amount))
                }
            },
        ))
        .tool(
            ToolDef::new("refuse").idempotency_keys(true).raw_handler(
                move |_ctx: RequestContext, _args: Value| {
                    let n = r3.refuse.fetch_add(1, Ordering::SeqCst) + 1;
                    async move {
                        Ok::<_, HandlerError>(CallToolResult::error(format!("refused, run {n}")))
                    }
                },
            ),
        )
        .tool(
            ToolDef::new("plain").raw_handler(move |_ctx: RequestContext, _args: Value| {
                let n = r4.plain.fetch_add(1, Ordering::SeqCst) + 1;
                async move { Ok::<_, HandlerError>(format!("plain {n}")) }
            }),
        )
}

/// A `tools/call` of `tool` with `args`, with `key` as `Idempotency-Key` if given.
async fn call(c: &Client, id: i64, tool: &str, args: Value, key: Option<&str>) -> Exchange {
    call_with(c, id, json!({"name": tool, "arguments": args}), key, &[]).await
}

async fn call_with(
    c: &Client,
    id: i64,
    params: Value,
    key: Option<&str>,
    extra: &[(&str, &str)],
) -> Exchange {
    let (mut headers, body) = request_parts("tools/call", json!(id), params);
    if let Some(k) = key {
        headers.push(("idempotency-key".into(), k.into()));
    }
    for (k, v) in extra {
        headers.push(((*k).into(), (*v).into()));
    }
    c.send(headers, body, Some("tools/call")).await
}

fn text(x: &Exchange) -> String {
    assert_eq!(x.status, 200, "{}", x.body);
    x.result()["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {}", x.body))
        .to_owned()
}

#[tokio::test]
async fn a_retry_gets_the_first_result_without_running_the_handler() {
    let runs = Arc::new(Runs::default());
    let s = start(builder(&runs).build().unwrap()).await;
    let c = Client::new(&s.url);
    let first = call(&c, 1, "pay", json!({"amount": 5}), Some("k-1")).await;
    assert_eq!(text(&first), "payment 1 of 5");
    // Same key (quoted, as the draft's sf-string), same arguments: the first result, with
    // the retry's own id.
    let again = call(&c, 2, "pay", json!({"amount": 5}), Some("\"k-1\"")).await;
    assert_eq!(text(&again), "payment 1 of 5");
    assert_eq!(again.response()["id"], 2);
    assert_eq!(again.result(), first.result());
    assert_eq!(runs.pay.load(Ordering::SeqCst), 1);
    // Without a key, or with another key: a new run each time.
    assert_eq!(
        text(&call(&c, 3, "pay", json!({"amount": 5}), None).await),
        "payment 2 of 5"
    );
    assert_eq!(
        text(&call(&c, 4, "pay", json!({"amount": 5}), Some("k-2")).await),
        "payment 3 of 5"
    );
    // `isError` results are results: kept too.
    let refused = call(&c, 5, "refuse", json!({}), Some("k-1")).await;
    assert_eq!(refused.result()["isError"], true);
    let refused_again = call(&c, 6, "refuse", json!({}), Some("k-1")).await;
    assert_eq!(refused_again.result(), refused.result());
    assert_eq!(runs.refuse.load(Ordering::SeqCst), 1, "keys are per tool");
    // A tool that did not opt in ignores the key.
    call(&c, 7, "plain", json!({}), Some("k-1")).await;
    let plain = call(&c, 8, "plain", json!({}), Some("k-1")).await;
    assert_eq!(text(&plain), "plain 2");
}

#[tokio::test]
async fn the_same_key_with_other_arguments_is_refused_with_422() {
    let runs = Arc::new(Runs::default());
    let s = start(builder(&runs).build().unwrap()).await;
    let c = Client::new(&s.url);
    text(&call(&c, 1, "pay", json!({"amount": 5}), Some("k")).await);
    let other = call(&c, 2, "pay", json!({"amount": 6}), Some("k")).await;
    assert_eq!(other.status, 422, "{}", other.body);
    assert_eq!(other.error_code(), -32602);
    assert_eq!(
        other.response()["error"]["data"]["reason"],
        "idempotency_key_reused"
    );
    assert_eq!(runs.pay.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_key_in_meta_works_like_the_header_and_bad_keys_are_refused() {
    let runs = Arc::new(Runs::default());
    let s = start(builder(&runs).build().unwrap()).await;
    let c = Client::new(&s.url);
    let with_meta = |id: i64, key: Value| json!({"name": "pay", "arguments": {"amount": id}, "_meta": {META_KEY: key}});
    let first = call_with(&c, 1, with_meta(1, json!("m-1")), None, &[]).await;
    assert_eq!(text(&first), "payment 1 of 1");
    // The header and `_meta` name the same key.
    let by_header = call(&c, 2, "pay", json!({"amount": 1}), Some("m-1")).await;
    assert_eq!(text(&by_header), "payment 1 of 1");
    let both = call_with(&c, 3, with_meta(1, json!("m-1")), Some("m-1"), &[]).await;
    assert_eq!(text(&both), "payment 1 of 1");
    // Refused (400, -32602): keys that differ, a key that is not a string, an empty or a
    // too long one, one that is not printable ASCII.
    let differ = call_with(&c, 4, with_meta(1, json!("m-1")), Some("m-2"), &[]).await;
    let not_string = call_with(&c, 5, with_meta(1, json!(7)), None, &[]).await;
    let empty = call(&c, 6, "pay", json!({"amount": 1}), Some("\"\"")).await;
    let long = "k".repeat(256);
    let too_long = call(&c, 7, "pay", json!({"amount": 1}), Some(&long)).await;
    let control = call_with(&c, 8, with_meta(1, json!("a\u{7}b")), None, &[]).await;
    for refused in [differ, not_string, empty, too_long, control] {
        assert_eq!(refused.status, 400, "{}", refused.body);
        assert_eq!(refused.error_code(), -32602);
        assert_eq!(
            refused.response()["error"]["data"]["reason"],
            "invalid_idempotency_key"
        );
    }
    assert_eq!(runs.pay.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn keys_are_scoped_to_the_caller() {
    let runs = Arc::new(Runs::default());
    let s = start_with_test_principal(builder(&runs).build().unwrap()).await;
    let c = Client::new(&s.url);
    let params = json!({"name": "pay", "arguments": {"amount": 1}});
    let ada = call_with(&c, 1, params.clone(), Some("k"), &[("x-test-user", "ada")]).await;
    let bob = call_with(&c, 2, params.clone(), Some("k"), &[("x-test-user", "bob")]).await;
    let anon = call_with(&c, 3, params.clone(), Some("k"), &[]).await;
    assert_eq!(text(&ada), "payment 1 of 1");
    assert_eq!(text(&bob), "payment 2 of 1");
    assert_eq!(text(&anon), "payment 3 of 1");
    let ada_again = call_with(&c, 4, params, Some("k"), &[("x-test-user", "ada")]).await;
    assert_eq!(text(&ada_again), "payment 1 of 1");
}

#[tokio::test]
async fn concurrent_duplicates_wait_for_the_first_call() {
    let runs = Arc::new(Runs::default());
    let s = start(builder(&runs).build().unwrap()).await;
    let c = Client::new(&s.url);
    let calls = (0..20).map(|i| {
        let c = c.clone();
        async move { text(&call(&c, i, "slow_pay", json!({"amount": 9}), Some("dup")).await) }
    });
    let texts = futures_util::future::join_all(calls).await;
    assert!(
        texts.iter().all(|t| t == "slow payment 1 of 9"),
        "{texts:?}"
    );
    assert_eq!(runs.slow.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_duplicate_that_waited_long_enough_is_told_to_retry() {
    let runs = Arc::new(Runs::default());
    let server = builder(&runs)
        .idempotency(IdempotencySettings::default().wait(Duration::from_millis(50)))
        .build()
        .unwrap();
    let s = start(server).await;
    let c = Client::new(&s.url);
    let first = {
        let c = c.clone();
        tokio::spawn(async move { call(&c, 1, "slow_pay", json!({"amount": 1}), Some("w")).await })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    let busy = call(&c, 2, "slow_pay", json!({"amount": 1}), Some("w")).await;
    assert_eq!(busy.status, 409, "{}", busy.body);
    assert_eq!(busy.headers["retry-after"], "1");
    assert_eq!(busy.error_code(), -32603);
    assert_eq!(
        busy.response()["error"]["data"]["reason"],
        "idempotency_key_in_flight"
    );
    assert_eq!(text(&first.await.unwrap()), "slow payment 1 of 1");
    let later = call(&c, 3, "slow_pay", json!({"amount": 1}), Some("w")).await;
    assert_eq!(text(&later), "slow payment 1 of 1");
    assert_eq!(runs.slow.load(Ordering::SeqCst), 1);
}

/// A store that cannot be reached.
struct Down;

impl IdempotencyStore for Down {
    fn claim<'a>(
        &'a self,
        _: &'a str,
        _: &'a str,
        _: &'a str,
        _: Duration,
    ) -> BoxFuture<'a, Result<IdempotencyClaim, Error>> {
        Box::pin(async { Err(Error::unavailable("test store", "down")) })
    }
    fn complete<'a>(
        &'a self,
        _: &'a str,
        _: &'a str,
        _: Bytes,
        _: Duration,
    ) -> BoxFuture<'a, Result<bool, Error>> {
        Box::pin(async { Err(Error::unavailable("test store", "down")) })
    }
    fn release<'a>(&'a self, _: &'a str, _: &'a str) -> BoxFuture<'a, Result<(), Error>> {
        Box::pin(async { Err(Error::unavailable("test store", "down")) })
    }
}

#[tokio::test]
async fn a_store_that_cannot_answer_refuses_keyed_calls_only() {
    let runs = Arc::new(Runs::default());
    let server = builder(&runs)
        .idempotency_store(Arc::new(Down))
        .build()
        .unwrap();
    let s = start(server).await;
    let c = Client::new(&s.url);
    let refused = call(&c, 1, "pay", json!({"amount": 1}), Some("k")).await;
    assert_eq!(refused.status, 503, "{}", refused.body);
    assert_eq!(refused.headers["retry-after"], "1");
    assert_eq!(
        refused.response()["error"]["data"]["reason"],
        "store_unavailable"
    );
    assert_eq!(runs.pay.load(Ordering::SeqCst), 0, "never run unguarded");
    // Without a key the store is not asked.
    assert_eq!(
        text(&call(&c, 2, "pay", json!({"amount": 1}), None).await),
        "payment 1 of 1"
    );
}
