#!/usr/bin/env bash
# Requests per second of `ccc serve` against nginx (gzip_static) and against
# two ceilings that answer a fixed body with no lookup: plain hyper on tokio
# (HTTP/1, examples/ceiling.rs, configuration `ceiling`) and ccc's own
# transport (src/transport/, examples/ceiling_ccc.rs, `ceiling-ccc`), on the
# seeded benchmark catalog (500 packages x 5 versions), all on 127.0.0.1.
#
#   bash bench/rps.sh                 # as root on a Debian machine with a Rust toolchain
#   ROUNDS=3 DURATION=5 bash bench/rps.sh
#
# What it does, in one run:
#   1. installs wrk, nginx-light and curl from Debian when they are missing;
#   2. builds ccc, the seed example and both ceiling examples in release mode
#      and copies the binaries to $WORK/bin (a rebuild of the work tree during
#      the run cannot swap them);
#   3. seeds the catalog ($WORK/data: cdn.db, urls.txt, urls_hot.txt) and
#      exports it ($WORK/export, every asset with its .gz sibling);
#   4. for ROUNDS rounds, round-robin over the configurations below (the
#      order rotates every round), starts the server pinned to CPU
#      $SERVER_CPU, checks one URL answers 200 with Content-Encoding: gzip,
#      warms it up, then runs wrk pinned to CPU $LOAD_CPU for $DURATION
#      seconds with $CONNS keep-alive connections, reading the server's
#      utime+stime from /proc/PID/stat (every nginx process) before and after;
#   5. writes $WORK/runs.tsv (one line per run) and $WORK/summary.md
#      (medians, min/max, CPU-seconds per 1000 requests, ratios).
#
# Every request carries `Accept-Encoding: gzip`. A run with any socket error,
# timeout or status >= 400 is flagged in runs.tsv and in the summary; ccc's
# own /_stats (by status, cache hits/misses) is kept per run in $WORK/stats/.
#
# Environment knobs: WORK (default /tmp/ccc-rps), FILES (files per version
# of the seed: unset gives its default of 16, 40,000 assets; 1 gives 2,500
# assets that nginx's open_file_cache holds whole), ROUNDS (5), DURATION (10 s),
# WARMUP (2 s), CONNS (50), THREADS (unset: `ccc serve` and both ceilings
# choose, one tokio runtime thread per core they may run on, so 1 when
# pinned to SERVER_CPU; set it to pass --threads), BASE_THREADS (4: passed
# to BASE_BIN, whose --threads meant worker threads before the move to
# hyper: what it picked on an unpinned 2-core machine; empty passes no
# --threads, as for ccc, for a base built after that move), SERVER_CPU (0),
# LOAD_CPU (1; SERVER_CPU and LOAD_CPU may list CPUs, 0,1: when they share
# one, wrk's time on it counts as others'), NGINX_WORKERS (1: nginx's
# worker_processes), IDLE_MAX_BUSY (25: before each run wait, at most
# IDLE_WAIT=30 s per run and IDLE_BUDGET=300 s in all, until the other
# processes keep the machine under this % busy),
# SKIP_INSTALL=1, SKIP_BUILD=1, SKIP_SEED=1 (reuse what $WORK has),
# SUMMARY_ONLY=1 (print the tables again from $WORK/runs.tsv), ONLY (a
# regular expression: run only the configurations it matches),
# BASE_BIN (another build of ccc, say the commit before a change: adds the
# configurations base-off-hot, base-256-hot, base-all-hot,
# base-10pct-uniform and base-off-uniform, run with that binary in the
# same rounds, for before/after ratios; BASE_COMMIT names it in
# machine.txt; the threads each server reported at start are in
# $WORK/threads.txt),
# QUIET_MAX_OTHERS (10: the second table keeps only runs where other
# processes took at most this % of the server's CPU), CCC_COMMIT
# (what to report as the commit when the tree is not a git work tree).

set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib/common.sh
. "$REPO/bench/lib/common.sh"
WORK=${WORK:-/tmp/ccc-rps}
ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-10}
WARMUP=${WARMUP:-2}
CONNS=${CONNS:-50}
THREADS=${THREADS:-}
BASE_THREADS=${BASE_THREADS-4}
SERVER_CPU=${SERVER_CPU:-0}
LOAD_CPU=${LOAD_CPU:-1}
NGINX_WORKERS=${NGINX_WORKERS:-1}
IDLE_MAX_BUSY=${IDLE_MAX_BUSY:-25}
IDLE_WAIT=${IDLE_WAIT:-30}
CCC_PORT_=18333
CEILING_PORT=18334
CEILING_CCC_PORT=18336
NGINX_PORT=18335
LUA=$REPO/bench/lib/urls.lua
# The server's environment must not carry someone's CCC_* settings.
unset CCC_DB_PATH CCC_PORT CCC_BIND CCC_THREADS CCC_CACHE_CAPACITY CCC_CACHE_BYTES

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# ---------------------------------------------------------------- tools
install_tools() {
    local missing=()
    command -v wrk >/dev/null || missing+=(wrk)
    command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || missing+=(nginx-light)
    command -v curl >/dev/null || missing+=(curl)
    command -v taskset >/dev/null || missing+=(util-linux)
    if [ ${#missing[@]} -gt 0 ]; then
        [ "$(id -u)" = 0 ] || die "needs root to install ${missing[*]}"
        log "installing ${missing[*]}"
        apt-get update -qq
        if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"; then
            # nginx-light is gone from newer Debian releases; plain nginx has
            # gzip_static too.
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
                "${missing[@]/nginx-light/nginx}"
        fi
    fi
    NGINX=$(command -v nginx || echo /usr/sbin/nginx)
    "$NGINX" -V 2>&1 | grep -q -- --with-http_gzip_static_module \
        || die "$NGINX lacks the gzip_static module"
    command -v cargo >/dev/null \
        || die "needs a Rust toolchain (rustc >= 1.85, see Cargo.toml) on PATH"
    [ "$(nproc)" -ge 2 ] || log "warning: one CPU only: server and load generator share it"
}

# ---------------------------------------------------------------- build, seed, export
build() {
    log "building ccc, seed and the ceilings (release)"
    (cd "$REPO" && cargo build --release --locked --bin ccc --example seed --example ceiling \
        --example ceiling_ccc)
    local target
    target=$(target_dir)
    mkdir -p "$WORK/bin"
    cp "$target/release/ccc" "$target/release/examples/seed" \
        "$target/release/examples/ceiling" "$target/release/examples/ceiling_ccc" "$WORK/bin/"
}

seed() {
    log "seeding 500 packages x 5 versions${FILES:+ x $FILES files} into $WORK/data"
    # shellcheck disable=SC2046 # no words unless FILES is set
    "$WORK/bin/seed" --out "$WORK/data" --packages 500 --versions 5 $([ -z "${FILES:-}" ] || echo --files "$FILES")
    log "exporting to $WORK/export"
    rm -rf "$WORK/export"
    "$WORK/bin/ccc" --db "$WORK/data/cdn.db" export "$WORK/export"
}

# ---------------------------------------------------------------- measuring helpers
# CPU ticks of a list of processes, as "user system": fields 14 (utime)
# and 15 (stime) of /proc/PID/stat, counted after the `(comm)` field, which
# may hold spaces. A process's counts include all its threads, dead ones too.
cpu_ticks() {
    local user=0 sys=0 pid u s
    for pid in "$@"; do
        read -r u s < <(sed 's/^.*) //' "/proc/$pid/stat" 2>/dev/null | awk '{print $12, $13}') || true
        user=$((user + ${u:-0}))
        sys=$((sys + ${s:-0}))
    done
    echo "$user $sys"
}

# Busy ticks (all but idle and iowait) so far of the CPUs listed as taskset
# takes them without ranges (0, or 0,1), from /proc/stat.
core_busy() {
    awk -v list=",$1," '$1 ~ /^cpu[0-9]+$/ && index(list, "," substr($1, 4) ",") {
        t += $2 + $3 + $4 + $7 + $8 + $9 } END { print t + 0 }' /proc/stat
}

# Waits (IDLE_WAIT s at most, and IDLE_BUDGET s over the whole run) until
# other processes keep the machine under IDLE_MAX_BUSY % busy; leaves the
# last reading in BUSY.
IDLE_LEFT=${IDLE_BUDGET:-300}
wait_for_quiet() {
    local waited=0 busy
    busy=$(busy_pct)
    while [ "$busy" -gt "$IDLE_MAX_BUSY" ] && [ "$waited" -lt "$IDLE_WAIT" ] \
        && [ "$IDLE_LEFT" -gt 0 ]; do
        sleep 2
        waited=$((waited + 3))
        IDLE_LEFT=$((IDLE_LEFT - 3))
        busy=$(busy_pct)
    done
    BUSY=$busy
}

wait_http() { # URL: until it answers at all, 10 s at most
    local i
    for i in $(seq 100); do
        curl -s -o /dev/null --max-time 1 "$1" && return 0
        sleep 0.1
    done
    return 1
}

# Checks one asset URL answers 200 with Content-Encoding: gzip; three tries,
# since a loaded machine can make one curl time out. (No `echo | head`:
# under pipefail, head closing the pipe early can fail the check.)
check_gzip() {
    local url=$1 headers try
    for try in 1 2 3; do
        headers=$(curl -s -D - -o /dev/null --max-time 5 -H 'Accept-Encoding: gzip' "$url" | tr -d '\r')
        case ${headers%%$'\n'*} in
            *' 200'*) grep -qi '^content-encoding: gzip' <<<"$headers" && return 0 ;;
        esac
        sleep 1
    done
    echo "$headers" >&2
    return 1
}

# ---------------------------------------------------------------- servers
SERVER_PID=
SERVER_PIDS=()

start_ccc() { # binary threads cache-capacity cache-bytes [VAR=value...] (- : the default)
    local bin=$1 threads=() cache=()
    [ -z "$2" ] || threads=(--threads "$2")
    shift 2
    [ "$1" = - ] || cache+=(--cache-capacity "$1")
    [ "$2" = - ] || cache+=(--cache-bytes "$2")
    # No brotli upgrade pass: a fresh seed is not at quality 11, and the pass
    # would rewrite streams and move the generation during the runs. A
    # build from before the pass has no such flag.
    local help
    help=$("$bin" serve --help 2>/dev/null || true)
    [[ $help != *--no-recompress* ]] || cache+=(--no-recompress)
    env "${@:3}" taskset -c "$SERVER_CPU" "$bin" --db "$WORK/data/cdn.db" serve \
        --port "$CCC_PORT_" "${threads[@]}" "${cache[@]}" >"$WORK/logs/server.out" 2>&1 &
    SERVER_PID=$!
    SERVER_PIDS=("$SERVER_PID")
    PORT=$CCC_PORT_
}

start_ceiling() { # binary port [flag...]
    local threads=()
    [ -z "$THREADS" ] || threads=(--threads "$THREADS")
    taskset -c "$SERVER_CPU" "$WORK/bin/$1" --port "$2" \
        "${threads[@]}" --size "$MEDIAN_SIZE" "${@:3}" >"$WORK/logs/server.out" 2>&1 &
    SERVER_PID=$!
    SERVER_PIDS=("$SERVER_PID")
    PORT=$2
}

write_nginx_conf() {
    mkdir -p "$WORK/nginx/tmp"
    # open_file_cache keeps descriptors open: stay under what this process
    # may open (a sandbox may forbid raising the hard limit).
    local nofile
    nofile=$(ulimit -Hn)
    [ "$nofile" = unlimited ] && nofile=131072
    [ "$nofile" -gt 131072 ] && nofile=131072
    local cached=$((nofile - 2048))
    cat >"$WORK/nginx/nginx.conf" <<EOF
# $NGINX_WORKERS worker(s), one per core ccc gets; no access log (ccc keeps
# none by default); keep-alive connections never closed by the server
# during a run (nor are ccc's: wrk's never idle); open_file_cache as a
# static origin would run, as large as the descriptor limit ($nofile)
# allows.
worker_processes $NGINX_WORKERS;
worker_rlimit_nofile $nofile;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/error.log warn;
events { worker_connections 1024; }
http {
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    access_log off;
    sendfile on;
    tcp_nodelay on;
    keepalive_timeout 65;
    keepalive_requests 100000000;
    open_file_cache max=$cached inactive=60s;
    open_file_cache_valid 60s;
    client_body_temp_path $WORK/nginx/tmp/body;
    proxy_temp_path $WORK/nginx/tmp/proxy;
    fastcgi_temp_path $WORK/nginx/tmp/fastcgi;
    uwsgi_temp_path $WORK/nginx/tmp/uwsgi;
    scgi_temp_path $WORK/nginx/tmp/scgi;
    server {
        listen 127.0.0.1:$NGINX_PORT;
        location /assets/ {
            alias $WORK/export/;
            gzip_static on;
            add_header Cache-Control "public, max-age=31536000, immutable";
            add_header Vary "Accept-Encoding";
        }
    }
}
EOF
    "$NGINX" -t -c "$WORK/nginx/nginx.conf" -p "$WORK/nginx" 2>"$WORK/logs/nginx-t.log" \
        || { cat "$WORK/logs/nginx-t.log" >&2; die "nginx config rejected"; }
}

start_nginx() {
    taskset -c "$SERVER_CPU" "$NGINX" -c "$WORK/nginx/nginx.conf" -p "$WORK/nginx" \
        -g 'daemon off;' >"$WORK/logs/server.out" 2>&1 &
    SERVER_PID=$!
    PORT=$NGINX_PORT
    local i
    for i in $(seq 50); do
        [ -n "$(pgrep -P "$SERVER_PID" || true)" ] && break
        sleep 0.1
    done
    local workers
    mapfile -t workers < <(pgrep -P "$SERVER_PID" || true)
    SERVER_PIDS=("$SERVER_PID" "${workers[@]}")
}

stop_server() {
    [ -n "$SERVER_PID" ] || return 0
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    local i
    for i in $(seq 50); do
        kill -0 "$SERVER_PID" 2>/dev/null || break
        sleep 0.1
    done
    kill -KILL "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=
    SERVER_PIDS=()
}
trap stop_server EXIT

# wrk pinned to the load CPU; prints the RESULT line's key=value pairs.
load() { # seconds file mode
    timeout $(($1 + 20)) taskset -c "$LOAD_CPU" wrk -t1 -c"$CONNS" -d"$1"s --timeout 5s \
        -s "$LUA" "http://127.0.0.1:$PORT" -- "$2" "$3" >"$WORK/logs/wrk.out" 2>&1 \
        || { cat "$WORK/logs/wrk.out" >&2; return 1; }
    grep '^RESULT ' "$WORK/logs/wrk.out" | sed 's/^RESULT //'
}

# Fills ccc's cache with every URL of a list: wrk walks the list in order
# until /_stats counts that many entries (120 s at most).
fill_cache() { # base-url list
    local want have=0 i wrk_pid
    want=$(grep -c . "$2")
    taskset -c "$LOAD_CPU" wrk -t1 -c"$CONNS" -d120s -s "$LUA" "$1" -- "$2" seq \
        >"$WORK/logs/fill.out" 2>&1 &
    wrk_pid=$!
    for i in $(seq 1200); do
        have=$(curl -s --max-time 2 "$1/_stats" | sed -n 's/.*"entries":\([0-9]*\).*/\1/p')
        [ "${have:-0}" -ge "$want" ] && break
        sleep 0.1
    done
    kill "$wrk_pid" 2>/dev/null || true
    wait "$wrk_pid" 2>/dev/null || true
    [ "${have:-0}" -ge "$want" ] || log "warning: the cache holds ${have:-0} of $want assets after filling"
}

# ---------------------------------------------------------------- configurations
# name | server | cache entries | cache bytes (- : serve's default) | URL list | mode | warm-up list
# | warm-up mode (`fill`: until ccc's cache holds the whole list)
# | optional VAR=value environment for ccc, or flags for a ceiling
CONFIGS=(
    "ccc-off-hot|ccc|0|64MiB|urls_hot.txt|seq|urls_hot.txt|seq"
    "ccc-256-hot|ccc|256|64MiB|urls_hot.txt|seq|urls_hot.txt|seq"
    "ccc-all-hot|ccc|50000|2GiB|urls_hot.txt|seq|urls.txt|fill"
    "ccc-10pct-uniform|ccc|tenth|2GiB|urls.txt|random|urls.txt|random"
    "ccc-all-uniform|ccc|50000|2GiB|urls.txt|random|urls.txt|fill"
    "ccc-off-uniform|ccc|0|64MiB|urls.txt|random|urls.txt|random"
    "ccc-default-hot|ccc|-|-|urls_hot.txt|seq|urls_hot.txt|seq"
    "ccc-default-uniform|ccc|-|-|urls.txt|random|urls.txt|random"
    "nginx-hot|nginx|-|-|urls_hot.txt|seq|urls_hot.txt|seq"
    "nginx-uniform|nginx|-|-|urls.txt|random|urls.txt|random"
    "ceiling|ceiling|-|-|urls_hot.txt|seq|urls_hot.txt|seq"
    "ceiling-ccc|ceiling-ccc|-|-|urls_hot.txt|seq|urls_hot.txt|seq"
)

if [ -n "${BASE_BIN:-}" ]; then
    CONFIGS+=(
        "base-off-hot|base|0|64MiB|urls_hot.txt|seq|urls_hot.txt|seq"
        "base-256-hot|base|256|64MiB|urls_hot.txt|seq|urls_hot.txt|seq"
        "base-all-hot|base|50000|2GiB|urls_hot.txt|seq|urls.txt|fill"
        "base-10pct-uniform|base|tenth|2GiB|urls.txt|random|urls.txt|random"
        "base-off-uniform|base|0|64MiB|urls.txt|random|urls.txt|random"
    )
fi

# ONLY: an extended regular expression; only the configurations whose name
# matches it run (more rounds of the ones a question is about).
if [ -n "${ONLY:-}" ]; then
    kept=()
    for cfg in "${CONFIGS[@]}"; do
        [[ ${cfg%%|*} =~ $ONLY ]] && kept+=("$cfg")
    done
    [ "${#kept[@]}" -gt 0 ] || die "ONLY=$ONLY matches no configuration"
    CONFIGS=("${kept[@]}")
fi

run_one() { # config round
    local name server entries bytes list mode wlist wmode
    local server_env
    IFS='|' read -r name server entries bytes list mode wlist wmode server_env <<<"$1"
    # `tenth`: a cache of a tenth of the catalog's assets, whatever its size.
    [ "$entries" != tenth ] || entries=$(($(wc -l <"$WORK/data/urls.txt") / 10))
    local round=$2 busy
    wait_for_quiet
    busy=$BUSY
    local loadavg
    loadavg=$(cut -d' ' -f1 /proc/loadavg)
    # shellcheck disable=SC2086 # $server_env: VAR=value words, split on purpose
    case $server in
        ccc) start_ccc "${CCC_BIN:-$WORK/bin/ccc}" "$THREADS" "$entries" "$bytes" $server_env ;;
        base) start_ccc "$WORK/bin/ccc-base" "$BASE_THREADS" "$entries" "$bytes" $server_env ;;
        nginx) start_nginx ;;
        ceiling) start_ceiling ceiling "$CEILING_PORT" $server_env ;;
        ceiling-ccc) start_ceiling ceiling_ccc "$CEILING_CCC_PORT" $server_env ;;
    esac
    local base="http://127.0.0.1:$PORT"
    local first
    first=$(head -1 "$WORK/data/$list")
    wait_http "$base$first" || { cat "$WORK/logs/server.out" >&2; die "$name did not start"; }
    check_gzip "$base$first" || die "$name: $first is not a 200 gzip answer"
    # What the server says it runs with (ccc: "with N threads" or, before
    # hyper, "with N workers"; the ceilings: "N threads"), once per name.
    local threads_said="1 worker process (worker_processes 1)"
    [ "$server" = nginx ] || threads_said=$(grep -oE '[0-9]+ (threads?|workers?)' \
        "$WORK/logs/server.out" | head -1 || true)
    grep -q "^$name	" "$WORK/threads.txt" 2>/dev/null \
        || printf '%s\t%s\n' "$name" "$threads_said" >>"$WORK/threads.txt"
    if [ "$wmode" = fill ]; then
        fill_cache "$base" "$WORK/data/$wlist"
    else
        load "$WARMUP" "$WORK/data/$wlist" "$wmode" >/dev/null || die "$name: warm-up failed"
    fi
    local before after core_before core_after
    before=$(cpu_ticks "${SERVER_PIDS[@]}")
    core_before=$(core_busy "$SERVER_CPU")
    local result
    result=$(load "$DURATION" "$WORK/data/$list" "$mode") || die "$name: wrk failed"
    core_after=$(core_busy "$SERVER_CPU")
    after=$(cpu_ticks "${SERVER_PIDS[@]}")
    if [ "$server" = ccc ] || [ "$server" = base ]; then
        curl -s --max-time 5 "$base/_stats" >"$WORK/stats/$name.r$round.json" || true
    fi
    stop_server
    local requests duration_us bytes_ connect read write status timeout p50_us p99_us errors
    eval "$(echo "$result" | tr ' ' '\n' | sed 's/^bytes=/bytes_=/' | grep -E '^[a-z_0-9]+=[0-9]+$')"
    errors=$((connect + read + write + status + timeout))
    if [ "${requests:-0}" -eq 0 ]; then
        log "$name round $round: no request answered; see $WORK/logs/"
        requests=0 errors=$((errors + 1)) bytes_=0
        cp "$WORK/logs/wrk.out" "$WORK/logs/failed-$name.r$round.wrk.out"
    fi
    local rps cpu_s user_s sys_s per_1k per_req_bytes
    rps=$(awk -v r="$requests" -v d="$duration_us" 'BEGIN { printf "%.0f", r / (d / 1e6) }')
    read -r user_s sys_s cpu_s < <(awk -v b="$before" -v a="$after" -v hz="$HZ" 'BEGIN {
        split(b, x, " "); split(a, y, " ");
        u = (y[1] - x[1]) / hz; s = (y[2] - x[2]) / hz;
        printf "%.2f %.2f %.2f\n", u, s, u + s }')
    per_1k=$(awk -v c="$cpu_s" -v r="$requests" 'BEGIN { printf "%.4f", (r > 0 ? 1000 * c / r : 0) }')
    per_req_bytes=$((requests > 0 ? bytes_ / requests : 0))
    # CPU time other processes took on the server's core during the run, as
    # a share of the run: what the server could not use.
    local others_pct
    others_pct=$(awk -v b="$core_before" -v a="$core_after" -v c="$cpu_s" -v hz="$HZ" -v d="$duration_us" \
        'BEGIN { o = (a - b) / hz - c; if (o < 0) o = 0; printf "%.0f", (d > 0 ? 100 * o / (d / 1e6) : 0) }')
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
        "$name" "$round" "$rps" "$requests" "$cpu_s" "$per_1k" "$errors" "$status" \
        "$per_req_bytes" "$p50_us" "$p99_us" "$busy" "$loadavg" "$user_s" "$sys_s" "$others_pct" >>"$WORK/runs.tsv"
    log "$(printf '%-18s round %d: %6d req/s, %.3f CPU-s/1k req, %d errors, %d B/resp, p99 %d us (machine %d%% busy before, others took %d%% of the server CPU)' \
        "$name" "$round" "$rps" "$per_1k" "$errors" "$per_req_bytes" "$p99_us" "$busy" "$others_pct")"
}

# ---------------------------------------------------------------- summary
# MAX_OTHERS: only runs where other processes took at most this % of the
# server's CPU count (the share can pass 100% on a 2-core machine: other
# processes run on the server's core while it runs too; "all" is any share).
MAX_OTHERS=1000000
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) { print 0 } else if (NR % 2) { print v[(NR + 1) / 2] } else { print (v[NR / 2] + v[NR / 2 + 1]) / 2 } }'; }
column_of() {
    awk -F'\t' -v n="$1" -v c="$2" -v m="$MAX_OTHERS" 'NR > 1 && $1 == n && $16 <= m { print $c }' "$WORK/runs.tsv"
}
med() { column_of "$1" "$2" | median; }
ratio_of() { awk -v a="$(med "$2" "$1")" -v b="$(med "$3" "$1")" 'BEGIN { if (a > 0 && b > 0) printf "%.2fx", a / b; else printf "n/a" }'; }
ratio() { ratio_of 3 "$1" "$2"; }
verdict() { # ratio target
    case $1 in n/a) echo "no data"; return ;; esac
    awk -v r="${1%x}" -v t="$2" 'BEGIN { print ((r >= t) ? "met" : "MISSED") }'
}
at_most() { # ratio bound
    case $1 in n/a) echo "no data"; return ;; esac
    awk -v r="${1%x}" -v t="$2" 'BEGIN { print ((r <= t) ? "met" : "MISSED") }'
}

tables() {
    local name cfg
    echo "| configuration | URLs | runs | RPS median | RPS min / max | CPU-s per 1000 req (median) | user share of CPU | errors | bytes/response | p99 latency (median) | others' share of the server CPU (median) |"
    echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    for cfg in "${CONFIGS[@]}"; do
        IFS='|' read -r name _ _ _ list mode _ _ <<<"$cfg"
        local runs lo hi
        runs=$(column_of "$name" 3 | wc -l)
        if [ "$runs" -eq 0 ]; then
            echo "| $name | $list ($mode) | 0 | - | - | - | - | - | - | - | - |"
            continue
        fi
        lo=$(column_of "$name" 3 | sort -n | head -1)
        hi=$(column_of "$name" 3 | sort -n | tail -1)
        printf '| %s | %s (%s) | %s | %.0f | %s / %s | %.3f | %s | %s | %.0f | %.1f ms | %s%% |\n' \
            "$name" "$list" "$mode" "$runs" "$(med "$name" 3)" "$lo" "$hi" "$(med "$name" 6)" \
            "$(awk -v u="$(med "$name" 14)" -v s="$(med "$name" 15)" 'BEGIN { printf "%.0f%%", (u + s > 0 ? 100 * u / (u + s) : 0) }')" \
            "$(column_of "$name" 7 | awk '{ s += $1 } END { print s + 0 }')" \
            "$(med "$name" 9)" "$(awk -v u="$(med "$name" 11)" 'BEGIN { print u / 1000 }')" \
            "$(med "$name" 16)"
    done
    echo
    echo "| ratio (medians) | value | target |"
    echo "|---|---:|---|"
    local r
    r=$(ratio ccc-256-hot ceiling)
    echo "| RPS ccc-256-hot / ceiling | $r | >= 0.85x: $(verdict "$r" 0.85) |"
    r=$(ratio ccc-all-hot ceiling)
    echo "| RPS ccc-all-hot / ceiling | $r | >= 0.9x: $(verdict "$r" 0.9) |"
    echo "| RPS ccc-256-hot / ceiling-ccc (ccc's own transport) | $(ratio ccc-256-hot ceiling-ccc) | - |"
    echo "| RPS ccc-all-hot / ceiling-ccc | $(ratio ccc-all-hot ceiling-ccc) | - |"
    echo "| RPS ceiling-ccc / ceiling (ccc's transport vs plain hyper) | $(ratio ceiling-ccc ceiling) | - |"
    r=$(ratio ccc-256-hot ccc-off-hot)
    echo "| RPS ccc-256-hot / ccc-off-hot | $r | >= 1.4x: $(verdict "$r" 1.4) |"
    r=$(ratio ccc-all-hot ccc-off-hot)
    echo "| RPS ccc-all-hot / ccc-off-hot | $r | - |"
    r=$(ratio ccc-10pct-uniform ccc-off-uniform)
    echo "| RPS ccc-10pct-uniform / ccc-off-uniform | $r | >= 0.98x: $(verdict "$r" 0.98) |"
    r=$(ratio_of 6 ccc-256-hot ceiling)
    echo "| CPU-s per 1000 req, ccc-256-hot / ceiling | $r | <= 1.2x: $(at_most "$r" 1.2) |"
    r=$(ratio_of 11 ccc-256-hot ceiling)
    echo "| p99 latency, ccc-256-hot / ceiling | $r | <= 2x (at 200 connections): $(at_most "$r" 2) |"
    for name in ccc-off-hot ccc-256-hot ceiling ceiling-ccc; do
        echo "| RPS $name / nginx-hot | $(ratio "$name" nginx-hot) | - |"
    done
    r=$(ratio ccc-all-hot nginx-hot)
    echo "| RPS ccc-all-hot / nginx-hot (everything cached) | $r | >= 1.1x: $(verdict "$r" 1.1) |"
    r=$(ratio ccc-default-hot nginx-hot)
    echo "| RPS ccc-default-hot / nginx-hot (serve's default cache) | $r | >= 1.0x: $(verdict "$r" 1.0) |"
    r=$(ratio ccc-10pct-uniform nginx-uniform)
    echo "| RPS ccc-10pct-uniform / nginx-uniform | $r | >= 0.8x: $(verdict "$r" 0.8) |"
    r=$(ratio ccc-off-uniform nginx-uniform)
    echo "| RPS ccc-off-uniform / nginx-uniform | $r | >= 0.7x: $(verdict "$r" 0.7) |"
    echo "| RPS ccc-all-uniform / nginx-uniform (everything cached, uniform order) | $(ratio ccc-all-uniform nginx-uniform) | - |"
    echo "| RPS ccc-default-uniform / nginx-uniform (serve's default cache) | $(ratio ccc-default-uniform nginx-uniform) | - |"
    if [ -n "$(column_of base-256-hot 3)" ]; then
        for name in off-hot 256-hot all-hot 10pct-uniform off-uniform; do
            r=$(ratio "ccc-$name" "base-$name")
            echo "| RPS ccc-$name / base-$name (after / before) | $r | >= 1.0x: $(verdict "$r" 1.0) |"
        done
        echo "| RPS base-256-hot / ceiling (before) | $(ratio base-256-hot ceiling) | - |"
        echo "| CPU-s per 1000 req, base-256-hot / ceiling (before) | $(ratio_of 6 base-256-hot ceiling) | - |"
    fi
}

summary() {
    local out=$WORK/summary.md quiet=${QUIET_MAX_OTHERS:-10}
    {
        echo "### All runs"
        echo
        MAX_OTHERS=1000000
        tables
        echo
        echo "### Quiet runs only (other processes took <= $quiet% of the server CPU)"
        echo
        MAX_OTHERS=$quiet
        tables
    } >"$out"
    cat "$out"
}

# ---------------------------------------------------------------- main
main() {
    mkdir -p "$WORK/logs" "$WORK/stats"
    if [ "${SUMMARY_ONLY:-0}" = 1 ]; then # tables again from $WORK/runs.tsv
        summary
        return
    fi
    [ "${SKIP_INSTALL:-0}" = 1 ] || install_tools
    NGINX=${NGINX:-$(command -v nginx || echo /usr/sbin/nginx)}
    HZ=$(getconf CLK_TCK)
    [ "${SKIP_BUILD:-0}" = 1 ] || build
    # The base is copied with SKIP_BUILD too: it is not built here.
    [ -z "${BASE_BIN:-}" ] || { mkdir -p "$WORK/bin" && cp "$BASE_BIN" "$WORK/bin/ccc-base"; }
    [ "${SKIP_SEED:-0}" = 1 ] || seed
    MEDIAN_SIZE=$(find -L "$WORK/export" -name '*.gz' -printf '%s\n' | median)
    write_nginx_conf
    {
        echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
        if git -C "$REPO" rev-parse HEAD >/dev/null 2>&1; then
            echo "ccc commit: $(git -C "$REPO" rev-parse --short HEAD)$(git -C "$REPO" diff --quiet HEAD -- src Cargo.toml Cargo.lock || echo ' (with uncommitted changes in src/ or Cargo.*)')"
        else
            echo "ccc commit: ${CCC_COMMIT:-unknown (not a git work tree)}"
        fi
        [ -z "${BASE_BIN:-}" ] || echo "base: $BASE_BIN (${BASE_COMMIT:-commit not given})"
        echo "cpus: $(nproc); $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
        echo "memory: $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
        echo "kernel: $(uname -r)"
        echo "rustc: $(rustc --version 2>/dev/null || echo unknown)"
        echo "nginx: $("$NGINX" -v 2>&1 | sed 's/.*: //')"
        echo "wrk: $(wrk -v 2>&1 | head -1 | cut -d' ' -f1-2)"
        echo "assets: $(wc -l <"$WORK/data/urls.txt"), median stored (gzip) size $MEDIAN_SIZE B"
        echo "load: ROUNDS=$ROUNDS DURATION=${DURATION}s WARMUP=${WARMUP}s CONNS=$CONNS (wrk -t1) THREADS=${THREADS:-unset (the server chooses)}${BASE_BIN:+ BASE_THREADS=$BASE_THREADS} server CPU $SERVER_CPU, wrk CPU $LOAD_CPU"
        echo "uptime before: $(uptime)"
    } | tee "$WORK/machine.txt" >&2
    top -bn1 | head -15 >"$WORK/top-before.txt"
    : >"$WORK/threads.txt"
    printf 'config\tround\trps\trequests\tcpu_s\tcpu_s_per_1k\terrors\tstatus_errors\tbytes_per_resp\tp50_us\tp99_us\tmachine_busy_pct_before\tloadavg1\tuser_s\tsys_s\tothers_on_server_cpu_pct\n' >"$WORK/runs.tsv"
    local round i n=${#CONFIGS[@]}
    for round in $(seq "$ROUNDS"); do
        for i in $(seq 0 $((n - 1))); do
            run_one "${CONFIGS[$(((i + round - 1) % n))]}" "$round"
        done
    done
    echo "uptime after: $(uptime)" | tee -a "$WORK/machine.txt" >&2
    sed 's/^/threads at start: /' "$WORK/threads.txt" | tee -a "$WORK/machine.txt" >&2
    echo
    summary
}

# Sourcing this file (bench/lib/experiments.sh does) defines the functions
# without running anything.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    main "$@"
fi
