//! Neutral Redis plumbing (feature `redis`) for every Redis backend: the notification bus
//! (`RedisBus`), the replay store (`RedisReplayStore`), the task store
//! (`tasks::RedisTaskStore`) and the shared stores to come. One lazily connected
//! [`ConnectionManager`] per backend, configured to fail fast rather than queue, and
//! [`query_reconnecting`], which survives one dropped connection.

use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};

use crate::Error;
use crate::backends::redact::redacted_url;

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

/// Runs `cmd`, once more if the connection turns out broken (Redis restarted or failed over
/// since the last command; the manager re-makes it after the first failure). A command whose
/// first attempt did reach Redis runs twice: callers make sure that is harmless.
pub(crate) async fn query_reconnecting<T: redis::FromRedisValue>(
    conn: &mut ConnectionManager,
    cmd: &redis::Cmd,
    context: String,
) -> Result<T, Error> {
    let mut last = String::new();
    for _ in 0..2 {
        match tokio::time::timeout(IO_TIMEOUT * 2, cmd.query_async::<T>(conn)).await {
            Ok(Ok(value)) => return Ok(value),
            Ok(Err(e)) if e.is_connection_dropped() || e.is_io_error() => last = e.to_string(),
            Ok(Err(e)) => return Err(Error::unavailable(context, e)),
            Err(_) => return Err(Error::unavailable(context, "timed out")),
        }
    }
    Err(Error::unavailable(context, last))
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
}
