//! The [`TestClient`]: what it presents on every request (capabilities, client info, the
//! principal), its callbacks, and the calls that need nothing but [`TestClient::request`]:
//! `server/discover` and the lists, every page followed.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use super::answer::Answer;
use super::error::{self, TestError};
use crate::Server;
use crate::handler::Principal;
use crate::protocol::methods::{
    DISCOVER, PROMPTS_LIST, RESOURCE_TEMPLATES_LIST, RESOURCES_LIST, TOOLS_LIST,
};
use crate::protocol::{DiscoverResult, InputRequest, Prompt, Resource, ResourceTemplate, Tool};

/// Answers one input request of an `input_required` round: its key and the request.
pub(super) type Answerer = dyn Fn(&str, &InputRequest) -> Option<Answer> + Send + Sync;
/// Sees every message the client receives: the method of the request it belongs to and
/// the message.
type Observer = dyn Fn(&str, &Value) + Send + Sync;

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
    pub(super) server: Server,
    capabilities: Value,
    client_info: Value,
    pub(super) principal: Option<Principal>,
    next_id: Arc<AtomicI64>,
    pub(super) answerer: Option<Arc<Answerer>>,
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
    pub(super) fn id(&self) -> i64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
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

    /// Shows `message`, received for a request of `method`, to the
    /// [`on_message`](Self::on_message) hook.
    pub(super) fn observe(&self, method: &str, message: &Value) {
        if let Some(observe) = &self.observer {
            observe(method, message);
        }
    }
}

/// `params` as an object with the standard `_meta` merged in (keys already in
/// `params._meta` win).
pub(super) fn with_meta(client: &TestClient, params: Value) -> Map<String, Value> {
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
