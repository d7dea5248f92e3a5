//! The method families that run a handler, one file each: `tools/call` ([`tools`]),
//! `resources/read` ([`resources`]), `prompts/get` ([`prompts`]) and
//! `completion/complete` ([`completion`]); and `skills/get` ([`skills`]), which runs none. Each reads and checks its params, finds its
//! handler in the registry and hands it to the runner. (The lists, `server/discover` and
//! `subscriptions/listen` are answered by the ladder from `lists` and `listen`; the Tasks
//! extension's `tasks/*` by the task family, through `family`.)

pub(super) mod completion;
pub(super) mod prompts;
pub(super) mod resources;
pub(super) mod skills;
pub(super) mod tools;

use std::future::Future;

use http::Extensions;
use serde::Serialize;

use super::Server;
use super::ask::{Ask, Invoke};
use super::mrtr::Retry;
use super::outcome::Outcome;
use crate::handler::RequestContext;
use crate::handler::context_meta::ContextMeta;
use crate::handler::input::Stop;
use crate::protocol::{RequestId, StampResult};

/// What the ladder hands a method family that runs a handler which may ask for input: the
/// core, the request id, the `_meta` the handler's context is made of, the request's
/// extensions, and how its era asks the client for input.
pub(super) struct Call<'a> {
    pub(super) server: &'a Server,
    pub(super) id: &'a RequestId,
    pub(super) meta: ContextMeta,
    pub(super) extensions: Extensions,
    pub(super) ask: &'a Ask,
}

impl Call<'_> {
    /// Runs `invoke` with what the retry brought, the way the request's era asks.
    fn run<T, A, G, Fut>(self, retry: Retry, invoke: Invoke<A, G>) -> Outcome
    where
        T: Serialize + StampResult + Send + 'static,
        A: Clone + Send + 'static,
        G: Fn(RequestContext, A) -> Fut + Send + 'static,
        Fut: Future<Output = Result<T, Stop>> + Send + 'static,
    {
        let Call {
            server,
            id,
            meta,
            extensions,
            ask,
        } = self;
        super::runner::run_asking(server, id.clone(), meta, extensions, retry, ask, invoke)
    }
}
