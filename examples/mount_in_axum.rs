//! An MCP endpoint mounted in an existing axum application, served by the application's own
//! `axum::serve`: no `Runner`.
//!
//! The application has routes of its own (`/healthz`, `/api/items`) under its own tower-http
//! layers (a request trace around everything, a timeout and a CORS policy for its API); the
//! MCP endpoint is one more service in its router (`route_service("/mcp", …)`), with its
//! own CORS policy for browser clients. Sockets get `TCP_NODELAY` through axum's listener
//! API, and SIGTERM or Ctrl-C stops it gracefully: no new connections, listen streams end
//! with their result, requests in flight finish, then the process exits 0.
//!
//! ```text
//! cargo run --example mount_in_axum [ADDRESS]     # default 127.0.0.1:3000
//! ```
//!
//! It logs `listening on ADDRESS` once it serves. MCP requests go to `http://ADDRESS/mcp`;
//! `GET /api/items` and `GET /healthz` are the application's own. Uses the default features
//! only (none needed).

use std::time::Duration;

use axum::Router;
use axum::routing::get;
use axum::serve::{Listener as _, ListenerExt as _};
use http::{Method, StatusCode};
use schemars::JsonSchema;
use serde::Deserialize;
use stateless_mcp::transport::http::shutdown_signal;
use stateless_mcp::{HandlerError, RequestContext, Server, StreamableHttp, ToolDef};
use tower_http::cors::CorsLayer;
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::TraceLayer;

#[derive(Deserialize, JsonSchema)]
struct Shout {
    /// Text to upper-case.
    text: String,
}

#[derive(Deserialize, JsonSchema)]
struct Wait {
    /// Milliseconds to wait before answering (at most 10 000).
    ms: u64,
}

/// The application's MCP server: two tools.
fn mcp_server() -> Result<Server, stateless_mcp::Error> {
    Server::builder()
        .tool(
            ToolDef::new("shout")
                .description("Upper-cases its input")
                .handler(|_ctx: RequestContext, args: Shout| async move {
                    Ok::<_, HandlerError>(args.text.to_uppercase())
                }),
        )
        .tool(
            ToolDef::new("wait")
                .description("Answers after a while")
                .handler(|_ctx: RequestContext, args: Wait| async move {
                    let ms = args.ms.min(10_000);
                    tracing::info!(ms, "waiting");
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    Ok::<_, HandlerError>(format!("waited {ms} ms"))
                }),
        )
        .build()
}

/// The application as it was before MCP: its own routes and layers.
fn own_routes() -> Router {
    let api = Router::new()
        .route("/api/items", get(|| async { "[\"apple\",\"pear\"]" }))
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            Duration::from_secs(10),
        ))
        .layer(
            CorsLayer::new()
                .allow_origin(http::HeaderValue::from_static("http://localhost:8000"))
                .allow_methods([Method::GET]),
        );
    Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .merge(api)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();
    let address = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:3000".to_owned());
    let server = mcp_server()?;

    // The endpoint: a tower service; browsers on the front-end's origin may call it.
    let mcp = StreamableHttp::new(server.clone())
        .allowed_origins(["http://localhost:8000"])
        .cors(true)
        .into_service();
    let app = own_routes()
        .route_service("/mcp", mcp)
        .layer(TraceLayer::new_for_http());

    // Installed before serving, so a SIGTERM from now on drains.
    let stop = shutdown_signal();
    let listener = tokio::net::TcpListener::bind(&address)
        .await?
        .tap_io(|tcp| {
            // Without it, small SSE writes (progress, listen events) wait for delayed ACKs.
            let _ = tcp.set_nodelay(true);
        });
    tracing::info!("listening on {}", listener.local_addr()?);
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            stop.await;
            tracing::info!("shutting down: ending listen streams, finishing requests");
            // Listen streams never end on their own: without this the shutdown would wait.
            server.drain().await;
        })
        .await?;
    tracing::info!("drained; exiting");
    Ok(())
}
