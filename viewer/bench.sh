#!/usr/bin/env bash
# The viewer's benchmark: builds a bundle of 100,000 request records with the collector against
# its simulated server, loads it in headless Chromium from the committed dist/, and prints load,
# redraw and tab-switch times and the wasm size as a Markdown table (for BENCHMARKS.md).
#
#   viewer/bench.sh          # needs .ci/install-viewer-tools.sh; about a minute after building
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --release --locked -p llmsweep-viewer --example bench
