//! The deployment files agree with the binary: every environment variable and flag they set
//! is one `Config::command()` accepts, ports and probe paths are the ones the server serves,
//! and the grace periods cover the drain. Parsed, so the files cannot silently drift.

use std::collections::BTreeSet;
use std::path::Path;

use clap::CommandFactory as _;
use serde::Deserialize as _;
use serde_json::Value;
use stateless_mcp::app::Config;
use stateless_mcp::observability::{HEALTHZ_PATH, METRICS_PATH, READYZ_PATH};

use crate::support::process::root;

/// The port the container listens on (Dockerfile `EXPOSE`, `MCP_LISTEN`).
const PORT: u64 = 8080;

fn accepted_envs() -> BTreeSet<String> {
    Config::command()
        .get_arguments()
        .filter_map(|a| a.get_env())
        .map(|e| e.to_string_lossy().into_owned())
        .collect()
}

fn accepted_flags() -> BTreeSet<String> {
    Config::command()
        .get_arguments()
        .filter_map(|a| a.get_long())
        .map(|l| format!("--{l}"))
        .collect()
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// Every YAML document of a file, as JSON values.
fn yaml_docs(rel: &str) -> Vec<Value> {
    let text = read(rel);
    serde_norway::Deserializer::from_str(&text)
        .map(|doc| Value::deserialize(doc).unwrap_or_else(|e| panic!("{rel}: {e}")))
        .filter(|v| !v.is_null())
        .collect()
}

fn manifests() -> Vec<Value> {
    let dir = root().join("deploy/kubernetes");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    files
        .iter()
        .flat_map(|p| {
            let rel = p.strip_prefix(root()).unwrap().to_str().unwrap().to_owned();
            yaml_docs(&rel)
        })
        .collect()
}

fn find<'a>(all: &'a [Value], kind: &str, name: &str) -> &'a Value {
    all.iter()
        .find(|m| m["kind"] == kind && m["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {kind} {name} in deploy/kubernetes"))
}

fn str_of(v: &Value) -> &str {
    v.as_str()
        .unwrap_or_else(|| panic!("expected a string, got {v}"))
}

/// The value of `key` from a ConfigMap's `data` or a Secret's `stringData`.
fn data<'a>(m: &'a Value, key: &str) -> &'a str {
    let field = if m["kind"] == "Secret" {
        "stringData"
    } else {
        "data"
    };
    str_of(&m[field][key])
}

#[test]
fn every_manifest_parses_and_names_its_kind() {
    for m in manifests() {
        assert!(m["apiVersion"].is_string(), "{m}");
        assert!(m["kind"].is_string(), "{m}");
        assert!(m["metadata"]["name"].is_string(), "{m}");
    }
}

#[test]
fn the_deployment_matches_the_binary() {
    let all = manifests();
    let envs = accepted_envs();
    let flags = accepted_flags();
    let deploy = find(&all, "Deployment", "stateless-mcp");
    assert_eq!(deploy["spec"]["replicas"], 3);
    let pod = &deploy["spec"]["template"];
    let labels = &pod["metadata"]["labels"];
    for (k, v) in deploy["spec"]["selector"]["matchLabels"]
        .as_object()
        .unwrap()
    {
        assert_eq!(&labels[k], v, "selector label {k}");
    }
    let containers = pod["spec"]["containers"].as_array().unwrap();
    assert_eq!(containers.len(), 1);
    let c = &containers[0];

    // Ports: one, named http, the container port.
    let ports = c["ports"].as_array().unwrap();
    assert_eq!(ports.len(), 1);
    assert_eq!(ports[0]["containerPort"], PORT);
    assert_eq!(ports[0]["name"], "http");

    // Env: names the binary reads, and the listen address on the container port.
    let mut set = Vec::new();
    for e in c["env"].as_array().into_iter().flatten() {
        let name = str_of(&e["name"]).to_owned();
        assert!(
            envs.contains(&name),
            "Deployment sets {name}, which the binary does not read"
        );
        if name == "MCP_LISTEN" {
            assert_eq!(str_of(&e["value"]), format!("0.0.0.0:{PORT}"));
        }
        set.push(name);
    }
    assert!(
        set.contains(&"MCP_LISTEN".to_owned()),
        "the container must listen on 0.0.0.0"
    );
    for arg in c["args"].as_array().into_iter().flatten() {
        let a = str_of(arg);
        if a.starts_with("--") {
            let flag = a.split('=').next().unwrap();
            assert!(
                flags.contains(flag),
                "Deployment passes {flag}, which the binary lacks"
            );
        }
    }

    // envFrom: the ConfigMap and Secret exist and hold only settings the binary reads.
    let mut from = Vec::new();
    for src in c["envFrom"].as_array().unwrap() {
        let (kind, name) = if let Some(n) = src["configMapRef"]["name"].as_str() {
            ("ConfigMap", n)
        } else {
            ("Secret", str_of(&src["secretRef"]["name"]))
        };
        let m = find(&all, kind, name);
        let field = if kind == "Secret" {
            "stringData"
        } else {
            "data"
        };
        for key in m[field].as_object().unwrap().keys() {
            assert!(
                envs.contains(key),
                "{kind} {name} sets {key}, which the binary does not read"
            );
        }
        from.push(m);
    }
    let secret = from
        .iter()
        .find(|m| m["kind"] == "Secret")
        .expect("a Secret");
    let keys = data(secret, "MCP_STATE_KEYS");
    assert!(
        keys.contains("REPLACE"),
        "the state keys must be an obvious placeholder"
    );
    for key in keys.split(',') {
        assert!(
            key.split_once(':').is_some_and(|(kid, _)| !kid.is_empty()),
            "KID:BASE64KEY"
        );
    }

    // Probes on the server's own health routes, on the named port.
    assert_eq!(c["readinessProbe"]["httpGet"]["path"], READYZ_PATH);
    assert_eq!(c["livenessProbe"]["httpGet"]["path"], HEALTHZ_PATH);
    for probe in ["readinessProbe", "livenessProbe"] {
        assert_eq!(c[probe]["httpGet"]["port"], "http", "{probe}");
    }
    assert_eq!(
        pod["metadata"]["annotations"]["prometheus.io/path"],
        METRICS_PATH
    );
    assert_eq!(
        pod["metadata"]["annotations"]["prometheus.io/port"],
        PORT.to_string()
    );

    // The grace period covers the drain delay plus the shutdown timeout.
    let config = from
        .iter()
        .find(|m| m["kind"] == "ConfigMap")
        .expect("a ConfigMap");
    let secs = |k: &str| data(config, k).parse::<u64>().unwrap();
    let grace = pod["spec"]["terminationGracePeriodSeconds"]
        .as_u64()
        .unwrap();
    let drain = secs("MCP_DRAIN_DELAY_SECS") + secs("MCP_SHUTDOWN_TIMEOUT_SECS");
    assert!(
        grace > drain,
        "terminationGracePeriodSeconds {grace} <= {drain}"
    );

    // Non-root, like the image.
    assert_eq!(pod["spec"]["securityContext"]["runAsNonRoot"], true);
}

/// A comment in a manifest that names a setting with its value, `MCP_NAME (value)`, agrees
/// with the value the manifests set (the ConfigMap or the Deployment's env), so a comment
/// cannot describe behaviour the settings do not give.
#[test]
fn manifest_comments_match_the_settings() {
    let all = manifests();
    let config = find(&all, "ConfigMap", "stateless-mcp");
    let deploy = find(&all, "Deployment", "stateless-mcp");
    let container = &deploy["spec"]["template"]["spec"]["containers"][0];
    let value_of = |name: &str| -> Option<String> {
        if let Some(v) = config["data"][name].as_str() {
            return Some(v.to_owned());
        }
        container["env"]
            .as_array()?
            .iter()
            .find(|e| e["name"] == name)
            .and_then(|e| e["value"].as_str())
            .map(str::to_owned)
    };
    let mention = regex::Regex::new(r"\b(MCP_[A-Z_]+) \(([^)]+)\)").unwrap();
    let envs = accepted_envs();
    let mut checked = 0;
    for entry in std::fs::read_dir(root().join("deploy/kubernetes")).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        for line in text.lines() {
            let Some((_, comment)) = line.split_once('#') else {
                continue;
            };
            for m in mention.captures_iter(comment) {
                let (name, said) = (&m[1], &m[2]);
                assert!(
                    envs.contains(name),
                    "{}: {name} is no setting",
                    path.display()
                );
                assert_eq!(
                    value_of(name).as_deref(),
                    Some(said),
                    "{}: a comment says {name} ({said})",
                    path.display()
                );
                checked += 1;
            }
        }
    }
    // deployment.yaml: the drain (5, 25) and the bus readiness (report).
    assert!(checked >= 3, "only {checked} settings named in comments");
}

#[test]
fn service_pdb_hpa_and_redis_fit_the_deployment() {
    let all = manifests();
    let deploy = find(&all, "Deployment", "stateless-mcp");
    let labels = &deploy["spec"]["template"]["metadata"]["labels"];
    let selects_pods = |selector: &Value| {
        let sel = selector.as_object().expect("a selector");
        !sel.is_empty() && sel.iter().all(|(k, v)| &labels[k] == v)
    };

    let svc = find(&all, "Service", "stateless-mcp");
    assert!(selects_pods(&svc["spec"]["selector"]));
    assert!(
        svc["spec"]
            .get("sessionAffinity")
            .is_none_or(|a| a == "None")
    );
    let port = &svc["spec"]["ports"][0];
    assert_eq!(port["targetPort"], "http");

    let pdb = find(&all, "PodDisruptionBudget", "stateless-mcp");
    assert!(selects_pods(&pdb["spec"]["selector"]["matchLabels"]));

    let hpa = find(&all, "HorizontalPodAutoscaler", "stateless-mcp");
    assert_eq!(hpa["spec"]["scaleTargetRef"]["kind"], "Deployment");
    assert_eq!(hpa["spec"]["scaleTargetRef"]["name"], "stateless-mcp");
    assert!(hpa["spec"]["minReplicas"].as_u64().unwrap() >= 3);

    let redis = find(&all, "Deployment", "stateless-mcp-redis");
    assert_eq!(
        redis["spec"]["template"]["spec"]["containers"][0]["ports"][0]["containerPort"],
        6379
    );
    let redis_svc = find(&all, "Service", "stateless-mcp-redis");
    assert_eq!(redis_svc["spec"]["ports"][0]["port"], 6379);
    // The replicas use that Redis as their bus.
    let deployment = find(&all, "Deployment", "stateless-mcp");
    let env = deployment["spec"]["template"]["spec"]["containers"][0]["env"]
        .as_array()
        .unwrap();
    let bus = env
        .iter()
        .find(|e| e["name"] == "MCP_BUS")
        .expect("MCP_BUS");
    assert_eq!(bus["value"], "redis://stateless-mcp-redis:6379");
}

/// `server host:port;` lines of an nginx upstream file.
fn upstream_servers(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.strip_prefix("server "))
        .map(|s| s.trim_end_matches(';').trim().to_owned())
        .collect()
}

#[test]
fn compose_runs_three_replicas_behind_nginx_with_redis() {
    let docs = yaml_docs("deploy/compose.yaml");
    assert_eq!(docs.len(), 1);
    let services = docs[0]["services"].as_object().unwrap();
    let envs = accepted_envs();
    let replicas: Vec<&String> = services.keys().filter(|k| k.starts_with("mcp-")).collect();
    assert_eq!(replicas.len(), 3);
    let upstream = read("deploy/nginx/upstream-compose.conf");
    let servers = upstream_servers(&upstream);
    for name in &replicas {
        let svc = &services[*name];
        let env = svc["environment"].as_object().unwrap();
        for key in env.keys() {
            assert!(
                envs.contains(key),
                "compose {name} sets {key}, which the binary lacks"
            );
        }
        let listen = str_of(&env["MCP_LISTEN"]);
        assert_eq!(listen, format!("0.0.0.0:{PORT}"));
        assert!(
            servers.contains(&format!("{name}:{PORT}")),
            "upstream.conf lacks {name}:{PORT}"
        );
        assert_eq!(svc["stop_signal"], "SIGTERM");
        let grace: u64 = str_of(&svc["stop_grace_period"])
            .trim_end_matches('s')
            .parse()
            .unwrap();
        let secs = |k: &str| str_of(&env[k]).parse::<u64>().unwrap();
        assert!(grace > secs("MCP_DRAIN_DELAY_SECS") + secs("MCP_SHUTDOWN_TIMEOUT_SECS"));
    }
    assert_eq!(servers.len(), replicas.len());
    // The key ring comes from the environment (or deploy/.env), required: no placeholder
    // that every replica would fail to start with.
    for name in &replicas {
        let keys = str_of(&services[*name]["environment"]["MCP_STATE_KEYS"]);
        assert!(
            keys.starts_with("${MCP_STATE_KEYS:?"),
            "{name}: MCP_STATE_KEYS must be required from the environment, not {keys}"
        );
    }
    // nginx reads compose's upstream as its upstream.conf.
    let volumes: Vec<&str> = services["nginx"]["volumes"]
        .as_array()
        .unwrap()
        .iter()
        .map(str_of)
        .collect();
    assert!(
        volumes
            .contains(&"./nginx/upstream-compose.conf:/etc/nginx/stateless-mcp/upstream.conf:ro"),
        "{volumes:?}"
    );
    // nginx mounts files that exist.
    for vol in services["nginx"]["volumes"].as_array().unwrap() {
        let host = str_of(vol).split(':').next().unwrap();
        assert!(root().join("deploy").join(host).is_file(), "{host} missing");
    }
    assert!(services.contains_key("redis"));
    for name in &replicas {
        assert_eq!(
            services[*name]["environment"]["MCP_BUS"], "redis://redis:6379",
            "{name} uses the compose Redis as its bus"
        );
    }
}

#[test]
fn nginx_is_tuned_for_sse() {
    let conf = read("deploy/nginx/nginx.conf");
    let directives: Vec<String> = conf
        .lines()
        .map(|l| l.split('#').next().unwrap().trim().to_owned())
        .filter(|l| !l.is_empty())
        .collect();
    let has = |d: &str| directives.iter().any(|l| l == d);
    for d in [
        "proxy_buffering off;",
        "proxy_cache off;",
        "proxy_http_version 1.1;",
        "proxy_set_header Connection \"\";",
        "include upstream.conf;",
        "include listen.conf;",
        "proxy_pass http://stateless_mcp;",
    ] {
        assert!(has(d), "nginx.conf lacks `{d}`");
    }
    let read_timeout = directives
        .iter()
        .find_map(|l| l.strip_prefix("proxy_read_timeout "))
        .expect("proxy_read_timeout");
    let secs: u64 = read_timeout
        .trim_end_matches(';')
        .trim_end_matches('s')
        .parse()
        .unwrap();
    assert!(
        secs >= 3600,
        "proxy_read_timeout {secs}s is too short for listen streams"
    );
    // Runs unprivileged from its prefix: no absolute pid or temp paths.
    for d in &directives {
        if d.starts_with("pid ") || d.contains("_temp_path ") {
            assert!(
                !d.contains(" /"),
                "`{d}` must be relative to the prefix (-p)"
            );
        }
    }
    let listen = read("deploy/nginx/listen.conf");
    assert!(
        listen
            .lines()
            .any(|l| l.trim() == format!("listen {PORT};")),
        "listen.conf must listen on {PORT}"
    );
    // The shipped upstream (replicas on this host) and compose's (its service names).
    for file in [
        "deploy/nginx/upstream.conf",
        "deploy/nginx/upstream-compose.conf",
    ] {
        let upstream = read(file);
        assert!(upstream.contains("upstream stateless_mcp {"), "{file}");
        assert!(upstream_servers(&upstream).len() >= 3, "{file}");
        assert!(
            upstream.contains("keepalive "),
            "{file}: keep-alive to the replicas"
        );
        // Round robin: no hashing or stickiness directive.
        for sticky in ["ip_hash", "hash ", "sticky", "least_conn"] {
            assert!(!upstream.contains(sticky), "{file} uses {sticky}");
        }
    }
}

#[test]
fn the_dockerfile_runs_unprivileged_on_the_exposed_port() {
    let text = read("Dockerfile");
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with('#'))
        .collect();
    let instr = |name: &str| -> Vec<&str> {
        lines
            .iter()
            .filter_map(|l| l.strip_prefix(name).map(str::trim))
            .collect()
    };
    assert_eq!(instr("FROM ").len(), 2, "a multi-stage build");
    assert!(
        instr("FROM ")[0].starts_with("rust:"),
        "built in the official Rust image"
    );
    assert_eq!(instr("EXPOSE "), [PORT.to_string().as_str()]);
    assert_eq!(instr("STOPSIGNAL "), ["SIGTERM"]);
    let user = instr("USER ");
    assert_eq!(user.len(), 1);
    assert!(
        !user[0].starts_with("root") && !user[0].starts_with('0'),
        "{user:?}"
    );
    // ENV names are settings, and the container listens on every interface.
    let envs = accepted_envs();
    let mut env_text = String::new();
    let mut in_env = false;
    for l in &lines {
        if let Some(rest) = l.strip_prefix("ENV ") {
            in_env = true;
            env_text.push_str(rest);
        } else if in_env {
            env_text.push_str(l);
        }
        if in_env && !l.ends_with('\\') {
            in_env = false;
        }
        if in_env {
            env_text.push(' ');
        }
    }
    let pairs: Vec<&str> = env_text
        .split_whitespace()
        .filter(|p| p.contains('='))
        .collect();
    assert!(!pairs.is_empty());
    for p in pairs {
        let (k, v) = p.split_once('=').unwrap();
        assert!(
            envs.contains(k),
            "Dockerfile sets {k}, which the binary does not read"
        );
        if k == "MCP_LISTEN" {
            assert_eq!(v, format!("0.0.0.0:{PORT}"));
        }
    }
    assert!(Path::new(&root().join(".dockerignore")).is_file());
    assert!(read(".dockerignore").lines().any(|l| l.trim() == "target/"));
}
