//! For those who extend the framework rather than use it: writing a transport, a
//! notification bus or a store, or a handler that implements its trait by hand.
//!
//! - **A transport** hands each incoming message to [`Server::handle`](crate::Server::handle)
//!   (or calls the [`Server`](crate::Server) as a `tower::Service` of [`Incoming`]) with the
//!   values of its mirrored headers ([`MirroredHeaders`], `None` when it has no headers, as
//!   on stdio), and gets an [`Outcome`]: accepted (a notification), a ready [`Reply`] (its
//!   JSON in one or more chunks to send in order, [`Reply::chunks`]: a pre-encoded list page
//!   is referenced, not copied), a [`Running`] handler whose notifications it relays before
//!   the reply, or a [`Listen`] stream. `crate::transport::http` and
//!   `crate::transport::stdio` are the two built in.
//! - **A bus** implements [`NotifyBus`] (publish an event; subscribe with a
//!   [`BusReceiver`]; [`Delivery`] and [`Fanout`] are the in-process halves every bus
//!   shares); wrap it in a [`Notifier`](crate::notify::Notifier). Events are at most
//!   [`MAX_EVENT_BYTES`] encoded.
//! - **A replay store** implements [`ReplayStore`] (claim a single-use state id once).
//! - **An idempotency store** implements [`IdempotencyStore`] (claim a call's key, keep its
//!   first result; [`IdempotencyClaim`] is what a claim finds).
//! - **An event store** implements [`EventStore`] (append the events of a resumable
//!   2025-11-25 stream, read those after a `Last-Event-ID`; [`StoredEvent`] is one).
//! - **A rate store** implements [`RateStore`] (charge a request to its budgets).
//! - **A session store** implements [`SessionStore`]: the settings ([`SessionSettings`])
//!   and revocations of 2025-11-25 sessions, shared by the replicas; a session holds at most
//!   [`MAX_SESSION_SUBSCRIPTIONS`] subscriptions.
//! - **A task store** implements [`TaskStore`](crate::tasks::TaskStore) (see
//!   [`crate::tasks`] for its contract); [`fail_lapsed`] is the sweep every replica runs
//!   over it, which its contract tests can run too.
//! - **A handler by hand** implements [`ToolHandler`], [`ResourceHandler`],
//!   [`PromptHandler`] or [`CompletionHandler`] and is registered with the definitions'
//!   `with_handler` (or `ServerBuilder::completion_handler`).
//!
//! The backends that ship (every bus and store) are in [`crate::backends`].

pub use crate::backends::bus::{BusReceiver, Delivery, Fanout, MAX_EVENT_BYTES, NotifyBus};
pub use crate::backends::events::{EventStore, StoredEvent};
pub use crate::backends::idempotency::{IdempotencyClaim, IdempotencyStore};
pub use crate::backends::rate::RateStore;
pub use crate::backends::replay::ReplayStore;
pub use crate::handler::{CompletionHandler, PromptHandler, ResourceHandler, ToolHandler};
pub use crate::legacy::store::{MAX_SESSION_SUBSCRIPTIONS, SessionSettings, SessionStore};
pub use crate::server::{Incoming, Listen, Mirrored, MirroredHeaders, Outcome, Reply, Running};
pub use crate::tasks::fail_lapsed;
