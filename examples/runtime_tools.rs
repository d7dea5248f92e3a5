//! A tool set that changes at runtime, the same on every replica.
//!
//! Every replica's binary knows every tool it might serve (`factory` below); which are
//! enabled lives in a shared source, the Redis hash `runtime-tools.enabled`. An admin route
//! changes the source and syncs; the sync applies the difference to the server's
//! [`Catalog`] and announces it on the bus; every other replica, told by the bus that it is
//! behind ([`Catalog::is_behind`]), syncs from the source too. A replica that starts later
//! reads the current set before it serves.
//!
//! ```text
//! redis-server &
//! export MCP_STATE_KEYS=k1:$(head -c 32 /dev/urandom | base64)   # one ring for every replica
//! REDIS_URL=redis://127.0.0.1:6379 LISTEN=127.0.0.1:3000 cargo run --example runtime_tools --features redis
//! REDIS_URL=redis://127.0.0.1:6379 LISTEN=127.0.0.1:3001 cargo run --example runtime_tools --features redis
//! curl -X PUT http://127.0.0.1:3000/admin/tools/reverse     # enabled on both replicas
//! curl -X DELETE http://127.0.0.1:3001/admin/tools/reverse  # and gone from both
//! ```
//!
//! (The reference binary does the same with `--runtime-tools`, for the three-replica test.)
//!
//! Needs the `redis` feature (the Redis bus; `required-features` in Cargo.toml).
//!
//! The admin route here has no authorization, to keep the example short: a real one changes
//! what every replica serves, so put it behind your auth (the reference binary requires a
//! bearer `--admin-token`, see `src/app/runtime_tools.rs`), or on a listener only operators
//! reach.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use redis::AsyncCommands as _;
use redis::aio::ConnectionManager;
use schemars::JsonSchema;
use serde::Deserialize;
use stateless_mcp::backends::{BusOptions, RedisBus};
use stateless_mcp::catalog::Catalog;
use stateless_mcp::notify::Notifier;
use stateless_mcp::settings::StateKeys;
use stateless_mcp::{HandlerError, RequestContext, Runner, Server, ToolDef};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The shared source: field = tool name, value = anything.
const ENABLED: &str = "runtime-tools.enabled";

#[derive(Deserialize, JsonSchema)]
struct Text {
    /// The text to work on.
    text: String,
}

/// Every tool this binary can serve, by name.
fn factory(name: &str) -> Option<ToolDef> {
    let tool = ToolDef::new(name);
    Some(
        match name {
            "upper" => {
                tool.description("Upper-cases a text").handler(
                    |_: RequestContext, t: Text| async move {
                        Ok::<_, HandlerError>(t.text.to_uppercase())
                    },
                )
            }
            "reverse" => tool.description("Reverses a text").handler(
                |_: RequestContext, t: Text| async move {
                    Ok::<_, HandlerError>(t.text.chars().rev().collect::<String>())
                },
            ),
            "word_count" => tool.description("Counts the words of a text").handler(
                |_: RequestContext, t: Text| async move {
                    Ok::<_, HandlerError>(t.text.split_whitespace().count().to_string())
                },
            ),
            _ => return None,
        },
    )
}

/// What the admin route and the follower share.
struct ToolSync {
    catalog: Catalog,
    redis: ConnectionManager,
    /// One sync at a time on this replica, so an older read never overwrites a newer one.
    one_at_a_time: tokio::sync::Mutex<()>,
}

impl ToolSync {
    /// Reads the shared source and makes the catalog serve exactly its (known) tools, in
    /// name order, so that every replica serves the same list whatever order the changes
    /// reached it in; announces the change to the other replicas.
    async fn run(&self) -> Result<(), BoxError> {
        let _one = self.one_at_a_time.lock().await;
        let enabled: HashMap<String, String> = self.redis.clone().hgetall(ENABLED).await?;
        let mut wanted: Vec<String> = enabled
            .into_keys()
            .filter(|n| factory(n).is_some())
            .collect();
        wanted.sort();
        let served = self.catalog.tool_names();
        if served == wanted {
            return Ok(());
        }
        let mut change = self.catalog.change();
        for name in served {
            change = change.remove_tool(name);
        }
        for name in &wanted {
            change = change.add_tool(factory(name).expect("filtered above"));
        }
        let applied = change.apply()?;
        tracing::info!(version = applied.version(), tools = ?wanted, "tool set changed");
        applied.announce().await?;
        Ok(())
    }
}

/// `PUT /admin/tools/{name}`: enables a known tool everywhere.
async fn enable(State(s): State<Arc<ToolSync>>, Path(name): Path<String>) -> StatusCode {
    if factory(&name).is_none() {
        return StatusCode::NOT_FOUND;
    }
    let written: redis::RedisResult<()> = s.redis.clone().hset(ENABLED, &name, 1).await;
    answer(written.map_err(Into::into), &s).await
}

/// `DELETE /admin/tools/{name}`: disables it everywhere.
async fn disable(State(s): State<Arc<ToolSync>>, Path(name): Path<String>) -> StatusCode {
    let written: redis::RedisResult<()> = s.redis.clone().hdel(ENABLED, &name).await;
    answer(written.map_err(Into::into), &s).await
}

async fn answer(written: Result<(), BoxError>, s: &ToolSync) -> StatusCode {
    match written {
        Ok(()) => match s.run().await {
            Ok(()) => StatusCode::NO_CONTENT,
            Err(e) => {
                tracing::warn!(error = %e, "written, but this replica did not sync");
                StatusCode::SERVICE_UNAVAILABLE
            }
        },
        Err(e) => {
            tracing::warn!(error = %e, "the shared source was not written");
            StatusCode::SERVICE_UNAVAILABLE
        }
    }
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .init();
    let url = std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into());
    let listen: std::net::SocketAddr = std::env::var("LISTEN")
        .unwrap_or_else(|_| "127.0.0.1:3000".into())
        .parse()?;

    let notifier = Notifier::new(Arc::new(RedisBus::connect(&url, BusOptions::default())?));
    // No tool at build time: advertise the capability the runtime tools need.
    // Replicas on a shared bus seal with one key ring (the build refuses a key of its own).
    let keys: StateKeys = std::env::var("MCP_STATE_KEYS")
        .map_err(|_| "set MCP_STATE_KEYS to the key ring every replica shares (KID:BASE64KEY)")?
        .parse()?;
    let server = Server::builder()
        .notifier(notifier.clone())
        .state_keys(keys)
        .advertise_tools()
        .build()?;
    let sync = Arc::new(ToolSync {
        catalog: server.catalog(),
        redis: ConnectionManager::new(redis::Client::open(url.as_str())?).await?,
        one_at_a_time: tokio::sync::Mutex::new(()),
    });

    // Subscribe first, then read the current set: nothing announced in between is missed.
    let mut bus = notifier.subscribe();
    sync.run().await?;
    let follower = sync.clone();
    tokio::spawn(async move {
        while let Some(delivery) = bus.recv().await {
            if follower.catalog.is_behind(&delivery) {
                if let Err(e) = follower.run().await {
                    tracing::warn!(error = %e, "sync failed; the next announcement retries");
                }
            }
        }
    });

    let admin = axum::Router::new()
        .route(
            "/admin/tools/{name}",
            axum::routing::put(enable).delete(disable),
        )
        .with_state(sync);
    Runner::new(server)
        .listen(listen)
        .routes(admin)
        .serve()
        .await?;
    Ok(())
}
