//! The contract every `NotifyBus` keeps (see the `notify` module docs), run against each
//! backend: the in-process bus, and Redis and NATS on real `redis-server` / `nats-server`
//! processes started on ephemeral ports.
//!
//! A "replica" here is one bus handle as a replica process would make it: its own
//! connections to the broker (Redis, NATS), or a handle on the shared in-process bus.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use stateless_mcp::Server;
use stateless_mcp::backends::{BusOptions, MemoryBus};
use stateless_mcp::extend::{BusReceiver, Delivery, NotifyBus};
use stateless_mcp::notify::ChangeEvent;
use stateless_mcp::notify::Notifier;
use stateless_mcp::observability::Readiness;

use crate::support::listen::Listener;
use crate::support::{Client, start};

const WAIT: Duration = Duration::from_secs(10);

/// Makes the bus of one replica.
trait Cluster {
    fn replica(&self, options: BusOptions) -> Arc<dyn NotifyBus>;
}

/// One in-process bus shared by every "replica" (made with the first replica's options).
#[derive(Default)]
struct Memory(Mutex<Option<Arc<MemoryBus>>>);

impl Cluster for Memory {
    fn replica(&self, options: BusOptions) -> Arc<dyn NotifyBus> {
        self.0
            .lock()
            .unwrap()
            .get_or_insert_with(|| Arc::new(MemoryBus::new(options.capacity)))
            .clone()
    }
}

/// A replica's bus and its readiness (not ready while the bus is disconnected).
struct Replica {
    bus: Arc<dyn NotifyBus>,
    readiness: Readiness,
}

fn replica(cluster: &dyn Cluster, options: BusOptions) -> Replica {
    let readiness = Readiness::new();
    let bus = cluster.replica(options.readiness(readiness.condition("bus")));
    Replica { bus, readiness }
}

async fn until(what: &str, mut ok: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + WAIT;
    while !ok() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting until {what}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn connected(replicas: &[&Replica]) {
    for r in replicas {
        until("the bus is connected", || r.readiness.is_ready()).await;
    }
}

async fn next(rx: &mut BusReceiver) -> Delivery {
    tokio::time::timeout(WAIT, rx.recv())
        .await
        .expect("a delivery within the wait")
        .expect("the bus is still open")
}

/// The next delivery if one comes within 200 ms.
async fn quiet(rx: &mut BusReceiver) -> Option<Delivery> {
    tokio::time::timeout(Duration::from_millis(200), rx.recv())
        .await
        .ok()
        .flatten()
}

/// The next event, skipping resyncs.
async fn next_event(rx: &mut BusReceiver) -> ChangeEvent {
    loop {
        if let Delivery::Event(e) = next(rx).await {
            return (*e).clone();
        }
    }
}

fn updated(n: usize) -> ChangeEvent {
    ChangeEvent::resource_updated(format!("test://r/{n}"))
}

fn options() -> BusOptions {
    BusOptions::default().prefix(format!("contract-{}", support::brokers::free_port()))
}

use super::support;

/// Every subscriber on every replica receives every event, in order per publisher.
async fn delivers_to_every_subscriber_on_every_replica(cluster: &dyn Cluster) {
    let opts = options();
    let replicas: Vec<Replica> = (0..3).map(|_| replica(cluster, opts.clone())).collect();
    connected(&replicas.iter().collect::<Vec<_>>()).await;
    let mut subscribers: Vec<BusReceiver> = replicas
        .iter()
        .flat_map(|r| [r.bus.subscribe(), r.bus.subscribe()])
        .collect();
    replicas[0]
        .bus
        .publish(ChangeEvent::tools_list_changed())
        .await
        .unwrap();
    replicas[0].bus.publish(updated(1)).await.unwrap();
    replicas[1]
        .bus
        .publish(ChangeEvent::prompts_list_changed())
        .await
        .unwrap();
    for rx in &mut subscribers {
        let mut got = Vec::new();
        for _ in 0..3 {
            got.push(next_event(rx).await);
        }
        let from_first: Vec<_> = got
            .iter()
            .filter(|e| **e != ChangeEvent::prompts_list_changed())
            .collect();
        assert_eq!(
            from_first,
            [&ChangeEvent::tools_list_changed(), &updated(1)],
            "one publisher's events arrive in order"
        );
        assert!(
            got.contains(&ChangeEvent::prompts_list_changed()),
            "{got:?}"
        );
    }
}

/// Listen streams on one replica get only the notification types they asked for, from
/// events published on another.
async fn listen_streams_filter_what_other_replicas_publish(cluster: &dyn Cluster) {
    let opts = options();
    let (a, b) = (replica(cluster, opts.clone()), replica(cluster, opts));
    connected(&[&a, &b]).await;
    let server = |r: &Replica| {
        let b = Server::builder()
            .notifier(Notifier::new(r.bus.clone()))
            .state_keys(crate::support::cluster::STATE_KEYS.parse().unwrap());
        stateless_mcp::fixtures::conformance(b).build().unwrap()
    };
    let (on_a, on_b) = (start(server(&a)).await, server(&b));
    let client = Client::new(&on_a.url);
    let mut prompts =
        Listener::open(&client, json!("p"), json!({"promptsListChanged": true})).await;
    let mut docs = Listener::open(
        &client,
        json!("d"),
        json!({"resourceSubscriptions": ["file:///docs/"]}),
    )
    .await;
    for l in [&mut prompts, &mut docs] {
        assert_eq!(
            l.next_kind().await,
            "notifications/subscriptions/acknowledged"
        );
    }
    let notifier = on_b.notifier();
    notifier.tools_list_changed().await.unwrap();
    notifier
        .resource_updated("file:///elsewhere")
        .await
        .unwrap();
    notifier
        .resource_updated("file:///docs/a.md")
        .await
        .unwrap();
    notifier.prompts_list_changed().await.unwrap();
    // One publisher's events arrive in order: anything let through wrongly would come first.
    assert_eq!(
        prompts.next_kind().await,
        "notifications/prompts/list_changed"
    );
    let m = docs.next().await.unwrap();
    assert_eq!(m["method"], "notifications/resources/updated");
    assert_eq!(m["params"]["uri"], "file:///docs/a.md");
}

/// A subscriber that stops reading is resynced, and never holds more than the ring.
async fn a_stalled_subscriber_is_resynced_with_bounded_memory(
    cluster: &dyn Cluster,
    events: usize,
) {
    let opts = options().capacity(4);
    let (a, b) = (replica(cluster, opts.clone()), replica(cluster, opts));
    connected(&[&a, &b]).await;
    let mut stalled = a.bus.subscribe();
    let mut reader = a.bus.subscribe();
    let last = updated(events - 1);
    let wanted = last.clone();
    let reading = tokio::spawn(async move { while next_event(&mut reader).await != wanted {} });
    for n in 0..events {
        b.bus.publish(updated(n)).await.unwrap();
    }
    tokio::time::timeout(WAIT, reading)
        .await
        .expect("the reading subscriber sees the last event")
        .unwrap();
    assert_eq!(next(&mut stalled).await, Delivery::Resync);
    // All it still holds is the ring: at most `capacity` of the newest events.
    let mut rest = Vec::new();
    while let Some(d) = quiet(&mut stalled).await {
        rest.push(d);
    }
    assert!(rest.len() <= 4, "{rest:?}");
    let rest: Vec<ChangeEvent> = rest
        .into_iter()
        .map(|d| match d {
            Delivery::Event(e) => (*e).clone(),
            Delivery::Resync => panic!("one resync only"),
        })
        .collect();
    assert_eq!(
        rest.last(),
        Some(&last),
        "then it continues with the newest"
    );
}

mod memory {
    use super::*;

    #[tokio::test]
    async fn delivers_to_every_subscriber() {
        delivers_to_every_subscriber_on_every_replica(&Memory::default()).await;
    }

    #[tokio::test]
    async fn listen_streams_filter() {
        listen_streams_filter_what_other_replicas_publish(&Memory::default()).await;
    }

    #[tokio::test]
    async fn a_stalled_subscriber_is_resynced() {
        a_stalled_subscriber_is_resynced_with_bounded_memory(&Memory::default(), 10_000).await;
    }

    #[tokio::test]
    async fn shutdown_ends_subscribers() {
        let memory = Memory::default();
        let r = replica(&memory, options());
        let mut rx = r.bus.subscribe();
        drop((r, memory));
        assert_eq!(tokio::time::timeout(WAIT, rx.recv()).await, Ok(None));
    }
}

/// The Redis and NATS buses on real brokers.
#[cfg(feature = "external-tests")]
mod brokers;
