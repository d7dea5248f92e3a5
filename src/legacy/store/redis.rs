//! The Redis session store (feature `redis`).

use std::collections::HashMap;
use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

use futures_util::future::BoxFuture;

use super::{MAX_SESSION_SUBSCRIPTIONS, SessionSettings, SessionStore};
use crate::Error;
use crate::protocol::LoggingLevel;

/// Field of the revocation mark.
const REVOKED: &str = "revoked";
/// Field of the log level.
const LEVEL: &str = "level";
/// Field of the last recorded use (Unix milliseconds).
const USED: &str = "used";
/// Prefix of the subscription fields (`sub:URI`).
const SUB: &str = "sub:";

/// Sets one field and the key's expiry, in one step. `KEYS[1]` the session hash, `ARGV` the
/// field, its value, the expiry in Unix milliseconds.
const SET_FIELD: &str = "redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) \
     redis.call('PEXPIREAT', KEYS[1], ARGV[3]) return 1";

/// Adds a subscription unless the session holds the maximum already. `ARGV` the field, the
/// expiry in Unix milliseconds, the most subscriptions a session may hold (the level and
/// revocation fields do not count).
const SUBSCRIBE: &str = "if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then \
     local n = redis.call('HLEN', KEYS[1]) - redis.call('HEXISTS', KEYS[1], 'level') \
       - redis.call('HEXISTS', KEYS[1], 'revoked') - redis.call('HEXISTS', KEYS[1], 'used') \
     if n >= tonumber(ARGV[3]) then return 0 end end \
     redis.call('HSET', KEYS[1], ARGV[1], '1') \
     redis.call('PEXPIREAT', KEYS[1], ARGV[2]) return 1";

/// A [`SessionStore`] in Redis, shared by every replica using the same Redis and prefix.
///
/// Each session is one hash, `PREFIX.session.KEY`, expiring with the session
/// (`PEXPIREAT`): field `level` holds the log level, `revoked` is set by `DELETE`, `used`
/// the last recorded use (Unix milliseconds, for the idle limit), and one
/// field `sub:URI` per subscribed resource. Writes are small Lua scripts (field and expiry
/// together); reads are one `HGETALL`. Every write is idempotent, so the one retry after a
/// dropped connection is harmless.
///
/// ```no_run
/// use std::sync::Arc;
/// use stateless_mcp::Server;
/// use stateless_mcp::backends::RedisSessionStore;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// // Inside a Tokio runtime; every replica uses the same Redis and prefix.
/// let store = RedisSessionStore::connect("redis://redis:6379", "my-mcp")?;
/// let server = Server::builder().session_store(Arc::new(store)).build()?;
/// # drop(server);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct RedisSessionStore {
    conn: crate::backends::redis_conn::StoreConn,
    prefix: String,
    target: String,
}

impl fmt::Debug for RedisSessionStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisSessionStore")
            .field("target", &self.target)
            .field("prefix", &self.prefix)
            .finish()
    }
}

fn millis(at: SystemTime) -> u64 {
    at.duration_since(UNIX_EPOCH).map_or(1, |d| {
        u64::try_from(d.as_millis().max(1)).unwrap_or(u64::MAX)
    })
}

fn level_name(level: LoggingLevel) -> String {
    serde_json::to_value(level)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

impl RedisSessionStore {
    /// A store on the Redis at `url`, keys under `PREFIX.session.`. The connection is made
    /// on first use and re-made when lost.
    ///
    /// # Errors
    /// An invalid URL, or no Tokio runtime.
    pub fn connect(url: &str, prefix: impl Into<String>) -> Result<Self, Error> {
        let lazy = crate::backends::redis_conn::connect_lazy(url, "RedisSessionStore::connect")?;
        Ok(RedisSessionStore {
            conn: lazy.for_store("sessions"),
            prefix: prefix.into(),
            target: lazy.target,
        })
    }

    fn key(&self, session: &str) -> String {
        format!("{}.session.{session}", self.prefix)
    }

    async fn query<T: redis::FromRedisValue>(&self, cmd: redis::Cmd) -> Result<T, Error> {
        let context = format!("session store (Redis at {})", self.target);
        self.conn.query::<T>(&cmd, context).await
    }

    async fn set_field(
        &self,
        session: &str,
        field: &str,
        value: &str,
        expires: SystemTime,
    ) -> Result<(), Error> {
        let mut cmd = redis::cmd("EVAL");
        cmd.arg(SET_FIELD)
            .arg(1)
            .arg(self.key(session))
            .arg(field)
            .arg(value)
            .arg(millis(expires));
        self.query::<i64>(cmd).await.map(drop)
    }
}

impl SessionStore for RedisSessionStore {
    fn load<'a>(&'a self, session: &'a str) -> BoxFuture<'a, Result<SessionSettings, Error>> {
        Box::pin(async move {
            let mut cmd = redis::cmd("HGETALL");
            cmd.arg(self.key(session));
            let fields: HashMap<String, String> = self.query(cmd).await?;
            let mut settings = SessionSettings::default();
            for (field, value) in fields {
                if field == REVOKED {
                    settings.revoked = true;
                } else if field == USED {
                    settings.last_used = value
                        .parse::<u64>()
                        .ok()
                        .map(|ms| UNIX_EPOCH + std::time::Duration::from_millis(ms));
                } else if field == LEVEL {
                    settings.log_level = serde_json::from_value(value.into()).ok();
                } else if let Some(uri) = field.strip_prefix(SUB) {
                    settings.subscriptions.insert(uri.to_owned());
                }
            }
            Ok(settings)
        })
    }

    fn set_log_level<'a>(
        &'a self,
        session: &'a str,
        level: LoggingLevel,
        expires: SystemTime,
    ) -> BoxFuture<'a, Result<(), Error>> {
        Box::pin(async move {
            self.set_field(session, LEVEL, &level_name(level), expires)
                .await
        })
    }

    fn subscribe<'a>(
        &'a self,
        session: &'a str,
        uri: &'a str,
        expires: SystemTime,
    ) -> BoxFuture<'a, Result<bool, Error>> {
        Box::pin(async move {
            let mut cmd = redis::cmd("EVAL");
            cmd.arg(SUBSCRIBE)
                .arg(1)
                .arg(self.key(session))
                .arg(format!("{SUB}{uri}"))
                .arg(millis(expires))
                .arg(MAX_SESSION_SUBSCRIPTIONS);
            Ok(self.query::<i64>(cmd).await? == 1)
        })
    }

    fn unsubscribe<'a>(
        &'a self,
        session: &'a str,
        uri: &'a str,
    ) -> BoxFuture<'a, Result<(), Error>> {
        Box::pin(async move {
            let mut cmd = redis::cmd("HDEL");
            cmd.arg(self.key(session)).arg(format!("{SUB}{uri}"));
            self.query::<i64>(cmd).await.map(drop)
        })
    }

    fn touch<'a>(
        &'a self,
        session: &'a str,
        at: SystemTime,
        expires: SystemTime,
    ) -> BoxFuture<'a, Result<(), Error>> {
        Box::pin(async move {
            self.set_field(session, USED, &millis(at).to_string(), expires)
                .await
        })
    }

    fn revoke<'a>(
        &'a self,
        session: &'a str,
        expires: SystemTime,
    ) -> BoxFuture<'a, Result<(), Error>> {
        Box::pin(async move { self.set_field(session, REVOKED, "1", expires).await })
    }
}
