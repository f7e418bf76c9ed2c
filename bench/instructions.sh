#!/usr/bin/env bash
# Instructions per request (user space) of `ccc serve` and of the two
# ceilings, under callgrind: a measure the load of other processes on the
# machine hardly changes, unlike requests per second.
#
#   bash bench/instructions.sh LABEL CCC_BINARY [CONFIG...]
#   WORK=/tmp/ccc-rps bash bench/instructions.sh after target/release/ccc hot-256 ceiling-ccc
#
# It uses what bench/rps.sh left in $WORK: the seeded catalog and URL lists
# ($WORK/data) and the ceiling binaries ($WORK/bin/ceiling, ceiling-ccc).
# Per configuration: start the server under `valgrind --tool=callgrind`,
# warm it up with wrk ($WARMUP s), dump callgrind's counters (which zeroes
# them), load it for $LOAD s, dump again; the second dump's total over the
# requests wrk counted is the figure. Cache hits and misses in that window
# come from /_stats before and after it. The random warm-up of the uniform
# mixes draws other URLs than the load (another seed), or the load would
# hit what the warm-up just cached; uniform-10pct warms up for $FILL s so
# that its entries (a tenth of the assets) are full and every miss evicts,
# as in a long run.
#
# Configurations: hot-256, hot-all (cache as large as the catalog, warmed
# with the hot list), hot-off, uniform-10pct, uniform-off, ceiling
# (tiny_http's server, examples/ceiling.rs), ceiling-ccc (ccc's frontend,
# examples/ceiling_ccc.rs). Default: all of them.
#
# Output: one line per configuration on stdout and appended to
# $WORK/instructions.tsv: label, config, instructions per request,
# requests, hits, misses, evictions. Knobs: WORK, LOAD (15), WARMUP (5),
# FILL (40), CONNS (10), THREADS (4), PORT (18343).
#
# CACHE_SIM=1 also simulates the data caches (callgrind's --cache-sim: a
# 48 KiB L1 and a 2 MiB last level, as one core of the AMD EPYC host in
# bench/RPS.md has) and appends last-level read and write misses per
# request to each line; the dumps keep function names whole, so
# bench/lib/callgrind_self.py can compare two of them function by function.

set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORK=${WORK:-/tmp/ccc-rps}
LOAD=${LOAD:-15}
WARMUP=${WARMUP:-5}
FILL=${FILL:-40}
CONNS=${CONNS:-10}
THREADS=${THREADS:-4}
PORT=${PORT:-18343}
LUA=$REPO/bench/lib/urls.lua
unset CCC_DB_PATH CCC_PORT CCC_BIND CCC_THREADS CCC_CACHE_CAPACITY CCC_CACHE_BYTES

die() { echo "error: $*" >&2; exit 1; }

[ $# -ge 2 ] || die "usage: bash bench/instructions.sh LABEL CCC_BINARY [CONFIG...]"
LABEL=$1
CCC=$2
shift 2
CONFIGS=("$@")
[ ${#CONFIGS[@]} -gt 0 ] || CONFIGS=(hot-256 hot-all hot-off uniform-10pct uniform-off ceiling ceiling-ccc)
# uniform-10pct's cache: a tenth of the catalog's assets (4,000 of the seed's
# 40,000; 250 of the 2,500 files bench/rps.sh seeds with FILES=1).
TENTH=$(($(wc -l <"$WORK/data/urls.txt") / 10))
[ -x "$CCC" ] || die "$CCC is not an executable"
[ -f "$WORK/data/cdn.db" ] || die "no catalog in $WORK/data: run bench/rps.sh first"
command -v valgrind >/dev/null || die "needs valgrind"
command -v wrk >/dev/null || die "needs wrk"
MEDIAN_SIZE=$(find -L "$WORK/export" -name '*.gz' -printf '%s\n' | sort -n \
    | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
OUT=$WORK/callgrind/$LABEL
mkdir -p "$OUT"

wait_http() {
    local i
    for i in $(seq 600); do
        curl -s -o /dev/null --max-time 2 "$1" && return 0
        sleep 0.2
    done
    return 1
}

# Cache hits, misses and evictions so far, as "hits misses evictions"
# (0 0 0 for a ceiling).
cache_counts() {
    curl -s --max-time 10 "$1/_stats" \
        | sed -n 's/.*"hits":\([0-9]*\),"misses":\([0-9]*\),"evictions":\([0-9]*\).*/\1 \2 \3/p' \
        | head -1 | grep . || echo "0 0 0"
}

load() { # seconds list mode [seed]
    wrk -t1 -c"$CONNS" -d"$1s" -s "$LUA" "http://127.0.0.1:$PORT" -- "$WORK/data/$2" "$3" ${4:-} \
        | sed -n 's/^RESULT .*requests=\([0-9]*\).*/\1/p'
}

SIM=()
[ "${CACHE_SIM:-0}" = 1 ] && SIM=(--cache-sim=yes --D1=49152,12,64 --LL=2097152,16,64 --compress-strings=no --compress-pos=no)

NO_RECOMPRESS=$("$CCC" serve --help 2>/dev/null || true)
for config in "${CONFIGS[@]}"; do
    list=urls_hot.txt mode=seq warmup=$WARMUP
    case $config in
        hot-256) args=(--cache-capacity 256 --cache-bytes 64MiB) ;;
        hot-all) args=(--cache-capacity 50000 --cache-bytes 2GiB) ;;
        hot-off) args=(--cache-capacity 0) ;;
        uniform-10pct)
            args=(--cache-capacity "$TENTH" --cache-bytes 2GiB) list=urls.txt mode=random warmup=$FILL
            ;;
        uniform-off) args=(--cache-capacity 0) list=urls.txt mode=random ;;
        ceiling | ceiling-ccc) ;;
        *) die "unknown configuration $config" ;;
    esac
    # No brotli upgrade pass: on a fresh seed it would rewrite streams under
    # the load and count its own work (a build from before it has no flag).
    [[ $config == ceiling* || $NO_RECOMPRESS != *--no-recompress* ]] || args+=(--no-recompress)
    rm -f "$OUT/$config".*
    case $config in
        ceiling*) cmd=("$WORK/bin/${config/-/_}" --port "$PORT" --threads "$THREADS" --size "$MEDIAN_SIZE") ;;
        *) cmd=("$CCC" --db "$WORK/data/cdn.db" serve --port "$PORT" --threads "$THREADS" "${args[@]}") ;;
    esac
    valgrind --tool=callgrind "${SIM[@]}" --callgrind-out-file="$OUT/$config.%p" "${cmd[@]}" \
        >"$OUT/$config.log" 2>&1 &
    pid=$!
    base="http://127.0.0.1:$PORT"
    wait_http "$base$(head -1 "$WORK/data/$list")" || { kill "$pid"; die "$config did not start"; }
    load "$warmup" "$list" "$mode" 4242 >/dev/null
    read -r hits0 misses0 evictions0 < <(cache_counts "$base")
    callgrind_control -d "$pid" >/dev/null
    requests=$(load "$LOAD" "$list" "$mode")
    callgrind_control -d "$pid" >/dev/null
    read -r hits1 misses1 evictions1 < <(cache_counts "$base")
    kill "$pid"
    wait "$pid" 2>/dev/null || true
    total=$(sed -n 's/^summary: *\([0-9]*\).*/\1/p; s/^totals: *\([0-9]*\).*/\1/p' "$OUT/$config.$pid.2" | head -1)
    [ -n "$total" ] && [ "${requests:-0}" -gt 0 ] || die "$config: no dump or no requests"
    line=$(printf '%s\t%s\t%d\t%d\t%d\t%d\t%d' "$LABEL" "$config" $((total / requests)) \
        "$requests" $((hits1 - hits0)) $((misses1 - misses0)) $((evictions1 - evictions0)))
    if [ ${#SIM[@]} -gt 0 ]; then
        # summary: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw
        line+=$(awk -v r="$requests" '/^summary:/ { printf "\t%.1f\t%.1f", $9 / r, $10 / r; exit }' \
            "$OUT/$config.$pid.2")
    fi
    echo "$line"
    echo "$line" >>"$WORK/instructions.tsv"
done
