//! The one seam for a handler's request for input: how an [`InputRequired`] reaches the
//! client is a strategy the caller of the ladder picks by the request's era.
//!
//! - [`Ask::Sealed`] (2026-07-28): the handler's run ends; the runner answers an
//!   `input_required` result whose `requestState` is sealed (`mrtr`), and the client retries
//!   the request, on any replica, with its answers.
//! - [`Ask::OverStream`] (2025-11-25): the requests go to the client over the request's own
//!   stream through an [`AskClient`] (a wing's), the answers are awaited, and the handler runs
//!   again, here, with them and the state it set ([`rounds`]).
//!
//! The method families bind their handler to its arguments ([`Invoke`]) and hand it to the
//! runner with the strategy; they do not know which era asked.

use std::future::Future;
use std::sync::Arc;

use futures_util::future::BoxFuture;

use crate::Error;
use crate::handler::input::Stop;
use crate::handler::{Input, InputRequired, RequestContext};

/// How many rounds of input one call may ask for before it is stopped (a handler that
/// never accepts its answers would otherwise ask forever).
pub(crate) const MAX_INPUT_ROUNDS: usize = 16;

/// Puts one round of input requests to a client and waits for every answer (the 2025-11-25
/// strategy's transport half: server-to-client requests on the request's stream).
pub(crate) trait AskClient: Send + Sync + 'static {
    /// Sends the requests of `ask` and waits for all of their answers.
    fn ask<'a>(
        &'a self,
        ctx: &'a RequestContext,
        ask: InputRequired,
    ) -> BoxFuture<'a, Result<Input, Error>>;
}

/// How a handler's request for input reaches its client (see the module docs).
#[derive(Clone)]
pub(crate) enum Ask {
    /// Answered `input_required` with sealed state; the client retries (2026-07-28).
    Sealed,
    /// Sent over the request's stream and awaited, the handler run again (2025-11-25).
    OverStream(Arc<dyn AskClient>),
}

impl Ask {
    /// Whether the request's messages always need a stream (the input requests travel on
    /// it), not only when the client asked for progress or log messages.
    pub(crate) fn streams(&self) -> bool {
        matches!(self, Ask::OverStream(_))
    }

    /// Whether input is asked for by sealing (the era whose tools may run as tasks).
    pub(crate) fn is_sealed(&self) -> bool {
        matches!(self, Ask::Sealed)
    }
}

/// A handler bound to its arguments: run once (the arguments moved in), or again with each
/// round of answers (the arguments cloned for each run).
pub(crate) struct Invoke<A, G> {
    /// What the handler runs on (its handler `Arc`s, arguments, …).
    pub(crate) args: A,
    /// Runs the handler with a context and its arguments.
    pub(crate) run: G,
}

impl<A, G, Fut, T> Invoke<A, G>
where
    A: Clone,
    G: Fn(RequestContext, A) -> Fut,
    Fut: Future<Output = Result<T, Stop>>,
{
    /// Runs the handler once, its arguments moved in.
    pub(crate) fn once(self, ctx: RequestContext) -> Fut {
        (self.run)(ctx, self.args)
    }
}

/// Runs `invoke` until it stops asking for input: each `InputRequired` is put to the client
/// by `client` and `invoke` runs again with the answers and the state it set.
pub(crate) async fn rounds<A, G, Fut, T>(
    client: Arc<dyn AskClient>,
    ctx: RequestContext,
    invoke: Invoke<A, G>,
) -> Result<T, Stop>
where
    A: Clone,
    G: Fn(RequestContext, A) -> Fut,
    Fut: Future<Output = Result<T, Stop>>,
{
    let mut ctx = ctx;
    for _ in 0..MAX_INPUT_ROUNDS {
        match (invoke.run)(ctx.clone(), invoke.args.clone()).await {
            Err(Stop::Input(ask)) => {
                let input = client.ask(&ctx, ask).await.map_err(Stop::Error)?;
                ctx = ctx.with_input(input);
            }
            other => return other,
        }
    }
    Err(Stop::Error(Error::internal(format!(
        "{} asked for input {MAX_INPUT_ROUNDS} times without finishing",
        ctx.method()
    ))))
}
