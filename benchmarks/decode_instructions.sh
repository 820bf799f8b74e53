#!/usr/bin/env bash
# Instructions per token on the decode path, counted by valgrind's callgrind: the SSE decoder,
# the chunk read, the trace and the record of one 256-token request (`hot_path`'s
# `decode_path/request` cases), and how many of them are spent in memcpy. A count, not a time:
# it is the same in every run of one build, so a change of a few per cent shows on a machine
# whose timings spread more than that. It says nothing of the kernel's reads and wake-ups, nor
# of cache misses; `per_token.sh` measures the running client.
#
#   benchmarks/decode_instructions.sh            # needs valgrind (Debian `valgrind`)
#
# A benchmark, never part of CI or `cargo test`.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }
target=${CARGO_TARGET_DIR:-target}
# The executable cargo names (two checkouts sharing a target folder build two of them)
built=$(cargo bench -p llmsweep --bench hot_path --no-run 2>&1) || { echo "$built" >&2; exit 1; }
bench=$(sed -n 's/.*Executable .*(\(.*\))$/\1/p' <<<"$built" | tail -1)
[[ -x "$bench" ]] || { echo "$built" >&2; echo "no hot_path bench executable named" >&2; exit 1; }
echo "counting in $bench" >&2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '| case | instructions per token | of them in memcpy |\n|---|---:|---:|\n'
for case in vllm_completions/1500B vllm_completions/per_event_read sglang_chat/1500B sglang_chat/per_event_read \
    vllm_chat_usage/1500B vllm_chat_usage/per_event_read; do
    rm -f "$work"/cg.*
    valgrind --tool=callgrind --callgrind-out-file="$work/cg.%p" --toggle-collect='hot_path::request' \
        "$bench" --bench "decode_path/request/$case\$" --profile-time 1 >/dev/null 2>"$work/err"
    # criterion starts a second process that collects nothing; the largest file is the bench's
    out=$(ls -S "$work"/cg.* | head -1)
    total=$(grep -o 'Collected : [0-9]*' "$work/err" | awk '{s += $3} END {print s}')
    # calls of `request`: the counts its callers made, from the caller tree (read outside the
    # source tree: inside it, callgrind_annotate shortens the paths and loses the callers)
    calls=$(cd "$work" && callgrind_annotate --tree=caller --threshold=100 "$out" 2>/dev/null |
        grep -B3 '\*  .*hot_path::request \[' | grep -o '([0-9,]*x)' | tr -d '(x,)' | paste -sd+ | bc)
    memcpy=$(cd "$work" && callgrind_annotate "$out" 2>/dev/null | grep -E '__mem(cpy|move)' |
        awk '{gsub(",", "", $1); s += $1} END {print s + 0}')
    printf '| %s | %d | %d |\n' "$case" $((total / calls / 256)) $((memcpy / calls / 256))
done
