//! Changes on rolling deploys: each replica announces its list fingerprints; a replica
//! whose lists differ tells its listen streams which lists changed, without anyone calling
//! the notifier.

use std::sync::Arc;

use serde_json::json;
use stateless_mcp::backends::MemoryBus;
use stateless_mcp::notify::Notifier;
use stateless_mcp::{HandlerError, Server, ToolDef};

use crate::support::listen::Listener;
use crate::support::{Client, start};

fn echo(name: &str) -> ToolDef {
    ToolDef::new(name).raw_handler(
        |_: stateless_mcp::RequestContext, _: serde_json::Value| async {
            Ok::<_, HandlerError>("ok")
        },
    )
}

/// Version 1 of a server: one tool, one prompt, one resource.
fn v1(notifier: &Notifier) -> Server {
    let b = Server::builder()
        .notifier(notifier.clone())
        .tool(echo("search"));
    stateless_mcp::fixtures::demo(b).build().unwrap()
}

#[tokio::test]
async fn a_replica_with_other_lists_makes_old_replicas_announce_list_changes() {
    // Three "replicas" on one bus: two of version 1, one of version 2 (another tool).
    let notifier = Notifier::new(Arc::new(MemoryBus::default()));
    let old = start(v1(&notifier)).await;
    let same = v1(&notifier);
    let new = {
        let b = Server::builder()
            .notifier(notifier.clone())
            .tool(echo("search"))
            .tool(echo("summarize"));
        stateless_mcp::fixtures::demo(b).build().unwrap()
    };
    assert_eq!(
        same.list_fingerprints(),
        v1(&notifier).list_fingerprints(),
        "fingerprints are a function of the lists"
    );
    assert_ne!(
        same.list_fingerprints().tools,
        new.list_fingerprints().tools
    );
    assert_eq!(
        same.list_fingerprints().prompts,
        new.list_fingerprints().prompts
    );

    let client = Client::new(&old.url);
    let mut l = Listener::open(
        &client,
        json!("old"),
        json!({"toolsListChanged": true, "promptsListChanged": true, "resourcesListChanged": true}),
    )
    .await;
    assert_eq!(
        l.next_kind().await,
        "notifications/subscriptions/acknowledged"
    );

    // A replica with the same lists starts: nothing to tell.
    same.announce_lists().await.unwrap();
    // A replica of the new version starts: only the tool list differs.
    new.announce_lists().await.unwrap();
    // A marker: events from one publisher arrive in order, so had the first announcement
    // caused a notification, it would come before the tool change.
    notifier.resources_list_changed().await.unwrap();
    assert_eq!(l.next_kind().await, "notifications/tools/list_changed");
    assert_eq!(l.next_kind().await, "notifications/resources/list_changed");
}

/// The same with real processes on a real Redis: a client listening on a replica of the old
/// version hears about the new version's lists when a new replica starts.
#[cfg(all(feature = "redis", feature = "external-tests"))]
#[tokio::test]
async fn a_new_version_starting_on_the_bus_reaches_listeners_of_the_old_one() {
    use crate::support::brokers::RedisServer;
    use crate::support::process::spawn_server;

    let redis = RedisServer::start();
    let bus = redis.url();
    let old = spawn_server(&[
        "--bus",
        &bus,
        "--state-keys",
        crate::support::cluster::STATE_KEYS,
        "--fixtures",
        "none",
    ]);
    let client = Client::new(&old.url);
    let mut l = Listener::open(
        &client,
        json!(1),
        json!({"toolsListChanged": true, "promptsListChanged": true, "resourcesListChanged": true}),
    )
    .await;
    assert_eq!(
        l.next_kind().await,
        "notifications/subscriptions/acknowledged"
    );
    // The new version registers the conformance fixtures too: every list differs.
    let _new = spawn_server(&[
        "--bus",
        &bus,
        "--state-keys",
        crate::support::cluster::STATE_KEYS,
        "--fixtures",
        "conformance",
    ]);
    let mut got = Vec::new();
    for _ in 0..3 {
        got.push(l.next_kind().await);
    }
    got.sort();
    assert_eq!(
        got,
        [
            "notifications/prompts/list_changed",
            "notifications/resources/list_changed",
            "notifications/tools/list_changed"
        ]
    );
}
