//! Every metric the crate emits: its name, its labels, and who records it ([`ALL`] lists the
//! names; the `record_*` functions behind them are crate-private).
//!
//! Names follow Prometheus conventions (`_total` counters, `_seconds` durations); the request
//! duration is the OpenTelemetry MCP semantic convention `mcp.server.operation.duration`
//! spelled the Prometheus way. Metrics go through the [`metrics`] facade, so any recorder
//! works; the reference server installs the Prometheus exporter and serves `/metrics`.
//! Without an installed recorder every function here is a no-op costing a few nanoseconds.
//!
//! Label values are bounded: methods come from a fixed list, tool and prompt names from the
//! catalog served at the time (anything else is `_other`; a name a runtime change adds gets
//! its own series from then on), outcomes and reasons from fixed strings. No
//! label ever carries a client-chosen string.
//!
//! | metric | type | labels | emitted by |
//! |---|---|---|---|
//! | `mcp_server_requests_total` | counter | `method`, `name`, `outcome` | `Server::handle` (every transport), once per message; the HTTP endpoint for what it refuses before |
//! | `mcp_server_operation_duration_seconds` | histogram | `method`, `name`, `outcome` | `Server::handle` (every transport) |
//! | `mcp_server_requests_in_flight` | gauge | — | `Server::handle` (every transport) |
//! | `mcp_listen_streams_open` | gauge | — | `subscriptions/listen` streams |
//! | `mcp_notifications_published_total` | counter | `kind` | the notification bus, per event published |
//! | `mcp_notifications_delivered_total` | counter | `kind` | listen streams, per notification written |
//! | `mcp_bus_lagged_events_total` | counter | — | a listen stream that fell behind the bus |
//! | `mcp_bus_reconnects_total` | counter | `backend` | a bus backend that reconnected |
//! | `mcp_bus_connected` | gauge | `backend` | a bus backend (1 connected, 0 not) |
//! | `mcp_auth_failures_total` | counter | `reason` | the auth middleware |
//! | `mcp_request_state_rejections_total` | counter | `reason` | `requestState` unsealing |
//! | `mcp_http_refusals_total` | counter | `reason` | connection and load limits |
//! | `mcp_connections_open` | gauge | — | the runner's accept loop |
//! | `mcp_legacy_session_refreshes_total` | counter | — | a legacy session's use recorded in the session store (sliding expiry) |
//! | `mcp_legacy_sessions_expired_total` | counter | `reason` | a request refused (404) because its legacy session expired: `idle` or `hard` |
//! | `mcp_store_unavailable_total` | counter | `store`, `cause` | a shared-store call that failed for want of the store |
//! | `mcp_store_circuit_open` | gauge | `store` | a shared store's circuit breaker (1 open, 0 closed) |
//! | `mcp_connections_idle_closed_total` | counter | — | the runner, at the idle timeout |
//!
//! `outcome` is `ok`, `accepted` (a notification), `cancelled` (the client went away before
//! the reply), the JSON-RPC error class (`parse_error`, `invalid_request`,
//! `method_not_found`, `invalid_params`, `internal_error`, `header_mismatch`,
//! `missing_capability`, `unsupported_version`, `other_error`), or the HTTP rejection that
//! came before JSON-RPC (`forbidden`, `method_not_allowed`, `not_acceptable`,
//! `unsupported_media_type`, `payload_too_large`, `bad_request`, `http_error`).
//! `name` is the tool name for `tools/call`, the prompt name for `prompts/get`, empty
//! otherwise. `method` is the MCP method (from `Mcp-Method` over HTTP, from the body on
//! transports without headers), `_other` for anything unknown, empty when it could not be
//! read.

use std::sync::OnceLock;
use std::time::Duration;

use metrics::{Counter, Gauge, Histogram, counter, gauge, histogram};
#[cfg(any(feature = "prometheus", feature = "otel"))]
use metrics::{Unit, describe_counter, describe_gauge, describe_histogram};

use crate::protocol::ErrorCode;

/// Counter: MCP requests handled, by `method`, `name` and `outcome`.
pub(crate) const REQUESTS_TOTAL: &str = "mcp_server_requests_total";
/// Histogram (seconds): time from receiving a request to producing its final response, by
/// `method`, `name` and `outcome` (OpenTelemetry `mcp.server.operation.duration`).
pub(crate) const REQUEST_DURATION_SECONDS: &str = "mcp_server_operation_duration_seconds";
/// Gauge: requests received whose final response is not produced yet.
pub(crate) const REQUESTS_IN_FLIGHT: &str = "mcp_server_requests_in_flight";
/// Gauge: open `subscriptions/listen` streams on this replica.
pub(crate) const LISTEN_STREAMS_OPEN: &str = "mcp_listen_streams_open";
/// Counter: change events this replica published to the bus, by `kind`.
pub(crate) const NOTIFICATIONS_PUBLISHED_TOTAL: &str = "mcp_notifications_published_total";
/// Counter: notifications written to listen streams on this replica, by `kind`.
pub(crate) const NOTIFICATIONS_DELIVERED_TOTAL: &str = "mcp_notifications_delivered_total";
/// Counter: bus events a slow listen stream missed because it fell behind.
pub(crate) const BUS_LAGGED_EVENTS_TOTAL: &str = "mcp_bus_lagged_events_total";
/// Counter: reconnections of the bus backend, by `backend`.
pub(crate) const BUS_RECONNECTS_TOTAL: &str = "mcp_bus_reconnects_total";
/// Gauge: 1 while the bus backend is connected, 0 otherwise, by `backend`.
pub(crate) const BUS_CONNECTED: &str = "mcp_bus_connected";
/// Counter: requests refused by authentication or authorization, by `reason`.
pub(crate) const AUTH_FAILURES_TOTAL: &str = "mcp_auth_failures_total";
/// Counter: `requestState` values refused when unsealing, by `reason`.
pub(crate) const REQUEST_STATE_REJECTIONS_TOTAL: &str = "mcp_request_state_rejections_total";
/// Counter: tasks created on this replica.
pub(crate) const TASKS_CREATED_TOTAL: &str = "mcp_tasks_created_total";
/// Counter: tasks that reached a terminal status through this replica, by `status`
/// (`completed`, `failed`, `cancelled`).
pub(crate) const TASKS_ENDED_TOTAL: &str = "mcp_tasks_ended_total";
/// Gauge: task handlers running on this replica.
pub(crate) const TASKS_RUNNING: &str = "mcp_tasks_running";
/// Counter: tasks this replica failed because the lease of their replica lapsed.
pub(crate) const TASK_LEASE_EXPIRIES_TOTAL: &str = "mcp_task_lease_expiries_total";
/// Counter: task-capable calls refused, by `reason` (`max_running`, `store`).
pub(crate) const TASKS_REJECTED_TOTAL: &str = "mcp_tasks_rejected_total";
/// Counter: tool calls that carried an idempotency key, by `outcome` (`run`: the handler
/// ran; `replayed`: answered from the store; `conflict`: the key was used with other
/// arguments; `in_flight`: the first call still ran after the wait; `unavailable`: the
/// store could not be reached).
pub(crate) const IDEMPOTENT_CALLS_TOTAL: &str = "mcp_idempotent_calls_total";

/// Counter: single-use `requestState` claims that failed because the replay store could not
/// answer (the request was refused, fail closed).
pub(crate) const REPLAY_STORE_ERRORS_TOTAL: &str = "mcp_replay_store_errors_total";
/// Counter: change events this replica could not publish to the bus, by `kind`.
pub(crate) const BUS_PUBLISH_ERRORS_TOTAL: &str = "mcp_bus_publish_errors_total";
/// Gauge: 1 from the shutdown signal until the process ends (the replica is draining), else 0.
pub(crate) const DRAINING: &str = "mcp_draining";

/// Counter: requests or connections refused by a connection or load limit, by `reason`
/// (see [`Refusal`]).
pub(crate) const HTTP_REFUSALS_TOTAL: &str = "mcp_http_refusals_total";
/// Counter: rate-limit checks answered by this replica's own limiter because the shared
/// rate store could not be reached.
pub(crate) const RATE_LIMIT_FALLBACKS_TOTAL: &str = "mcp_rate_limit_fallbacks_total";
/// Counter: legacy sessions' uses recorded in the session store (sliding expiry), at most
/// about one per session per half idle limit.
pub(crate) const LEGACY_SESSION_REFRESHES_TOTAL: &str = "mcp_legacy_session_refreshes_total";
/// Counter: requests refused (404) because their legacy session expired, by `reason`: `idle`
/// (unused for longer than the idle limit) or `hard` (older than `session_ttl`).
pub(crate) const LEGACY_SESSIONS_EXPIRED_TOTAL: &str = "mcp_legacy_sessions_expired_total";
/// Counter: shared-store calls that failed for want of the store, by `store` (`sessions`,
/// `tasks`, `replay`, `idempotency`, `rate`) and `cause`: `breaker_open` (refused at once,
/// the store being known down), `timeout` or `error` (the connection is lost or cannot be
/// made).
pub(crate) const STORE_UNAVAILABLE_TOTAL: &str = "mcp_store_unavailable_total";
/// Gauge: 1 while a shared store's circuit breaker is open (its calls refused at once), by
/// `store`.
pub(crate) const STORE_CIRCUIT_OPEN: &str = "mcp_store_circuit_open";
/// Gauge: connections the runner holds open.
pub(crate) const CONNECTIONS_OPEN: &str = "mcp_connections_open";
/// Counter: connections the runner closed at the idle timeout.
pub(crate) const CONNECTIONS_IDLE_CLOSED_TOTAL: &str = "mcp_connections_idle_closed_total";

/// Every metric name above.
pub const ALL: &[&str] = &[
    REQUESTS_TOTAL,
    REQUEST_DURATION_SECONDS,
    REQUESTS_IN_FLIGHT,
    LISTEN_STREAMS_OPEN,
    NOTIFICATIONS_PUBLISHED_TOTAL,
    NOTIFICATIONS_DELIVERED_TOTAL,
    BUS_LAGGED_EVENTS_TOTAL,
    BUS_RECONNECTS_TOTAL,
    BUS_CONNECTED,
    BUS_PUBLISH_ERRORS_TOTAL,
    AUTH_FAILURES_TOTAL,
    REQUEST_STATE_REJECTIONS_TOTAL,
    REPLAY_STORE_ERRORS_TOTAL,
    HTTP_REFUSALS_TOTAL,
    RATE_LIMIT_FALLBACKS_TOTAL,
    CONNECTIONS_OPEN,
    CONNECTIONS_IDLE_CLOSED_TOTAL,
    TASKS_CREATED_TOTAL,
    TASKS_ENDED_TOTAL,
    TASKS_RUNNING,
    TASK_LEASE_EXPIRIES_TOTAL,
    TASKS_REJECTED_TOTAL,
    DRAINING,
    IDEMPOTENT_CALLS_TOTAL,
    STORE_UNAVAILABLE_TOTAL,
    STORE_CIRCUIT_OPEN,
    LEGACY_SESSION_REFRESHES_TOTAL,
    LEGACY_SESSIONS_EXPIRED_TOTAL,
];

/// Label: the MCP method.
pub(crate) const LABEL_METHOD: &str = "method";
/// Label: the tool or prompt name.
pub(crate) const LABEL_NAME: &str = "name";
/// Label: how a request ended.
pub(crate) const LABEL_OUTCOME: &str = "outcome";
/// Label: the notification kind (its method, e.g. `notifications/tools/list_changed`).
pub(crate) const LABEL_KIND: &str = "kind";
/// Label: why something was refused.
pub(crate) const LABEL_REASON: &str = "reason";
/// Label: a task's terminal status.
pub(crate) const LABEL_STATUS: &str = "status";
#[cfg(feature = "redis")]
/// Label: the shared store (`sessions`, `tasks`, `replay`, `idempotency`, `rate`).
pub(crate) const LABEL_STORE: &str = "store";
#[cfg(feature = "redis")]
/// Label: why a shared-store call failed.
pub(crate) const LABEL_CAUSE: &str = "cause";
#[cfg(any(feature = "redis", feature = "nats"))]
/// Label: the bus backend (`memory`, `redis`).
pub(crate) const LABEL_BACKEND: &str = "backend";

#[cfg(any(feature = "prometheus", feature = "otel"))]
/// Bucket upper bounds of `mcp_server_operation_duration_seconds`, in seconds (the OpenTelemetry
/// recommendation for `mcp.server.operation.duration`).
pub(crate) const DURATION_BUCKETS: &[f64] = &[
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// How a request ended, as the bounded `outcome` label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub(crate) enum RequestOutcome {
    /// A result was sent.
    Ok,
    /// A notification was accepted (HTTP 202).
    Accepted,
    /// The client went away before the final response.
    Cancelled,
    /// A JSON-RPC error with this code was sent.
    Error(i32),
    /// The HTTP layer refused the request with this status before JSON-RPC.
    Rejected(u16),
}

/// Every value of the `outcome` label, in the order of [`RequestOutcome::label_index`].
const OUTCOME_LABELS: [&str; OUTCOME_COUNT] = [
    "ok",
    "accepted",
    "cancelled",
    "parse_error",
    "invalid_request",
    "method_not_found",
    "invalid_params",
    "internal_error",
    "header_mismatch",
    "missing_capability",
    "unsupported_version",
    "other_error",
    "bad_request",
    "forbidden",
    "method_not_allowed",
    "not_acceptable",
    "payload_too_large",
    "unsupported_media_type",
    "http_error",
    "request_timeout",
];

/// How many values the `outcome` label has.
const OUTCOME_COUNT: usize = 20;

impl RequestOutcome {
    /// The label value.
    pub(crate) fn as_str(self) -> &'static str {
        OUTCOME_LABELS[self.label_index()]
    }

    /// The position of the label value in [`OUTCOME_LABELS`].
    fn label_index(self) -> usize {
        match self {
            RequestOutcome::Ok => 0,
            RequestOutcome::Accepted => 1,
            RequestOutcome::Cancelled => 2,
            RequestOutcome::Error(code) => match ErrorCode::from_code(code) {
                Some(ErrorCode::ParseError) => 3,
                Some(ErrorCode::InvalidRequest) => 4,
                Some(ErrorCode::MethodNotFound) => 5,
                Some(ErrorCode::InvalidParams) => 6,
                Some(ErrorCode::InternalError) => 7,
                Some(ErrorCode::HeaderMismatch) => 8,
                Some(ErrorCode::MissingRequiredClientCapability) => 9,
                Some(ErrorCode::UnsupportedProtocolVersion) => 10,
                _ => 11,
            },
            RequestOutcome::Rejected(status) => match status {
                400 => 12,
                403 => 13,
                405 => 14,
                406 => 15,
                413 => 16,
                415 => 17,
                408 => 19,
                _ => 18,
            },
        }
    }
}

/// The request metrics of one `method` and `name` label pair: the in-flight gauge, and per
/// outcome the counter and duration histogram, each looked up in the recorder once (on
/// first use) and kept, so recording a request takes no label hashing or registry lookup.
///
/// The handles belong to the recorder installed when they were first used: install the
/// recorder before serving requests.
pub(crate) struct RequestSeries {
    method: &'static str,
    name: metrics::SharedString,
    by_outcome: [OnceLock<(Counter, Histogram)>; OUTCOME_COUNT],
    in_flight: OnceLock<Gauge>,
}

impl std::fmt::Debug for RequestSeries {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestSeries")
            .field("method", &self.method)
            .field("name", &&*self.name)
            .finish_non_exhaustive()
    }
}

impl RequestSeries {
    /// The series of requests labelled `method` and `name` (`name` from a bounded set).
    pub(crate) fn new(method: &'static str, name: metrics::SharedString) -> Self {
        RequestSeries {
            method,
            name,
            by_outcome: std::array::from_fn(|_| OnceLock::new()),
            in_flight: OnceLock::new(),
        }
    }

    fn in_flight(&self) -> &Gauge {
        self.in_flight.get_or_init(|| gauge!(REQUESTS_IN_FLIGHT))
    }

    /// A request was received: one more in flight. Pair with [`RequestSeries::finished`].
    pub(crate) fn started(&self) {
        self.in_flight().increment(1.0);
    }

    /// A request of this series ended: counts it, records its duration, and takes it out
    /// of the in-flight gauge, through the kept handles.
    pub(crate) fn finished(&self, outcome: RequestOutcome, elapsed: Duration) {
        self.in_flight().decrement(1.0);
        let (requests, duration) = self.by_outcome[outcome.label_index()].get_or_init(|| {
            let labels = [
                (LABEL_METHOD, metrics::SharedString::const_str(self.method)),
                (LABEL_NAME, self.name.clone()),
                (
                    LABEL_OUTCOME,
                    metrics::SharedString::const_str(outcome.as_str()),
                ),
            ];
            (
                counter!(REQUESTS_TOTAL, &labels),
                histogram!(REQUEST_DURATION_SECONDS, &labels),
            )
        });
        requests.increment(1);
        duration.record(elapsed.as_secs_f64());
    }
}

/// Registers the description and unit of every metric with the installed recorder (call
/// once, after installing it).
#[cfg(any(feature = "prometheus", feature = "otel"))]
pub(crate) fn describe() {
    describe_counter!(
        REQUESTS_TOTAL,
        "MCP requests handled, by method, name and outcome"
    );
    describe_histogram!(
        REQUEST_DURATION_SECONDS,
        Unit::Seconds,
        "Time from receiving an MCP request to producing its final response"
    );
    describe_gauge!(
        REQUESTS_IN_FLIGHT,
        "MCP requests whose final response is not produced yet"
    );
    describe_gauge!(LISTEN_STREAMS_OPEN, "Open subscriptions/listen streams");
    describe_counter!(
        NOTIFICATIONS_PUBLISHED_TOTAL,
        "Change events published to the bus, by kind"
    );
    describe_counter!(
        NOTIFICATIONS_DELIVERED_TOTAL,
        "Notifications written to listen streams, by kind"
    );
    describe_counter!(
        BUS_LAGGED_EVENTS_TOTAL,
        "Bus events missed by listen streams that fell behind"
    );
    describe_counter!(BUS_RECONNECTS_TOTAL, "Reconnections of the bus backend");
    describe_gauge!(
        BUS_CONNECTED,
        "1 while the bus backend is connected, 0 otherwise"
    );
    describe_counter!(
        AUTH_FAILURES_TOTAL,
        "Requests refused by authentication or authorization, by reason"
    );
    describe_counter!(
        REQUEST_STATE_REJECTIONS_TOTAL,
        "requestState values refused when unsealing, by reason"
    );
    describe_counter!(
        HTTP_REFUSALS_TOTAL,
        "Requests or connections refused by a connection or load limit, by reason"
    );
    describe_counter!(
        RATE_LIMIT_FALLBACKS_TOTAL,
        "Rate-limit checks answered by the replica's own limiter because the shared store was unreachable"
    );
    describe_gauge!(CONNECTIONS_OPEN, "Connections the runner holds open");
    describe_counter!(
        CONNECTIONS_IDLE_CLOSED_TOTAL,
        "Connections closed at the idle timeout"
    );
    describe_counter!(TASKS_CREATED_TOTAL, "Tasks created on this replica");
    describe_counter!(
        TASKS_ENDED_TOTAL,
        "Tasks that reached a terminal status through this replica, by status"
    );
    describe_gauge!(TASKS_RUNNING, "Task handlers running on this replica");
    describe_counter!(
        TASK_LEASE_EXPIRIES_TOTAL,
        "Tasks failed because the lease of the replica running them lapsed"
    );
    describe_counter!(
        TASKS_REJECTED_TOTAL,
        "Task-capable tool calls refused, by reason"
    );
    describe_counter!(
        REPLAY_STORE_ERRORS_TOTAL,
        "Single-use requestState claims refused because the replay store could not answer"
    );
    describe_counter!(
        BUS_PUBLISH_ERRORS_TOTAL,
        "Change events that could not be published to the bus, by kind"
    );
    describe_counter!(
        IDEMPOTENT_CALLS_TOTAL,
        "Tool calls that carried an idempotency key, by outcome"
    );
    describe_counter!(
        LEGACY_SESSION_REFRESHES_TOTAL,
        "Legacy sessions' uses recorded in the session store (sliding expiry)"
    );
    describe_counter!(
        LEGACY_SESSIONS_EXPIRED_TOTAL,
        "Requests refused because their legacy session expired, by reason (idle, hard)"
    );
    describe_counter!(
        STORE_UNAVAILABLE_TOTAL,
        "Shared-store calls that failed for want of the store, by store and cause (breaker_open, timeout, error)"
    );
    describe_gauge!(
        STORE_CIRCUIT_OPEN,
        "1 while a shared store's circuit breaker is open (its calls refused at once), by store"
    );
    describe_gauge!(
        DRAINING,
        "1 while this replica drains after a shutdown signal"
    );
    // The unlabelled series that rules and dashboards read exist from the start, at zero, so
    // that `rate()` and alerts see them before the first event (deploy/prometheus/rules.yml).
    for name in [
        BUS_LAGGED_EVENTS_TOTAL,
        REPLAY_STORE_ERRORS_TOTAL,
        TASKS_CREATED_TOTAL,
        TASK_LEASE_EXPIRIES_TOTAL,
        CONNECTIONS_IDLE_CLOSED_TOTAL,
    ] {
        counter!(name).increment(0);
    }
    for name in [
        DRAINING,
        LISTEN_STREAMS_OPEN,
        TASKS_RUNNING,
        CONNECTIONS_OPEN,
    ] {
        gauge!(name).increment(0.0);
    }
}

/// A `subscriptions/listen` stream opened. Pair with [`record_listen_stream_closed`] (a
/// drop guard is the reliable way).
pub(crate) fn record_listen_stream_opened() {
    gauge!(LISTEN_STREAMS_OPEN).increment(1.0);
}

/// A `subscriptions/listen` stream closed, for whatever reason.
pub(crate) fn record_listen_stream_closed() {
    gauge!(LISTEN_STREAMS_OPEN).decrement(1.0);
}

/// This replica published one change event to the bus; `kind` is the notification method.
pub(crate) fn record_notification_published(kind: &'static str) {
    counter!(NOTIFICATIONS_PUBLISHED_TOTAL, LABEL_KIND => kind).increment(1);
}

/// One notification was written to one listen stream; `kind` is the notification method.
pub(crate) fn record_notification_delivered(kind: &'static str) {
    record_notifications_delivered(kind, 1);
}

/// `n` listen streams were each sent one notification of method `kind` (one event's
/// fan-out).
pub(crate) fn record_notifications_delivered(kind: &'static str, n: u64) {
    if n > 0 {
        counter!(NOTIFICATIONS_DELIVERED_TOTAL, LABEL_KIND => kind).increment(n);
    }
}

/// A listen stream fell behind the bus and missed `missed` events.
pub(crate) fn record_bus_lagged(missed: u64) {
    counter!(BUS_LAGGED_EVENTS_TOTAL).increment(missed);
}

#[cfg(any(feature = "redis", feature = "nats"))]
/// The bus backend (`memory`, `redis`) reconnected.
pub(crate) fn record_bus_reconnect(backend: &'static str) {
    counter!(BUS_RECONNECTS_TOTAL, LABEL_BACKEND => backend).increment(1);
}

#[cfg(any(feature = "redis", feature = "nats"))]
/// The bus backend's connection state changed.
pub(crate) fn record_bus_connected(backend: &'static str, connected: bool) {
    gauge!(BUS_CONNECTED, LABEL_BACKEND => backend).set(if connected { 1.0 } else { 0.0 });
}

#[cfg(feature = "auth")]
/// The auth middleware refused a request. `reason` is `missing_token`, `invalid_request`,
/// `invalid_token` or `insufficient_scope`.
pub(crate) fn record_auth_failure(reason: &'static str) {
    counter!(AUTH_FAILURES_TOTAL, LABEL_REASON => reason).increment(1);
}

/// A sealed `requestState` was refused. `reason` is a fixed string such as `malformed`,
/// `unknown_key`, `bad_seal`, `expired`, `wrong_principal`, `wrong_request`.
pub(crate) fn record_request_state_rejected(reason: &'static str) {
    counter!(REQUEST_STATE_REJECTIONS_TOTAL, LABEL_REASON => reason).increment(1);
}

/// A single-use `requestState` claim failed because the replay store could not answer.
pub(crate) fn record_replay_store_error() {
    counter!(REPLAY_STORE_ERRORS_TOTAL).increment(1);
}

/// Publishing a change event of method `kind` to the bus failed.
pub(crate) fn record_bus_publish_error(kind: &'static str) {
    counter!(BUS_PUBLISH_ERRORS_TOTAL, LABEL_KIND => kind).increment(1);
}

/// A legacy session's use was recorded in the session store.
pub(crate) fn record_legacy_session_refresh() {
    counter!(LEGACY_SESSION_REFRESHES_TOTAL).increment(1);
}

/// A request was refused because its legacy session expired (`idle` or `hard`).
pub(crate) fn record_legacy_session_expired(reason: &'static str) {
    counter!(LEGACY_SESSIONS_EXPIRED_TOTAL, LABEL_REASON => reason).increment(1);
}

#[cfg(feature = "redis")]
/// A call to the shared store `store` failed for want of it; `cause` is `breaker_open`,
/// `timeout` or `error`.
pub(crate) fn record_store_unavailable(store: &'static str, cause: &'static str) {
    counter!(STORE_UNAVAILABLE_TOTAL, LABEL_STORE => store, LABEL_CAUSE => cause).increment(1);
}

#[cfg(feature = "redis")]
/// The circuit breaker of the shared store `store` opened (`true`) or closed.
pub(crate) fn record_store_circuit(store: &'static str, open: bool) {
    gauge!(STORE_CIRCUIT_OPEN, LABEL_STORE => store).set(if open { 1.0 } else { 0.0 });
}

/// The replica started draining (`true`).
pub(crate) fn record_draining(draining: bool) {
    gauge!(DRAINING).set(if draining { 1.0 } else { 0.0 });
}

/// Why a connection or load limit refused something: the `reason` of
/// `mcp_http_refusals_total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub(crate) enum Refusal {
    /// A request head over the header limit (HTTP/1.1: 431, connection closed).
    HeaderTooLarge,
    /// An HTTP/1.1 request head that did not arrive within the header timeout (closed).
    HeaderTimeout,
    /// A request body that did not arrive within the body timeout (408).
    BodyTimeout,
    /// A connection beyond the connection limit (503).
    TooManyConnections,
    /// A request beyond the in-flight limit (503).
    Overloaded,
    /// A request over its caller's rate limit (429).
    RateLimited,
}

impl Refusal {
    /// The label value.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Refusal::HeaderTooLarge => "header_too_large",
            Refusal::HeaderTimeout => "header_timeout",
            Refusal::BodyTimeout => "body_timeout",
            Refusal::TooManyConnections => "too_many_connections",
            Refusal::Overloaded => "overloaded",
            Refusal::RateLimited => "rate_limited",
        }
    }
}

/// A connection or load limit refused something.
pub(crate) fn record_refusal(reason: Refusal) {
    counter!(HTTP_REFUSALS_TOTAL, LABEL_REASON => reason.as_str()).increment(1);
}

/// A rate-limit check fell back to the in-process limiter.
pub(crate) fn record_rate_limit_fallback() {
    counter!(RATE_LIMIT_FALLBACKS_TOTAL).increment(1);
}

/// The runner closed a connection at the idle timeout.
pub(crate) fn record_idle_connection_closed() {
    counter!(CONNECTIONS_IDLE_CLOSED_TOTAL).increment(1);
}

/// One open connection in `mcp_connections_open`, for as long as it lives.
#[derive(Debug)]
pub(crate) struct OpenConnection(());

impl OpenConnection {
    pub(crate) fn new() -> Self {
        gauge!(CONNECTIONS_OPEN).increment(1.0);
        OpenConnection(())
    }
}

impl Drop for OpenConnection {
    fn drop(&mut self) {
        gauge!(CONNECTIONS_OPEN).decrement(1.0);
    }
}

/// A task was created on this replica.
pub(crate) fn record_task_created() {
    counter!(TASKS_CREATED_TOTAL).increment(1);
}

/// A task reached the terminal `status` through this replica.
pub(crate) fn record_task_ended(status: &'static str) {
    counter!(TASKS_ENDED_TOTAL, LABEL_STATUS => status).increment(1);
}

/// A task handler started (`true`) or stopped (`false`) running on this replica.
pub(crate) fn record_task_running(started: bool) {
    let g = gauge!(TASKS_RUNNING);
    if started {
        g.increment(1.0);
    } else {
        g.decrement(1.0);
    }
}

/// `n` tasks were failed because their replica's lease lapsed.
pub(crate) fn record_task_lease_expiries(n: u64) {
    counter!(TASK_LEASE_EXPIRIES_TOTAL).increment(n);
}

/// A task-capable call was refused for `reason`.
pub(crate) fn record_task_rejected(reason: &'static str) {
    counter!(TASKS_REJECTED_TOTAL, LABEL_REASON => reason).increment(1);
}

/// A call that carried an idempotency key ended in `outcome` (see
/// [`IDEMPOTENT_CALLS_TOTAL`]).
pub(crate) fn record_idempotent_call(outcome: &'static str) {
    counter!(IDEMPOTENT_CALLS_TOTAL, LABEL_OUTCOME => outcome).increment(1);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcome_labels_are_bounded_names() {
        assert_eq!(RequestOutcome::Error(-32602).as_str(), "invalid_params");
        assert_eq!(RequestOutcome::Error(-32020).as_str(), "header_mismatch");
        assert_eq!(RequestOutcome::Error(12345).as_str(), "other_error");
        assert_eq!(RequestOutcome::Rejected(413).as_str(), "payload_too_large");
        assert_eq!(RequestOutcome::Rejected(418).as_str(), "http_error");
        assert_eq!(RequestOutcome::Ok.as_str(), "ok");
        assert_eq!(
            RequestOutcome::Rejected(415).as_str(),
            "unsupported_media_type"
        );
        assert_eq!(RequestOutcome::Error(-32021).as_str(), "missing_capability");
        let mut all: Vec<&str> = OUTCOME_LABELS.to_vec();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), OUTCOME_COUNT, "every label once");
    }

    #[test]
    fn duration_buckets_ascend() {
        assert!(DURATION_BUCKETS.windows(2).all(|w| w[0] < w[1]));
    }
}
