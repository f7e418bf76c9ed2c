#!/usr/bin/env bash
# `ccc causal` on the seeded benchmark catalog (500 packages x 5 versions)
# under wrk load, as recorded in bench/CAUSAL.md.
#
#   bash bench/causal.sh                    # both loads, writes $WORK/{hot,uniform}.*
#   LOADS=uniform ROUNDS=3 bash bench/causal.sh
#
# The server (with the profiler's controller) is pinned to CPU 0 and wrk to
# CPU 1, as in bench/rps.sh, whose tools, catalog and URL lists it reuses
# (run that first). For each load (`hot`: urls_hot.txt in order, the 80/20 set;
# `uniform`: uniformly random lines of urls.txt) it starts
# `ccc causal --load external`, then wrk with 50 keep-alive connections for
# long enough to cover the sweep, and keeps the table, the JSON, the Coz
# profile and the plot. Everything targets 127.0.0.1; wrk stops by itself.
#
# With AB_BEFORE=path AB_AFTER=path it skips profiling and compares two builds
# instead (see the end of this file).
#
# Knobs: WORK (/tmp/ccc-rps), CCC (the ccc binary to profile; default
# $WORK/bin/ccc), LOADS ("hot uniform"), ROUNDS (5), SPEEDUPS (0,25,50),
# SITES (all), CONNS (50), THREADS (4), CACHE (256), IDLE_CORES (spin; `sleep`
# leaves idle cores to the OS), SITE_CLOCK (wall), OUT ($WORK/causal: where the
# results go).

set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORK=${WORK:-/tmp/ccc-rps}
LOADS=${LOADS:-hot uniform}
ROUNDS=${ROUNDS:-5}
SPEEDUPS=${SPEEDUPS:-0,25,50}
SITES=${SITES:-}
CONNS=${CONNS:-50}
THREADS=${THREADS:-4}
CACHE=${CACHE:-256}
IDLE_CORES=${IDLE_CORES:-spin}
SITE_CLOCK=${SITE_CLOCK:-wall}
PORT=18400
unset CCC_DB_PATH CCC_PORT CCC_BIND CCC_THREADS CCC_CACHE_CAPACITY CCC_CACHE_BYTES

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
# No brotli upgrade pass, as in bench/rps.sh: on a fresh seed it rewrites
# streams under the load. A build from before the pass has no such flag.
no_recompress() {
    [[ $("$1" "$2" --help 2>/dev/null || true) != *--no-recompress* ]] || echo --no-recompress
}

if [ ! -f "$WORK/data/cdn.db" ] || ! command -v wrk >/dev/null; then
    log "error: run bench/rps.sh first: it installs wrk and seeds $WORK/data"
    exit 1
fi
CCC=${CCC:-$WORK/bin/ccc}
OUT=${OUT:-$WORK/causal}
mkdir -p "$OUT"

[ -n "${AB_BEFORE:-}" ] && LOADS=""
for load in $LOADS; do
    case $load in
        hot) urls=$WORK/data/urls_hot.txt mode=seq ;;
        uniform) urls=$WORK/data/urls.txt mode=random ;;
        *) log "unknown load $load"; exit 2 ;;
    esac
    out=$OUT/$load
    log "profiling under the $load load -> $out.*"
    site_args=()
    [ -n "$SITES" ] && site_args=(--sites "$SITES")
    taskset -c 0 "$CCC" --db "$WORK/data/cdn.db" causal --port "$PORT" \
        --threads "$THREADS" --cache-capacity "$CACHE" --load external \
        --rounds "$ROUNDS" --speedups "$SPEEDUPS" --seed 41 "${site_args[@]}" \
        --idle-cores "$IDLE_CORES" --site-clock "$SITE_CLOCK" \
        --json-out "$out.json" --coz-out "$out.coz" --plot "$out.svg" \
        $(no_recompress "$CCC" causal) >"$out.txt" 2>"$out.log" &
    profiler=$!
    for _ in $(seq 100); do
        curl -fsS -o /dev/null "http://127.0.0.1:$PORT/healthz" 2>/dev/null && break
        sleep 0.1
    done
    # Long enough for warm-up plus every cell; the profiler exits when done.
    taskset -c 1 wrk -t1 -c"$CONNS" -d300s --timeout 5s -s "$REPO/bench/lib/urls.lua" \
        "http://127.0.0.1:$PORT" -- "$urls" "$mode" >"$out.wrk" 2>&1 &
    loadgen=$!
    wait "$profiler" || log "ccc causal exited with $?"
    kill "$loadgen" 2>/dev/null || true
    wait "$loadgen" 2>/dev/null || true
    cat "$out.txt"
done

# A/B of two builds under plain `ccc serve`, the way the profile was taken
# (same pinning, connections, cache and URL mix): AB_BEFORE and AB_AFTER name
# the binaries, AB_LOAD the load (uniform), AB_RUNS alternating 10 s runs of
# each (5). Prints requests/s per run and the ratio of medians.
if [ -n "${AB_BEFORE:-}" ] && [ -n "${AB_AFTER:-}" ]; then
    AB_LOAD=${AB_LOAD:-uniform}
    AB_RUNS=${AB_RUNS:-5}
    case $AB_LOAD in
        hot) urls=$WORK/data/urls_hot.txt mode=seq ;;
        *) urls=$WORK/data/urls.txt mode=random ;;
    esac
    declare -A rps
    for run in $(seq "$AB_RUNS"); do
        for build in before after; do
            bin=$AB_BEFORE
            [ "$build" = after ] && bin=$AB_AFTER
            taskset -c 0 "$bin" --db "$WORK/data/cdn.db" serve --port "$PORT" \
                --threads "$THREADS" --cache-capacity "$CACHE" $(no_recompress "$bin" serve) \
                >/dev/null 2>&1 &
            server=$!
            for _ in $(seq 100); do
                curl -fsS -o /dev/null "http://127.0.0.1:$PORT/healthz" 2>/dev/null && break
                sleep 0.1
            done
            taskset -c 1 wrk -t1 -c"$CONNS" -d2s -s "$REPO/bench/lib/urls.lua" \
                "http://127.0.0.1:$PORT" -- "$urls" "$mode" >/dev/null 2>&1
            r=$(taskset -c 1 wrk -t1 -c"$CONNS" -d10s --timeout 5s -s "$REPO/bench/lib/urls.lua" \
                "http://127.0.0.1:$PORT" -- "$urls" "$mode" 2>&1 \
                | awk '/^Requests\/sec/ { print $2 }')
            # TERM, not INT: a shell starts background jobs with SIGINT
            # ignored, and ccc serve leaves an ignored SIGINT ignored.
            kill -TERM "$server"
            wait "$server" 2>/dev/null || true
            rps[$build]="${rps[$build]:-} $r"
            log "A/B run $run $build: $r requests/s"
        done
    done
    median() { tr ' ' '\n' | grep . | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
    b=$(echo "${rps[before]}" | median)
    a=$(echo "${rps[after]}" | median)
    echo "A/B ($AB_LOAD, cache $CACHE, $AB_RUNS x 10 s): before${rps[before]} (median $b); after${rps[after]} (median $a); after/before = $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", a / b }')"
fi
