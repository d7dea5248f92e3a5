//! The deployment files pass the real validators, offline: every Kubernetes manifest against
//! the Kubernetes schemas (`kubernetes-validate --strict`, from PyPI, installed into the test
//! venv by `scripts/provision.sh`), the shipped nginx configuration with `nginx -t`, and the
//! compose file with `docker-compose config` (Debian's `docker-compose`). Each validator is
//! also shown a broken copy and must refuse it, so a validator that checks nothing fails.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::brokers::program;
use crate::support::cluster::{TempDir, upstream_conf};
use crate::support::process::{root, run_program, tool};

fn python() -> PathBuf {
    tool(
        "MCP_TEST_PYTHON",
        "target/test-tools/pyvenv/bin/python",
        "a Python venv with kubernetes-validate (tests/tools/requirements.txt)",
    )
}

fn kubernetes_validate(files: &[PathBuf]) -> (bool, String) {
    run_program(
        Command::new(python())
            .args(["-m", "kubernetes_validate", "--strict"])
            .args(files),
    )
}

#[test]
fn every_kubernetes_manifest_is_valid_against_the_kubernetes_schemas() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("deploy/kubernetes"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
        .collect();
    files.sort();
    let (ok, text) = kubernetes_validate(&files);
    assert!(ok, "kubernetes-validate refused a manifest:\n{text}");
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy();
        assert!(
            text.contains(&format!("{name} passed")),
            "{name} not validated:\n{text}"
        );
    }

    // A field the schema does not have is refused (strict), and so is a wrong type.
    let dir = TempDir::new("k8s-broken");
    let deployment =
        std::fs::read_to_string(root().join("deploy/kubernetes/deployment.yaml")).unwrap();
    for (what, broken) in [
        (
            "unknown field",
            deployment.replacen("replicas:", "replicaz:", 1),
        ),
        (
            "wrong type",
            deployment.replacen("replicas: 3", "replicas: three", 1),
        ),
    ] {
        assert_ne!(broken, deployment, "{what}: the edit applies");
        let file = dir.path().join("deployment.yaml");
        std::fs::write(&file, broken).unwrap();
        let (ok, text) = kubernetes_validate(&[file]);
        assert!(!ok, "{what} passed validation:\n{text}");
    }
}

/// `nginx -t` on a prefix holding `nginx.conf` and `listen.conf` as shipped, and
/// `upstream.conf` with loopback servers (the shipped one names compose hosts that nginx
/// would have to resolve).
fn nginx_test(nginx_conf: &str) -> (bool, String) {
    let dir = TempDir::new("nginx-t");
    let conf = dir.path().join("conf");
    std::fs::create_dir_all(&conf).unwrap();
    std::fs::write(conf.join("nginx.conf"), nginx_conf).unwrap();
    std::fs::copy(
        root().join("deploy/nginx/listen.conf"),
        conf.join("listen.conf"),
    )
    .unwrap();
    std::fs::write(conf.join("upstream.conf"), upstream_conf(&[18081, 18082])).unwrap();
    run_program(
        Command::new(program("nginx", "nginx"))
            .arg("-t")
            .arg("-p")
            .arg(dir.path())
            .arg("-c")
            .arg(conf.join("nginx.conf")),
    )
}

#[test]
fn the_shipped_nginx_configuration_passes_nginx_t() {
    let shipped = std::fs::read_to_string(root().join("deploy/nginx/nginx.conf")).unwrap();
    let (ok, text) = nginx_test(&shipped);
    assert!(ok, "nginx -t refused deploy/nginx/nginx.conf:\n{text}");
    assert!(text.contains("test is successful"), "{text}");
    let broken = shipped.replacen("proxy_buffering off;", "proxy_buffering sideways;", 1);
    assert_ne!(broken, shipped);
    let (ok, text) = nginx_test(&broken);
    assert!(!ok, "nginx -t accepted an invalid directive value:\n{text}");
}

/// `nginx -t` on the files exactly as shipped: `deploy/nginx/nginx.conf` read in place with
/// its own `listen.conf` and `upstream.conf` (loopback replicas), the prefix (pid file,
/// temporary directories) a scratch directory, as `nginx.conf`'s header prints it.
#[test]
fn the_shipped_nginx_configuration_passes_nginx_t_as_shipped() {
    let prefix = TempDir::new("nginx-prefix");
    let (ok, text) = run_program(
        Command::new(program("nginx", "nginx"))
            .args(["-t", "-e", "stderr", "-p"])
            .arg(prefix.path())
            .arg("-c")
            .arg(root().join("deploy/nginx/nginx.conf")),
    );
    assert!(ok, "nginx -t refused deploy/nginx/ as shipped:\n{text}");
    assert!(text.contains("test is successful"), "{text}");
    // The compose upstream names hosts that resolve only inside compose: it is the one that
    // must not be the shipped upstream.conf (nginx refuses it here), which is what the
    // test above guards.
    let dir = TempDir::new("nginx-compose-upstream");
    for f in ["nginx.conf", "listen.conf"] {
        std::fs::copy(root().join("deploy/nginx").join(f), dir.path().join(f)).unwrap();
    }
    std::fs::copy(
        root().join("deploy/nginx/upstream-compose.conf"),
        dir.path().join("upstream.conf"),
    )
    .unwrap();
    let (ok, text) = run_program(
        Command::new(program("nginx", "nginx"))
            .args(["-t", "-e", "stderr", "-p"])
            .arg(prefix.path())
            .arg("-c")
            .arg(dir.path().join("nginx.conf")),
    );
    assert!(!ok && text.contains("host not found"), "{text}");
}

/// `docker-compose config` on `file`, with `MCP_STATE_KEYS` set (a key ring the way the
/// compose file's header generates one) or not.
fn compose_config(file: &Path, keys: bool) -> (bool, String) {
    // Neither the caller's environment nor a deploy/.env may decide the outcome.
    let dir = TempDir::new("compose-env");
    let env_file = dir.path().join("empty.env");
    std::fs::write(&env_file, "").unwrap();
    let mut cmd = Command::new(program("docker-compose", "docker-compose"));
    cmd.env_remove("MCP_STATE_KEYS")
        .arg("--env-file")
        .arg(&env_file)
        .arg("-f")
        .arg(file)
        .args(["config", "-q"]);
    if keys {
        cmd.env(
            "MCP_STATE_KEYS",
            "k1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=",
        );
    }
    run_program(&mut cmd)
}

#[test]
fn the_compose_file_passes_docker_compose_config() {
    let shipped = root().join("deploy/compose.yaml");
    let (ok, text) = compose_config(&shipped, true);
    assert!(ok, "docker-compose refused deploy/compose.yaml:\n{text}");
    // Without a key ring it stops at once, saying what to set (no replica starts with a
    // placeholder key and restarts in a loop).
    let (ok, text) = compose_config(&shipped, false);
    assert!(!ok, "docker-compose ran without MCP_STATE_KEYS:\n{text}");
    assert!(
        text.contains("set MCP_STATE_KEYS"),
        "no message naming MCP_STATE_KEYS:\n{text}"
    );
    let text_of = std::fs::read_to_string(&shipped).unwrap();
    let broken = text_of.replacen("ports:", "portz:", 1);
    assert_ne!(broken, text_of);
    let dir = TempDir::new("compose-broken");
    let copy = dir.path().join("compose.yaml");
    std::fs::write(&copy, broken).unwrap();
    let (ok, text) = compose_config(&copy, true);
    assert!(!ok, "docker-compose accepted an unknown option:\n{text}");
    assert!(text.contains("portz"), "{text}");
}
