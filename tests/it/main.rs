//! The one integration-test binary. Submodules are named by behaviour; `support` starts the
//! app on `127.0.0.1:0` and checks every emitted message against the official schema.

mod support;

#[cfg(feature = "auth")]
mod auth;
mod basics;
mod bus_contract;
mod bus_failover;
mod cancellation;
mod config;
mod conformance;
mod deploy;
mod deploy_validate;
mod drain;
mod golden;
mod handlers;
mod http_edges;
mod interop_inspector;
mod interop_python;
mod interop_typescript;
mod ladder;
mod ladder_order;
mod legacy_input;
mod legacy_replicas;
mod legacy_sessions;
mod legacy_streams;
mod limits;
mod listen;
mod mrtr;
mod observability;
mod pagination;
mod robustness;
mod rolling_deploy;
mod runner;
mod scale_out;
mod scale_out_legacy;
mod session_store;
mod single_use;
mod stdio;
mod task_store;
mod tasks;
mod tasks_cluster;
mod testing_client;
mod typed_handlers;
