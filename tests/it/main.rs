//! The one integration-test binary. Submodules are named by behaviour; `support` starts the
//! app on `127.0.0.1:0` (or the reference binary, or brokers and nginx) and checks every
//! emitted message against the official schema of its era.
//!
//! # Two layers
//!
//! - **Self-contained** (plain `cargo test`): everything that needs nothing installed and no
//!   network: in-process servers on loopback, the reference binary (built for every test run
//!   through the dev-dependency on this package with `reference-server`), the memory bus and
//!   stores, the deploy files parsed as data. It still reads the two official schemas (the
//!   spec's files; see `support::schema`).
//! - **External** (`--features external-tests`, turned on by `--all-features`, which
//!   `scripts/test.sh` and CI use): the tests that run programs `scripts/provision.sh`
//!   installs: the conformance suite, the MCP Inspector and the TypeScript SDKs (Node), the
//!   Python SDK and kubernetes-validate (Python), nginx, redis-server, nats-server,
//!   docker-compose. Without the feature they are not compiled, so nothing is skipped and
//!   reported green; with it a missing program fails its test with an install hint.
//!
//! The switch is a cargo feature rather than an environment variable because libtest cannot
//! mark a test ignored at run time: an environment check could only pass or fail. A test in
//! the self-contained layer fails under `CI` when the feature is off, so CI cannot lose the
//! external layer unnoticed.
//!
//! Modules with both kinds (`auth`, `bus_contract`, `session_store`, `single_use`,
//! `task_store`) gate their external parts (`python`, Redis, NATS) on the feature.

mod support;

// Self-contained.
#[cfg(feature = "auth")]
mod auth;
mod basics;
mod bus_contract;
mod cancellation;
mod config;
mod cors;
mod deploy;
mod drain;
mod event_store;
mod golden;
mod handlers;
mod http_edges;
mod idempotency;
mod idempotency_store;
mod ladder;
mod ladder_order;
mod legacy_input;
mod legacy_sessions;
mod legacy_streams;
mod legacy_words;
mod limits;
mod listen;
mod mount_in_axum;
mod mrtr;
mod observability;
mod otel;
mod pagination;
mod rate_store;
mod robustness;
mod rolling_deploy;
mod runner;
mod runtime_catalog;
mod session_store;
mod settings_from_env;
mod single_use;
mod skills;
mod stdio;
mod stdio_legacy;
mod task_store;
mod tasks;
mod testing_client;
mod tool_layers;
mod typed_arguments;
mod typed_handlers;

// External: need programs installed (see above).
#[cfg(feature = "external-tests")]
mod bus_failover;
#[cfg(feature = "external-tests")]
mod conformance;
#[cfg(feature = "external-tests")]
mod cors_browser;
#[cfg(feature = "external-tests")]
mod deploy_validate;
#[cfg(all(feature = "external-tests", feature = "redis"))]
mod idempotency_cluster;
#[cfg(feature = "external-tests")]
mod interop_inspector;
#[cfg(feature = "external-tests")]
mod interop_python;
#[cfg(feature = "external-tests")]
mod interop_typescript;
#[cfg(feature = "external-tests")]
mod legacy_replicas;
#[cfg(all(feature = "external-tests", feature = "redis"))]
mod legacy_resume;
#[cfg(feature = "external-tests")]
mod prometheus;
#[cfg(all(feature = "external-tests", feature = "redis"))]
mod rate_limits_shared;
#[cfg(all(feature = "external-tests", feature = "redis"))]
mod redis_round_trips;
#[cfg(all(feature = "external-tests", feature = "redis"))]
mod runtime_cluster;
#[cfg(feature = "external-tests")]
mod scale_out;
#[cfg(feature = "external-tests")]
mod scale_out_legacy;
#[cfg(all(feature = "external-tests", feature = "redis"))]
mod store_outage;
#[cfg(feature = "external-tests")]
mod tasks_cluster;

/// CI must run the external layer: `scripts/test.sh` passes `--all-features`.
#[cfg(not(feature = "external-tests"))]
#[test]
fn ci_runs_the_external_layer() {
    assert!(
        std::env::var_os("CI").is_none(),
        "CI is set but the external tests are not compiled: run with --features external-tests \
         (scripts/test.sh passes --all-features)"
    );
}
