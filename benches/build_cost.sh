#!/usr/bin/env bash
# What a user's first build costs, by feature (docs/benchmarks.md, "Build cost"): the README's
# quick start (one typed tool served by the Runner) in a scratch crate that depends on this
# checkout by path, built clean in a scratch target directory once per configuration.
# Prints, per configuration: the crates compiled (`Compiling` lines: exact and repeatable),
# the wall time and the 1-minute load average before and after (times on a shared machine
# vary with it; compare counts).
#
#   bash benches/build_cost.sh [--release] [CONFIG ...]
#
# A CONFIG is `none` (default-features = false, the default) or a comma-separated feature
# list (e.g. `auth,prometheus,redis`, the former defaults). Without CONFIGs: none and
# auth,prometheus,redis. Needs network access to crates.io or a warm cargo registry cache
# (nothing is downloaded twice). Scratch files go to target/build-cost/.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PROFILE=debug
CONFIGS=()
for arg in "$@"; do
    case $arg in
        --release) PROFILE=release ;;
        -*) echo "build_cost.sh: unknown option $arg" >&2; exit 2 ;;
        *) CONFIGS+=("$arg") ;;
    esac
done
[ ${#CONFIGS[@]} -gt 0 ] || CONFIGS=(none auth,prometheus,redis)
SCRATCH=$ROOT/target/build-cost
mkdir -p "$SCRATCH"
load() { cut -d' ' -f1 /proc/loadavg; }

echo "| configuration | profile | crates compiled | build time | load before → after |"
echo "|---|---|---|---|---|"
for config in "${CONFIGS[@]}"; do
    crate=$SCRATCH/app-${config//,/-}
    rm -rf "$crate"
    mkdir -p "$crate/src"
    features=
    [ "$config" = none ] || features=$(printf '"%s", ' ${config//,/ } | sed 's/, $//')
    cat >"$crate/Cargo.toml" <<TOML
[package]
name = "build-cost-probe"
version = "0.0.0"
edition = "2024"
publish = false

[workspace]

[dependencies]
stateless-mcp = { path = "$ROOT", default-features = false, features = [$features] }
tokio = { version = "1", features = ["macros", "rt-multi-thread"] }
serde = { version = "1", features = ["derive"] }
schemars = "1"
axum = { version = "0.8", default-features = false }
TOML
    cat >"$crate/src/main.rs" <<'RS'
use schemars::JsonSchema;
use serde::Deserialize;
use stateless_mcp::{HandlerError, RequestContext, Runner, Server, ToolDef};

#[derive(Deserialize, JsonSchema)]
struct Echo {
    text: String,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = Server::builder()
        .tool(ToolDef::new("echo").handler(|_ctx: RequestContext, args: Echo| async move {
            Ok::<_, HandlerError>(args.text)
        }))
        .build()?;
    Runner::new(server).listen(([127, 0, 0, 1], 8080)).serve().await?;
    Ok(())
}
RS
    # The probe resolves against this checkout's lock file, so the versions are the tested ones.
    cp "$ROOT/Cargo.lock" "$crate/Cargo.lock"
    flags=()
    [ "$PROFILE" = release ] && flags=(--release)
    before=$(load)
    start=$SECONDS
    log=$crate/build.log
    if ! CARGO_TARGET_DIR=$crate/target cargo build "${flags[@]}" --manifest-path "$crate/Cargo.toml" >"$log" 2>&1; then
        echo "build_cost.sh: the $config build failed; see $log" >&2
        exit 1
    fi
    secs=$((SECONDS - start))
    count=$(grep -c '^ *Compiling ' "$log")
    printf '| %s | %s | %d | %d min %02d s | %s → %s |\n' \
        "$config" "$PROFILE" "$count" $((secs / 60)) $((secs % 60)) "$before" "$(load)"
    rm -rf "$crate/target"
done
