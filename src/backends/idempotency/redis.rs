//! The Redis idempotency store (feature `redis`).

use std::fmt;
use std::time::Duration;

use bytes::Bytes;
use futures_util::future::BoxFuture;

use super::{IdempotencyClaim, IdempotencyStore};
use crate::Error;
use crate::backends::redis_conn as redis_support;

/// Claims a key: a hash with the fingerprint `f`, the owner `o` and, once completed, the
/// result `r`. Answers `{1}` claimed, `{2}` in flight, `{3, result}` done, `{4}` conflict.
const CLAIM: &str = r"
local v = redis.call('HMGET', KEYS[1], 'f', 'o', 'r')
if not v[1] then
  redis.call('HSET', KEYS[1], 'f', ARGV[1], 'o', ARGV[2])
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  return {1}
end
if v[1] ~= ARGV[1] then return {4} end
if v[3] then return {3, v[3]} end
if v[2] == ARGV[2] then return {1} end
return {2}
";

/// Completes a key its owner holds: `1`, else `0`.
const COMPLETE: &str = r"
if redis.call('HGET', KEYS[1], 'o') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'r', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
";

/// Deletes a key its owner holds without a result.
const RELEASE: &str = r"
if redis.call('HGET', KEYS[1], 'o') == ARGV[1] and redis.call('HEXISTS', KEYS[1], 'r') == 0 then
  redis.call('DEL', KEYS[1])
end
return 1
";

/// An [`IdempotencyStore`] in Redis, shared by every replica using the same Redis and
/// prefix: each key is a hash `PREFIX.idem.KEY` that expires with its lease, then with its
/// result's keep time; each operation is one `EVAL` (a first call costs two commands, a
/// retry one).
///
/// ```no_run
/// use std::sync::Arc;
/// use stateless_mcp::Server;
/// use stateless_mcp::backends::RedisIdempotencyStore;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// // Inside a Tokio runtime; every replica uses the same Redis and prefix.
/// let store = RedisIdempotencyStore::connect("redis://redis:6379", "my-mcp")?;
/// let server = Server::builder().idempotency_store(Arc::new(store)).build()?;
/// # drop(server);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct RedisIdempotencyStore {
    conn: redis_support::StoreConn,
    prefix: String,
    target: String,
}

impl fmt::Debug for RedisIdempotencyStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisIdempotencyStore")
            .field("target", &self.target)
            .field("prefix", &self.prefix)
            .finish()
    }
}

impl RedisIdempotencyStore {
    /// A store on the Redis at `url`, keys under `PREFIX.idem.`. The connection is made on
    /// first use and re-made when lost.
    ///
    /// # Errors
    /// An invalid URL, or no Tokio runtime.
    pub fn connect(url: &str, prefix: impl Into<String>) -> Result<Self, Error> {
        let lazy = redis_support::connect_lazy(url, "RedisIdempotencyStore::connect")?;
        Ok(RedisIdempotencyStore {
            conn: lazy.for_store("idempotency"),
            prefix: prefix.into(),
            target: lazy.target,
        })
    }

    fn key(&self, key: &str) -> String {
        format!("{}.idem.{key}", self.prefix)
    }

    fn context(&self) -> String {
        format!("idempotency store (Redis at {})", self.target)
    }

    async fn eval<T: redis::FromRedisValue>(
        &self,
        script: &str,
        key: &str,
        args: &[&[u8]],
    ) -> Result<T, Error> {
        let mut cmd = redis::cmd("EVAL");
        cmd.arg(script).arg(1).arg(self.key(key));
        for a in args {
            cmd.arg(*a);
        }
        self.conn.query::<T>(&cmd, self.context()).await
    }
}

fn millis(d: Duration) -> String {
    d.as_millis().clamp(1, u128::from(u64::MAX)).to_string()
}

impl IdempotencyStore for RedisIdempotencyStore {
    fn claim<'a>(
        &'a self,
        key: &'a str,
        fingerprint: &'a str,
        owner: &'a str,
        lease: Duration,
    ) -> BoxFuture<'a, Result<IdempotencyClaim, Error>> {
        Box::pin(async move {
            let lease = millis(lease);
            let args: [&[u8]; 3] = [fingerprint.as_bytes(), owner.as_bytes(), lease.as_bytes()];
            let value: redis::Value = self.eval(CLAIM, key, &args).await?;
            let redis::Value::Array(items) = &value else {
                return Err(self.unexpected(&value));
            };
            Ok(match (items.first(), items.get(1)) {
                (Some(redis::Value::Int(1)), _) => IdempotencyClaim::Claimed,
                (Some(redis::Value::Int(2)), _) => IdempotencyClaim::InFlight,
                (Some(redis::Value::Int(3)), Some(redis::Value::BulkString(r))) => {
                    IdempotencyClaim::Done(Bytes::copy_from_slice(r))
                }
                (Some(redis::Value::Int(4)), _) => IdempotencyClaim::Conflict,
                _ => return Err(self.unexpected(&value)),
            })
        })
    }

    fn complete<'a>(
        &'a self,
        key: &'a str,
        owner: &'a str,
        result: Bytes,
        keep: Duration,
    ) -> BoxFuture<'a, Result<bool, Error>> {
        Box::pin(async move {
            let keep = millis(keep);
            let args: [&[u8]; 3] = [owner.as_bytes(), &result, keep.as_bytes()];
            let done: i64 = self.eval(COMPLETE, key, &args).await?;
            Ok(done == 1)
        })
    }

    fn release<'a>(&'a self, key: &'a str, owner: &'a str) -> BoxFuture<'a, Result<(), Error>> {
        Box::pin(async move {
            let _: i64 = self.eval(RELEASE, key, &[owner.as_bytes()]).await?;
            Ok(())
        })
    }
}

impl RedisIdempotencyStore {
    fn unexpected(&self, value: &redis::Value) -> Error {
        Error::unavailable(self.context(), format!("unexpected answer {value:?}"))
    }
}
