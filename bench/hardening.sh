#!/usr/bin/env bash
# ccc serve under attack, before and after hardening, with nginx (default
# limits) as the reference: the attacks of tests/under_attack.rs, run by
# examples/attack.rs against each server in turn, all on 127.0.0.1.
#
#   bash bench/hardening.sh                  # as root on a Debian machine with a Rust toolchain
#   ATTACK_SECS=20 bash bench/hardening.sh
#   ATTACKS=idle-keepalive+slowloris SERVERS="ccc-after nginx" bash bench/hardening.sh
#
# What it does, in one run:
#   1. installs nginx (nginx-light, or nginx where that is gone) and curl
#      from Debian when they are missing;
#   2. builds this tree's ccc and attack example in release mode, and (when
#      SERVERS has ccc-before) ccc at $BEFORE (default 51654ff, main before
#      hardening) in a git worktree of its own with its own target dir;
#      copies the binaries to $WORK/bin;
#   3. publishes $WORK/data/cdn.db: examples/site as site@1.0.0 (what the
#      well-behaved clients ask for) and 32 MiB of noise as big@1.0.0 (what
#      slow readers and resets ask for, stored as is), and exports it for
#      nginx ($WORK/export, gzip_static layout);
#   4. for every attack and server: starts the server fresh (so its peak RSS
#      is this attack's), runs the attack example against it (1 s warm-up,
#      QUIET_SECS quiet, [up to 30 s while a large attack opens its
#      connections,] ATTACK_SECS attacked, 1 s settling, AFTER_SECS quiet
#      again; 4 keep-alive and 2 connection-per-request well-behaved
#      clients every 20 ms), and meanwhile asks the server every half
#      second how many connections it has open (ccc's /_stats, nginx's
#      stub_status); stops it;
#   5. writes $WORK/results.jsonl (every report in full) and
#      $WORK/summary.md (one table per attack).
#
# Servers: ccc-before and ccc-after run `ccc serve --threads 4` with every
# other flag at its default (idle-keepalive+slowloris: no --threads either,
# so one thread per core); nginx runs one worker with no limit changed from
# nginx's defaults (worker_connections 512, client_header_timeout 60s,
# keepalive_timeout 75s, send_timeout 60s, large_client_header_buffers 4 8k,
# no worker_rlimit_nofile), sendfile and gzip_static on, no access log;
# for idle-keepalive+slowloris only, nginx gets ccc's counts instead:
# worker_connections 16384 (ccc's default cap) and worker_rlimit_nofile
# set to this shell's hard open-files limit (what ccc raises its soft limit
# to; it must be over 13,100).
#
# Attacks (as in tests/under_attack.rs):
#   slow-readers  32 connections (8x ccc's 4 workers) GET the 32 MiB file
#                 through a 4 KiB receive window and never read;
#   slowloris     3000 half-sent heads, a header line a second, against a
#                 server started with the usual soft limit of 1024 open files
#                 (hard limit 8192);
#   flood         200 connections that send nothing, against a server
#                 started under `ulimit -n 64`;
#   malformed     8 connections at a time: a 1 MiB header line, 100,000
#                 header lines, a 64 KiB target, 64 KiB of noise, not-HTTP;
#   reset         8 connections at a time GET the 32 MiB file, read 64 KiB,
#                 close with SO_LINGER 0;
#   idle-keepalive+slowloris
#                 10,000 connections GET a small file of the site, read the
#                 answer and stay open sending nothing, and 3,000 slowloris
#                 connections, all open at once (the attack waits up to 30 s
#                 for all 13,000 before ATTACK_SECS starts), against servers
#                 started with a soft limit of 1024 open files (and this
#                 shell's hard limit).
#
# Environment knobs: WORK (default /tmp/ccc-hardening), BEFORE (51654ff),
# ATTACK_SECS (10), QUIET_SECS (3), AFTER_SECS (5), SERVERS ("ccc-before
# ccc-after nginx"), ATTACKS ("slow-readers slowloris flood malformed
# reset idle-keepalive+slowloris"), SKIP_INSTALL=1, SKIP_BUILD=1,
# SKIP_DATA=1 (reuse $WORK), SUMMARY_ONLY=1 (the tables again from
# $WORK/rows).

set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib/common.sh
. "$REPO/bench/lib/common.sh"
WORK=${WORK:-/tmp/ccc-hardening}
BEFORE=${BEFORE:-51654ff}
ATTACK_SECS=${ATTACK_SECS:-10}
QUIET_SECS=${QUIET_SECS:-3}
AFTER_SECS=${AFTER_SECS:-5}
SERVERS=${SERVERS:-ccc-before ccc-after nginx}
ATTACKS=${ATTACKS:-slow-readers slowloris flood malformed reset idle-keepalive+slowloris}
PORT=18340
unset CCC_DB_PATH CCC_PORT CCC_BIND CCC_THREADS CCC_CACHE_CAPACITY CCC_CACHE_BYTES

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# ---------------------------------------------------------------- tools
install_tools() {
    local missing=()
    command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || missing+=(nginx-light)
    command -v curl >/dev/null || missing+=(curl)
    if [ ${#missing[@]} -gt 0 ]; then
        [ "$(id -u)" = 0 ] || die "needs root to install ${missing[*]}"
        log "installing ${missing[*]}"
        apt-get update -qq
        if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"; then
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
                "${missing[@]/nginx-light/nginx}"
        fi
    fi
    command -v cargo >/dev/null \
        || die "needs a Rust toolchain (rustc >= 1.85, see Cargo.toml) on PATH"
}

# ---------------------------------------------------------------- build
build_before() {
    mkdir -p "$WORK/bin"
    log "building ccc at $BEFORE (release) in $WORK/before-src"
    git -C "$REPO" worktree remove --force "$WORK/before-src" 2>/dev/null || true
    rm -rf "$WORK/before-src"
    git -C "$REPO" worktree add --detach "$WORK/before-src" "$BEFORE" >&2
    (cd "$WORK/before-src" && CARGO_TARGET_DIR="$WORK/before-target" \
        cargo build --release --locked --bin ccc)
    cp "$WORK/before-target/release/ccc" "$WORK/bin/ccc-before"
    git -C "$REPO" worktree remove --force "$WORK/before-src"
}

build_after() {
    mkdir -p "$WORK/bin"
    log "building this tree's ccc and attack example (release)"
    (cd "$REPO" && cargo build --release --locked --bin ccc --example attack)
    local target
    target=$(target_dir)
    cp "$target/release/ccc" "$WORK/bin/ccc-after"
    cp "$target/release/examples/attack" "$WORK/bin/attack"
}

# ---------------------------------------------------------------- data
data() {
    log "publishing the catalog into $WORK/data"
    rm -rf "$WORK/data" "$WORK/export"
    mkdir -p "$WORK/data/big"
    head -c $((32 << 20)) /dev/urandom >"$WORK/data/big/big.bin"
    local ccc="$WORK/bin/ccc-before"
    [ -x "$ccc" ] || ccc="$WORK/bin/ccc-after"
    "$ccc" --db "$WORK/data/cdn.db" publish site@1.0.0 "$REPO/examples/site" --quiet
    "$ccc" --db "$WORK/data/cdn.db" publish big@1.0.0 "$WORK/data/big" --quiet --level 1
    rm -rf "$WORK/data/big"
    "$ccc" --db "$WORK/data/cdn.db" export "$WORK/export" >/dev/null
    # The well-behaved clients ask for every file of the site whose name
    # needs no escaping (not the exported .gz and .br variants: ccc serves
    # those by Accept-Encoding, not by name).
    (cd "$WORK/export" && find site -type f ! -name '*.gz' ! -name '*.br' ! -name '* *' -printf '/assets/%p\n') \
        | sort >"$WORK/data/probe.txt"
    [ -s "$WORK/data/probe.txt" ] || die "no probe targets in $WORK/export/site"
}

# ---------------------------------------------------------------- servers
SERVER_PID=
SERVER_PIDS=()

# nginx's default limits: nothing changes a limit or a timeout, unless
# CONNECTIONS and NOFILE are given (worker_connections and
# worker_rlimit_nofile).
write_nginx_conf() { # [connections nofile]
    local connections=${1:-} nofile=${2:-} events="events { }" rlimit=""
    if [ -n "$connections" ]; then
        events="events { worker_connections $connections; }"
        rlimit="worker_rlimit_nofile $nofile;"
    fi
    mkdir -p "$WORK/nginx/tmp"
    cat >"$WORK/nginx/nginx.conf" <<EOF
worker_processes 1;
$rlimit
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/error.log warn;
$events
http {
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    access_log off;
    sendfile on;
    client_body_temp_path $WORK/nginx/tmp/body;
    proxy_temp_path $WORK/nginx/tmp/proxy;
    fastcgi_temp_path $WORK/nginx/tmp/fastcgi;
    uwsgi_temp_path $WORK/nginx/tmp/uwsgi;
    scgi_temp_path $WORK/nginx/tmp/scgi;
    server {
        listen 127.0.0.1:$PORT;
        location = /nginx_status { stub_status; }
        location /assets/ {
            alias $WORK/export/;
            gzip_static on;
        }
    }
}
EOF
    "$NGINX" -t -c "$WORK/nginx/nginx.conf" -p "$WORK/nginx" 2>"$WORK/logs/nginx-t.log" \
        || { cat "$WORK/logs/nginx-t.log" >&2; die "nginx config rejected"; }
}

# Starts SERVER with the open-files limit SOFT / HARD ("-" keeps this
# shell's); ccc gets FLAGS too.
start_server() { # server soft hard [flags...]
    local server=$1 soft=$2 hard=$3
    shift 3
    (
        [ "$soft" = - ] || ulimit -Sn "$soft"
        [ "$hard" = - ] || ulimit -Hn "$hard"
        case $server in
            ccc-*) exec "$WORK/bin/$server" --db "$WORK/data/cdn.db" serve \
                --port "$PORT" "$@" ;;
            nginx) : >"$WORK/nginx/error.log"
                exec "$NGINX" -c "$WORK/nginx/nginx.conf" -p "$WORK/nginx" -g 'daemon off;' ;;
        esac
    ) >"$WORK/logs/$server.out" 2>"$WORK/logs/$server.err" &
    SERVER_PID=$!
    local i
    for i in $(seq 100); do
        curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$PORT$(head -1 "$WORK/data/probe.txt")" && break
        kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/logs/$server.err" >&2; die "$server exited"; }
        sleep 0.1
    done
    local workers=()
    [ "$server" = nginx ] && mapfile -t workers < <(pgrep -P "$SERVER_PID" || true)
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
    # Let the attack's sockets leave TIME_WAIT's way before the next server.
    sleep 2
}
trap stop_server EXIT

# ---------------------------------------------------------------- attacks
# name | --mode | --count | needs the large target | soft nofile | hard
# nofile | more flags of the attack example | nginx's worker_connections and
# worker_rlimit_nofile ("" for its defaults) | flags of ccc serve
attack_spec() {
    case $1 in
        slow-readers) echo "slow-readers|32|big|-|-|||--threads 4" ;;
        slowloris) echo "slowloris|3000||1024|8192|||--threads 4" ;;
        flood) echo "flood|200||64|64|||--threads 4" ;;
        malformed) echo "malformed|8||-|-|||--threads 4" ;;
        reset) echo "reset|8|big|-|-|||--threads 4" ;;
        idle-keepalive+slowloris)
            echo "idle-keepalive|10000||1024|-|--also slowloris:3000 --ramp 30s|16384 $(ulimit -Hn)|" ;;
        *) die "unknown attack $1" ;;
    esac
}

# Every half second until killed: the connections SERVER says it has open
# (ccc's /_stats, nginx's stub_status), one number a line, to FILE.
watch_open() { # server file
    local server=$1 file=$2
    while sleep 0.5; do
        case $server in
            ccc-*) curl -s --max-time 2 "http://127.0.0.1:$PORT/_stats" \
                | python3 -c 'import json, sys; print(json.load(sys.stdin)["connections"]["open"])' ;;
            nginx) curl -s --max-time 2 "http://127.0.0.1:$PORT/nginx_status" \
                | sed -n 's/^Active connections: *\([0-9]*\).*/\1/p' ;;
        esac
    done >"$file" 2>/dev/null
}

run_one() { # attack server
    local attack=$1 server=$2 mode count big soft hard more nginx_limits flags
    IFS='|' read -r mode count big soft hard more nginx_limits flags <<<"$(attack_spec "$attack")"
    # shellcheck disable=SC2086 # two numbers, or none
    [ "$server" = nginx ] && write_nginx_conf $nginx_limits
    # shellcheck disable=SC2086 # flags, split on purpose
    start_server "$server" "$soft" "$hard" $flags
    local limits
    limits=$(awk '/Max open files/ { print $4 "/" $5 }' "/proc/${SERVER_PIDS[-1]}/limits")
    log "$attack against $server (pid ${SERVER_PIDS[*]}, open files $limits)"
    local extra=() watcher
    [ -n "$big" ] && extra+=(--target /assets/big/1.0.0/big.bin)
    # shellcheck disable=SC2206 # flags, split on purpose
    [ -n "$more" ] && extra+=($more)
    watch_open "$server" "$WORK/logs/open-$attack-$server.txt" &
    watcher=$!
    "$WORK/bin/attack" --addr "127.0.0.1:$PORT" "${SERVER_PIDS[@]/#/--pid=}" \
        --mode "$mode" --count "$count" "${extra[@]}" \
        --probe-file "$WORK/data/probe.txt" \
        --quiet "${QUIET_SECS}s" --attack "${ATTACK_SECS}s" --after "${AFTER_SECS}s" \
        --json "$WORK/results.jsonl" --row "$server" \
        >>"$WORK/rows/$attack.md" 2>>"$WORK/logs/attack.log" \
        || log "warning: the attack tool failed; see $WORK/logs/attack.log"
    kill "$watcher" 2>/dev/null || true
    wait "$watcher" 2>/dev/null || true
    tail -1 "$WORK/rows/$attack.md" >&2
    # What the server saw: most connections open at once, idle ones closed
    # to make room (ccc's /_stats; nginx logs "reusing connections").
    local most reclaimed
    most=$(sort -n "$WORK/logs/open-$attack-$server.txt" | tail -1)
    case $server in
        ccc-*) reclaimed=$(curl -s --max-time 2 "http://127.0.0.1:$PORT/_stats" \
            | python3 -c 'import json, sys; print(json.load(sys.stdin)["connections"].get("reclaimed", "n/a"))' 2>/dev/null) ;;
        nginx) reclaimed="$(grep -c 'reusing connections' "$WORK/nginx/error.log" || true) \"reusing connections\" lines in error.log" ;;
    esac
    echo "- $server: at most ${most:-?} connections open at once by its own count; idle connections reclaimed: ${reclaimed:-?}; open files $limits" \
        >>"$WORK/rows/$attack.notes"
    # What the server said about it (ccc: warnings; nginx: error.log).
    {
        echo "== $attack against $server: last lines of its stderr"
        tail -5 "$WORK/logs/$server.err"
        [ "$server" = nginx ] && tail -5 "$WORK/nginx/error.log"
    } >>"$WORK/logs/server-messages.log" 2>/dev/null || true
    stop_server
}

summary() {
    local out=$WORK/summary.md attack
    {
        cat "$WORK/machine.txt"
        echo
        for attack in $ATTACKS; do
            [ -s "$WORK/rows/$attack.md" ] || continue
            echo "#### $attack"
            echo
            "$WORK/bin/attack" --row-header
            cat "$WORK/rows/$attack.md"
            echo
            if [ -s "$WORK/rows/$attack.notes" ]; then
                cat "$WORK/rows/$attack.notes"
                echo
            fi
        done
    } >"$out"
    cat "$out"
}

# ---------------------------------------------------------------- main
main() {
    mkdir -p "$WORK/logs" "$WORK/rows"
    if [ "${SUMMARY_ONLY:-0}" = 1 ]; then
        summary
        return
    fi
    [ "${SKIP_INSTALL:-0}" = 1 ] || install_tools
    NGINX=${NGINX:-$(command -v nginx || echo /usr/sbin/nginx)}
    if [ "${SKIP_BUILD:-0}" != 1 ]; then
        case " $SERVERS " in *" ccc-before "*) build_before ;; esac
        build_after
    fi
    [ "${SKIP_DATA:-0}" = 1 ] || data
    write_nginx_conf
    rm -f "$WORK/results.jsonl" "$WORK/rows/"*.md "$WORK/rows/"*.notes "$WORK/logs/server-messages.log"
    {
        echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
        echo "ccc before: $(git -C "$REPO" rev-parse --short "$BEFORE"); ccc after: $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$REPO" diff --quiet HEAD -- src Cargo.toml Cargo.lock 2>/dev/null || echo ' (with uncommitted changes)')"
        echo "cpus: $(nproc); $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
        echo "memory: $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
        echo "kernel: $(uname -r); nginx: $("$NGINX" -v 2>&1 | sed 's/.*: //')"
        echo "phases: 1 s warm-up, ${QUIET_SECS} s quiet, ${ATTACK_SECS} s attack + 1 s settling, ${AFTER_SECS} s after"
        echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
    } | tee "$WORK/machine.txt" >&2
    local attack server
    for attack in $ATTACKS; do
        for server in $SERVERS; do
            run_one "$attack" "$server"
        done
    done
    echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$WORK/machine.txt"
    summary
}

# Sourcing this file defines the functions without running anything.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    main "$@"
fi
