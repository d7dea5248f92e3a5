//! The OAuth 2.1 resource server (`auth` feature) against a real local authorization server
//! (`support::authz`): every refusal's exact status and `WWW-Authenticate` challenge, scopes,
//! keys, introspection, metadata, filtered lists, and the official Python SDK as a client.

mod binary;
mod connection;
#[cfg(feature = "external-tests")]
mod dpop;
mod introspection;
mod keys;
mod lists;
mod metadata;
mod own_clients;
#[cfg(feature = "external-tests")]
mod python;
mod scopes;
mod tls;
mod tokens;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use stateless_mcp::auth::{ResourceServer, ResourceServerBuilder};
use stateless_mcp::handler::{PromptArguments, TemplateVars};
use stateless_mcp::protocol::{GetPromptResult, PromptMessage, ResourceContents};
use stateless_mcp::{
    HandlerError, PromptDef, RequestContext, ResourceDef, ResourceTemplateDef, Server,
    StreamableHttp, ToolDef,
};

use crate::support::authz::Authz;
use crate::support::{Client, Exchange, TestServer, serve_on};

/// A server whose tools, prompt and resources declare scopes. `write_file` counts its runs.
pub(crate) fn scoped_server(writes: Arc<AtomicUsize>) -> Server {
    let text = |s: &'static str| {
        move |_: RequestContext, _: Value| async move { Ok::<_, HandlerError>(s) }
    };
    Server::builder()
        .tool(
            ToolDef::new("read_file")
                .scopes(["files:read"])
                .raw_handler(text("read")),
        )
        .tool(
            ToolDef::new("write_file")
                .scopes(["files:write"])
                .raw_handler(move |_: RequestContext, _: Value| {
                    let writes = writes.clone();
                    async move {
                        writes.fetch_add(1, Ordering::SeqCst);
                        Ok::<_, HandlerError>("written")
                    }
                }),
        )
        .tool(
            ToolDef::new("whoami").raw_handler(|ctx: RequestContext, _: Value| async move {
                let p = ctx.principal().cloned().unwrap_or_default();
                Ok::<_, HandlerError>(
                    json!({
                        "subject": p.subject,
                        "client_id": p.client_id,
                        "issuer": p.issuer,
                        "scopes": p.scopes,
                        "tenant": p.claims.get("tenant"),
                    })
                    .to_string(),
                )
            }),
        )
        .prompt(
            PromptDef::new("secret_prompt")
                .scopes(["prompts:secret"])
                .handler(|_, _: PromptArguments| async {
                    Ok(GetPromptResult::new(vec![PromptMessage::user_text("hi")]))
                }),
        )
        .prompt(
            PromptDef::new("open_prompt").handler(|_, _: PromptArguments| async {
                Ok(GetPromptResult::new(vec![PromptMessage::user_text("hi")]))
            }),
        )
        .resource(
            ResourceDef::new("test://public", "public")
                .handler(|_, uri| async move { Ok(ResourceContents::text(uri, "public")) }),
        )
        .resource(
            ResourceDef::new("test://private", "private")
                .scopes(["files:read"])
                .handler(|_, uri| async move { Ok(ResourceContents::text(uri, "private")) }),
        )
        .resource_template(
            ResourceTemplateDef::new("test://docs/{id}", "docs")
                .scopes(["docs"])
                .handler(|_, uri, _: TemplateVars| async move {
                    Ok(ResourceContents::text(uri, "doc"))
                }),
        )
        .build()
        .unwrap()
}

/// A protected server and its authorization server.
pub(crate) struct Protected {
    pub(crate) authz: Authz,
    pub(crate) server: TestServer,
    pub(crate) client: Client,
    /// The resource identifier (`http://localhost:PORT/mcp`).
    pub(crate) resource: String,
    /// `http://localhost:PORT`.
    pub(crate) base: String,
    pub(crate) writes: Arc<AtomicUsize>,
}

/// A refused (or raw) HTTP exchange.
#[derive(Debug)]
pub(crate) struct Raw {
    pub(crate) status: u16,
    pub(crate) challenge: Option<String>,
    pub(crate) headers: reqwest::header::HeaderMap,
    pub(crate) body: String,
}

impl Raw {
    /// The body as JSON.
    pub(crate) fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }
}

/// Serves [`scoped_server`] protected by a resource server (issuer discovery, `mcp` needed
/// by every request, per-operation scopes from the server), adjusted by `tweak`.
pub(crate) async fn protected(
    tweak: impl FnOnce(ResourceServerBuilder) -> ResourceServerBuilder,
) -> Protected {
    let writes = Arc::new(AtomicUsize::new(0));
    let mut p = protect(scoped_server(writes.clone()), |b| {
        tweak(b.required_scopes(["mcp"]))
    })
    .await;
    p.writes = writes;
    p
}

/// Serves `server` protected by a resource server (issuer discovery, per-operation scopes
/// from the server), adjusted by `tweak`.
pub(crate) async fn protect(
    server: Server,
    tweak: impl FnOnce(ResourceServerBuilder) -> ResourceServerBuilder,
) -> Protected {
    let authz = Authz::start().await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let base = format!("http://localhost:{port}");
    let resource = format!("{base}/mcp");
    let rs = tweak(
        ResourceServer::builder(resource.clone())
            .issuer(authz.issuer.clone())
            .operation_scopes(server.clone()),
    )
    .build()
    .unwrap();
    let router = rs.protect(StreamableHttp::new(server).into_router());
    let server = serve_on(listener, router, "/mcp");
    let client = Client::new(&server.url);
    Protected {
        authz,
        server,
        client,
        resource,
        base,
        writes: Arc::default(),
    }
}

/// Headers and body of a well-formed request for `method` (id 1).
pub(crate) fn request(method: &str, params: Value) -> (Vec<(String, String)>, String) {
    crate::support::request_parts(method, json!(1), params)
}

fn bearer(token: &str) -> (String, String) {
    ("authorization".into(), format!("Bearer {token}"))
}

impl Protected {
    /// `resource_metadata` URL of the challenges.
    pub(crate) fn metadata_url(&self) -> String {
        format!("{}/.well-known/oauth-protected-resource/mcp", self.base)
    }

    /// A valid token for this resource with `scope`.
    pub(crate) fn token(&self, scope: &str) -> String {
        self.authz.token(&self.resource, scope)
    }

    /// An admitted request: every message checked against the schema.
    pub(crate) async fn call(&self, token: &str, method: &str, params: Value) -> Exchange {
        let (mut headers, body) = request(method, params);
        headers.push(bearer(token));
        let ex = self.client.send(headers, body, Some(method)).await;
        assert_eq!(ex.status, 200, "{}", ex.body);
        ex
    }

    /// An admitted `tools/call` of `tool` without arguments.
    pub(crate) async fn call_tool(&self, token: &str, tool: &str) -> Exchange {
        let params = serde_json::json!({"name": tool, "arguments": {}});
        self.call(token, "tools/call", params).await
    }

    /// Sends exactly `headers` and `body` to the endpoint with `query`, without schema checks
    /// (refusals are OAuth JSON errors, not MCP messages).
    pub(crate) async fn raw(
        &self,
        query: &str,
        headers: Vec<(String, String)>,
        body: String,
    ) -> Raw {
        let mut req = self
            .client
            .http
            .post(format!("{}{query}", self.server.url))
            .body(body);
        for (k, v) in &headers {
            req = req.header(k.as_str(), v.as_str());
        }
        let resp = req.send().await.unwrap();
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let challenge = headers
            .get("www-authenticate")
            .map(|v| v.to_str().unwrap().to_owned());
        Raw {
            status,
            challenge,
            headers,
            body: resp.text().await.unwrap(),
        }
    }

    /// A well-formed request with `token` (if any), not schema-checked.
    pub(crate) async fn send(&self, token: Option<&str>, method: &str, params: Value) -> Raw {
        let (mut headers, body) = request(method, params);
        if let Some(t) = token {
            headers.push(bearer(t));
        }
        self.raw("", headers, body).await
    }

    /// A `tools/call` of `tool` without arguments, with `token` (if any), not schema-checked.
    pub(crate) async fn send_tool(&self, token: Option<&str>, tool: &str) -> Raw {
        let params = serde_json::json!({"name": tool, "arguments": {}});
        self.send(token, "tools/call", params).await
    }

    /// Asserts a `401 invalid_token` refusal with the given description and `scope`.
    pub(crate) fn assert_invalid_token(&self, r: &Raw, description: &str, scope: &str) {
        assert_eq!(r.status, 401, "{r:?}");
        assert_eq!(
            r.challenge.as_deref(),
            Some(
                format!(
                    "Bearer error=\"invalid_token\", resource_metadata=\"{}\", scope=\"{scope}\", error_description=\"{description}\"",
                    self.metadata_url()
                )
                .as_str()
            )
        );
        let body = r.json();
        assert_eq!(body["error"], "invalid_token");
        assert_eq!(body["error_description"], description);
        assert_eq!(r.headers["content-type"], "application/json");
    }
}
