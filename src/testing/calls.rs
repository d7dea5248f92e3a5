//! The request builders: [`CallTool`], [`ReadResource`], [`GetPrompt`], [`Complete`].
//! Each sets what its method takes, then sends it, answering `input_required` rounds (see
//! [`TestClient::on_input`]).

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use super::answer::Answer;
use super::client::TestClient;
use super::error::{TestError, unexpected};
use super::exchange::Response;
use super::rounds::Rounds;
use crate::protocol::methods::{COMPLETION_COMPLETE, PROMPTS_GET, RESOURCES_READ, TOOLS_CALL};
use crate::protocol::{
    CallToolResult, CompleteResult, Completion, CompletionReference, GetPromptResult,
    ReadResourceResult,
};

impl TestClient {
    /// `tools/call` of the tool `name`: set its arguments, then [`CallTool::send`] or
    /// [`CallTool::result`].
    pub fn call_tool(&self, name: &str) -> CallTool<'_> {
        CallTool::new(self, name)
    }

    /// `resources/read` of `uri`: [`ReadResource::send`].
    pub fn read_resource(&self, uri: &str) -> ReadResource<'_> {
        ReadResource::new(self, uri)
    }

    /// `prompts/get` of the prompt `name`: set its arguments, then [`GetPrompt::send`].
    pub fn get_prompt(&self, name: &str) -> GetPrompt<'_> {
        GetPrompt::new(self, name)
    }

    /// `completion/complete` of `argument` (typed so far: `value`) of a prompt or a
    /// template ([`CompletionReference`]): [`Complete::send`].
    pub fn complete(
        &self,
        reference: CompletionReference,
        argument: &str,
        value: &str,
    ) -> Complete<'_> {
        Complete::new(self, reference, argument, value)
    }
}

/// The setters every builder that may take `input_required` rounds shares.
macro_rules! round_setters {
    () => {
        /// Adds `key` to the request's `_meta` (e.g. `progressToken`, to get progress
        /// notifications in [`Response::notifications`]; or a client-capabilities override).
        pub fn meta(mut self, key: &str, value: Value) -> Self {
            self.rounds.meta(key, value);
            self
        }

        /// Sends this answer (an `inputResponses` entry) with the first round: for
        /// answering by hand a round an earlier call ended with
        /// ([`TestError::InputRequired`]).
        pub fn input_response(mut self, key: &str, answer: Answer) -> Self {
            self.rounds.input_response(key, answer);
            self
        }

        /// Sends this `requestState` with the first round: the one an earlier round
        /// returned, echoed byte for byte (or any JSON value, to test a server's checks).
        pub fn request_state(mut self, state: impl Into<Value>) -> Self {
            self.rounds.state = Some(state.into());
            self
        }

        /// Sends the request (answering its rounds) and returns the final raw response, a
        /// JSON-RPC error included.
        pub async fn response(self) -> Result<Response, TestError> {
            self.rounds.run(self.client).await
        }
    };
}

fn object<T: Serialize + ?Sized>(what: &str, value: &T) -> Result<Value, String> {
    match serde_json::to_value(value) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(other) => Err(format!(
            "{what} must serialize to a JSON object, not {other}"
        )),
        Err(e) => Err(format!("{what} do not serialize: {e}")),
    }
}

/// `tools/call`, from [`TestClient::call_tool`].
///
/// ```
/// # use schemars::JsonSchema; use serde::Deserialize;
/// # use stateless_mcp::{HandlerError, RequestContext, Server, ToolDef};
/// use serde_json::json;
/// use stateless_mcp::testing::{TestClient, TestError};
///
/// # #[derive(Deserialize, JsonSchema)] struct Div { a: i64, b: i64 }
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let server = Server::builder()
///     .tool(ToolDef::new("div").handler(|_ctx: RequestContext, d: Div| async move {
///         if d.b == 0 {
///             return Err(HandlerError::new("b must not be 0"));
///         }
///         Ok((d.a / d.b).to_string())
///     }))
///     .build()
///     .unwrap();
/// let client = TestClient::new(server);
/// let q: i64 = client.call_tool("div").arguments(&json!({"a": 7, "b": 2})).send().await.unwrap();
/// assert_eq!(q, 3);
/// // A tool that fails is a result with isError, not a JSON-RPC error:
/// let failed = client.call_tool("div").arguments(&json!({"a": 1, "b": 0})).result().await.unwrap();
/// assert_eq!(failed.is_error, Some(true));
/// let err = client.call_tool("div").arguments(&json!({"a": 1, "b": 0})).send::<i64>().await;
/// assert_eq!(err.unwrap_err().tool_text(), Some("b must not be 0"));
/// // An unknown tool is a protocol error:
/// let err = client.call_tool("nope").result().await.unwrap_err();
/// assert!(matches!(err, TestError::Rpc(ref e) if e.code == -32602));
/// # }
/// ```
#[derive(Debug, Clone)]
#[must_use = "a request does nothing until it is sent"]
pub struct CallTool<'a> {
    client: &'a TestClient,
    rounds: Rounds,
}

impl<'a> CallTool<'a> {
    pub(super) fn new(client: &'a TestClient, name: &str) -> Self {
        let mut rounds = Rounds::new(TOOLS_CALL, "name", name);
        rounds.params.insert("arguments".into(), json!({}));
        CallTool { client, rounds }
    }

    /// The tool's arguments: any value that serializes to a JSON object (the tool's
    /// argument struct, `json!({…})`).
    pub fn arguments<T: Serialize + ?Sized>(mut self, arguments: &T) -> Self {
        match object("tool arguments", arguments) {
            Ok(v) => {
                self.rounds.params.insert("arguments".into(), v);
            }
            Err(why) => self.rounds.invalid = Some(why),
        }
        self
    }

    /// The tool's arguments as any JSON value, sent as it is (to test what a tool does with
    /// a malformed one).
    pub fn arguments_json(mut self, arguments: Value) -> Self {
        self.rounds.params.insert("arguments".into(), arguments);
        self
    }

    round_setters!();

    /// The whole `CallToolResult` (content, `structuredContent`, `isError`): a tool that
    /// failed is an `Ok` result with `is_error: Some(true)`.
    pub async fn result(self) -> Result<CallToolResult, TestError> {
        self.response().await?.decode()
    }

    /// The tool's output as `Out`: its `structuredContent` when it has one, else its text
    /// (parsed as JSON when it is JSON, so `i64` or a struct work for JSON text, and a
    /// `String` for any text). A tool that failed is [`TestError::Tool`].
    pub async fn send<Out: DeserializeOwned>(self) -> Result<Out, TestError> {
        let result = self.result().await?;
        if result.is_error == Some(true) {
            return Err(TestError::Tool(result));
        }
        typed_output(result)
    }
}

fn typed_output<Out: DeserializeOwned>(result: CallToolResult) -> Result<Out, TestError> {
    let name = std::any::type_name::<Out>();
    if let Some(structured) = &result.structured_content {
        return Out::deserialize(structured)
            .map_err(|e| unexpected(format!("structuredContent is not {name}: {e}")));
    }
    let text: String = result.content.iter().filter_map(|c| c.as_text()).collect();
    if let Ok(v) = serde_json::from_str::<Value>(&text) {
        if let Ok(out) = Out::deserialize(&v) {
            return Ok(out);
        }
    }
    Out::deserialize(Value::String(text.clone()))
        .map_err(|e| unexpected(format!("the tool's text is not {name} ({e}): {text:?}")))
}

/// `resources/read`, from [`TestClient::read_resource`].
///
/// ```
/// use stateless_mcp::protocol::ResourceContents;
/// use stateless_mcp::testing::TestClient;
/// use stateless_mcp::{ResourceDef, Server};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let server = Server::builder()
///     .resource(ResourceDef::new("app://motd", "motd").handler(|_ctx, uri: String| async move {
///         Ok(ResourceContents::text(uri, "hello"))
///     }))
///     .build()
///     .unwrap();
/// let client = TestClient::new(server);
/// let read = client.read_resource("app://motd").send().await.unwrap();
/// assert_eq!(read.contents[0].uri(), "app://motd");
/// assert_eq!(client.read_resource("app://motd").text().await.unwrap(), "hello");
/// # }
/// ```
#[derive(Debug, Clone)]
#[must_use = "a request does nothing until it is sent"]
pub struct ReadResource<'a> {
    client: &'a TestClient,
    rounds: Rounds,
}

impl<'a> ReadResource<'a> {
    pub(super) fn new(client: &'a TestClient, uri: &str) -> Self {
        let rounds = Rounds::new(RESOURCES_READ, "uri", uri);
        ReadResource { client, rounds }
    }

    round_setters!();

    /// The `ReadResourceResult`.
    pub async fn send(self) -> Result<ReadResourceResult, TestError> {
        self.response().await?.decode()
    }

    /// The text of the first text contents.
    pub async fn text(self) -> Result<String, TestError> {
        let response = self.response().await?;
        response
            .result()?
            .get("contents")
            .and_then(Value::as_array)
            .and_then(|c| c.iter().find_map(|c| c.get("text")?.as_str()))
            .map(str::to_owned)
            .ok_or_else(|| unexpected(format!("no text contents in {}", response.message)))
    }
}

/// `prompts/get`, from [`TestClient::get_prompt`].
///
/// ```
/// use schemars::JsonSchema;
/// use serde::{Deserialize, Serialize};
/// use stateless_mcp::protocol::{GetPromptResult, PromptMessage};
/// use stateless_mcp::testing::TestClient;
/// use stateless_mcp::{PromptDef, RequestContext, Server};
///
/// #[derive(Serialize, Deserialize, JsonSchema)]
/// struct Greet {
///     name: String,
///     times: u32,
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let server = Server::builder()
///     .prompt(PromptDef::new("greet").handler(|_ctx: RequestContext, g: Greet| async move {
///         Ok(GetPromptResult::new(vec![PromptMessage::user_text(
///             format!("Hello {}", g.name).repeat(g.times as usize),
///         )]))
///     }))
///     .build()
///     .unwrap();
/// let client = TestClient::new(server);
/// let prompt = client
///     .get_prompt("greet")
///     .arguments(&Greet { name: "Ada".into(), times: 2 })
///     .send()
///     .await
///     .unwrap();
/// assert_eq!(prompt.messages[0].content.as_text(), Some("Hello AdaHello Ada"));
/// # }
/// ```
#[derive(Debug, Clone)]
#[must_use = "a request does nothing until it is sent"]
pub struct GetPrompt<'a> {
    client: &'a TestClient,
    rounds: Rounds,
}

impl<'a> GetPrompt<'a> {
    pub(super) fn new(client: &'a TestClient, name: &str) -> Self {
        let rounds = Rounds::new(PROMPTS_GET, "name", name);
        GetPrompt { client, rounds }
    }

    /// The prompt's arguments, from any value that serializes to a JSON object (the
    /// prompt's argument struct, a map): prompt arguments travel as text, so each value
    /// that is not a string is sent as its JSON text (`2`, `true`); `null`s are left out.
    pub fn arguments<T: Serialize + ?Sized>(mut self, arguments: &T) -> Self {
        match object("prompt arguments", arguments) {
            Ok(Value::Object(m)) => {
                let texts: Map<String, Value> = m
                    .into_iter()
                    .filter(|(_, v)| !v.is_null())
                    .map(|(k, v)| match v {
                        Value::String(_) => (k, v),
                        other => (k, Value::String(other.to_string())),
                    })
                    .collect();
                self.rounds
                    .params
                    .insert("arguments".into(), Value::Object(texts));
            }
            Ok(_) => unreachable!("object() returns objects"),
            Err(why) => self.rounds.invalid = Some(why),
        }
        self
    }

    /// One argument, as text.
    pub fn argument(mut self, name: &str, value: &str) -> Self {
        let args = self
            .rounds
            .params
            .entry("arguments")
            .or_insert_with(|| json!({}));
        if let Value::Object(m) = args {
            m.insert(name.to_owned(), json!(value));
        }
        self
    }

    round_setters!();

    /// The `GetPromptResult`.
    pub async fn send(self) -> Result<GetPromptResult, TestError> {
        self.response().await?.decode()
    }
}

/// `completion/complete`, from [`TestClient::complete`].
///
/// ```
/// use stateless_mcp::protocol::{CompleteRequest, CompleteResult, CompletionReference};
/// use stateless_mcp::testing::TestClient;
/// use stateless_mcp::{PromptDef, Server};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// # let p = PromptDef::new("city").handler(|_c, _a: stateless_mcp::handler::PromptArguments| async {
/// #     Ok(stateless_mcp::protocol::GetPromptResult::new(vec![])) });
/// let server = Server::builder()
///     .prompt(p)
///     .completion(|_ctx, req: CompleteRequest| async move {
///         let all = ["paris", "park", "rome"];
///         Ok(CompleteResult::from_values(
///             all.iter().filter(|c| c.starts_with(&req.argument.value)).map(|c| c.to_string()).collect(),
///         ))
///     })
///     .build()
///     .unwrap();
/// let client = TestClient::new(server);
/// let reference = CompletionReference::Prompt { name: "city".into() };
/// let done = client.complete(reference, "name", "par").send().await.unwrap();
/// assert_eq!(done.values, ["paris", "park"]);
/// # }
/// ```
#[derive(Debug, Clone)]
#[must_use = "a request does nothing until it is sent"]
pub struct Complete<'a> {
    client: &'a TestClient,
    params: Map<String, Value>,
}

impl<'a> Complete<'a> {
    pub(super) fn new(
        client: &'a TestClient,
        reference: CompletionReference,
        argument: &str,
        value: &str,
    ) -> Self {
        let mut params = Map::new();
        params.insert(
            "ref".into(),
            serde_json::to_value(reference).expect("a completion reference serializes"),
        );
        params.insert("argument".into(), json!({"name": argument, "value": value}));
        Complete { client, params }
    }

    /// An argument already resolved (`context.arguments`).
    pub fn context(mut self, name: &str, value: &str) -> Self {
        let context = self
            .params
            .entry("context")
            .or_insert_with(|| json!({"arguments": {}}));
        context["arguments"][name] = json!(value);
        self
    }

    /// The whole `CompleteResult`.
    pub async fn result(self) -> Result<CompleteResult, TestError> {
        self.client
            .request_as(COMPLETION_COMPLETE, Value::Object(self.params))
            .await
    }

    /// The `completion` (values, total, hasMore).
    pub async fn send(self) -> Result<Completion, TestError> {
        Ok(self.result().await?.completion)
    }
}
