//! Multi-round-trip requests from a handler's side: asking the client for input
//! ([`InputRequired`]) and reading its answers and the handler's own state on the retry
//! ([`Input`]).
//!
//! Tool, resource-read and prompt handlers can ask: [`InputRequired`] converts into
//! [`HandlerError`](super::HandlerError) with `?` or `.into()`. (A completion handler that
//! answers it gets `-32603`: completion cannot ask.)
//!
//! ```
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//! use serde_json::json;
//! use stateless_mcp::{HandlerError, InputRequired, RequestContext, ToolDef};
//!
//! #[derive(Deserialize)]
//! struct Name { name: String }
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct NoArgs {}
//!
//! let greet = ToolDef::new("greet").handler(|ctx: RequestContext, _: NoArgs| async move {
//!     // On the retry, the answer is in `inputResponses` under the key we chose.
//!     if let Some(Name { name }) = ctx.input().accepted("user_name") {
//!         return Ok(format!("Hello, {name}!"));
//!     }
//!     let schema = json!({"type": "object", "properties": {"name": {"type": "string"}},
//!                         "required": ["name"]});
//!     Err(InputRequired::new()
//!         .elicit_form("user_name", "What is your name?", schema)
//!         .into())
//! });
//! ```

use std::collections::BTreeMap;
use std::fmt;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::Error;
use crate::protocol::{
    ClientCapabilities, CreateMessageParams, CreateMessageResult, ElicitAction, ElicitParams,
    ElicitResult, InputRequest, JsonObject, ListRootsParams, ListRootsResult,
};

/// A handler's answer "I need input before I can finish": input requests for the client,
/// and/or state to get back on the retry (sealed by the server; the client cannot read or
/// change it).
///
/// The server never sends an input request the client did not declare a capability for in
/// this request: such an answer becomes `-32021` with `data.requiredCapabilities`. To offer
/// a fallback instead, check [`RequestContext::can_ask`](super::RequestContext::can_ask)
/// first.
#[derive(Default)]
#[must_use]
pub struct InputRequired {
    pub(crate) requests: BTreeMap<String, InputRequest>,
    pub(crate) state: Option<Result<Value, String>>,
    pub(crate) single_use: bool,
    pub(crate) before_task: bool,
}

impl fmt::Debug for InputRequired {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InputRequired")
            .field("requests", &self.requests.keys().collect::<Vec<_>>())
            .field("has_state", &self.state.is_some())
            .field("single_use", &self.single_use)
            .field("before_task", &self.before_task)
            .finish()
    }
}

impl InputRequired {
    /// An empty answer; add input requests and/or state.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an input request under `key` (unique within the answer; a later one with the
    /// same key replaces the earlier).
    pub fn request(mut self, key: impl Into<String>, request: InputRequest) -> Self {
        self.requests.insert(key.into(), request);
        self
    }

    /// Asks the user to fill a form (`requestedSchema` must be a flat object of primitive
    /// properties). Never for secrets.
    pub fn elicit_form(
        self,
        key: impl Into<String>,
        message: impl Into<String>,
        schema: Value,
    ) -> Self {
        let schema = match schema {
            Value::Object(o) => o,
            _ => JsonObject::new(),
        };
        self.request(
            key,
            InputRequest::Elicit(ElicitParams::form(message, schema)),
        )
    }

    /// Asks the user to fill a form for a `T`: `T`'s JSON Schema becomes `requestedSchema`,
    /// and [`Input::accepted::<T>`](Input::accepted) reads the answer back on the retry.
    ///
    /// `T` must be a struct whose fields are strings (formats `date`, `date-time`, `email`,
    /// `uri` kept), integers or numbers (with bounds), booleans, unit-variant enums (single
    /// choice; doc comments become option titles), `Vec`s of such enums (multiple choice) or
    /// `Option`s of these (not required); anything else (a nested struct, a list of
    /// strings) is refused with an internal error naming the field, since the spec's
    /// restricted form schema cannot express it.
    ///
    /// ```
    /// use schemars::JsonSchema;
    /// use serde::Deserialize;
    /// use stateless_mcp::{HandlerError, InputRequired, RequestContext, ToolDef};
    ///
    /// #[derive(Deserialize, JsonSchema)]
    /// struct Shipping {
    ///     /// Where to send it.
    ///     address: String,
    ///     /// Gift-wrap it?
    ///     gift: bool,
    /// }
    ///
    /// # #[derive(Deserialize, JsonSchema)] struct NoArgs {}
    /// let order = ToolDef::new("order").handler(|ctx: RequestContext, _: NoArgs| async move {
    ///     match ctx.input().accepted::<Shipping>("shipping") {
    ///         Some(s) => Ok(format!("shipping to {} (gift: {})", s.address, s.gift)),
    ///         None => Err(InputRequired::new()
    ///             .elicit::<Shipping>("shipping", "Where should we ship it?")?
    ///             .into()),
    ///     }
    /// });
    /// ```
    pub fn elicit<T: JsonSchema>(
        self,
        key: impl Into<String>,
        message: impl Into<String>,
    ) -> Result<Self, Error> {
        let schema = super::elicit::form_schema::<T>().map_err(Error::internal)?;
        Ok(self.request(
            key,
            InputRequest::Elicit(ElicitParams::form(message, schema)),
        ))
    }

    /// Asks the user to visit `url` (an out-of-band step such as a login or payment). The
    /// client answers `accept` without content; record what you need in the state.
    pub fn elicit_url(
        self,
        key: impl Into<String>,
        message: impl Into<String>,
        url: impl Into<String>,
    ) -> Self {
        self.request(key, InputRequest::Elicit(ElicitParams::url(message, url)))
    }

    /// Asks the client's model for a completion.
    pub fn sample(self, key: impl Into<String>, params: CreateMessageParams) -> Self {
        self.request(key, InputRequest::CreateMessage(params))
    }

    /// Asks for the client's roots.
    pub fn list_roots(self, key: impl Into<String>) -> Self {
        self.request(key, InputRequest::ListRoots(ListRootsParams::default()))
    }

    /// State to get back, typed, from [`Input::state`] on the retry. It is sealed (encrypted
    /// and authenticated) and bound to this method, these params and this caller.
    pub fn state<T: Serialize>(mut self, state: &T) -> Self {
        self.state = Some(serde_json::to_value(state).map_err(|e| e.to_string()));
        self
    }

    /// Makes the state single-use: the retry that brings it back runs once; any later use
    /// of the same state (a replay, on any replica sharing the server's
    /// [replay store](crate::extend::ReplayStore)) is refused with `-32602` and `data.reason =
    /// "replayed"`. For steps that must not happen twice (a payment, a deletion). Only
    /// meaningful with [`state`](Self::state).
    pub fn single_use(mut self) -> Self {
        self.single_use = true;
        self
    }

    /// For a task-capable tool (see [`TaskSupport`](super::TaskSupport)): ask this before
    /// the call becomes a task. The `tools/call` itself is answered `input_required` (a
    /// multi-round-trip round, no task created), and the retry that brings the answers
    /// back may then become a task. It counts when the handler gives it before its first
    /// pending `.await`; later, or on a task already running, the answer is the task's own
    /// `input_required` state, as without this mark.
    pub fn before_task(mut self) -> Self {
        self.before_task = true;
        self
    }

    /// The input requests, by key.
    pub fn requests(&self) -> &BTreeMap<String, InputRequest> {
        &self.requests
    }

    /// The capabilities `caps` lacks for these requests, if any.
    pub(crate) fn missing_capabilities(
        &self,
        caps: &ClientCapabilities,
    ) -> Option<ClientCapabilities> {
        let mut required = ClientCapabilities::default();
        let mut missing = false;
        for request in self.requests.values().filter(|r| !r.supported_by(caps)) {
            request.require_in(&mut required);
            missing = true;
        }
        missing.then_some(required)
    }
}

/// How a handler stopped short of a result: a protocol error, or a request for input.
#[derive(Debug)]
pub(crate) enum Stop {
    Error(Error),
    Input(InputRequired),
}

impl From<Error> for Stop {
    fn from(e: Error) -> Self {
        Stop::Error(e)
    }
}

/// What the client sent back on a retry: `inputResponses` and the handler's state.
///
/// Missing, mismatched or unparsable answers read as `None`, so a handler simply asks again;
/// unknown keys are ignored. (A structurally invalid `inputResponses`, not an object of
/// objects, never reaches the handler: it is answered `-32602`.)
#[derive(Debug, Default)]
pub struct Input {
    pub(crate) responses: JsonObject,
    pub(crate) state: Option<Value>,
}

impl Input {
    /// Whether this request is a retry carrying input responses or state.
    pub fn is_retry(&self) -> bool {
        !self.responses.is_empty() || self.state.is_some()
    }

    /// The raw response under `key`.
    pub fn raw(&self, key: &str) -> Option<&Value> {
        self.responses.get(key)
    }

    fn parsed<T: DeserializeOwned>(&self, key: &str) -> Option<T> {
        T::deserialize(self.responses.get(key)?).ok()
    }

    /// The answer to the elicitation under `key`.
    pub fn elicitation(&self, key: &str) -> Option<ElicitResult> {
        self.parsed(key)
    }

    /// The submitted form under `key`, read as `T`, when the user accepted it and it
    /// parses; `None` otherwise (declined, cancelled, missing or malformed).
    pub fn accepted<T: DeserializeOwned>(&self, key: &str) -> Option<T> {
        let answer = self.elicitation(key)?;
        if answer.action != ElicitAction::Accept {
            return None;
        }
        T::deserialize(Value::Object(answer.content.unwrap_or_default())).ok()
    }

    /// The model's answer to the sampling request under `key`.
    pub fn sampling(&self, key: &str) -> Option<CreateMessageResult> {
        self.parsed(key)
    }

    /// The client's roots, answered under `key`.
    pub fn roots(&self, key: &str) -> Option<ListRootsResult> {
        self.parsed(key)
    }

    /// The state the handler set with [`InputRequired::state`], read as `T` (already
    /// verified: it was sealed by a server holding this key ring, for this request and
    /// caller, and has not expired). `None` when there is none or it does not parse as `T`.
    pub fn state<T: DeserializeOwned>(&self) -> Option<T> {
        T::deserialize(self.state.as_ref()?).ok()
    }
}

/// Reads `inputResponses` as it arrived: absent is empty; anything but an object whose
/// values are objects is structurally invalid (`-32602`).
pub(crate) fn parse_responses(
    raw: Option<&serde_json::value::RawValue>,
) -> Result<JsonObject, crate::protocol::ErrorObject> {
    let Some(raw) = raw else {
        return Ok(JsonObject::new());
    };
    let invalid = |why: &str| {
        crate::protocol::ErrorObject::invalid_params(format!("Invalid inputResponses: {why}"))
    };
    match serde_json::from_str::<Value>(raw.get()) {
        Ok(Value::Object(map)) => match map.iter().find(|(_, v)| !v.is_object()) {
            Some((k, _)) => Err(invalid(&format!(
                "the response under {k:?} must be an object"
            ))),
            None => Ok(map),
        },
        _ => Err(invalid("it must be an object mapping keys to responses")),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn input(responses: Value) -> Input {
        Input {
            responses: responses.as_object().cloned().unwrap(),
            state: Some(json!({"step": 1})),
        }
    }

    #[test]
    fn answers_are_read_typed_and_tolerantly() {
        #[derive(serde::Deserialize)]
        struct Name {
            name: String,
        }
        let i = input(json!({
            "user_name": {"action": "accept", "content": {"name": "Alice"}},
            "declined": {"action": "decline"},
            "capital": {"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m"},
            "roots": {"roots": [{"uri": "file:///r"}]},
            "junk": {"x": 1}
        }));
        assert_eq!(i.accepted::<Name>("user_name").unwrap().name, "Alice");
        assert!(i.accepted::<Name>("declined").is_none());
        assert!(i.accepted::<Name>("missing").is_none());
        assert!(i.elicitation("junk").is_none());
        assert_eq!(i.sampling("capital").unwrap().model, "m");
        assert_eq!(i.roots("roots").unwrap().roots[0].uri, "file:///r");
        assert!(i.roots("user_name").is_none());
        assert_eq!(i.state::<Value>().unwrap()["step"], 1);
        assert!(i.is_retry());
    }

    #[test]
    fn structure_of_input_responses() {
        let raw = |s: &str| serde_json::value::RawValue::from_string(s.into()).unwrap();
        assert!(parse_responses(None).unwrap().is_empty());
        assert!(parse_responses(Some(&raw(r#"{"a":{}}"#))).is_ok());
        for bad in ["null", "12", "[]", r#"{"a":1}"#, r#"{"a":null}"#] {
            let e = parse_responses(Some(&raw(bad))).unwrap_err();
            assert_eq!(e.code, -32602, "{bad}");
        }
    }

    #[test]
    fn capabilities_are_checked_per_request_and_mode() {
        let ask = InputRequired::new()
            .elicit_form("f", "m", json!({"type": "object"}))
            .elicit_url("u", "m", "https://x")
            .list_roots("r");
        let sampling_only = ClientCapabilities::sampling();
        let missing = ask.missing_capabilities(&sampling_only).unwrap();
        let missing = serde_json::to_value(missing).unwrap();
        assert_eq!(
            missing,
            json!({"elicitation": {"form": {}, "url": {}}, "roots": {}})
        );
        let all: ClientCapabilities =
            serde_json::from_value(json!({"elicitation": {"form": {}, "url": {}}, "roots": {}}))
                .unwrap();
        assert!(ask.missing_capabilities(&all).is_none());
    }
}
