//! An in-process client for testing your server (feature `testing`): it hands requests
//! straight to [`Server::handle`], with no sockets and no HTTP, and builds each one the
//! way a 2026-07-28 client must — `_meta` with the protocol version, the client's
//! capabilities and its info, and the mirrored header values (`MCP-Protocol-Version`,
//! `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`) that the HTTP transport would extract.
//!
//! ```
//! use schemars::JsonSchema;
//! use serde::{Deserialize, Serialize};
//! use stateless_mcp::testing::TestClient;
//! use stateless_mcp::{HandlerError, RequestContext, Server, ToolDef};
//!
//! #[derive(Serialize, Deserialize, JsonSchema)]
//! struct Add {
//!     a: i64,
//!     b: i64,
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let server = Server::builder()
//!     .tool(ToolDef::new("add").handler(|_ctx: RequestContext, args: Add| async move {
//!         Ok::<_, HandlerError>((args.a + args.b).to_string())
//!     }))
//!     .build()?;
//! let client = TestClient::new(server);
//! assert_eq!(client.list_tools().await?[0].name, "add");
//! let sum: i64 = client.call_tool("add").arguments(&Add { a: 2, b: 3 }).send().await?;
//! assert_eq!(sum, 5);
//! # Ok(())
//! # }
//! ```
//!
//! What it offers:
//! - [`TestClient::discover`] and the lists, every page followed
//!   ([`TestClient::list_tools`], [`list_resources`](TestClient::list_resources),
//!   [`list_resource_templates`](TestClient::list_resource_templates),
//!   [`list_prompts`](TestClient::list_prompts));
//! - [`TestClient::call_tool`] ([`CallTool`]: typed [`send`](CallTool::send), or the
//!   whole [`result`](CallTool::result)), [`TestClient::read_resource`]
//!   ([`ReadResource`]), [`TestClient::get_prompt`] ([`GetPrompt`]),
//!   [`TestClient::complete`] ([`Complete`]);
//! - `input_required` rounds answered by a callback ([`TestClient::on_input`], with
//!   [`Answer`]s; the sealed `requestState` is carried back for you), or by hand, round by
//!   round ([`TestError::InputRequired`] gives you the requests and the state;
//!   `input_response` and `request_state` on the builders send them back);
//! - [`TestClient::listen`]: a `subscriptions/listen` stream ([`ListenStream`]) whose
//!   notifications a test awaits, each with a timeout;
//! - the caller's [`Principal`] (as an auth layer would put it into the request) and the
//!   client capabilities to present;
//! - [`TestClient::request`]: any method, with the standard `_meta`, answered as a raw
//!   [`Response`] (the JSON-RPC message, the notifications before it, the HTTP status
//!   the transport would send);
//! - [`TestClient::on_message`]: a hook that sees every message the client receives (to
//!   check them against the schema, or log them).
//!
//! Errors are one type, [`TestError`]: a JSON-RPC error ([`RpcError`]: code, message,
//! data) is told apart from a tool that ran and failed (a result with `isError`).

mod answer;
mod calls;
mod error;
mod exchange;
mod listen;

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

pub use answer::Answer;
pub use calls::{CallTool, Complete, GetPrompt, ReadResource};
pub use error::{RpcError, TestError};
pub use exchange::Response;
pub use listen::{Listen, ListenStream};

use crate::Server;
use crate::handler::Principal;
use crate::protocol::methods::{
    DISCOVER, PROMPTS_LIST, RESOURCE_TEMPLATES_LIST, RESOURCES_LIST, TOOLS_LIST,
};
use crate::protocol::{
    CompletionReference, DiscoverResult, InputRequest, Prompt, Resource, ResourceTemplate, Tool,
};

/// Answers one input request of an `input_required` round: its key and the request.
type Answerer = dyn Fn(&str, &InputRequest) -> Option<Answer> + Send + Sync;
/// Sees every message the client receives: the method of the request it belongs to and
/// the message.
type Observer = dyn Fn(&str, &Value) + Send + Sync;

/// The most `input_required` rounds one call answers before it gives up
/// ([`TestError::InputRequired`]).
const MAX_ROUNDS: usize = 16;
/// The most pages one list follows.
const MAX_PAGES: usize = 10_000;

/// An in-process MCP client for tests: requests go to [`Server::handle`] directly.
///
/// Cheap to clone; clones share the request-id counter and the callbacks. Configure it with
/// the `#[must_use]` builder methods, then call.
///
/// ```
/// use serde_json::json;
/// use stateless_mcp::handler::Principal;
/// use stateless_mcp::testing::{Answer, TestClient};
///
/// let server = stateless_mcp::Server::builder().build().unwrap();
/// let client = TestClient::new(server)
///     .client_info("my-tests", "1.0.0")
///     .capabilities(json!({"elicitation": {"form": {}}}))
///     .principal(Principal::new("alice").with_scopes(["read"]))
///     .on_input(|_key, _request| Some(Answer::accept(&json!({"ok": true}))));
/// # drop(client);
/// ```
#[derive(Clone)]
pub struct TestClient {
    server: Server,
    capabilities: Value,
    client_info: Value,
    principal: Option<Principal>,
    next_id: Arc<AtomicI64>,
    answerer: Option<Arc<Answerer>>,
    observer: Option<Arc<Observer>>,
}

impl std::fmt::Debug for TestClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestClient")
            .field("server", &self.server)
            .field("capabilities", &self.capabilities)
            .field("principal", &self.principal)
            .finish_non_exhaustive()
    }
}

impl TestClient {
    /// A client of `server` with no optional capabilities (`{}`), no principal and
    /// client info `stateless-mcp-testing`.
    pub fn new(server: Server) -> Self {
        TestClient {
            server,
            capabilities: json!({}),
            client_info: json!({"name": "stateless-mcp-testing", "version": env!("CARGO_PKG_VERSION")}),
            principal: None,
            next_id: Arc::new(AtomicI64::new(1)),
            answerer: None,
            observer: None,
        }
    }

    /// The server this client talks to.
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// Presents these client capabilities (a `ClientCapabilities` object, e.g.
    /// `{"elicitation": {"form": {}}, "sampling": {}, "roots": {}}`) on every request.
    #[must_use]
    pub fn capabilities(mut self, capabilities: Value) -> Self {
        self.capabilities = capabilities;
        self
    }

    /// Presents every input capability: form and URL elicitation, sampling, roots.
    #[must_use]
    pub fn all_input_capabilities(self) -> Self {
        self.capabilities(
            json!({"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {}}),
        )
    }

    /// Sends this `clientInfo`.
    #[must_use]
    pub fn client_info(mut self, name: &str, version: &str) -> Self {
        self.client_info = json!({"name": name, "version": version});
        self
    }

    /// Calls as this principal: it is put into every request's extensions, as an
    /// authentication layer would, so handlers read it from
    /// [`RequestContext::principal`](crate::RequestContext::principal), scoped lists
    /// filter by it and sealed `requestState` is bound to it.
    #[must_use]
    pub fn principal(mut self, principal: Principal) -> Self {
        self.principal = Some(principal);
        self
    }

    /// Calls anonymously (no principal).
    #[must_use]
    pub fn anonymous(mut self) -> Self {
        self.principal = None;
        self
    }

    /// Answers `input_required` rounds with `answer(key, request)`: every request of a
    /// round answered (`Some`) makes the call retry with the answers and the echoed
    /// `requestState`, up to 16 rounds; a `None` ends the call with
    /// [`TestError::InputRequired`].
    #[must_use]
    pub fn on_input(
        mut self,
        answer: impl Fn(&str, &InputRequest) -> Option<Answer> + Send + Sync + 'static,
    ) -> Self {
        self.answerer = Some(Arc::new(answer));
        self
    }

    /// Calls `observe(method, message)` with every message this client receives: each
    /// response, each notification before it, each message of a listen stream (`method`:
    /// the request it belongs to).
    #[must_use]
    pub fn on_message(mut self, observe: impl Fn(&str, &Value) + Send + Sync + 'static) -> Self {
        self.observer = Some(Arc::new(observe));
        self
    }

    /// A new JSON-RPC request id.
    fn id(&self) -> i64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

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

    /// `server/discover`.
    pub async fn discover(&self) -> Result<DiscoverResult, TestError> {
        self.request_as(DISCOVER, Value::Null).await
    }

    /// Every tool, following `nextCursor` to the last page.
    pub async fn list_tools(&self) -> Result<Vec<Tool>, TestError> {
        self.list_all(TOOLS_LIST, "tools").await
    }

    /// Every resource, following `nextCursor` to the last page.
    pub async fn list_resources(&self) -> Result<Vec<Resource>, TestError> {
        self.list_all(RESOURCES_LIST, "resources").await
    }

    /// Every resource template, following `nextCursor` to the last page.
    pub async fn list_resource_templates(&self) -> Result<Vec<ResourceTemplate>, TestError> {
        self.list_all(RESOURCE_TEMPLATES_LIST, "resourceTemplates")
            .await
    }

    /// Every prompt, following `nextCursor` to the last page.
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, TestError> {
        self.list_all(PROMPTS_LIST, "prompts").await
    }

    /// The pages of a list, in order: each page's result as sent.
    pub async fn list_pages(&self, method: &str) -> Result<Vec<Value>, TestError> {
        let mut pages = Vec::new();
        let mut cursor: Option<String> = None;
        while pages.len() < MAX_PAGES {
            let params = match &cursor {
                Some(c) => json!({"cursor": c}),
                None => Value::Null,
            };
            let page: Value = self.request_as(method, params).await?;
            cursor = page
                .get("nextCursor")
                .and_then(Value::as_str)
                .map(str::to_owned);
            pages.push(page);
            if cursor.is_none() {
                return Ok(pages);
            }
        }
        Err(error::unexpected(format!(
            "{method} did not end within {MAX_PAGES} pages"
        )))
    }

    async fn list_all<T: DeserializeOwned>(
        &self,
        method: &str,
        field: &str,
    ) -> Result<Vec<T>, TestError> {
        let mut items = Vec::new();
        for mut page in self.list_pages(method).await? {
            let page_items = page.get_mut(field).map(Value::take).unwrap_or_default();
            let page_items: Vec<T> = serde_json::from_value(page_items)
                .map_err(|e| error::unexpected(format!("{method} {field}: {e}")))?;
            items.extend(page_items);
        }
        Ok(items)
    }

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

    /// `subscriptions/listen`: choose the notifications, then [`Listen::open`].
    pub fn listen(&self) -> Listen<'_> {
        Listen::new(self)
    }

    fn observe(&self, method: &str, message: &Value) {
        if let Some(observe) = &self.observer {
            observe(method, message);
        }
    }
}

/// `params` as an object with the standard `_meta` merged in (keys already in
/// `params._meta` win).
fn with_meta(client: &TestClient, params: Value) -> Map<String, Value> {
    let mut params = match params {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    let mut meta = Map::new();
    meta.insert(
        crate::protocol::PROTOCOL_VERSION_KEY.into(),
        json!(crate::protocol::LATEST_PROTOCOL_VERSION),
    );
    meta.insert(
        crate::protocol::CLIENT_CAPABILITIES_KEY.into(),
        client.capabilities.clone(),
    );
    meta.insert(
        crate::protocol::CLIENT_INFO_KEY.into(),
        client.client_info.clone(),
    );
    if let Some(Value::Object(extra)) = params.remove("_meta") {
        meta.extend(extra);
    }
    params.insert("_meta".into(), Value::Object(meta));
    params
}
