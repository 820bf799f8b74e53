#!/usr/bin/env bash
# The viewer's benchmark: builds bundles of 1,000, 10,000 and 100,000 request records with the
# collector against its simulated server and a report of 10 runs, loads them in headless Chromium
# (the bundles from the committed dist/ over loopback, the report from file://), and prints load,
# redraw and tab-switch times, the wasm size and the machine's load average as a Markdown table
# (for BENCHMARKS.md).
#
#   viewer/bench.sh          # needs .ci/install-viewer-tools.sh; about two minutes after building
#   LLMSWEEP_BENCH_DIST=/tmp/dist-opt viewer/bench.sh   # another build of the viewer
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --release --locked -p llmsweep-viewer --example bench
