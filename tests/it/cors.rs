//! CORS on the reference server, turned on by `--allowed-origins`: a preflight from an
//! allowed origin gets `Access-Control-Allow-Origin` and the MCP request headers (only
//! those), another origin gets no `Access-Control-*` header; answers expose
//! `Mcp-Session-Id` and `WWW-Authenticate`. (`cors_browser` drives a real browser.)

use serde_json::json;

use crate::support::Client;
use crate::support::process::spawn_server;

const APP: &str = "http://app.example:5173";

/// A preflight for a POST with `requested` headers from `origin`.
async fn preflight(url: &str, origin: &str, requested: &str) -> reqwest::Response {
    crate::support::http()
        .request(reqwest::Method::OPTIONS, url)
        .header("origin", origin)
        .header("access-control-request-method", "POST")
        .header("access-control-request-headers", requested)
        .send()
        .await
        .expect("preflight sent")
}

fn header<'a>(r: &'a reqwest::Response, name: &str) -> Option<&'a str> {
    r.headers().get(name).map(|v| v.to_str().unwrap())
}

/// The comma-separated list in header `name`, lower-cased.
fn list(r: &reqwest::Response, name: &str) -> Vec<String> {
    header(r, name)
        .unwrap_or_default()
        .split(',')
        .map(|s| s.trim().to_ascii_lowercase())
        .filter(|s| !s.is_empty())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_preflight_from_an_allowed_origin_gets_the_mcp_headers_and_another_gets_none() {
    let srv = spawn_server(&["--allowed-origins", APP]);
    let asked = "content-type,authorization,mcp-protocol-version,mcp-method,mcp-name,\
                 mcp-param-region,mcp-session-id,last-event-id,x-not-mcp";
    let r = preflight(&srv.url, APP, asked).await;
    assert!(r.status().is_success(), "{}", r.status());
    assert_eq!(header(&r, "access-control-allow-origin"), Some(APP));
    let methods = list(&r, "access-control-allow-methods");
    for m in ["post", "get", "delete"] {
        assert!(methods.contains(&m.to_owned()), "{methods:?}");
    }
    let allowed = list(&r, "access-control-allow-headers");
    for h in asked.split(',').filter(|h| *h != "x-not-mcp") {
        assert!(allowed.contains(&h.to_owned()), "{h} in {allowed:?}");
    }
    assert!(
        !allowed.contains(&"x-not-mcp".to_owned()),
        "a header outside the MCP set is not allowed: {allowed:?}"
    );

    for other in ["http://evil.example", "http://app.example:5174", "null"] {
        let r = preflight(&srv.url, other, "content-type").await;
        let cors: Vec<_> = r
            .headers()
            .keys()
            .filter(|k| k.as_str().starts_with("access-control-"))
            .collect();
        assert!(cors.is_empty(), "{other}: {cors:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn answers_to_an_allowed_origin_carry_cors_headers_and_others_are_refused() {
    let srv = spawn_server(&["--allowed-origins", APP]);
    let client = Client::new(&srv.url);
    let send = |origin: &'static str| {
        let (mut headers, body) = crate::support::request_parts(
            "tools/call",
            json!(1),
            json!({"name": "echo", "arguments": {"text": "from a browser"}}),
        );
        headers.push(("origin".into(), origin.into()));
        client.send(headers, body, Some("tools/call"))
    };
    let x = send(APP).await;
    assert_eq!(x.status, 200, "{}", x.body);
    assert_eq!(x.result()["content"][0]["text"], "from a browser");
    assert_eq!(x.headers["access-control-allow-origin"], APP);
    let exposed = x.headers["access-control-expose-headers"]
        .to_str()
        .unwrap()
        .to_ascii_lowercase();
    assert!(
        exposed.contains("mcp-session-id") && exposed.contains("www-authenticate"),
        "{exposed}"
    );
    let x = send("http://evil.example").await;
    assert_eq!(x.status, 403, "{}", x.body);
    assert!(x.headers.get("access-control-allow-origin").is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn without_allowed_origins_there_is_no_cors() {
    let srv = spawn_server(&[]);
    let r = preflight(&srv.url, "http://localhost:3000", "content-type").await;
    assert_eq!(r.status(), 405);
    assert!(header(&r, "access-control-allow-origin").is_none());
}
