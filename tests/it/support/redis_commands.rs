//! What the server asks of a real `redis-server`, counted by Redis itself: the calls per
//! command since it started (`INFO commandstats`), and the log of every command clients send
//! (`MONITOR`), which tells a client's own commands from those its scripts run.
//!
//! `INFO commandstats` counts a command the same whether a client sent it or a Lua script
//! ran it inside an `EVAL`, so a count of round trips read from it needs to know which
//! commands the server's scripts run. [`CommandLog`] does not: `MONITOR` prints each command
//! with its client's address, and a script's commands with `lua` in its place.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt as _;
use tokio::task::JoinHandle;

/// Calls per Redis command since the server at `url` started (`INFO commandstats`), by
/// lower-case command name (`eval`, `hgetall`, …). Scripts' commands count as well.
pub async fn command_counts(url: &str) -> BTreeMap<String, u64> {
    let client = ::redis::Client::open(url).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let info: String = ::redis::cmd("INFO")
        .arg("commandstats")
        .query_async(&mut conn)
        .await
        .unwrap();
    info.lines()
        .filter_map(|l| {
            let (name, rest) = l.strip_prefix("cmdstat_")?.split_once(":calls=")?;
            let calls = rest.split(',').next()?.parse().ok()?;
            Some((name.to_owned(), calls))
        })
        .collect()
}

/// Calls of the Redis command `name` (lower case) since the server at `url` started.
pub async fn calls(url: &str, name: &str) -> u64 {
    command_counts(url).await.get(name).copied().unwrap_or(0)
}

/// The commands run between two [`command_counts`] readings, less the `INFO` of the second
/// and the bus's heartbeat (`PING` every 5 s per replica, whatever the requests).
pub fn delta(
    before: &BTreeMap<String, u64>,
    after: &BTreeMap<String, u64>,
) -> BTreeMap<String, u64> {
    after
        .iter()
        .filter_map(|(name, n)| {
            let mut d = n - before.get(name).copied().unwrap_or(0);
            if name == "info" {
                d -= 1;
            }
            (d > 0 && name != "ping").then(|| (name.clone(), d))
        })
        .collect()
}

/// One command Redis ran, as `MONITOR` printed it: sent by a client, or run by a script.
#[derive(Debug, Clone)]
pub struct Sent {
    /// The command's name, upper case (`EVAL`, `HGETALL`, `PUBLISH`, …).
    pub name: String,
    /// Whether a Lua script ran it inside an `EVAL` (`[0 lua]`) rather than a client
    /// sending it: not a round trip of its own.
    pub by_script: bool,
    /// The whole line (its arguments: a script's text, keys, a published payload).
    pub line: String,
}

/// The log of the commands clients send to a `redis-server` (through `MONITOR`), read in
/// slices: [`take`](Self::take) returns what was run since the previous slice. Each
/// [`Sent`] a client sent is one round trip of its (pipelining aside, which the server does
/// not do); those scripts ran inside an `EVAL` are marked [`by_script`](Sent::by_script).
/// The log's own markers (`ECHO`) are left out.
pub struct CommandLog {
    lines: Arc<Mutex<Vec<String>>>,
    conn: ::redis::aio::MultiplexedConnection,
    reader: JoinHandle<()>,
    seen: usize,
    marks: u64,
}

impl Drop for CommandLog {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

impl CommandLog {
    /// Starts logging the commands sent to the Redis at `url` from now on.
    pub async fn start(url: &str) -> CommandLog {
        let client = ::redis::Client::open(url).unwrap();
        let monitor = client.get_async_monitor().await.unwrap();
        let lines = Arc::new(Mutex::new(Vec::new()));
        let sink = lines.clone();
        let reader = tokio::spawn(async move {
            let mut messages = monitor.into_on_message::<String>();
            while let Some(line) = messages.next().await {
                sink.lock().unwrap().push(line);
            }
        });
        let conn = client.get_multiplexed_async_connection().await.unwrap();
        let mut log = CommandLog {
            lines,
            conn,
            reader,
            seen: 0,
            marks: 0,
        };
        log.take().await;
        log
    }

    /// The commands clients sent since the previous `take` (or the start), in the order
    /// Redis ran them. Everything sent before this call is in: it waits for a marker it
    /// sends itself to come through the log.
    pub async fn take(&mut self) -> Vec<Sent> {
        self.marks += 1;
        let marker = format!("command-log-mark-{}", self.marks);
        let _: String = ::redis::cmd("ECHO")
            .arg(&marker)
            .query_async(&mut self.conn)
            .await
            .unwrap();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            {
                let lines = self.lines.lock().unwrap();
                if let Some(end) = lines[self.seen..]
                    .iter()
                    .position(|l| l.contains(&format!("\"{marker}\"")))
                {
                    let slice = &lines[self.seen..self.seen + end];
                    let sent = slice.iter().filter_map(|l| parse(l)).collect();
                    self.seen += end + 1;
                    return sent;
                }
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "the MONITOR log did not show {marker} within 10 s"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

/// A `MONITOR` line (`1700000000.123456 [0 127.0.0.1:5555] "EVAL" "…" …`, or `[0 lua]` for
/// a command a script ran) as a command; `None` for the log's markers.
fn parse(line: &str) -> Option<Sent> {
    let (_, rest) = line.split_once(" [")?;
    let (source, rest) = rest.split_once("] ")?;
    let by_script = source.ends_with(" lua");
    let name = rest
        .strip_prefix('"')?
        .split('"')
        .next()?
        .to_ascii_uppercase();
    (name != "ECHO").then(|| Sent {
        name,
        by_script,
        line: line.to_owned(),
    })
}

#[test]
fn monitor_lines_are_told_apart() {
    let sent = parse(r#"1700000000.1 [0 127.0.0.1:5555] "eval" "local x" "1""#).unwrap();
    assert_eq!(sent.name, "EVAL");
    assert!(!sent.by_script);
    let run = parse(r#"1700000000.1 [0 lua] "PUBLISH" "c" "m""#).unwrap();
    assert_eq!(run.name, "PUBLISH");
    assert!(run.by_script);
    assert!(parse(r#"1700000000.1 [0 127.0.0.1:5555] "ECHO" "command-log-mark-1""#).is_none());
}
