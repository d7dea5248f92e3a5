//! `subscriptions/listen` in process: [`Listen`] chooses the notifications and opens the
//! stream; [`ListenStream`] yields its messages, each awaited with a timeout.

use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt as _;
use futures_util::stream::BoxStream;
use serde_json::{Map, Value, json};

use super::client::TestClient;
use super::error::{TestError, unexpected};
use super::exchange::parse;
use crate::extend::Outcome;
use crate::protocol::methods::SUBSCRIPTIONS_LISTEN;

impl TestClient {
    /// `subscriptions/listen`: choose the notifications, then [`Listen::open`].
    pub fn listen(&self) -> Listen<'_> {
        Listen::new(self)
    }
}

/// How long [`ListenStream`] waits for a message unless told otherwise.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// `subscriptions/listen`, from [`TestClient::listen`]: which notifications to ask for.
///
/// ```
/// use std::time::Duration;
/// use stateless_mcp::notify::ChangeEvent;
/// use stateless_mcp::testing::TestClient;
/// # use stateless_mcp::{HandlerError, RequestContext, Server, ToolDef};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// # let server = Server::builder()
/// #     .tool(ToolDef::new("t").raw_handler(|_c: RequestContext, _a: serde_json::Value| async { Ok::<_, HandlerError>("") }))
/// #     .build().unwrap();
/// let client = TestClient::new(server.clone());
/// let mut stream = client.listen().tools().timeout(Duration::from_secs(5)).open().await.unwrap();
/// assert_eq!(stream.acknowledged()["toolsListChanged"], true);
/// server.notifier().publish(ChangeEvent::tools_list_changed()).await.unwrap();
/// let changed = stream.notification("notifications/tools/list_changed").await.unwrap();
/// assert_eq!(changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], stream.id());
/// # }
/// ```
#[derive(Debug, Clone)]
#[must_use = "a listen request does nothing until it is opened"]
pub struct Listen<'a> {
    client: &'a TestClient,
    filter: Map<String, Value>,
    timeout: Duration,
}

impl<'a> Listen<'a> {
    pub(super) fn new(client: &'a TestClient) -> Self {
        Listen {
            client,
            filter: Map::new(),
            timeout: DEFAULT_TIMEOUT,
        }
    }

    fn set(mut self, key: &str, value: Value) -> Self {
        self.filter.insert(key.to_owned(), value);
        self
    }

    /// Asks for `notifications/tools/list_changed`.
    pub fn tools(self) -> Self {
        self.set("toolsListChanged", json!(true))
    }

    /// Asks for `notifications/prompts/list_changed`.
    pub fn prompts(self) -> Self {
        self.set("promptsListChanged", json!(true))
    }

    /// Asks for `notifications/resources/list_changed`.
    pub fn resources(self) -> Self {
        self.set("resourcesListChanged", json!(true))
    }

    /// Asks for `notifications/resources/updated` of `uri` (and its sub-resources).
    pub fn resource(self, uri: &str) -> Self {
        self.push("resourceSubscriptions", uri)
    }

    /// Asks for `notifications/tasks` of the task `task_id` (the Tasks extension).
    pub fn task(self, task_id: &str) -> Self {
        self.push("taskIds", task_id)
    }

    fn push(mut self, key: &str, value: &str) -> Self {
        let list = self.filter.entry(key).or_insert_with(|| json!([]));
        if let Value::Array(a) = list {
            a.push(json!(value));
        }
        self
    }

    /// How long the stream waits for each message (10 s unless set).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sends the request and waits for the acknowledgement. A refusal (no such
    /// capability, the replica full) is [`TestError::Rpc`].
    pub async fn open(self) -> Result<ListenStream, TestError> {
        let client = self.client.clone();
        let params = json!({ "notifications": Value::Object(self.filter) });
        let (id, outcome) = client.dispatch(SUBSCRIPTIONS_LISTEN, params);
        let messages = match outcome {
            Outcome::Listen(listen) => listen.messages,
            other => {
                let response = client.finish(SUBSCRIPTIONS_LISTEN, (id, other)).await?;
                response.result()?;
                return Err(unexpected(format!(
                    "a listen request answered with {}",
                    response.message
                )));
            }
        };
        let mut stream = ListenStream {
            client,
            id,
            messages,
            timeout: self.timeout,
            acknowledged: Value::Null,
        };
        let ack = stream
            .notification(crate::protocol::SUBSCRIPTIONS_ACKNOWLEDGED)
            .await?;
        stream.acknowledged = ack["params"]["notifications"].clone();
        Ok(stream)
    }
}

/// An open listen stream. Dropping it closes it (as a client going away does).
pub struct ListenStream {
    client: TestClient,
    id: i64,
    messages: BoxStream<'static, Bytes>,
    timeout: Duration,
    acknowledged: Value,
}

impl std::fmt::Debug for ListenStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ListenStream")
            .field("id", &self.id)
            .field("acknowledged", &self.acknowledged)
            .finish_non_exhaustive()
    }
}

impl ListenStream {
    /// The listen request's JSON-RPC id (every notification's `subscriptionId`).
    pub fn id(&self) -> i64 {
        self.id
    }

    /// What the server acknowledged it will send (the honoured filter).
    pub fn acknowledged(&self) -> &Value {
        &self.acknowledged
    }

    /// The next message within the stream's timeout: a notification, or the graceful
    /// result that closes the stream. A stream that ended is [`TestError::Unexpected`].
    pub async fn next(&mut self) -> Result<Value, TestError> {
        self.next_within(self.timeout).await
    }

    /// The next message within `timeout`.
    pub async fn next_within(&mut self, timeout: Duration) -> Result<Value, TestError> {
        match tokio::time::timeout(timeout, self.messages.next()).await {
            Err(_) => Err(TestError::Timeout(timeout)),
            Ok(None) => Err(unexpected("the listen stream ended")),
            Ok(Some(bytes)) => {
                let message = parse(&bytes)?;
                self.client.observe(SUBSCRIPTIONS_LISTEN, &message);
                Ok(message)
            }
        }
    }

    /// The next message, which must be a notification with this method.
    pub async fn notification(&mut self, method: &str) -> Result<Value, TestError> {
        let message = self.next().await?;
        match message.get("method").and_then(Value::as_str) {
            Some(m) if m == method => Ok(message),
            _ => Err(unexpected(format!("expected {method}, got {message}"))),
        }
    }

    /// The next message, which must be the graceful `SubscriptionsListenResult` that
    /// closes the stream (sent when the server shuts down or the stream's lifetime ends).
    pub async fn closed(&mut self) -> Result<Value, TestError> {
        let message = self.next().await?;
        match message.get("result") {
            Some(result) => Ok(result.clone()),
            None => Err(unexpected(format!(
                "expected the closing result, got {message}"
            ))),
        }
    }

    /// Waits `quiet` and fails when any message arrives meanwhile (what was not asked for
    /// must not be sent).
    pub async fn expect_silence(&mut self, quiet: Duration) -> Result<(), TestError> {
        match self.next_within(quiet).await {
            Err(TestError::Timeout(_)) => Ok(()),
            Ok(message) => Err(unexpected(format!("expected silence, got {message}"))),
            Err(e) => Err(e),
        }
    }
}
