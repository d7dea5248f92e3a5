//! The contract every `SessionStore` keeps (see the `session` module docs), run against each
//! backend: the in-process store, and Redis on a real `redis-server` started on an ephemeral
//! port. Two handles on one store stand for two replicas.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use stateless_mcp::backends::MemorySessionStore;
#[cfg(all(feature = "redis", feature = "external-tests"))]
use stateless_mcp::backends::RedisSessionStore;
use stateless_mcp::extend::{MAX_SESSION_SUBSCRIPTIONS, SessionSettings, SessionStore};
use stateless_mcp::protocol::LoggingLevel;

#[cfg(all(feature = "redis", feature = "external-tests"))]
use crate::support::brokers::RedisServer;

fn hour() -> SystemTime {
    SystemTime::now() + Duration::from_secs(3600)
}

/// Runs the whole contract with two handles ("replicas") on one store.
async fn contract(a: Arc<dyn SessionStore>, b: Arc<dyn SessionStore>, tag: &str) {
    let s1 = format!("{tag}-one");
    let s2 = format!("{tag}-two");
    // Unknown is empty.
    assert_eq!(a.load(&s1).await.unwrap(), SessionSettings::default());

    // Read your writes, on the other replica.
    a.set_log_level(&s1, LoggingLevel::Debug, hour())
        .await
        .unwrap();
    assert_eq!(
        b.load(&s1).await.unwrap().log_level,
        Some(LoggingLevel::Debug)
    );
    b.set_log_level(&s1, LoggingLevel::Error, hour())
        .await
        .unwrap();
    assert_eq!(
        a.load(&s1).await.unwrap().log_level,
        Some(LoggingLevel::Error)
    );

    assert!(a.subscribe(&s1, "test://a", hour()).await.unwrap());
    assert!(b.subscribe(&s1, "test://b?x=1", hour()).await.unwrap());
    assert!(a.subscribe(&s1, "test://a", hour()).await.unwrap(), "again");
    let subs: Vec<String> = b
        .load(&s1)
        .await
        .unwrap()
        .subscriptions
        .into_iter()
        .collect();
    assert_eq!(subs, ["test://a", "test://b?x=1"]);
    b.unsubscribe(&s1, "test://a").await.unwrap();
    a.unsubscribe(&s1, "test://never").await.unwrap();
    a.unsubscribe(&format!("{tag}-nobody"), "test://a")
        .await
        .unwrap();
    let s = a.load(&s1).await.unwrap();
    assert_eq!(
        s.subscriptions.into_iter().collect::<Vec<_>>(),
        ["test://b?x=1"]
    );
    assert_eq!(s.log_level, Some(LoggingLevel::Error), "kept beside");

    // Sessions do not see each other's settings.
    assert_eq!(b.load(&s2).await.unwrap(), SessionSettings::default());

    // A recorded use (sliding expiry) is seen on every replica; a later one replaces it.
    let now_ms = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    let at = SystemTime::UNIX_EPOCH + Duration::from_millis(u64::try_from(now_ms).unwrap());
    assert_eq!(a.load(&s1).await.unwrap().last_used, None, "never used");
    a.touch(&s1, at, hour()).await.unwrap();
    assert_eq!(b.load(&s1).await.unwrap().last_used, Some(at));
    let later = at + Duration::from_secs(5);
    b.touch(&s1, later, hour()).await.unwrap();
    let s = a.load(&s1).await.unwrap();
    assert_eq!(s.last_used, Some(later));
    assert_eq!(s.log_level, Some(LoggingLevel::Error), "kept beside");

    // Revocation is final and seen everywhere; the settings stay readable.
    a.revoke(&s1, hour()).await.unwrap();
    let s = b.load(&s1).await.unwrap();
    assert!(s.revoked);
    b.set_log_level(&s1, LoggingLevel::Info, hour())
        .await
        .unwrap();
    b.unsubscribe(&s1, "test://b?x=1").await.unwrap();
    assert!(a.load(&s1).await.unwrap().revoked, "nothing un-revokes");
    assert!(!a.load(&s2).await.unwrap().revoked);

    // Bounded: at most MAX_SESSION_SUBSCRIPTIONS, a level and a recorded use beside them do
    // not count.
    b.set_log_level(&s2, LoggingLevel::Info, hour())
        .await
        .unwrap();
    a.touch(&s2, at, hour()).await.unwrap();
    for i in 0..MAX_SESSION_SUBSCRIPTIONS {
        assert!(
            a.subscribe(&s2, &format!("test://r/{i}"), hour())
                .await
                .unwrap(),
            "{i}"
        );
    }
    assert!(
        !b.subscribe(&s2, "test://one-too-many", hour())
            .await
            .unwrap()
    );
    assert!(
        b.subscribe(&s2, "test://r/0", hour()).await.unwrap(),
        "held already"
    );
    a.unsubscribe(&s2, "test://r/0").await.unwrap();
    assert!(b.subscribe(&s2, "test://one-more", hour()).await.unwrap());
    assert_eq!(
        a.load(&s2).await.unwrap().subscriptions.len(),
        MAX_SESSION_SUBSCRIPTIONS
    );

    // Entries go at the expiry they were written with: held until then (checked at once,
    // seconds before it), gone after (real time: Redis expires them itself).
    let s3 = format!("{tag}-short");
    let soon = SystemTime::now() + Duration::from_secs(3);
    a.revoke(&s3, soon).await.unwrap();
    assert!(b.load(&s3).await.unwrap().revoked);
    let (b, s3) = (&b, &s3);
    crate::support::eventually(
        Duration::from_secs(15),
        "an entry outlived its expiry",
        move || async move { b.load(s3).await.unwrap() == SessionSettings::default() },
    )
    .await;
}

#[tokio::test]
async fn memory_store_keeps_the_contract() {
    let store: Arc<dyn SessionStore> = Arc::new(MemorySessionStore::default());
    contract(store.clone(), store, "memory").await;
}

#[cfg(all(feature = "redis", feature = "external-tests"))]
#[tokio::test]
async fn redis_store_keeps_the_contract() {
    let redis = RedisServer::start();
    let a: Arc<dyn SessionStore> =
        Arc::new(RedisSessionStore::connect(&redis.url(), "it").unwrap());
    let b: Arc<dyn SessionStore> =
        Arc::new(RedisSessionStore::connect(&redis.url(), "it").unwrap());
    contract(a.clone(), b.clone(), "redis").await;
    // Another prefix is another deployment: it sees none of it.
    let other = RedisSessionStore::connect(&redis.url(), "other").unwrap();
    assert_eq!(
        other.load("redis-one").await.unwrap(),
        SessionSettings::default()
    );
}

#[cfg(all(feature = "redis", feature = "external-tests"))]
#[tokio::test]
async fn an_unreachable_redis_fails_loudly() {
    let redis = RedisServer::start();
    let url = redis.url();
    drop(redis);
    let store = RedisSessionStore::connect(&url, "it").unwrap();
    let e = store.load("s").await.unwrap_err();
    assert_eq!(e.kind(), stateless_mcp::ErrorKind::Unavailable, "{e}");
    assert!(store.revoke("s", hour()).await.is_err());
}
