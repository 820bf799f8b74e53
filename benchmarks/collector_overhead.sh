#!/usr/bin/env bash
# How much CPU the collector itself needs per streamed token: the client must never be what sets
# the pace. Sweeps the simulator (in its own process, so only the collector is measured) up to
# 256 concurrent streams and prints, per level, tokens/s and the collector's CPU per 1000 tokens.
#
#   benchmarks/collector_overhead.sh        # builds the release binary first
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -p llmsweep >/dev/null
bin=target/release/llmsweep
out=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$bin" serve-sim --port "$port" --preset fast --max-running 256 >/dev/null &
sim=$!
trap 'kill $sim 2>/dev/null; rm -rf "$out"' EXIT
sleep 1
"$bin" throughput --url "http://127.0.0.1:$port" --concurrency 1,16,64,256 --input-len 256 \
    --output-len 256 --warmup 1 --label overhead --out "$out" >/dev/null
python3 - "$out"/*.json <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))
print(f"{'C':>4} | {'tok/s':>8} | {'client CPU (cores)':>18} | {'CPU ms / 1000 tokens':>20}")
for p in b["sweeps"][0]["points"]:
    s = p["summary"]
    cpu = p.get("client_cpu")
    per_k = cpu * s["wall_s"] / s["output_tokens"] * 1e6 if cpu is not None else float("nan")
    print(f"{p['concurrency']:>4} | {s['agg_tok_s']:>8.0f} | {cpu:>18.3f} | {per_k:>20.2f}")
PY
