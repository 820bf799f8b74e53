#!/usr/bin/env bash
# llmsweep's client side by side with `vllm bench serve` (vllm 0.33.0), GuideLLM (0.8.1), AIPerf
# (0.13.0) and vllm-bench, on the same loopback streaming endpoint (`llmsweep selftest --serve`,
# in a process of its own):
#
#   flat out   256-token streams, one token per event, ~16-token prompts, at concurrency
#              1, 64, 256, 1024, max(4096, 4 x C) requests per run ($SBS_REQUESTS in place of
#              4096), the same for every client:
#              tokens/s as each tool reports it and as the endpoint streamed it, CPU time per
#              token of the client's process tree (start-up subtracted), peak memory;
#   scheduled  first token 300 ms after the request arrives, then one every 10 ms, 16-token
#              streams, max(32, 2 x C) requests, at concurrency 1, 64, 256: TTFT p50/p99 as each
#              tool reports it, minus the 300 ms.
#
# The clients run one after another at each concurrency. Only 127.0.0.1 is targeted; every run
# has a request count and a timeout ($SBS_TIMEOUT, 600 s); the endpoints are stopped on exit.
# Prints Markdown tables, the exact commands and the versions; raw results (each tool's own
# output files and logs, and the measurements) go to the folder given as $1 (default
# results/side-by-side-<time>). Takes about 7 minutes on the 2-core machine, plus the install.
#
# Installs, the first time: a virtualenv at $LLMSWEEP_BENCH_VENV (default
# ~/.cache/llmsweep/bench-venv) with vllm==0.33.0 and guidellm==0.8.1 from PyPI (about 10 GB:
# vllm pulls torch and the CUDA libraries even on a host without a GPU), and one at
# $LLMSWEEP_AIPERF_VENV (default ~/.cache/llmsweep/aiperf-venv) with aiperf==0.13.0 (its pins
# differ from vllm's), each reused when it already has those versions; a character-level
# tokenizer in the results folder (no model hub is needed: HF_HUB_OFFLINE=1, except for AIPerf,
# whose offline mode looks a path up in the hub cache instead of loading it). The llmsweep binary is $LLMSWEEP_BIN, or built here with
# `cargo build --release -p llmsweep`.
#
#   benchmarks/side_by_side.sh [OUT_DIR]
#   SBS_CONCURRENCY=1,64 SBS_SCHED_CONCURRENCY=64 benchmarks/side_by_side.sh   # a shorter run
#   SBS_REQUESTS=32768 SBS_SCHED_CONCURRENCY= …    # longer flat-out runs (at least 4 x C), no
#                                                  # scheduled phase
#   SBS_CLIENTS=selftest,throughput,vllm-bench VLLM_BENCH_BIN=… benchmarks/side_by_side.sh
#                                  # some clients only (no virtualenv without vllm, guidellm
#                                  # or aiperf)
#
# With VLLM_BENCH_BIN set to a vllm-bench binary (vLLM's Rust client, built from its source with
# `cargo build --release`: github.com/vllm-project/vllm-bench, archived into vLLM's rust/
# folder), it runs as a fifth client with vllm's arguments and result file.
#
# A benchmark, never part of CI or `cargo test`.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

VLLM_VERSION=0.33.0
GUIDELLM_VERSION=0.8.1
AIPERF_VERSION=0.13.0
venv=${LLMSWEEP_BENCH_VENV:-$HOME/.cache/llmsweep/bench-venv}
aiperf_venv=${LLMSWEEP_AIPERF_VENV:-$HOME/.cache/llmsweep/aiperf-venv}
concurrency=${SBS_CONCURRENCY:-1,64,256,1024}
sched_concurrency=${SBS_SCHED_CONCURRENCY-1,64,256}
timeout=${SBS_TIMEOUT:-600}
input_len=16
output_len=256
sched_output_len=16
first_ms=300
interval_ms=10
out=${1:-results/side-by-side-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"
out=$(cd "$out" && pwd)
helper="$repo/benchmarks/side_by_side.py"

# ---- the llmsweep binary
if [[ -n "${LLMSWEEP_BIN:-}" ]]; then
    bin=$LLMSWEEP_BIN
else
    cargo build --release -p llmsweep >&2
    bin="${CARGO_TARGET_DIR:-$repo/target}/release/llmsweep"
fi
[[ -x "$bin" ]] || { echo "no llmsweep binary at $bin" >&2; exit 1; }

# ---- which clients: SBS_CLIENTS (a comma list), else all five and vllm-bench when it is given
clients_default=selftest,throughput,vllm,guidellm,aiperf
[[ -n "${VLLM_BENCH_BIN:-}" ]] && clients_default+=,vllm-bench
IFS=, read -r -a clients <<<"${SBS_CLIENTS:-$clients_default}"
python_clients=false
aiperf_client=false
for c in "${clients[@]}"; do
    case $c in
    vllm | guidellm) python_clients=true ;;
    aiperf) aiperf_client=true ;;
    selftest | throughput) ;;
    vllm-bench) [[ -x ${VLLM_BENCH_BIN:-} ]] || { echo "vllm-bench needs VLLM_BENCH_BIN" >&2; exit 2; } ;;
    *) echo "unknown client $c (selftest, throughput, vllm, guidellm, aiperf, vllm-bench)" >&2; exit 2 ;;
    esac
done

# ---- the virtualenv (reused when it has the pinned versions), for the Python clients only
have() { "$venv/bin/python" -m pip show "$1" 2>/dev/null | sed -n 's/^Version: //p'; }
if $python_clients && [[ ! -x "$venv/bin/python" || "$(have vllm)" != "$VLLM_VERSION" || "$(have guidellm)" != "$GUIDELLM_VERSION" ]]; then
    echo "installing vllm==$VLLM_VERSION and guidellm==$GUIDELLM_VERSION into $venv (about 10 GB)" >&2
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install -q --upgrade pip >&2
    "$venv/bin/python" -m pip install -q "vllm==$VLLM_VERSION" "guidellm==$GUIDELLM_VERSION" >&2
fi
if $aiperf_client && [[ ! -x "$aiperf_venv/bin/python" || "$("$aiperf_venv/bin/python" -m pip show aiperf 2>/dev/null | sed -n 's/^Version: //p')" != "$AIPERF_VERSION" ]]; then
    echo "installing aiperf==$AIPERF_VERSION into $aiperf_venv" >&2
    python3 -m venv "$aiperf_venv"
    "$aiperf_venv/bin/python" -m pip install -q --upgrade pip >&2
    "$aiperf_venv/bin/python" -m pip install -q "aiperf==$AIPERF_VERSION" >&2
fi
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 VLLM_NO_USAGE_STATS=1 DO_NOT_TRACK=1
tok="$out/tokenizer"
if $python_clients; then
    [[ -f "$tok/tokenizer.json" ]] || "$venv/bin/python" "$helper" tokenizer "$tok"
else
    [[ -f "$tok/tokenizer.json" ]] || python3 "$helper" tokenizer-plain "$tok"
fi

# ---- open files: 1024 streams, and the endpoint's side of them
ulimit -n "$(ulimit -Hn)"

# ---- the endpoints, each in its own process
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
flat_port=$(free_port)
sched_port=$(free_port)
"$bin" selftest --serve "127.0.0.1:$flat_port" --mode flat-out --per-event 1 >"$out/endpoint-flat.log" 2>&1 &
flat_pid=$!
"$bin" selftest --serve "127.0.0.1:$sched_port" --mode scheduled --first-ms $first_ms \
    --interval-ms $interval_ms >"$out/endpoint-scheduled.log" 2>&1 &
sched_pid=$!
trap 'kill $flat_pid $sched_pid 2>/dev/null || true; wait $flat_pid $sched_pid 2>/dev/null || true' EXIT
flat_url="http://127.0.0.1:$flat_port"
sched_url="http://127.0.0.1:$sched_port"
for url in "$flat_url" "$sched_url"; do
    for _ in $(seq 50); do curl -sf "$url/v1/models" >/dev/null && break; sleep 0.1; done
    curl -sf "$url/selftest" >/dev/null || { echo "endpoint at $url did not start" >&2; exit 1; }
done
python3 "$helper" calibrate "$flat_url" "$flat_pid" "$out/calibration.json"

# ---- versions
{
    echo "llmsweep: $("$bin" --version) ($bin, sha256 $(sha256sum "$bin" | cut -c1-16))"
    echo "llmsweep source: $(git -C "$repo" rev-parse --short HEAD) (this script's checkout)"
    if $python_clients; then
        "$venv/bin/python" -m pip freeze | grep -i -E '^(vllm|guidellm|torch|aiohttp|httpx|transformers)=='
        echo "python: $("$venv/bin/python" --version 2>&1)"
    fi
    if $aiperf_client; then
        "$aiperf_venv/bin/python" -m pip freeze | grep -i -E '^(aiperf|aiohttp|transformers)==' | sed 's/^/aiperf venv: /'
    fi
    [[ -n "${VLLM_BENCH_BIN:-}" ]] && echo "vllm-bench: $("$VLLM_BENCH_BIN" --version 2>&1 | head -1) ($VLLM_BENCH_BIN)"
    echo "kernel: $(uname -r); cores: $(nproc); memory: $(free -g | awk '/Mem:/ {print $2}') GiB"
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
} >"$out/versions.txt"

# ---- one measured run
n_run=0
: >"$out/commands.txt"
run() { # phase client concurrency requests output_len url endpoint_pid
    local phase=$1 client=$2 c=$3 n=$4 len=$5 url=$6 ep=$7
    n_run=$((n_run + 1))
    local dir
    dir="$out/runs/$(printf %02d $n_run)-$phase-c$c-$client"
    mkdir -p "$dir/raw"
    local cmd=()
    case $client in
    selftest)
        cmd=("$bin" selftest --url "$url" --concurrency "$c" --requests "$n" --output-len "$len"
            --scheduled-requests "$n" --scheduled-output-len "$len" --timeout 120 --out "$dir/raw"
            --label side-by-side) ;;
    throughput)
        cmd=("$bin" throughput --url "$url" --concurrency "$c" --requests "$n" --input-len $input_len
            --output-len "$len" --warmup 0 --timeout 120 --out "$dir/raw" --label side-by-side) ;;
    vllm)
        cmd=("$venv/bin/vllm" bench serve --backend openai --base-url "$url" --endpoint /v1/completions
            --model llmsweep-selftest --tokenizer "$tok" --dataset-name random
            --random-input-len $input_len --random-output-len "$len" --num-prompts "$n"
            --max-concurrency "$c" --request-rate inf --ignore-eos --disable-tqdm
            --save-result --result-dir "$dir/raw" --result-filename result.json)
        # per-request records (start times, TTFTs, texts with the send stamps) for the TTFT rows
        if [[ $phase == scheduled ]]; then cmd+=(--save-detailed); fi ;;
    vllm-bench)
        cmd=("$VLLM_BENCH_BIN" --backend openai --base-url "$url" --endpoint /v1/completions
            --model llmsweep-selftest --tokenizer "$tok" --dataset-name random
            --random-input-len $input_len --random-output-len "$len" --num-prompts "$n"
            --max-concurrency "$c" --request-rate inf --ignore-eos --disable-tqdm --num-warmups 0
            --save-result --result-dir "$dir/raw" --result-filename result.json) ;;
    guidellm)
        cmd=("$venv/bin/guidellm" run
            --backend "kind=openai_http,target=$url,model=llmsweep-selftest,request_format=/v1/completions,validate_backend=false"
            --profile "kind=concurrent,streams=$c" --constraint "kind=max_requests,count=$n"
            --tokenizer "kind=hf_auto,model=$tok"
            --data "kind=synthetic_text,prompt_tokens=$input_len,output_tokens=$len"
            --output "kind=json,path=$dir/raw/benchmarks.json" --disable-progress) ;;
    aiperf)
        # AIPerf's offline mode looks a tokenizer path up in the hub cache: the path is loaded
        # only with the hub variables unset. Its own warm-up is off, as for the others.
        cmd=(env -u HF_HUB_OFFLINE -u TRANSFORMERS_OFFLINE "$aiperf_venv/bin/aiperf" profile
            --model llmsweep-selftest --url "$url" --endpoint-type completions --streaming
            --tokenizer "$tok" --concurrency "$c" --request-count "$n"
            --prompt-input-tokens-mean $input_len --prompt-input-tokens-stddev 0
            --prompt-output-tokens-mean "$len" --prompt-output-tokens-stddev 0 --random-seed 1
            --request-timeout-seconds 120 --no-server-metrics --no-gpu-telemetry --ui none
            --export-level summary --output-artifact-dir "$dir/raw/aiperf") ;;
    esac
    printf '%s\n' "$phase c=$c $client: $(printf '%q ' "${cmd[@]}")" >>"$out/commands.txt"
    printf '{"phase":"%s","client":"%s","concurrency":%d,"requests":%d,"output_len":%d,"first_ms":%d}\n' \
        "$phase" "$client" "$c" "$n" "$len" "$first_ms" >"$dir/meta.json"
    echo "[$(date +%T)] $phase c=$c $client ($n requests; load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
    (cd "$dir/raw" && python3 "$helper" measure --ep-pid "$ep" --timeout "$timeout" \
        --log "$dir/log.txt" --out "$dir/measure.json" -- "${cmd[@]}") ||
        echo "    failed: see $dir/log.txt" >&2
    sleep 1
}

# Start-up cost of each tool: one request, subtracted from every flat-out run's CPU time.
for client in "${clients[@]}"; do run tiny "$client" 1 1 $output_len "$flat_url" "$flat_pid"; done
flat_requests=${SBS_REQUESTS:-4096}
for c in ${concurrency//,/ }; do
    n=$((c * 4 > flat_requests ? c * 4 : flat_requests))
    for client in "${clients[@]}"; do run flat "$client" "$c" "$n" $output_len "$flat_url" "$flat_pid"; done
done
for c in ${sched_concurrency//,/ }; do
    n=$((c * 2 > 32 ? c * 2 : 32))
    for client in "${clients[@]}"; do run scheduled "$client" "$c" "$n" $sched_output_len "$sched_url" "$sched_pid"; done
done

{
    python3 "$helper" table "$out"
    echo '### Versions'
    echo
    sed 's/^/    /' "$out/versions.txt"
    echo
    echo '### Commands'
    echo
    sed 's/^/    /' "$out/commands.txt"
} | tee "$out/table.md"
echo "raw results: $out" >&2
