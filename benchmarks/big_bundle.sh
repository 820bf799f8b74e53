#!/usr/bin/env bash
# Peak memory of reading and reporting a bundle of 1,000,000 request records: a demo bundle's
# throughput points grown to 1M records in total (their own records repeated, start times
# shifted), then `compare` (reads it twice), `plot` (reads it once) and `report` under
# /usr/bin/time, each against the file's size.
#
#   benchmarks/big_bundle.sh [RECORDS]     # builds the release binary first; about 3 minutes
set -euo pipefail
cd "$(dirname "$0")/.."
records=${1:-1000000}
cargo build --release -p llmsweep >/dev/null
bin=${CARGO_TARGET_DIR:-$PWD/target}/release/llmsweep
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$bin" demo --out "$out/demo" --label big >/dev/null
python3 - "$out"/demo/*.json "$out/big.json" "$records" <<'PY'
import json, sys
src, dst, total = sys.argv[1], sys.argv[2], int(sys.argv[3])
b = json.load(open(src))
points = b["sweeps"][0]["points"]
per = total // len(points)
for p in points:
    base = p["requests"]
    span = max(r["start_s"] + r["e2e_s"] for r in base)
    p["requests"] = [dict(base[i % len(base)], start_s=base[i % len(base)]["start_s"] + span * (i // len(base)))
                     for i in range(per)]
b["sweeps"] = b["sweeps"][:1]
json.dump(b, open(dst, "w"))
print(f"{sum(len(p['requests']) for p in points)} records")
PY
size=$(stat -c %s "$out/big.json")
printf 'bundle: %.0f MB\n' "$(echo "$size / 1048576" | bc -l)"
measure() {
    local what=$1; shift
    /usr/bin/time -f '%M %e' -o "$out/time" "$@" >/dev/null 2>&1 || { echo "$what failed"; return; }
    read -r kb secs <"$out/time"
    printf '%-32s peak %5.0f MB  (%.2f × the file)  %6.1f s\n' "$what" \
        "$(echo "$kb / 1024" | bc -l)" "$(echo "$kb * 1024 / $size" | bc -l)" "$secs"
}
measure "plot (reads it once)" "$bin" plot "$out/big.json" -o "$out/big.svg"
measure "compare (reads it twice)" "$bin" compare "$out/big.json" "$out/big.json"
measure "report" "$bin" report "$out/big.json" -o "$out/big.html"
