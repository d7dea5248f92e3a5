//! `--runtime-tools`: tools the reference server enables and disables at runtime, the same
//! on every replica — the pattern of `examples/runtime_tools.rs` (`docs/runtime-tools.md`,
//! "Every replica converges").
//!
//! The shared source is the Redis hash `PREFIX.runtime-tools` on the `--bus` Redis (field =
//! a tool name of [`MANAGED`]). `PUT /admin/tools/{name}` and `DELETE /admin/tools/{name}`
//! on the listener write it and sync; a sync makes the catalog serve the fixtures plus the
//! enabled managed tools (in name order, so every replica's list is the same), each with its
//! skill (`skill://runtime/<tool-name>/SKILL.md`: how to use it, so a runtime tool set
//! changes the skills, and the resources where their files are), and announces the change; every replica syncs again when the bus says it is behind, and once when it
//! starts (retried until Redis answers).
//!
//! The admin routes require `Authorization: Bearer` with the `--admin-token` (compared in
//! constant time, as SHA-256 digests so that not even its length shows); anything else is
//! 401 before the tool name is looked at.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use redis::aio::ConnectionManager;
use serde_json::Value;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::config::Config;
use crate::backends::redis_conn::{connect_lazy, query_reconnecting};
use crate::catalog::Catalog;
use crate::skills::SkillDef;
use crate::{Error, HandlerError, RequestContext, Server, ToolDef};

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
                Ok::<_, HandlerError>(f(args["text"].as_str().unwrap_or("")))
            }),
    )
}

/// The skill that comes with the managed tool `name`: how to use it.
fn skill_of(name: &str) -> SkillDef {
    let skill = name.replace('_', "-");
    SkillDef::new(format!(
        "---\nname: {skill}\ndescription: How to use the {name} tool, enabled at runtime.\n---\n\
         Call `{name}` with `{{\"text\": \"...\"}}`; it answers with the text transformed.\n"
    ))
    .prefix("runtime")
}

/// The URI of the skill of the managed tool `name`.
fn skill_uri(name: &str) -> String {
    format!("skill://runtime/{}/SKILL.md", name.replace('_', "-"))
}

struct ToolSync {
    catalog: Catalog,
    redis: ConnectionManager,
    key: String,
    one_at_a_time: tokio::sync::Mutex<()>,
    /// SHA-256 of the `--admin-token`.
    admin_token: [u8; 32],
}

/// Whether `headers` carry `Authorization: Bearer TOKEN` whose SHA-256 is `expected`.
fn authorized(headers: &HeaderMap, expected: &[u8; 32]) -> bool {
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        return false;
    };
    let value = value.as_bytes();
    let Some((scheme, token)) = value.split_at_checked(7) else {
        return false;
    };
    if !scheme.eq_ignore_ascii_case(b"bearer ") {
        return false;
    }
    let given: [u8; 32] = Sha256::digest(token.trim_ascii()).into();
    given.ct_eq(expected).into()
}

impl ToolSync {
    async fn run(&self) -> Result<(), Error> {
        let _one = self.one_at_a_time.lock().await;
        let mut cmd = redis::cmd("HGETALL");
        cmd.arg(&self.key);
        let enabled: HashMap<String, String> = query_reconnecting(
            &mut self.redis.clone(),
            &cmd,
            "runtime_tools",
            "runtime tools".into(),
        )
        .await?;
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
        let skills = self.catalog.skill_uris();
        let mut change = self.catalog.change();
        for name in served {
            if skills.contains(&skill_uri(&name)) {
                change = change.remove_skill(skill_uri(&name));
            }
            change = change.remove_tool(name);
        }
        for name in &wanted {
            change = change.add_tool(factory(name).expect("every MANAGED name has a factory"));
            change = change.add_skill(skill_of(name));
        }
        let applied = change.apply()?;
        tracing::info!(version = applied.version(), tools = ?wanted, "runtime tools changed");
        applied.announce().await
    }

    async fn write(&self, command: &str, name: &str) -> StatusCode {
        if !MANAGED.contains(&name) {
            return StatusCode::NOT_FOUND;
        }
        let mut cmd = redis::cmd(command);
        cmd.arg(&self.key).arg(name);
        if command == "HSET" {
            cmd.arg(1);
        }
        let written: Result<i64, Error> = query_reconnecting(
            &mut self.redis.clone(),
            &cmd,
            "runtime_tools",
            "runtime tools".into(),
        )
        .await;
        if let Err(e) = written {
            tracing::warn!(error = %e, "runtime tools not written");
            return StatusCode::SERVICE_UNAVAILABLE;
        }
        match self.run().await {
            Ok(()) => StatusCode::NO_CONTENT,
            Err(e) => {
                tracing::warn!(error = %e, "runtime tools written but not applied here");
                StatusCode::SERVICE_UNAVAILABLE
            }
        }
    }
}

/// 401 with the challenge of RFC 6750.
fn unauthorized() -> Response {
    let challenge = HeaderValue::from_static(r#"Bearer realm="stateless-mcp admin""#);
    (
        StatusCode::UNAUTHORIZED,
        [(header::WWW_AUTHENTICATE, challenge)],
    )
        .into_response()
}

/// `PUT /admin/tools/{name}` enables the tool everywhere, `DELETE` disables it; 401 unless
/// the request carries the admin token.
async fn admin(
    State(s): State<Arc<ToolSync>>,
    method: Method,
    headers: HeaderMap,
    Path(name): Path<String>,
) -> Response {
    if !authorized(&headers, &s.admin_token) {
        return unauthorized();
    }
    let command = if method == Method::PUT {
        "HSET"
    } else {
        "HDEL"
    };
    s.write(command, &name).await.into_response()
}

/// Starts following the shared source for `server` and returns the admin routes.
pub(super) fn start(config: &Config, server: &Server) -> Result<Router, Error> {
    if !config.bus.starts_with("redis") {
        return Err(Error::invalid_definition(
            "--runtime-tools needs a Redis --bus (redis://…), where the enabled set is kept",
        ));
    }
    // Config::load refuses --runtime-tools without a token; a Config built otherwise too.
    let token = config.admin_token.as_deref().filter(|t| !t.is_empty());
    let token = token.ok_or_else(|| {
        Error::invalid_definition("--runtime-tools needs --admin-token (MCP_ADMIN_TOKEN)")
    })?;
    let redis = connect_lazy(&config.bus, "--runtime-tools")?.manager;
    let sync = Arc::new(ToolSync {
        catalog: server.catalog(),
        redis,
        key: format!("{}.runtime-tools", config.bus_prefix),
        one_at_a_time: tokio::sync::Mutex::new(()),
        admin_token: Sha256::digest(token.as_bytes()).into(),
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
            axum::routing::put(admin).delete(admin),
        )
        .with_state(sync))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_managed_tool_has_a_skill_at_its_uri() {
        for name in MANAGED {
            let server = Server::builder().skill(skill_of(name)).build().unwrap();
            assert_eq!(server.catalog().skill_uris(), [skill_uri(name)]);
        }
    }

    #[test]
    fn only_the_configured_bearer_token_is_authorized() {
        let expected: [u8; 32] = Sha256::digest(b"the-admin-token-1234").into();
        let with = |value: &str| {
            let mut h = HeaderMap::new();
            h.insert(header::AUTHORIZATION, HeaderValue::from_str(value).unwrap());
            authorized(&h, &expected)
        };
        assert!(with("Bearer the-admin-token-1234"));
        assert!(with("bearer the-admin-token-1234"));
        assert!(!with("Bearer the-admin-token-123"));
        assert!(!with("Bearer the-admin-token-12345"));
        assert!(!with("Basic the-admin-token-1234"));
        assert!(!with("Bearer "));
        assert!(!with("Bear"));
        assert!(!authorized(&HeaderMap::new(), &expected));
    }
}
