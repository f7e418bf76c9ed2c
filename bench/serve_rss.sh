#!/usr/bin/env bash
# serve's RSS against its cache budget (bench/SCALE.md, "Startup and RSS").
#
#   bash bench/serve_rss.sh OLD_CCC NEW_CCC          # compares two builds
#   CATALOGS="/tmp/scale/40k /tmp/scale/1m" ROUNDS=3 DURATION=10 bash bench/serve_rss.sh target/release/ccc
#
# Each catalog is a directory with cdn.db and urls_uniform.txt, as
# bench/scale.sh makes them. Each round, for each catalog and each binary:
# start `ccc serve --cache-capacity 100000 --cache-bytes 64MiB`, read its
# RSS once it answers, load it with wrk (1 thread, 8 connections, DURATION
# s, uniformly random URLs: every asset of the catalog, so the budget
# fills and churns), then read its peak RSS (VmHWM) and the cache's entries
# and bytes from /_stats. Prints one tab-separated line per run:
#   round catalog binary start_kb peak_kb requests_per_s entries cache_bytes
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CATALOGS=${CATALOGS:-/tmp/scale/40k /tmp/scale/1m}
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10}
PORT=${PORT:-18471}
[ $# -gt 0 ] || set -- "$REPO/target/release/ccc"
printf 'round\tcatalog\tbinary\tstart_kb\tpeak_kb\treq_per_s\tentries\tcache_bytes\n'
for round in $(seq 1 "$ROUNDS"); do
    for cat in $CATALOGS; do
        cat "$cat/cdn.db" >/dev/null
        for bin in "$@"; do
            "$bin" --db "$cat/cdn.db" serve --port "$PORT" --cache-capacity 100000 \
                --cache-bytes 64MiB >/dev/null 2>&1 &
            pid=$!
            until curl -sf -o /dev/null "http://127.0.0.1:$PORT/_stats"; do sleep 0.05; done
            start=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
            reqs=$(wrk -t1 -c8 -d"${DURATION}s" -s "$REPO/bench/lib/urls.lua" "http://127.0.0.1:$PORT" \
                -- "$cat/urls_uniform.txt" random 7 | sed -n 's/^RESULT requests=\([0-9]*\).*/\1/p')
            peak=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
            cache=$(curl -s "http://127.0.0.1:$PORT/_stats" |
                python3 -c 'import json,sys; c=json.load(sys.stdin)["cache"]; print(c["entries"], c["bytes"], sep="\t")')
            printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$(basename "$cat")" "$bin" \
                "$start" "$peak" "$(( reqs / DURATION ))" "$cache"
            kill -TERM "$pid"
            wait "$pid" || true
        done
    done
done
