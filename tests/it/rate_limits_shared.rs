//! Rate limits that hold across replicas: three replicas of the binary behind the shipped
//! nginx, their budgets in a real `redis-server` (`--rate-limit-store`), one caller sending
//! as fast as it can through the load balancer. It gets about its budget, not three times
//! it; a tool's budget is apart from the caller's and from other tools'; with Redis
//! stopped every replica falls back to its own budgets, and the caller sees 200s and 429s
//! only (no error storm).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::Mutex;

use crate::support::cluster::{Cluster, ClusterOptions, metric};
use crate::support::{checked_messages, http_request, request_parts};

/// The caller's budget: B requests per second, bursts of BURST.
const B: u32 = 20;
const BURST: u32 = 10;
/// The budget of the tool `add`.
const ADD_RATE: u32 = 2;
const ADD_BURST: u32 = 3;

/// What one load run saw.
#[derive(Debug, Default)]
struct Tally {
    admitted: u32,
    refused: u32,
    /// Any other status, by status.
    other: BTreeMap<u16, u32>,
    /// Admitted requests by replica.
    by_replica: BTreeMap<String, u32>,
}

/// One request of `method` (`tools/call` of `tool` when given) through the load balancer;
/// its status, replica and (for a refusal) its checked body and headers.
async fn one(
    http: &reqwest::Client,
    url: &str,
    id: u64,
    tool: Option<&str>,
) -> (u16, String, reqwest::header::HeaderMap, String) {
    let (method, params) = match tool {
        Some("add") => (
            "tools/call",
            json!({"name": "add", "arguments": {"a": 1, "b": 2}}),
        ),
        Some(t) => (
            "tools/call",
            json!({"name": t, "arguments": {"text": "hi"}}),
        ),
        None => ("tools/list", json!({})),
    };
    let (headers, body) = request_parts(method, json!(id), params);
    let r = http_request(http, "POST", url, &headers, body)
        .send()
        .await
        .expect("nginx answers");
    let status = r.status().as_u16();
    let h = r.headers().clone();
    let replica = h
        .get("x-mcp-replica")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("nginx")
        .to_owned();
    let ct = h
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let text = r.text().await.unwrap();
    if status == 200 || status == 429 {
        checked_messages(&ct, &text, Some(method));
    }
    (status, replica, h, text)
}

/// `workers` clients sending `tools/list` back to back through nginx for `secs`.
async fn flood(url: &str, workers: usize, secs: u64) -> Tally {
    let tally = Arc::new(Mutex::new(Tally::default()));
    let stop = Arc::new(AtomicBool::new(false));
    let http = crate::support::http_builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let mut tasks = Vec::new();
    for w in 0..workers {
        let (tally, stop, http, url) = (tally.clone(), stop.clone(), http.clone(), url.to_owned());
        tasks.push(tokio::spawn(async move {
            let mut id = (w as u64) << 32;
            while !stop.load(Ordering::Relaxed) {
                id += 1;
                let (status, replica, _, _) = one(&http, &url, id, None).await;
                let mut t = tally.lock().await;
                match status {
                    200 => {
                        t.admitted += 1;
                        *t.by_replica.entry(replica).or_default() += 1;
                    }
                    429 => t.refused += 1,
                    s => *t.other.entry(s).or_default() += 1,
                }
            }
        }));
    }
    tokio::time::sleep(Duration::from_secs(secs)).await;
    stop.store(true, Ordering::Relaxed);
    for t in tasks {
        t.await.unwrap();
    }
    Arc::into_inner(tally).unwrap().into_inner()
}

/// Waits until every budget is whole again.
async fn refill() {
    tokio::time::sleep(Duration::from_secs(2)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn one_budget_across_three_replicas_tool_budgets_apart_and_local_budgets_without_redis() {
    let mut cluster = Cluster::start(ClusterOptions {
        extra_args: [
            "--rate-limit",
            &B.to_string(),
            "--rate-limit-burst",
            &BURST.to_string(),
            "--rate-limit-header",
            "x-forwarded-for",
            "--rate-limit-tools",
            &format!("add={ADD_RATE}/{ADD_BURST}"),
            "--rate-limit-store",
            "{redis}",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
        ..ClusterOptions::default()
    })
    .await;
    let url = cluster.nginx.url.clone();
    let http = crate::support::http_builder().build().unwrap();

    // A refusal: 429, Retry-After, the IETF headers, the JSON-RPC error echoing the id.
    let mut refusal = None;
    for id in 1..=BURST as u64 + 10 {
        let (status, _, headers, body) = one(&http, &url, id, None).await;
        if status == 429 {
            refusal = Some((id, headers, body));
            break;
        }
    }
    let (id, headers, body) = refusal.expect("the burst runs out");
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["id"], id, "{body}");
    assert_eq!(body["error"]["data"]["reason"], "rate_limited", "{body}");
    assert!(
        headers["retry-after"]
            .to_str()
            .unwrap()
            .parse::<u64>()
            .unwrap()
            >= 1
    );
    assert_eq!(
        headers["ratelimit-policy"],
        format!("\"caller\";q={BURST};w=1")
    );
    assert!(
        headers["ratelimit"]
            .to_str()
            .unwrap()
            .starts_with("\"caller\";r=0;t="),
        "{headers:?}"
    );
    refill().await;

    // Per-tool budgets: `add` runs out after its burst while `echo` (no tool budget) and
    // the caller's own budget go on; the refusal names both budgets.
    let mut adds = Vec::new();
    for id in 0..ADD_BURST as u64 + 2 {
        adds.push(one(&http, &url, 100 + id, Some("add")).await);
    }
    let add_ok = adds.iter().filter(|a| a.0 == 200).count();
    assert!(
        (ADD_BURST as usize..=ADD_BURST as usize + 1).contains(&add_ok),
        "add admitted {add_ok} of {}",
        adds.len()
    );
    let refused = adds.iter().find(|a| a.0 == 429).expect("add runs out");
    assert_eq!(
        refused.2["ratelimit-policy"],
        format!("\"tool\";q={ADD_BURST};w=2, \"caller\";q={BURST};w=1")
    );
    assert!(
        refused.2["ratelimit"]
            .to_str()
            .unwrap()
            .contains("\"tool\";r=0")
    );
    let echo = one(&http, &url, 200, Some("echo")).await;
    assert_eq!(
        echo.0, 200,
        "another tool is not limited by add's budget: {}",
        echo.3
    );
    assert_eq!(
        one(&http, &url, 201, None).await.0,
        200,
        "nor is the caller"
    );
    refill().await;

    // As fast as it can through all three replicas for T seconds: about BURST + B·T
    // admitted (tolerance: within 15 %, and never the 3·B·T three separate budgets would
    // allow), spread over every replica.
    const T: u64 = 4;
    let started = Instant::now();
    let shared = flood(&url, 8, T).await;
    let elapsed = started.elapsed().as_secs_f64();
    let expected = f64::from(BURST) + f64::from(B) * elapsed;
    println!(
        "[rate] shared budget: {} admitted, {} refused in {elapsed:.2} s (expected about {expected:.0}); by replica {:?}; other {:?}",
        shared.admitted, shared.refused, shared.by_replica, shared.other
    );
    assert!(shared.other.is_empty(), "{:?}", shared.other);
    assert!(
        shared.refused > shared.admitted,
        "the caller sent faster than its budget"
    );
    assert_eq!(shared.by_replica.len(), 3, "{:?}", shared.by_replica);
    let ratio = f64::from(shared.admitted) / expected;
    assert!(
        (0.85..=1.15).contains(&ratio),
        "admitted {} for an expected {expected:.0}",
        shared.admitted
    );
    let fallbacks: f64 = {
        let mut sum = 0.0;
        for r in &cluster.replicas {
            sum += metric(r, "mcp_rate_limit_fallbacks_total").await;
        }
        sum
    };
    assert_eq!(
        fallbacks, 0.0,
        "Redis was up: no check was answered locally"
    );

    // Redis stopped: each replica answers from its own budgets. No 5xx, no error storm:
    // the caller sees 200s and 429s, now up to three budgets' worth, and each replica logs
    // the outage once.
    cluster.redis.kill();
    refill().await;
    let started = Instant::now();
    let local = flood(&url, 8, T).await;
    let elapsed = started.elapsed().as_secs_f64();
    println!(
        "[rate] Redis down: {} admitted, {} refused in {elapsed:.2} s; by replica {:?}; other {:?}",
        local.admitted, local.refused, local.by_replica, local.other
    );
    assert!(
        local.other.is_empty(),
        "only 200 and 429: {:?}",
        local.other
    );
    assert!(local.refused > 0);
    let one_budget = f64::from(BURST) + f64::from(B) * elapsed;
    assert!(
        f64::from(local.admitted) > 1.5 * one_budget,
        "each replica enforces its own budget: {} admitted",
        local.admitted
    );
    assert!(f64::from(local.admitted) <= 3.0 * one_budget * 1.15 + 3.0);
    for r in &cluster.replicas {
        assert!(metric(r, "mcp_rate_limit_fallbacks_total").await > 0.0);
        let outages = r
            .stderr_lines()
            .iter()
            .filter(|l| l.contains("the shared rate store is unreachable"))
            .count();
        assert!((1..=2).contains(&outages), "logged {outages} times");
    }
}
