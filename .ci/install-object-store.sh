#!/usr/bin/env bash
# Installs Garage, a real S3-compatible object store, for the tests of bundles in a bucket
# (`--out s3://…`, `view`, `history`, `push`), which start it on loopback.
#
#   garage 2.5.0   from the crate registry, built once without the features the tests do not
#                  use (LMDB, metrics, K2V): SQLite metadata, bundled C libraries
#
# Idempotent: skipped when `garage --version` already says 2.5.0. The build is a debug build
# (the tests store a few megabytes; optimising Garage would double its build time). What it
# costs on a fresh 2-core machine is in BENCHMARKS.md.
set -euo pipefail

GARAGE_VERSION="2.5.0"
log() { printf '[install-object-store] %s\n' "$*"; }

if command -v garage >/dev/null 2>&1 && garage --version 2>/dev/null | grep -q "v$GARAGE_VERSION\b\|$GARAGE_VERSION"; then
    log "garage $GARAGE_VERSION is installed"
    exit 0
fi

start=$SECONDS
log "building garage $GARAGE_VERSION ..."
# Its own target folder, so the workspace's build cache is not mixed with it.
CARGO_TARGET_DIR="${GARAGE_TARGET_DIR:-${TMPDIR:-/tmp}/garage-build}" \
    cargo install garage --version "$GARAGE_VERSION" --locked --debug \
    --no-default-features --features bundled-libs,sqlite
log "installed garage $GARAGE_VERSION in $((SECONDS - start)) s"
