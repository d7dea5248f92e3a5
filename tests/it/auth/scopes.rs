//! Scopes per tool, prompt, resource and method, the hierarchy, and the mirrored headers
//! they are read from (which cannot be used to get around them).

use std::sync::atomic::Ordering;

use serde_json::json;

use super::{Protected, protected, request};

type Headers = Vec<(String, String)>;

fn insufficient(p: &Protected, scope: &str, missing: &str) -> String {
    format!(
        "Bearer error=\"insufficient_scope\", scope=\"{scope}\", resource_metadata=\"{}\", error_description=\"This operation needs the scope(s): {missing}\"",
        p.metadata_url()
    )
}

#[tokio::test]
async fn a_missing_scope_blocks_one_tool_while_others_work() {
    let p = protected(|b| b).await;
    let token = p.token("mcp files:read");
    p.call_tool(&token, "read_file").await;
    p.call_tool(&token, "whoami").await;
    let r = p.send_tool(Some(&token), "write_file").await;
    assert_eq!(r.status, 403);
    assert_eq!(
        r.challenge.as_deref(),
        Some(insufficient(&p, "mcp files:write", "files:write").as_str())
    );
    assert_eq!(r.json()["error"], "insufficient_scope");
    assert_eq!(p.writes.load(Ordering::SeqCst), 0);

    // Without the scope every request needs, nothing works, and the challenge lists all.
    let r = p.send_tool(Some(&p.token("files")), "write_file").await;
    assert_eq!(r.status, 403);
    assert_eq!(
        r.challenge.as_deref(),
        Some(insufficient(&p, "mcp files:write", "mcp").as_str())
    );

    // Prompts and resources (fixed and templated) too.
    let r = p
        .send(
            Some(&token),
            "prompts/get",
            json!({"name": "secret_prompt"}),
        )
        .await;
    assert_eq!(
        r.challenge.as_deref(),
        Some(insufficient(&p, "mcp prompts:secret", "prompts:secret").as_str())
    );
    p.call(&token, "prompts/get", json!({"name": "open_prompt"}))
        .await;
    p.call(&token, "resources/read", json!({"uri": "test://private"}))
        .await;
    let r = p
        .send(
            Some(&p.token("mcp")),
            "resources/read",
            json!({"uri": "test://private"}),
        )
        .await;
    assert_eq!(
        r.challenge.as_deref(),
        Some(insufficient(&p, "mcp files:read", "files:read").as_str())
    );
    let r = p
        .send(
            Some(&token),
            "resources/read",
            json!({"uri": "test://docs/7"}),
        )
        .await;
    assert_eq!(
        r.challenge.as_deref(),
        Some(insufficient(&p, "mcp docs", "docs").as_str())
    );
    p.call(
        &p.token("mcp docs"),
        "resources/read",
        json!({"uri": "test://docs/7"}),
    )
    .await;
}

#[tokio::test]
async fn a_broader_scope_satisfies_a_narrower_one() {
    let p = protected(|b| b).await;
    let token = p.token("mcp files");
    p.call_tool(&token, "read_file").await;
    p.call_tool(&token, "write_file").await;
    assert_eq!(p.writes.load(Ordering::SeqCst), 1);
    // `filesystem` is not `files`, and `files:read` is narrower than `files:write`'s parent.
    for scope in ["mcp filesystem", "mcp files:read"] {
        let r = p.send_tool(Some(&p.token(scope)), "write_file").await;
        assert_eq!(r.status, 403, "{scope}");
    }
    // A configured hierarchy: `admin` covers everything below `files`.
    let p = protected(|b| {
        b.hierarchy(stateless_mcp::handler::ScopeHierarchy::default().implies("admin", "files"))
    })
    .await;
    p.call_tool(&p.token("mcp admin"), "write_file").await;
}

#[tokio::test]
async fn method_scopes_apply_to_every_request_for_the_method() {
    let p = protected(|b| b.method_scopes("tools/call", ["tools"])).await;
    let r = p.send_tool(Some(&p.token("mcp")), "whoami").await;
    assert_eq!(
        r.challenge.as_deref(),
        Some(insufficient(&p, "mcp tools", "tools").as_str())
    );
    p.call_tool(&p.token("mcp tools"), "whoami").await;
    p.call(&p.token("mcp"), "tools/list", json!({})).await;
}

/// The scope check reads `Mcp-Method`/`Mcp-Name`; a request whose headers are missing or
/// disagree with its body is refused by the endpoint before any handler runs.
#[tokio::test]
async fn headers_cannot_be_used_to_get_around_a_scope_check() {
    let p = protected(|b| b).await;
    let token = p.token("mcp");
    let params = json!({"name": "write_file", "arguments": {}});
    let (base, body) = request("tools/call", params);
    let with = |edit: &dyn Fn(&mut Headers)| {
        let mut h = base.clone();
        h.push(("authorization".into(), format!("Bearer {token}")));
        edit(&mut h);
        h
    };
    let set = |h: &mut Headers, k: &str, v: Option<&str>| {
        h.retain(|(n, _)| n != k);
        if let Some(v) = v {
            h.push((k.into(), v.into()));
        }
    };
    let cases: Vec<(&str, Headers)> = vec![
        (
            "Mcp-Name of a tool needing nothing",
            with(&|h| set(h, "mcp-name", Some("whoami"))),
        ),
        ("no Mcp-Name", with(&|h| set(h, "mcp-name", None))),
        ("no Mcp-Method", with(&|h| set(h, "mcp-method", None))),
        (
            "Mcp-Method of a list",
            with(&|h| set(h, "mcp-method", Some("tools/list"))),
        ),
        (
            "Mcp-Method in other case",
            with(&|h| set(h, "mcp-method", Some("TOOLS/CALL"))),
        ),
        (
            "repeated Mcp-Name",
            with(&|h| {
                set(h, "mcp-name", Some("whoami"));
                h.push(("mcp-name".into(), "write_file".into()));
            }),
        ),
    ];
    for (what, headers) in cases {
        let ex = p
            .client
            .send(headers, body.clone(), Some("tools/call"))
            .await;
        assert_eq!(ex.status, 400, "{what}: {}", ex.body);
        assert_eq!(ex.error_code(), -32020, "{what}");
    }
    // The base64 form of the name is decoded as the endpoint decodes it.
    let r = p
        .raw(
            "",
            with(&|h| set(h, "mcp-name", Some("=?base64?d3JpdGVfZmlsZQ==?="))),
            body.clone(),
        )
        .await;
    assert_eq!(r.status, 403, "{r:?}");
    assert_eq!(p.writes.load(Ordering::SeqCst), 0, "the handler never ran");
    // And the honest request is refused for its scope.
    let r = p.raw("", with(&|_| {}), body).await;
    assert_eq!(r.status, 403);
}
