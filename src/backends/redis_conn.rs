//! Neutral Redis plumbing (feature `redis`) for every Redis backend: the notification bus
//! (`RedisBus`), the replay store (`RedisReplayStore`), the task store
//! (`tasks::RedisTaskStore`) and the shared stores to come. One lazily connected
//! [`ConnectionManager`] per backend, configured to fail fast rather than queue, and
//! [`query_reconnecting`], which survives one dropped connection. A shared store's
//! connection is a [`StoreConn`]: the same, behind a circuit [`Breaker`], so that once Redis
//! is known to be unreachable its calls fail at once rather than each waiting for a timeout.
//!
//! Every round trip is a `DEBUG` span ([`round_trip_span`]): a client span named
//! `redis {command}` per the OpenTelemetry database conventions, a child of the request's
//! span in an exported trace.

use std::future::Future;
use std::time::Duration;

use redis::ErrorKind;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use tracing::Span;
use tracing::field::Empty;

use crate::Error;
use crate::backends::breaker::{Breaker, RETRY_EVERY};
use crate::backends::redact::redacted_url;
use crate::observability::metrics;

/// How long one connect, or one command's answer, may take.
pub(crate) const IO_TIMEOUT: Duration = Duration::from_secs(2);

/// A Redis backend's connection, made on first use and re-made when lost.
pub(crate) struct Lazy {
    /// The client, for connections the manager does not cover (pub/sub).
    pub(crate) client: redis::Client,
    /// The multiplexed command connection.
    pub(crate) manager: ConnectionManager,
    /// The URL without credentials, for logs and errors.
    pub(crate) target: String,
    /// The runtime the caller runs in (for background tasks).
    pub(crate) runtime: tokio::runtime::Handle,
}

impl Lazy {
    /// The pub/sub namespace this connection reaches: the server's address and the user
    /// (whose ACL decides where it may publish). Pub/sub ignores the database number, so
    /// `redis://h/1` and `redis://h:6379/2` reach the same one.
    pub(crate) fn pubsub_scope(&self) -> String {
        let info = self.client.get_connection_info();
        let user = info.redis_settings().username().unwrap_or("default");
        format!("redis {} user={user}", info.addr())
    }
}

/// Opens a lazy connection to the Redis at `url` for `who` (named in the error when there is
/// no Tokio runtime, e.g. `RedisBus::connect`).
///
/// # Errors
/// An invalid URL, or no Tokio runtime.
pub(crate) fn connect_lazy(url: &str, who: &str) -> Result<Lazy, Error> {
    let target = redacted_url(url);
    let client = redis::Client::open(url)
        .map_err(|e| Error::invalid_definition(format!("invalid Redis URL {target}: {e}")))?;
    let runtime = tokio::runtime::Handle::try_current().map_err(|_| {
        Error::invalid_definition(format!("{who} must be called within a Tokio runtime"))
    })?;
    let manager = ConnectionManager::new_lazy_with_config(client.clone(), manager_config())
        .map_err(|e| Error::unavailable(format!("Redis at {target}"), e))?;
    Ok(Lazy {
        client,
        manager,
        target,
        runtime,
    })
}

/// The settings of every Redis connection manager here: fail fast rather than queue.
fn manager_config() -> ConnectionManagerConfig {
    ConnectionManagerConfig::new()
        .set_connection_timeout(Some(IO_TIMEOUT))
        .set_response_timeout(Some(IO_TIMEOUT))
        .set_number_of_retries(1)
        .set_max_delay(Duration::from_millis(500))
}

/// How long a probe of an unreachable Redis may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(1);

/// A shared store's Redis connection: the lazy [`ConnectionManager`] behind a circuit
/// [`Breaker`]. Clones share both.
#[derive(Clone)]
pub(crate) struct StoreConn {
    manager: ConnectionManager,
    breaker: Breaker,
}

/// Why a call was refused without being tried: the breaker is open.
#[derive(Debug)]
pub(crate) struct CircuitOpen;

impl std::fmt::Display for CircuitOpen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("not tried: Redis did not answer recently (circuit open, probing)")
    }
}

impl std::error::Error for CircuitOpen {}

impl Lazy {
    /// This connection as the store `store` (its metric label: `sessions`, `tasks`, …) uses
    /// it, behind a breaker that PINGs every [`RETRY_EVERY`] while open.
    pub(crate) fn for_store(&self, store: &'static str) -> StoreConn {
        let manager = self.manager.clone();
        let probing = self.manager.clone();
        let probe = Box::new(move || {
            let mut conn = probing.clone();
            let ping: futures_util::future::BoxFuture<'static, bool> = Box::pin(async move {
                let cmd = redis::cmd("PING");
                matches!(
                    tokio::time::timeout(PROBE_TIMEOUT, cmd.query_async::<String>(&mut conn)).await,
                    Ok(Ok(_))
                )
            });
            ping
        });
        StoreConn {
            manager,
            breaker: Breaker::new(store, RETRY_EVERY, self.runtime.clone(), probe),
        }
    }
}

impl StoreConn {
    /// The connection to send a command on, unless the breaker is open: then the
    /// unavailable error to answer at once (counted, `cause="breaker_open"`).
    ///
    /// # Errors
    /// [`ErrorKind::Unavailable`](crate::ErrorKind::Unavailable) while the breaker is open.
    pub(crate) fn admit(
        &self,
        context: impl FnOnce() -> String,
    ) -> Result<ConnectionManager, Error> {
        if self.breaker.is_open() {
            metrics::record_store_unavailable(self.breaker.store(), "breaker_open");
            return Err(Error::unavailable(context(), CircuitOpen));
        }
        Ok(self.manager.clone())
    }

    /// A call failed for want of Redis (`cause`: `timeout` or `error`): counted, and the
    /// breaker opens.
    pub(crate) fn failed(&self, cause: &'static str) {
        metrics::record_store_unavailable(self.breaker.store(), cause);
        self.breaker.trip();
    }

    /// [`query_reconnecting`] behind the breaker: refused at once while it is open; a
    /// timeout or a connection that cannot be made opens it.
    pub(crate) async fn query<T: redis::FromRedisValue>(
        &self,
        cmd: &redis::Cmd,
        context: String,
    ) -> Result<T, Error> {
        let mut conn = self.admit(|| context.clone())?;
        match query_with_cause(&mut conn, cmd, self.breaker.store(), context).await {
            Ok(value) => Ok(value),
            Err((e, Some(cause))) => {
                self.failed(cause);
                Err(e)
            }
            Err((e, None)) => Err(e),
        }
    }
}

/// Why `e` means Redis could not be reached: `timeout`, `error`; `None` when Redis answered
/// (a script error, a wrong type): it is there.
pub(crate) fn cause_of(e: &redis::RedisError) -> Option<&'static str> {
    match e.kind() {
        ErrorKind::Server(_)
        | ErrorKind::Parse
        | ErrorKind::UnexpectedReturnType
        | ErrorKind::Extension => None,
        _ if e.is_timeout() => Some("timeout"),
        _ => Some("error"),
    }
}

/// The span of one round trip of `cmd` for `user` (the store's metric label, `sessions`,
/// `tasks`…, or `bus`): named `redis {command}`, a client span with the OpenTelemetry
/// database attributes `db.system.name` (`redis`) and `db.operation.name` (the command), and
/// `mcp.store` (`user`), a child of the current span; none outside any span
/// ([`inside_a_span`](crate::observability::inside_a_span)). Nothing is formatted unless a
/// subscriber records `DEBUG` spans of this crate: otherwise this costs a check of the level.
pub(crate) fn round_trip_span(cmd: &redis::Cmd, user: &'static str) -> Span {
    if !crate::observability::inside_a_span() {
        return Span::none();
    }
    let operation = match cmd.args_iter().next() {
        Some(redis::Arg::Simple(name)) => std::str::from_utf8(name).unwrap_or("?"),
        _ => "?",
    };
    tracing::debug_span!(
        "redis",
        otel.name = format!("redis {operation}"),
        otel.kind = "client",
        otel.status_code = Empty,
        db.system.name = "redis",
        db.operation.name = operation,
        mcp.store = user,
        error.type = Empty,
    )
}

/// Runs `round_trip` (one round trip of `cmd` for `user`) in its [`round_trip_span`], for
/// a caller that talks to Redis without [`StoreConn::query`] or [`query_reconnecting`].
pub(crate) async fn traced<F: Future>(
    cmd: &redis::Cmd,
    user: &'static str,
    round_trip: F,
) -> F::Output {
    let span = round_trip_span(cmd, user);
    if span.is_disabled() {
        round_trip.await
    } else {
        tracing::Instrument::instrument(round_trip, span).await
    }
}

/// Runs `cmd` for `user` (see [`round_trip_span`]), once more if the connection turns out
/// broken (Redis restarted or failed over since the last command; the manager re-makes it
/// after the first failure). A command whose first attempt did reach Redis runs twice:
/// callers make sure that is harmless.
pub(crate) async fn query_reconnecting<T: redis::FromRedisValue>(
    conn: &mut ConnectionManager,
    cmd: &redis::Cmd,
    user: &'static str,
    context: String,
) -> Result<T, Error> {
    query_with_cause(conn, cmd, user, context)
        .await
        .map_err(|(e, _)| e)
}

/// [`query_reconnecting`], saying why it failed when Redis is the cause: `timeout`, or
/// `error` (the connection is lost or cannot be made); `None` when Redis answered an error.
/// A failure is the span's error (`error.type`: the cause, or `redis` for an error answer).
async fn query_with_cause<T: redis::FromRedisValue>(
    conn: &mut ConnectionManager,
    cmd: &redis::Cmd,
    user: &'static str,
    context: String,
) -> Result<T, (Error, Option<&'static str>)> {
    let span = round_trip_span(cmd, user);
    if span.is_disabled() {
        return attempts(conn, cmd, context).await;
    }
    let result = tracing::Instrument::instrument(attempts(conn, cmd, context), span.clone()).await;
    if let Err((_, cause)) = &result {
        span.record("error.type", cause.unwrap_or("redis"));
        span.record("otel.status_code", "ERROR");
    }
    result
}

/// The attempts of [`query_with_cause`].
async fn attempts<T: redis::FromRedisValue>(
    conn: &mut ConnectionManager,
    cmd: &redis::Cmd,
    context: String,
) -> Result<T, (Error, Option<&'static str>)> {
    let mut last = String::new();
    for _ in 0..2 {
        match tokio::time::timeout(IO_TIMEOUT * 2, cmd.query_async::<T>(conn)).await {
            Ok(Ok(value)) => return Ok(value),
            // A hung Redis is not a dropped connection: asking again would only wait again.
            Ok(Err(e)) if e.is_timeout() => {
                return Err((Error::unavailable(context, e), Some("timeout")));
            }
            Ok(Err(e)) if e.is_connection_dropped() || e.is_io_error() => last = e.to_string(),
            Ok(Err(e)) => {
                let cause = cause_of(&e);
                return Err((Error::unavailable(context, e), cause));
            }
            Err(_) => return Err((Error::unavailable(context, "timed out"), Some("timeout"))),
        }
    }
    Err((Error::unavailable(context, last), Some("error")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_urls_and_missing_runtimes_are_definition_errors() {
        let e = connect_lazy("http://nope", "X::connect").err().unwrap();
        assert_eq!(e.kind(), crate::ErrorKind::InvalidDefinition);
        assert!(!e.to_string().contains("secret"));
        let e = connect_lazy("redis://:secret@127.0.0.1:1", "X::connect")
            .err()
            .unwrap();
        assert!(
            e.to_string()
                .contains("X::connect must be called within a Tokio runtime")
        );
        assert!(!e.to_string().contains("secret"), "{e}");
    }

    #[tokio::test]
    async fn a_lazy_connection_hides_credentials() {
        let lazy = connect_lazy("redis://:secret@127.0.0.1:1/0", "X::connect").unwrap();
        assert_eq!(lazy.target, "redis://127.0.0.1:1/0");
    }

    #[tokio::test]
    async fn a_store_that_cannot_be_reached_is_refused_at_once_after_the_first_failure() {
        // Nothing listens on port 1: the connection is refused.
        let lazy = connect_lazy("redis://127.0.0.1:1/0", "X::connect").unwrap();
        let conn = lazy.for_store("test");
        let ping = redis::cmd("PING");
        let e = conn
            .query::<String>(&ping, "test store".into())
            .await
            .unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Unavailable);
        assert!(
            conn.breaker.is_open(),
            "a refused connection opens the breaker"
        );
        let e = conn
            .query::<String>(&ping, "test store".into())
            .await
            .unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Unavailable);
        let source = std::error::Error::source(&e).expect("a source");
        assert!(source.is::<CircuitOpen>(), "refused without trying: {e}");
        assert!(conn.admit(|| "test store".into()).is_err());
    }
}
