#!/usr/bin/env bash
# Scale-out demo: three replicas of the reference server behind nginx, sharing redis-server
# as their notification bus, driven through nginx while one replica is SIGKILLed and another
# is SIGTERMed. It runs the multi-replica integration tests (tests/it/scale_out.rs) one at a
# time and prints their narrative: which replica answered what, where each round of a
# multi-round-trip request and each page of a paginated list landed, which notifications a
# listen stream on one replica got from calls on the others, what failed when a replica
# died and how it was retried.
#
#   scripts/scale-out-demo.sh            # installs nginx/redis-server if missing (apt-get)
#
# Every process listens on an ephemeral loopback port and is stopped at the end. The full
# output (server logs included) is kept in target/scale-out-demo.log.
set -euo pipefail
cd "$(dirname "$0")/.."

need() { # command, Debian package
  if command -v "$1" >/dev/null || [ -x "/usr/sbin/$1" ]; then return; fi
  if command -v apt-get >/dev/null; then
    echo "installing $2 (apt-get)"
    local sudo=""
    [ "$(id -u)" = 0 ] || sudo=sudo
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$2" >/dev/null
  else
    echo "missing $1: install $2 with your package manager" >&2
    exit 1
  fi
}
need nginx nginx
need redis-server redis-server

# The tests check every message against the official MCP schema (never committed).
bash scripts/provision.sh schemas >/dev/null

echo "== building"
cargo test --features external-tests --test it --no-run --quiet

echo "== running (nginx $(nginx -v 2>&1 | sed 's/.*\///'), redis $(redis-server --version | awk '{print $3}' | sed s/v=//))"
mkdir -p target
status=0
cargo test --features external-tests --test it scale_out -- --nocapture --test-threads 1 \
  > target/scale-out-demo.log 2>&1 || status=$?
sed -n -E \
  -e 's/^test scale_out::([a-z_0-9]+) \.\.\. .*/\n== \1/p' \
  -e 's/^\[scale-out\] /   /p' \
  -e 's/^(ok|FAILED)$/   => \1/p' \
  -e '/panicked|^test result/p' \
  target/scale-out-demo.log
if [ "$status" != 0 ]; then
  echo "FAILED; see target/scale-out-demo.log" >&2
  exit "$status"
fi
