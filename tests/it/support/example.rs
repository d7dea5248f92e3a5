//! An example binary (`examples/*.rs`) as a real process.
//!
//! `cargo test` builds the examples (so the binaries are there); `cargo test --test it`
//! alone does not: build them first (`cargo build --examples --all-features`).

use std::io::{BufRead as _, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

/// The example `name`'s binary, next to this test's (`target/<profile>/examples/`).
pub fn example_binary(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let profile = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target/<profile>/deps/it-…");
    let bin = profile.join("examples").join(name);
    assert!(
        bin.exists(),
        "{} is missing: `cargo test` builds it; with `cargo test --test it`, run \
         `cargo build --example {name} --all-features` first",
        bin.display()
    );
    bin
}

/// A running example, killed on drop; its stderr lines are kept and can be waited for.
pub struct ExampleProcess {
    child: Child,
    lines: Arc<Mutex<Vec<String>>>,
    seen: mpsc::Receiver<String>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl Drop for ExampleProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl ExampleProcess {
    /// Starts example `name` with `args` and `envs`.
    pub fn start(name: &str, args: &[&str], envs: &[(&str, &str)]) -> ExampleProcess {
        let mut child = Command::new(example_binary(name))
            .args(args)
            .envs(envs.iter().copied())
            .env("NO_COLOR", "1")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the example starts");
        let stderr = child.stderr.take().unwrap();
        let lines = Arc::new(Mutex::new(Vec::new()));
        let (tx, seen) = mpsc::channel();
        let sink = lines.clone();
        let tag = name.to_owned();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                eprintln!("[{tag}] {line}");
                sink.lock().unwrap().push(line.clone());
                let _ = tx.send(line);
            }
        });
        ExampleProcess {
            child,
            lines,
            seen,
            reader: Some(reader),
        }
    }

    /// Waits (bounded) for a stderr line containing `text`, and returns it.
    pub fn wait_for(&self, text: &str) -> String {
        loop {
            match self.seen.recv_timeout(Duration::from_secs(60)) {
                Ok(line) if line.contains(text) => return line,
                Ok(_) => {}
                Err(e) => panic!("no line with {text:?} from the example ({e})"),
            }
        }
    }

    /// Sends a signal with the `kill` command (`TERM`, `INT`, …).
    pub fn signal(&self, name: &str) {
        let status = Command::new("kill")
            .args([format!("-{name}"), self.child.id().to_string()])
            .status()
            .expect("the kill command runs");
        assert!(status.success(), "kill -{name} failed");
    }

    /// Waits (bounded) for the process to exit, and for its last stderr line to be read.
    pub fn wait(&mut self) -> ExitStatus {
        for _ in 0..600 {
            if let Some(status) = self.child.try_wait().unwrap() {
                if let Some(reader) = self.reader.take() {
                    let _ = reader.join();
                }
                return status;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("the example did not exit within 60 s");
    }

    /// Every stderr line so far.
    pub fn lines(&self) -> Vec<String> {
        self.lines.lock().unwrap().clone()
    }
}
