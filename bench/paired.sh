#!/usr/bin/env bash
# Two `ccc serve` setups against each other in pairs, for a change smaller
# than this machine's drift (bench/RPS.md): each pair runs A and B back to
# back, in alternating order, and the figure is the median of the pairs'
# B/A ratios of requests served.
#
#   bash bench/paired.sh ROUNDS "BIN CAPACITY BYTES" "BIN CAPACITY BYTES"
#   DATA=/tmp/ccc-rps/data bash bench/paired.sh 8 "target/release/ccc 0 64MiB" "target/release/ccc 4000 2GiB"
#
# Each run starts the server on CPU $SERVER_CPU (0) with --cache-capacity
# and --cache-bytes as given (and $SERVE_ARGS), warms it up for $WARMUP
# (1) s, then loads it for $DURATION (4) s with wrk -t1 on CPU $LOAD_CPU
# (1), $CONNS (50) connections, every request a uniformly random line of
# $DATA/$URLS (urls.txt; bench/lib/urls.lua). Prints each pair (A, B,
# B/A), then the median ratio. Everything on 127.0.0.1:$PORT (18397).
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DATA=${DATA:-/tmp/ccc-rps/data}
URLS=${URLS:-urls.txt}
DURATION=${DURATION:-4}
WARMUP=${WARMUP:-1}
read -r -a SERVE_ARGS <<<"${SERVE_ARGS:-}"
CONNS=${CONNS:-50}
SERVER_CPU=${SERVER_CPU:-0}
LOAD_CPU=${LOAD_CPU:-1}
PORT=${PORT:-18397}
[ $# = 3 ] || { sed -n '2,15p' "$0" >&2; exit 2; }

load() { # seconds: the RESULT line's request count
    taskset -c "$LOAD_CPU" wrk -t1 -c"$CONNS" -d"$1"s -s "$REPO/bench/lib/urls.lua" \
        "http://127.0.0.1:$PORT" -- "$DATA/$URLS" random | sed -n 's/^RESULT requests=\([0-9]*\).*/\1/p'
}

run() { # "BIN CAPACITY BYTES": requests served in DURATION s
    local bin capacity bytes pid
    read -r bin capacity bytes <<<"$1"
    taskset -c "$SERVER_CPU" "$bin" --db "$DATA/cdn.db" serve --port "$PORT" \
        --cache-capacity "$capacity" --cache-bytes "$bytes" "${SERVE_ARGS[@]}" >/dev/null 2>&1 &
    pid=$!
    for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$PORT/_stats" && break; sleep 0.1; done
    load "$WARMUP" >/dev/null
    load "$DURATION"
    kill "$pid"
    wait "$pid" 2>/dev/null || true
}

ratios=()
for round in $(seq "$1"); do
    if [ $((round % 2)) = 0 ]; then b=$(run "$3"); a=$(run "$2"); else a=$(run "$2"); b=$(run "$3"); fi
    ratio=$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.3f", b / a}')
    echo "pair $round: A $a, B $b, B/A $ratio"
    ratios+=("$ratio")
done
printf '%s\n' "${ratios[@]}" | sort -n | awk '{r[NR] = $1} END {print "median B/A: " r[int((NR + 1) / 2)]}'
