//! The library's `Runner` in-process: the MCP endpoint next to the user's own routes, the
//! probes, h2c, the response header, and the drain driven by a shutdown signal of the
//! user's own (readiness 503 → listener closed → open listen streams ended gracefully →
//! `serve` returns).

use std::time::Duration;

use serde_json::json;
use stateless_mcp::{Runner, Server};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::support::listen::Listener;
use crate::support::{Client, fixtures_server};

struct Running {
    base: String,
    url: String,
    stop: CancellationToken,
    done: tokio::task::JoinHandle<Result<(), stateless_mcp::Error>>,
}

/// `server` in a runner with a response header and the given drain delay.
async fn run(server: Server, drain_delay: Duration) -> Running {
    let runner = Runner::new(server)
        .response_header(
            http::HeaderName::from_static("x-served-by"),
            http::HeaderValue::from_static("runner-test"),
        )
        .drain_delay(drain_delay)
        .shutdown_timeout(Duration::from_secs(10));
    serve_runner(runner).await
}

/// Serves `runner` on a fresh port next to a `/hello` route of the user's own, until the
/// returned stop token is cancelled.
async fn serve_runner(runner: Runner) -> Running {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let stop = CancellationToken::new();
    let runner = runner
        .listener(listener)
        .routes(axum::Router::new().route("/hello", axum::routing::get(|| async { "hi" })))
        .shutdown_signal(stop.clone().cancelled_owned());
    Running {
        base: format!("http://localhost:{port}"),
        url: format!("http://localhost:{port}/mcp"),
        stop,
        done: tokio::spawn(runner.serve()),
    }
}

async fn status(url: String) -> Result<u16, reqwest::Error> {
    crate::support::get(url).await.map(|r| r.status().as_u16())
}

#[tokio::test(flavor = "multi_thread")]
async fn serves_the_endpoint_own_routes_and_probes_over_http1_and_h2c() {
    let r = run(fixtures_server(), Duration::ZERO).await;
    let hello = crate::support::get(format!("{}/hello", r.base))
        .await
        .unwrap();
    assert_eq!(hello.headers()["x-served-by"], "runner-test");
    assert_eq!(hello.text().await.unwrap(), "hi");
    assert_eq!(status(format!("{}/healthz", r.base)).await.unwrap(), 200);
    assert_eq!(status(format!("{}/readyz", r.base)).await.unwrap(), 200);
    let x = Client::new(&r.url)
        .request(
            "tools/call",
            json!(1),
            json!({"name": "echo", "arguments": {"text": "over http/1.1"}}),
        )
        .await;
    assert_eq!(x.result()["content"][0]["text"], "over http/1.1");
    assert_eq!(x.headers["x-served-by"], "runner-test");
    // The same port speaks HTTP/2 without TLS (prior knowledge).
    let h2 = Client {
        http: crate::support::http_builder()
            .http2_prior_knowledge()
            .build()
            .unwrap(),
        url: r.url.clone(),
    };
    let x = h2
        .request(
            "tools/call",
            json!(2),
            json!({"name": "echo", "arguments": {"text": "over h2c"}}),
        )
        .await;
    assert_eq!(x.result()["content"][0]["text"], "over h2c");
    r.stop.cancel();
    r.done.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_shutdown_signal_drains_readiness_first_then_listen_streams_then_returns() {
    let r = run(fixtures_server(), Duration::from_millis(800)).await;
    let client = Client::new(&r.url);
    let mut stream = Listener::open(&client, json!("l"), json!({"toolsListChanged": true})).await;
    assert_eq!(
        stream.next_kind().await,
        "notifications/subscriptions/acknowledged"
    );
    r.stop.cancel();
    // Draining: not ready, still serving.
    let mut draining = false;
    for _ in 0..100 {
        if status(format!("{}/readyz", r.base)).await.unwrap() == 503 {
            draining = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(draining, "/readyz never answered 503 after the signal");
    assert_eq!(status(format!("{}/hello", r.base)).await.unwrap(), 200);
    // After the delay, the listen stream gets its graceful result and ends.
    let last = stream.next().await.expect("the graceful result");
    assert_eq!(last["id"], "l");
    assert_eq!(last["result"]["resultType"], "complete");
    assert!(stream.next().await.is_none());
    tokio::time::timeout(Duration::from_secs(15), r.done)
        .await
        .expect("serve returns after the drain")
        .unwrap()
        .unwrap();
    // The listener is closed: new connections are refused.
    assert!(status(format!("{}/healthz", r.base)).await.is_err());
}

/// A server whose `whoami` tool answers with the caller's subject (`nobody` without one).
fn whoami_server() -> Server {
    use stateless_mcp::{HandlerError, RequestContext, ToolDef};
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct NoArgs {}
    Server::builder()
        .tool(
            ToolDef::new("whoami").handler(|ctx: RequestContext, _: NoArgs| async move {
                let who = ctx.principal().and_then(|p| p.subject.clone());
                Ok::<_, HandlerError>(who.unwrap_or_else(|| "nobody".to_owned()))
            }),
        )
        .build()
        .unwrap()
}

/// Marks every response of the layer it is in with `x-layer: <name>`.
fn marking(
    name: &'static str,
) -> axum::middleware::MapResponseLayer<
    impl Fn(axum::response::Response) -> std::future::Ready<axum::response::Response>
    + Clone
    + Send
    + Sync
    + 'static,
    (),
    (),
> {
    axum::middleware::map_response(move |mut r: axum::response::Response| {
        r.headers_mut()
            .append("x-layer", http::HeaderValue::from_static(name));
        std::future::ready(r)
    })
}

/// The `x-layer` marks of a response, in order.
fn marks(headers: &http::HeaderMap) -> Vec<String> {
    headers
        .get_all("x-layer")
        .iter()
        .map(|v| v.to_str().unwrap().to_owned())
        .collect()
}

/// Serves `runner` and checks what wraps its endpoint: a `tools/call` (answered without the
/// router when the endpoint is only layered) sees the caller `who` and gets the `marks`, in
/// order; HEAD on the endpoint's path (always the router's route: 405) gets the same marks;
/// the user's own route gets none.
async fn check_wrapping(runner: Runner, who: &str, expected: [&str; 2]) {
    let r = serve_runner(runner.drain_delay(Duration::ZERO)).await;
    let x = Client::new(&r.url)
        .request(
            "tools/call",
            json!(1),
            json!({"name": "whoami", "arguments": {}}),
        )
        .await;
    assert_eq!(x.result()["content"][0]["text"], who);
    assert_eq!(marks(&x.headers), expected);
    let head = crate::support::http_builder()
        .build()
        .unwrap()
        .head(&r.url)
        .send()
        .await
        .unwrap();
    assert_eq!(head.status(), 405);
    assert_eq!(marks(head.headers()), expected);
    let hello = crate::support::get(format!("{}/hello", r.base))
        .await
        .unwrap();
    assert!(marks(hello.headers()).is_empty());
    r.stop.cancel();
    r.done.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn endpoint_layers_wrap_the_direct_answers_and_the_router_alike_in_order() {
    // The inner layer marks the response first; the first one puts the caller in.
    let caller = stateless_mcp::handler::Principal::new("layered-caller");
    let runner = Runner::new(whoami_server())
        .layer_endpoint(axum::Extension(caller))
        .layer_endpoint(marking("inner"))
        .layer_endpoint(marking("outer"));
    check_wrapping(runner, "layered-caller", ["inner", "outer"]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_router_wrap_sees_every_request_to_the_endpoint() {
    let caller = stateless_mcp::handler::Principal::new("wrapped-caller");
    let runner = Runner::new(whoami_server())
        .layer_endpoint(marking("layer"))
        .wrap_endpoint(move |router| router.layer(axum::Extension(caller)).layer(marking("wrap")));
    check_wrapping(runner, "wrapped-caller", ["layer", "wrap"]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn without_layers_the_endpoint_answers_as_its_router_does() {
    // The same requests to a runner (direct answers) and to the endpoint's router served by
    // axum: the same status, body and headers but `date` and the runner's own.
    let r = serve_runner(Runner::new(whoami_server()).drain_delay(Duration::ZERO)).await;
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let router = stateless_mcp::StreamableHttp::new(whoami_server()).into_router();
    let plain = tokio::spawn(async move { axum::serve(listener, router).await });
    let plain_url = format!("http://localhost:{port}/mcp");
    let http = crate::support::http_builder().build().unwrap();
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"}
    });
    let bodies = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": "whoami", "arguments": {}, "_meta": meta}}),
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
               "params": {"requestId": 9, "_meta": meta}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "no/such", "params": {"_meta": meta}}),
    ];
    let mut compared = 0;
    for method in [
        reqwest::Method::POST,
        reqwest::Method::GET,
        reqwest::Method::DELETE,
    ] {
        for body in &bodies {
            let mut seen = Vec::new();
            for url in [&r.url, &plain_url] {
                let resp = http
                    .request(method.clone(), url.as_str())
                    .header("content-type", "application/json")
                    .header("accept", "application/json, text/event-stream")
                    .header("mcp-protocol-version", "2026-07-28")
                    .body(body.to_string())
                    .send()
                    .await
                    .unwrap();
                let status = resp.status().as_u16();
                let mut headers: Vec<(String, String)> = resp
                    .headers()
                    .iter()
                    .filter(|(n, _)| *n != "date")
                    .map(|(n, v)| (n.to_string(), v.to_str().unwrap().to_owned()))
                    .collect();
                headers.sort();
                let text = resp.text().await.unwrap();
                // Every JSON answer is a message of the 2026-07-28 schema.
                if let Ok(message) = serde_json::from_str::<serde_json::Value>(&text) {
                    let method = body.get("id").and(body["method"].as_str());
                    crate::support::schema::check_message(&message, method);
                }
                seen.push((status, headers, text));
            }
            assert_eq!(seen[0], seen[1], "{method} {body}");
            compared += 1;
        }
    }
    assert_eq!(compared, 9);
    plain.abort();
    r.stop.cancel();
    r.done.await.unwrap().unwrap();
}

/// A runner on a fresh port with the app's `routes`, stopped by the returned token.
async fn serve_with_routes(runner: Runner, routes: axum::Router) -> Running {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let stop = CancellationToken::new();
    let runner = runner
        .listener(listener)
        .routes(routes)
        .drain_delay(Duration::ZERO)
        .shutdown_signal(stop.clone().cancelled_owned());
    Running {
        base: format!("http://localhost:{port}"),
        url: format!("http://localhost:{port}/mcp"),
        stop,
        done: tokio::spawn(runner.serve()),
    }
}

async fn text(url: String) -> (u16, String) {
    let r = crate::support::get(url).await.unwrap();
    (r.status().as_u16(), r.text().await.unwrap())
}

#[tokio::test(flavor = "multi_thread")]
async fn an_app_route_on_a_probe_path_is_the_apps_and_the_other_probes_stay() {
    // The app has a `/healthz` of its own (axum's merge would panic on the overlap).
    let own = axum::Router::new().route("/healthz", axum::routing::get(|| async { "mine" }));
    let r = serve_with_routes(Runner::new(fixtures_server()), own).await;
    assert_eq!(
        text(format!("{}/healthz", r.base)).await,
        (200, "mine".into())
    );
    // The runner's readiness probe is still served, and so is the endpoint.
    assert_eq!(
        text(format!("{}/readyz", r.base)).await,
        (200, r#"{"status":"ready"}"#.into())
    );
    let x = Client::new(&r.url)
        .request(
            "tools/call",
            json!(1),
            json!({"name": "echo", "arguments": {"text": "next to the app's probe"}}),
        )
        .await;
    assert_eq!(x.result()["content"][0]["text"], "next to the app's probe");
    r.stop.cancel();
    r.done.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_probe_paths_are_configurable() {
    let own = axum::Router::new().route("/hello", axum::routing::get(|| async { "hi" }));
    let runner = Runner::new(fixtures_server()).health_paths("/live", "/ready");
    let r = serve_with_routes(runner, own).await;
    assert_eq!(
        text(format!("{}/live", r.base)).await,
        (200, r#"{"status":"ok"}"#.into())
    );
    assert_eq!(
        text(format!("{}/ready", r.base)).await,
        (200, r#"{"status":"ready"}"#.into())
    );
    assert_eq!(status(format!("{}/healthz", r.base)).await.unwrap(), 404);
    assert_eq!(status(format!("{}/readyz", r.base)).await.unwrap(), 404);
    r.stop.cancel();
    r.done.await.unwrap().unwrap();
}

#[test]
#[should_panic(expected = "/mcp")]
fn an_app_route_on_the_endpoint_path_fails_when_the_runner_is_built() {
    // Not when it serves: `routes` itself refuses the overlap.
    let own = axum::Router::new().route("/mcp", axum::routing::get(|| async { "mine" }));
    let _ = Runner::new(Server::builder().build().unwrap()).routes(own);
}
