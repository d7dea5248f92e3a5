//! `--runtime-tools`: tools the reference server enables and disables at runtime, the same
//! on every replica — the pattern of `examples/runtime_tools.rs` (README "Tool sets that
//! change at runtime").
//!
//! The shared source is the Redis hash `PREFIX.runtime-tools` on the `--bus` Redis (field =
//! a tool name of [`MANAGED`]). `PUT /admin/tools/{name}` and `DELETE /admin/tools/{name}`
//! on the listener write it and sync; a sync makes the catalog serve the fixtures plus the
//! enabled managed tools (in name order, so every replica's list is the same) and announces
//! the change; every replica syncs again when the bus says it is behind, and once when it
//! starts (retried until Redis answers).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use redis::aio::ConnectionManager;
use serde_json::Value;

use super::config::Config;
use crate::redis_support::{connect_lazy, query_reconnecting};
use crate::{Catalog, Error, RequestContext, Server, ToolDef, ToolError};

/// The tools `--runtime-tools` may enable.
pub(crate) const MANAGED: [&str; 2] = ["runtime_upper", "runtime_reverse"];

fn factory(name: &str) -> Option<ToolDef> {
    let f: fn(&str) -> String = match name {
        "runtime_upper" => str::to_uppercase,
        "runtime_reverse" => |s| s.chars().rev().collect(),
        _ => return None,
    };
    let schema = serde_json::json!({"type": "object", "properties": {"text": {"type": "string"}}});
    let schema = schema.as_object().cloned().unwrap_or_default();
    Some(
        ToolDef::new(name)
            .description("A tool enabled at runtime (--runtime-tools)")
            .input_schema(schema)
            .raw_handler(move |_: RequestContext, args: Value| async move {
                Ok::<_, ToolError>(f(args["text"].as_str().unwrap_or("")))
            }),
    )
}

struct ToolSync {
    catalog: Catalog,
    redis: ConnectionManager,
    key: String,
    one_at_a_time: tokio::sync::Mutex<()>,
}

impl ToolSync {
    async fn run(&self) -> Result<(), Error> {
        let _one = self.one_at_a_time.lock().await;
        let mut cmd = redis::cmd("HGETALL");
        cmd.arg(&self.key);
        let enabled: HashMap<String, String> =
            query_reconnecting(&mut self.redis.clone(), &cmd, "runtime tools".into()).await?;
        let mut wanted: Vec<&str> = MANAGED
            .into_iter()
            .filter(|n| enabled.contains_key(*n))
            .collect();
        wanted.sort_unstable();
        let served: Vec<String> = self
            .catalog
            .tool_names()
            .into_iter()
            .filter(|n| MANAGED.contains(&n.as_str()))
            .collect();
        if served == wanted {
            return Ok(());
        }
        let mut change = self.catalog.change();
        for name in served {
            change = change.remove_tool(name);
        }
        for name in &wanted {
            change = change.add_tool(factory(name).ok_or_else(|| Error::internal("unknown"))?);
        }
        let applied = change.apply()?;
        tracing::info!(version = applied.version(), tools = ?wanted, "runtime tools changed");
        applied.announce().await
    }

    async fn write(&self, command: &str, name: &str) -> StatusCode {
        if factory(name).is_none() {
            return StatusCode::NOT_FOUND;
        }
        let mut cmd = redis::cmd(command);
        cmd.arg(&self.key).arg(name);
        if command == "HSET" {
            cmd.arg(1);
        }
        let written: Result<i64, Error> =
            query_reconnecting(&mut self.redis.clone(), &cmd, "runtime tools".into()).await;
        match written.map(|_| ()) {
            Ok(()) => match self.run().await {
                Ok(()) => StatusCode::NO_CONTENT,
                Err(e) => {
                    tracing::warn!(error = %e, "runtime tools written but not applied here");
                    StatusCode::SERVICE_UNAVAILABLE
                }
            },
            Err(e) => {
                tracing::warn!(error = %e, "runtime tools not written");
                StatusCode::SERVICE_UNAVAILABLE
            }
        }
    }
}

async fn enable(State(s): State<Arc<ToolSync>>, Path(name): Path<String>) -> StatusCode {
    s.write("HSET", &name).await
}

async fn disable(State(s): State<Arc<ToolSync>>, Path(name): Path<String>) -> StatusCode {
    s.write("HDEL", &name).await
}

/// Starts following the shared source for `server` and returns the admin routes.
pub(super) fn start(config: &Config, server: &Server) -> Result<Router, Error> {
    if !config.bus.starts_with("redis") {
        return Err(Error::invalid_definition(
            "--runtime-tools needs a Redis --bus (redis://…), where the enabled set is kept",
        ));
    }
    let redis = connect_lazy(&config.bus, "--runtime-tools")?.manager;
    let sync = Arc::new(ToolSync {
        catalog: server.catalog(),
        redis,
        key: format!("{}.runtime-tools", config.bus_prefix),
        one_at_a_time: tokio::sync::Mutex::new(()),
    });
    // Subscribed before the first read: nothing announced in between is missed.
    let mut bus = server.notifier().subscribe();
    let follower = sync.clone();
    tokio::spawn(async move {
        let mut delay = Duration::from_millis(100);
        while let Err(e) = follower.run().await {
            tracing::debug!(error = %e, "runtime tools not read yet; retrying");
            tokio::time::sleep(delay).await;
            delay = (delay * 2).min(Duration::from_secs(2));
        }
        while let Some(delivery) = bus.recv().await {
            if follower.catalog.is_behind(&delivery) {
                if let Err(e) = follower.run().await {
                    tracing::warn!(error = %e, "runtime tools not synced; the next announcement retries");
                }
            }
        }
    });
    Ok(Router::new()
        .route(
            "/admin/tools/{name}",
            axum::routing::put(enable).delete(disable),
        )
        .with_state(sync))
}
