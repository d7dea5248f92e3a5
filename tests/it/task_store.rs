//! The contract every `TaskStore` keeps (see the `tasks` module docs), run against each
//! backend: the in-process store, and Redis on a real `redis-server` started on an
//! ephemeral port.
//!
//! A "replica" here is one store handle as a replica process would make it: its own
//! connection to Redis, or a handle on the shared in-process store.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use serde_json::json;
use stateless_mcp::extend::fail_lapsed;
use stateless_mcp::tasks::{
    Lease, MemoryTaskStore, Replaced, TaskRecord, TaskStatus, TaskStore, TaskWork, Updated,
};

use super::support;

/// Makes the store handle of one replica.
trait Cluster {
    fn replica(&self) -> Arc<dyn TaskStore>;
}

/// One in-process store shared by every "replica".
struct Memory(Arc<MemoryTaskStore>);

impl Cluster for Memory {
    fn replica(&self) -> Arc<dyn TaskStore> {
        self.0.clone()
    }
}

/// Milliseconds since the Unix epoch, now (the clock leases are read against).
fn now_ms() -> u64 {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    since.map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

fn fresh_id(what: &str) -> String {
    format!("{what}-{}-{}", support::brokers::free_port(), now_ms())
}

fn task(id: &str, ttl_ms: u64) -> TaskRecord {
    TaskRecord::new(id, TaskWork::new("slow", json!({"n": 1})), ttl_ms, 250)
}

fn lease(replica: &str, for_ms: u64) -> Option<Lease> {
    lease_until(replica, now_ms() + for_ms)
}

fn lease_until(replica: &str, until: u64) -> Option<Lease> {
    Some(Lease {
        replica: replica.into(),
        until,
    })
}

/// A task created on one replica reads back the same on every other; an id is created once.
async fn created_tasks_are_seen_everywhere_and_ids_are_unique(cluster: &dyn Cluster) {
    let (a, b) = (cluster.replica(), cluster.replica());
    let id = fresh_id("create");
    let t = task(&id, 60_000).with_principal(Some("alice".into()));
    assert!(a.create(&t).await.unwrap());
    assert_eq!(b.get(&id).await.unwrap(), Some(t.clone()));
    let other = task(&id, 1_000);
    assert!(
        !b.create(&other).await.unwrap(),
        "a second create is refused"
    );
    assert_eq!(a.get(&id).await.unwrap(), Some(t), "and changed nothing");
    assert_eq!(a.get(&fresh_id("never")).await.unwrap(), None);
}

/// Concurrent writers on several replicas never lose an update: each of them adds its own
/// answer, and every answer is there at the end.
async fn concurrent_updates_lose_nothing(cluster: &dyn Cluster) {
    let id = fresh_id("race");
    let first = cluster.replica();
    assert!(first.create(&task(&id, 60_000)).await.unwrap());
    let mut writers = Vec::new();
    for r in 0..3 {
        let store = cluster.replica();
        let id = id.clone();
        writers.push(tokio::spawn(async move {
            for n in 0..20 {
                let key = format!("r{r}-{n}");
                let updated = store
                    .update(&id, |t| {
                        t.work.responses.insert(key.clone(), json!({"n": n}));
                        true
                    })
                    .await
                    .unwrap();
                assert!(matches!(updated, Updated::Changed(_)), "{updated:?}");
            }
        }));
    }
    for w in writers {
        w.await.unwrap();
    }
    let t = first.get(&id).await.unwrap().unwrap();
    assert_eq!(t.work.responses.len(), 60, "no update was lost");
    assert_eq!(t.version, 61, "one version per update");
}

/// A replace over an old version is refused with what the store holds now.
async fn stale_writes_are_refused(cluster: &dyn Cluster) {
    let (a, b) = (cluster.replica(), cluster.replica());
    let id = fresh_id("stale");
    let t = task(&id, 60_000);
    assert!(a.create(&t).await.unwrap());
    let mut on_a = t.clone();
    on_a.version = 2;
    on_a.status_message = Some("a".into());
    let mut on_b = t.clone();
    on_b.version = 2;
    on_b.status_message = Some("b".into());
    assert_eq!(a.replace(&on_a).await.unwrap(), Replaced::Done);
    assert_eq!(
        b.replace(&on_b).await.unwrap(),
        Replaced::Stale(Box::new(on_a.clone())),
        "b read version 1 too; a came first"
    );
    let mut skipping = on_a.clone();
    skipping.version = 5;
    assert!(matches!(
        b.replace(&skipping).await.unwrap(),
        Replaced::Stale(_)
    ));
    let mut unknown = task(&fresh_id("unknown"), 60_000);
    unknown.version = 2;
    assert_eq!(a.replace(&unknown).await.unwrap(), Replaced::Gone);
}

/// Once completed, failed or cancelled, a task never changes again.
async fn terminal_states_are_final(cluster: &dyn Cluster) {
    let (a, b) = (cluster.replica(), cluster.replica());
    for end in [
        TaskStatus::Completed,
        TaskStatus::Failed,
        TaskStatus::Cancelled,
    ] {
        let id = fresh_id("final");
        assert!(
            a.create(&task(&id, 60_000).with_lease(lease("a", 60_000)))
                .await
                .unwrap()
        );
        let ended = a
            .update(&id, |t| {
                t.set_status(end);
                true
            })
            .await
            .unwrap();
        let Updated::Changed(ended) = ended else {
            panic!("{ended:?}")
        };
        assert_eq!(ended.status, end);
        assert_eq!(ended.lease, None, "an ended task holds no lease");
        // Another replica tries to move it on, by the book and not.
        let mut called = false;
        let again = b
            .update(&id, |t| {
                called = true;
                t.set_status(TaskStatus::Working);
                true
            })
            .await
            .unwrap();
        assert_eq!(again, Updated::Unchanged(ended.clone()));
        assert!(!called, "a terminal task is not handed to a change");
        let mut forced = ended.clone();
        forced.version += 1;
        forced.set_status(TaskStatus::Cancelled);
        assert_eq!(
            b.replace(&forced).await.unwrap(),
            Replaced::Stale(Box::new(ended.clone()))
        );
        assert_eq!(b.get(&id).await.unwrap(), Some(ended));
    }
}

/// A task is readable for its ttl after its last write, then forgotten.
///
/// Expiry runs on the store's clock (Redis: real time), so this waits for real, with wide
/// margins, and asserts only what the measured times prove: when the machine stalled so long
/// that the last write's ttl may have run out before the read, the round proves nothing and
/// runs again with a longer ttl (and the test fails if none could tell).
async fn tasks_expire_after_their_ttl(cluster: &dyn Cluster) {
    let (a, b) = (cluster.replica(), cluster.replica());
    for ttl_ms in [3_000, 6_000, 12_000] {
        if expiry_round(&*a, &*b, ttl_ms).await {
            return;
        }
    }
    panic!("too slow to tell whether a write restarts the ttl, even with a 12 s ttl");
}

/// One round of [`tasks_expire_after_their_ttl`]: false when it could not tell.
async fn expiry_round(a: &dyn TaskStore, b: &dyn TaskStore, ttl_ms: u64) -> bool {
    let ttl = Duration::from_millis(ttl_ms);
    let id = fresh_id("ttl");
    assert!(a.create(&task(&id, ttl_ms)).await.unwrap());
    // The first expiry is at most `ttl` after this.
    let created = Instant::now();
    tokio::time::sleep_until(created + ttl / 2).await;
    // A write restarts the ttl: the new expiry is at least `ttl` after this.
    let written = Instant::now();
    let touched = b
        .update(&id, |t| {
            t.set_status(TaskStatus::Completed);
            true
        })
        .await
        .unwrap();
    assert!(matches!(touched, Updated::Changed(_)), "{touched:?}");
    // Past the first expiry.
    tokio::time::sleep_until(created + ttl + ttl / 8).await;
    let readable = a.get(&id).await.unwrap().is_some();
    if written.elapsed() >= ttl {
        return false;
    }
    assert!(readable, "readable for its ttl after the last write");
    let gone = &id;
    support::eventually(
        ttl + Duration::from_secs(10),
        "the task was not forgotten after its ttl",
        move || async move { a.get(gone).await.unwrap().is_none() },
    )
    .await;
    assert_eq!(b.update(&id, |_| true).await.unwrap(), Updated::Gone);
    assert!(
        a.create(&task(&id, ttl_ms)).await.unwrap(),
        "an expired id is free again"
    );
    true
}

/// A running task whose lease lapses is found by any replica and failed once; one whose
/// lease is renewed is left alone.
async fn lapsed_leases_fail_their_tasks(cluster: &dyn Cluster) {
    let (owner, a, b) = (cluster.replica(), cluster.replica(), cluster.replica());
    let dying = fresh_id("dying");
    let alive = fresh_id("alive");
    let waiting = fresh_id("waiting");
    // Leases are instants the store compares with the `now` it is asked about: the test
    // sets both, so nothing here waits for a clock.
    let t0 = now_ms();
    for id in [&dying, &alive] {
        assert!(
            owner
                .create(&task(id, 60_000).with_lease(lease_until("owner", t0 + 300)))
                .await
                .unwrap()
        );
    }
    let mut asking = task(&waiting, 60_000);
    asking.set_status(TaskStatus::InputRequired);
    assert!(owner.create(&asking).await.unwrap());
    let early = a.lapsed(t0, 1_000).await.unwrap();
    assert!(
        !early.contains(&dying) && !early.contains(&alive),
        "{early:?}"
    );
    // The owner renews one lease, then "dies"; the other lease lapses.
    let renewed = owner
        .update(&alive, |t| {
            t.lease = lease_until("owner", t0 + 60_000);
            true
        })
        .await
        .unwrap();
    assert!(matches!(renewed, Updated::Changed(_)));
    let now = t0 + 1_000;
    let listed = b.lapsed(now, 1_000).await.unwrap();
    assert!(listed.contains(&dying), "{listed:?}");
    assert!(!listed.contains(&alive) && !listed.contains(&waiting));
    // Two replicas sweep at once: the task fails exactly once.
    let (on_a, on_b) = tokio::join!(fail_lapsed(&*a, now), fail_lapsed(&*b, now));
    let failed: Vec<TaskRecord> = on_a
        .unwrap()
        .into_iter()
        .chain(on_b.unwrap())
        .filter(|t| t.id == dying)
        .collect();
    assert_eq!(failed.len(), 1, "{failed:?}");
    let seen = owner.get(&dying).await.unwrap().unwrap();
    assert_eq!(seen.status, TaskStatus::Failed);
    assert_eq!(seen.error.as_ref().unwrap()["code"], -32603);
    assert!(seen.lease.is_none());
    assert_eq!(
        owner.get(&alive).await.unwrap().unwrap().status,
        TaskStatus::Working
    );
    assert!(!a.lapsed(now, 1_000).await.unwrap().contains(&dying));
}

async fn contract(cluster: &dyn Cluster) {
    created_tasks_are_seen_everywhere_and_ids_are_unique(cluster).await;
    concurrent_updates_lose_nothing(cluster).await;
    stale_writes_are_refused(cluster).await;
    terminal_states_are_final(cluster).await;
    tasks_expire_after_their_ttl(cluster).await;
    lapsed_leases_fail_their_tasks(cluster).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_contract() {
    contract(&Memory(Arc::new(MemoryTaskStore::default()))).await;
}

#[cfg(all(feature = "redis", feature = "external-tests"))]
mod redis {
    use super::support::brokers::RedisServer;
    use super::*;
    use stateless_mcp::ErrorKind;
    use stateless_mcp::tasks::RedisTaskStore;

    struct OnRedis<'a>(&'a RedisServer, String);

    impl Cluster for OnRedis<'_> {
        fn replica(&self) -> Arc<dyn TaskStore> {
            Arc::new(RedisTaskStore::connect(&self.0.url(), self.1.clone()).unwrap())
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn contract_on_redis() {
        let redis = RedisServer::start();
        contract(&OnRedis(&redis, fresh_id("contract"))).await;
    }

    /// Prefixes keep deployments apart; a lost Redis is an error, never "unknown task", and
    /// the store works again once Redis is back.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn prefixes_isolate_and_a_lost_redis_is_an_error() {
        let mut redis = RedisServer::start();
        let (one, two) = (
            OnRedis(&redis, "one".into()).replica(),
            OnRedis(&redis, "two".into()).replica(),
        );
        let id = fresh_id("shared");
        assert!(one.create(&task(&id, 60_000)).await.unwrap());
        assert_eq!(two.get(&id).await.unwrap(), None);
        assert!(two.create(&task(&id, 60_000)).await.unwrap());
        redis.kill();
        let err = one.get(&id).await.expect_err("no Redis, no answer");
        assert_eq!(err.kind(), ErrorKind::Unavailable, "{err}");
        let err = one
            .update(&id, |_| true)
            .await
            .expect_err("no Redis, no write");
        assert_eq!(err.kind(), ErrorKind::Unavailable, "{err}");
        redis.restart();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        let fresh = loop {
            match one.create(&task(&fresh_id("after"), 60_000)).await {
                Ok(created) => break created,
                Err(e) => {
                    assert!(
                        tokio::time::Instant::now() < deadline,
                        "the store did not recover: {e}"
                    );
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        };
        assert!(fresh, "the store works again once Redis is back");
    }

    /// A store on the bus's Redis publishes a status change's event within its write: once
    /// when the record is written, never when it is not (stale, gone), and exactly the bytes
    /// it was given, which every subscriber of the bus receives as the event. A store cannot
    /// announce on a bus of another Redis.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_store_on_the_bus_redis_announces_within_its_writes() {
        use stateless_mcp::backends::{BusOptions, RedisBus};
        use stateless_mcp::extend::{Delivery, NotifyBus as _};
        use stateless_mcp::notify::{ChangeEvent, Notifier, TaskChange};

        let redis = RedisServer::start();
        let bus = RedisBus::connect(&redis.url(), BusOptions::default().prefix("ann")).unwrap();
        let plain = RedisTaskStore::connect(&redis.url(), "ann").unwrap();
        assert_eq!(
            plain.announces_on(),
            None,
            "a store announces only when told to"
        );
        let store = plain.clone().announcing_on(&bus).unwrap();
        assert_eq!(store.announces_on(), bus.route());
        assert!(store.announces_on().is_some());
        let mut rx = bus.subscribe();
        let deadline = Instant::now() + Duration::from_secs(10);
        while !bus.is_connected() {
            assert!(Instant::now() < deadline, "the bus did not connect");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let event_of = |t: &TaskRecord| {
            ChangeEvent::TaskStatus(TaskChange::new(t.to_wire(), t.principal.clone()))
        };
        // The next event the bus delivers (each test step ends with one it can expect).
        let mut next_event =
            async || match tokio::time::timeout(Duration::from_secs(5), rx.recv()).await {
                Ok(Some(Delivery::Event(e))) => (*e).clone(),
                other => panic!("no event delivered: {other:?}"),
            };

        let id = fresh_id("announce");
        let created = task(&id, 60_000).with_principal(Some("alice".into()));
        assert!(store.create(&created).await.unwrap());
        let mut done = created.clone();
        done.version = 2;
        done.set_status(TaskStatus::Completed);
        let event = event_of(&done);
        let bytes = serde_json::to_vec(&event).unwrap();
        assert_eq!(
            store.replace_announcing(&done, &bytes).await.unwrap(),
            Replaced::Done
        );
        assert_eq!(next_event().await, event, "the written change is announced");
        assert_eq!(plain.get(&id).await.unwrap(), Some(done.clone()));

        // A stale write (terminal now) and a write of a task that is gone announce nothing:
        // the next event is the marker published after them.
        let mut stale = created.clone();
        stale.version = 2;
        stale.set_status(TaskStatus::Cancelled);
        let stale_bytes = serde_json::to_vec(&event_of(&stale)).unwrap();
        assert!(matches!(
            store
                .replace_announcing(&stale, &stale_bytes)
                .await
                .unwrap(),
            Replaced::Stale(_)
        ));
        let mut gone = task(&fresh_id("gone"), 60_000);
        gone.version = 2;
        let gone_bytes = serde_json::to_vec(&event_of(&gone)).unwrap();
        assert_eq!(
            store.replace_announcing(&gone, &gone_bytes).await.unwrap(),
            Replaced::Gone
        );
        // A plain replace announces nothing either.
        let mut other = task(&fresh_id("plain"), 60_000);
        assert!(store.create(&other).await.unwrap());
        other.version = 2;
        other.set_status(TaskStatus::Failed);
        assert_eq!(store.replace(&other).await.unwrap(), Replaced::Done);
        bus.publish(ChangeEvent::tools_list_changed())
            .await
            .unwrap();
        assert_eq!(
            next_event().await,
            ChangeEvent::tools_list_changed(),
            "nothing was announced for writes that did not happen, nor for a plain replace"
        );

        // Pub/sub ignores the database number: a bus on another database of the same
        // server is the same bus.
        let other_db = RedisBus::connect(
            &format!("{}/3", redis.url()),
            BusOptions::default().prefix("ann"),
        )
        .unwrap();
        assert!(plain.clone().announcing_on(&other_db).is_ok());
        // A bus on another Redis server is refused, saying why.
        let elsewhere = RedisServer::start();
        let far = RedisBus::connect(&elsewhere.url(), BusOptions::default().prefix("ann")).unwrap();
        let err = plain
            .clone()
            .announcing_on(&far)
            .expect_err("another Redis");
        assert_eq!(err.kind(), ErrorKind::InvalidDefinition, "{err}");
        assert!(err.to_string().contains("its own Redis server"), "{err}");

        // A server whose notifier is not that bus refuses such a store: its listeners would
        // never hear the changes. With that bus, it builds.
        let keys: stateless_mcp::settings::StateKeys =
            crate::support::cluster::STATE_KEYS.parse().unwrap();
        let announcing: Arc<dyn TaskStore> = Arc::new(store.clone());
        for notifier in [None, Some(Notifier::new(Arc::new(far.clone())))] {
            let mut builder = stateless_mcp::Server::builder()
                .state_keys(keys.clone())
                .task_store(announcing.clone());
            if let Some(n) = notifier {
                builder = builder.notifier(n);
            }
            let err = builder.build().expect_err("the server's bus is another");
            assert_eq!(err.kind(), ErrorKind::InvalidDefinition, "{err}");
            assert!(err.to_string().contains("announcing_on"), "{err}");
        }
        stateless_mcp::Server::builder()
            .state_keys(keys)
            .notifier(Notifier::new(Arc::new(bus.clone())))
            .task_store(announcing)
            .build()
            .expect("the server publishes on the store's bus");
    }

    /// What is stored is the documented layout, readable by other programs.
    #[tokio::test]
    async fn the_layout_is_the_documented_one() {
        let redis = RedisServer::start();
        let store = OnRedis(&redis, "layout".into()).replica();
        let id = fresh_id("layout");
        let t = task(&id, 60_000).with_lease(lease("r1", 30_000));
        assert!(store.create(&t).await.unwrap());
        let client = ::redis::Client::open(redis.url()).unwrap();
        let mut conn = client.get_multiplexed_async_connection().await.unwrap();
        let (v, s, d): (u64, String, String) = ::redis::cmd("HMGET")
            .arg(format!("layout.task.{id}"))
            .arg("v")
            .arg("s")
            .arg("d")
            .query_async(&mut conn)
            .await
            .unwrap();
        assert_eq!((v, s.as_str()), (1, "working"));
        let record: serde_json::Value = serde_json::from_str(&d).unwrap();
        assert_eq!(record["id"], id.as_str());
        assert_eq!(record["work"]["tool"], "slow");
        let ttl: i64 = ::redis::cmd("PTTL")
            .arg(format!("layout.task.{id}"))
            .query_async(&mut conn)
            .await
            .unwrap();
        assert!(ttl > 50_000 && ttl <= 60_000, "{ttl}");
        let score: f64 = ::redis::cmd("ZSCORE")
            .arg("layout.tasks.leases")
            .arg(&id)
            .query_async(&mut conn)
            .await
            .unwrap();
        assert_eq!(score as u64, t.lease.unwrap().until);
    }
}
