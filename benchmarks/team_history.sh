#!/usr/bin/env bash
# The index and the history at a team's scale: 1,000 runs of 20 hosts (copies of one real
# simulator run, each as noisy as its interval says; every other host 5 % slower from night 30),
# listed and put in a history from a local folder and, when Garage is installed
# (.ci/install-object-store.sh), from a bucket on loopback.
#
#   benchmarks/team_history.sh            # N=1000 by default; about 2 minutes
set -euo pipefail
cd "$(dirname "$0")/.."
N="${N:-1000}"
TARGET="${CARGO_TARGET_DIR:-target}"
cargo build --release -p llmsweep --bin llmsweep --example team_history >/dev/null
BIN="$TARGET/release/llmsweep"
work="$(mktemp -d)"
trap 'kill "${GARAGE_PID:-}" 2>/dev/null || true; rm -rf "$work"' EXIT

"$TARGET/release/examples/team_history" --runs "$N" --labels 20 --slow-from 30 --out "$work/runs"

timed() {
    local what="$1"
    shift
    local t0 t1
    t0=$(date +%s.%N)
    "$@" >"$work/out.txt" 2>&1 || echo "(exit $?)" >>"$work/out.txt"
    t1=$(date +%s.%N)
    printf '%-58s %6.2f s   %s\n' "$what" "$(echo "$t1 - $t0" | bc)" "$(head -c 110 "$work/out.txt" | head -1)"
}

echo "== local folder, $N runs"
timed "index, first (reads every bundle)" "$BIN" index "$work/runs"
timed "index, again (from the index)" "$BIN" index "$work/runs"
timed "history --label host01 --at C=4" "$BIN" history "$work/runs" --label host01 --at C=4
timed "history (every label and level)" "$BIN" history "$work/runs"
"$BIN" history "$work/runs" --label host01 --at C=4 | head -3
"$BIN" history "$work/runs" --label host01 --at C=4 | grep -E '^  [▼▲]' || true

if ! command -v garage >/dev/null; then
    echo "== bucket: skipped (garage is not installed)"
    exit 0
fi
echo "== Garage bucket on loopback, $N runs"
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
RPC=$(port) S3=$(port) ADMIN=$(port)
cat >"$work/garage.toml" <<EOF
metadata_dir = "$work/meta"
data_dir = "$work/data"
db_engine = "sqlite"
replication_factor = 1
rpc_bind_addr = "127.0.0.1:$RPC"
rpc_public_addr = "127.0.0.1:$RPC"
rpc_secret = "$(printf '4f%.0s' $(seq 32))"
[s3_api]
s3_region = "garage"
api_bind_addr = "127.0.0.1:$S3"
root_domain = ".s3.garage.localhost"
[admin]
api_bind_addr = "127.0.0.1:$ADMIN"
EOF
g() { garage -c "$work/garage.toml" "$@"; }
garage -c "$work/garage.toml" server >"$work/garage.log" 2>&1 &
GARAGE_PID=$!
for _ in $(seq 100); do g node id -q >/dev/null 2>&1 && break; sleep 0.2; done
g layout assign -z dc1 -c 1G "$(g node id -q | cut -d@ -f1)" >/dev/null
g layout apply --version 1 >/dev/null
g bucket create team >/dev/null
key="$(g key create bench)"
export AWS_ACCESS_KEY_ID="$(echo "$key" | awk -F': *' '/Key ID/ {print $2}')"
export AWS_SECRET_ACCESS_KEY="$(echo "$key" | awk -F': *' '/Secret key/ {print $2}')"
export AWS_ENDPOINT_URL="http://127.0.0.1:$S3" AWS_REGION=garage
g bucket allow --read --write --owner team --key bench >/dev/null
timed "push $N bundles (one index update)" "$BIN" push "$work"/runs/*.json --to s3://team/nightly
timed "index s3:// (from the index)" "$BIN" index s3://team/nightly
timed "history s3:// --label host01 --at C=4" "$BIN" history s3://team/nightly --label host01 --at C=4
timed "history s3:// (every label and level)" "$BIN" history s3://team/nightly
