#!/usr/bin/env bash
# h2load (Debian nghttp2-client) against `ccc serve` and nginx on the hot
# set of the seeded catalog, over cleartext HTTP/2 with prior knowledge
# (h2c: both servers take the preface on a cleartext port) and over
# HTTP/1.1 (`--h1`), with bench/rps.sh's catalog, binaries, pinning and
# CPU accounting: server on CPU $SERVER_CPU, h2load on CPU $LOAD_CPU, one
# h2load thread, every request with `Accept-Encoding: gzip`.
#
#   bash bench/rps.sh                 # once: seeds $WORK, builds ccc
#   bash bench/h2load.sh              # then this
#
# Configurations (rounds interleaved, order rotating every round):
#   ccc-256-{h2c,h1}   ccc, the default 256-entry cache (hot80 replayed)
#   ccc-all-{h2c,h1}   ccc, the whole catalog cached (filled first)
#   nginx-{h2c,h1}     nginx gzip_static + open_file_cache, as bench/rps.sh
#                      runs it, with one more listener: `listen ... http2`
#   ccc-all-{h2,h1}tls and nginx-{h2,h1}tls: the same over TLS, one
#                      certificate for both (ECDSA P-256, made in
#                      $WORK/tls), ALPN choosing the protocol
#   ccc-handshake, nginx-handshake: new TLS connections per second: wrk
#                      over HTTPS with `Connection: close`, so every request
#                      is a full handshake (wrk resumes no session)
#
# HTTP/2: $CLIENTS connections with up to $STREAMS streams each (`-m`);
# HTTP/1.1: $CLIENTS keep-alive connections, one request at a time (`-m 1`,
# no pipelining, as wrk sends). Each run: a ${WARMUP}s warm-up run, then a
# measured run of ${DURATION}s (`-D`), the server's utime+stime read around
# it. Knobs: WORK, ROUNDS (3), DURATION (10), WARMUP (2), CLIENTS (50),
# STREAMS (10), THREADS, SERVER_CPU, LOAD_CPU, ONLY and BASE_BIN (as
# bench/rps.sh: base-* configurations run that build over TLS).
# Writes $WORK/h2load.tsv and prints a table of medians.

set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# rps.sh would filter its own configurations by ONLY.
H2_ONLY=${ONLY:-}
unset ONLY
# shellcheck source=bench/rps.sh
source "$HERE/rps.sh"
ROUNDS=${ROUNDS:-3}
CLIENTS=${CLIENTS:-50}
STREAMS=${STREAMS:-10}
NGINX_H2_PORT=18337
NGINX_TLS_PORT=18338

[ -f "$WORK/data/urls_hot.txt" ] && [ -x "$WORK/bin/ccc" ] \
    || die "run bench/rps.sh first: $WORK has no catalog or binaries"
command -v h2load >/dev/null || {
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nghttp2-client
}
NGINX=${NGINX:-$(command -v nginx || echo /usr/sbin/nginx)}
HZ=$(getconf CLK_TCK)
mkdir -p "$WORK/logs"
# One certificate for both servers, for 127.0.0.1, that curl trusts.
make_tls() {
    mkdir -p "$WORK/tls"
    [ -s "$WORK/tls/cert.pem" ] || openssl req -x509 -nodes -days 30 -subj /CN=127.0.0.1 \
        -newkey ec -pkeyopt ec_paramgen_curve:P-256 -addext subjectAltName=IP:127.0.0.1 \
        -keyout "$WORK/tls/key.pem" -out "$WORK/tls/cert.pem" 2>"$WORK/logs/openssl.log"
    export CURL_CA_BUNDLE=$WORK/tls/cert.pem
}

MEDIAN_SIZE=0
[ -z "${BASE_BIN:-}" ] || cp "$BASE_BIN" "$WORK/bin/ccc-base"
write_nginx_conf
make_tls
# The same server block, with a second listener for HTTP/2 prior knowledge
# and a third for TLS, ALPN offering h2 and http/1.1. TLS 1.3 as ccc
# speaks it: nginx before 1.23.4 offers only up to 1.2 unless told.
sed -i "s|^        listen 127.0.0.1:$NGINX_PORT;|&\n        listen 127.0.0.1:$NGINX_H2_PORT http2;\n        listen 127.0.0.1:$NGINX_TLS_PORT ssl http2;\n        ssl_protocols TLSv1.2 TLSv1.3;\n        ssl_certificate $WORK/tls/cert.pem;\n        ssl_certificate_key $WORK/tls/key.pem;|" \
    "$WORK/nginx/nginx.conf"
"$NGINX" -t -c "$WORK/nginx/nginx.conf" -p "$WORK/nginx" 2>"$WORK/logs/nginx-t.log" \
    || { cat "$WORK/logs/nginx-t.log" >&2; die "nginx config rejected"; }

# h2load reads its URIs from a file: the first names scheme, host and port,
# the rest only their paths; every client walks the list in order.
uris() { # port list scheme
    { echo "$3://127.0.0.1:$1$(head -1 "$2")"; tail -n +2 "$2"; } >"$WORK/h2load-uris.txt"
}

# New TLS connections per second: wrk closes and reconnects after every
# answer; one request per handshake, so req/s is handshakes/s.
handshakes() { # seconds port: prints as h2() does
    timeout $(($1 + 30)) taskset -c "$LOAD_CPU" wrk -t1 -c "$CLIENTS" -d "${1}s" \
        -H 'Connection: close' -H 'Accept-Encoding: gzip' \
        "https://127.0.0.1:$2$(head -1 "$WORK/data/urls_hot.txt")" \
        >"$WORK/logs/wrk-hs.out" 2>&1 || { cat "$WORK/logs/wrk-hs.out" >&2; return 1; }
    awk '/^Requests\/sec:/ { rps = $2 }
         /requests in/ { total = $1 }
         /Socket errors:/ { gsub(",", ""); failed = $4 + $6 + $8 + $10 }
         /Non-2xx/ { bad = $4 }
         END { printf "%d %d %d %.0f %d\n", total, total - bad, failed, rps, bad }' "$WORK/logs/wrk-hs.out"
}

h2() { # seconds protocol port: prints "total succeeded failed req/s status>=400"
    [ "$2" != handshake ] || { handshakes "$1" "$3"; return; }
    local proto=(-m "$STREAMS") scheme=http alpn=h2c
    case $2 in
        h1 | h1tls) proto=(--h1 -m 1) alpn=http/1.1 ;;
        h2tls) alpn=h2 ;;
    esac
    case $2 in *tls) scheme=https ;; esac
    uris "$3" "$WORK/data/urls_hot.txt" "$scheme"
    timeout $(($1 + 30)) taskset -c "$LOAD_CPU" h2load -t1 -c "$CLIENTS" "${proto[@]}" \
        -D "$1" -H 'Accept-Encoding: gzip' -i "$WORK/h2load-uris.txt" \
        >"$WORK/logs/h2load.out" 2>&1 || { cat "$WORK/logs/h2load.out" >&2; return 1; }
    grep -q "Application protocol: $alpn" \
        "$WORK/logs/h2load.out" || { cat "$WORK/logs/h2load.out" >&2; return 1; }
    grep -m1 '^Cipher:' "$WORK/logs/h2load.out" >"$WORK/logs/cipher.txt" || true
    awk '/^finished in/ { gsub(",", ""); rps = $4 }
         /^requests:/ { total = $2; ok = $8; failed = $10 + $12 + $14 }
         /^status codes:/ { gsub(",", ""); bad = $7 + $9 }
         END { printf "%d %d %d %.0f %d\n", total, ok, failed, rps, bad }' "$WORK/logs/h2load.out"
}

CONFIGS=(
    "ccc-256-h2c|ccc|256|64MiB|h2c"
    "ccc-256-h1|ccc|256|64MiB|h1"
    "ccc-all-h2c|ccc|50000|2GiB|h2c"
    "ccc-all-h1|ccc|50000|2GiB|h1"
    "nginx-h2c|nginx|-|-|h2c"
    "nginx-h1|nginx|-|-|h1"
    "ccc-all-h2tls|ccc|50000|2GiB|h2tls"
    "ccc-all-h1tls|ccc|50000|2GiB|h1tls"
    "nginx-h2tls|nginx|-|-|h2tls"
    "nginx-h1tls|nginx|-|-|h1tls"
    "ccc-handshake|ccc|256|64MiB|handshake"
    "nginx-handshake|nginx|-|-|handshake"
)
# BASE_BIN (another build of ccc, as bench/rps.sh takes it): the same over
# TLS and the new connections, with that build.
if [ -n "${BASE_BIN:-}" ]; then
    CONFIGS+=(
        "base-all-h2tls|base|50000|2GiB|h2tls"
        "base-all-h1tls|base|50000|2GiB|h1tls"
        "base-handshake|base|256|64MiB|handshake"
    )
fi
if [ -n "$H2_ONLY" ]; then
    kept=()
    for cfg in "${CONFIGS[@]}"; do [[ ${cfg%%|*} =~ $H2_ONLY ]] && kept+=("$cfg"); done
    CONFIGS=("${kept[@]}")
fi

run_h2() { # config round
    local name server entries bytes proto
    IFS='|' read -r name server entries bytes proto <<<"$1"
    wait_for_quiet
    local tls=()
    case $proto in *tls | handshake) tls=(CCC_TLS_CERT="$WORK/tls/cert.pem" CCC_TLS_KEY="$WORK/tls/key.pem") ;; esac
    case $server in
        ccc) start_ccc "$WORK/bin/ccc" "$THREADS" "$entries" "$bytes" "${tls[@]}" ;;
        base) start_ccc "$WORK/bin/ccc-base" "$THREADS" "$entries" "$bytes" "${tls[@]}" ;;
        nginx) start_nginx ;;
    esac
    local port=$PORT scheme=http
    [ "$server" = nginx ] && [ "$proto" = h2c ] && port=$NGINX_H2_PORT
    [ ${#tls[@]} = 0 ] || scheme=https
    [ "$server" = nginx ] && [ "$scheme" = https ] && port=$NGINX_TLS_PORT
    local first base="$scheme://127.0.0.1:$port"
    first=$(head -1 "$WORK/data/urls_hot.txt")
    wait_http "$base$first" || die "$name did not start"
    check_gzip "$base$first" || die "$name: $first is not a 200 gzip answer"
    if [ "$entries" = 50000 ]; then
        fill_cache "$base" "$WORK/data/urls.txt"
    fi
    h2 "$WARMUP" "$proto" "$port" >/dev/null || die "$name: warm-up failed"
    local before after result
    before=$(cpu_ticks "${SERVER_PIDS[@]}")
    result=$(h2 "$DURATION" "$proto" "$port") || die "$name: h2load failed"
    after=$(cpu_ticks "${SERVER_PIDS[@]}")
    stop_server
    local total ok failed rps bad cpu_s per_1k
    read -r total ok failed rps bad <<<"$result"
    cpu_s=$(awk -v b="$before" -v a="$after" -v hz="$HZ" 'BEGIN {
        split(b, x, " "); split(a, y, " "); printf "%.2f", (y[1] + y[2] - x[1] - x[2]) / hz }')
    per_1k=$(awk -v c="$cpu_s" -v r="$ok" 'BEGIN { printf "%.4f", (r > 0 ? 1000 * c / r : 0) }')
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$2" "$rps" "$ok" "$((failed + bad))" \
        "$cpu_s" "$per_1k" "$BUSY" >>"$WORK/h2load.tsv"
    log "$(printf '%-12s round %d: %6d req/s, %.4f CPU-s/1k req, %d failed or >= 400' \
        "$name" "$2" "$rps" "$per_1k" "$((failed + bad))")"
}

h2_col() { # name column
    awk -F'\t' -v n="$1" -v c="$2" 'NR > 1 && $1 == n { print $c }' "$WORK/h2load.tsv"
}

h2_table() {
    echo "| configuration | runs | req/s median | min / max | CPU-s per 1000 req (median) | failed or >= 400 |"
    echo "|---|---:|---:|---:|---:|---:|"
    local cfg name
    for cfg in "${CONFIGS[@]}"; do
        name=${cfg%%|*}
        if [ -z "$(h2_col "$name" 3)" ]; then
            echo "| $name | 0 | - | - | - | - |"
            continue
        fi
        printf '| %s | %d | %.0f | %s / %s | %.4f | %d |\n' "$name" "$(h2_col "$name" 3 | wc -l)" \
            "$(h2_col "$name" 3 | median)" "$(h2_col "$name" 3 | sort -n | head -1)" "$(h2_col "$name" 3 | sort -n | tail -1)" \
            "$(h2_col "$name" 7 | median)" "$(h2_col "$name" 5 | awk '{ s += $1 } END { print s + 0 }')"
    done
}

if [ "${SUMMARY_ONLY:-0}" != 1 ]; then
    printf 'config\tround\trps\tsucceeded\tfailed\tcpu_s\tcpu_s_per_1k\tmachine_busy_pct_before\n' \
        >"$WORK/h2load.tsv"
    log "h2load $(h2load --version | head -1 | cut -d' ' -f2); $CLIENTS clients, $STREAMS streams (h2c), ${DURATION}s"
    n=${#CONFIGS[@]}
    for round in $(seq "$ROUNDS"); do
        for i in $(seq 0 $((n - 1))); do
            run_h2 "${CONFIGS[$(((i + round - 1) % n))]}" "$round"
        done
    done
fi
h2_table
