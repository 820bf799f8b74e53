#!/usr/bin/env bash
# vllm-bench's own client-overhead test, with llmsweep beside it: its mock server (axum; first
# token 50 ms after the request, then one every 10 ms, 100 tokens a request, ~32-token prompts)
# on 127.0.0.1, and at each concurrency 1, 10, 100, 500, 1000 (50, 100, 200, 500, 1000
# requests) three clients one after another, rounds interleaved:
#
#   vllm-bench        as its bench-overhead/run.sh runs it (it opens a connection per request
#                     as it goes)
#   llmsweep warm     `throughput` as a user runs it: the level's connections opened before it
#   llmsweep cold     `throughput --cold-connections`: each request opens its own, on its path
#
# Each tool's mean TTFT minus the 50 ms the server waits is what the client adds (its error);
# for llmsweep, the mean time its records give for opening a connection on a request's path
# ("–" warm: none was), the median over the rounds.
#
#   VLLM_BENCH_BIN=… VLLM_BENCH_MOCK=… LLMSWEEP_BIN=… benchmarks/overhead_mock.sh [OUT_DIR]
#   ROUNDS=1 CONCURRENCY=1,100 benchmarks/overhead_mock.sh       # a shorter run
#
# vllm-bench and its mock server build from vllm-bench's source (github.com/vllm-project/
# vllm-bench, archived into vLLM's rust/ folder): `cargo build --release` at its root and in
# bench-overhead/mock-server. The tokenizer is a character-level one written here (no model
# hub). Only 127.0.0.1 is targeted; every run has a request count and a timeout. A benchmark,
# never part of CI or `cargo test`; see BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."

bench=${VLLM_BENCH_BIN:?set VLLM_BENCH_BIN to a vllm-bench binary (cargo build --release in its source)}
mock=${VLLM_BENCH_MOCK:?set VLLM_BENCH_MOCK to its bench-overhead mock-llm-server binary}
bin=${LLMSWEEP_BIN:-target/release/llmsweep}
for b in "$bench" "$mock" "$bin"; do [[ -x $b ]] || { echo "no executable at $b" >&2; exit 2; }; done
rounds=${ROUNDS:-3}
concurrency=${CONCURRENCY:-1,10,100,500,1000}
port=${PORT:-18089}
out=${1:-results/overhead-mock-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"
out=$(cd "$out" && pwd)
ulimit -n "$(ulimit -Hn)"

# One token per printable character: vllm-bench's random prompts need a tokenizer.json.
python3 - "$out/tokenizer" <<'EOF'
import json, os, sys
d = sys.argv[1]
os.makedirs(d, exist_ok=True)
special = ["[UNK]", "[BOS]", "[EOS]", "[PAD]"]
vocab = {t: i for i, t in enumerate(special + [chr(c) for c in range(32, 127)] + ["\n"])}
tok = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
       "normalizer": None, "pre_tokenizer": None, "post_processor": None,
       "decoder": {"type": "Fuse"},
       "model": {"type": "BPE", "dropout": None, "unk_token": "[UNK]",
                 "continuing_subword_prefix": None, "end_of_word_suffix": None,
                 "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                 "vocab": vocab, "merges": []}}
json.dump(tok, open(os.path.join(d, "tokenizer.json"), "w"))
EOF

"$mock" --port "$port" --token-interval-ms 10 --first-token-delay-ms 50 --num-tokens 100 \
    >"$out/mock.log" 2>&1 &
mock_pid=$!
trap 'kill $mock_pid 2>/dev/null || true; wait $mock_pid 2>/dev/null || true' EXIT
url="http://127.0.0.1:$port"
for _ in $(seq 50); do curl -sf "$url/v1/models" >/dev/null && break; sleep 0.1; done
curl -sf "$url/v1/models" >/dev/null || { echo "the mock server did not start" >&2; exit 1; }
{
    echo "llmsweep: $("$bin" --version) ($bin)"
    echo "vllm-bench: $("$bench" --version 2>&1 | head -1) ($bench)"
    echo "kernel: $(uname -r); cores: $(nproc); date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
} >"$out/versions.txt"

requests_at() { case $1 in 1) echo 50 ;; 10) echo 100 ;; 100) echo 200 ;; 500) echo 500 ;; *) echo "$1" ;; esac; }
for round in $(seq "$rounds"); do
    for c in ${concurrency//,/ }; do
        n=$(requests_at "$c")
        for client in vllm-bench warm cold; do
            dir="$out/r$round-c$c-$client"
            mkdir -p "$dir"
            echo "[$(date +%T)] round $round c=$c $client ($n requests; load $(cut -d' ' -f1 /proc/loadavg))" >&2
            case $client in
            vllm-bench)
                timeout 300 "$bench" --backend openai --base-url "$url" --model mock-model \
                    --tokenizer "$out/tokenizer" --dataset-name random --random-input-len 32 \
                    --random-output-len 100 --num-prompts "$n" --max-concurrency "$c" \
                    --disable-tqdm --save-result --result-dir "$dir" --result-filename result.json \
                    --ready-check-timeout-sec 10 --num-warmups 0 \
                    --percentile-metrics ttft,tpot,itl,e2el >"$dir/log.txt" 2>&1 || echo "    failed: $dir/log.txt" >&2 ;;
            warm | cold)
                extra=()
                [[ $client == cold ]] && extra=(--cold-connections)
                timeout 300 "$bin" throughput --url "$url" --model mock-model --concurrency "$c" \
                    --requests "$n" --input-len 32 --output-len 100 --warmup 0 --timeout 60 \
                    "${extra[@]}" --label "$client" --out "$dir" >"$dir/log.txt" 2>&1 || echo "    failed: $dir/log.txt" >&2 ;;
            esac
            sleep 1
        done
    done
done

python3 - "$out" <<'EOF'
import collections, glob, json, os, statistics, sys
out = sys.argv[1]
rows = collections.defaultdict(list)  # (c, client) -> [(ttft error ms, connect ms)]
for d in sorted(glob.glob(os.path.join(out, "r*-c*-*"))):
    name = os.path.basename(d)
    _, c, client = name.split("-", 2)
    c = int(c[1:])
    try:
        if client == "vllm-bench":
            r = json.load(open(os.path.join(d, "result.json")))
            rows[(c, client)].append((r["mean_ttft_ms"] - 50.0, None, r["completed"]))
        else:
            f = sorted(glob.glob(os.path.join(d, "*.json")))[-1]
            p = json.load(open(f))["sweeps"][0]["points"][0]
            ok = [q for q in p["requests"] if q.get("error") is None and q.get("ttft_s") is not None]
            ttft = statistics.fmean(q["ttft_s"] for q in ok) * 1000
            conn = [(q.get("setup") or {}).get("connect_s") for q in ok]
            conn = [x * 1000 for x in conn if x is not None]
            rows[(c, client)].append((ttft - 50.0, statistics.fmean(conn) if conn else None, len(ok)))
    except (OSError, ValueError, KeyError, IndexError) as e:
        print(f"{name}: no result ({e})", file=sys.stderr)
print("| C | client | TTFT error, mean ms (each round) | median | connect on the request's path, mean ms | requests ok |")
print("|---:|---|---|---:|---:|---:|")
for (c, client) in sorted(rows, key=lambda k: (k[0], ["vllm-bench", "warm", "cold"].index(k[1]))):
    v = rows[(c, client)]
    errs = " / ".join(f"{e:.1f}" for e, _, _ in v)
    conns = [x for _, x, _ in v if x is not None]
    conn = f"{statistics.median(conns):.1f}" if conns else "–"
    name = {"vllm-bench": "vllm-bench", "warm": "llmsweep", "cold": "llmsweep --cold-connections"}[client]
    print(f"| {c} | {name} | {errs} | {statistics.median(e for e, _, _ in v):.1f} | {conn} | {v[0][2]} |")
EOF
