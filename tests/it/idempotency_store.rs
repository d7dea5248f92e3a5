//! The contract every `IdempotencyStore` keeps (see its trait docs), run against each
//! backend: the in-process store, and Redis on a real `redis-server` started on an ephemeral
//! port. Two handles on one store stand for two replicas.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use stateless_mcp::backends::MemoryIdempotencyStore;
#[cfg(all(feature = "redis", feature = "external-tests"))]
use stateless_mcp::backends::RedisIdempotencyStore;
use stateless_mcp::extend::{IdempotencyClaim, IdempotencyStore};

#[cfg(all(feature = "redis", feature = "external-tests"))]
use crate::support::brokers::RedisServer;

const LONG: Duration = Duration::from_secs(60);

/// Runs the whole contract with two handles ("replicas") on one store.
async fn contract(a: Arc<dyn IdempotencyStore>, b: Arc<dyn IdempotencyStore>, tag: &str) {
    use IdempotencyClaim::{Claimed, Conflict, Done, InFlight};
    let k = format!("{tag}-k");
    // A free key is claimed; the same owner again (a retried claim) still holds it; another
    // owner, on the other replica, finds it in flight; other arguments conflict.
    assert_eq!(a.claim(&k, "f1", "o1", LONG).await.unwrap(), Claimed);
    assert_eq!(a.claim(&k, "f1", "o1", LONG).await.unwrap(), Claimed);
    assert_eq!(b.claim(&k, "f1", "o2", LONG).await.unwrap(), InFlight);
    assert_eq!(b.claim(&k, "f2", "o2", LONG).await.unwrap(), Conflict);
    // Only the owner completes; then every claim with the same fingerprint gets the result.
    let result = Bytes::from_static(br#"{"content":[{"type":"text","text":"1"}]}"#);
    assert!(!b.complete(&k, "o2", result.clone(), LONG).await.unwrap());
    assert!(a.complete(&k, "o1", result.clone(), LONG).await.unwrap());
    assert!(
        a.complete(&k, "o1", result.clone(), LONG).await.unwrap(),
        "a retried completion"
    );
    assert_eq!(
        b.claim(&k, "f1", "o3", LONG).await.unwrap(),
        Done(result.clone())
    );
    assert_eq!(b.claim(&k, "f2", "o3", LONG).await.unwrap(), Conflict);
    // A completed key is not released.
    a.release(&k, "o1").await.unwrap();
    assert_eq!(
        b.claim(&k, "f1", "o3", LONG).await.unwrap(),
        Done(result.clone())
    );

    // A released key is free again (on the other replica); a stranger's release changes
    // nothing.
    let r = format!("{tag}-released");
    assert_eq!(a.claim(&r, "f", "o1", LONG).await.unwrap(), Claimed);
    b.release(&r, "stranger").await.unwrap();
    assert_eq!(b.claim(&r, "f", "o2", LONG).await.unwrap(), InFlight);
    a.release(&r, "o1").await.unwrap();
    assert_eq!(b.claim(&r, "f", "o2", LONG).await.unwrap(), Claimed);
    assert!(!a.complete(&r, "o1", result.clone(), LONG).await.unwrap());

    // Of many concurrent claims of a free key, exactly one wins.
    let c = format!("{tag}-race");
    let claims = (0..32).map(|i| {
        let store = if i % 2 == 0 { a.clone() } else { b.clone() };
        let c = c.clone();
        async move { store.claim(&c, "f", &format!("o{i}"), LONG).await.unwrap() }
    });
    let won = futures_util::future::join_all(claims)
        .await
        .into_iter()
        .filter(|c| *c == Claimed)
        .count();
    assert_eq!(won, 1);

    // A lapsed claim is taken over, and its first owner can no longer complete it.
    let l = format!("{tag}-lapsed");
    assert_eq!(
        a.claim(&l, "f", "o1", Duration::from_millis(50))
            .await
            .unwrap(),
        Claimed
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(b.claim(&l, "f", "o2", LONG).await.unwrap(), Claimed);
    assert!(!a.complete(&l, "o1", result.clone(), LONG).await.unwrap());
    // A result is kept for its own time, then forgotten.
    assert!(
        b.complete(&l, "o2", result.clone(), Duration::from_millis(100))
            .await
            .unwrap()
    );
    assert_eq!(
        a.claim(&l, "f", "o3", LONG).await.unwrap(),
        Done(result.clone())
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(a.claim(&l, "f2", "o3", LONG).await.unwrap(), Claimed);
}

#[tokio::test]
async fn memory_store_keeps_the_contract() {
    let store: Arc<dyn IdempotencyStore> = Arc::new(MemoryIdempotencyStore::default());
    contract(store.clone(), store, "memory").await;
}

#[cfg(all(feature = "redis", feature = "external-tests"))]
#[tokio::test]
async fn redis_store_keeps_the_contract() {
    let redis = RedisServer::start();
    let a: Arc<dyn IdempotencyStore> =
        Arc::new(RedisIdempotencyStore::connect(&redis.url(), "it").unwrap());
    let b: Arc<dyn IdempotencyStore> =
        Arc::new(RedisIdempotencyStore::connect(&redis.url(), "it").unwrap());
    contract(a.clone(), b, "redis").await;
    // Another prefix is another deployment: it sees none of it.
    let other = RedisIdempotencyStore::connect(&redis.url(), "other").unwrap();
    assert_eq!(
        other.claim("redis-k", "f2", "o9", LONG).await.unwrap(),
        IdempotencyClaim::Claimed
    );
}

#[cfg(all(feature = "redis", feature = "external-tests"))]
#[tokio::test]
async fn an_unreachable_redis_fails_loudly() {
    let redis = RedisServer::start();
    let url = redis.url();
    drop(redis);
    let store = RedisIdempotencyStore::connect(&url, "it").unwrap();
    let e = store.claim("k", "f", "o", LONG).await.unwrap_err();
    assert_eq!(e.kind(), stateless_mcp::ErrorKind::Unavailable, "{e}");
}
