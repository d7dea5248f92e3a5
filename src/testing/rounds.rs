//! The rounds of a request that may take `input_required` rounds ([`Rounds`]): send, answer
//! what the server asks, retry with the answers and the echoed `requestState`, until the
//! result is complete.

use serde_json::{Map, Value};

use super::answer::Answer;
use super::client::TestClient;
use super::error::{TestError, unexpected};
use super::exchange::Response;
use crate::protocol::{InputRequest, InputRequiredResult};

/// The most `input_required` rounds one call answers before it gives up
/// ([`TestError::InputRequired`]).
const MAX_ROUNDS: usize = 16;

/// One request that may take `input_required` rounds: its method, its params (without
/// the round's answers and state), and what the first round carries.
#[derive(Debug, Clone)]
pub(super) struct Rounds {
    /// The method sent.
    pub(super) method: &'static str,
    /// Its params, without the round's answers and state.
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

    /// Adds `key` to the request's `_meta`.
    pub(super) fn meta(&mut self, key: &str, value: Value) {
        let meta = self
            .params
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(m) = meta {
            m.insert(key.to_owned(), value);
        }
    }

    /// Sends `answer` for the input request `key` with the first round.
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
