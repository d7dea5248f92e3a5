//! Several replicas of the real binary behind a real nginx, sharing a real `redis-server`
//! as their notification bus: the deployment of `deploy/compose.yaml`, on loopback ports.
//!
//! nginx runs unprivileged with the shipped `deploy/nginx/nginx.conf`, copied unchanged into
//! a private prefix directory beside a generated `upstream.conf` (the replicas' ports) and
//! `listen.conf` (nginx's own port); redis-server comes from [`super::brokers`]. Every
//! process is stopped when the [`Cluster`] is dropped, also when a test panics. A missing
//! `redis-server` or `nginx` fails the test with an install hint (`scripts/provision.sh`
//! installs both).

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::brokers::{RedisServer, free_port, program};
use super::process::{ServerProcess, root, spawn_server_with};

/// The `requestState` key ring every replica shares (any replica opens any state).
pub const STATE_KEYS: &str = "k1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";

/// A private directory under the system temp dir, removed on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    /// A new, empty directory named after `what`, this process and a counter.
    pub fn new(what: &str) -> TempDir {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos();
        let dir = std::env::temp_dir().join(format!(
            "stateless-mcp-{what}-{}-{n}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        // nginx workers may run as another user when the tests run as root.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let _ = std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755));
        }
        TempDir(dir)
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A child process with its output collected, killed on drop.
struct Proc {
    child: Child,
    what: &'static str,
    output: Arc<Mutex<Vec<String>>>,
}

impl Proc {
    /// Starts `cmd`, collecting its stdout and stderr lines.
    fn spawn(what: &'static str, cmd: &mut Command) -> Proc {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{what} starts ({cmd:?}): {e}"));
        let output = Arc::new(Mutex::new(Vec::new()));
        let streams: [Box<dyn Read + Send>; 2] = [
            Box::new(child.stdout.take().unwrap()),
            Box::new(child.stderr.take().unwrap()),
        ];
        for stream in streams {
            let sink = output.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stream).lines().map_while(Result::ok) {
                    sink.lock().unwrap().push(line);
                }
            });
        }
        Proc {
            child,
            what,
            output,
        }
    }

    fn exited(&mut self) -> bool {
        self.child.try_wait().ok().flatten().is_some()
    }

    fn output(&self) -> String {
        self.output.lock().unwrap().join("\n")
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if self.exited() {
            return;
        }
        // nginx's workers outlive a SIGKILLed master; SIGTERM stops them all at once.
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        for _ in 0..50 {
            if self.exited() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        eprintln!("{} did not stop on SIGTERM; killing it", self.what);
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The shipped `deploy/nginx/upstream.conf` with loopback `upstreams` instead of the
/// compose service names.
pub fn upstream_conf(upstreams: &[u16]) -> String {
    let servers: String = upstreams
        .iter()
        .map(|p| format!("    server 127.0.0.1:{p};\n"))
        .collect();
    let upstream = std::fs::read_to_string(root().join("deploy/nginx/upstream.conf"))
        .expect("deploy/nginx/upstream.conf");
    let mut body = String::new();
    let mut replaced = false;
    for line in upstream.lines() {
        if line.trim_start().starts_with("server ") {
            if !replaced {
                body.push_str(&servers);
                replaced = true;
            }
        } else {
            body.push_str(line);
            body.push('\n');
        }
    }
    assert!(replaced, "upstream.conf has no `server` lines");
    body
}

/// nginx with the shipped configuration, in front of `upstreams`.
pub struct Nginx {
    proc: Proc,
    /// Its port.
    pub port: u16,
    /// `http://localhost:PORT/mcp`.
    pub url: String,
    _dir: TempDir,
}

impl Nginx {
    /// Starts nginx on a free loopback port with `deploy/nginx/nginx.conf` (copied
    /// unchanged) and an `upstream.conf` listing `upstreams` (loopback ports); waits until
    /// it accepts connections.
    pub fn start(upstreams: &[u16]) -> Nginx {
        let bin = program("nginx", "nginx");
        let shipped = root().join("deploy/nginx/nginx.conf");
        let mut last = String::new();
        for _ in 0..5 {
            let dir = TempDir::new("nginx");
            let conf = dir.path().join("conf");
            std::fs::create_dir_all(&conf).unwrap();
            std::fs::copy(&shipped, conf.join("nginx.conf")).expect("copy nginx.conf");
            std::fs::write(conf.join("upstream.conf"), upstream_conf(upstreams)).unwrap();
            let port = free_port();
            std::fs::write(
                conf.join("listen.conf"),
                format!("listen 127.0.0.1:{port};\n"),
            )
            .unwrap();
            let mut proc = Proc::spawn(
                "nginx",
                Command::new(&bin)
                    .arg("-p")
                    .arg(dir.path())
                    .arg("-c")
                    .arg(conf.join("nginx.conf"))
                    .args(["-g", "daemon off;"]),
            );
            for _ in 0..200 {
                if proc.exited() {
                    break;
                }
                if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                    return Nginx {
                        proc,
                        port,
                        url: format!("http://localhost:{port}/mcp"),
                        _dir: dir,
                    };
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = proc.child.kill();
            let _ = proc.child.wait();
            last = proc.output();
            if !last.contains("Address already in use") {
                break;
            }
        }
        panic!("nginx did not start:\n{last}");
    }

    /// Everything it printed (errors and warnings; access logging is off).
    pub fn output(&self) -> String {
        self.proc.output()
    }
}

/// How the replicas of a [`Cluster`] run.
#[derive(Clone, Debug)]
pub struct ClusterOptions {
    /// How many replicas.
    pub replicas: usize,
    /// `--page-size`.
    pub page_size: u64,
    /// `--drain-delay-secs`.
    pub drain_delay_secs: u64,
    /// More flags for every replica (`{redis}` stands for the Redis URL).
    pub extra_args: Vec<String>,
    /// Environment variables of every replica (`{replica}` stands for its id, `r1`…).
    pub envs: Vec<(String, String)>,
}

impl Default for ClusterOptions {
    fn default() -> Self {
        ClusterOptions {
            replicas: 3,
            page_size: 2,
            drain_delay_secs: 1,
            extra_args: Vec::new(),
            envs: Vec::new(),
        }
    }
}

/// redis-server, N replicas (`r1`, `r2`, …) with `--bus redis://…` and the conformance
/// fixtures, and nginx in front of them. Dropped in reverse order of start.
pub struct Cluster {
    /// nginx.
    pub nginx: Nginx,
    /// The replicas, `replicas[i]` answering with `x-mcp-replica: r{i+1}`.
    pub replicas: Vec<ServerProcess>,
    /// The bus.
    pub redis: RedisServer,
}

impl Cluster {
    /// Starts everything and waits until every replica is ready (bus connected).
    pub async fn start(options: ClusterOptions) -> Cluster {
        let redis = tokio::task::spawn_blocking(RedisServer::start)
            .await
            .unwrap();
        let bus = redis.url();
        let page = options.page_size.to_string();
        let drain = options.drain_delay_secs.to_string();
        let extra: Vec<String> = options
            .extra_args
            .iter()
            .map(|a| a.replace("{redis}", &bus))
            .collect();
        let replicas: Vec<ServerProcess> = (1..=options.replicas)
            .map(|i| {
                let id = format!("r{i}");
                let mut args: Vec<&str> = vec![
                    "--log",
                    "warn,stateless_mcp::app=info,stateless_mcp::runner=info",
                    "--fixtures",
                    "conformance",
                    "--bus",
                    &bus,
                    "--replica-id",
                    &id,
                    "--state-keys",
                    STATE_KEYS,
                    "--page-size",
                    &page,
                    "--drain-delay-secs",
                    &drain,
                    "--shutdown-timeout-secs",
                    "30",
                ];
                args.extend(extra.iter().map(String::as_str));
                let envs: Vec<(String, String)> = options
                    .envs
                    .iter()
                    .map(|(k, v)| (k.clone(), v.replace("{replica}", &id)))
                    .collect();
                let envs: Vec<(&str, &str)> =
                    envs.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
                spawn_server_with(&args, &envs)
            })
            .collect();
        for r in &replicas {
            wait_ready(r).await;
        }
        let ports: Vec<u16> = replicas.iter().map(|r| r.port).collect();
        let nginx = tokio::task::spawn_blocking(move || Nginx::start(&ports))
            .await
            .unwrap();
        Cluster {
            nginx,
            replicas,
            redis,
        }
    }

    /// The replica named `id` (`r1`, …).
    pub fn replica(&self, id: &str) -> &ServerProcess {
        &self.replicas[index(id)]
    }

    /// The replica named `id`, mutably (to wait for its exit).
    pub fn replica_mut(&mut self, id: &str) -> &mut ServerProcess {
        &mut self.replicas[index(id)]
    }

    /// The replica names.
    pub fn ids(&self) -> Vec<String> {
        (1..=self.replicas.len()).map(|i| format!("r{i}")).collect()
    }
}

fn index(id: &str) -> usize {
    id.strip_prefix('r')
        .and_then(|n| n.parse::<usize>().ok())
        .and_then(|n| n.checked_sub(1))
        .unwrap_or_else(|| panic!("no replica {id}"))
}

/// The replica that answered (the `x-mcp-replica` response header).
pub fn replica_of(headers: &reqwest::header::HeaderMap) -> String {
    headers
        .get("x-mcp-replica")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_else(|| panic!("no x-mcp-replica header in {headers:?}"))
        .to_owned()
}

/// Polls `/readyz` until 200 (the bus is connected), for at most 30 s.
pub async fn wait_ready(r: &ServerProcess) {
    for _ in 0..300 {
        if let Ok(resp) = super::get(format!("{}/readyz", r.base)).await
            && resp.status() == 200
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!(
        "replica on port {} never became ready:\n{}",
        r.port,
        r.stderr_lines().join("\n")
    );
}

/// The value of a gauge or counter without labels in a replica's `/metrics`.
pub async fn metric(r: &ServerProcess, name: &str) -> f64 {
    let text = super::get(format!("{}/metrics", r.base))
        .await
        .expect("/metrics answers")
        .text()
        .await
        .unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or(0.0)
}

/// Runs the resume client `client` (given the load balancer's URL; whether another replica
/// answered its resume) three times against three replicas behind nginx (round robin, the
/// event store in the bus's Redis): at least one resume lands on another replica.
pub async fn resumes_across_three_replicas(client: fn(&str) -> bool) {
    let cluster = Cluster::start(ClusterOptions::default()).await;
    let mut crossed = 0;
    for _ in 0..3 {
        let url = cluster.nginx.url.clone();
        if tokio::task::spawn_blocking(move || client(&url))
            .await
            .unwrap()
        {
            crossed += 1;
        }
    }
    assert!(
        crossed > 0,
        "no resumption landed on another replica than its call"
    );
}
