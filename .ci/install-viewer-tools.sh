#!/usr/bin/env bash
# Installs what building and testing the viewer needs, each part only when missing:
#
#   wasm32-unknown-unknown   rustup target (also pinned in rust-toolchain.toml)
#   trunk 0.21.14            builds viewer/ into dist/ (0.22 needs a newer rustc)
#   wasm-bindgen-cli 0.2.130 the version viewer/Cargo.toml pins wasm-bindgen to
#   chromium, chromium-driver  Debian's headless browser for the viewer's browser tests
#
# Idempotent: a second run takes a few seconds.
set -euo pipefail

TRUNK_VERSION="0.21.14"
WASM_BINDGEN_VERSION="0.2.130"

log() { printf '[install-viewer-tools] %s\n' "$*"; }

# Runs "$@" and reports how long it took.
timed() {
    local what="$1"
    shift
    local start=$SECONDS
    log "installing $what ..."
    "$@"
    log "installed $what in $((SECONDS - start)) s"
}

# Prints the version a `tool --version` reports ("trunk 0.21.14" -> "0.21.14"), or nothing.
version_of() {
    "$1" --version 2>/dev/null | awk '{print $2; exit}'
}

if ! rustup target list --installed | grep -q '^wasm32-unknown-unknown$'; then
    timed "the wasm32-unknown-unknown target" rustup target add wasm32-unknown-unknown
fi

# Both tools are built unoptimised and without debug info (`--debug` with the dev profile's
# debug info off): they run for seconds per build, and an optimised build of their ~500
# crates takes several times as long on 2 cores. Their output does not depend on it.
export CARGO_PROFILE_DEV_DEBUG=0
if [ "$(version_of trunk)" != "$TRUNK_VERSION" ]; then
    timed "trunk $TRUNK_VERSION" cargo install trunk --version "$TRUNK_VERSION" --locked --debug
fi

# Not --locked, as the toolchain notes in DESIGN.md give it for this version.
if [ "$(version_of wasm-bindgen)" != "$WASM_BINDGEN_VERSION" ]; then
    timed "wasm-bindgen-cli $WASM_BINDGEN_VERSION" \
        cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --debug
fi

if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
    export DEBIAN_FRONTEND=noninteractive
    timed "chromium and chromium-driver" \
        bash -c 'apt-get update -qq && apt-get install -y -qq chromium chromium-driver >/dev/null'
fi

log "trunk $(version_of trunk), wasm-bindgen $(version_of wasm-bindgen), $(chromium --version 2>/dev/null)"
