//! TLS-safe authorization: the reference binary fetches an `https://` issuer's metadata and
//! keys with the system's root certificates, which `SSL_CERT_FILE` replaces (here: a CA
//! generated at test time); an issuer signed by another CA is not trusted; and a plain
//! `http://` issuer, JWKS or introspection URL off loopback stops the binary at start-up
//! unless `--auth-allow-http` is given.

use std::time::Duration;

use serde_json::json;

use crate::support::authz::Authz;
use crate::support::process::{ServerProcess, run_server, spawn_server_with};
use crate::support::tls::TestCa;

const RESOURCE: &str = "https://mcp.example.com/mcp";

/// The binary with `issuer`, trusting only the CA in `ca_file`.
async fn binary_trusting(issuer: &str, ca_file: &std::path::Path) -> ServerProcess {
    let (issuer, ca_file) = (issuer.to_owned(), ca_file.display().to_string());
    tokio::task::spawn_blocking(move || {
        spawn_server_with(
            &["--auth-issuer", &issuer, "--resource", RESOURCE],
            &[("SSL_CERT_FILE", &ca_file)],
        )
    })
    .await
    .unwrap()
}

/// `tools/list` with `token`: the status and, when it is 200, the (schema-checked) result.
async fn list_tools(server: &ServerProcess, token: &str) -> (u16, String) {
    let (mut h, body) = super::request("tools/list", json!({}));
    h.push(("authorization".into(), format!("Bearer {token}")));
    let client = crate::support::Client::new(&server.url);
    let r = client.post_raw(&h, body.clone()).await;
    if r.status() != 200 {
        return (r.status().as_u16(), r.text().await.unwrap());
    }
    let ex = client.send(h, body, Some("tools/list")).await;
    (ex.status, ex.body.to_string())
}

#[tokio::test(flavor = "multi_thread")]
async fn keys_come_from_a_tls_issuer_whose_ca_is_given_in_ssl_cert_file() {
    let ca = TestCa::new("stateless-mcp test CA");
    let authz = Authz::start_tls(&ca).await;
    assert!(authz.issuer.starts_with("https://localhost:"));
    let server = binary_trusting(&authz.issuer, &ca.pem_file()).await;
    let (status, body) = list_tools(&server, &authz.token(RESOURCE, "")).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\"tools\""), "{body}");
    assert!(authz.jwks_fetches() >= 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tls_issuer_signed_by_an_unknown_ca_is_not_trusted() {
    let ca = TestCa::new("the issuer's CA");
    let other = TestCa::new("some other CA");
    let authz = Authz::start_tls(&ca).await;
    let server = binary_trusting(&authz.issuer, &other.pem_file()).await;
    let (status, body) = list_tools(&server, &authz.token(RESOURCE, "")).await;
    assert_eq!(status, 401, "{body}");
    assert_eq!(authz.jwks_fetches(), 0, "no key was fetched");
    // The log says why: the certificate's issuer is unknown.
    let mut why = None;
    for _ in 0..50 {
        why = server
            .stderr_lines()
            .into_iter()
            .find(|l| l.contains("discovery failed"));
        if why.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let why = why.expect("the discovery failure is logged");
    assert!(
        why.contains("UnknownIssuer") || why.contains("certificate"),
        "{why}"
    );
}

#[test]
fn plain_http_authorization_urls_off_loopback_stop_the_binary() {
    for args in [
        &["--auth-issuer", "http://auth.example.com"][..],
        &[
            "--auth-issuer",
            "https://auth.example.com",
            "--auth-jwks-uri",
            "http://keys.example.com/jwks",
        ][..],
        &[
            "--auth-issuer",
            "https://auth.example.com",
            "--auth-introspection-client-id",
            "rs",
            "--auth-introspection-url",
            "http://10.1.2.3/introspect",
        ][..],
    ] {
        let mut all = vec!["--listen", "127.0.0.1:0", "--resource", RESOURCE];
        all.extend_from_slice(args);
        let (status, text) = run_server(&all, &[]);
        assert!(!status.success(), "{args:?}");
        assert!(text.contains("must be an https URL"), "{args:?}: {text}");
        assert!(text.contains("--auth-allow-http"), "{args:?}: {text}");
    }
}

#[test]
fn auth_allow_http_accepts_a_plain_http_issuer() {
    let server = crate::support::process::spawn_server(&[
        "--auth-issuer",
        "http://auth.example.com",
        "--resource",
        RESOURCE,
        "--auth-allow-http",
    ]);
    assert!(
        server
            .stderr_lines()
            .iter()
            .any(|l| l.contains("authorization on")),
        "{:?}",
        server.stderr_lines()
    );
}
