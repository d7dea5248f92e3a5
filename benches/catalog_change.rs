//! What a runtime change of the tool set costs: one `Catalog::change` (check the new
//! definition, copy the registry, re-encode the tool list, swap it in) on a server serving
//! 100 and 1,000 tools.
//!
//! ```text
//! cargo bench --bench catalog_change -- [--rounds 200]
//! ```
//!
//! Each round replaces one tool (a new description, so the list really changes) and the next
//! round puts it back; prints min / p50 / p99 of the time `apply()` takes, and for
//! comparison the time to build the same server from scratch. In process, no network.

use std::time::{Duration, Instant};

use serde_json::Value;
use stateless_mcp::{HandlerError, RequestContext, Server, ToolDef};

fn tool(i: usize, description: &str) -> ToolDef {
    let schema = serde_json::json!({
        "type": "object",
        "properties": {"text": {"type": "string", "description": "What to echo"},
                       "times": {"type": "integer", "minimum": 1}},
        "required": ["text"]
    });
    ToolDef::new(format!("tool_{i:04}"))
        .description(description)
        .input_schema(schema.as_object().unwrap().clone())
        .raw_handler(|_: RequestContext, _: Value| async { Ok::<_, HandlerError>("ok") })
}

fn server(n: usize) -> Server {
    let mut b = Server::builder();
    for i in 0..n {
        b = b.tool(tool(i, "A tool of the benchmark"));
    }
    b.build().unwrap()
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let rounds = args
        .iter()
        .position(|a| a == "--rounds")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(200usize);
    println!("| tools | change p50 | change p99 | change min | full build p50 |");
    println!("|---|---|---|---|---|");
    for n in [100, 1_000] {
        let mut builds: Vec<Duration> = (0..rounds.min(20))
            .map(|_| {
                let t = Instant::now();
                drop(server(n));
                t.elapsed()
            })
            .collect();
        builds.sort();
        let s = server(n);
        let catalog = s.catalog();
        let mut times = Vec::with_capacity(rounds);
        for r in 0..rounds {
            let description = if r % 2 == 0 {
                "Changed"
            } else {
                "A tool of the benchmark"
            };
            let change = catalog.change().replace_tool(tool(n / 2, description));
            let t = Instant::now();
            let applied = change.apply().unwrap();
            times.push(t.elapsed());
            drop(applied);
        }
        times.sort();
        println!(
            "| {n} | {:.3} ms | {:.3} ms | {:.3} ms | {:.3} ms |",
            percentile(&times, 0.5).as_secs_f64() * 1e3,
            percentile(&times, 0.99).as_secs_f64() * 1e3,
            times[0].as_secs_f64() * 1e3,
            percentile(&builds, 0.5).as_secs_f64() * 1e3,
        );
    }
}
