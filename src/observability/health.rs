//! `/healthz` and `/readyz`: the orchestrator's probes, outside the MCP endpoint and its auth.

use axum::Router;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use http::{StatusCode, header};

use super::Readiness;

/// Path of the liveness probe: 200 while the process serves HTTP.
pub const HEALTHZ_PATH: &str = "/healthz";
/// Path of the readiness probe: 200 when [`Readiness`] is ready, 503 otherwise.
pub const READYZ_PATH: &str = "/readyz";

fn json(status: StatusCode, body: serde_json::Value) -> Response {
    (
        status,
        [(header::CACHE_CONTROL, "no-store")],
        axum::Json(body),
    )
        .into_response()
}

async fn healthz() -> Response {
    json(StatusCode::OK, serde_json::json!({ "status": "ok" }))
}

async fn readyz(State(readiness): State<Readiness>) -> Response {
    let degraded = readiness.degraded();
    let mut body = match readiness.check() {
        Ok(()) => (StatusCode::OK, serde_json::json!({ "status": "ready" })),
        Err(reasons) => (
            StatusCode::SERVICE_UNAVAILABLE,
            serde_json::json!({ "status": "not ready", "reasons": reasons }),
        ),
    };
    if !degraded.is_empty() {
        body.1["degraded"] = degraded.into();
    }
    json(body.0, body.1)
}

/// A router serving [`HEALTHZ_PATH`] (`{"status":"ok"}`) and [`READYZ_PATH`]
/// (`{"status":"ready"}`, or 503 with `{"status":"not ready","reasons":[…]}`; either with
/// `"degraded":[…]` while an [advisory](Readiness::advisory) condition does not hold).
///
/// Merge it next to the MCP endpoint, outside any auth layer:
///
/// ```
/// use stateless_mcp::observability::{Readiness, health_router};
///
/// let readiness = Readiness::new();
/// let app: axum::Router = axum::Router::new().merge(health_router(readiness.clone()));
/// ```
pub fn health_router<S>(readiness: Readiness) -> Router<S>
where
    S: Clone + Send + Sync + 'static,
{
    health_router_at(readiness, HEALTHZ_PATH, READYZ_PATH)
}

/// [`health_router`] with the probes on `live` and `ready` instead.
pub(crate) fn health_router_at<S>(readiness: Readiness, live: &str, ready: &str) -> Router<S>
where
    S: Clone + Send + Sync + 'static,
{
    Router::new()
        .route(live, get(healthz))
        .route(ready, get(readyz).with_state(readiness))
}
