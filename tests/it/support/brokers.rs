//! Real message brokers for the bus tests: `redis-server` and `nats-server` processes on
//! ephemeral loopback ports, killed on drop. A missing binary fails the test with an install
//! hint.

use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A loopback port that was free a moment ago.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("an ephemeral port")
        .port()
}

/// A fresh private directory under the system temp dir.
pub fn temp_dir(what: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "stateless-mcp-{what}-{}-{}",
        std::process::id(),
        free_port()
    ));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    dir
}

/// Finds an external program on `PATH` (and in `/usr/sbin`, `/sbin`, where Debian puts
/// nginx), or fails with how to install it.
pub fn program(name: &str, package: &str) -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let dirs = std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/local/sbin"].map(PathBuf::from));
    for dir in dirs {
        let p = dir.join(name);
        if p.is_file() {
            return p;
        }
    }
    panic!(
        "`{name}` is not installed; the bus and multi-replica tests need it. Install it with \
         `apt-get install -y {package}` (scripts/provision.sh does this)"
    );
}

fn spawn(name: &str, package: &str, args: &[String]) -> Child {
    Command::new(program(name, package))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start `{name}` ({e})"))
}

/// Waits until something accepts connections on `port`.
fn wait_listening(port: u16, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(15);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "{what} did not listen on 127.0.0.1:{port} within 15 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn stop(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// A `redis-server` keeping nothing on disk.
pub struct RedisServer {
    child: Child,
    /// Its port on 127.0.0.1.
    pub port: u16,
    dir: PathBuf,
}

impl RedisServer {
    /// Starts one on a free port.
    pub fn start() -> Self {
        Self::start_on(free_port())
    }

    fn start_on(port: u16) -> Self {
        let dir = temp_dir("redis");
        let args: Vec<String> = [
            "--port",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            dir.to_str().unwrap(),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let child = spawn("redis-server", "redis-server", &args);
        wait_listening(port, "redis-server");
        RedisServer { child, port, dir }
    }

    /// `redis://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// Kills the server (SIGKILL), as a crash would.
    pub fn kill(&mut self) {
        stop(&mut self.child);
    }

    /// Starts it again on the same port.
    pub fn restart(&mut self) {
        stop(&mut self.child);
        *self = Self::start_on(self.port);
    }

    /// Freezes the server (SIGSTOP), as a hung host would: connections are still accepted
    /// by the kernel, nothing is answered.
    pub fn pause(&self) {
        self.signal("STOP");
    }

    /// Lets a paused server run again (SIGCONT).
    pub fn resume(&self) {
        self.signal("CONT");
    }

    fn signal(&self, name: &str) {
        let status = Command::new("kill")
            .arg(format!("-{name}"))
            .arg(self.child.id().to_string())
            .status()
            .expect("`kill` runs");
        assert!(status.success(), "kill -{name} failed");
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        stop(&mut self.child);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A `nats-server` with its monitoring port on (for counting connections).
pub struct NatsServer {
    child: Child,
    /// Its client port on 127.0.0.1.
    pub port: u16,
    /// Its HTTP monitoring port (`/connz`).
    pub monitor_port: u16,
}

impl NatsServer {
    /// Starts one on free ports.
    pub fn start() -> Self {
        Self::start_on(free_port(), free_port())
    }

    fn start_on(port: u16, monitor_port: u16) -> Self {
        let args: Vec<String> = [
            "-a",
            "127.0.0.1",
            "-p",
            &port.to_string(),
            "-m",
            &monitor_port.to_string(),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let child = spawn("nats-server", "nats-server", &args);
        wait_listening(port, "nats-server");
        wait_listening(monitor_port, "nats-server monitoring");
        NatsServer {
            child,
            port,
            monitor_port,
        }
    }

    /// `nats://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// Kills the server (SIGKILL).
    pub fn kill(&mut self) {
        stop(&mut self.child);
    }

    /// Starts it again on the same ports.
    pub fn restart(&mut self) {
        stop(&mut self.child);
        *self = Self::start_on(self.port, self.monitor_port);
    }
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        stop(&mut self.child);
    }
}
