//! Soak: N minutes of mixed MCP traffic against three replicas of the release binary that
//! share one real `redis-server`, behind a real nginx, with one replica restarted every few
//! minutes; reports RSS and open fds per replica over time, failures by kind (those during
//! a restart counted apart) and p99 latency per minute and request kind. Not a CI test.
//!
//! ```text
//! bash benches/soak/run.sh [--minutes 30] [--rate 100] [--workers 8] [--listeners 6] [--restart-every 180]
//! ```
//! (`run.sh` builds `target/release/stateless-mcp` and runs
//! `cargo bench --bench soak -- …`; see benches/soak/README.md.) Writes
//! `target/soak/report.md` and `target/soak/samples.tsv`. Loopback only; needs
//! `redis-server` and `nginx` on `PATH` (or nginx in /usr/sbin).

#[path = "../support/procs.rs"]
mod procs;

mod cluster;
mod record;
mod traffic;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rand::{Rng as _, SeedableRng as _, rngs::StdRng};
use tokio::sync::watch;

use cluster::{Nginx, start_replica};
use procs::{Replica, arg, free_port, open_fds, rss_kib};
use record::{Recorder, Restart, Sample};
use traffic::Traffic;

/// The replicas; `r1` is never restarted (its RSS and fds span the whole run), `r2` and
/// `r3` take turns.
const NAMES: [&str; 3] = ["r1", "r2", "r3"];
/// The restart (counted from 1) that uses SIGKILL instead of SIGTERM.
const KILL_AT: u32 = 3;

/// pid and process number of each replica while it runs (None while it restarts).
type Live = Arc<Mutex<Vec<Option<(u32, u32)>>>>;

struct Settings {
    seconds: u64,
    rate: f64,
    workers: usize,
    listeners: usize,
    restart_every: u64,
}

fn shell(cmd: &str, args: &[&str]) -> String {
    std::process::Command::new(cmd)
        .args(args)
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default()
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

fn sample_all(rec: &Recorder, live: &Live) {
    let at = rec.elapsed().as_secs_f64();
    let live = live.lock().unwrap().clone();
    for (i, slot) in live.iter().enumerate() {
        if let Some((pid, instance)) = *slot {
            let (rss_kib, fds) = (rss_kib(pid), open_fds(pid));
            if rss_kib > 0 {
                rec.sample(Sample {
                    at,
                    replica: NAMES[i].to_owned(),
                    instance,
                    pid,
                    rss_kib,
                    fds,
                });
            }
        }
    }
}

/// Restarts `r2`/`r3` in turn every `every` seconds until `stop`; returns the replicas.
async fn restarter(
    mut replicas: Vec<Replica>,
    ports: Vec<u16>,
    redis: String,
    every: u64,
    rec: Arc<Recorder>,
    live: Live,
    mut stop: watch::Receiver<bool>,
) -> Vec<Replica> {
    let mut instances = vec![1u32; replicas.len()];
    let mut n = 0u32;
    loop {
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_secs(every)) => {}
            _ = stop.changed() => return replicas,
        }
        n += 1;
        let i = 1 + (n as usize - 1) % 2;
        let signal = if n == KILL_AT { "KILL" } else { "TERM" };
        rec.window_open();
        let at = rec.elapsed().as_secs_f64();
        live.lock().unwrap()[i] = None;
        let t0 = Instant::now();
        replicas[i].signal(signal);
        let exit = match tokio::time::timeout(Duration::from_secs(40), replicas[i].wait()).await {
            Ok(status) => status.to_string(),
            Err(_) => {
                replicas[i].signal("KILL");
                format!("killed after 40 s: {}", replicas[i].wait().await)
            }
        };
        let stopped = t0.elapsed();
        let t1 = Instant::now();
        replicas[i] = start_replica(NAMES[i], ports[i], &redis).await;
        let started = t1.elapsed();
        instances[i] += 1;
        live.lock().unwrap()[i] = Some((replicas[i].pid(), instances[i]));
        eprintln!(
            "soak: {:.1} min: {} SIG{signal} → exit ({exit}) in {stopped:.2?}, ready again in {started:.2?}",
            at / 60.0,
            NAMES[i]
        );
        rec.restart(Restart {
            at,
            replica: NAMES[i].to_owned(),
            signal,
            exit,
            stop: stopped,
            start: started,
        });
        // nginx marks a replica it could not reach as failed for a few seconds.
        tokio::time::sleep(Duration::from_secs(3)).await;
        rec.window_close();
    }
}

#[tokio::main]
async fn main() {
    let minutes: u64 = arg("--minutes", 30);
    let s = Settings {
        seconds: arg("--seconds", minutes * 60),
        rate: arg("--rate", 100.0),
        workers: arg("--workers", 8),
        listeners: arg("--listeners", 6),
        restart_every: arg("--restart-every", 180),
    };
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let out = root.join(arg("--out", "target/soak".to_owned()));
    std::fs::create_dir_all(&out).expect("output directory");
    let started_utc = shell("date", &["-u", "+%Y-%m-%d %H:%M:%S UTC"]);
    let load_start = loadavg();

    let redis = procs::redis().await;
    let ports: Vec<u16> = NAMES.iter().map(|_| free_port()).collect();
    let mut replicas = Vec::new();
    for (name, port) in NAMES.iter().zip(&ports) {
        replicas.push(start_replica(name, *port, &redis.url).await);
    }
    let nginx = Nginx::start(&root, &out.join("nginx"), &ports).await;
    let url = format!("http://localhost:{}/mcp", nginx.port);
    eprintln!(
        "soak: redis {}, replicas on {ports:?}, nginx {url}; {} s of traffic",
        redis.url, s.seconds
    );

    let rec = Arc::new(Recorder::new());
    let live: Live = Arc::new(Mutex::new(
        replicas.iter().map(|r| Some((r.pid(), 1))).collect(),
    ));
    sample_all(&rec, &live);
    let traffic = Arc::new(Traffic::new(url, rec.clone()));
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut tasks = Vec::new();
    let interval = Duration::from_secs_f64(s.workers as f64 / s.rate);
    for w in 0..s.workers {
        let (t, mut stop) = (traffic.clone(), stop_rx.clone());
        tasks.push(tokio::spawn(async move {
            let mut rng = StdRng::seed_from_u64(w as u64);
            let mut next = tokio::time::Instant::now();
            while !*stop.borrow() {
                match rng.gen_range(0..100) {
                    0..50 => t.call().await,
                    50..65 => t.list().await,
                    65..88 => t.mrtr().await,
                    _ => t.legacy().await,
                }
                next += interval;
                let now = tokio::time::Instant::now();
                if next < now {
                    next = now;
                }
                tokio::select! {
                    _ = tokio::time::sleep_until(next) => {}
                    _ = stop.changed() => {}
                }
            }
        }));
    }
    for l in 0..s.listeners {
        let (t, mut stop) = (traffic.clone(), stop_rx.clone());
        tasks.push(tokio::spawn(async move {
            let mut rng = StdRng::seed_from_u64(1000 + l as u64);
            while !*stop.borrow() {
                let hold = Duration::from_millis(rng.gen_range(5_000..20_000));
                t.listen(hold, &mut stop).await;
            }
        }));
    }
    {
        let (t, mut stop) = (traffic.clone(), stop_rx.clone());
        tasks.push(tokio::spawn(async move {
            while !*stop.borrow() {
                t.trigger().await;
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_secs(2)) => {}
                    _ = stop.changed() => {}
                }
            }
        }));
    }
    {
        let (rec, live, mut stop) = (rec.clone(), live.clone(), stop_rx.clone());
        tasks.push(tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_secs(10)) => sample_all(&rec, &live),
                    _ = stop.changed() => return,
                }
            }
        }));
    }
    let restarts = tokio::spawn(restarter(
        replicas,
        ports.clone(),
        redis.url.clone(),
        s.restart_every,
        rec.clone(),
        live.clone(),
        stop_rx.clone(),
    ));

    tokio::time::sleep(Duration::from_secs(s.seconds)).await;
    sample_all(&rec, &live);
    stop_tx.send(true).unwrap();
    for t in tasks {
        t.await.unwrap();
    }
    let mut replicas = restarts.await.unwrap();
    let load_end = loadavg();

    let header = format!(
        "# Soak run\n\n\
         Started {started_utc}, {:.1} min of traffic; commit {}; {} CPUs; load average {load_start} at the start, {load_end} at the end (the machine is shared: the load includes other processes).\n\n\
         Three replicas of `target/release/stateless-mcp --fixtures conformance` (bus, session store and replay store on one `redis-server`; `--page-size 10 --keepalive-secs 5 --drain-delay-secs 2`) behind nginx with `deploy/nginx/nginx.conf`, all on loopback. \
         Traffic through nginx: {} workers at {} operations/s in all (50 % `tools/call`, 15 % a full paged `tools/list`, 23 % a two-round MRTR call, 12 % a 2025-11-25 session: initialize, call, DELETE), \
         {} listen streams held 5–20 s each and reopened, a `tools/list_changed` trigger every 2 s. Every {} s `r2` or `r3` (in turn) is stopped (SIGTERM; restart {KILL_AT} SIGKILL) and started again on its port; \
         a failure between the signal and 3 s after the replica is ready again counts as during a restart window. `r1` is never restarted.\n",
        s.seconds as f64 / 60.0,
        shell(
            "git",
            &[
                "-C",
                env!("CARGO_MANIFEST_DIR"),
                "rev-parse",
                "--short",
                "HEAD"
            ]
        ),
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        s.workers,
        s.rate,
        s.listeners,
        s.restart_every,
    );
    let report = rec.report(&header);
    std::fs::write(out.join("report.md"), &report).expect("write report.md");
    std::fs::write(out.join("samples.tsv"), rec.samples_tsv()).expect("write samples.tsv");
    println!("{report}");
    eprintln!("soak: wrote {}", out.join("report.md").display());

    for r in &replicas {
        r.signal("TERM");
    }
    for r in &mut replicas {
        let _ = tokio::time::timeout(Duration::from_secs(30), r.wait()).await;
    }
    drop(nginx);
}
