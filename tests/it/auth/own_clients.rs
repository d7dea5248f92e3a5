//! An application that embeds the crate builds its own HTTP clients whenever it likes: the
//! resource server brings its own TLS set-up (hyper, rustls with an explicit `ring`
//! provider), installs no process-wide rustls provider and does not pull reqwest in, so
//! clients built before and after it behave as the application configured them.

use serde_json::json;

use super::{protect, request, scoped_server};

#[tokio::test]
async fn the_apps_own_reqwest_clients_work_before_and_after_the_resource_server() {
    // Built before any resource server exists (this used to panic: reqwest was unified
    // with `rustls-no-provider` and no provider was installed yet).
    let before = reqwest::Client::new();
    let p = protect(scoped_server(Default::default()), |b| b).await;
    let after = reqwest::Client::builder().build().unwrap();
    assert!(
        rustls::crypto::CryptoProvider::get_default().is_none(),
        "the crate installed a process-wide rustls provider"
    );
    let token = p.authz.token(&p.resource, "");
    for client in [before, after] {
        let (headers, body) = request("tools/list", json!({}));
        let mut req = client.post(&p.server.url).body(body);
        for (k, v) in headers {
            req = req.header(k, v);
        }
        let r = req.bearer_auth(&token).send().await.unwrap();
        assert_eq!(r.status(), 200);
        let text = r.text().await.unwrap();
        assert!(text.contains("\"tools\""), "{text}");
    }
}
