//! The Redis rate store (feature `redis`): GCRA in one Lua script per check.

use std::fmt;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use futures_util::future::BoxFuture;
use redis::aio::ConnectionManager;
use sha2::{Digest as _, Sha256};

use super::{Budget, RateStore, Verdict};
use crate::Error;
use crate::backends::redis_conn as redis_support;

/// GCRA over every key at once, on Redis's clock (so replicas' clocks do not matter):
/// `KEYS[i]` holds the theoretical arrival time (µs) of budget i; `ARGV` holds
/// `interval_us, burst` per key. Charges every key when all have room, none otherwise.
/// Answers four integers per key: admitted, remaining, reset µs, retry-after µs.
const GCRA: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local out, tats, ok = {}, {}, true
for i = 1, #KEYS do
  local interval = tonumber(ARGV[2 * i - 1])
  local burst = tonumber(ARGV[2 * i])
  local tat = tonumber(redis.call('GET', KEYS[i])) or now
  if tat < now then tat = now end
  local new_tat = tat + interval
  local allow_at = new_tat - interval * burst
  if allow_at > now then
    ok = false
    out[#out + 1] = 0; out[#out + 1] = 0
    out[#out + 1] = tat - now; out[#out + 1] = allow_at - now
  else
    tats[i] = new_tat
    out[#out + 1] = 1; out[#out + 1] = math.floor((now - allow_at) / interval)
    out[#out + 1] = new_tat - now; out[#out + 1] = 0
  end
end
if ok then
  for i = 1, #KEYS do
    redis.call('SET', KEYS[i], string.format('%d', tats[i]),
      'PX', math.floor((tats[i] - now) / 1000) + 1)
  end
end
return out
";

/// How long one check may take before the limiter answers from its own store.
pub(crate) const CHECK_TIMEOUT: Duration = Duration::from_millis(250);

/// A [`RateStore`] in Redis, shared by every replica using the same Redis and prefix: each
/// check is one `EVALSHA` of a GCRA script over the request's budgets (keys
/// `PREFIX.rate.<digest of the key>`, each expiring when its budget is full again), timed by
/// Redis's clock.
///
/// ```no_run
/// use std::num::NonZeroU32;
/// use std::sync::Arc;
/// use stateless_mcp::backends::RedisRateStore;
/// use stateless_mcp::transport::http::RateLimit;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// // Inside a Tokio runtime; every replica uses the same Redis and prefix.
/// let store = RedisRateStore::connect("redis://redis:6379", "my-mcp")?;
/// let limit = RateLimit::per_second(NonZeroU32::new(20).unwrap()).store(Arc::new(store));
/// # drop(limit);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct RedisRateStore {
    conn: redis_support::StoreConn,
    prefix: String,
    target: String,
    /// The script's SHA-1 once Redis has it (`SCRIPT LOAD`), for `EVALSHA`.
    sha: std::sync::Arc<std::sync::Mutex<Option<String>>>,
}

impl fmt::Debug for RedisRateStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisRateStore")
            .field("target", &self.target)
            .field("prefix", &self.prefix)
            .finish()
    }
}

impl RedisRateStore {
    /// A store on the Redis at `url`, keys under `PREFIX.rate.`. The connection is made on
    /// first use and re-made when lost.
    ///
    /// # Errors
    /// An invalid URL, or no Tokio runtime.
    pub fn connect(url: &str, prefix: impl Into<String>) -> Result<Self, Error> {
        let lazy = redis_support::connect_lazy(url, "RedisRateStore::connect")?;
        Ok(RedisRateStore {
            conn: lazy.for_store("rate"),
            prefix: prefix.into(),
            target: lazy.target,
            sha: Default::default(),
        })
    }

    fn context(&self) -> String {
        format!("rate store (Redis at {})", self.target)
    }

    /// The script's SHA-1, loading the script when Redis does not have it yet.
    async fn sha(&self, conn: &mut ConnectionManager) -> Result<String, Error> {
        if let Some(sha) = self.sha.lock().unwrap_or_else(|p| p.into_inner()).clone() {
            return Ok(sha);
        }
        let mut cmd = redis::cmd("SCRIPT");
        cmd.arg("LOAD").arg(GCRA);
        let sha: String = redis_support::traced(&cmd, "rate", cmd.query_async(conn))
            .await
            .map_err(|e| self.failed(e))?;
        *self.sha.lock().unwrap_or_else(|p| p.into_inner()) = Some(sha.clone());
        Ok(sha)
    }

    /// One `EVALSHA` of the script over `checks`, loading it again if Redis lost it (a
    /// restart).
    async fn eval(
        &self,
        conn: &mut ConnectionManager,
        checks: &[(&str, Budget)],
    ) -> Result<Vec<i64>, Error> {
        for _ in 0..2 {
            let sha = self.sha(conn).await?;
            let mut cmd = redis::cmd("EVALSHA");
            cmd.arg(&sha).arg(checks.len());
            for (key, _) in checks {
                cmd.arg(self.key(key));
            }
            for (_, budget) in checks {
                cmd.arg(micros(budget.interval())).arg(budget.burst.get());
            }
            match redis_support::traced(&cmd, "rate", cmd.query_async::<Vec<i64>>(conn)).await {
                Ok(v) => return Ok(v),
                Err(e)
                    if e.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::NoScript) =>
                {
                    *self.sha.lock().unwrap_or_else(|p| p.into_inner()) = None;
                }
                Err(e) => return Err(self.failed(e)),
            }
        }
        Err(Error::unavailable(
            self.context(),
            "the rate script could not be loaded",
        ))
    }

    /// The error to answer for `e`, opening the breaker when Redis could not be reached.
    fn failed(&self, e: redis::RedisError) -> Error {
        if let Some(cause) = redis_support::cause_of(&e) {
            self.conn.failed(cause);
        }
        Error::unavailable(self.context(), e)
    }

    fn key(&self, key: &str) -> String {
        let digest = Sha256::digest(key.as_bytes());
        format!(
            "{}.rate.{}",
            self.prefix,
            URL_SAFE_NO_PAD.encode(&digest[..18])
        )
    }
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX).max(1)
}

impl RateStore for RedisRateStore {
    fn check<'a>(
        &'a self,
        checks: &'a [(&'a str, Budget)],
    ) -> BoxFuture<'a, Result<Vec<Verdict>, Error>> {
        Box::pin(async move {
            // Refused at once while the breaker is open: the caller falls back to its own
            // store.
            let mut conn = self.conn.admit(|| self.context())?;
            // No retry on a lost connection: a check that reached Redis twice would charge
            // twice; the caller falls back to its own store instead.
            let answer = tokio::time::timeout(CHECK_TIMEOUT, self.eval(&mut conn, checks))
                .await
                .map_err(|_| {
                    self.conn.failed("timeout");
                    Error::unavailable(self.context(), "timed out")
                })??;
            if answer.len() != checks.len() * 4 {
                return Err(Error::unavailable(
                    self.context(),
                    "unexpected answer from the rate script",
                ));
            }
            let us = |v: i64| Duration::from_micros(u64::try_from(v).unwrap_or(0));
            Ok(answer
                .chunks_exact(4)
                .map(|v| match v[0] {
                    1 => Verdict::admitted(u32::try_from(v[1]).unwrap_or(0), us(v[2])),
                    _ => Verdict::refused(us(v[3]), us(v[2])),
                })
                .collect())
        })
    }
}
