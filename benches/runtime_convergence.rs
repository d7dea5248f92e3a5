//! How long a runtime change of the tool set takes to reach every replica: three replicas of
//! the binary with `--runtime-tools` on a real `redis-server` (bus and shared source).
//!
//! ```text
//! cargo build --release --features reference-server
//! NO_COLOR=1 cargo bench --features redis --bench runtime_convergence -- [--changes 100]
//! ```
//!
//! Each change enables or disables `runtime_upper` through r1's admin route
//! (`PUT`/`DELETE /admin/tools/runtime_upper`: write the Redis hash, apply on r1, announce on
//! the bus); the clock runs from sending it until `tools/list` on r2 and on r3 (polled on
//! keep-alive connections) reflects it. Prints p50/p90/p99/max over the changes, and the
//! admin request's own time (r1 applied). `STATELESS_MCP_BIN` picks another binary.

#[path = "support/procs.rs"]
mod procs;

use std::time::{Duration, Instant};

use procs::{arg, redis, replica, report};

/// The replicas' `--admin-token`.
const ADMIN_TOKEN: &str = "runtime-convergence-bench-token";

async fn lists_upper(client: &reqwest::Client, port: u16) -> bool {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let text = client
        .post(format!("http://127.0.0.1:{port}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/list")
        .body(body)
        .send()
        .await
        .expect("tools/list")
        .text()
        .await
        .expect("body");
    assert!(text.contains("\"tools\""), "unexpected answer {text}");
    text.contains("\"name\":\"runtime_upper\"")
}

#[tokio::main]
async fn main() {
    let changes: usize = arg("--changes", 100);
    let redis = redis().await;
    let mut replicas = Vec::new();
    for id in ["r1", "r2", "r3"] {
        replicas.push(
            replica(&[
                "--bus",
                &redis.url,
                "--runtime-tools",
                "--admin-token",
                ADMIN_TOKEN,
                "--replica-id",
                id,
                "--page-size",
                "1000",
            ])
            .await,
        );
    }
    let client = reqwest::Client::new();
    let admin = format!(
        "http://127.0.0.1:{}/admin/tools/runtime_upper",
        replicas[0].port
    );
    let mut converged = Vec::with_capacity(changes);
    let mut applied = Vec::with_capacity(changes);
    for i in 0..changes {
        let enable = i % 2 == 0;
        let method = if enable {
            reqwest::Method::PUT
        } else {
            reqwest::Method::DELETE
        };
        let start = Instant::now();
        let status = client
            .request(method, &admin)
            .bearer_auth(ADMIN_TOKEN)
            .send()
            .await
            .expect("admin route")
            .status();
        assert_eq!(status.as_u16(), 204, "the admin route answered {status}");
        applied.push(start.elapsed());
        for r in &replicas[1..] {
            let deadline = start + Duration::from_secs(30);
            while lists_upper(&client, r.port).await != enable {
                assert!(
                    Instant::now() < deadline,
                    "replica on {} never converged",
                    r.port
                );
            }
        }
        converged.push(start.elapsed());
    }
    applied.sort();
    converged.sort();
    report("admin change applied on r1 (204)", "changes", &applied);
    report(
        "change on r1 -> tools/list of r2 and r3 converged",
        "changes",
        &converged,
    );
}
