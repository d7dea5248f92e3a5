//! The Redis replay store (feature `redis`).

use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

use futures_util::future::BoxFuture;

use super::ReplayStore;
use crate::Error;
use crate::backends::redis_conn as redis_support;

/// A [`ReplayStore`] in Redis, shared by every replica using the same Redis and prefix: a
/// claim is `SET PREFIX.replay.ID 1 NX PXAT <expiry in ms>`, so Redis forgets each id when
/// its state expires.
///
/// ```no_run
/// use std::sync::Arc;
/// use stateless_mcp::Server;
/// use stateless_mcp::backends::RedisReplayStore;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// // Inside a Tokio runtime; every replica uses the same Redis and prefix.
/// let store = RedisReplayStore::connect("redis://redis:6379", "my-mcp")?;
/// let server = Server::builder().replay_store(Arc::new(store)).build()?;
/// # drop(server);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct RedisReplayStore {
    conn: redis_support::StoreConn,
    prefix: String,
    target: String,
}

impl fmt::Debug for RedisReplayStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisReplayStore")
            .field("target", &self.target)
            .field("prefix", &self.prefix)
            .finish()
    }
}

impl RedisReplayStore {
    /// A store on the Redis at `url`, keys under `PREFIX.replay.`. The connection is made on
    /// first use and re-made when lost.
    ///
    /// # Errors
    /// An invalid URL, or no Tokio runtime.
    pub fn connect(url: &str, prefix: impl Into<String>) -> Result<Self, Error> {
        let lazy = redis_support::connect_lazy(url, "RedisReplayStore::connect")?;
        Ok(RedisReplayStore {
            conn: lazy.for_store("replay"),
            prefix: prefix.into(),
            target: lazy.target,
        })
    }
}

impl ReplayStore for RedisReplayStore {
    fn claim<'a>(&'a self, id: &'a str, expires: SystemTime) -> BoxFuture<'a, Result<bool, Error>> {
        Box::pin(async move {
            let at_ms = expires
                .duration_since(UNIX_EPOCH)
                .map_or(1, |d| d.as_millis().max(1));
            let mut cmd = redis::cmd("SET");
            cmd.arg(format!("{}.replay.{id}", self.prefix))
                .arg(1)
                .arg("NX")
                .arg("PXAT")
                .arg(u64::try_from(at_ms).unwrap_or(u64::MAX));
            // Should a lost first attempt have reached Redis after all, the second reads as
            // a replay: a refusal, never a second use.
            let context = format!("replay store (Redis at {})", self.target);
            let set = self.conn.query::<Option<String>>(&cmd, context).await?;
            Ok(set.is_some())
        })
    }
}
