#!/usr/bin/env bash
# Pairs of default throughput sweeps against serve-sim's kpro5 preset, each run against its own
# simulator process with its own seed, compared with `llmsweep compare` as a user would: how
# often the verdict and `--fail-if-slower 5` call a change.
#
#   benchmarks/verdict_pairs.sh same 40          # two runs of one configuration (false alarms)
#   benchmarks/verdict_pairs.sh slower 20        # the second server 5 % slower (detection)
#   benchmarks/verdict_pairs.sh max-running-12 10
#
# Every process is its own (the simulators, the runs), so the pairs spread over the cores and
# one run's load does not set another simulator's pace; `examples/verdict_pairs.rs` runs them
# all on one thread, where at ×0.1 speed a busy thread slows the simulators' 4 ms steps.
# RUN_ARGS are given to both runs of a pair (default none: the defaults, e.g. --precision 1.5).
# LEVELS are the concurrency levels both run (default 1,2,4,8,16,32,64,100, every one of them:
# the default levels would end once the server is saturated, at C=32 for kpro5; LEVELS=default
# runs the defaults as a user gets them).
# PAIRS_AT_ONCE pairs run at once (default 4); FIRST_PAIR numbers the first (its seeds, default 0); PORT_BASE is the first port (default 20000, below
# Linux's ephemeral ports, which the runs' own connections take); SPEED
# is the simulator's (default 0.1, ten times faster than kpro5). Not run by the tests or CI: see
# BENCHMARKS.md.
#
#   benchmarks/verdict_pairs.sh --judge DIR...   # compare the pairs left in DIR again
set -euo pipefail

# Judges one pair's two bundles in $dir as a user would; prints its line.
judge() {
  local dir=$1 i=$2
  a=$(ls "$dir"/a/*.json | head -1)
  b=$(ls "$dir"/b/*.json | head -1)
  "$BIN" compare "$a" "$b" >"$dir/compare.txt" 2>&1 || true
  gate=0
  "$BIN" compare "$a" "$b" --fail-if-slower 5 >"$dir/gate.txt" 2>&1 || gate=$?
  line=$(grep -m1 -E "^ *throughput sweep: " "$dir/compare.txt" || echo "no verdict")
  # "b is slower than a at C = 2, 4; no significant change at C = 1" is slower: the headline's
  # first clause is its verdict.
  case "$line" in
    *"sweep: mixed"*) verdict="mixed" ;;
    *"sweep: b is faster"*) verdict="faster" ;;
    *"sweep: b is slower"*) verdict="slower" ;;
    *"sweep: no significant change"*) verdict="no significant change" ;;
    *) verdict=$(echo "$line" | sed 's/^ *throughput sweep: //' | cut -c1-60) ;;
  esac
  note=""
  grep -q "speculative decoding:" "$dir/compare.txt" && note=" | acceptance note"
  # Where steady tok/s moved beyond the noise: "worse at all 8 levels", "better at 1 of 8 (C=2)".
  steady=$(grep -m1 -E "^ *steady output tok/s" "$dir/compare.txt" | sed -E 's/^ *steady output tok\/s:? *//; s/;.*//')
  echo "pair $i | $verdict | gate exit $gate | steady: ${steady:-none}$note"
}

# --judge DIR...: judge again the pairs an earlier run left in DIR (after a change to compare).
if [ "${1:-}" = --judge ]; then
  shift
  BIN=${LLMSWEEP_BIN:-target/release/llmsweep}
  for d in "$@"; do
    for p in "$d"/pair-*; do
      ls "$p"/a/*.json "$p"/b/*.json >/dev/null 2>&1 || continue
      # a run stopped by hand (a campaign cut short) is not a pair of finished runs
      grep -q '"complete": false' "$p"/a/*.json "$p"/b/*.json && continue
      judge "$p" "${p##*pair-}"
    done
  done | tee /dev/stderr | {
    lines=$(cat)
    echo
    echo "$(echo "$lines" | grep -c .) pairs judged again"
    echo "$lines" | cut -d'|' -f2 | sort | uniq -c
    echo "gate --fail-if-slower 5 (exit 0 passes, 1 fails, 3 cannot tell):"
    echo "$lines" | cut -d'|' -f3 | sort | uniq -c
    echo "acceptance named as changed beyond the noise: $(echo "$lines" | grep -c 'acceptance note')"
    echo "steady tok/s beyond the noise:"
    echo "$lines" | cut -d'|' -f4 | sed 's/ *$//' | sort | uniq -c
  }
  exit 0
fi

if [ "${1:-}" = --one ]; then
  i=$2
  dir="$OUT/pair-$i"
  mkdir -p "$dir"
  pa=$((${PORT_BASE:-20000} + 2 * i)); pb=$((pa + 1))
  "$BIN" serve-sim --port "$pa" --seed $((2 * i + 1)) --slowdown "$SPEED" >/dev/null 2>&1 &
  sa=$!
  # shellcheck disable=SC2086
  "$BIN" serve-sim --port "$pb" --seed $((2 * i + 2)) $SECOND >/dev/null 2>&1 &
  sb=$!
  for port in "$pa" "$pb"; do
    for _ in $(seq 50); do
      (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
      sleep 0.2
    done
  done
  # shellcheck disable=SC2086
  "$BIN" throughput --url "http://127.0.0.1:$pa" --label a --out "$dir/a" $RUN_ARGS >/dev/null 2>&1 &
  ra=$!
  # shellcheck disable=SC2086
  "$BIN" throughput --url "http://127.0.0.1:$pb" --label b --out "$dir/b" $RUN_ARGS >/dev/null 2>&1 || true
  wait "$ra" || true
  kill "$sa" "$sb" 2>/dev/null || true
  judge "$dir" "$i"
  exit 0
fi

case_name=${1:-same}
pairs=${2:-20}
at_once=${PAIRS_AT_ONCE:-4}
export SPEED=${SPEED:-0.1}
export BIN=${LLMSWEEP_BIN:-target/release/llmsweep}
export OUT=${OUT:-$(mktemp -d)}
[ -x "$BIN" ] || { echo "no $BIN: cargo build --release -p llmsweep first, or set LLMSWEEP_BIN" >&2; exit 2; }
case "$case_name" in
  same) SECOND="--slowdown $SPEED" ;;
  slower) SECOND="--slowdown $(python3 -c "print($SPEED * 1.05)")" ;;
  max-running-12) SECOND="--slowdown $SPEED --max-running 12" ;;
  *) echo "unknown case $case_name: same, slower or max-running-12" >&2; exit 2 ;;
esac
export SECOND
export RUN_ARGS=${RUN_ARGS:-}
LEVELS=${LEVELS:-1,2,4,8,16,32,64,100}
if [ "$LEVELS" != default ]; then RUN_ARGS="--concurrency $LEVELS $RUN_ARGS"; fi
mkdir -p "$OUT"
first=${FIRST_PAIR:-0}
# The simulators' ports stay below Linux's ephemeral ports, which the runs' own connections take:
# a simulator whose port one of them holds cannot start, and its pair leaves no bundle.
last_port=$((${PORT_BASE:-20000} + 2 * (first + pairs)))
if [ "$last_port" -ge 32768 ]; then
  echo "PORT_BASE ${PORT_BASE:-20000} with pairs up to $((first + pairs - 1)) reaches port $last_port, among the ephemeral ports (32768 and up): lower PORT_BASE or FIRST_PAIR" >&2
  exit 2
fi
seq "$first" $((first + pairs - 1)) | xargs -P "$at_once" -I{} "$0" --one {} | tee "$OUT/pairs.txt"
echo
echo "$pairs pairs, case $case_name, simulator speed ×$SPEED, $at_once at once; bundles in $OUT"
cut -d'|' -f2 "$OUT/pairs.txt" | sort | uniq -c
echo "gate --fail-if-slower 5 (exit 0 passes, 1 fails, 3 cannot tell):"
cut -d'|' -f3 "$OUT/pairs.txt" | sort | uniq -c
echo "steady tok/s beyond the noise:"
cut -d'|' -f4 "$OUT/pairs.txt" | sed 's/ *$//' | sort | uniq -c
