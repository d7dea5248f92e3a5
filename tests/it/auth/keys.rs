//! Signing keys: rotation found without restart, bounded refresh, outages, background
//! refresh.

use std::time::Duration;

use serde_json::json;

use super::protected;
use crate::support::authz::rsa_key;

#[tokio::test]
async fn unknown_kid_is_refused_then_found_after_rotation() {
    let p = protected(|b| b.jwks_refresh(Duration::ZERO, Duration::from_secs(3600))).await;
    p.call(&p.token("mcp"), "tools/list", json!({})).await;
    let fetches = p.authz.jwks_fetches();

    let next = rsa_key(1, "rsa-2");
    let token = next.sign(&p.authz.claims(&p.resource, "mcp"));
    let r = p.send(Some(&token), "tools/list", json!({})).await;
    p.assert_invalid_token(&r, "The token is signed with an unknown key", "mcp");
    assert_eq!(
        p.authz.jwks_fetches(),
        fetches + 1,
        "an unknown kid refreshes the set"
    );

    p.authz.publish(&next);
    p.call(&token, "tools/list", json!({})).await;
    assert_eq!(p.authz.jwks_fetches(), fetches + 2);
    // Known keys are served from the cache.
    p.call(&token, "tools/list", json!({})).await;
    p.call(&p.token("mcp"), "tools/list", json!({})).await;
    assert_eq!(p.authz.jwks_fetches(), fetches + 2);
}

#[tokio::test]
async fn refreshes_for_unknown_kids_are_rate_limited() {
    let p =
        protected(|b| b.jwks_refresh(Duration::from_secs(3600), Duration::from_secs(3600))).await;
    p.call(&p.token("mcp"), "tools/list", json!({})).await;
    let fetches = p.authz.jwks_fetches();
    let next = rsa_key(1, "rsa-2");
    p.authz.publish(&next);
    let token = next.sign(&p.authz.claims(&p.resource, "mcp"));
    for _ in 0..5 {
        let r = p.send(Some(&token), "tools/list", json!({})).await;
        p.assert_invalid_token(&r, "The token is signed with an unknown key", "mcp");
    }
    assert_eq!(
        p.authz.jwks_fetches(),
        fetches,
        "a set fetched within the minimum interval is not fetched again"
    );
}

#[tokio::test]
async fn jwks_outage_keeps_cached_keys_and_fails_closed_for_unknown_ones() {
    let p = protected(|b| b.jwks_refresh(Duration::ZERO, Duration::from_secs(3600))).await;
    p.call(&p.token("mcp"), "tools/list", json!({})).await;
    p.authz.set_jwks_down(true);
    let fetches = p.authz.jwks_fetches();
    // Cached keys keep working.
    p.call(&p.token("mcp"), "tools/list", json!({})).await;
    p.call(
        &p.authz.ec.sign(&p.authz.claims(&p.resource, "mcp")),
        "tools/list",
        json!({}),
    )
    .await;
    // An unknown kid: the refresh fails and the token is refused.
    let next = rsa_key(1, "rsa-2");
    p.authz.publish(&next);
    let token = next.sign(&p.authz.claims(&p.resource, "mcp"));
    let r = p.send(Some(&token), "tools/list", json!({})).await;
    p.assert_invalid_token(&r, "The token is signed with an unknown key", "mcp");
    assert!(
        p.authz.jwks_fetches() > fetches,
        "the refresh was attempted"
    );
    // The old keys survived the failed refresh; the new one works once the endpoint is back.
    p.call(&p.token("mcp"), "tools/list", json!({})).await;
    p.authz.set_jwks_down(false);
    p.call(&token, "tools/list", json!({})).await;
}

#[tokio::test]
async fn keys_are_refreshed_in_the_background_before_they_expire() {
    // On-demand refreshes are effectively off; only the background refresh (driven by the
    // set's one-second max-age) can pick up the rotated key.
    let p =
        protected(|b| b.jwks_refresh(Duration::from_secs(3600), Duration::from_secs(3600))).await;
    p.authz.set_jwks_max_age(1);
    p.call(&p.token("mcp"), "tools/list", json!({})).await;
    let next = rsa_key(2, "rsa-3");
    p.authz.publish(&next);
    let after = p.authz.jwks_fetches();
    // Wait for the next background fetch (an event, not a duration under test).
    let mut waited = 0;
    while p.authz.jwks_fetches() == after {
        assert!(waited < 600, "no background refresh happened");
        tokio::time::sleep(Duration::from_millis(100)).await;
        waited += 1;
    }
    // Let the fetch's response land in the cache.
    let token = next.sign(&p.authz.claims(&p.resource, "mcp"));
    let mut tries = 0;
    loop {
        let r = p.send(Some(&token), "tools/list", json!({})).await;
        if r.status == 200 {
            break;
        }
        tries += 1;
        assert!(
            tries < 100,
            "the background refresh did not install the new key: {r:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    p.call(&token, "tools/list", json!({})).await;
}
