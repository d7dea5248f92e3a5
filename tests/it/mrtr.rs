//! Multi-round-trip requests over real sockets: `input_required`, retries carrying
//! `inputResponses` and sealed `requestState`, across server instances sharing a key ring,
//! and every way a state can be misused.

use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use stateless_mcp::protocol::ResourceContents;
use stateless_mcp::{
    InputRequired, RequestContext, ResourceDef, Server, StateKeys, ToolDef, ToolError,
};

use crate::support::{Client, TestServer, start, start_with_test_principal};

const K1: &str = "k1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
const K2: &str = "k2:HxscGRoYFxYVFBMSERAPDg0MCwoJCAcGBQQDAgEAAAA=";

#[derive(Deserialize, JsonSchema)]
struct Booking {
    city: String,
}

#[derive(Deserialize)]
struct Confirm {
    ok: bool,
}

/// A server with the conformance fixtures, a `book` tool that asks for confirmation and
/// carries the city in its state, and a resource that asks before it can be read.
fn server(keys: &str, ttl: Duration) -> Server {
    let b = stateless_mcp::fixtures::conformance(Server::builder())
        .state_keys(keys.parse::<StateKeys>().unwrap())
        .state_ttl(ttl)
        .tool(
            ToolDef::new("book").handler(|ctx: RequestContext, args: Booking| async move {
                let input = ctx.input();
                if let (Some(city), Some(Confirm { ok })) = (
                    input.state::<String>(),
                    input.accepted::<Confirm>("confirm"),
                ) {
                    assert_eq!(city, args.city, "state is bound to the arguments");
                    let who = ctx
                        .principal()
                        .and_then(|p| p.subject.clone())
                        .unwrap_or_else(|| "anonymous".into());
                    return Ok(format!("{who} booked {city}: {ok}"));
                }
                Err(ToolError::from(
                    InputRequired::new()
                        .elicit_form(
                            "confirm",
                            format!("Book {}?", args.city),
                            json!({"type": "object", "properties": {"ok": {"type": "boolean"}}}),
                        )
                        .state(&args.city),
                ))
            }),
        )
        .tool(
            ToolDef::new("login").handler(|ctx: RequestContext, _: Empty| async move {
                if ctx.input().elicitation("login").is_some() {
                    return Ok("logged in");
                }
                Err(InputRequired::new()
                    .elicit_url("login", "Sign in", "https://example.com/login")
                    .into())
            }),
        )
        .resource(ResourceDef::new("vault://secret", "secret").handler(
            |ctx: RequestContext, uri| async move {
                match ctx.input().accepted::<Confirm>("unlock") {
                    Some(Confirm { ok: true }) => Ok(ResourceContents::text(uri, "the secret")),
                    _ => Err(InputRequired::new()
                        .elicit_form(
                            "unlock",
                            "Unlock the vault?",
                            json!({"type": "object", "properties": {"ok": {"type": "boolean"}}}),
                        )
                        .state(&"vault")
                        .into()),
                }
            },
        ));
    b.build().unwrap()
}

#[derive(Deserialize, JsonSchema)]
struct Empty {}

async fn serve(keys: &str) -> TestServer {
    start(server(keys, Duration::from_secs(600))).await
}

/// Serves with a test-only authentication layer: `x-test-user` becomes the principal.
async fn serve_with_principal(keys: &str) -> TestServer {
    start_with_test_principal(server(keys, Duration::from_secs(600))).await
}

fn caps(c: Value) -> Value {
    json!({"io.modelcontextprotocol/clientCapabilities": c})
}

fn elicit_caps() -> Value {
    caps(json!({"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {}}))
}

async fn call(client: &Client, id: u64, params: Value) -> crate::support::Exchange {
    client.request("tools/call", json!(id), params).await
}

fn book(city: &str, extra: Value) -> Value {
    let mut p = json!({"name": "book", "arguments": {"city": city}, "_meta": elicit_caps()});
    for (k, v) in extra.as_object().unwrap() {
        p[k] = v.clone();
    }
    p
}

fn confirm() -> Value {
    json!({"confirm": {"action": "accept", "content": {"ok": true}}})
}

/// Round 1 of `book`: the sealed state.
async fn first_round(client: &Client, city: &str) -> String {
    let r1 = call(client, 1, book(city, json!({}))).await;
    assert_eq!(r1.status, 200);
    let result = r1.result();
    assert_eq!(result["resultType"], "input_required");
    assert_eq!(
        result["inputRequests"]["confirm"]["method"],
        "elicitation/create"
    );
    assert!(
        result.get("ttlMs").is_none(),
        "input_required is never cacheable"
    );
    result["requestState"].as_str().unwrap().to_owned()
}

fn reason(ex: &crate::support::Exchange) -> String {
    assert_eq!(ex.status, 400, "{}", ex.body);
    assert_eq!(ex.error_code(), -32602, "{}", ex.body);
    ex.response()["error"]["data"]["reason"]
        .as_str()
        .unwrap_or_else(|| panic!("a reason in {}", ex.body))
        .to_owned()
}

#[tokio::test]
async fn a_state_sealed_by_one_instance_is_accepted_by_another_with_the_same_keys() {
    let a = serve(K1).await;
    let b = serve(K1).await;
    let state = first_round(&Client::new(&a.url), "Lisbon").await;
    assert!(state.starts_with("v1.k1."), "{state}");
    let r2 = call(
        &Client::new(&b.url),
        2,
        book(
            "Lisbon",
            json!({"inputResponses": confirm(), "requestState": state}),
        ),
    )
    .await;
    assert_eq!(r2.status, 200, "{}", r2.body);
    assert_eq!(r2.result()["resultType"], "complete");
    assert_eq!(
        r2.result()["content"][0]["text"],
        "anonymous booked Lisbon: true"
    );
}

#[tokio::test]
async fn every_tampering_and_replay_is_rejected_with_invalid_params() {
    let a = serve(K1).await;
    let client = Client::new(&a.url);
    let state = first_round(&client, "Oslo").await;
    let retry = |city: &str, state: Value| {
        book(
            city,
            json!({"inputResponses": confirm(), "requestState": state}),
        )
    };

    let appended = call(
        &client,
        2,
        retry("Oslo", json!(format!("{state}-TAMPERED"))),
    )
    .await;
    assert!(
        ["malformed", "tampered"].contains(&reason(&appended).as_str()),
        "{}",
        appended.body
    );

    let mut bytes = state.clone().into_bytes();
    let i = bytes.len() - 10;
    bytes[i] = if bytes[i] == b'A' { b'B' } else { b'A' };
    let flipped = call(
        &client,
        3,
        retry("Oslo", json!(String::from_utf8(bytes).unwrap())),
    )
    .await;
    assert_eq!(reason(&flipped), "tampered");

    let other_args = call(&client, 4, retry("Paris", json!(state))).await;
    assert_eq!(reason(&other_args), "wrong_params");

    let other_method = json!({"uri": "vault://secret", "requestState": state,
                                  "inputResponses": {"unlock": {"action": "accept", "content": {"ok": true}}},
                                  "_meta": elicit_caps()});
    let read = client
        .request("resources/read", json!(5), other_method)
        .await;
    assert_eq!(reason(&read), "wrong_method");

    let foreign = serve(K2).await;
    let r = call(&Client::new(&foreign.url), 6, retry("Oslo", json!(state))).await;
    assert_eq!(reason(&r), "unknown_key");

    let not_a_string = call(&client, 7, retry("Oslo", json!(42))).await;
    assert_eq!(not_a_string.error_code(), -32602);
    assert_eq!(not_a_string.status, 400);

    // A fresh, untouched state still works: nothing above consumed or poisoned it.
    let ok = call(&client, 8, retry("Oslo", json!(state))).await;
    assert_eq!(ok.result()["resultType"], "complete");
}

#[tokio::test]
async fn a_state_is_bound_to_its_caller() {
    let srv = serve_with_principal(K1).await;
    let client = Client::new(&srv.url);
    let as_user = |user: &'static str, id: u64, params: Value| {
        let client = client.clone();
        async move {
            let mut headers = Client::headers("tools/call", Some("book"));
            headers.push(("x-test-user".into(), user.into()));
            let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                              "params": crate::support::with_meta(params)});
            client
                .send(headers, body.to_string(), Some("tools/call"))
                .await
        }
    };
    let r1 = as_user("alice", 1, book("Rome", json!({}))).await;
    let state = r1.result()["requestState"].as_str().unwrap().to_owned();
    let retry = book(
        "Rome",
        json!({"inputResponses": confirm(), "requestState": state}),
    );
    let bob = as_user("bob", 2, retry.clone()).await;
    assert_eq!(reason(&bob), "wrong_principal");
    let anonymous = call(&client, 3, retry.clone()).await;
    assert_eq!(reason(&anonymous), "wrong_principal");
    let alice = as_user("alice", 4, retry).await;
    assert_eq!(
        alice.result()["content"][0]["text"],
        "alice booked Rome: true"
    );
}

#[tokio::test]
async fn expired_states_are_rejected() {
    let srv = start(server(K1, Duration::from_secs(1))).await;
    let client = Client::new(&srv.url);
    let state = first_round(&client, "Bern").await;
    // The expiry has one-second resolution: wait until it has certainly passed.
    tokio::time::sleep(Duration::from_millis(2100)).await;
    let r = call(
        &client,
        2,
        book(
            "Bern",
            json!({"inputResponses": confirm(), "requestState": state}),
        ),
    )
    .await;
    assert_eq!(reason(&r), "expired");
}

#[tokio::test]
async fn key_rotation_old_keys_open_and_the_newest_seals() {
    let old = serve(K1).await;
    let rotated = serve(&format!("{K2},{K1}")).await;
    let old_state = first_round(&Client::new(&old.url), "Turin").await;
    let r = call(
        &Client::new(&rotated.url),
        2,
        book(
            "Turin",
            json!({"inputResponses": confirm(), "requestState": old_state}),
        ),
    )
    .await;
    assert_eq!(r.result()["resultType"], "complete");
    let new_state = first_round(&Client::new(&rotated.url), "Turin").await;
    assert!(new_state.starts_with("v1.k2."), "{new_state}");
    let r = call(
        &Client::new(&old.url),
        3,
        book(
            "Turin",
            json!({"inputResponses": confirm(), "requestState": new_state}),
        ),
    )
    .await;
    assert_eq!(reason(&r), "unknown_key");
}

#[tokio::test]
async fn undeclared_capabilities_are_never_requested() {
    let srv = serve(K1).await;
    let client = Client::new(&srv.url);
    // Form elicitation, client declares sampling only.
    let r = call(
        &client,
        1,
        json!({"name": "test_input_required_result_elicitation", "arguments": {},
               "_meta": caps(json!({"sampling": {}}))}),
    )
    .await;
    assert_eq!(r.status, 400);
    assert_eq!(r.error_code(), -32021);
    assert_eq!(
        r.response()["error"]["data"]["requiredCapabilities"],
        json!({"elicitation": {"form": {}}})
    );
    // URL elicitation, client declares form mode only (`{}`).
    let r = call(
        &client,
        2,
        json!({"name": "login", "arguments": {}, "_meta": caps(json!({"elicitation": {}}))}),
    )
    .await;
    assert_eq!(r.error_code(), -32021);
    assert_eq!(
        r.response()["error"]["data"]["requiredCapabilities"],
        json!({"elicitation": {"url": {}}})
    );
    // With URL mode declared, the URL request goes out; `accept` completes it.
    let url_caps = caps(json!({"elicitation": {"url": {}}}));
    let r = call(
        &client,
        3,
        json!({"name": "login", "arguments": {}, "_meta": url_caps}),
    )
    .await;
    assert_eq!(
        r.result()["inputRequests"]["login"]["params"],
        json!({"mode": "url", "message": "Sign in", "url": "https://example.com/login"})
    );
    // The fallback path: a handler that checks capabilities asks only for what it may.
    let r = call(
        &client,
        4,
        json!({"name": "test_input_required_result_capabilities", "arguments": {},
               "_meta": caps(json!({"roots": {}}))}),
    )
    .await;
    let requests = r.result()["inputRequests"].as_object().unwrap();
    assert_eq!(requests.keys().collect::<Vec<_>>(), ["client_roots"]);
}

#[tokio::test]
async fn missing_answers_ask_again_and_malformed_ones_are_invalid_params() {
    let srv = serve(K1).await;
    let client = Client::new(&srv.url);
    let elicit = |responses: Value| {
        json!({"name": "test_input_required_result_elicitation", "arguments": {},
               "inputResponses": responses, "_meta": elicit_caps()})
    };
    let wrong_key = call(
        &client,
        1,
        elicit(json!({"wrong": {"action": "accept", "content": {"name": "x"}}})),
    )
    .await;
    assert_eq!(wrong_key.result()["resultType"], "input_required");
    let declined = call(
        &client,
        2,
        elicit(json!({"user_name": {"action": "decline"}})),
    )
    .await;
    assert_eq!(declined.result()["resultType"], "input_required");
    for (id, bad) in [
        (3, json!(null)),
        (4, json!(12345)),
        (5, json!({"user_name": 12345})),
        (6, json!([])),
    ] {
        let r = call(&client, id, elicit(bad.clone())).await;
        assert_eq!(r.status, 400, "{bad}: {}", r.body);
        assert_eq!(r.error_code(), -32602, "{bad}");
        assert_eq!(r.response()["id"], json!(id));
    }
    let extra = call(
        &client,
        7,
        elicit(
            json!({"user_name": {"action": "accept", "content": {"name": "Ada"}},
                      "unknown": {"action": "accept", "content": {}}}),
        ),
    )
    .await;
    assert_eq!(extra.result()["content"][0]["text"], "Hello, Ada!");
}

#[tokio::test]
async fn resources_and_prompts_can_ask_for_input_and_lists_cannot() {
    let srv = serve(K1).await;
    let client = Client::new(&srv.url);
    let r1 = client
        .request(
            "resources/read",
            json!(1),
            json!({"uri": "vault://secret", "_meta": elicit_caps()}),
        )
        .await;
    let result = r1.result();
    assert_eq!(result["resultType"], "input_required");
    let state = result["requestState"].as_str().unwrap();
    let r2 = client
        .request(
            "resources/read",
            json!(2),
            json!({"uri": "vault://secret", "requestState": state, "_meta": elicit_caps(),
                   "inputResponses": {"unlock": {"action": "accept", "content": {"ok": true}}}}),
        )
        .await;
    assert_eq!(r2.result()["contents"][0]["text"], "the secret");

    let p1 = client
        .request(
            "prompts/get",
            json!(3),
            json!({"name": "test_input_required_result_prompt", "_meta": elicit_caps()}),
        )
        .await;
    assert_eq!(p1.result()["resultType"], "input_required");
    let p2 = client
        .request(
            "prompts/get",
            json!(4),
            json!({"name": "test_input_required_result_prompt", "_meta": elicit_caps(),
                   "inputResponses": {"user_context": {"action": "accept", "content": {"context": "ctx"}}}}),
        )
        .await;
    assert_eq!(
        p2.result()["messages"][0]["content"]["text"],
        "Context: ctx"
    );

    for (id, method) in [
        (5, "tools/list"),
        (6, "prompts/list"),
        (7, "server/discover"),
    ] {
        let r = client
            .request(method, json!(id), json!({"_meta": elicit_caps()}))
            .await;
        assert_ne!(r.result()["resultType"], "input_required");
    }
}

#[tokio::test]
async fn multi_round_state_carries_earlier_answers() {
    let a = serve(K1).await;
    let b = serve(K1).await;
    let tool = |responses: Value, state: Option<&str>| {
        let mut p = json!({"name": "test_input_required_result_multi_round", "arguments": {},
                           "inputResponses": responses, "_meta": elicit_caps()});
        if let Some(s) = state {
            p["requestState"] = json!(s);
        }
        p
    };
    let r1 = call(&Client::new(&a.url), 1, tool(json!({}), None)).await;
    let s1 = r1.result()["requestState"].as_str().unwrap().to_owned();
    let r2 = call(
        &Client::new(&b.url),
        2,
        tool(
            json!({"step1": {"action": "accept", "content": {"name": "Alice"}}}),
            Some(&s1),
        ),
    )
    .await;
    let s2 = r2.result()["requestState"].as_str().unwrap().to_owned();
    assert_ne!(s1, s2);
    assert!(r2.result()["inputRequests"].get("step2").is_some());
    let r3 = call(
        &Client::new(&a.url),
        3,
        tool(
            json!({"step2": {"action": "accept", "content": {"color": "blue"}}}),
            Some(&s2),
        ),
    )
    .await;
    assert_eq!(r3.result()["content"][0]["text"], "Alice likes blue");
    println!(
        "sealed state sizes: round 1 {} bytes, round 2 {} bytes",
        s1.len(),
        s2.len()
    );
}
