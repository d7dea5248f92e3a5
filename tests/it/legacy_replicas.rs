//! Legacy sessions across replica processes sharing a real `redis-server` (`--bus redis://…`,
//! whose Redis is also the default session store) and one `--state-keys` ring: a session
//! made on one replica works on the other, `setLevel` on one is honoured on the other, an
//! elicitation answer posted to the replica that does not hold the call resumes it, and a
//! DELETE on one is a 404 on the other (a change within [`ACROSS_REPLICAS`]: when the bus's
//! announcement reaches the other replica).

use serde_json::json;

use crate::support::brokers::RedisServer;
use crate::support::legacy::{K1, LegacyClient};
use crate::support::process::{ServerProcess, spawn_server};
use crate::support::{ACROSS_REPLICAS, eventually};

fn replica(redis: &RedisServer) -> ServerProcess {
    spawn_server(&[
        "--fixtures",
        "conformance",
        "--bus",
        &redis.url(),
        "--state-keys",
        K1,
    ])
}

#[tokio::test]
async fn a_session_lives_in_its_id_and_the_shared_redis() {
    let redis = RedisServer::start();
    let (a, b) = (replica(&redis), replica(&redis));
    let caps = json!({"elicitation": {}});
    let on_a = LegacyClient::connect(&a.url, caps).await;
    let mut on_b = on_a.clone();
    on_b.url = b.url.clone();

    // setLevel on B, log messages on A (once the announcement reached A).
    on_b.request(json!(1), "logging/setLevel", json!({"level": "info"}))
        .await;
    eventually(ACROSS_REPLICAS, "setLevel on B honoured on A", || async {
        let x = on_a
            .request(
                json!(2),
                "tools/call",
                json!({"name": "test_tool_with_logging", "arguments": {}}),
            )
            .await;
        let logs = x
            .messages
            .iter()
            .filter(|m| m["method"] == "notifications/message")
            .count();
        assert!(logs == 0 || logs == 3, "{}", x.body);
        logs == 3
    })
    .await;

    // The call on A, its elicitation answered on B.
    let mut call = on_a
        .stream_request(
            json!(3),
            "tools/call",
            json!({"name": "test_elicitation", "arguments": {"message": "Name?"}}),
        )
        .await;
    let ask = call.next().await.unwrap();
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    let answer = json!({"action": "accept", "content": {"username": "u", "email": "e"}});
    assert_eq!(on_b.answer(&ask["id"], answer).await, 202);
    let done = call.next().await.unwrap();
    assert_eq!(done["id"], 3);
    assert!(
        done["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("accept")
    );

    // DELETE on A: 404 on B.
    assert_eq!(on_a.delete().await, 204);
    eventually(ACROSS_REPLICAS, "DELETE on A honoured on B", || async {
        on_b.request(json!(4), "ping", json!({})).await.status == 404
    })
    .await;
}
