#!/usr/bin/env bash
# Cache hits while cold misses run: does a miss that waits on the disk hold
# up the hits of the connections that share its runtime thread? Two builds
# of ccc side by side, in interleaved rounds, on the seeded benchmark
# catalog (bench/rps.sh's, 40,000 assets).
#
#   BASE=/tmp/ab/base/ccc NEW=/tmp/ab/new/ccc SEED=/tmp/ab/base/seed \
#     ROUNDS=3 DURATION=10 bash bench/cold_misses.sh
#
# Each run starts one server on CPU $SERVER_CPU with --threads 2 (the
# runtime threads a 2-core machine gets) and a cache of $CACHE entries,
# warms a hot set of $HOT URLs into it, then for $DURATION seconds runs at
# once, on CPU $LOAD_CPU:
#   - hits: wrk with $HIT_CONNS connections cycling over the hot set;
#   - misses: wrk with $MISS_CONNS connections on uniformly random URLs of
#     the whole catalog (about 95% of them misses);
#   - an evictor that drops the catalog file's pages from the page cache
#     every $EVICT_MS ms (posix_fadvise DONTNEED), so misses read from the
#     disk: `echo 1 > /proc/sys/vm/drop_caches` once would let the whole
#     68 MB catalog back into memory within the first second.
# It prints one line per run and a summary of medians: hits per second,
# hit latency p50 / p99 / p99.9, misses per second, and what the server
# read from the disk (read_bytes of /proc/PID/io). Writes $WORK/runs.tsv.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BASE=${BASE:?BASE: the build to compare against}
NEW=${NEW:?NEW: the build under test}
SEED=${SEED:-$(dirname "$BASE")/seed}
WORK=${WORK:-/tmp/ccc-cold}
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10}
HIT_CONNS=${HIT_CONNS:-20}
MISS_CONNS=${MISS_CONNS:-8}
HOT=${HOT:-200}
CACHE=${CACHE:-2000}
EVICT_MS=${EVICT_MS:-50}
SERVER_CPU=${SERVER_CPU:-0}
LOAD_CPU=${LOAD_CPU:-1}
PORT=18471
LUA=$REPO/bench/lib/urls.lua
unset CCC_DB_PATH CCC_PORT CCC_BIND CCC_THREADS CCC_CACHE_CAPACITY CCC_CACHE_BYTES

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

mkdir -p "$WORK/logs"
if [ ! -f "$WORK/data/cdn.db" ]; then
    log "seeding 500 packages x 5 versions into $WORK/data"
    "$SEED" --out "$WORK/data" --packages 500 --versions 5 >/dev/null
fi
head -n "$HOT" "$WORK/data/urls.txt" >"$WORK/hot.txt"

run() {
    local name=$1 bin=$2 round=$3
    taskset -c "$SERVER_CPU" "$bin" --db "$WORK/data/cdn.db" serve --port "$PORT" \
        --threads 2 --cache-capacity "$CACHE" >"$WORK/logs/$name.out" 2>&1 &
    local server=$!
    for _ in $(seq 100); do
        curl -fs -o /dev/null "http://127.0.0.1:$PORT/_health" && break
        sleep 0.1
    done
    # Warm the hot set: three passes, so the cache admits every URL.
    for _ in 1 2 3; do
        sed "s|^|http://127.0.0.1:$PORT|" "$WORK/hot.txt" | xargs -n1 curl -fs -o /dev/null
    done
    python3 - "$WORK/data/cdn.db" "$EVICT_MS" "$DURATION" <<'EOF' &
import os, sys, time
path, every, duration = sys.argv[1], int(sys.argv[2]) / 1000, float(sys.argv[3])
end = time.monotonic() + duration
fd = os.open(path, os.O_RDONLY)
while time.monotonic() < end:
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    time.sleep(every)
EOF
    local evictor=$!
    local disk_before
    disk_before=$(awk '/^read_bytes/ {print $2}' "/proc/$server/io")
    # MISS_CONNS=0: the hits alone, for reference.
    if [ "$MISS_CONNS" -gt 0 ]; then
        taskset -c "$LOAD_CPU" wrk -t1 -c "$MISS_CONNS" -d "${DURATION}s" -s "$LUA" \
            "http://127.0.0.1:$PORT" -- "$WORK/data/urls.txt" random "$round" \
            >"$WORK/logs/$name.r$round.misses" 2>&1 &
    else
        echo "RESULT requests=0 duration_us=1 status=0 timeout=0" >"$WORK/logs/$name.r$round.misses" &
    fi
    local misses=$!
    taskset -c "$LOAD_CPU" wrk -t1 -c "$HIT_CONNS" -d "${DURATION}s" -s "$LUA" \
        "http://127.0.0.1:$PORT" -- "$WORK/hot.txt" seq \
        >"$WORK/logs/$name.r$round.hits" 2>&1
    wait "$misses" "$evictor"
    local disk_mb
    disk_mb=$(awk -v b="$disk_before" '/^read_bytes/ {printf "%.0f", ($2 - b) / 1048576}' "/proc/$server/io")
    curl -fs "http://127.0.0.1:$PORT/_stats" >"$WORK/logs/$name.r$round.stats.json" || true
    kill "$server"
    wait "$server" || true
    local hits miss
    hits=$(grep '^RESULT' "$WORK/logs/$name.r$round.hits")
    miss=$(grep '^RESULT' "$WORK/logs/$name.r$round.misses")
    field() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
    local line
    line=$(printf '%s\t%s\t%.0f\t%s\t%s\t%s\t%.0f\t%s\t%s' "$name" "$round" \
        "$(awk -v r="$(field "$hits" requests)" -v d="$(field "$hits" duration_us)" 'BEGIN { print r / (d / 1e6) }')" \
        "$(field "$hits" p50_us)" "$(field "$hits" p99_us)" "$(field "$hits" p999_us)" \
        "$(awk -v r="$(field "$miss" requests)" -v d="$(field "$miss" duration_us)" 'BEGIN { print r / (d / 1e6) }')" \
        "$(( $(field "$hits" status) + $(field "$miss" status) + $(field "$hits" timeout) + $(field "$miss" timeout) ))" "$disk_mb")
    echo "$line" >>"$WORK/runs.tsv"
    log "$(echo "$line" | tr '\t' ' ')"
}

printf 'build\tround\thits_per_s\thit_p50_us\thit_p99_us\thit_p999_us\tmisses_per_s\terrors\tdisk_read_mb\n' >"$WORK/runs.tsv"
log "$(nproc) CPUs; $(uname -r); base $BASE, new $NEW"
for round in $(seq "$ROUNDS"); do
    if [ $((round % 2)) -eq 1 ]; then
        run base "$BASE" "$round"
        run new "$NEW" "$round"
    else
        run new "$NEW" "$round"
        run base "$BASE" "$round"
    fi
done

echo
echo "medians over $ROUNDS rounds (hits: $HIT_CONNS connections on $HOT cached URLs; misses: $MISS_CONNS connections, uniform over the catalog, its pages dropped every $EVICT_MS ms)"
echo
python3 - "$WORK/runs.tsv" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
print("| build | hits/s | hit p50 | hit p99 | hit p99.9 | misses/s | errors | read from disk |")
print("|---|--:|--:|--:|--:|--:|--:|--:|")
for build in ("base", "new"):
    mine = [r for r in rows if r["build"] == build]
    med = lambda key: statistics.median(float(r[key]) for r in mine)
    print(f"| {build} | {med('hits_per_s'):.0f} | {med('hit_p50_us') / 1000:.2f} ms "
          f"| {med('hit_p99_us') / 1000:.2f} ms | {med('hit_p999_us') / 1000:.2f} ms "
          f"| {med('misses_per_s'):.0f} | {sum(int(r['errors']) for r in mine)} "
          f"| {med('disk_read_mb'):.0f} MB |")
EOF
