//! The Prometheus exporter: a global [`metrics`] recorder and the `/metrics` route.

use std::sync::OnceLock;
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use http::header;
use metrics_exporter_prometheus::{
    Matcher, PrometheusBuilder, PrometheusHandle, PrometheusRecorder,
};

use super::install::install_global;
use super::metrics::{DURATION_BUCKETS, REQUEST_DURATION_SECONDS};
use crate::Error;

/// The process-wide Prometheus recorder. Cheap to clone.
///
/// ```no_run
/// use stateless_mcp::observability::PrometheusMetrics;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let metrics = PrometheusMetrics::install()?;
/// // Serve it yourself, or hand it to `Runner::metrics`.
/// let routes: axum::Router = metrics.router("/metrics");
/// # drop(routes);
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct PrometheusMetrics {
    handle: PrometheusHandle,
}

static INSTALLED: OnceLock<PrometheusMetrics> = OnceLock::new();

/// How often the recorder installed by [`PrometheusMetrics::install`] folds the histogram
/// samples recorded since into their buckets. Until then each sample is kept (8 bytes plus
/// its share of a block), so this bounds the recorder's memory under load without a scrape:
/// at 85,000 requests/s about one second of samples, under 1 MB.
const UPKEEP_INTERVAL: Duration = Duration::from_secs(1);

impl PrometheusMetrics {
    /// Installs the Prometheus recorder as the global [`metrics`] recorder (once per
    /// process; later calls return the same recorder) and describes every metric of
    /// [`super::metrics`]. Fails when another recorder is already installed.
    ///
    /// It also starts the recorder's upkeep on a thread of its own (`metrics-upkeep`, once a
    /// second, for the life of the process), so histogram samples are folded into their
    /// buckets whether or not anything scrapes, and memory stays bounded under any load.
    pub fn install() -> Result<Self, Error> {
        Self::install_fanned(install_global)
    }

    /// [`install`](Self::install), with each sample also recorded for `otlp` (feature
    /// `otel`): `/metrics` and the OTLP export then show the same instruments.
    #[cfg(feature = "otel")]
    pub fn install_with(otlp: &super::OtlpMetrics) -> Result<Self, Error> {
        let otlp = otlp.recorder();
        Self::install_fanned(move |prometheus| {
            let both = metrics_util::layers::FanoutBuilder::default()
                .add_recorder(prometheus)
                .add_recorder(otlp)
                .build();
            install_global(both)
        })
    }

    /// Builds the Prometheus recorder and has `install` make it (alone or beside another)
    /// the global one, once per process.
    fn install_fanned(
        install: impl FnOnce(PrometheusRecorder) -> Result<(), Error>,
    ) -> Result<Self, Error> {
        if let Some(m) = INSTALLED.get() {
            return Ok(m.clone());
        }
        let recorder = PrometheusBuilder::new()
            .set_buckets_for_metric(
                Matcher::Full(REQUEST_DURATION_SECONDS.to_owned()),
                DURATION_BUCKETS,
            )
            .map_err(|e| Error::internal(format!("cannot configure metrics: {e}")))?
            .build_recorder();
        let handle = recorder.handle();
        install(recorder)?;
        let upkeep = handle.clone();
        let metrics = INSTALLED.get_or_init(|| PrometheusMetrics { handle });
        let started = std::thread::Builder::new()
            .name("metrics-upkeep".into())
            .spawn(move || {
                loop {
                    std::thread::sleep(UPKEEP_INTERVAL);
                    upkeep.run_upkeep();
                }
            });
        if let Err(e) = started {
            tracing::warn!(error = %e, "no metrics upkeep thread: histogram samples are kept until scraped");
        }
        Ok(metrics.clone())
    }

    /// The current metrics in the Prometheus text format.
    pub fn render(&self) -> String {
        self.handle.render()
    }

    /// Runs the recorder's upkeep every `interval` on the current Tokio runtime, in addition
    /// to the upkeep thread [`PrometheusMetrics::install`] starts (not needed; for an
    /// interval shorter than a second).
    pub fn spawn_upkeep(&self, interval: Duration) -> tokio::task::JoinHandle<()> {
        let handle = self.handle.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(interval);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                handle.run_upkeep();
            }
        })
    }

    /// A router serving the metrics at `path` (usually [`super::METRICS_PATH`]).
    pub fn router<S>(&self, path: &str) -> Router<S>
    where
        S: Clone + Send + Sync + 'static,
    {
        Router::new().route(path, get(scrape).with_state(self.clone()))
    }
}

async fn scrape(State(metrics): State<PrometheusMetrics>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        metrics.render(),
    )
        .into_response()
}
