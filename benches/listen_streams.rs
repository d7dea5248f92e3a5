//! What an open `subscriptions/listen` stream costs, measured on the real binary.
//!
//! ```text
//! cargo build --release && cargo bench --bench listen_streams -- [--streams 10000]
//! ```
//!
//! Starts `target/release/stateless-mcp --fixtures conformance`, reads its resident memory,
//! opens N listen streams over N TCP connections (waiting for each acknowledgement), reads
//! the memory again and prints the difference per stream. Then one `tools/call` of
//! `test_trigger_tool_change` publishes an event, and it prints how long until every stream
//! has received its `tools/list_changed` notification. Loopback only; bounded by N.

use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::process::Command;

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

fn request(port: u16, id: usize, method: &str, params: &str) -> String {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{{params}"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#
    );
    let name = if method == "tools/call" {
        "Mcp-Name: test_trigger_tool_change\r\n"
    } else {
        ""
    };
    format!(
        "POST /mcp HTTP/1.1\r\nHost: localhost:{port}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: {method}\r\n{name}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// Opens one listen stream and returns it once acknowledged.
async fn listen(port: u16, id: usize) -> BufReader<TcpStream> {
    let mut tcp = TcpStream::connect(("127.0.0.1", port))
        .await
        .expect("connect");
    let req = request(
        port,
        id,
        "subscriptions/listen",
        r#""notifications":{"toolsListChanged":true},"#,
    );
    tcp.write_all(req.as_bytes()).await.expect("send");
    let mut reader = BufReader::new(tcp);
    wait_for(&mut reader, "subscriptions/acknowledged").await;
    reader
}

async fn wait_for(reader: &mut BufReader<TcpStream>, needle: &str) {
    let mut line = String::new();
    loop {
        line.clear();
        let n = reader.read_line(&mut line).await.expect("read");
        assert!(n > 0, "stream closed before {needle}");
        if line.contains(needle) {
            return;
        }
    }
}

#[tokio::main]
async fn main() {
    let streams = arg("--streams", 10_000);
    let bin = std::env::var("STATELESS_MCP_BIN").unwrap_or_else(|_| {
        concat!(env!("CARGO_MANIFEST_DIR"), "/target/release/stateless-mcp").into()
    });
    let mut child = Command::new(&bin)
        .args(["--listen", "127.0.0.1:0", "--fixtures", "conformance"])
        .args(["--max-listen-streams", &(streams + 10).to_string()])
        .env("MCP_LOG", "warn,stateless_mcp::app=info")
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {bin} ({e}); run cargo build --release first"));
    let pid = child.id().expect("pid");
    let mut logs = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let port: u16 = loop {
        let line = logs
            .next_line()
            .await
            .unwrap()
            .expect("the server logs its address");
        if let Some(rest) = line.split("address=").nth(1) {
            let addr = rest.split_whitespace().next().unwrap();
            break addr.rsplit(':').next().unwrap().parse().unwrap();
        }
    };
    tokio::spawn(async move { while let Ok(Some(_)) = logs.next_line().await {} });

    // Warm up: a few streams open and closed, so lazily allocated pools exist already.
    for i in 0..50 {
        drop(listen(port, i).await);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = rss_kib(pid);
    let started = Instant::now();
    let mut open = Vec::with_capacity(streams);
    for batch in (0..streams).collect::<Vec<_>>().chunks(250) {
        let opened =
            futures_util::future::join_all(batch.iter().map(|&i| listen(port, 1000 + i))).await;
        open.extend(opened);
    }
    let open_time = started.elapsed();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = rss_kib(pid);
    let per_stream = (after.saturating_sub(before) as f64 * 1024.0) / streams as f64;
    println!("streams open:            {streams} (in {open_time:.2?})");
    println!("server RSS before/after: {before} KiB / {after} KiB");
    println!(
        "memory per open stream:  {per_stream:.0} bytes ({:.2} KiB)",
        per_stream / 1024.0
    );

    // Fan-out: one event, every stream.
    let mut tcp = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let started = Instant::now();
    tcp.write_all(
        request(
            port,
            1,
            "tools/call",
            r#""name":"test_trigger_tool_change","arguments":{},"#,
        )
        .as_bytes(),
    )
    .await
    .unwrap();
    let mut buf = [0u8; 4096];
    let _ = tcp.read(&mut buf).await.unwrap();
    let waits = open.iter_mut().map(|r| wait_for(r, "tools/list_changed"));
    futures_util::future::join_all(waits).await;
    println!("one event to all streams: {:.2?}", started.elapsed());
    drop(open);
    child.kill().await.ok();
}
