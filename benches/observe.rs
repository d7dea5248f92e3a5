//! What observing one request costs: its metric series picked from the labels, the
//! in-flight gauge, and on finish the counter and duration histogram — with the Prometheus
//! recorder installed, as the reference server runs.
//!
//! - `observe/tools_call`: a `tools/call` of a registered tool (named series);
//! - `observe/unknown_tool`: a `tools/call` of a name outside the registry (`_other`);
//! - `observe/discover`: `server/discover` (no name label).
//!
//! Run with `cargo bench --bench observe`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use stateless_mcp::observability::metrics::RequestOutcome;
use stateless_mcp::observability::{PrometheusMetrics, RequestObserver};

fn observe(c: &mut Criterion) {
    let _recorder = PrometheusMetrics::install().expect("the recorder installs");
    let tools: Vec<String> = (0..100).map(|i| format!("tool_{i:03}")).collect();
    let observer = RequestObserver::new(tools.iter().map(String::as_str), ["greet"]);
    let mut group = c.benchmark_group("observe");
    for (id, method, name) in [
        ("tools_call", "tools/call", Some("tool_042")),
        ("unknown_tool", "tools/call", Some("nope")),
        ("discover", "server/discover", None),
    ] {
        group.bench_function(id, |b| {
            b.iter(|| {
                let mut probe = observer.start_labelled(black_box(Some(method)), black_box(name));
                probe.finish(RequestOutcome::Ok);
                drop(black_box(probe));
            })
        });
    }
    group.finish();
}

criterion_group!(benches, observe);
criterion_main!(benches);
