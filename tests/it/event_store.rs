//! The [`EventStore`] contract (the events of resumable 2025-11-25 streams), run against
//! every backend: the in-process store, and Redis on a real `redis-server` started on an
//! ephemeral port.

use std::time::Duration;

use bytes::Bytes;
use stateless_mcp::backends::{EventLimits, MemoryEventStore};
use stateless_mcp::extend::{EventStore, StoredEvent};

#[cfg(all(feature = "redis", feature = "external-tests"))]
use crate::support::brokers::RedisServer;
#[cfg(all(feature = "redis", feature = "external-tests"))]
use stateless_mcp::backends::RedisEventStore;

fn data(events: &[StoredEvent]) -> Vec<(u64, &[u8], bool)> {
    events
        .iter()
        .map(|e| (e.seq, e.data.as_ref(), e.last))
        .collect()
}

/// Runs the contract against `store`, made with `limits` of 4 events and 64 bytes.
/// `ns` keeps the streams of one run apart from another's (a shared Redis).
async fn run(store: &dyn EventStore, ns: &str) {
    let s = format!("{ns}-session");
    let other = format!("{ns}-other");
    assert_eq!(store.after(&s, "a", 0).await.unwrap(), None);
    assert_eq!(store.append(&s, "a", Bytes::new(), false).await.unwrap(), 1);
    assert_eq!(
        store
            .append(&s, "a", Bytes::from("x"), false)
            .await
            .unwrap(),
        2
    );
    assert_eq!(
        store.append(&s, "a", Bytes::from("y"), true).await.unwrap(),
        3
    );
    let all = store.after(&s, "a", 0).await.unwrap().unwrap();
    assert_eq!(
        data(&all),
        vec![
            (1, &b""[..], false),
            (2, &b"x"[..], false),
            (3, &b"y"[..], true)
        ]
    );
    let rest = store.after(&s, "a", 2).await.unwrap().unwrap();
    assert_eq!(data(&rest), vec![(3, &b"y"[..], true)]);
    assert_eq!(store.after(&s, "a", 3).await.unwrap(), Some(Vec::new()));
    // Another session never reads this stream; another stream is another.
    assert_eq!(store.after(&other, "a", 0).await.unwrap(), None);
    assert_eq!(store.after(&s, "b", 0).await.unwrap(), None);
    assert_eq!(
        store
            .append(&s, "b", Bytes::from("z"), false)
            .await
            .unwrap(),
        1
    );
    assert_eq!(store.after(&s, "a", 0).await.unwrap().unwrap().len(), 3);
    // At most 4 events: the oldest go, numbers go on.
    for i in 4..=6u64 {
        assert_eq!(
            store
                .append(&s, "a", Bytes::from(i.to_string()), false)
                .await
                .unwrap(),
            i
        );
    }
    let kept = store.after(&s, "a", 0).await.unwrap().unwrap();
    assert_eq!(
        kept.iter().map(|e| e.seq).collect::<Vec<_>>(),
        vec![3, 4, 5, 6]
    );
    // At most 64 bytes: a 62-byte event leaves room for two 1-byte ones;
    // a 100-byte event is kept alone.
    store
        .append(&s, "a", Bytes::from(vec![b'a'; 62]), false)
        .await
        .unwrap();
    let kept = store.after(&s, "a", 0).await.unwrap().unwrap();
    assert_eq!(
        kept.iter().map(|e| e.seq).collect::<Vec<_>>(),
        vec![5, 6, 7]
    );
    store
        .append(&s, "a", Bytes::from(vec![b'b'; 100]), true)
        .await
        .unwrap();
    let kept = store.after(&s, "a", 0).await.unwrap().unwrap();
    assert_eq!(data(&kept), vec![(8, &[b'b'; 100][..], true)]);
    // Binary-safe data.
    let odd = Bytes::from_static(b"1 0 \x00\xff {}");
    let seq = store.append(&s, "c", odd.clone(), false).await.unwrap();
    assert_eq!(store.after(&s, "c", 0).await.unwrap().unwrap()[0].data, odd);
    assert_eq!(seq, 1);
}

/// Streams expire `ttl` after their last append.
async fn expires(store: &dyn EventStore, ns: &str, ttl: Duration) {
    let s = format!("{ns}-ttl");
    store
        .append(&s, "a", Bytes::from("x"), false)
        .await
        .unwrap();
    assert!(store.after(&s, "a", 0).await.unwrap().is_some());
    tokio::time::sleep(ttl + Duration::from_millis(100)).await;
    assert_eq!(store.after(&s, "a", 0).await.unwrap(), None);
}

/// The limits [`run`] expects.
fn limits(ttl: Duration) -> EventLimits {
    EventLimits::default().max_events(4).max_bytes(64).ttl(ttl)
}

#[tokio::test]
async fn memory_store_keeps_the_contract() {
    let store = MemoryEventStore::new(limits(Duration::from_secs(60)), 16);
    run(&store, "m").await;
    let ttl = Duration::from_millis(200);
    let store = MemoryEventStore::new(limits(ttl), 16);
    expires(&store, "m", ttl).await;
}

#[cfg(all(feature = "redis", feature = "external-tests"))]
#[tokio::test]
async fn redis_store_keeps_the_contract() {
    let redis = RedisServer::start();
    let store =
        RedisEventStore::connect(&redis.url(), "it", limits(Duration::from_secs(60))).unwrap();
    run(&store, "r").await;
    // Another replica (another connection) reads what this one appended.
    let other =
        RedisEventStore::connect(&redis.url(), "it", limits(Duration::from_secs(60))).unwrap();
    assert_eq!(
        other
            .after("r-session", "b", 0)
            .await
            .unwrap()
            .unwrap()
            .len(),
        1
    );
    // Another prefix is another deployment.
    let elsewhere =
        RedisEventStore::connect(&redis.url(), "x", limits(Duration::from_secs(60))).unwrap();
    assert_eq!(elsewhere.after("r-session", "b", 0).await.unwrap(), None);
    let ttl = Duration::from_millis(300);
    let store = RedisEventStore::connect(&redis.url(), "it", limits(ttl)).unwrap();
    expires(&store, "r", ttl).await;
}

/// A Redis that is gone: appends and reads fail with an error, at once, never hang.
#[cfg(all(feature = "redis", feature = "external-tests"))]
#[tokio::test]
async fn an_unreachable_redis_fails_loudly() {
    let redis = RedisServer::start();
    let url = redis.url();
    drop(redis);
    let store = RedisEventStore::connect(&url, "it", EventLimits::default()).unwrap();
    let started = std::time::Instant::now();
    assert!(
        store
            .append("s", "a", Bytes::from("x"), false)
            .await
            .is_err()
    );
    assert!(store.after("s", "a", 0).await.is_err());
    assert!(started.elapsed() < Duration::from_secs(10));
}
