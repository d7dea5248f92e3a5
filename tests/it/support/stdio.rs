//! A client of the stdio transport: the reference binary started with `--transport stdio`
//! (or an in-process session over in-memory pipes), one JSON-RPC message per line each way.
//! Every line the server writes must be a JSON-RPC message, and each one is checked against
//! the official schema.

use std::collections::HashMap;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncRead, AsyncWrite, AsyncWriteExt as _, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::mpsc;

use super::{schema, with_meta};

/// How long any one expected message may take.
const WAIT: Duration = Duration::from_secs(20);

/// One end of a stdio session.
pub struct StdioClient {
    input: Option<Box<dyn AsyncWrite + Unpin + Send>>,
    /// Lines the server wrote; closed at the end of its output.
    lines: mpsc::UnboundedReceiver<String>,
    /// The method of each request sent, by its id's JSON text.
    methods: HashMap<String, String>,
    child: Option<Child>,
    stderr: Arc<Mutex<Vec<String>>>,
    /// Check messages against the 2025-11-25 schema instead.
    legacy: bool,
}

impl StdioClient {
    /// Starts the binary with `--transport stdio` and `args`.
    pub fn spawn(args: &[&str]) -> Self {
        Self::spawn_with(args, &[])
    }

    /// Like [`StdioClient::spawn`], with extra environment variables.
    pub fn spawn_with(args: &[&str], envs: &[(&str, &str)]) -> Self {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_stateless-mcp"));
        cmd.args(["--transport", "stdio"]);
        if !args.contains(&"--log") {
            cmd.args(["--log", "info"]);
        }
        let mut child = cmd
            .args(args)
            .env("NO_COLOR", "1")
            .envs(envs.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("the stateless-mcp binary starts");
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let sink = stderr.clone();
        let err = child.stderr.take().unwrap();
        tokio::spawn(async move {
            let mut lines = BufReader::new(err).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                eprintln!("[server] {line}");
                sink.lock().unwrap().push(line);
            }
        });
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut client = Self::over(stdout, stdin);
        client.child = Some(child);
        client.stderr = stderr;
        client
    }

    /// A client writing to `input` and reading the server's lines from `output`.
    pub fn over(
        output: impl AsyncRead + Unpin + Send + 'static,
        input: impl AsyncWrite + Unpin + Send + 'static,
    ) -> Self {
        let (tx, lines) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut reader = BufReader::new(output).lines();
            while let Ok(Some(line)) = reader.next_line().await {
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        StdioClient {
            input: Some(Box::new(input)),
            lines,
            methods: HashMap::new(),
            child: None,
            stderr: Arc::default(),
            legacy: false,
        }
    }

    /// Checks what the server writes against the 2025-11-25 schema (a legacy client).
    pub fn legacy(mut self) -> Self {
        self.legacy = true;
        self
    }

    /// Writes `bytes` as they are (no newline added).
    pub async fn send_raw(&mut self, bytes: &[u8]) {
        let input = self.input.as_mut().expect("stdin is open");
        input.write_all(bytes).await.expect("write to the server");
        input.flush().await.expect("flush to the server");
    }

    /// Writes one message as a line; a request's method is remembered for checking its
    /// response.
    pub async fn send(&mut self, message: &Value) {
        if let (Some(id), Some(method)) = (message.get("id"), message["method"].as_str()) {
            self.methods.insert(id.to_string(), method.to_owned());
        }
        let mut line = serde_json::to_vec(message).unwrap();
        line.push(b'\n');
        self.send_raw(&line).await;
    }

    /// Sends a request with the standard `_meta` merged into `params`.
    pub async fn request(&mut self, id: Value, method: &str, params: Value) {
        self.send(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": with_meta(params)}),
        )
        .await;
    }

    /// Sends `notifications/cancelled` for `id`.
    pub async fn cancel(&mut self, id: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id}}))
            .await;
    }

    /// The next message (checked against the schema), or `None` at the end of the output.
    pub async fn try_next(&mut self) -> Option<Value> {
        let line = tokio::time::timeout(WAIT, self.lines.recv())
            .await
            .unwrap_or_else(|_| panic!("no message from the server within {WAIT:?}"))?;
        let message: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("the server wrote a line that is not JSON ({e}): {line}"));
        assert_eq!(message["jsonrpc"], "2.0", "not JSON-RPC: {line}");
        let method = message
            .get("id")
            .and_then(|id| self.methods.get(&id.to_string()))
            .cloned();
        if self.legacy {
            schema::check_legacy_message(&message, method.as_deref());
        } else {
            schema::check_message(&message, method.as_deref());
        }
        Some(message)
    }

    /// The next message.
    pub async fn next(&mut self) -> Value {
        self.try_next()
            .await
            .expect("the server's output ended early")
    }

    /// Messages up to the response to `id`: the ones before it, and the response.
    pub async fn until_response(&mut self, id: &Value) -> (Vec<Value>, Value) {
        let mut before = Vec::new();
        loop {
            let m = self.next().await;
            if m.get("id") == Some(id) && m.get("method").is_none() {
                return (before, m);
            }
            before.push(m);
        }
    }

    /// Asserts nothing more comes: the output ends (after any messages `rest` accepts).
    pub async fn expect_end(&mut self) -> Vec<Value> {
        let mut rest = Vec::new();
        while let Some(m) = self.try_next().await {
            rest.push(m);
        }
        rest
    }

    /// Closes the server's stdin.
    pub async fn close_stdin(&mut self) {
        if let Some(mut input) = self.input.take() {
            let _ = input.shutdown().await;
        }
    }

    /// Stops reading the server's output and closes it (the read end of its stdout).
    pub fn close_stdout(&mut self) {
        self.lines.close();
        while self.lines.try_recv().is_ok() {}
    }

    /// The process, when the session runs in one.
    pub fn child(&mut self) -> &mut Child {
        self.child.as_mut().expect("a spawned server")
    }

    /// Sends a signal (`TERM`, `INT`, …) to the process.
    pub fn signal(&mut self, name: &str) {
        let pid = self.child().id().expect("the server runs").to_string();
        let status = std::process::Command::new("kill")
            .args([format!("-{name}"), pid])
            .status()
            .expect("the kill command runs");
        assert!(status.success(), "kill -{name} failed");
    }

    /// Waits (bounded) for the process to exit.
    pub async fn exit_status(&mut self) -> ExitStatus {
        tokio::time::timeout(Duration::from_secs(60), self.child().wait())
            .await
            .expect("the server exits within 60 s")
            .expect("wait for the server")
    }

    /// Every stderr line so far.
    pub fn stderr_lines(&self) -> Vec<String> {
        self.stderr.lock().unwrap().clone()
    }

    /// The `request finished` log line (`--log-format json`, debug) of the request `id`.
    pub fn request_finished(&self, id: &str) -> Value {
        let lines = self.stderr_lines();
        lines
            .iter()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|v| {
                v["fields"]["message"] == "request finished"
                    && v["span"]["jsonrpc.request.id"] == id
            })
            .unwrap_or_else(|| panic!("no `request finished` line for {id}: {lines:#?}"))
    }
}
