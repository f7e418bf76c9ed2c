#!/usr/bin/env bash
# Requests per second through Varnish (examples/deploy/ccc.vcl) in front of
# `ccc serve`, against `ccc serve` alone, in the same interleaved rounds, on
# 127.0.0.1. Results go to bench/SCALE.md ("Behind an HTTP cache").
#
#   bash bench/deploy.sh                     # as root on Debian, with a Rust toolchain
#   ROUNDS=3 DURATION=5 bash bench/deploy.sh
#
# What it does:
#   1. installs wrk and varnish from Debian when they are missing;
#   2. builds ccc and the seed example in release mode, copies them to
#      $WORK/bin, seeds $WORK/data (100 packages x 3 versions: cdn.db and
#      urls_hot.txt, 80% of lines from 50 hot assets);
#   3. starts ccc serve and varnishd (unjailed, malloc storage, the shipped
#      VCL pointed at that ccc), both pinned to CPU $SERVER_CPU: the cache
#      tier gets the same one core as ccc alone;
#   4. warms Varnish up with wrk for $WARMUP s, then for $ROUNDS rounds runs
#      wrk (pinned to CPU $LOAD_CPU, $CONNS keep-alive connections,
#      `Accept-Encoding: gzip`, urls_hot.txt in order) for $DURATION s
#      against ccc alone and against Varnish, the order alternating every
#      round;
#   5. prints one line per run and the medians, their ratio, and Varnish's
#      hit ratio over the measured runs (varnishstat).
#
# Knobs: WORK (/tmp/ccc-deploy), ROUNDS (5), DURATION (10), WARMUP (10), CONNS (50),
# THREADS (4, ccc's worker threads), SERVER_CPU (0), LOAD_CPU (1),
# SKIP_BUILD=1, SKIP_SEED=1.

set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib/common.sh
. "$REPO/bench/lib/common.sh"
WORK=${WORK:-/tmp/ccc-deploy}
ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-10}
CONNS=${CONNS:-50}
WARMUP=${WARMUP:-10}
THREADS=${THREADS:-4}
SERVER_CPU=${SERVER_CPU:-0}
LOAD_CPU=${LOAD_CPU:-1}
CCC_PORT_=18433
VARNISH_PORT=18434
LUA=$REPO/bench/lib/urls.lua
unset CCC_DB_PATH CCC_PORT CCC_BIND CCC_THREADS CCC_CACHE_CAPACITY CCC_CACHE_BYTES

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

missing=()
command -v wrk >/dev/null || missing+=(wrk)
command -v varnishd >/dev/null || missing+=(varnish)
if [ ${#missing[@]} -gt 0 ]; then
    [ "$(id -u)" = 0 ] || die "needs root to install ${missing[*]}"
    apt-get -o DPkg::Lock::Timeout=300 update -qq
    apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends "${missing[@]}"
fi

mkdir -p "$WORK/bin" "$WORK/logs"
if [ "${SKIP_BUILD:-0}" != 1 ]; then
    log "building ccc and seed (release)"
    (cd "$REPO" && cargo build --release --locked --bin ccc --example seed)
    target=$(target_dir)
    cp "$target/release/ccc" "$target/release/examples/seed" "$WORK/bin/"
    (cd "$REPO" && git describe --always --dirty 2>/dev/null || echo unknown) >"$WORK/bin/commit"
fi
if [ "${SKIP_SEED:-0}" != 1 ]; then
    log "seeding $WORK/data"
    rm -rf "$WORK/data"
    "$WORK/bin/seed" --out "$WORK/data" --packages 100 --versions 3 >/dev/null
fi

pids=()
stop_all() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap stop_all EXIT

taskset -c "$SERVER_CPU" "$WORK/bin/ccc" --db "$WORK/data/cdn.db" serve \
    --port "$CCC_PORT_" --threads "$THREADS" >"$WORK/logs/ccc.out" 2>"$WORK/logs/ccc.err" &
pids+=($!)
# Both of the shipped VCL's origins are the one server measured.
sed -e "s/\.port = \"8333\";/.port = \"$CCC_PORT_\";/" -e "s/\.port = \"8334\";/.port = \"$CCC_PORT_\";/" \
    "$REPO/examples/deploy/ccc.vcl" >"$WORK/ccc.vcl"
rm -rf "$WORK/varnish"
taskset -c "$SERVER_CPU" varnishd -F -j none -n "$WORK/varnish" -a "127.0.0.1:$VARNISH_PORT" \
    -T 127.0.0.1:0 -f "$WORK/ccc.vcl" -s malloc,256m >"$WORK/logs/varnish.out" 2>&1 &
pids+=($!)

first=$(head -n 1 "$WORK/data/urls_hot.txt")
for port in "$CCC_PORT_" "$VARNISH_PORT"; do
    for _ in $(seq 100); do
        curl -sf -o /dev/null "http://127.0.0.1:$port$first" && break
        sleep 0.1
    done
    curl -sf -o /dev/null "http://127.0.0.1:$port$first" || die "nothing answers on port $port"
done

# One wrk run; prints requests/s and the error count.
run() {
    local port=$1 seconds=$2
    timeout $((seconds + 20)) taskset -c "$LOAD_CPU" wrk -t1 -c"$CONNS" -d"${seconds}s" \
        --timeout 5s -s "$LUA" "http://127.0.0.1:$port" -- "$WORK/data/urls_hot.txt" seq \
        >"$WORK/logs/wrk.out" 2>&1
    local line
    line=$(grep '^RESULT ' "$WORK/logs/wrk.out") || die "wrk failed: $(cat "$WORK/logs/wrk.out")"
    eval "$(echo "${line#RESULT }" | tr ' ' '\n' | sed 's/^/local /')"
    local errors=$((connect + read + write + status + timeout))
    awk -v r="$requests" -v d="$duration_us" -v e="$errors" \
        'BEGIN { printf "%.0f %d\n", r / (d / 1e6), e }'
}

counter() {
    varnishstat -n "$WORK/varnish" -1 -f "$1" | awk '{ print $2 }'
}

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
log "warming Varnish up"
run "$VARNISH_PORT" "$WARMUP" >/dev/null
hits0=$(counter MAIN.cache_hit)
misses0=$(counter MAIN.cache_miss)

: >"$WORK/runs.tsv"
for round in $(seq "$ROUNDS"); do
    if [ $((round % 2)) = 1 ]; then order="ccc varnish"; else order="varnish ccc"; fi
    for config in $order; do
        if [ "$config" = ccc ]; then port=$CCC_PORT_; else port=$VARNISH_PORT; fi
        read -r rps errors < <(run "$port" "$DURATION")
        printf '%s\t%s\t%s\t%s\n' "$round" "$config" "$rps" "$errors" | tee -a "$WORK/runs.tsv"
    done
done
sleep 1
hits=$(($(counter MAIN.cache_hit) - hits0))
misses=$(($(counter MAIN.cache_miss) - misses0))

median() {
    awk -v c="$1" '$2 == c { print $3 }' "$WORK/runs.tsv" | sort -n \
        | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
ccc=$(median ccc)
varnish=$(median varnish)
errors=$(awk '{ s += $4 } END { print s }' "$WORK/runs.tsv")
echo
echo "median requests/s: ccc alone $ccc, Varnish -> ccc $varnish," \
    "ratio $(awk -v a="$varnish" -v b="$ccc" 'BEGIN { printf "%.2f", a / b }')"
echo "Varnish hit ratio over the measured runs: $hits hits, $misses misses" \
    "($(awk -v h="$hits" -v m="$misses" 'BEGIN { printf "%.3f%%", 100 * h / (h + m) }'))"
echo "load average (1, 5, 15 min) before: $load_before; after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "socket errors, timeouts and statuses >= 400 in all runs: $errors"
echo "ccc built from $(cat "$WORK/bin/commit" 2>/dev/null || echo unknown)," \
    "$(date -u +%Y-%m-%d), $(nproc) cores: $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -n 1)," \
    "$(varnishd -V 2>&1 | head -n 1)"
