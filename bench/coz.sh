#!/usr/bin/env bash
# Real Coz beside `ccc causal`, on the same server, catalog and load.
#
#   bash bench/rps.sh          # once: installs wrk, seeds $WORK/data
#   bash bench/coz.sh          # as root on Debian: installs coz-profiler
#
# 1. Builds ccc with the `coz` feature (real Coz's progress point
#    `asset-served`, at the same place as ccc's own), line tables on (the
#    release profile has them) and linked with GNU ld: with rust-lld's
#    segment layout Coz 0.2.2 credits samples to code 0x1000 bytes away.
# 2. Runs `coz run --- ccc serve` under wrk (urls_hot.txt, CONNS keep-alive
#    connections) for COZ_SECONDS, then stops the server with SIGINT; Coz
#    writes $OUT/profile.coz when it exits.
# 3. Runs bench/causal.sh with the same binary: ccc's own profile of the
#    same server under the same load ($WORK/causal/hot.*).
# 4. Prints both side by side (bench/lib/coz_table.py): Coz's lines ranked
#    by the gain it predicts, and ccc's sites, at the same speedups.
#
# Everything targets 127.0.0.1 and stops by itself. Knobs: WORK
# (/tmp/ccc-rps, shared with rps.sh), OUT ($WORK/coz), COZ_SECONDS (240),
# CONNS (50), THREADS (4), CACHE (256), ROUNDS (5, for ccc causal),
# SKIP_BUILD=1, SKIP_CCC=1 (Coz only).

set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORK=${WORK:-/tmp/ccc-rps}
OUT=${OUT:-$WORK/coz}
COZ_SECONDS=${COZ_SECONDS:-240}
CONNS=${CONNS:-50}
THREADS=${THREADS:-4}
CACHE=${CACHE:-256}
ROUNDS=${ROUNDS:-5}
PORT=18410
unset CCC_DB_PATH CCC_PORT CCC_BIND CCC_THREADS CCC_CACHE_CAPACITY CCC_CACHE_BYTES

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

[ -f "$WORK/data/cdn.db" ] && command -v wrk >/dev/null \
    || die "run bench/rps.sh first: it installs wrk and seeds $WORK/data"
if ! command -v coz >/dev/null; then
    [ "$(id -u)" = 0 ] || die "needs root to install coz-profiler"
    log "installing coz-profiler"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq coz-profiler
fi
mkdir -p "$OUT"

BIN=$OUT/ccc-coz
if [ "${SKIP_BUILD:-0}" != 1 ]; then
    log "building ccc --features coz (GNU ld, line tables)"
    (cd "$REPO" && RUSTFLAGS="-C linker-features=-lld" CARGO_TARGET_DIR="$OUT/target" \
        cargo build --release --locked --features coz --bin ccc)
    cp "$OUT/target/release/ccc" "$BIN"
fi

log "coz run --- ccc serve, under wrk -c$CONNS for ${COZ_SECONDS}s"
rm -f "$OUT/profile.coz"
(
    cd "$OUT"
    exec taskset -c 0 coz run --- "$BIN" --db "$WORK/data/cdn.db" serve --port "$PORT" \
        --threads "$THREADS" --cache-capacity "$CACHE"
) >"$OUT/serve.log" 2>&1 &
server=$!
for _ in $(seq 200); do
    curl -fsS -o /dev/null "http://127.0.0.1:$PORT/healthz" 2>/dev/null && break
    sleep 0.1
done
curl -fsS -o /dev/null "http://127.0.0.1:$PORT/healthz" || die "the server under Coz did not start (see $OUT/serve.log)"
taskset -c 1 wrk -t1 -c"$CONNS" -d"${COZ_SECONDS}s" --timeout 5s -s "$REPO/bench/lib/urls.lua" \
    "http://127.0.0.1:$PORT" -- "$WORK/data/urls_hot.txt" seq >"$OUT/wrk.txt" 2>&1 || true
# $server is Coz's launcher; ccc is its child. Coz appends each experiment
# to the profile as it ends, and at exit waits for the experiment in
# progress, which never ends without progress (Coz 0.2.2 stretches an
# experiment until it sees enough): so SIGTERM (ccc prints its stats),
# a grace period, then SIGKILL, losing only that last experiment.
ccc_pid=$(pgrep -P "$server" | head -1)
kill -TERM "$ccc_pid" 2>/dev/null || true
for _ in $(seq 50); do kill -0 "$ccc_pid" 2>/dev/null || break; sleep 0.1; done
kill -KILL "$ccc_pid" 2>/dev/null || true
wait "$server" 2>/dev/null || true
[ -s "$OUT/profile.coz" ] || die "Coz wrote no profile (see $OUT/serve.log)"
log "Coz: $(grep -c '^experiment' "$OUT/profile.coz") experiments in $OUT/profile.coz"

if [ "${SKIP_CCC:-0}" != 1 ]; then
    log "ccc causal on the same binary and load"
    WORK=$WORK CCC=$BIN LOADS=hot ROUNDS=$ROUNDS CONNS=$CONNS THREADS=$THREADS CACHE=$CACHE \
        bash "$REPO/bench/causal.sh" >"$OUT/ccc-causal.txt"
fi

python3 "$REPO/bench/lib/coz_table.py" "$OUT/profile.coz" "$WORK/causal/hot.json" | tee "$OUT/side-by-side.md"
