//! stdio echo: round-trip latency (one request at a time) and throughput with 16 requests in
//! flight, against the release binary started with `--transport stdio`.
//!
//! `cargo build --release && cargo bench --bench stdio [-- --requests N]` (default 20000 for
//! the throughput run, a tenth of it for the latency run; `STATELESS_MCP_BIN` overrides the
//! binary). Every answer is checked to be the echo of its request.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const IN_FLIGHT: usize = 16;
const TEXT: &str = "hello from the stdio benchmark";

fn request(id: usize) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"{TEXT}"}},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{{"name":"stdio-bench","version":"1.0.0"}},"io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#
    ) + "\n"
}

fn binary() -> PathBuf {
    let path = std::env::var_os("STATELESS_MCP_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/release/stateless-mcp")
        });
    assert!(
        path.exists(),
        "{} not found: run `cargo build --release` first (or set STATELESS_MCP_BIN)",
        path.display()
    );
    path
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn check(line: &str) {
    assert!(
        line.contains(TEXT) && line.contains(r#""result""#),
        "not an echo answer: {line}"
    );
}

fn main() {
    let mut requests = 20_000usize;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--requests" {
            requests = args
                .next()
                .and_then(|n| n.parse().ok())
                .expect("--requests N");
        }
    }
    let mut child = Command::new(binary())
        .args(["--transport", "stdio", "--log", "warn"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the binary starts");
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    let mut next_id = 0;

    // Latency: one request at a time.
    let rounds = (requests / 10).max(100);
    let mut times = Vec::with_capacity(rounds);
    for i in 0..rounds + 200 {
        let started = Instant::now();
        stdin.write_all(request(next_id).as_bytes()).unwrap();
        stdin.flush().unwrap();
        next_id += 1;
        line.clear();
        stdout.read_line(&mut line).unwrap();
        check(&line);
        if i >= 200 {
            times.push(started.elapsed());
        }
    }
    times.sort();
    let mean = times.iter().sum::<Duration>() / times.len() as u32;
    println!(
        "stdio echo round trip ({rounds} sequential, after 200 warm-up): mean {:?}, p50 {:?}, p90 {:?}, p99 {:?}, max {:?}",
        mean,
        percentile(&times, 0.5),
        percentile(&times, 0.9),
        percentile(&times, 0.99),
        times[times.len() - 1]
    );

    // Throughput: IN_FLIGHT requests outstanding; each answer lets the writer send one more.
    let (permits, free) = mpsc::channel::<()>();
    let first = next_id;
    let writer = std::thread::spawn(move || {
        for id in first..first + requests {
            if id >= first + IN_FLIGHT {
                free.recv().unwrap();
            }
            stdin.write_all(request(id).as_bytes()).unwrap();
            stdin.flush().unwrap();
        }
        stdin
    });
    let started = Instant::now();
    for _ in 0..requests {
        line.clear();
        stdout.read_line(&mut line).unwrap();
        check(&line);
        let _ = permits.send(());
    }
    let elapsed = started.elapsed();
    drop(writer.join().unwrap());
    println!(
        "stdio echo throughput ({requests} requests, {IN_FLIGHT} in flight): {:.0} requests/s ({:?} per request)",
        requests as f64 / elapsed.as_secs_f64(),
        elapsed / requests as u32
    );
    let status = child.wait().unwrap();
    assert!(status.success(), "the server exited with {status}");
}
