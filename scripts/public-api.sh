#!/usr/bin/env bash
# The library's public API as one line per item ("kind path"), read from rustdoc's item
# index (target/doc/stateless_mcp/all.html, or under $CARGO_TARGET_DIR when that is set; it
# leaves out #[doc(hidden)] items such as the reference server's `app` and `fixtures`).
# docs/public-api.txt is the committed listing, so every change to the public API shows in
# review.
#
#   scripts/public-api.sh           rebuild the docs and rewrite docs/public-api.txt
#   scripts/public-api.sh --check   fail when the docs already built differ from it
set -euo pipefail
cd "$(dirname "$0")/.."
LISTING=docs/public-api.txt
INDEX=${CARGO_TARGET_DIR:-target}/doc/stateless_mcp/all.html

list() {
  grep -o '<li><a href="[^"]*">[^<]*</a></li>' "$INDEX" |
    sed -E 's|<li><a href="([^"]*/)?([a-z]+)\.[^"]*">([^<]*)</a></li>|\2 \3|' |
    LC_ALL=C sort
}

if [ "${1:-}" = --check ]; then
  [ -f "$INDEX" ] || { echo "no $INDEX: run cargo doc --no-deps --all-features first" >&2; exit 1; }
  if ! diff -u "$LISTING" <(list); then
    echo "the public API changed: run scripts/public-api.sh and commit $LISTING" >&2
    exit 1
  fi
  echo "public API: $(wc -l < "$LISTING") items, as listed in $LISTING"
else
  cargo doc --no-deps --all-features --quiet
  list > "$LISTING"
  echo "wrote $LISTING ($(wc -l < "$LISTING") items)"
fi
