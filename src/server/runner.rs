//! The handler runner: every method that runs a handler goes through [`run`], which
//! builds its [`RequestContext`], cancels it when the reply is dropped, isolates panics
//! (`-32603`, logged), stamps `serverInfo` on results, turns `input_required` answers into
//! sealed results (through `mrtr`) and encodes the reply.
//!
//! The method families call it; it knows none of them.

use std::future::Future;
use std::panic::AssertUnwindSafe;

use futures_util::FutureExt as _;
use http::Extensions;
use serde::Serialize;
use tokio::sync::mpsc;

use super::Server;
use super::ask::{Ask, Invoke, rounds};
use super::mrtr::Retry;
use super::outcome::{Outcome, Running};
use super::reply::Reply;
use crate::Error;
use crate::handler::context::ContextParts;
use crate::handler::context_meta::ContextMeta;
use crate::handler::input::Stop;
use crate::handler::{Input, RequestContext};
use crate::protocol::methods::COMPLETION_COMPLETE;
use crate::protocol::{ErrorObject, RequestId, StampResult};

/// Abandons its request's context when dropped: cancels the handler's token (see
/// [`RequestContext::abandon`]) once the reply is produced or dropped.
struct AbandonOnDrop(RequestContext);

impl Drop for AbandonOnDrop {
    fn drop(&mut self) {
        self.0.abandon();
    }
}

/// Runs a handler once: its context, cancellation on drop, panic isolation, `serverInfo`
/// stamping, sealing of `input_required` answers (for the methods that may give them,
/// `mrtr` is `Some`) and encoding.
pub(crate) fn run<T, F, Fut>(
    server: &Server,
    id: RequestId,
    meta: ContextMeta,
    extensions: Extensions,
    mrtr: Option<Retry>,
    make: F,
) -> Outcome
where
    T: Serialize + StampResult + Send + 'static,
    F: FnOnce(RequestContext) -> Fut + Send + 'static,
    Fut: Future<Output = Result<T, Stop>> + Send + 'static,
{
    start(server, id, meta, extensions, mrtr, &Ask::Sealed, make)
}

/// Runs a handler that may ask its client for input, the way `ask` says: once, an
/// `InputRequired` answered `input_required` with sealed state ([`Ask::Sealed`]), or in
/// rounds whose requests travel over the request's stream ([`Ask::OverStream`]).
pub(crate) fn run_asking<T, A, G, Fut>(
    server: &Server,
    id: RequestId,
    meta: ContextMeta,
    extensions: Extensions,
    retry: Retry,
    ask: &Ask,
    invoke: Invoke<A, G>,
) -> Outcome
where
    T: Serialize + StampResult + Send + 'static,
    A: Clone + Send + 'static,
    G: Fn(RequestContext, A) -> Fut + Send + 'static,
    Fut: Future<Output = Result<T, Stop>> + Send + 'static,
{
    match ask {
        Ask::Sealed => start(server, id, meta, extensions, Some(retry), ask, move |ctx| {
            invoke.once(ctx)
        }),
        Ask::OverStream(client) => {
            let client = client.clone();
            start(server, id, meta, extensions, Some(retry), ask, move |ctx| {
                rounds(client, ctx, invoke)
            })
        }
    }
}

/// The runner itself; `ask` says whether the request's messages always need a stream.
fn start<T, F, Fut>(
    server: &Server,
    id: RequestId,
    meta: ContextMeta,
    extensions: Extensions,
    mrtr: Option<Retry>,
    ask: &Ask,
    make: F,
) -> Outcome
where
    T: Serialize + StampResult + Send + 'static,
    F: FnOnce(RequestContext) -> Fut + Send + 'static,
    Fut: Future<Output = Result<T, Stop>> + Send + 'static,
{
    // Only a request that asked for progress or log messages (or whose handler may ask
    // its legacy client for input) can have messages before its reply.
    let (tx, events) =
        if ask.streams() || meta.progress_token().is_some() || meta.log_level().is_some() {
            let (tx, rx) = mpsc::channel(server.event_buffer());
            (Some(tx), Some(rx))
        } else {
            (None, None)
        };
    let (binding, input, single_use) = match mrtr {
        Some(r) => (Some(r.binding), r.input, r.single_use),
        None => (None, Input::default(), None),
    };
    let ctx = RequestContext::new(ContextParts {
        id: id.clone(),
        method: binding.as_ref().map_or(COMPLETION_COMPLETE, |b| b.method),
        meta,
        extensions,
        cancellation: None,
        events: tx,
        input,
        notifier: server.notifier().clone(),
        states: server.states().clone(),
    });
    // What sealing an `input_required` answer needs: the binding, and the client's
    // capabilities (read through a second handle on the context, not copied up front).
    let asking = binding.map(|b| (b, ctx.clone()));
    let abandon = ctx.clone();
    let server = server.clone();
    let reply = async move {
        let _cancel_on_drop = AbandonOnDrop(abandon);
        let method = ctx.method();
        if let Some(claim) = single_use {
            if let Err(reply) = server.sealer().claim(&id, method, &claim).await {
                return reply;
            }
        }
        let handler = AssertUnwindSafe(async move { make(ctx).await }).catch_unwind();
        // The handler's own span, a child of the request span (the handler's share of the
        // request's time in a trace). Not even entered when `DEBUG` is off for this crate.
        let span = tracing::debug_span!("mcp.handler");
        let outcome = if span.is_disabled() {
            handler.await
        } else {
            tracing::Instrument::instrument(handler, span).await
        };
        match outcome {
            Ok(Ok(mut result)) => Reply::stamped(&id, &mut result, server.stamp()),
            Ok(Err(Stop::Input(ask))) => match asking {
                Some((b, asker)) => {
                    match server.sealer().input_required(
                        ask,
                        &b.resolve(),
                        asker.client_capabilities(),
                    ) {
                        Ok(mut result) => Reply::stamped(&id, &mut result, server.stamp()),
                        Err(e) => failed(id, method, e),
                    }
                }
                None => failed(
                    id,
                    method,
                    Error::internal(format!("{method} cannot answer input_required")),
                ),
            },
            Ok(Err(Stop::Error(e))) => failed(id, method, e),
            Err(panic) => {
                let what = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                tracing::error!(request_id = %id, method, panic = %what, "handler panicked");
                Reply::error(Some(id), ErrorObject::internal_error("Internal error"))
            }
        }
    };
    Outcome::Running(Running {
        reply: Box::pin(reply),
        events,
    })
}

pub(crate) fn failed(id: RequestId, method: &str, e: Error) -> Reply {
    if e.kind() == crate::ErrorKind::Internal {
        tracing::error!(request_id = %id, method, error = %e, "handler failed");
    }
    Reply::error(Some(id), e.to_wire())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::sync::oneshot;

    use super::*;
    use crate::handler::InputRequired;
    use crate::protocol::{CallToolResult, ClientCapabilities, ProgressToken, RequestMeta};

    fn meta() -> RequestMeta {
        RequestMeta::new("2026-07-28", ClientCapabilities::default())
    }

    async fn reply_of(outcome: Outcome) -> serde_json::Value {
        super::super::test_support::answer(outcome).await
    }

    #[tokio::test]
    async fn a_panicking_handler_is_an_internal_error_and_the_server_lives_on() {
        let server = Server::builder().build().unwrap();
        let outcome = run(
            &server,
            RequestId::from(3),
            meta().into(),
            Extensions::new(),
            None,
            |_ctx| async move {
                if true {
                    panic!("boom");
                }
                Ok::<_, Stop>(CallToolResult::text("never"))
            },
        );
        let v = reply_of(outcome).await;
        assert_eq!(v["id"], 3);
        assert_eq!(v["error"]["code"], -32603);
        assert_eq!(v["error"]["message"], "Internal error");
        assert!(
            !v.to_string().contains("boom"),
            "the panic stays in the log"
        );
        let again = run(
            &server,
            RequestId::from(4),
            meta().into(),
            Extensions::new(),
            None,
            |_ctx| async move { Ok::<_, Stop>(CallToolResult::text("fine")) },
        );
        assert_eq!(
            reply_of(again).await["result"]["content"][0]["text"],
            "fine"
        );
    }

    #[tokio::test]
    async fn dropping_the_reply_cancels_the_handler() {
        let server = Server::builder().build().unwrap();
        let (tx, rx) = oneshot::channel();
        let outcome = run(
            &server,
            RequestId::from(1),
            meta().into(),
            Extensions::new(),
            None,
            move |ctx| async move {
                let _ = tx.send(ctx.cancellation().clone());
                std::future::pending::<()>().await;
                Ok::<_, Stop>(CallToolResult::text("never"))
            },
        );
        let Outcome::Running(mut running) = outcome else {
            panic!("a handler runs");
        };
        assert!(running.events.is_none(), "no progress token, no log level");
        let mut rx = rx;
        let token = tokio::select! {
            _ = &mut running.reply => panic!("the handler never finishes"),
            token = &mut rx => token.unwrap(),
        };
        assert!(!token.is_cancelled());
        drop(running);
        assert!(
            token.is_cancelled(),
            "the transport went away: the handler is cancelled"
        );
    }

    #[tokio::test]
    async fn results_are_stamped_and_progress_has_a_channel() {
        let server = Server::builder().build().unwrap();
        let mut m = meta();
        m.progress_token = Some(ProgressToken::from("p"));
        let outcome = run(
            &server,
            RequestId::from(1),
            m.into(),
            Extensions::new(),
            None,
            |_ctx| async move { Ok::<_, Stop>(CallToolResult::text("ok")) },
        );
        let Outcome::Running(running) = outcome else {
            panic!("a handler runs");
        };
        assert!(running.events.is_some());
        let v: serde_json::Value = serde_json::from_slice(
            &tokio::time::timeout(Duration::from_secs(5), running.reply)
                .await
                .unwrap()
                .to_bytes(),
        )
        .unwrap();
        assert_eq!(
            v["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
            server.server_info().name.as_str()
        );
    }

    #[tokio::test]
    async fn a_method_without_mrtr_cannot_ask_for_input() {
        let server = Server::builder().build().unwrap();
        let outcome = run(
            &server,
            RequestId::from(1),
            meta().into(),
            Extensions::new(),
            None,
            |_ctx| async move { Err::<CallToolResult, _>(Stop::Input(InputRequired::new().state(&1))) },
        );
        assert_eq!(reply_of(outcome).await["error"]["code"], -32603);
    }
}
