//! One exchange with the server, in process: the request built as a 2026-07-28 client
//! builds it (body with `_meta`, mirrored header values, the principal in the
//! extensions), handed to [`Server::handle`](crate::Server::handle), and the outcome
//! driven to its [`Response`] (with the notifications the handler sent before it).

use bytes::Bytes;
use http::Extensions;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use super::client::{TestClient, with_meta};
use super::error::{RpcError, TestError, unexpected};
use crate::extend::{Mirrored, MirroredHeaders, Outcome, Reply, Running};
use crate::handler::header_rules::{HeaderParam, ParamKind};
use crate::protocol::methods::name_field;

/// The answer to one request: the JSON-RPC response and what came before it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Response {
    /// The id the request was sent with (the response echoes it).
    pub request_id: i64,
    /// The JSON-RPC response (`result` or `error`).
    pub message: Value,
    /// The notifications the handler sent before it (progress, log messages): only for a
    /// request whose `_meta` asked for them (`progressToken`, `logLevel`).
    pub notifications: Vec<Value>,
    /// The HTTP status the Streamable HTTP transport sends this response with.
    pub http_status: u16,
}

impl Response {
    /// The `result`, or the JSON-RPC error as [`TestError::Rpc`].
    pub fn result(&self) -> Result<&Value, TestError> {
        if let Some(e) = self.error() {
            return Err(TestError::Rpc(e));
        }
        self.message
            .get("result")
            .ok_or_else(|| unexpected(format!("neither result nor error: {}", self.message)))
    }

    /// The JSON-RPC error, when the response is one.
    pub fn error(&self) -> Option<RpcError> {
        let e = self.message.get("error")?;
        Some(RpcError {
            code: e
                .get("code")
                .and_then(Value::as_i64)
                .and_then(|c| i32::try_from(c).ok())
                .unwrap_or_default(),
            message: e
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            data: e.get("data").cloned(),
            http_status: self.http_status,
        })
    }

    /// The `result` decoded as `T`.
    pub fn decode<T: DeserializeOwned>(&self) -> Result<T, TestError> {
        let result = self.result()?;
        T::deserialize(result).map_err(|e| {
            unexpected(format!(
                "the result does not decode as {}: {e}: {result}",
                std::any::type_name::<T>()
            ))
        })
    }
}

impl TestClient {
    /// Sends `method` with `params` (an object or `null`; the standard `_meta` is merged
    /// in, keys already in `params._meta` win) and returns the raw response, error or not.
    pub async fn request(&self, method: &str, params: Value) -> Result<Response, TestError> {
        self.finish(method, self.dispatch(method, params)).await
    }

    /// Sends `method` and decodes its result as `T` (a JSON-RPC error is
    /// [`TestError::Rpc`]).
    pub async fn request_as<T: DeserializeOwned>(
        &self,
        method: &str,
        params: Value,
    ) -> Result<T, TestError> {
        self.request(method, params).await?.decode()
    }

    /// Builds the request for `method` and hands it to the server.
    pub(super) fn dispatch(&self, method: &str, params: Value) -> (i64, Outcome) {
        let id = self.id();
        let params = with_meta(self, params);
        let mirror = self.mirror(method, &params);
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let mut extensions = Extensions::new();
        if let Some(p) = &self.principal {
            extensions.insert(p.clone());
        }
        let body = Bytes::from(body.to_string());
        (id, self.server.handle(&body, Some(&mirror), extensions))
    }

    /// Drives a (non-listen) outcome to its response, showing each message to the
    /// observer.
    pub(super) async fn finish(
        &self,
        method: &str,
        (request_id, outcome): (i64, Outcome),
    ) -> Result<Response, TestError> {
        let (reply, notifications) = match outcome {
            Outcome::Ready(reply) => (reply, Vec::new()),
            Outcome::Running(running) => drive(running).await,
            Outcome::Accepted => return Err(unexpected("the request was taken as a notification")),
            Outcome::Listen(_) => return Err(unexpected("a listen stream")),
            #[allow(unreachable_patterns)]
            _ => return Err(unexpected("an outcome this client does not know")),
        };
        let mut notes = Vec::with_capacity(notifications.len());
        for n in notifications {
            let n = parse(&n)?;
            self.observe(method, &n);
            notes.push(n);
        }
        let message = parse(&reply.to_bytes())?;
        self.observe(method, &message);
        Ok(Response {
            request_id,
            message,
            notifications: notes,
            http_status: reply.http_status(),
        })
    }

    /// The header values the HTTP transport would extract from this request: the
    /// protocol version, the method, `Mcp-Name` for the methods that carry one, and the
    /// tool's `x-mcp-header` arguments.
    fn mirror(&self, method: &str, params: &Map<String, Value>) -> MirroredHeaders<'static> {
        let version = params
            .get("_meta")
            .and_then(|m| m.get(crate::protocol::PROTOCOL_VERSION_KEY))
            .and_then(Value::as_str)
            .unwrap_or(crate::protocol::LATEST_PROTOCOL_VERSION);
        let name = name_field(method)
            .and_then(|f| params.get(f))
            .and_then(Value::as_str);
        let mut mirror = MirroredHeaders {
            protocol_version: Mirrored::Value(version.to_owned().into()),
            method: Mirrored::Value(method.to_owned().into()),
            name: name.map_or(Mirrored::Absent, |n| Mirrored::Value(n.to_owned().into())),
            params: Vec::new(),
        };
        if method == crate::protocol::methods::TOOLS_CALL {
            let arguments = params.get("arguments").unwrap_or(&Value::Null);
            for p in &name.map_or_else(Vec::new, |n| self.server.tool_header_params(n)) {
                if let Some(value) = header_value(p, arguments) {
                    mirror
                        .params
                        .push((p.lower.clone().into(), Mirrored::Value(value.into())));
                }
            }
        }
        mirror
    }
}

/// The `Mcp-Param-*` value of one mirrored argument (none when the argument is absent).
fn header_value(p: &HeaderParam, arguments: &Value) -> Option<String> {
    Some(match (p.kind, p.argument(arguments)?) {
        (ParamKind::String, Value::String(s)) => s.clone(),
        (_, v) => v.to_string(),
    })
}

/// Awaits a running handler's reply while collecting its notifications.
async fn drive(running: Running) -> (Reply, Vec<Bytes>) {
    let Running { mut reply, events } = running;
    let Some(mut events) = events else {
        return (reply.await, Vec::new());
    };
    let mut notifications = Vec::new();
    let reply = loop {
        tokio::select! {
            biased;
            Some(n) = events.recv() => notifications.push(n),
            r = &mut reply => break r,
        }
    };
    while let Ok(n) = events.try_recv() {
        notifications.push(n);
    }
    (reply, notifications)
}

pub(super) fn parse(bytes: &[u8]) -> Result<Value, TestError> {
    serde_json::from_slice(bytes).map_err(|e| {
        unexpected(format!(
            "not JSON ({e}): {}",
            String::from_utf8_lossy(bytes)
        ))
    })
}
