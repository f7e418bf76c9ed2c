#!/usr/bin/env bash
# What serve's background brotli pass costs the responses it serves
# beside, and how long it takes. A fresh catalog holds one published tree
# (brotli quality 5); serve runs on core 0 with one thread, wrk loads one
# cached file over 50 connections from core 1 for 20 s, once with the
# pass on (the default) and once with --no-recompress, in alternation.
# Then, with the pass on, the time until no file is left below quality 11.
#
#   CCC=target/release/ccc TGZ=monaco-editor-0.52.2.tgz \
#       URL_PATH=/assets/monaco-editor/0.52.2/min/vs/loader.js bash bench/brotli_background.sh
#
# Needs wrk, taskset and python3. Rounds: ROUNDS (default 2).
set -euo pipefail
: "${CCC:?CCC=path to a release ccc}" "${TGZ:?TGZ=an npm tarball}" "${URL_PATH:?URL_PATH=a file of it}"
WORK=${WORK:-/tmp/ccc-brotli-background}
PORT=${PORT:-18555}
rm -rf "$WORK" && mkdir -p "$WORK"
trap 'rm -rf "$WORK"' EXIT

pending() {
    python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
print(c.execute("SELECT count(*) FROM brotli_made WHERE quality IS NULL OR (quality > 0 AND quality < 11)").fetchone()[0])' "$1"
}

run() {
    local mode=$1 db="$WORK/$1.db" flag=""
    rm -f "$db"*
    "$CCC" --db "$db" publish --quiet --no-deltas "$TGZ"
    [ "$mode" = off ] && flag=--no-recompress
    taskset -c 0 "$CCC" --db "$db" serve --port "$PORT" --threads 1 $flag >"$WORK/$mode.log" 2>&1 &
    local pid=$! start
    sleep 0.5
    start=$(date +%s.%N)
    local out
    out=$(taskset -c 1 wrk -t1 -c50 -d20s --latency -H "Accept-Encoding: br" "http://127.0.0.1:$PORT$URL_PATH")
    local left cpu
    left=$(pending "$db")
    cpu=$(awk '{print ($14 + $15) / 100}' "/proc/$pid/stat")
    echo "| $mode | $(awk '/Requests\/sec/ {print $2}' <<<"$out") | $(awk '$1 == "50%" {print $2}' <<<"$out") | $(awk '$1 == "99%" {print $2}' <<<"$out") | $cpu | $left |"
    if [ "$mode" = on ]; then
        while [ "$(pending "$db")" != 0 ]; do sleep 1; done
        echo "|  | pass finished $(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN {printf "%.0f", e - s}') s after the load began |  |  |  |  |"
    fi
    kill -TERM "$pid"
    wait "$pid" || true
}

echo "bench/brotli_background.sh at $(git -C "$(dirname "$0")" rev-parse --short HEAD), $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores ($(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)), $(basename "$TGZ")"
echo
echo "| pass | req/s | p50 | p99 | server CPU s in 20 s | files below 11 after the load |"
echo "|---|--:|--:|--:|--:|--:|"
for _ in $(seq "${ROUNDS:-2}"); do
    run off
    run on
done
