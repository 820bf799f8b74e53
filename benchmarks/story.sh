#!/usr/bin/env bash
# The README's story, end to end, as a user runs it: the old host kpro6 imported from the text
# table it printed, the new host kpro5 (`serve-sim --preset kpro5`, at full speed) measured with
# `llmsweep run` and its defaults, then `compare`, the gate and the report.
#
#   benchmarks/story.sh [DIR]     # default DIR: runs/story-<time>
#
# LLMSWEEP_BIN is the llmsweep to run (default target/release/llmsweep); PORT the simulator's
# (default 30000). It takes about ten minutes. What it printed is in DIR: run.txt (with the
# run's wall time on its last line), compare.txt, gate.txt (with the gate's exit code),
# report.html. Not run by the tests or CI: see BENCHMARKS.md.
set -euo pipefail

BIN=${LLMSWEEP_BIN:-target/release/llmsweep}
PORT=${PORT:-30000}
DIR=${1:-runs/story-$(date -u +%Y%m%dT%H%M%SZ)}
HERE=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$DIR/results"
[[ -x $BIN ]] || { echo "no llmsweep at $BIN: cargo build --release -p llmsweep, or set LLMSWEEP_BIN" >&2; exit 2; }

"$BIN" serve-sim --preset kpro5 --port "$PORT" >"$DIR/sim.txt" 2>&1 &
sim=$!
trap 'kill $sim 2>/dev/null || true' EXIT
for _ in $(seq 50); do
  curl -fsS "http://127.0.0.1:$PORT/v1/models" >/dev/null 2>&1 && break
  sleep 0.1
done

"$BIN" import --from table "$HERE/collector/tests/fixtures/import/design-kpro6.txt" \
  --label kpro6 --input-len 1000 --output-len 500 --out "$DIR/results" >"$DIR/import.txt" 2>&1

start=$(date +%s.%N)
COLUMNS=100 "$BIN" run --url "http://127.0.0.1:$PORT" --label kpro5 --out "$DIR/results" \
  >"$DIR/run.txt" 2>&1
end=$(date +%s.%N)
echo "run wall time: $(echo "$end - $start" | bc) s" >>"$DIR/run.txt"

old=$(ls "$DIR"/results/kpro6-imported-*.json)
new=$(ls "$DIR"/results/kpro5-run-*.json)
"$BIN" compare "$old" "$new" >"$DIR/compare.txt" 2>&1 || true
gate=0
"$BIN" compare "$old" "$new" --fail-if-slower 5 >"$DIR/gate.txt" 2>&1 || gate=$?
echo "exit $gate" >>"$DIR/gate.txt"
"$BIN" report "$old" "$new" -o "$DIR/report.html" >"$DIR/report.txt" 2>&1

tail -1 "$DIR/run.txt"
grep -m1 'throughput sweep:' "$DIR/compare.txt" || true
tail -1 "$DIR/gate.txt"
