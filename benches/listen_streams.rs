//! What an open `subscriptions/listen` stream costs, measured on the real binary.
//!
//! ```text
//! cargo build --release --features reference-server
//! NO_COLOR=1 cargo bench --bench listen_streams -- [--streams 10000] [--http2] [--per-connection 100] [--redis]
//!     [--events 5] [--resource]
//! ```
//!
//! Starts `target/release/stateless-mcp --fixtures conformance`, reads its resident memory,
//! opens N listen streams (waiting for each acknowledgement), reads the memory again and
//! prints the difference per stream. Then `--events` times (default 5, one after the other)
//! one `tools/call` of `test_trigger_tool_change` publishes an event, and it prints how long
//! (from the call) until the first and until the last stream has received its
//! `tools/list_changed` notification: the median over the events, and the slowest.
//! Loopback only; bounded by N.
//!
//! - `--resource`: the streams subscribe to three URIs each instead (`test://watched-resource`
//!   and two of their own), and the event is `test_trigger_resource_update`'s
//!   `resources/updated` for `test://watched-resource`: matching the update against every
//!   stream's subscriptions is part of the time.
//! - HTTP/1.1 (default): one TCP connection per stream. Connections come from the loopback
//!   addresses 127.0.0.1, 127.0.0.2, … (20,000 per source address), so more streams than one
//!   address has ephemeral ports can be opened (Linux routes all of 127/8 to loopback).
//! - `--http2`: HTTP/2 with prior knowledge (h2c), `--per-connection` streams (default 100;
//!   the server allows 200 concurrent streams per connection) on each connection.
//!
//! - `--redis`: also starts `redis-server` and runs the measured replica with
//!   `--bus redis://…`; the event is then published by a second replica on the same bus, so
//!   the fan-out time includes the hop through Redis (call on the publisher → last stream on
//!   the measured replica has the event).
//!
//! Each open stream holds a file descriptor in this process and in the server: when the
//! open-files limit is too low for N, the bench raises it (`ulimit -n`, in a shell that
//! re-runs the bench; raising the hard limit needs root) and the server inherits it.

#[path = "support/procs.rs"]
mod procs;

use std::net::{Ipv4Addr, SocketAddr};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use procs::{Caller, arg, flag, redis, replica, request, rss_kib};
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::{TcpSocket, TcpStream};

/// Connections per loopback source address (below the default ephemeral port range).
const PER_SOURCE_ADDRESS: usize = 20_000;

/// The soft limit on open files of this process.
fn open_files_limit() -> u64 {
    let limits = std::fs::read_to_string("/proc/self/limits").unwrap_or_default();
    limits
        .lines()
        .find_map(|l| l.strip_prefix("Max open files"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(u64::MAX)
}

/// Re-runs the bench under `ulimit -n needed` when the limit is lower; `Some` is the exit
/// code of that run.
fn with_enough_files(needed: u64) -> Option<ExitCode> {
    const AGAIN: &str = "LISTEN_STREAMS_BENCH_RAISED";
    if open_files_limit() >= needed {
        return None;
    }
    if std::env::var_os(AGAIN).is_some() {
        eprintln!(
            "the open-files limit is {} and cannot be raised to {needed} here (the hard limit \
             is lower, and raising it needs CAP_SYS_RESOURCE): open fewer streams, use \
             --http2 (many streams per connection), or raise the hard limit first",
            open_files_limit()
        );
        return Some(ExitCode::FAILURE);
    }
    let exe = std::env::current_exe().expect("the bench's own path");
    eprintln!(
        "raising the open-files limit from {} to {needed} (ulimit -n)",
        open_files_limit()
    );
    let status = std::process::Command::new("sh")
        .arg("-c")
        // Up to the hard limit when `needed` is above it (the re-run then says so).
        .arg(format!(
            "ulimit -n {needed} 2>/dev/null || ulimit -n \"$(ulimit -Hn)\"; exec \"$0\" \"$@\""
        ))
        .arg(exe)
        .args(std::env::args().skip(1))
        .env(AGAIN, "1")
        .status()
        .expect("sh runs");
    Some(ExitCode::from(
        u8::try_from(status.code().unwrap_or(1)).unwrap_or(1),
    ))
}

fn body(id: usize, method: &str, params: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{{params}"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#
    )
}

const LISTEN_PARAMS: &str = r#""notifications":{"toolsListChanged":true},"#;

/// What the streams listen to, and the event that reaches them all.
#[derive(Clone, Copy)]
enum Event {
    /// `toolsListChanged`; `test_trigger_tool_change`.
    Tools,
    /// Three resource subscriptions; `test_trigger_resource_update`.
    Resource,
}

impl Event {
    /// The listen request's params (before `_meta`) for stream `id`.
    fn params(self, id: usize) -> String {
        match self {
            Event::Tools => LISTEN_PARAMS.to_owned(),
            Event::Resource => format!(
                r#""notifications":{{"resourceSubscriptions":["test://own/{id}/a","test://watched-resource","file:///own/{id}"]}},"#
            ),
        }
    }

    fn tool(self) -> &'static str {
        match self {
            Event::Tools => "test_trigger_tool_change",
            Event::Resource => "test_trigger_resource_update",
        }
    }

    fn needle(self) -> &'static str {
        match self {
            Event::Tools => "tools/list_changed",
            Event::Resource => "resources/updated",
        }
    }
}

/// One open listen stream.
enum Stream {
    /// On its own HTTP/1.1 connection.
    Http1(BufReader<TcpStream>),
    /// One of the streams of an HTTP/2 connection.
    Http2(reqwest::Response, String),
}

impl Stream {
    /// Reads until `needle` shows up.
    async fn wait_for(&mut self, needle: &str) {
        match self {
            Stream::Http1(reader) => procs::wait_for(reader, needle).await,
            Stream::Http2(response, seen) => loop {
                if let Some(at) = seen.find(needle) {
                    seen.drain(..at + needle.len());
                    return;
                }
                let chunk = response.chunk().await.expect("read");
                let chunk = chunk.unwrap_or_else(|| panic!("stream closed before {needle}"));
                seen.push_str(&String::from_utf8_lossy(&chunk));
            },
        }
    }
}

/// Opens one listen stream over HTTP/1.1 from `source` and returns it once acknowledged.
async fn listen_http1(port: u16, source: Ipv4Addr, id: usize, event: Event) -> Stream {
    let socket = TcpSocket::new_v4().expect("socket");
    socket.bind(SocketAddr::from((source, 0))).expect("bind");
    let mut tcp = socket
        .connect(SocketAddr::from((Ipv4Addr::LOCALHOST, port)))
        .await
        .expect("connect");
    let req = request(port, id, "subscriptions/listen", None, &event.params(id));
    tcp.write_all(req.as_bytes()).await.expect("send");
    let mut stream = Stream::Http1(BufReader::new(tcp));
    stream.wait_for("subscriptions/acknowledged").await;
    stream
}

/// Opens one listen stream on `client`'s HTTP/2 connection, once acknowledged.
async fn listen_http2(client: &reqwest::Client, port: u16, id: usize, event: Event) -> Stream {
    let response = client
        .post(format!("http://127.0.0.1:{port}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "subscriptions/listen")
        .body(body(id, "subscriptions/listen", &event.params(id)))
        .send()
        .await
        .expect("send");
    assert_eq!(response.status(), 200, "listen over HTTP/2");
    let mut stream = Stream::Http2(response, String::new());
    stream.wait_for("subscriptions/acknowledged").await;
    stream
}

/// Opens `count` streams over HTTP/2, `per_connection` on each connection.
async fn open_http2(
    port: u16,
    first_id: usize,
    count: usize,
    per_connection: usize,
    event: Event,
) -> Vec<Stream> {
    let mut open = Vec::with_capacity(count);
    let ids: Vec<usize> = (first_id..first_id + count).collect();
    // 20 connections at a time, each opening its streams concurrently.
    for group in ids.chunks(per_connection * 20) {
        let connections = group.chunks(per_connection).map(|ids| async move {
            let client = reqwest::Client::builder()
                .http2_prior_knowledge()
                .build()
                .expect("client");
            // The first stream opens the connection; the others share it.
            let mut streams = vec![listen_http2(&client, port, ids[0], event).await];
            let rest = ids[1..]
                .iter()
                .map(|&id| listen_http2(&client, port, id, event));
            streams.extend(futures_util::future::join_all(rest).await);
            streams
        });
        for streams in futures_util::future::join_all(connections).await {
            open.extend(streams);
        }
    }
    open
}

/// Opens `count` streams over HTTP/1.1, one connection each.
async fn open_http1(port: u16, first_id: usize, count: usize, event: Event) -> Vec<Stream> {
    let mut open = Vec::with_capacity(count);
    let ids: Vec<usize> = (0..count).collect();
    for batch in ids.chunks(250) {
        let opened = futures_util::future::join_all(batch.iter().map(|&i| {
            let source = Ipv4Addr::new(127, 0, 0, 1 + (i / PER_SOURCE_ADDRESS) as u8);
            listen_http1(port, source, first_id + i, event)
        }))
        .await;
        open.extend(opened);
    }
    open
}

fn main() -> ExitCode {
    let streams: usize = arg("--streams", 10_000);
    let http2 = flag("--http2");
    let per_connection: usize = arg("--per-connection", 100).clamp(1, 200);
    let needed = if http2 {
        (streams / per_connection) as u64 + 1_000
    } else {
        streams as u64 + 1_000
    };
    if let Some(code) = with_enough_files(needed) {
        return code;
    }
    tokio::runtime::Runtime::new()
        .expect("runtime")
        .block_on(run(
            streams,
            http2.then_some(per_connection),
            flag("--redis"),
            arg("--events", 5).max(1),
            if flag("--resource") {
                Event::Resource
            } else {
                Event::Tools
            },
        ));
    ExitCode::SUCCESS
}

async fn run(streams: usize, http2: Option<usize>, with_redis: bool, events: usize, event: Event) {
    let redis = if with_redis {
        Some(redis().await)
    } else {
        None
    };
    let max = (streams + 100).to_string();
    let mut args = vec!["--max-listen-streams", max.as_str()];
    if let Some(r) = &redis {
        args.extend(["--bus", r.url.as_str()]);
    }
    let measured = replica(&args).await;
    let publisher = match &redis {
        Some(r) => Some(replica(&["--bus", r.url.as_str()]).await),
        None => None,
    };
    let (port, pid) = (measured.port, measured.pid());
    println!(
        "bus:                     {}",
        if with_redis {
            "redis (event published by a second replica)"
        } else {
            "memory (in-process)"
        }
    );

    // Warm up: a few streams open and closed, so lazily allocated pools exist already.
    let warm_up = match http2 {
        Some(per) => open_http2(port, 0, 50, per.min(50), event).await,
        None => open_http1(port, 0, 50, event).await,
    };
    drop(warm_up);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = rss_kib(pid);
    let started = Instant::now();
    let mut open = match http2 {
        Some(per) => open_http2(port, 1000, streams, per, event).await,
        None => open_http1(port, 1000, streams, event).await,
    };
    let open_time = started.elapsed();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = rss_kib(pid);
    let per_stream = (after.saturating_sub(before) as f64 * 1024.0) / streams as f64;
    match http2 {
        Some(per) => println!(
            "transport:               HTTP/2 (h2c), {per} streams per connection, {} connections",
            streams.div_ceil(per)
        ),
        None => println!(
            "transport:               HTTP/1.1, one connection per stream, from {} loopback address(es)",
            streams.div_ceil(PER_SOURCE_ADDRESS)
        ),
    }
    println!("streams open:            {streams} (in {open_time:.2?})");
    println!("server RSS before/after: {before} KiB / {after} KiB");
    println!(
        "memory per open stream:  {per_stream:.0} bytes ({:.2} KiB)",
        per_stream / 1024.0
    );

    // Fan-out: one event at a time, every stream.
    let mut caller = Caller::connect(publisher.as_ref().map_or(port, |p| p.port)).await;
    let (mut first, mut last) = (Vec::new(), Vec::new());
    for _ in 0..events {
        let started = Instant::now();
        caller.send(event.tool()).await;
        caller.answer().await;
        let waits = open.iter_mut().map(|s| async {
            s.wait_for(event.needle()).await;
            Instant::now()
        });
        let arrived = futures_util::future::join_all(waits).await;
        let at = |t: Option<&Instant>| t.map_or(Duration::ZERO, |t| *t - started);
        first.push(at(arrived.iter().min()));
        last.push(at(arrived.iter().max()));
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    first.sort();
    last.sort();
    println!(
        "event:                   {} ({events} events, one at a time)",
        event.needle()
    );
    println!(
        "one event, first stream: p50 {:.2?}  max {:.2?}",
        procs::percentile(&first, 50.0),
        first[first.len() - 1]
    );
    println!(
        "one event, last stream:  p50 {:.2?}  max {:.2?}",
        procs::percentile(&last, 50.0),
        last[last.len() - 1]
    );
    println!("server RSS at the end:   {} KiB", rss_kib(pid));
    drop(open);
}
