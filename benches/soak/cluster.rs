//! The soak's deployment on loopback: one `redis-server` (bus, session store and replay
//! store of every replica), replicas of the release binary on fixed ports (so a restarted
//! replica comes back where nginx expects it), and nginx with the shipped
//! `deploy/nginx/nginx.conf` in front of them.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::process::{Child, Command};

use crate::procs::{self, Replica, free_port};

/// The `requestState` and session key ring every replica shares.
const STATE_KEYS: &str = "k1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";

/// Starts replica `name` on `127.0.0.1:port` with the shared Redis at `redis` and waits
/// until it is ready. A port still held by a replica that just exited is retried for 10 s.
pub(crate) async fn start_replica(name: &str, port: u16, redis: &str) -> Replica {
    let listen = format!("127.0.0.1:{port}");
    let args = [
        "--bus",
        redis,
        "--session-store",
        redis,
        "--replay-store",
        redis,
        "--replica-id",
        name,
        "--state-keys",
        STATE_KEYS,
        "--page-size",
        "10",
        "--keepalive-secs",
        "5",
        "--drain-delay-secs",
        "2",
        "--shutdown-timeout-secs",
        "20",
    ];
    for _ in 0..100 {
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    procs::replica_at(&listen, &args).await
}

/// nginx in front of the replicas, stopped (master and workers) on drop.
pub(crate) struct Nginx {
    child: Child,
    /// Its loopback port.
    pub(crate) port: u16,
}

/// The shipped `upstream.conf` with one `server 127.0.0.1:PORT;` line per replica.
fn upstream_conf(root: &Path, ports: &[u16]) -> String {
    let shipped = std::fs::read_to_string(root.join("deploy/nginx/upstream.conf"))
        .expect("deploy/nginx/upstream.conf");
    let servers: String = ports
        .iter()
        .map(|p| format!("    server 127.0.0.1:{p};\n"))
        .collect();
    let mut out = String::new();
    let mut replaced = false;
    for line in shipped.lines() {
        if line.trim_start().starts_with("server ") {
            if !replaced {
                out.push_str(&servers);
                replaced = true;
            }
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    assert!(replaced, "upstream.conf has no `server` lines");
    out
}

fn nginx_binary() -> PathBuf {
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .chain([PathBuf::from("/usr/sbin")])
        .map(|d| d.join("nginx"))
        .find(|p| p.is_file())
        .expect("nginx is not installed (Debian: apt-get install -y nginx-light)")
}

impl Nginx {
    /// Writes a prefix directory under `dir` (the shipped nginx.conf unchanged, a generated
    /// upstream.conf and listen.conf), starts nginx on a free port and waits until it
    /// accepts connections.
    pub(crate) async fn start(root: &Path, dir: &Path, ports: &[u16]) -> Nginx {
        let _ = std::fs::remove_dir_all(dir);
        let conf = dir.join("conf");
        std::fs::create_dir_all(&conf).expect("nginx prefix directory");
        std::fs::copy(
            root.join("deploy/nginx/nginx.conf"),
            conf.join("nginx.conf"),
        )
        .expect("copy nginx.conf");
        std::fs::write(conf.join("upstream.conf"), upstream_conf(root, ports)).unwrap();
        let port = free_port();
        std::fs::write(
            conf.join("listen.conf"),
            format!("listen 127.0.0.1:{port};\n"),
        )
        .unwrap();
        let log = std::fs::File::create(dir.join("nginx.stderr")).unwrap();
        let child = Command::new(nginx_binary())
            .arg("-p")
            .arg(dir)
            .arg("-c")
            .arg(conf.join("nginx.conf"))
            .args(["-g", "daemon off;"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("nginx starts");
        for _ in 0..200 {
            if tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .is_ok()
            {
                return Nginx { child, port };
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!(
            "nginx did not start; see {}",
            dir.join("nginx.stderr").display()
        );
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        // A SIGKILLed master leaves its workers behind; SIGTERM stops them all.
        if let Some(pid) = self.child.id() {
            let _ = std::process::Command::new("kill")
                .args(["-TERM", &pid.to_string()])
                .status();
            for _ in 0..50 {
                if matches!(self.child.try_wait(), Ok(Some(_))) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            let _ = self.child.start_kill();
        }
    }
}
