#!/usr/bin/env bash
# The collector's CPU per streamed token at one token per event, against a loopback endpoint
# that streams as fast as the socket takes it (`llmsweep selftest --serve --mode flat-out
# --per-event 1`, in its own process): tokens/s, the level's CPU per token (`client_cpu` of the
# bundle: the collector's threads during the level only) and the process's peak memory. The
# steady rate leaves out the level's first wave (see docs/metrics.md).
# With PROFILE=1 it also records a flat `perf` profile of the first concurrency and prints the
# top costs grouped (the JSON parse of chunks, the kernel, the allocator, hyper, tokio, ...).
#
#   benchmarks/per_token.sh                      # C = 64 and 1024, 32,768 requests of 256 tokens
#   PT_CONCURRENCY=64 PT_ROUNDS=5 PROFILE=1 benchmarks/per_token.sh
#   PT_CONCURRENCY=1024,16000 PT_REQUESTS=131072 PT_ROUNDS=1 benchmarks/per_token.sh   # flat to 16,000?
#
# Only 127.0.0.1 is targeted; every run has a request count and a timeout. A benchmark, never
# part of CI or `cargo test`.
set -euo pipefail
cd "$(dirname "$0")/.."
concurrency=${PT_CONCURRENCY:-64,1024}
requests=${PT_REQUESTS:-32768}
rounds=${PT_ROUNDS:-3}
if [[ -n "${LLMSWEEP_BIN:-}" ]]; then
    bin=$LLMSWEEP_BIN
else
    cargo build --release -p llmsweep >&2
    bin="${CARGO_TARGET_DIR:-target}/release/llmsweep"
fi
work=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$bin" selftest --serve "127.0.0.1:$port" --mode flat-out --per-event 1 >"$work/endpoint.log" 2>&1 &
ep=$!
trap 'kill $ep 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$port/selftest" >/dev/null && break; sleep 0.1; done

one() { # concurrency, perf prefix...
    local c=$1; shift
    rm -rf "$work/out"
    /usr/bin/time -f "%M" -o "$work/rss" "$@" "$bin" throughput --url "http://127.0.0.1:$port" \
        --concurrency "$c" --requests "$requests" --input-len 16 --output-len 256 --warmup 0 \
        --timeout 120 --out "$work/out" --label per-token >/dev/null 2>"$work/err" ||
        { cat "$work/err" >&2; exit 1; }
    python3 - "$work/out" "$(tail -1 "$work/rss")" <<'PY'
import glob, json, sys
b = json.load(open(glob.glob(sys.argv[1] + "/*.json")[0]))
p = b["sweeps"][0]["points"][0]
s = p["summary"]
tokens = sum(r.get("output_tokens", 0) for r in p["requests"])
cpu_us = p["client_cpu"] * s["wall_s"] / tokens * 1e6
steady = (s.get("steady_tok_s") or 0) / 1e6
print(f"| {p['concurrency']} | {s['agg_tok_s'] / 1e6:.2f} M | {steady:.2f} M | {cpu_us:.2f} µs | {int(sys.argv[2]) / 1024:.0f} MiB | {s['ok']}/{s['requests']} |")
PY
}

echo "| C | tok/s | steady tok/s | CPU per token | peak memory | ok |"
echo "|---|---|---|---|---|---|"
for r in $(seq "$rounds"); do
    for c in ${concurrency//,/ }; do one "$c"; done
done
if [[ -n "${PROFILE:-}" ]]; then
    c=${concurrency%%,*}
    one "$c" perf record -q -F 2999 -o "$work/perf.data" -- >/dev/null
    perf report -i "$work/perf.data" --no-children --sort dso,symbol --stdio 2>/dev/null | python3 -c '
import collections, re, sys
groups = collections.Counter()
for line in sys.stdin:
    m = re.match(r"\s*([\d.]+)%\s+(\S+)\s+\[.\]\s+(.*)", line)
    if not m:
        continue
    pct, dso, sym = float(m.group(1)), m.group(2), m.group(3)
    if "kernel" in dso: g = "kernel: reads, wake-ups, scheduling"
    elif "serde" in sym or "chunk::" in sym or "scan::" in sym or "from_utf8" in sym: g = "the chunk parse (the scan, serde_json)"
    elif "memmove" in sym or "memcpy" in sym: g = "memmove (most of it inside the chunk parse)"
    elif any(k in sym for k in ("malloc", "free", "_int_", "unlink_chunk", "realloc")): g = "the allocator (glibc)"
    elif "sse::" in sym or "memchr" in sym: g = "the SSE decoder"
    elif "trace::" in sym or "Trace" in sym: g = "the trace"
    elif any(k in sym for k in ("hyper", "h2::", "http", "reqwest")): g = "hyper and reqwest"
    elif any(k in sym for k in ("tokio", "parking", "futures")): g = "the tokio runtime"
    elif any(k in sym for k in ("sort", "summar", "percentile")): g = "the level summary"
    else: g = "other"
    groups[g] += pct
print(); print("| share of the samples | where |"); print("|---|---|")
for g, v in groups.most_common(): print(f"| {v:.1f} % | {g} |")
'
fi
