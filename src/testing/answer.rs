//! Answers to the input requests of an `input_required` round ([`Answer`]), and the
//! rounds themselves: send, answer what the server asks, retry with the answers and the
//! echoed `requestState`, until the result is complete.

use serde::Serialize;
use serde_json::{Map, Value, json};

use super::error::{TestError, unexpected};
use super::exchange::Response;
use super::{MAX_ROUNDS, TestClient};
use crate::protocol::{InputRequest, InputRequiredResult};

/// The client's answer to one input request (an `inputResponses` entry): an elicitation
/// result, a sampled message, or the client's roots.
///
/// ```
/// use serde_json::json;
/// use stateless_mcp::testing::Answer;
///
/// let yes = Answer::accept(&json!({"ok": true}));
/// assert_eq!(yes.as_json(), &json!({"action": "accept", "content": {"ok": true}}));
/// let no = Answer::decline();
/// let model = Answer::sampled("Paris.", "test-model");
/// let roots = Answer::roots(["file:///project"]);
/// # let _ = (no, model, roots);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Answer(Value);

impl Answer {
    /// Elicitation accepted with this form content (any value that serializes to a JSON
    /// object: a struct, a map, `json!({…})`).
    ///
    /// # Panics
    ///
    /// When `content` does not serialize (a map with non-string keys).
    pub fn accept<T: Serialize + ?Sized>(content: &T) -> Self {
        let content = serde_json::to_value(content).expect("elicitation content serializes");
        Answer(json!({"action": "accept", "content": content}))
    }

    /// Elicitation accepted without content (the answer to a URL-mode elicitation).
    pub fn accept_url() -> Self {
        Answer(json!({"action": "accept"}))
    }

    /// Elicitation declined by the user.
    pub fn decline() -> Self {
        Answer(json!({"action": "decline"}))
    }

    /// Elicitation cancelled (dismissed) by the user.
    pub fn cancel() -> Self {
        Answer(json!({"action": "cancel"}))
    }

    /// A sampled assistant message with one text block, from `model`.
    pub fn sampled(text: &str, model: &str) -> Self {
        Answer(
            json!({"role": "assistant", "content": {"type": "text", "text": text},
                      "model": model, "stopReason": "endTurn"}),
        )
    }

    /// The client's roots (`file://` URIs).
    pub fn roots<I, S>(uris: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let roots: Vec<Value> = uris.into_iter().map(|u| json!({"uri": u.into()})).collect();
        Answer(json!({ "roots": roots }))
    }

    /// Any JSON as the answer, sent as it is (to test what a server does with a malformed
    /// one).
    pub fn json(value: Value) -> Self {
        Answer(value)
    }

    /// The answer as sent.
    pub fn as_json(&self) -> &Value {
        &self.0
    }
}

/// One request that may take `input_required` rounds: its method, its params (without
/// the round's answers and state), and what the first round carries.
#[derive(Debug, Clone)]
pub(super) struct Rounds {
    pub(super) method: &'static str,
    pub(super) params: Map<String, Value>,
    /// `inputResponses` of the first round, when given by hand.
    pub(super) responses: Option<Map<String, Value>>,
    /// `requestState` of the first round, when given by hand.
    pub(super) state: Option<Value>,
    /// Why the params could not be built (reported when the request is sent).
    pub(super) invalid: Option<String>,
}

impl Rounds {
    /// A request for `method` naming its target: `params[field] = target`.
    pub(super) fn new(method: &'static str, field: &str, target: &str) -> Self {
        let mut params = Map::new();
        params.insert(field.to_owned(), Value::String(target.to_owned()));
        Rounds {
            method,
            params,
            responses: None,
            state: None,
            invalid: None,
        }
    }

    pub(super) fn meta(&mut self, key: &str, value: Value) {
        let meta = self
            .params
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(m) = meta {
            m.insert(key.to_owned(), value);
        }
    }

    pub(super) fn input_response(&mut self, key: &str, answer: Answer) {
        self.responses
            .get_or_insert_with(Map::new)
            .insert(key.to_owned(), answer.0);
    }

    /// Sends the request and answers its rounds with the client's callback; the final
    /// response, a JSON-RPC error included.
    pub(super) async fn run(self, client: &TestClient) -> Result<Response, TestError> {
        if let Some(why) = self.invalid {
            return Err(unexpected(why));
        }
        let (mut responses, mut state) = (self.responses, self.state);
        for _ in 0..MAX_ROUNDS {
            let mut params = self.params.clone();
            if let Some(r) = responses.take() {
                params.insert("inputResponses".into(), Value::Object(r));
            }
            if let Some(s) = state.take() {
                params.insert("requestState".into(), s);
            }
            let response = client.request(self.method, Value::Object(params)).await?;
            let Ok(result) = response.result() else {
                return Ok(response);
            };
            if result.get("resultType").and_then(Value::as_str) != Some("input_required") {
                return Ok(response);
            }
            let asked: InputRequiredResult = response.decode()?;
            let answers =
                answer_all(client, &asked).ok_or(TestError::InputRequired(asked.clone()))?;
            responses = (!answers.is_empty()).then_some(answers);
            state = asked.request_state.map(Value::String);
        }
        Err(unexpected(format!(
            "{} still asks for input after {MAX_ROUNDS} rounds",
            self.method
        )))
    }
}

/// The callback's answers to every request of a round; `None` when one is unanswered (or
/// there is no callback and the round asks for something).
fn answer_all(client: &TestClient, asked: &InputRequiredResult) -> Option<Map<String, Value>> {
    let requests = asked.input_requests.as_ref().filter(|r| !r.is_empty());
    let Some(requests) = requests else {
        // Only a state: retry at once (load shedding, a rolling upgrade).
        return Some(Map::new());
    };
    let answer = client.answerer.as_ref()?;
    requests
        .iter()
        .map(|(key, request): (&String, &InputRequest)| {
            answer(key, request).map(|a| (key.clone(), a.0))
        })
        .collect()
}
