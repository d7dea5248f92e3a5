//! Answers to the input requests of an `input_required` round ([`Answer`]).

use serde::Serialize;
use serde_json::{Value, json};

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
pub struct Answer(pub(super) Value);

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
