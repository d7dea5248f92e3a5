//! Multi-round-trip requests (MRTR): what a retry brings (`inputResponses`, an opened
//! `requestState`), the replay-store claim a single-use state needs before its retry runs,
//! and turning a handler's [`InputRequired`] into a sealed `input_required` result.
//!
//!
//! The [`Sealer`] owns what that needs: the key ring, the state's lifetime and the replay
//! store.

use bytes::Bytes;
use http::Extensions;

use super::envelope::ParamsView;
use super::reply::Reply;
use super::seal::{self, Binding, PendingArguments, PendingBinding, SingleUse};
use crate::Error;
use crate::handler::input::parse_responses;
use crate::handler::{Input, InputRequired, Principal};
use crate::protocol::strict::json_str;
use crate::protocol::{ClientCapabilities, ErrorObject, InputRequiredResult, RequestId};

/// What a method that may answer `input_required` knows of its retry: the binding for
/// sealing or opening a state, the client's answers and state, and the claim a single-use
/// state needs before the handler runs.
pub(crate) struct Retry {
    pub(crate) binding: PendingBinding,
    pub(crate) input: Input,
    pub(crate) single_use: Option<SingleUse>,
}

/// Sealing and opening `requestState`, and claiming single-use states: the key ring, how
/// long a sealed state lives, and the store that remembers claimed ids.
pub(crate) struct Sealer {
    keys: super::StateKeys,
    ttl: std::time::Duration,
    replay: std::sync::Arc<dyn crate::backends::replay::ReplayStore>,
}

impl Sealer {
    /// A sealer over `keys`, sealing states that live `ttl`, claiming in `replay`.
    pub(crate) fn new(
        keys: super::StateKeys,
        ttl: std::time::Duration,
        replay: std::sync::Arc<dyn crate::backends::replay::ReplayStore>,
    ) -> Self {
        Sealer { keys, ttl, replay }
    }

    /// The key ring (the wings seal their own tokens with it, by purpose).
    pub(crate) fn keys(&self) -> &super::StateKeys {
        &self.keys
    }

    /// Reads what a retry brings: `inputResponses` (structure checked) and `requestState`
    /// (opened with the key ring and checked against this request and caller). Both are
    /// `-32602` when invalid.
    pub(crate) fn retry_input(
        &self,
        method: &'static str,
        target: Bytes,
        arguments: PendingArguments,
        view: &ParamsView<'_>,
        extensions: &Extensions,
    ) -> Result<Retry, ErrorObject> {
        let binding = PendingBinding::new(method, target, arguments, extensions.get::<Principal>());
        let responses = parse_responses(view.input_responses)?;
        let mut single_use = None;
        let state = match view.request_state {
            None => None,
            Some(raw) => {
                let token = json_str(raw).ok_or_else(|| {
                    ErrorObject::invalid_params("Invalid requestState: it must be a string")
                })?;
                let opened = self
                    .keys
                    .open(&token, &binding.resolve())
                    .inspect_err(|e| {
                        let reason = e
                            .data
                            .as_ref()
                            .and_then(|d| d["reason"].as_str())
                            .and_then(seal::reason_label)
                            .unwrap_or("other");
                        crate::observability::metrics::record_request_state_rejected(reason);
                    })?;
                single_use = opened.single_use;
                Some(opened.state)
            }
        };
        Ok(Retry {
            binding,
            input: Input { responses, state },
            single_use,
        })
    }

    /// Claims a single-use state in the replay store: refused `-32602` (`replayed`) when it
    /// was used before, the store-unavailable answer (503, retryable) when the store cannot
    /// answer (fail closed).
    pub(crate) async fn claim(
        &self,
        id: &RequestId,
        method: &str,
        claim: &SingleUse,
    ) -> Result<(), Reply> {
        match self.replay.claim(&claim.id, claim.expires).await {
            Ok(true) => Ok(()),
            Ok(false) => {
                crate::observability::metrics::record_request_state_rejected("replayed");
                Err(Reply::error(Some(id.clone()), seal::replayed()))
            }
            Err(e) => {
                crate::observability::metrics::record_replay_store_error();
                tracing::debug!(request_id = %id, method, "single-use requestState could not be checked");
                Err(Reply::store_unavailable(Some(id.clone()), "replay", &e))
            }
        }
    }

    /// Turns a handler's request for input into the result: refused with `-32021` when the
    /// client lacks a capability it needs, state sealed and bound to this request.
    pub(crate) fn input_required(
        &self,
        ask: InputRequired,
        binding: &Binding,
        caps: &ClientCapabilities,
    ) -> Result<InputRequiredResult, Error> {
        if let Some(required) = ask.missing_capabilities(caps) {
            return Err(Error::missing_client_capability(&required));
        }
        let state = match ask.state {
            Some(Ok(value)) => Some(self.keys.seal(binding, value, self.ttl, ask.single_use)?),
            Some(Err(e)) => {
                return Err(Error::internal(format!(
                    "requestState did not serialize: {e}"
                )));
            }
            None => None,
        };
        let requests = (!ask.requests.is_empty()).then_some(ask.requests);
        if requests.is_none() && state.is_none() {
            return Err(Error::internal(
                "a handler answered input_required with neither input requests nor state",
            ));
        }
        // Stamped with the serverInfo when it is sent (Reply::stamped).
        Ok(InputRequiredResult::new(requests, state))
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use serde_json::{Value, json};

    use super::super::test_support::{answer, request};
    use super::*;
    use crate::handler::{HandlerError, RequestContext, ToolDef};
    use crate::protocol::JsonObject;
    use crate::protocol::methods::TOOLS_CALL;
    use crate::server::Outcome;
    use crate::server::Server;

    /// A tool that asks for state once (single-use), then answers with it.
    fn server() -> Server {
        let schema: JsonObject = serde_json::from_str(r#"{"type":"object"}"#).unwrap();
        Server::builder()
            .tool(ToolDef::new("once").input_schema(schema).raw_handler(
                |ctx: RequestContext, _args: Value| async move {
                    match ctx.input().state::<u32>() {
                        Some(n) => Ok(format!("step {n}")),
                        None => Err(HandlerError::from(
                            InputRequired::new().state(&2).single_use(),
                        )),
                    }
                },
            ))
            .build()
            .unwrap()
    }

    fn call(server: &Server, state: Option<&str>) -> Outcome {
        let rest = match state {
            Some(s) => format!(r#""name":"once","requestState":{}"#, json!(s)),
            None => r#""name":"once""#.to_owned(),
        };
        server.handle(
            &Bytes::from(request(TOOLS_CALL, &rest)),
            None,
            Extensions::new(),
        )
    }

    #[tokio::test]
    async fn a_single_use_state_runs_once() {
        let s = server();
        let first = answer(call(&s, None)).await;
        assert_eq!(first["result"]["resultType"], "input_required");
        let state = first["result"]["requestState"].as_str().unwrap().to_owned();
        let retry = answer(call(&s, Some(&state))).await;
        assert_eq!(retry["result"]["content"][0]["text"], "step 2");
        let replay = answer(call(&s, Some(&state))).await;
        assert_eq!(replay["error"]["code"], -32602);
        assert_eq!(replay["error"]["data"]["reason"], "replayed");
    }

    #[tokio::test]
    async fn claims_are_first_come_and_fail_closed_only_on_the_store() {
        let s = server();
        let claim = SingleUse {
            id: "abc".into(),
            expires: std::time::SystemTime::now() + std::time::Duration::from_secs(60),
        };
        let id = RequestId::from(9);
        assert!(s.sealer().claim(&id, TOOLS_CALL, &claim).await.is_ok());
        let refused = s.sealer().claim(&id, TOOLS_CALL, &claim).await.unwrap_err();
        assert_eq!(refused.error_code, Some(-32602));
        let v: Value = serde_json::from_slice(&refused.to_bytes()).unwrap();
        assert_eq!(v["id"], 9);
        assert_eq!(v["error"]["data"]["reason"], "replayed");
    }

    fn view_with_state(raw: &str) -> Box<serde_json::value::RawValue> {
        serde_json::value::RawValue::from_string(raw.to_owned()).unwrap()
    }

    #[test]
    fn retry_input_opens_what_input_required_sealed() {
        let s = server();
        let binding = PendingBinding::new(
            TOOLS_CALL,
            Bytes::from_static(b"once"),
            PendingArguments::Raw(None),
            None,
        );
        let ask = InputRequired::new().state(&json!({"k": 1})).single_use();
        let result = s
            .sealer()
            .input_required(ask, &binding.resolve(), &ClientCapabilities::default())
            .unwrap();
        let token = serde_json::to_value(&result).unwrap()["requestState"]
            .as_str()
            .unwrap()
            .to_owned();
        let raw = view_with_state(&json!(token).to_string());
        let view = ParamsView {
            request_state: Some(&raw),
            ..ParamsView::default()
        };
        let retry = s
            .sealer()
            .retry_input(
                TOOLS_CALL,
                Bytes::from_static(b"once"),
                PendingArguments::Raw(Some(Bytes::from_static(b"{}"))),
                &view,
                &Extensions::new(),
            )
            .unwrap();
        assert_eq!(retry.input.state::<Value>(), Some(json!({"k": 1})));
        assert!(retry.single_use.is_some());
        // The same state for another tool name is refused.
        let err = s
            .sealer()
            .retry_input(
                TOOLS_CALL,
                Bytes::from_static(b"other"),
                PendingArguments::Raw(None),
                &view,
                &Extensions::new(),
            )
            .err()
            .unwrap();
        assert_eq!(err.data.unwrap()["reason"], "wrong_params");
        let not_a_string = view_with_state("7");
        let view = ParamsView {
            request_state: Some(&not_a_string),
            ..ParamsView::default()
        };
        let err = s
            .sealer()
            .retry_input(
                TOOLS_CALL,
                Bytes::from_static(b"once"),
                PendingArguments::Raw(None),
                &view,
                &Extensions::new(),
            )
            .err()
            .unwrap();
        assert_eq!(err.code, -32602);
    }

    #[test]
    fn input_required_needs_something_to_ask_and_a_capable_client() {
        let s = server();
        let b = PendingBinding::new(
            TOOLS_CALL,
            Bytes::from_static(b"once"),
            PendingArguments::Raw(None),
            None,
        )
        .resolve();
        let caps = ClientCapabilities::default();
        let empty = s
            .sealer()
            .input_required(InputRequired::new(), &b, &caps)
            .unwrap_err();
        assert_eq!(empty.kind(), crate::ErrorKind::Internal);
        let roots = InputRequired::new().list_roots("r");
        let missing = s.sealer().input_required(roots, &b, &caps).unwrap_err();
        assert_eq!(missing.to_wire().code, -32021);
    }
}
