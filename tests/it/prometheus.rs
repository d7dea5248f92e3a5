//! The shipped Prometheus rules and Grafana dashboard against a real Prometheus: `promtool`
//! checks the rules file, then a `prometheus` process (Debian package) scrapes three replicas
//! behind nginx under traffic, evaluates every recording and alert rule, and answers every
//! rule expression and dashboard query without error; the series traffic fills are not empty.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::brokers::{free_port, program, temp_dir};
use crate::support::cluster::{Cluster, ClusterOptions};
use crate::support::listen::Listener;
use crate::support::process::root;
use crate::support::{Client, eventually};

/// The rule expressions and recorded series of `deploy/prometheus/rules.yml`, and the queries
/// of `deploy/grafana/stateless-mcp.json`.
struct Shipped {
    /// `(name, expr)` of every rule (recording rule's `record`, alert's `alert`).
    rules: Vec<(String, String)>,
    /// The names of the recording rules.
    records: Vec<String>,
    /// `(panel title, expr)` of every dashboard target.
    queries: Vec<(String, String)>,
}

fn rules_file() -> PathBuf {
    root().join("deploy/prometheus/rules.yml")
}

fn shipped() -> Shipped {
    let text = std::fs::read_to_string(rules_file()).expect("deploy/prometheus/rules.yml");
    let rules: Value = serde_norway::from_str(&text).expect("the rules file is YAML");
    let mut shipped = Shipped {
        rules: Vec::new(),
        records: Vec::new(),
        queries: Vec::new(),
    };
    for group in rules["groups"].as_array().expect("groups") {
        for rule in group["rules"].as_array().expect("rules") {
            let expr = rule["expr"].as_str().expect("expr").trim().to_owned();
            if let Some(record) = rule["record"].as_str() {
                shipped.records.push(record.to_owned());
                shipped.rules.push((record.to_owned(), expr));
            } else {
                let alert = rule["alert"].as_str().expect("a record or an alert");
                shipped.rules.push((alert.to_owned(), expr));
            }
        }
    }
    let text = std::fs::read_to_string(root().join("deploy/grafana/stateless-mcp.json"))
        .expect("deploy/grafana/stateless-mcp.json");
    let dashboard: Value = serde_json::from_str(&text).expect("the dashboard is JSON");
    for panel in dashboard["panels"].as_array().expect("panels") {
        let title = panel["title"].as_str().expect("title");
        for target in panel["targets"].as_array().expect("targets") {
            // Grafana's own interval variable; the test's traffic spans under a minute.
            let expr = target["expr"]
                .as_str()
                .expect("expr")
                .replace("$__rate_interval", "1m");
            shipped.queries.push((title.to_owned(), expr));
        }
    }
    assert!(shipped.rules.len() >= 10 && shipped.queries.len() >= 10);
    shipped
}

/// Queries that may rightly be empty after the test's traffic: it has no authentication,
/// no failing bus or store, and no task; anything else must return series.
const MAY_BE_EMPTY: &[&str] = &[
    "mcp_auth_failures_total",
    "mcp:auth_failures:rate5m",
    "mcp_bus_publish_errors_total",
    "mcp:bus_publish_errors:rate5m",
    "mcp_request_state_rejections_total",
    "mcp_tasks_ended_total",
    "mcp_tasks_rejected_total",
];

fn may_be_empty(expr: &str) -> bool {
    MAY_BE_EMPTY.iter().any(|name| expr.contains(name))
}

/// What is wrong with a query's `result`, if anything: an error, or no series where traffic
/// should have made some.
fn judged(what: String, result: Result<Vec<Value>, String>, expr: &str) -> Option<String> {
    match result {
        Err(e) => Some(format!("{what}: query error {e}\n    {expr}")),
        Ok(series) if series.is_empty() && !may_be_empty(expr) => {
            Some(format!("{what}: no series after traffic\n    {expr}"))
        }
        Ok(_) => None,
    }
}

/// A `prometheus` server on an ephemeral loopback port, killed on drop.
struct Prometheus {
    child: Child,
    url: String,
    _dir: PathBuf,
}

impl Prometheus {
    /// Scrapes `targets` every second and evaluates `rules` every second.
    fn start(targets: &[u16], rules: &Path) -> Prometheus {
        let dir = temp_dir("prometheus");
        let targets: Vec<String> = targets.iter().map(|p| format!("127.0.0.1:{p}")).collect();
        let config = json!({
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
            "rule_files": [rules.to_str().unwrap()],
            "scrape_configs": [{
                "job_name": "stateless-mcp",
                "metrics_path": "/metrics",
                "static_configs": [{"targets": targets}],
            }],
        });
        // JSON is YAML: Prometheus reads it as its config file.
        std::fs::write(dir.join("prometheus.yml"), config.to_string()).unwrap();
        let port = free_port();
        let child = Command::new(program("prometheus", "prometheus"))
            .arg(format!(
                "--config.file={}",
                dir.join("prometheus.yml").display()
            ))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .arg("--log.level=warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("prometheus starts");
        Prometheus {
            child,
            url: format!("http://127.0.0.1:{port}"),
            _dir: dir,
        }
    }

    /// `GET /api/v1/…`, the `data` of a `success` answer, or the error Prometheus gave.
    async fn api(&self, path: &str, query: &[(&str, &str)]) -> Result<Value, String> {
        let url = reqwest::Url::parse_with_params(&format!("{}/api/v1/{path}", self.url), query)
            .expect("a query URL");
        let resp = crate::support::http()
            .get(url)
            .send()
            .await
            .map_err(|e| e.to_string())?;
        let body: Value = resp.json().await.map_err(|e| e.to_string())?;
        if body["status"] == "success" {
            Ok(body["data"].clone())
        } else {
            Err(format!("{}: {}", body["errorType"], body["error"]))
        }
    }

    /// The series an instant query returns.
    async fn query(&self, expr: &str) -> Result<Vec<Value>, String> {
        let data = self.api("query", &[("query", expr)]).await?;
        Ok(data["result"].as_array().cloned().unwrap_or_default())
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn promtool_checks_the_shipped_rules() {
    let out = Command::new(program("promtool", "prometheus"))
        .args(["check", "rules"])
        .arg(rules_file())
        .output()
        .expect("promtool runs");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "promtool check rules failed:\n{text}");
    assert!(text.contains("SUCCESS"), "{text}");
}

/// Requests of every kind the rules and dashboard read: results, tool errors, JSON-RPC
/// errors, a list change over the bus, and a refused oversized request head.
async fn traffic(cluster: &Cluster, rounds: u64) {
    let lb = Client::new(&cluster.nginx.url);
    for i in 0..rounds {
        let call = lb
            .request(
                "tools/call",
                json!(i),
                json!({"name": "test_simple_text", "arguments": {}}),
            )
            .await;
        assert_eq!(call.status, 200, "{}", call.body);
        let failing = lb
            .request(
                "tools/call",
                json!(format!("e{i}")),
                json!({"name": "test_error_handling", "arguments": {}}),
            )
            .await;
        assert_eq!(failing.status, 200, "{}", failing.body);
        lb.request("tools/list", json!(format!("l{i}")), json!({}))
            .await;
        let unknown = lb
            .request("no/such_method", json!(format!("u{i}")), json!({}))
            .await;
        assert_eq!(unknown.error_code(), -32601, "{}", unknown.body);
        if i % 10 == 0 {
            lb.trigger_tool_change(json!(format!("t{i}"))).await;
        }
    }
    // A request head over the replica's header limit: refused (431) and counted, on every
    // replica (straight to it: nginx would refuse it itself).
    for r in &cluster.replicas {
        let _ = crate::support::http()
            .post(format!("{}/mcp", r.base))
            .header("x-padding", "a".repeat(64 * 1024))
            .body("{}")
            .send()
            .await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn rules_and_dashboard_queries_run_against_a_real_prometheus() {
    let shipped = shipped();
    let cluster = Cluster::start(ClusterOptions::default()).await;
    let ports: Vec<u16> = cluster.replicas.iter().map(|r| r.port).collect();
    let rules = rules_file();
    let prom = tokio::task::spawn_blocking(move || Prometheus::start(&ports, &rules))
        .await
        .unwrap();
    eventually(
        Duration::from_secs(30),
        "Prometheus scrapes all three replicas",
        || async {
            prom.query("sum(up{job=\"stateless-mcp\"})")
                .await
                .ok()
                .and_then(|r| r.first().map(|s| s["value"][1] == "3"))
                .unwrap_or(false)
        },
    )
    .await;

    // A listen stream on every replica, so that list changes are delivered (and counted).
    let mut listeners = Vec::new();
    for r in &cluster.replicas {
        let client = Client::new(&format!("{}/mcp", r.base));
        let mut l =
            Listener::open(&client, json!("listen"), json!({"toolsListChanged": true})).await;
        assert_eq!(l.status, 200);
        assert_eq!(
            l.next_kind().await,
            "notifications/subscriptions/acknowledged"
        );
        listeners.push(l);
    }
    // Traffic over a few scrapes, so that rate() has two samples of every counter.
    for _ in 0..4 {
        traffic(&cluster, 15).await;
        tokio::time::sleep(Duration::from_millis(1200)).await;
    }
    eventually(
        Duration::from_secs(30),
        "the recording rules have recorded",
        || async {
            prom.query("mcp:requests:rate5m")
                .await
                .is_ok_and(|r| r.len() >= 3)
        },
    )
    .await;

    // Every rule loaded and evaluates without error.
    let groups = prom.api("rules", &[]).await.expect("the rules API");
    let mut loaded = 0;
    for group in groups["groups"].as_array().expect("rule groups") {
        for rule in group["rules"].as_array().expect("rules") {
            loaded += 1;
            assert_eq!(
                rule["health"], "ok",
                "rule {} did not evaluate: {}",
                rule["name"], rule["lastError"]
            );
        }
    }
    assert_eq!(loaded, shipped.rules.len(), "every shipped rule is loaded");

    let mut failures = Vec::new();
    // Recorded series exist; every rule's expression runs (alert expressions are empty
    // unless they fire, so only their errors count).
    for record in &shipped.records {
        let result = prom.query(record).await;
        failures.extend(judged(format!("recorded series {record}"), result, record));
    }
    for (name, expr) in &shipped.rules {
        if let Err(e) = prom.query(expr).await {
            failures.push(format!("rule {name}: query error {e}\n    {expr}"));
        }
    }
    for (panel, expr) in &shipped.queries {
        let result = prom.query(expr).await;
        failures.extend(judged(format!("dashboard panel {panel:?}"), result, expr));
    }
    assert!(
        failures.is_empty(),
        "{} of the shipped queries failed:\n{}",
        failures.len(),
        failures.join("\n")
    );

    // The filled series carry what traffic put there.
    let refused = prom
        .query("sum(mcp:http_refusals:rate5m{reason=\"header_too_large\"})")
        .await
        .unwrap();
    assert!(!refused.is_empty(), "oversized heads are counted");
    let errors = prom
        .query("mcp:request_errors:ratio_rate5m{method=\"_other\"}")
        .await
        .unwrap();
    assert_eq!(
        errors.first().map(|s| s["value"][1].clone()),
        Some(json!("1")),
        "every unknown-method request is an error: {errors:?}"
    );
    let draining = prom.query("mcp:replicas_draining:count").await.unwrap();
    assert_eq!(draining[0]["value"][1], "0", "no replica drains");
    drop(listeners);
}

/// Every metric the rules and the dashboard read is one the replicas export.
#[test]
fn rules_and_dashboard_read_only_exported_metrics() {
    let shipped = shipped();
    let exported = stateless_mcp::observability::metrics::ALL;
    let exprs = shipped
        .rules
        .iter()
        .map(|(_, e)| e)
        .chain(shipped.queries.iter().map(|(_, e)| e));
    for expr in exprs {
        for word in expr.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':')) {
            if !word.starts_with("mcp_") {
                continue;
            }
            let base = ["_bucket", "_sum", "_count"]
                .iter()
                .find_map(|s| word.strip_suffix(s))
                .unwrap_or(word);
            assert!(
                exported.contains(&base) || exported.contains(&word),
                "{word} in {expr:?} is not a metric the replicas export"
            );
        }
    }
}
