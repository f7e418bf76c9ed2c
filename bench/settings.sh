#!/usr/bin/env bash
# ccc serve against nginx on what a client can make a server hold: the
# rows of the issue "serve stays inside its settings", each run on both
# servers in one go, on 127.0.0.1 only, bounded in time and connections.
#
#   bash bench/settings.sh                 # as root on a Debian machine with a Rust toolchain
#   ROWS="5 8" bash bench/settings.sh      # some rows only
#
# What it does:
#   1. installs nginx, wrk, ab (apache2-utils) and openssl when missing,
#      and the Python packages h2 in a virtualenv under $WORK;
#   2. builds this tree's ccc and examples/attack.rs (release);
#   3. publishes examples/site as site@1.0.0 and 5 MB of noise as
#      big@1.0.0 into $WORK/cdn.db, with the same files on disk for nginx;
#      makes a self-signed P-256 certificate;
#   4. runs each row against `ccc serve --threads 2` and nginx (one worker,
#      sendfile, open_file_cache, HTTP/2 on a port of its own in cleartext
#      and with TLS on another), with every timeout at 5 s on both:
#        1  20 HTTP/2 connections x 100 streams on big.bin, initial window
#           0, never a WINDOW_UPDATE (attack example, h2-no-window, 10 s);
#        2  20 HTTP/2 connections x 128 streams (h2-stalled) and 1,000
#           HTTP/1.1 slow readers on big.bin, never reading; ccc with
#           --cache-bytes 1MiB --in-flight-bytes 16MiB;
#        3  4 threads connecting, sending `P` and closing (preface-cycles),
#           then the connections left open and the CPU used in 2 s;
#        4  at a cap of 300 (ccc --max-connections, nginx
#           worker_connections): 400 silent connections, then 400
#           slowloris ones; the share of newcomers served;
#        5  Range: bytes=0-0 (wrk) and HEAD (ab) of big.bin, 10
#           connections, the server on core 0 and the load on core 1,
#           3 rounds of 5 s interleaved; ccc with --cache-bytes 1MiB;
#        8  1,000 idle TLS keep-alive connections after one request each,
#           HTTP/1.1 and HTTP/2: RssAnon per connection.
#   5. prints one block per row; bench/HARDENING.md keeps the results.
#
# Knobs: WORK (default /tmp/ccc-settings), ROWS ("1 2 3 4 5 8"),
# SKIP_BUILD=1, SKIP_INSTALL=1.

set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib/common.sh
. "$REPO/bench/lib/common.sh"
WORK=${WORK:-/tmp/ccc-settings}
ROWS=${ROWS:-1 2 3 4 5 8}
SERVE_PORT=18410
NGX_PORT=18420   # HTTP/1.1
NGX_H2=18421     # cleartext HTTP/2 (nginx takes it with prior knowledge only)
SERVE_TLS=18430
NGX_TLS=18431
unset CCC_DB_PATH CCC_PORT CCC_BIND CCC_THREADS CCC_CACHE_CAPACITY CCC_CACHE_BYTES

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

install_tools() {
    local missing=()
    command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || missing+=(nginx)
    command -v wrk >/dev/null || missing+=(wrk)
    command -v ab >/dev/null || missing+=(apache2-utils)
    command -v openssl >/dev/null || missing+=(openssl)
    if [ ${#missing[@]} -gt 0 ]; then
        [ "$(id -u)" = 0 ] || die "needs root to install ${missing[*]}"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    fi
    [ -x "$WORK/py/bin/python" ] || python3 -m venv "$WORK/py"
    "$WORK/py/bin/pip" install --quiet --disable-pip-version-check 'h2>=4,<5'
}

build() {
    (cd "$REPO" && cargo build --release --locked --bin ccc --example attack)
    local target
    target=$(target_dir)
    mkdir -p "$WORK/bin"
    cp "$target/release/ccc" "$target/release/examples/attack" "$WORK/bin/"
}

data() {
    rm -rf "$WORK/site" "$WORK/cdn.db"
    mkdir -p "$WORK/site"
    cp -r "$REPO/examples/site/." "$WORK/site/"
    head -c 5000000 /dev/urandom >"$WORK/site/big.bin"
    "$WORK/bin/ccc" --db "$WORK/cdn.db" publish site@1.0.0 "$REPO/examples/site" --quiet
    mkdir -p "$WORK/big" && cp "$WORK/site/big.bin" "$WORK/big/"
    "$WORK/bin/ccc" --db "$WORK/cdn.db" publish big@1.0.0 "$WORK/big" --quiet --level 1
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 7 \
        -keyout "$WORK/key.pem" -out "$WORK/cert.pem" -subj /CN=localhost 2>/dev/null
}

nginx_conf() {
    local connections=$1
    cat >"$WORK/nginx.conf" <<EOF
worker_processes 1;
pid $WORK/nginx.pid;
error_log $WORK/nginx-error.log;
events { worker_connections $connections; }
http {
  access_log off;
  sendfile on; tcp_nopush on;
  keepalive_requests 1000000;
  open_file_cache max=10000 inactive=60s;
  send_timeout 5s; client_header_timeout 5s; keepalive_timeout 5s;
  server {
    listen 127.0.0.1:$NGX_PORT;
    listen 127.0.0.1:$NGX_H2 http2;
    listen 127.0.0.1:$NGX_TLS ssl http2;
    ssl_certificate $WORK/cert.pem; ssl_certificate_key $WORK/key.pem;
    root $WORK/site;
    location = /healthz { return 200 "ok"; }
  }
}
EOF
}

start_nginx() {
    nginx_conf "${1:-4096}"
    nginx -c "$WORK/nginx.conf"
    sleep 0.5
    pgrep -f "nginx: (master|worker)" | tr '\n' ' '
}

stop_nginx() {
    nginx -c "$WORK/nginx.conf" -s stop 2>/dev/null || true
    sleep 0.5
}

start_ccc() {
    "$WORK/bin/ccc" --db "$WORK/cdn.db" serve --port "$SERVE_PORT" --threads 2 \
        --header-timeout 5s --keepalive-timeout 5s --send-timeout 5s "$@" \
        >"$WORK/ccc.log" 2>&1 &
    sleep 1
    echo $!
}

stop_ccc() {
    kill "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
}

attack() {
    local label=$1 addr=$2 attack_addr=$3 pids=$4 big=$5 probe=$6
    shift 6
    local pid_args=()
    for p in $pids; do pid_args+=(--pid "$p"); done
    "$WORK/bin/attack" --addr "$addr" --attack-addr "$attack_addr" "${pid_args[@]}" \
        --target "$big" --probe-target "$probe" --row "$label" "$@" 2>/dev/null | tail -1
}

row_attack() {
    local mode_args=("$@")
    local ccc_flags=()
    if [ "${CCC_FLAGS:-}" ]; then read -r -a ccc_flags <<<"$CCC_FLAGS"; fi
    local pid
    pid=$(start_ccc "${ccc_flags[@]}")
    attack ccc "127.0.0.1:$SERVE_PORT" "127.0.0.1:$SERVE_PORT" "$pid" \
        /assets/big/1.0.0/big.bin /assets/site/1.0.0/index.html "${mode_args[@]}"
    if [ "${AFTER_CHECK:-}" ]; then "$AFTER_CHECK" ccc "$pid"; fi
    stop_ccc "$pid"
    local pids
    pids=$(start_nginx "${NGX_CONNECTIONS:-4096}")
    attack nginx "127.0.0.1:$NGX_PORT" "127.0.0.1:${NGX_ATTACK_PORT:-$NGX_PORT}" "$pids" \
        /big.bin /index.html "${mode_args[@]}"
    if [ "${AFTER_CHECK:-}" ]; then "$AFTER_CHECK" nginx "$pids"; fi
    stop_nginx
}

# Connections the server has open and CPU it used in 2 s, 1 s after an attack.
open_and_cpu() {
    local server=$1 pids=$2 open=0 before after
    sleep 1
    for p in $pids; do
        open=$((open + $(ls -l "/proc/$p/fd" 2>/dev/null | grep -c socket || true)))
    done
    before=$(for p in $pids; do awk '{print $14+$15}' "/proc/$p/stat"; done | paste -sd+ | bc)
    sleep 2
    after=$(for p in $pids; do awk '{print $14+$15}' "/proc/$p/stat"; done | paste -sd+ | bc)
    echo "$server: $open sockets open 1 s after (listeners included), $((after - before)) CPU ticks in the next 2 s"
}

row5() {
    echo "| round | server | Range bytes=0-0 req/s | HEAD req/s |"
    echo "|---|---|--:|--:|"
    local pid pids
    for round in 1 2 3; do
        pid=$(taskset -c 0 "$WORK/bin/ccc" --db "$WORK/cdn.db" serve --port "$SERVE_PORT" \
            --threads 1 --cache-bytes 1MiB >"$WORK/ccc.log" 2>&1 & echo $!)
        sleep 1
        local url="http://127.0.0.1:$SERVE_PORT/assets/big/1.0.0/big.bin"
        local r h
        r=$(taskset -c 1 wrk -t1 -c10 -d5s -H "Range: bytes=0-0" "$url" | awk '/Requests\/sec/{print $2}')
        h=$(taskset -c 1 ab -q -k -i -c 10 -t 5 -n 10000000 "$url" 2>/dev/null | awk '/Requests per second/{print $4}')
        echo "| $round | ccc | $r | $h |"
        stop_ccc "$pid"
        nginx_conf 4096
        taskset -c 0 nginx -c "$WORK/nginx.conf"
        sleep 0.5
        url="http://127.0.0.1:$NGX_PORT/big.bin"
        r=$(taskset -c 1 wrk -t1 -c10 -d5s -H "Range: bytes=0-0" "$url" | awk '/Requests\/sec/{print $2}')
        h=$(taskset -c 1 ab -q -k -i -c 10 -t 5 -n 10000000 "$url" 2>/dev/null | awk '/Requests per second/{print $4}')
        echo "| $round | nginx | $r | $h |"
        stop_nginx
    done
}

row8() {
    local pid pids
    pid=$("$WORK/bin/ccc" --db "$WORK/cdn.db" serve --port "$SERVE_TLS" --threads 2 \
        --tls-cert "$WORK/cert.pem" --tls-key "$WORK/key.pem" >"$WORK/ccc.log" 2>&1 & echo $!)
    sleep 1
    for proto in http1 h2; do
        "$WORK/py/bin/python" "$REPO/bench/lib/idle_tls.py" 127.0.0.1 "$SERVE_TLS" 1000 "$proto" \
            /assets/site/1.0.0/index.html ccc "$pid"
    done
    stop_ccc "$pid"
    pids=$(start_nginx 4096)
    for proto in http1 h2; do
        "$WORK/py/bin/python" "$REPO/bench/lib/idle_tls.py" 127.0.0.1 "$NGX_TLS" 1000 "$proto" \
            /index.html nginx $pids
    done
    stop_nginx
}

mkdir -p "$WORK"
[ "${SKIP_INSTALL:-}" ] || install_tools
[ "${SKIP_BUILD:-}" ] || build
data
stop_nginx
echo "# bench/settings.sh on $(hostname) at $(git -C "$REPO" rev-parse --short HEAD), $(date -u +%Y-%m-%dT%H:%MZ)"
echo "$(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
"$WORK/bin/attack" --row-header
for row in $ROWS; do
    case $row in
        1) log "row 1"; NGX_ATTACK_PORT=$NGX_H2 row_attack --mode h2-no-window --count 20 --streams 100 --attack 10s ;;
        2) log "row 2"; NGX_ATTACK_PORT=$NGX_H2 CCC_FLAGS="--cache-bytes 1MiB --in-flight-bytes 16MiB" \
               row_attack --mode h2-stalled --count 20 --streams 128 --also slow-readers:1000 --attack 10s ;;
        3) log "row 3"; AFTER_CHECK=open_and_cpu row_attack --mode preface-cycles --count 4 --attack 8s ;;
        4) log "row 4"
           for mode in flood slowloris; do
               NGX_CONNECTIONS=300 CCC_FLAGS="--max-connections 300" \
                   row_attack --mode "$mode" --count 400 --attack 8s
           done ;;
        5) log "row 5"; row5 ;;
        8) log "row 8"; row8 ;;
    esac
done
