//! The contract every `RateStore` keeps (see `extend::RateStore`), run against each store:
//! the in-process one (`governor`) and Redis (one GCRA script per check) on a real
//! `redis-server`. Two handles stand for two replicas: the same store in memory, two
//! connections for Redis.

use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

use stateless_mcp::backends::{Budget, MemoryRateStore};
use stateless_mcp::extend::RateStore;

fn budget(per_second: u32, burst: u32) -> Budget {
    Budget::new(
        NonZeroU32::new(per_second).unwrap(),
        NonZeroU32::new(burst).unwrap(),
    )
}

/// Runs the contract on two handles of one store; `fresh` makes keys unique per run.
async fn contract(a: Arc<dyn RateStore>, b: Arc<dyn RateStore>, fresh: &str) {
    let key = |k: &str| format!("{fresh}-{k}");
    let (caller, tool, other) = (key("caller"), key("tool"), key("other"));
    let three = budget(1, 3);

    // A burst's worth is admitted across both handles, then refused with a wait of at most
    // one interval; remaining counts down.
    let mut remaining = Vec::new();
    for i in 0..3 {
        let store = if i % 2 == 0 { &a } else { &b };
        let v = store.check(&[(&caller, three)]).await.unwrap();
        assert_eq!(v.len(), 1);
        assert!(v[0].admitted, "request {i}");
        remaining.push(v[0].remaining);
    }
    assert_eq!(remaining, [2, 1, 0]);
    let refused = b.check(&[(&caller, three)]).await.unwrap()[0];
    assert!(!refused.admitted);
    assert!(
        refused.retry_after > Duration::ZERO && refused.retry_after <= Duration::from_secs(1),
        "{refused:?}"
    );
    // A refusal charges nothing: refused again, not pushed further away.
    let again = a.check(&[(&caller, three)]).await.unwrap()[0];
    assert!(!again.admitted && again.retry_after <= refused.retry_after);

    // Other keys and other budgets are independent.
    assert!(a.check(&[(&other, three)]).await.unwrap()[0].admitted);
    let one = budget(1, 1);
    assert!(a.check(&[(&tool, one)]).await.unwrap()[0].admitted);
    // Two budgets in one check: the tool's refuses, so the request may not go on; the
    // verdicts come in order.
    let both = b.check(&[(&other, three), (&tool, one)]).await.unwrap();
    assert_eq!(both.len(), 2);
    assert!(!both[1].admitted);

    // The budget comes back at its rate.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert!(b.check(&[(&caller, three)]).await.unwrap()[0].admitted);
    // Full again after burst / rate seconds.
    let fast = budget(50, 2);
    let k = key("fast");
    assert!(a.check(&[(&k, fast)]).await.unwrap()[0].admitted);
    assert!(a.check(&[(&k, fast)]).await.unwrap()[0].admitted);
    assert!(!a.check(&[(&k, fast)]).await.unwrap()[0].admitted);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let v = b.check(&[(&k, fast)]).await.unwrap()[0];
    assert!(v.admitted && v.remaining == 1, "{v:?}");
}

#[tokio::test]
async fn memory() {
    let store: Arc<dyn RateStore> = Arc::new(MemoryRateStore::default());
    contract(store.clone(), store, "m").await;
}

#[cfg(all(feature = "external-tests", feature = "redis"))]
#[tokio::test(flavor = "multi_thread")]
async fn redis() {
    use stateless_mcp::backends::RedisRateStore;
    let server = crate::support::brokers::RedisServer::start();
    let a = Arc::new(RedisRateStore::connect(&server.url(), "contract").unwrap());
    let b = Arc::new(RedisRateStore::connect(&server.url(), "contract").unwrap());
    contract(a, b, "r").await;
}

#[cfg(all(feature = "external-tests", feature = "redis"))]
#[tokio::test(flavor = "multi_thread")]
async fn redis_unreachable_is_an_error_not_a_wait() {
    use stateless_mcp::backends::RedisRateStore;
    let port = crate::support::brokers::free_port();
    let store = RedisRateStore::connect(&format!("redis://127.0.0.1:{port}"), "x").unwrap();
    let started = std::time::Instant::now();
    let r = store.check(&[("k", budget(1, 1))]).await;
    assert!(r.is_err());
    assert!(started.elapsed() < Duration::from_secs(2));
}
