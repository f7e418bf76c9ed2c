#!/usr/bin/env bash
# Syscalls per request of `ccc serve`, for one or more ccc binaries in turn:
# a small bounded keep-alive load on 127.0.0.1 (wrk, one thread, $CONNS
# connections, $SECS seconds, one cached 480-byte asset of examples/site),
# counted two ways:
#   - perf's syscall tracepoints (`perf stat -e syscalls:sys_enter_*`),
#     which barely slow the server;
#   - `strace -f -c`, which stops every thread at every syscall and so
#     widens every race between threads (more waits than without it).
#
#   bash bench/syscalls.sh /tmp/ccc-before target/release/ccc
#   ROUNDS=3 SECS=5 CONNS=8 bash bench/syscalls.sh A B
#
# Needs wrk, perf (with tracefs) and strace; run as root or with
# perf_event_paranoid low enough. Writes $WORK/summary.txt, one line per
# binary, round and counter.
set -euo pipefail

[ $# -ge 1 ] || { echo "usage: bash bench/syscalls.sh CCC_BINARY..." >&2; exit 2; }
ROUNDS=${ROUNDS:-3}
SECS=${SECS:-5}
CONNS=${CONNS:-8}
WORK=${WORK:-/tmp/ccc-syscalls}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
for tool in wrk perf strace; do
    command -v "$tool" >/dev/null || { echo "bench/syscalls.sh: $tool is missing" >&2; exit 1; }
done

mkdir -p "$WORK"
rm -f "$WORK/cdn.db" "$WORK/summary.txt"
"$1" --db "$WORK/cdn.db" publish --force demo-site@1.0.0 "$ROOT/examples/site" >/dev/null
ASSET=/assets/demo-site/1.0.0/asset-manifest.json

# Starts a server, prints its pid and port (the first line of its output
# names the port it picked).
start() {
    "$1" --db "$WORK/cdn.db" serve --port 0 >"$WORK/serve.log" 2>&1 &
    local pid=$! port=""
    for _ in $(seq 100); do
        port=$(grep -oE '127\.0\.0\.1:[0-9]+' "$WORK/serve.log" | head -1 | cut -d: -f2 || true)
        [ -n "$port" ] && break
        sleep 0.1
    done
    [ -n "$port" ] || { echo "bench/syscalls.sh: $1 did not start" >&2; cat "$WORK/serve.log" >&2; exit 1; }
    echo "$pid $port"
}

# The server runs in the subshell of `start`, so it is not ours to `wait`.
stop() {
    kill -TERM "$1"
    while kill -0 "$1" 2>/dev/null; do sleep 0.1; done
}

requests() { grep -oE '^ +[0-9]+ requests' "$1" | grep -oE '[0-9]+'; }

per_request() { echo "scale=2; $1 / $2" | bc; }

for bin in "$@"; do
    for round in $(seq "$ROUNDS"); do
        # perf: the load's requests against the counts of the whole process.
        read -r pid port < <(start "$bin")
        url=http://127.0.0.1:$port$ASSET
        wrk -t1 -c"$CONNS" -d2s "$url" >/dev/null # warms the cache
        perf stat -x, -e syscalls:sys_enter_futex,syscalls:sys_enter_sendmsg,syscalls:sys_enter_recvfrom \
            -p "$pid" -o "$WORK/perf.csv" &
        counter=$!
        sleep 0.5
        wrk -t1 -c"$CONNS" -d"${SECS}s" "$url" >"$WORK/wrk.txt"
        kill -INT "$counter"; wait "$counter" || true
        stop "$pid"
        n=$(requests "$WORK/wrk.txt")
        for call in futex sendmsg recvfrom; do
            count=$(grep "sys_enter_$call" "$WORK/perf.csv" | cut -d, -f1)
            echo "$bin round $round perf   $call/request $(per_request "$count" "$n") ($count / $n)" |
                tee -a "$WORK/summary.txt"
        done

        # strace: the same, with every syscall stopping its thread.
        read -r pid port < <(start "$bin")
        url=http://127.0.0.1:$port$ASSET
        wrk -t1 -c"$CONNS" -d2s "$url" >/dev/null
        strace -f -c -p "$pid" -o "$WORK/strace.txt" 2>/dev/null &
        counter=$!
        sleep 1
        wrk -t1 -c"$CONNS" -d"${SECS}s" "$url" >"$WORK/wrk.txt"
        sleep 0.5
        kill -INT "$counter"; wait "$counter" || true
        stop "$pid"
        n=$(requests "$WORK/wrk.txt")
        for call in futex sendmsg recvfrom; do
            # Columns: % time, seconds, usecs/call, calls, [errors], syscall.
            count=$(awk -v c="$call" '$NF == c { print $4 }' "$WORK/strace.txt")
            echo "$bin round $round strace $call/request $(per_request "$count" "$n") ($count / $n)" |
                tee -a "$WORK/summary.txt"
        done
    done
done
