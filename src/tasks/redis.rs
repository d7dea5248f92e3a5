//! The Redis task store (feature `redis`).

use std::fmt;

use futures_util::future::BoxFuture;

use super::record::{TaskRecord, now_ms};
use super::{Replaced, TaskStore};
use crate::Error;
use crate::backends::redis_conn as redis_support;

/// Writes one record atomically. `ARGV[1]` is the version the stored record must have
/// (`0`: it must not exist), then the new version, status, JSON, expiry (Unix ms), lease end
/// (empty: no lease), id, and a random token naming this write; when given, `ARGV[9]` and
/// `ARGV[10]` are a bus channel and the message to `PUBLISH` there when the record is
/// written (not by a retry of a write already done: it published then). The `PUBLISH` comes
/// before the writes, so that one refused (an ACL) leaves nothing written; no subscriber can
/// act on the message before the script ends. Answers `{2}` written (or
/// written by an earlier attempt of this same write), `{0}` the id exists (create), `{-1}`
/// no such task, `{1, json}` stale (another version, or terminal).
const WRITE: &str = r"
local cur = redis.call('HMGET', KEYS[1], 'v', 's', 'w')
if cur[3] == ARGV[8] then return {2} end
if ARGV[1] == '0' then
  if cur[1] then return {0} end
else
  if not cur[1] then return {-1} end
  if cur[1] ~= ARGV[1] or cur[2] == 'completed' or cur[2] == 'failed' or cur[2] == 'cancelled' then
    return {1, redis.call('HGET', KEYS[1], 'd')}
  end
end
if ARGV[9] then
  redis.call('PUBLISH', ARGV[9], ARGV[10])
end
redis.call('HSET', KEYS[1], 'v', ARGV[2], 's', ARGV[3], 'd', ARGV[4], 'w', ARGV[8])
redis.call('PEXPIREAT', KEYS[1], ARGV[5])
if ARGV[6] == '' then
  redis.call('ZREM', KEYS[2], ARGV[7])
else
  redis.call('ZADD', KEYS[2], ARGV[6], ARGV[7])
end
return {2}
";

/// Lists up to `ARGV[2]` ids in the lease index whose lease ended before `ARGV[1]`,
/// dropping those whose task expired. `ARGV[3]` is the task key prefix.
const LAPSED: &str = r"
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[1], 'LIMIT', 0, ARGV[2])
local out = {}
for _, id in ipairs(ids) do
  if redis.call('EXISTS', ARGV[3] .. id) == 1 then
    table.insert(out, id)
  else
    redis.call('ZREM', KEYS[1], id)
  end
end
return out
";

/// A [`TaskStore`] in Redis, shared by every replica using the same Redis and prefix.
///
/// # Layout
///
/// - `PREFIX.task.ID`: a hash with `v` (version), `s` (status), `d` (the record's JSON,
///   [`TaskRecord`]) and `w` (a random token naming the last write), expiring (`PEXPIREAT`) [`ttl_ms`](TaskRecord::ttl_ms) after its last
///   write, or when its lease ends if that is later.
/// - `PREFIX.tasks.leases`: a sorted set of the ids of `working` tasks, scored by the end of
///   their lease (Unix ms), for finding tasks whose replica died.
///
/// Each write is one Lua script (`EVAL`) that checks the stored version and status and
/// writes record, expiry and lease index together, so two replicas never both win. A write
/// retried after a lost reply recognises its own earlier success by its token. (The two keys of a write
/// differ, so Redis Cluster needs the prefix to be a hash tag, e.g. `{mcp}`.)
///
/// # Announcing on the bus's Redis
///
/// When the server's notification bus is a [`RedisBus`](crate::backends::RedisBus) on the
/// same Redis server, [`announcing_on`](Self::announcing_on) makes each status change's
/// write also `PUBLISH` its [`ChangeEvent::TaskStatus`](crate::notify::ChangeEvent::TaskStatus)
/// to the bus's channel, inside the same script: a task run to its end then costs two Redis
/// round trips instead of three, and a status change is announced if and only if it was
/// written (a replica that dies between the two can no longer leave it unannounced).
/// Subscribers see the same message the bus would have sent. The server must publish on
/// that same bus ([`ServerBuilder::build`](crate::ServerBuilder::build) refuses a store that
/// announces on another). The reference server does this whenever its task store is its
/// bus's Redis.
///
/// ```no_run
/// use std::sync::Arc;
/// use stateless_mcp::Server;
/// use stateless_mcp::tasks::RedisTaskStore;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// // Inside a Tokio runtime; every replica uses the same Redis and prefix.
/// let store = RedisTaskStore::connect("redis://redis:6379", "my-mcp")?;
/// let server = Server::builder().task_store(Arc::new(store)).build()?;
/// # drop(server);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct RedisTaskStore {
    conn: redis_support::StoreConn,
    prefix: String,
    target: String,
    /// The pub/sub namespace it reaches (server and user).
    scope: String,
    /// The bus channel status changes are published to within their write, and the bus's
    /// route, if it announces.
    announce: Option<(String, String)>,
}

impl fmt::Debug for RedisTaskStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisTaskStore")
            .field("target", &self.target)
            .field("prefix", &self.prefix)
            .field("announces_on", &self.announces_on())
            .finish()
    }
}

impl RedisTaskStore {
    /// A store on the Redis at `url`, keys under `PREFIX.`. The connection is made on first
    /// use and re-made when lost.
    ///
    /// # Errors
    /// An invalid URL, or no Tokio runtime.
    pub fn connect(url: &str, prefix: impl Into<String>) -> Result<Self, Error> {
        let lazy = redis_support::connect_lazy(url, "RedisTaskStore::connect")?;
        Ok(RedisTaskStore {
            conn: lazy.for_store("tasks"),
            prefix: prefix.into(),
            scope: lazy.pubsub_scope(),
            target: lazy.target,
            announce: None,
        })
    }

    /// This store, publishing each task status change to `bus` within the write that makes
    /// it (see [Announcing on the bus's Redis](Self#announcing-on-the-buss-redis)).
    ///
    /// # Errors
    /// `bus` reaches another Redis server than the store, or as another user (their URLs
    /// name another host or port, or another user): its subscribers would never see what the
    /// store published, or the user's ACL might refuse it. (The database number does not
    /// matter: pub/sub ignores it.)
    pub fn announcing_on(self, bus: &crate::backends::RedisBus) -> Result<Self, Error> {
        let store = self.with_channel(bus.channel());
        let wanted = store.announces_on().unwrap_or_default();
        match crate::backends::bus::NotifyBus::route(bus) {
            Some(route) if route == wanted => Ok(store),
            route => Err(Error::invalid_definition(format!(
                "RedisTaskStore::announcing_on: the bus's events travel on `{}`, but this task \
                 store reaches `{}`: a store can only announce on a bus of its own Redis server \
                 and user",
                route.unwrap_or("none"),
                store.scope
            ))),
        }
    }

    /// This store, publishing each task status change to the bus channel `channel` of its
    /// own Redis within the write that makes it.
    pub(crate) fn with_channel(mut self, channel: &str) -> Self {
        let route = format!("{} channel={channel}", self.scope);
        self.announce = Some((channel.to_owned(), route));
        self
    }

    fn key(&self, id: &str) -> String {
        format!("{}.task.{id}", self.prefix)
    }

    fn leases(&self) -> String {
        format!("{}.tasks.leases", self.prefix)
    }

    fn context(&self) -> String {
        format!("task store (Redis at {})", self.target)
    }

    /// Runs the write script for `task` over version `expected`, publishing `event` to the
    /// bus channel when given.
    async fn write(
        &self,
        task: &TaskRecord,
        expected: u64,
        event: Option<&[u8]>,
    ) -> Result<redis::Value, Error> {
        let json = serde_json::to_string(task).map_err(Error::internal_from)?;
        let mut cmd = redis::cmd("EVAL");
        cmd.arg(WRITE)
            .arg(2)
            .arg(self.key(&task.id))
            .arg(self.leases())
            .arg(expected)
            .arg(task.version)
            .arg(task.status.as_str())
            .arg(json)
            .arg(task.expires_at(now_ms()))
            .arg(
                task.lease
                    .as_ref()
                    .map(|l| l.until.to_string())
                    .unwrap_or_default(),
            )
            .arg(&task.id)
            .arg(write_token());
        if let (Some((channel, _)), Some(event)) = (&self.announce, event) {
            cmd.arg(channel).arg(event);
        }
        self.conn.query::<redis::Value>(&cmd, self.context()).await
    }

    /// [`TaskStore::replace`], publishing `event` within the write when the store announces.
    async fn replace_with(
        &self,
        task: &TaskRecord,
        event: Option<&[u8]>,
    ) -> Result<Replaced, Error> {
        if task.version < 2 {
            // A replacement follows a stored version (>= 1); version 0 would mean create.
            return Ok(match self.get(&task.id).await? {
                Some(current) => Replaced::Stale(Box::new(current)),
                None => Replaced::Gone,
            });
        }
        let value = self.write(task, task.version - 1, event).await?;
        match answer(&value) {
            Some((2, _)) => Ok(Replaced::Done),
            Some((-1, _)) => Ok(Replaced::Gone),
            Some((1, Some(d))) => Ok(Replaced::Stale(Box::new(decode(d, &self.context())?))),
            _ => Err(Error::unavailable(
                self.context(),
                format!("unexpected answer {value:?}"),
            )),
        }
    }
}

/// A random name for one write, so that its retry after a lost reply recognises it (and
/// two writers with the same content do not).
fn write_token() -> String {
    use chacha20poly1305::aead::OsRng;
    use chacha20poly1305::aead::rand_core::RngCore as _;
    format!("{:016x}{:016x}", OsRng.next_u64(), OsRng.next_u64())
}

/// Reads the record JSON a script or `HGET` answered.
fn decode(bytes: &[u8], context: &str) -> Result<TaskRecord, Error> {
    serde_json::from_slice(bytes).map_err(|e| {
        Error::unavailable(context.to_owned(), format!("a stored task is corrupt: {e}"))
    })
}

/// The status code and optional record of a write script's answer.
fn answer(value: &redis::Value) -> Option<(i64, Option<&[u8]>)> {
    let redis::Value::Array(items) = value else {
        return None;
    };
    let code = match items.first()? {
        redis::Value::Int(c) => *c,
        _ => return None,
    };
    let data = match items.get(1) {
        Some(redis::Value::BulkString(b)) => Some(b.as_slice()),
        _ => None,
    };
    Some((code, data))
}

impl TaskStore for RedisTaskStore {
    fn create<'a>(&'a self, task: &'a TaskRecord) -> BoxFuture<'a, Result<bool, Error>> {
        Box::pin(async move {
            let value = self.write(task, 0, None).await?;
            match answer(&value) {
                Some((2, _)) => Ok(true),
                Some((0, _)) => Ok(false),
                _ => Err(Error::unavailable(
                    self.context(),
                    format!("unexpected answer {value:?}"),
                )),
            }
        })
    }

    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, Error>> {
        Box::pin(async move {
            let mut cmd = redis::cmd("HGET");
            cmd.arg(self.key(id)).arg("d");
            let context = self.context();
            let data: Option<Vec<u8>> = self.conn.query(&cmd, context.clone()).await?;
            data.map(|d| decode(&d, &context)).transpose()
        })
    }

    fn replace<'a>(&'a self, task: &'a TaskRecord) -> BoxFuture<'a, Result<Replaced, Error>> {
        Box::pin(self.replace_with(task, None))
    }

    fn announces_on(&self) -> Option<&str> {
        self.announce.as_ref().map(|(_, route)| route.as_str())
    }

    fn replace_announcing<'a>(
        &'a self,
        task: &'a TaskRecord,
        event: &'a [u8],
    ) -> BoxFuture<'a, Result<Replaced, Error>> {
        Box::pin(self.replace_with(task, Some(event)))
    }

    fn lapsed(&self, now_ms: u64, limit: usize) -> BoxFuture<'_, Result<Vec<String>, Error>> {
        Box::pin(async move {
            let mut cmd = redis::cmd("EVAL");
            cmd.arg(LAPSED)
                .arg(1)
                .arg(self.leases())
                .arg(now_ms)
                .arg(limit)
                .arg(format!("{}.task.", self.prefix));
            self.conn.query(&cmd, self.context()).await
        })
    }
}
