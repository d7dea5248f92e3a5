//! The broker-backed buses (Redis, NATS) on real `redis-server` / `nats-server` processes:
//! the base contract, and what they share beyond it (external layer).

use std::collections::BTreeSet;

use super::*;
use stateless_mcp::ErrorKind;

/// Dropping a replica's bus ends its subscribers.
async fn dropping_the_bus_ends_its_subscribers(cluster: &dyn Cluster) {
    let r = replica(cluster, options());
    connected(&[&r]).await;
    let mut rx = r.bus.subscribe();
    drop(r);
    let end = tokio::time::timeout(WAIT, rx.recv()).await;
    assert_eq!(end, Ok(None), "the subscriber sees the end of the bus");
}

/// What the broker-backed buses share beyond the base contract: prefixes isolate
/// deployments; losing the broker is reported and answered with a resync; dropping the bus
/// closes its connections.
trait Broker: Cluster {
    fn kill(&mut self);
    fn restart(&mut self);
    /// The ids of the client connections the broker has now (not counting the one that
    /// asks, if any).
    async fn connections(&self) -> BTreeSet<u64>;
}

async fn prefixes_isolate_deployments(broker: &dyn Cluster) {
    let a = replica(broker, options());
    let b = replica(broker, options());
    connected(&[&a, &b]).await;
    let mut on_b = b.bus.subscribe();
    let mut on_a = a.bus.subscribe();
    a.bus
        .publish(ChangeEvent::tools_list_changed())
        .await
        .unwrap();
    b.bus.publish(updated(7)).await.unwrap();
    assert_eq!(
        next_event(&mut on_a).await,
        ChangeEvent::tools_list_changed()
    );
    assert_eq!(next_event(&mut on_b).await, updated(7));
    assert_eq!(quiet(&mut on_b).await, None, "b never sees a's events");
    assert_eq!(quiet(&mut on_a).await, None, "a never sees b's events");
}

async fn a_lost_broker_is_reported_and_resynced<B: Broker>(broker: &mut B) {
    let opts = options();
    let (a, b) = (replica(broker, opts.clone()), replica(broker, opts));
    connected(&[&a, &b]).await;
    let mut rx = a.bus.subscribe();
    broker.kill();
    until("readiness reports the lost broker", || {
        !a.readiness.is_ready() && !b.readiness.is_ready()
    })
    .await;
    let reasons = a.readiness.check().unwrap_err();
    assert!(
        reasons
            .iter()
            .any(|r| r.starts_with("bus: ") && r.contains("disconnected")),
        "{reasons:?}"
    );
    let err = b
        .bus
        .publish(ChangeEvent::tools_list_changed())
        .await
        .expect_err("publishing without a broker fails");
    assert_eq!(err.kind(), ErrorKind::Unavailable, "{err}");
    broker.restart();
    connected(&[&a, &b]).await;
    assert_eq!(
        next(&mut rx).await,
        Delivery::Resync,
        "a reconnect tells subscribers that events may have been missed"
    );
    b.bus.publish(updated(42)).await.unwrap();
    assert_eq!(next_event(&mut rx).await, updated(42), "delivery resumes");
}

/// The bus's connections are those that appeared after `before` was read; once it is
/// dropped, every one of them is closed. (Counting all connections instead would race with
/// the connections of the step before, which may still be closing.)
async fn dropping_the_bus_closes_its_connections<B: Broker>(broker: &B) {
    let before = broker.connections().await;
    let r = replica(broker, options());
    connected(&[&r]).await;
    // Subscribed before publishing, and the event taken back from the broker: it cannot
    // arrive after the bus is dropped and stand in front of the end.
    let mut rx = r.bus.subscribe();
    r.bus
        .publish(ChangeEvent::tools_list_changed())
        .await
        .unwrap();
    assert_eq!(next_event(&mut rx).await, ChangeEvent::tools_list_changed());
    let new_since = |now: BTreeSet<u64>| -> BTreeSet<u64> { &now - &before };
    until_async("the bus holds connections", || async {
        !new_since(broker.connections().await).is_empty()
    })
    .await;
    let of_bus = new_since(broker.connections().await);
    drop(r);
    assert_eq!(tokio::time::timeout(WAIT, rx.recv()).await, Ok(None));
    until_async("the bus's connections are closed", || async {
        broker.connections().await.is_disjoint(&of_bus)
    })
    .await;
}

async fn until_async<F: std::future::Future<Output = bool>>(what: &str, mut ok: impl FnMut() -> F) {
    let deadline = tokio::time::Instant::now() + WAIT;
    while !ok().await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting until {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The whole broker contract, as one test per backend (they share one broker process).
async fn broker_contract<B: Broker>(broker: &mut B) {
    delivers_to_every_subscriber_on_every_replica(broker).await;
    listen_streams_filter_what_other_replicas_publish(broker).await;
    prefixes_isolate_deployments(broker).await;
    a_stalled_subscriber_is_resynced_with_bounded_memory(broker, 2_000).await;
    dropping_the_bus_ends_its_subscribers(broker).await;
    dropping_the_bus_closes_its_connections(broker).await;
    a_lost_broker_is_reported_and_resynced(broker).await;
}

#[cfg(feature = "redis")]
mod redis {
    use super::*;
    use crate::support::brokers::RedisServer;
    use stateless_mcp::backends::RedisBus;

    impl Cluster for RedisServer {
        fn replica(&self, options: BusOptions) -> Arc<dyn NotifyBus> {
            Arc::new(RedisBus::connect(&self.url(), options).unwrap())
        }
    }

    impl Broker for RedisServer {
        fn kill(&mut self) {
            RedisServer::kill(self);
        }
        fn restart(&mut self) {
            RedisServer::restart(self);
        }
        async fn connections(&self) -> BTreeSet<u64> {
            let client = ::redis::Client::open(self.url()).unwrap();
            let mut conn = client.get_multiplexed_async_connection().await.unwrap();
            let asking: u64 = ::redis::cmd("CLIENT")
                .arg("ID")
                .query_async(&mut conn)
                .await
                .unwrap();
            let list: String = ::redis::cmd("CLIENT")
                .arg("LIST")
                .query_async(&mut conn)
                .await
                .unwrap();
            list.lines()
                .filter_map(|l| l.strip_prefix("id=")?.split(' ').next()?.parse().ok())
                .filter(|&id| id != asking)
                .collect()
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn contract() {
        let mut redis = RedisServer::start();
        broker_contract(&mut redis).await;
    }

    #[tokio::test]
    async fn events_published_by_other_programs_arrive() {
        let redis = RedisServer::start();
        let r = replica(&redis, options().prefix("cms"));
        connected(&[&r]).await;
        let mut rx = r.bus.subscribe();
        let client = ::redis::Client::open(redis.url()).unwrap();
        let mut conn = client.get_multiplexed_async_connection().await.unwrap();
        for payload in [
            "not json",
            r#"{"type":"something_new"}"#,
            r#"{"type":"resource_updated","uri":"file:///docs/a.md"}"#,
        ] {
            let _: i64 = ::redis::cmd("PUBLISH")
                .arg("cms.events")
                .arg(payload)
                .query_async(&mut conn)
                .await
                .unwrap();
        }
        assert_eq!(
            next(&mut rx).await,
            Delivery::Event(Arc::new(ChangeEvent::resource_updated("file:///docs/a.md"))),
            "what is not a change event is dropped; the rest is delivered"
        );
    }
}

#[cfg(feature = "nats")]
mod nats {
    use super::*;
    use crate::support::brokers::NatsServer;
    use stateless_mcp::backends::NatsBus;

    impl Cluster for NatsServer {
        fn replica(&self, options: BusOptions) -> Arc<dyn NotifyBus> {
            Arc::new(NatsBus::connect(&self.url(), options).unwrap())
        }
    }

    impl Broker for NatsServer {
        fn kill(&mut self) {
            NatsServer::kill(self);
        }
        fn restart(&mut self) {
            NatsServer::restart(self);
        }
        async fn connections(&self) -> BTreeSet<u64> {
            let url = format!("http://127.0.0.1:{}/connz?limit=1024", self.monitor_port);
            let connz: serde_json::Value = crate::support::get(url)
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            let listed = connz["connections"].as_array().cloned().unwrap_or_default();
            assert_eq!(
                listed.len() as u64,
                connz["num_connections"].as_u64().unwrap(),
                "every connection listed: {connz}"
            );
            listed.iter().map(|c| c["cid"].as_u64().unwrap()).collect()
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn contract() {
        let mut nats = NatsServer::start();
        broker_contract(&mut nats).await;
    }
}
