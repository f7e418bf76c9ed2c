#!/usr/bin/env bash
# Two builds of `ccc serve` over TLS, side by side on one catalog: requests
# per second, and the server's CPU per request, over HTTP/2 (h2load, 10 streams a connection) and HTTP/1.1
# (h2load --h1, one request at a time), new TLS connections per second
# (wrk with `Connection: close`), and the RssAnon of 1,000 idle TLS
# connections (bench/lib/idle_tls.py), HTTP/1.1 and HTTP/2, each count on
# a fresh server.
#
#   bash bench/tls_ab.sh OLD_CCC NEW_CCC
#
# The catalog is examples/site (19 files, all cached); the certificate is
# a self-signed P-256 one. The server runs on CPU 0 and the load on CPU 1,
# in interleaved rounds (old, new, new, old, ...), each run a 2 s warm-up
# then 5 s measured, on 127.0.0.1 only. Knobs: WORK (/tmp/ccc-tls-ab),
# ROUNDS (3), CLIENTS (50), SKIP_IDLE=1. Needs h2load (nghttp2-client),
# wrk, openssl and a Python with the h2 package (WORK/py is made).

set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OLD=${1:?usage: tls_ab.sh OLD_CCC NEW_CCC}
NEW=${2:?usage: tls_ab.sh OLD_CCC NEW_CCC}
WORK=${WORK:-/tmp/ccc-tls-ab}
ROUNDS=${ROUNDS:-3}
CLIENTS=${CLIENTS:-50}
PORT=18450
unset CCC_DB_PATH CCC_PORT CCC_BIND CCC_THREADS CCC_CACHE_CAPACITY CCC_CACHE_BYTES

mkdir -p "$WORK"
rm -f "$WORK/cdn.db"
"$NEW" --db "$WORK/cdn.db" publish site@1.0.0 "$REPO/examples/site" --quiet >/dev/null
[ -s "$WORK/cert.pem" ] || openssl req -x509 -nodes -days 30 -subj /CN=127.0.0.1 \
    -newkey ec -pkeyopt ec_paramgen_curve:P-256 -addext subjectAltName=IP:127.0.0.1 \
    -keyout "$WORK/key.pem" -out "$WORK/cert.pem" 2>/dev/null
[ -x "$WORK/py/bin/python" ] || python3 -m venv "$WORK/py"
"$WORK/py/bin/pip" install --quiet --disable-pip-version-check 'h2>=4,<5'

URL=https://127.0.0.1:$PORT/assets/site/1.0.0/assets/js/app.3f9a2c.js
start() {
    taskset -c 0 "$1" --db "$WORK/cdn.db" serve --port "$PORT" --threads 1 --no-recompress \
        --tls-cert "$WORK/cert.pem" --tls-key "$WORK/key.pem" >"$WORK/serve.log" 2>&1 &
    echo $!
    sleep 1
}
stop() { kill "$1"; wait "$1" 2>/dev/null || true; }
# Each load prints "REQ/S REQUESTS" for its measured run.
warm_up() { taskset -c 1 h2load -t1 -c "$CLIENTS" -m 10 -D 2 "$URL" >/dev/null 2>&1; }
h2() {
    taskset -c 1 h2load -t1 -c "$CLIENTS" -m 10 -D 5 -H 'accept-encoding: gzip' "$URL" 2>/dev/null |
        awk '/^finished in/{gsub(",", "", $4); r = $4} /^requests:/{n = $2} END {print r, n}'
}
h1() {
    taskset -c 1 h2load --h1 -t1 -c "$CLIENTS" -m 1 -D 5 -H 'accept-encoding: gzip' "$URL" 2>/dev/null |
        awk '/^finished in/{gsub(",", "", $4); r = $4} /^requests:/{n = $2} END {print r, n}'
}
handshakes() {
    taskset -c 1 wrk -t1 -c "$CLIENTS" -d5s -H 'Connection: close' "$URL" |
        awk '/Requests\/sec/{r = $2} / requests in /{n = $1} END {print r, n}'
}
# "REQ/S | CPU µs per request" of load $1 against the server $2: its
# utime+stime around the run, over the requests the run made.
measured() {
    local t0 t1 rate count
    t0=$(awk '{print $14 + $15}' "/proc/$2/stat")
    read -r rate count < <("$1")
    t1=$(awk '{print $14 + $15}' "/proc/$2/stat")
    awk -v r="$rate" -v n="$count" -v t="$((t1 - t0))" -v hz="$(getconf CLK_TCK)" \
        'BEGIN {printf "%s | %.1f", r, (n > 0 ? t / hz * 1e6 / n : 0)}'
}

echo "# bench/tls_ab.sh on $(hostname), $(date -u +%Y-%m-%dT%H:%MZ)"
echo "$(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
echo "| round | build | h2 req/s | µs/req | h1 req/s | µs/req | handshakes/s | µs each |"
echo "|---|---|--:|--:|--:|--:|--:|--:|"
for round in $(seq "$ROUNDS"); do
    order="old new"
    [ $((round % 2)) = 0 ] && order="new old"
    for build in $order; do
        bin=$OLD
        [ "$build" = new ] && bin=$NEW
        pid=$(start "$bin")
        warm_up
        echo "| $round | $build | $(measured h2 "$pid") | $(measured h1 "$pid") | $(measured handshakes "$pid") |"
        stop "$pid"
    done
done
[ "${SKIP_IDLE:-}" ] && exit 0
# A fresh server for each count, so that neither starts on pages the
# other's connections freed.
for proto in http1 h2; do
    for build in old new; do
        bin=$OLD
        [ "$build" = new ] && bin=$NEW
        pid=$(start "$bin")
        "$WORK/py/bin/python" "$REPO/bench/lib/idle_tls.py" 127.0.0.1 "$PORT" 1000 "$proto" \
            /assets/site/1.0.0/index.html "$build" "$pid"
        stop "$pid"
    done
done
