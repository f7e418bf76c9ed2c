#!/usr/bin/env bash
# CPU per request of each of `ccc serve`'s threads under load: what the
# runtime threads spend (the part that grows with cores) against what the
# one store thread spends (the serial part), read from /proc/PID/task/*/stat.
# The inputs of the model in bench/SCALE.md ("Misses against cores").
#
#   bash bench/thread_cpu.sh CCC_BINARY [CONFIG...]
#   WORK=/tmp/ccc-rps THREADS=2 DURATION=10 bash bench/thread_cpu.sh target/release/ccc off-uniform
#
# It uses the seeded catalog and URL lists bench/rps.sh leaves in
# $WORK/data. Per configuration: start the server with $THREADS runtime
# threads on CPUs $SERVER_CPU, warm up for $WARMUP s, then run wrk
# (`-t1`, $CONNS connections, on CPUs $LOAD_CPU) for $DURATION s, reading
# every thread's utime+stime before and after. Prints one line per thread
# name: CPU-s per 1000 requests and its share of the run.
#
# Configurations: off-uniform (cache off), 10pct-uniform (4,000 entries),
# default-uniform (serve's default cache), off-hot. Default: off-uniform
# 10pct-uniform. Knobs: WORK (/tmp/ccc-rps), THREADS (2), SERVER_CPU (0,1),
# LOAD_CPU (0,1), CONNS (50), WARMUP (3), DURATION (10), PORT (18353).

set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORK=${WORK:-/tmp/ccc-rps}
THREADS=${THREADS:-2}
SERVER_CPU=${SERVER_CPU:-0,1}
LOAD_CPU=${LOAD_CPU:-0,1}
CONNS=${CONNS:-50}
WARMUP=${WARMUP:-3}
DURATION=${DURATION:-10}
PORT=${PORT:-18353}
LUA=$REPO/bench/lib/urls.lua
BIN=${1:?usage: bench/thread_cpu.sh CCC_BINARY [CONFIG...]}
shift
CONFIGS=("${@:-off-uniform 10pct-uniform}")
read -ra CONFIGS <<<"${CONFIGS[*]}"
unset CCC_DB_PATH CCC_PORT CCC_BIND CCC_THREADS CCC_CACHE_CAPACITY CCC_CACHE_BYTES
HZ=$(getconf CLK_TCK)

# "name ticks" for every thread of PID (threads of one name summed).
thread_ticks() {
    local task comm
    for task in /proc/"$1"/task/*; do
        comm=$(cat "$task/comm" 2>/dev/null) || continue
        sed 's/^.*) //' "$task/stat" 2>/dev/null | awk -v c="$comm" '{print c, $12 + $13}'
    done | awk '{t[$1] += $2} END {for (n in t) print n, t[n]}' | sort
}

for config in "${CONFIGS[@]}"; do
    case $config in
        off-uniform) cache=(--cache-capacity 0) list=urls.txt mode=random ;;
        10pct-uniform) cache=(--cache-capacity 4000 --cache-bytes 2GiB) list=urls.txt mode=random ;;
        default-uniform) cache=() list=urls.txt mode=random ;;
        off-hot) cache=(--cache-capacity 0) list=urls_hot.txt mode=seq ;;
        *) echo "unknown configuration $config" >&2; exit 2 ;;
    esac
    taskset -c "$SERVER_CPU" "$BIN" --db "$WORK/data/cdn.db" serve --port "$PORT" \
        --threads "$THREADS" "${cache[@]}" >"$WORK/thread_cpu.server.out" 2>&1 &
    pid=$!
    for _ in $(seq 100); do
        curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$PORT/healthz" && break
        sleep 0.1
    done
    taskset -c "$LOAD_CPU" wrk -t1 -c"$CONNS" -d"$WARMUP"s -s "$LUA" "http://127.0.0.1:$PORT" \
        -- "$WORK/data/$list" "$mode" >/dev/null 2>&1
    before=$(thread_ticks "$pid")
    out=$(taskset -c "$LOAD_CPU" wrk -t1 -c"$CONNS" -d"$DURATION"s -s "$LUA" \
        "http://127.0.0.1:$PORT" -- "$WORK/data/$list" "$mode" 2>&1)
    after=$(thread_ticks "$pid")
    kill -TERM "$pid"
    wait "$pid" 2>/dev/null || true
    requests=$(grep '^RESULT ' <<<"$out" | sed 's/.*requests=\([0-9]*\).*/\1/')
    echo "== $config: $requests requests in ${DURATION} s ($((requests / DURATION)) req/s), $THREADS runtime threads on CPUs $SERVER_CPU, wrk on $LOAD_CPU"
    join <(echo "$before") <(echo "$after") | awk -v r="$requests" -v hz="$HZ" -v d="$DURATION" '{
        s = ($3 - $2) / hz
        printf "  %-16s %7.2f CPU-s  %.4f CPU-s per 1000 req  %5.1f%% of one core\n", $1, s, 1000 * s / r, 100 * s / d }'
done
