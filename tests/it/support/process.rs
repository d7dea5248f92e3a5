//! The reference-server binary as a real process, and the external test tools.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// A running `stateless-mcp` process, killed on drop.
pub struct ServerProcess {
    child: Child,
    pub port: u16,
    /// `http://localhost:PORT/mcp`.
    pub url: String,
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts the binary on an ephemeral loopback port with `args`, and waits until it serves.
pub fn spawn_server(args: &[&str]) -> ServerProcess {
    let mut child = Command::new(env!("CARGO_BIN_EXE_stateless-mcp"))
        .args(["--listen", "127.0.0.1:0", "--log", "info"])
        .args(args)
        .env("NO_COLOR", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the stateless-mcp binary starts");
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(rest) = line.split("address=").nth(1) {
                let addr = rest.split_whitespace().next().unwrap_or("").to_owned();
                let _ = tx.send(addr);
            }
            eprintln!("[server] {line}");
        }
    });
    let addr = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("the server logs the address it listens on");
    let port: u16 = addr.rsplit(':').next().unwrap().parse().expect("a port");
    ServerProcess {
        child,
        port,
        url: format!("http://localhost:{port}/mcp"),
    }
}

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A test tool from the environment or from where `scripts/test.sh` installs it; fails with
/// an install hint when it is missing.
pub fn tool(env: &str, default: &str, what: &str) -> PathBuf {
    let path = std::env::var(env)
        .map(PathBuf::from)
        .unwrap_or_else(|_| root().join(default));
    assert!(
        path.exists(),
        "{what} not found at {} (set {env}); run scripts/test.sh, which installs it",
        path.display()
    );
    path
}

/// Runs `cmd` to completion: whether it succeeded, and its stdout and stderr (also printed,
/// so a failing test shows them).
pub fn run_program(cmd: &mut Command) -> (bool, String) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?} runs: {e}"));
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    println!("{text}");
    (out.status.success(), text)
}

/// Runs an interop client that prints `N passed, M failed`, and asserts every step passed.
pub fn run_interop_client(cmd: &mut Command, what: &str) {
    let (ok, text) = run_program(cmd);
    assert!(ok, "{what} failed:\n{text}");
    assert!(text.contains(" 0 failed"), "{what}:\n{text}");
}
