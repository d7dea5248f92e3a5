//! Processes for the benches that run the real binary: a `redis-server` and replicas of
//! `target/release/stateless-mcp` on loopback ports, each killed on drop.
//!
//! Included with `#[path = "support/procs.rs"] mod procs;` (Cargo does not treat this
//! directory as a bench target).

#![allow(dead_code, unreachable_pub)]

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::process::{Child, Command};

/// The value after `name` on the command line, parsed, or `default`.
pub fn arg<T: std::str::FromStr>(name: &str, default: T) -> T {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Whether `name` is on the command line.
pub fn flag(name: &str) -> bool {
    std::env::args().any(|a| a == name)
}

/// A free loopback port (bound, read and released).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("bind 127.0.0.1:0")
        .port()
}

/// A running `redis-server` without persistence.
pub struct Redis {
    _child: Child,
    /// `redis://127.0.0.1:PORT`.
    pub url: String,
}

/// Starts `redis-server` on a free port and waits until it accepts connections.
pub async fn redis() -> Redis {
    let port = free_port();
    let mut child = Command::new("redis-server")
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .args(["--save", "", "--appendonly", "no"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| {
            panic!("cannot start redis-server ({e}); install it: apt-get install -y redis-server")
        });
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let ready = tokio::time::timeout(Duration::from_secs(20), async {
        while let Ok(Some(line)) = lines.next_line().await {
            if line.contains("Ready to accept connections") {
                return true;
            }
        }
        false
    })
    .await
    .unwrap_or(false);
    assert!(ready, "redis-server did not become ready");
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    Redis {
        _child: child,
        url: format!("redis://127.0.0.1:{port}"),
    }
}

/// A running replica of the release binary.
pub struct Replica {
    child: Child,
    /// Its port.
    pub port: u16,
}

impl Replica {
    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id().expect("pid")
    }

    /// Sends `signal` (`TERM`, `KILL`, …) with `kill(1)`.
    pub fn signal(&self, signal: &str) {
        let status = std::process::Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(self.pid().to_string())
            .status()
            .expect("kill(1) runs");
        assert!(status.success(), "kill -{signal} {} failed", self.pid());
    }

    /// Waits until the process has exited; its exit status.
    pub async fn wait(&mut self) -> std::process::ExitStatus {
        self.child.wait().await.expect("wait for the replica")
    }
}

/// The key ring every bench replica shares (`MCP_STATE_KEYS`; `--state-keys` overrides it).
const BENCH_STATE_KEYS: &str = "k1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";

/// The release binary (`STATELESS_MCP_BIN` overrides it).
pub fn binary() -> String {
    std::env::var("STATELESS_MCP_BIN").unwrap_or_else(|_| {
        concat!(env!("CARGO_MANIFEST_DIR"), "/target/release/stateless-mcp").into()
    })
}

/// Starts the release binary with the conformance fixtures and `args` on a loopback port,
/// and waits until `/readyz` answers 200 (the bus is connected).
pub async fn replica(args: &[&str]) -> Replica {
    replica_at("127.0.0.1:0", args).await
}

/// [`replica`] listening on `listen` (`127.0.0.1:PORT`; port 0 for any free one).
pub async fn replica_at(listen: &str, args: &[&str]) -> Replica {
    let bin = binary();
    let mut child = Command::new(&bin)
        .args(["--listen", listen, "--fixtures", "conformance"])
        .args(args)
        .env(
            "MCP_LOG",
            "warn,stateless_mcp::app=info,stateless_mcp::runner=info",
        )
        // One key ring for every replica (a replica on a shared bus must have one), unless
        // the arguments give theirs.
        .env("MCP_STATE_KEYS", BENCH_STATE_KEYS)
        .env("NO_COLOR", "1")
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {bin} ({e}); run cargo build --release first"));
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
    for _ in 0..300 {
        if readyz(port).await {
            return Replica { child, port };
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the replica on port {port} never became ready");
}

/// Two replicas with the same `shared` arguments, `--replica-id A` and `--replica-id B`.
pub async fn replica_pair(shared: &[&str]) -> (Replica, Replica) {
    let a = replica(&[shared, &["--replica-id", "A"]].concat()).await;
    let b = replica(&[shared, &["--replica-id", "B"]].concat()).await;
    (a, b)
}

/// How many rounds a latency bench times, and how many untimed ones come first.
#[derive(Clone, Copy)]
pub struct Rounds {
    /// The timed rounds.
    pub timed: usize,
    /// The untimed rounds before them.
    pub warmup: usize,
}

impl Rounds {
    /// From the command line: `count_flag N` (else `timed`) and `--warmup N` (else `warmup`).
    pub fn from_args(count_flag: &str, timed: usize, warmup: usize) -> Rounds {
        let rounds = Rounds {
            timed: arg(count_flag, timed),
            warmup: arg("--warmup", warmup),
        };
        assert!(rounds.timed > 0, "{count_flag} must be at least 1");
        rounds
    }

    /// Runs `round(i)` for every round, one at a time, and returns the durations it returned
    /// for the timed ones, sorted.
    pub async fn measure(self, mut round: impl AsyncFnMut(usize) -> Duration) -> Vec<Duration> {
        let mut samples = Vec::with_capacity(self.timed);
        for i in 0..self.warmup + self.timed {
            let took = round(i).await;
            if i >= self.warmup {
                samples.push(took);
            }
        }
        samples.sort();
        samples
    }
}

async fn readyz(port: u16) -> bool {
    let Ok(mut tcp) = TcpStream::connect(("127.0.0.1", port)).await else {
        return false;
    };
    let req =
        format!("GET /readyz HTTP/1.1\r\nHost: localhost:{port}\r\nConnection: close\r\n\r\n");
    if tcp.write_all(req.as_bytes()).await.is_err() {
        return false;
    }
    let mut buf = Vec::new();
    let _ = tcp.read_to_end(&mut buf).await;
    buf.starts_with(b"HTTP/1.1 200")
}

/// An HTTP/1.1 request for `method` with the 2026-07-28 headers and `_meta`; `params` is the
/// text of the params object's other members, each followed by a comma.
pub fn request(port: u16, id: usize, method: &str, name: Option<&str>, params: &str) -> String {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{{params}"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#
    );
    let name = name.map_or(String::new(), |n| format!("Mcp-Name: {n}\r\n"));
    format!(
        "POST /mcp HTTP/1.1\r\nHost: localhost:{port}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: {method}\r\n{name}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// Opens one listen stream asking for `notifications` (a JSON object's text) and returns it
/// once acknowledged.
pub async fn listen(port: u16, id: usize, notifications: &str) -> BufReader<TcpStream> {
    let mut tcp = TcpStream::connect(("127.0.0.1", port))
        .await
        .expect("connect");
    let req = request(
        port,
        id,
        "subscriptions/listen",
        None,
        &format!(r#""notifications":{notifications},"#),
    );
    tcp.write_all(req.as_bytes()).await.expect("send");
    let mut reader = BufReader::new(tcp);
    wait_for(&mut reader, "subscriptions/acknowledged").await;
    reader
}

/// Reads lines until one contains `needle`.
pub async fn wait_for(reader: &mut BufReader<TcpStream>, needle: &str) {
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

/// A keep-alive connection that sends `tools/call` requests and reads their JSON answers.
pub struct Caller {
    reader: BufReader<TcpStream>,
    port: u16,
    next_id: usize,
}

impl Caller {
    /// Connects to the replica on `port`.
    pub async fn connect(port: u16) -> Caller {
        let tcp = TcpStream::connect(("127.0.0.1", port))
            .await
            .expect("connect");
        tcp.set_nodelay(true).unwrap();
        Caller {
            reader: BufReader::new(tcp),
            port,
            next_id: 1,
        }
    }

    /// Sends `tools/call` of `tool` without arguments (not waiting for the answer).
    pub async fn send(&mut self, tool: &str) {
        let req = request(
            self.port,
            self.next_id,
            "tools/call",
            Some(tool),
            &format!(r#""name":"{tool}","arguments":{{}},"#),
        );
        self.next_id += 1;
        self.reader
            .get_mut()
            .write_all(req.as_bytes())
            .await
            .expect("send");
    }

    /// Reads one answer (status line, headers, a `Content-Length` body); panics unless 200.
    pub async fn answer(&mut self) {
        let mut line = String::new();
        self.reader.read_line(&mut line).await.expect("status");
        assert!(
            line.starts_with("HTTP/1.1 200"),
            "unexpected answer {line:?}"
        );
        let mut length = None;
        loop {
            line.clear();
            self.reader.read_line(&mut line).await.expect("header");
            let l = line.trim_end();
            if l.is_empty() {
                break;
            }
            if let Some((k, v)) = l.split_once(':')
                && k.eq_ignore_ascii_case("content-length")
            {
                length = v.trim().parse::<usize>().ok();
            }
        }
        let mut body = vec![0; length.expect("a Content-Length answer")];
        self.reader.read_exact(&mut body).await.expect("body");
    }
}

/// Resident memory of a process, in KiB.
pub fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// The `p`-th percentile (0–100) of sorted samples.
pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p / 100.0).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// Prints `what: N <noun>: p50 … p90 … p99 … max … (mean …)` for sorted samples.
pub fn report(what: &str, noun: &str, sorted: &[Duration]) {
    let mean = sorted.iter().sum::<Duration>() / sorted.len() as u32;
    println!(
        "{what}: {} {noun}: p50 {:.2?}  p90 {:.2?}  p99 {:.2?}  max {:.2?}  (mean {:.2?})",
        sorted.len(),
        percentile(sorted, 50.0),
        percentile(sorted, 90.0),
        percentile(sorted, 99.0),
        sorted[sorted.len() - 1],
        mean
    );
}

/// Open file descriptors of a process (entries of `/proc/PID/fd`), 0 when it is gone.
pub fn open_fds(pid: u32) -> u64 {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count() as u64)
}
