//! The same multi-round-trip handler code, for a legacy client: an `InputRequired` answer
//! becomes server-to-client requests on the request's own SSE stream, the framework waits
//! for the client's answers (POSTed to any replica, routed here by [`Pending`]) and runs the
//! handler again with them and its state, in this process (the state is never sealed: it
//! does not leave the replica).
//!
//! Only requests the session's client capabilities allow are sent; otherwise the call fails
//! with `-32021` as on the 2026 path. A client that does not answer within the input
//! timeout fails the call with a clear error; a client that disconnects cancels it (the
//! stream, and with it this future, is dropped). The rounds themselves are the core's
//! ([`Ask::OverStream`](crate::server::Ask)); this is the half that talks to the client.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use serde_json::Value;

use super::pending::{Pending, Waiting};
use crate::Error;
use crate::handler::{Input, InputRequired, RequestContext};
use crate::notify::Notifier;
use crate::protocol::legacy::ServerRequest;
use crate::protocol::{ClientIdentity, InputRequest, JsonObject};
use crate::server::AskClient;

/// What running a handler for a legacy session needs to ask its client.
pub(crate) struct Asker {
    /// The session's store key.
    pub(crate) session: Arc<str>,
    /// The session's client (what it may be asked is what it declared).
    pub(crate) identity: Arc<ClientIdentity>,
    pub(crate) timeout: Duration,
    pub(crate) pending: Arc<Pending>,
    pub(crate) notifier: Notifier,
}

fn method_of(request: &InputRequest) -> &'static str {
    match request {
        InputRequest::Elicit(_) => crate::protocol::ELICITATION_CREATE,
        InputRequest::CreateMessage(_) => crate::protocol::SAMPLING_CREATE_MESSAGE,
        InputRequest::ListRoots(_) => crate::protocol::ROOTS_LIST,
    }
}

/// The params a request is sent with (`InputRequest` is serialized as `{method, params}`).
fn params_of(request: &InputRequest) -> Result<Value, Error> {
    let mut v = serde_json::to_value(request).map_err(Error::internal_from)?;
    Ok(v.get_mut("params")
        .map(Value::take)
        .unwrap_or(Value::Object(JsonObject::new())))
}

impl AskClient for Asker {
    fn ask<'a>(
        &'a self,
        ctx: &'a RequestContext,
        ask: InputRequired,
    ) -> BoxFuture<'a, Result<Input, Error>> {
        Box::pin(self.round(ctx, ask))
    }
}

impl Asker {
    /// Sends one round of input requests and waits for every answer.
    async fn round(&self, ctx: &RequestContext, ask: InputRequired) -> Result<Input, Error> {
        if let Some(required) = ask.missing_capabilities(&self.identity.capabilities) {
            return Err(Error::missing_client_capability(&required));
        }
        let state = match ask.state {
            None => None,
            Some(Ok(v)) => Some(v),
            Some(Err(e)) => {
                return Err(Error::internal(format!(
                    "requestState did not serialize: {e}"
                )));
            }
        };
        let mut asked: Vec<(String, &'static str, Waiting)> = Vec::new();
        for (key, request) in &ask.requests {
            let waiting = self.pending.register(&self.session, &self.notifier);
            let method = method_of(request);
            let params = params_of(request)?;
            let message = serde_json::to_vec(&ServerRequest::new(&waiting.id, method, &params))
                .map_err(Error::internal_from)?;
            if !ctx.send_message(Bytes::from(message)).await {
                return Err(Error::invalid_params(format!(
                    "{} needs to send {method} to the client, which needs an SSE response: \
                     send Accept: application/json, text/event-stream",
                    ctx.method()
                )));
            }
            asked.push((key.clone(), method, waiting));
        }
        let mut responses = JsonObject::new();
        let timeout = self.timeout;
        let answers = async {
            for (key, method, waiting) in &mut asked {
                let text = waiting.answer().await.ok_or_else(|| {
                    Error::internal(format!("the wait for the answer to {method} was abandoned"))
                })?;
                responses.insert(key.clone(), read_answer(method, &text)?);
            }
            Ok::<_, Error>(())
        };
        match tokio::time::timeout(timeout, answers).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(e),
            Err(_) => {
                let methods: Vec<&str> = asked.iter().map(|(_, m, _)| *m).collect();
                return Err(Error::internal_visible(format!(
                    "The client did not answer {} within {} s",
                    methods.join(", "),
                    timeout.as_secs()
                )));
            }
        }
        Ok(Input { responses, state })
    }
}

/// The `result` of a client's answer; its `error` fails the call with the client's message.
fn read_answer(method: &str, text: &str) -> Result<Value, Error> {
    let answer: Value = serde_json::from_str(text)
        .map_err(|_| Error::invalid_params(format!("the answer to {method} is not JSON")))?;
    if let Some(result) = answer.get("result").filter(|r| r.is_object()) {
        return Ok(result.clone());
    }
    let why = answer
        .pointer("/error/message")
        .and_then(Value::as_str)
        .unwrap_or("no result");
    Err(Error::internal_visible(format!(
        "The client answered {method} with an error: {why}"
    )))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn answers_are_results_or_the_clients_error() {
        assert_eq!(
            read_answer(
                "roots/list",
                r#"{"jsonrpc":"2.0","id":"a.1.x","result":{"roots":[]}}"#
            )
            .unwrap(),
            json!({"roots": []})
        );
        let e = read_answer(
            "sampling/createMessage",
            r#"{"jsonrpc":"2.0","id":"a.1.x","error":{"code":-1,"message":"user declined"}}"#,
        )
        .unwrap_err();
        assert!(e.message().contains("user declined"), "{e}");
        assert!(read_answer("roots/list", "[").is_err());
    }

    #[test]
    fn requests_are_sent_with_their_method_and_params() {
        let ask = InputRequired::new().list_roots("r").elicit_form(
            "f",
            "Name?",
            json!({"type": "object"}),
        );
        let sent: Vec<(&str, Value)> = ask
            .requests()
            .values()
            .map(|r| (method_of(r), params_of(r).unwrap()))
            .collect();
        assert_eq!(sent[0].0, "elicitation/create");
        assert_eq!(sent[0].1["message"], "Name?");
        assert_eq!(sent[1], ("roots/list", json!({})));
    }
}
