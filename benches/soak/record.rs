//! What the soak observes: per-minute latencies by request kind, failures by kind (outside
//! or inside a restart window), per-replica RSS and open-fd samples, the restarts; and the
//! markdown report made of them.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The request kinds, in report order.
pub(crate) const KINDS: [&str; 9] = [
    "call",
    "list page",
    "mrtr round 1",
    "mrtr round 2",
    "trigger",
    "listen open",
    "legacy init",
    "legacy call",
    "legacy delete",
];

/// A listen stream held to its end; its "latency" is how long it was held.
pub(crate) const STREAM: &str = "listen stream";

/// One RSS/fd sample of a replica process.
pub(crate) struct Sample {
    /// Seconds since the start.
    pub(crate) at: f64,
    /// `r1`, …
    pub(crate) replica: String,
    /// 1 for the first process of that replica, 2 after its first restart, …
    pub(crate) instance: u32,
    /// Its pid.
    pub(crate) pid: u32,
    /// VmRSS in KiB.
    pub(crate) rss_kib: u64,
    /// Entries of /proc/PID/fd.
    pub(crate) fds: u64,
}

/// One restart of a replica.
pub(crate) struct Restart {
    /// Seconds since the start when the signal was sent.
    pub(crate) at: f64,
    /// Which replica.
    pub(crate) replica: String,
    /// `TERM` or `KILL`.
    pub(crate) signal: &'static str,
    /// Its exit status as printed.
    pub(crate) exit: String,
    /// Signal → exit.
    pub(crate) stop: Duration,
    /// Exit → ready again.
    pub(crate) start: Duration,
}

#[derive(Default)]
struct Inner {
    latency: BTreeMap<(u64, &'static str), Vec<u32>>,
    /// (minute, kind, what, in a restart window) → count.
    errors: BTreeMap<(u64, &'static str, String, bool), u64>,
    samples: Vec<Sample>,
    restarts: Vec<Restart>,
    listen_events: u64,
}

/// Shared by every task of the soak.
pub(crate) struct Recorder {
    started: Instant,
    windows: AtomicUsize,
    inner: Mutex<Inner>,
}

impl Recorder {
    /// Starts the clock.
    pub(crate) fn new() -> Recorder {
        Recorder {
            started: Instant::now(),
            windows: AtomicUsize::new(0),
            inner: Mutex::new(Inner::default()),
        }
    }

    /// Time since the start.
    pub(crate) fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    fn minute(&self) -> u64 {
        self.started.elapsed().as_secs() / 60
    }

    /// A successful request of `kind` that took `took`.
    pub(crate) fn ok(&self, kind: &'static str, took: Duration) {
        let m = self.minute();
        let us = took.as_micros().min(u32::MAX as u128) as u32;
        self.inner
            .lock()
            .unwrap()
            .latency
            .entry((m, kind))
            .or_default()
            .push(us);
    }

    /// A failed request of `kind`: `what` is `HTTP 502`, `JSON-RPC -32602`, `transport:
    /// connect`, ….
    pub(crate) fn fail(&self, kind: &'static str, what: String) {
        let m = self.minute();
        let in_window = self.windows.load(Ordering::SeqCst) > 0;
        *self
            .inner
            .lock()
            .unwrap()
            .errors
            .entry((m, kind, what, in_window))
            .or_default() += 1;
    }

    /// A notification received on a listen stream.
    pub(crate) fn listen_event(&self) {
        self.inner.lock().unwrap().listen_events += 1;
    }

    /// A restart window opens (failures now count as "during a restart").
    pub(crate) fn window_open(&self) {
        self.windows.fetch_add(1, Ordering::SeqCst);
    }

    /// The window closes.
    pub(crate) fn window_close(&self) {
        self.windows.fetch_sub(1, Ordering::SeqCst);
    }

    /// Records an RSS/fd sample.
    pub(crate) fn sample(&self, s: Sample) {
        self.inner.lock().unwrap().samples.push(s);
    }

    /// Records a restart.
    pub(crate) fn restart(&self, r: Restart) {
        self.inner.lock().unwrap().restarts.push(r);
    }

    /// The samples as tab-separated values.
    pub(crate) fn samples_tsv(&self) -> String {
        let inner = self.inner.lock().unwrap();
        let mut out = String::from("seconds\treplica\tinstance\tpid\trss_kib\tfds\n");
        for s in &inner.samples {
            let _ = writeln!(
                out,
                "{:.0}\t{}\t{}\t{}\t{}\t{}",
                s.at, s.replica, s.instance, s.pid, s.rss_kib, s.fds
            );
        }
        out
    }

    /// The markdown report; `header` is printed first.
    pub(crate) fn report(&self, header: &str) -> String {
        let inner = self.inner.lock().unwrap();
        let mut out = String::from(header);
        replicas_table(&mut out, &inner.samples);
        restarts_table(&mut out, &inner.restarts);
        totals_table(&mut out, &inner);
        errors_table(&mut out, &inner.errors);
        minutes_table(&mut out, &inner);
        out
    }
}

fn percentile(sorted: &[u32], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p / 100.0).round() as usize;
    f64::from(sorted[i.min(sorted.len() - 1)]) / 1000.0
}

fn mib(kib: u64) -> String {
    format!("{:.1}", kib as f64 / 1024.0)
}

fn replicas_table(out: &mut String, samples: &[Sample]) {
    out.push_str("\n## Memory and file descriptors per replica process\n\n");
    out.push_str("Sampled every 10 s (VmRSS of /proc/PID/status, entries of /proc/PID/fd). First = the first sample after the process was ready, last = the last one before the end or its restart.\n\n");
    out.push_str("| replica | process | pid | from min | to min | samples | RSS first MiB | RSS last MiB | RSS max MiB | fds first | fds last | fds max |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    let mut groups: BTreeMap<(String, u32), Vec<&Sample>> = BTreeMap::new();
    for s in samples {
        groups
            .entry((s.replica.clone(), s.instance))
            .or_default()
            .push(s);
    }
    for ((replica, instance), g) in &groups {
        let (first, last) = (g[0], g[g.len() - 1]);
        let _ = writeln!(
            out,
            "| {replica} | {instance} | {} | {:.1} | {:.1} | {} | {} | {} | {} | {} | {} | {} |",
            first.pid,
            first.at / 60.0,
            last.at / 60.0,
            g.len(),
            mib(first.rss_kib),
            mib(last.rss_kib),
            mib(g.iter().map(|s| s.rss_kib).max().unwrap_or(0)),
            first.fds,
            last.fds,
            g.iter().map(|s| s.fds).max().unwrap_or(0),
        );
    }
}

fn restarts_table(out: &mut String, restarts: &[Restart]) {
    out.push_str("\n## Restarts\n\n| at min | replica | signal | exit | signal → exit s | exit → ready s |\n|---|---|---|---|---|---|\n");
    for r in restarts {
        let _ = writeln!(
            out,
            "| {:.1} | {} | SIG{} | {} | {:.2} | {:.2} |",
            r.at / 60.0,
            r.replica,
            r.signal,
            r.exit,
            r.stop.as_secs_f64(),
            r.start.as_secs_f64()
        );
    }
}

fn totals_table(out: &mut String, inner: &Inner) {
    out.push_str("\n## Totals per request kind\n\n(`listen stream`: streams held to their end; its times are how long each was held.)\n\n| kind | ok | failed (restart windows) | failed (otherwise) | p50 ms | p99 ms | max ms |\n|---|---|---|---|---|---|---|\n");
    for kind in KINDS.into_iter().chain([STREAM]) {
        let mut all: Vec<u32> = inner
            .latency
            .iter()
            .filter(|((_, k), _)| *k == kind)
            .flat_map(|(_, v)| v.iter().copied())
            .collect();
        all.sort_unstable();
        let failed = |w: bool| -> u64 {
            inner
                .errors
                .iter()
                .filter(|((_, k, _, iw), _)| *k == kind && *iw == w)
                .map(|(_, n)| n)
                .sum()
        };
        let (p50, p99, max) = if all.is_empty() {
            ("-".into(), "-".into(), "-".into())
        } else {
            (
                format!("{:.2}", percentile(&all, 50.0)),
                format!("{:.2}", percentile(&all, 99.0)),
                format!("{:.2}", percentile(&all, 100.0)),
            )
        };
        let _ = writeln!(
            out,
            "| {kind} | {} | {} | {} | {p50} | {p99} | {max} |",
            all.len(),
            failed(true),
            failed(false)
        );
    }
    let _ = writeln!(
        out,
        "\nNotifications received on listen streams: {}.",
        inner.listen_events
    );
}

fn errors_table(out: &mut String, errors: &BTreeMap<(u64, &'static str, String, bool), u64>) {
    out.push_str("\n## Failures by kind\n\n| request kind | failure | during a restart window | otherwise |\n|---|---|---|---|\n");
    let mut by: BTreeMap<(&str, &str), (u64, u64)> = BTreeMap::new();
    for ((_, kind, what, in_window), n) in errors {
        let e = by.entry((kind, what.as_str())).or_default();
        if *in_window {
            e.0 += n;
        } else {
            e.1 += n;
        }
    }
    if by.is_empty() {
        out.push_str("| (none) | | | |\n");
    }
    for ((kind, what), (w, o)) in by {
        let _ = writeln!(out, "| {kind} | {what} | {w} | {o} |");
    }
}

fn minutes_table(out: &mut String, inner: &Inner) {
    out.push_str("\n## Per minute: requests, failures, p99 latency (ms) per kind\n\n| min | requests | failed (restart) | failed (other) |");
    for kind in KINDS {
        let _ = write!(out, " {kind} |");
    }
    out.push_str("\n|---|---|---|---|");
    for _ in KINDS {
        out.push_str("---|");
    }
    out.push('\n');
    let last = inner.latency.keys().map(|(m, _)| *m).max().unwrap_or(0);
    for m in 0..=last {
        let requests: usize = inner
            .latency
            .iter()
            .filter(|((mm, k), _)| *mm == m && *k != STREAM)
            .map(|(_, v)| v.len())
            .sum();
        let failed = |w: bool| -> u64 {
            inner
                .errors
                .iter()
                .filter(|((mm, _, _, iw), _)| *mm == m && *iw == w)
                .map(|(_, n)| n)
                .sum()
        };
        let _ = write!(
            out,
            "| {m} | {requests} | {} | {} |",
            failed(true),
            failed(false)
        );
        for kind in KINDS {
            match inner.latency.get(&(m, kind)) {
                Some(v) if !v.is_empty() => {
                    let mut v = v.clone();
                    v.sort_unstable();
                    let _ = write!(out, " {:.1} |", percentile(&v, 99.0));
                }
                _ => out.push_str(" - |"),
            }
        }
        out.push('\n');
    }
}
