#!/usr/bin/env bash
# A site's requests against /assets/ hits and against nginx serving the
# same dist/ with try_files and open_file_cache, all on 127.0.0.1.
#
#   bash bench/site.sh                       # as root on Debian, with a Rust toolchain
#   ROUNDS=3 DURATION=6 bash bench/site.sh
#
# The app: a built SPA of 61 files (index.html, 30 fingerprinted chunks
# under assets/, 10 stylesheets, 10 images, 10 docs pages), made by this
# script from a fixed seed, published as app@1.0.0 and set as the default
# site with --spa; the same files exported (with .gz siblings) are nginx's
# root, with `try_files $uri $uri/ /index.html`, gzip_static, open_file_cache
# and the cache headers a site sends (immutable under /assets/, no-cache
# elsewhere).
#
# Configurations (server, URL list), every request with Accept-Encoding: gzip:
#   ccc-root       ccc, `/` (the site's index.html)
#   ccc-assets     ccc on a copy of the catalog without the site,
#                  `/assets/app/1.0.0/index.html` (the same file, an /assets/ hit)
#   ccc-assets-beside  ccc with the site, the same /assets/ URL (a CDN path
#                  on a site's host pays for looking at the site first)
#   nginx-root     nginx, `/`
#   ccc-app        ccc, every file of the app by its site URL, uniformly at random
#   ccc-app-assets ccc without the site, the same files by their
#                  /assets/app/1.0.0/ URLs
#   nginx-app      nginx, the app's site URLs
#   ccc-spa        ccc, SPA routes (no file: index.html), uniformly at random
#   nginx-spa      nginx, the same routes (try_files falls back to /index.html)
# Every round runs each configuration once, in an order that rotates; the
# server is pinned to SERVER_CPU and wrk to LOAD_CPU, and each server is
# warmed for WARMUP seconds before the measured DURATION. ccc's cache holds
# the whole app (it does by default). Results: $WORK/runs.tsv (rps, the
# server's CPU seconds) and the ratios printed at the end, per round.
#
# Knobs: WORK (/tmp/ccc-site), ROUNDS (3), DURATION (6), WARMUP (2), CONNS
# (50), SERVER_CPU (0), LOAD_CPU (1), SKIP_BUILD=1 (use $WORK/bin/ccc), ONLY
# (a regular expression of configurations).
#
# CALLGRIND=1 counts instructions per request instead, for the ccc
# configurations: each server runs under `valgrind --tool=callgrind`, is
# warmed for WARMUP s, and the counts of the next DURATION s (10
# connections) are divided by the requests wrk made. Other processes on the
# machine do not change them, unlike requests per second.

set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib/common.sh
. "$REPO/bench/lib/common.sh"
WORK=${WORK:-/tmp/ccc-site}
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-6}
WARMUP=${WARMUP:-2}
CONNS=${CONNS:-50}
SERVER_CPU=${SERVER_CPU:-0}
LOAD_CPU=${LOAD_CPU:-1}
ONLY=${ONLY:-.}
CCC_PORT=18433
NGINX_PORT=18435
LUA=$REPO/bench/lib/urls.lua
HZ=$(getconf CLK_TCK)
unset CCC_DB_PATH CCC_PORT_ CCC_BIND CCC_THREADS CCC_CACHE_CAPACITY CCC_CACHE_BYTES

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

for tool in wrk curl taskset python3; do
    command -v "$tool" >/dev/null || die "needs $tool (apt-get install wrk curl util-linux python3)"
done
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$NGINX" ] || die "needs nginx (apt-get install nginx)"

mkdir -p "$WORK/bin" "$WORK/logs" "$WORK/data"
if [ -z "${SKIP_BUILD:-}" ]; then
    log "building ccc (release)"
    (cd "$REPO" && cargo build --release --locked --bin ccc)
    cp "$(target_dir)/release/ccc" "$WORK/bin/ccc"
fi
CCC=$WORK/bin/ccc

# ---------------------------------------------------------------- the app
rm -rf "$WORK/dist" "$WORK/export" "$WORK/data/cdn.db"* "$WORK/data/plain.db"*
python3 - "$WORK/dist" <<'PY'
import os, random, sys
out = sys.argv[1]
rng = random.Random(7)
alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
def write(rel, text):
    path = os.path.join(out, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
def words(n):
    return " ".join(rng.choice(["const", "let", "return", "function", "value", "state",
                                "render", "props", "=>", "{", "}", "(", ")", ";"])
                    for _ in range(n))
chunks = ["assets/chunk-" + "".join(rng.choice(alphabet) for _ in range(8)) + ".js" for _ in range(30)]
for c in chunks:
    write(c, words(rng.randint(300, 3000)))
styles = [f"css/s{i}.css" for i in range(10)]
for s in styles:
    write(s, "\n".join(f".c{j} {{ color: #{rng.randrange(1 << 24):06x}; }}" for j in range(rng.randint(50, 400))))
for i in range(10):
    write(f"img/i{i}.svg", "<svg xmlns='http://www.w3.org/2000/svg'>" + "<rect/>" * rng.randint(20, 200) + "</svg>")
for i in range(10):
    write(f"docs/p{i}/index.html", "<!doctype html><title>docs</title>" + "<p>" + words(200) + "</p>")
head = "".join(f'<link rel="stylesheet" href="/{s}">' for s in styles)
write("index.html", f'<!doctype html><html><head><meta charset="utf-8"><title>app</title>{head}'
      f'<script type="module" src="/{chunks[0]}"></script></head><body><div id="app"></div></body></html>')
PY
"$CCC" --db "$WORK/data/plain.db" publish app@1.0.0 "$WORK/dist" --quiet
"$CCC" --db "$WORK/data/cdn.db" publish app@1.0.0 "$WORK/dist" --quiet
"$CCC" --db "$WORK/data/cdn.db" site set default app --spa >/dev/null
"$CCC" --db "$WORK/data/cdn.db" export app@1.0.0 "$WORK/export" >/dev/null
ROOT=$WORK/export/app/1.0.0
(cd "$WORK/dist" && find . -type f | sed 's|^\.||' | sort) >"$WORK/data/files.txt"
echo / >"$WORK/data/root.txt"
echo /assets/app/1.0.0/index.html >"$WORK/data/assets-index.txt"
cp "$WORK/data/files.txt" "$WORK/data/app.txt"
sed 's|^|/assets/app/1.0.0|' "$WORK/data/files.txt" >"$WORK/data/app-assets.txt"
for i in $(seq 100); do echo "/settings/section$i/item$((i * 7 % 13))"; done >"$WORK/data/spa.txt"

mkdir -p "$WORK/nginx/tmp"
cat >"$WORK/nginx/nginx.conf" <<NGINX
worker_processes 1;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/error.log warn;
events { worker_connections 1024; }
http {
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    access_log off;
    sendfile on;
    tcp_nodelay on;
    keepalive_requests 100000000;
    open_file_cache max=10000 inactive=60s;
    open_file_cache_valid 60s;
    client_body_temp_path $WORK/nginx/tmp/body;
    proxy_temp_path $WORK/nginx/tmp/proxy;
    fastcgi_temp_path $WORK/nginx/tmp/fastcgi;
    uwsgi_temp_path $WORK/nginx/tmp/uwsgi;
    scgi_temp_path $WORK/nginx/tmp/scgi;
    server {
        listen 127.0.0.1:$NGINX_PORT;
        root $ROOT;
        gzip_static on;
        location /assets/ {
            add_header Cache-Control "public, max-age=31536000, immutable";
            add_header Vary "Accept-Encoding";
        }
        location / {
            try_files \$uri \$uri/ /index.html;
            add_header Cache-Control "no-cache";
            add_header Vary "Accept-Encoding";
        }
    }
}
NGINX
"$NGINX" -t -c "$WORK/nginx/nginx.conf" -p "$WORK/nginx" 2>"$WORK/logs/nginx-t.log" \
    || { cat "$WORK/logs/nginx-t.log" >&2; die "nginx config rejected"; }

# ---------------------------------------------------------------- servers
SERVER_PID=
SERVER_PIDS=()
start() { # ccc|ccc-plain|nginx
    if [ "$1" != nginx ]; then
        local db=$WORK/data/cdn.db
        [ "$1" = ccc-plain ] && db=$WORK/data/plain.db
        taskset -c "$SERVER_CPU" "$CCC" serve --db "$db" --bind 127.0.0.1 \
            --port "$CCC_PORT" --no-recompress >"$WORK/logs/server.out" 2>&1 &
        SERVER_PID=$!
        SERVER_PIDS=("$SERVER_PID")
        PORT=$CCC_PORT
    else
        taskset -c "$SERVER_CPU" "$NGINX" -c "$WORK/nginx/nginx.conf" -p "$WORK/nginx" \
            -g 'daemon off;' >"$WORK/logs/server.out" 2>&1 &
        SERVER_PID=$!
        PORT=$NGINX_PORT
        sleep 0.3
        mapfile -t workers < <(pgrep -P "$SERVER_PID" || true)
        SERVER_PIDS=("$SERVER_PID" "${workers[@]}")
    fi
    local i probe=/assets/app/1.0.0/index.html
    [ "$1" = nginx ] && probe=/
    for i in $(seq 100); do
        curl -sf -o /dev/null "http://127.0.0.1:$PORT$probe" && return 0
        sleep 0.1
    done
    cat "$WORK/logs/server.out" >&2
    die "$1 did not start"
}
stop() {
    [ -n "$SERVER_PID" ] || return 0
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=
}
trap stop EXIT
cpu_ticks() {
    local pid total=0
    for pid in "$@"; do
        total=$((total + $(awk '{ print $14 + $15 }' "/proc/$pid/stat" 2>/dev/null || echo 0)))
    done
    echo "$total"
}
# Busy ticks of CPU $1 (every process's), from /proc/stat.
core_busy() {
    awk -v c="cpu$1" '$1 == c { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat
}
load() { # seconds list mode
    timeout $(($1 + 20)) taskset -c "$LOAD_CPU" wrk -t1 -c"$CONNS" -d"$1"s --timeout 5s \
        -s "$LUA" "http://127.0.0.1:$PORT" -- "$2" "$3" >"$WORK/logs/wrk.out" 2>&1 \
        || { cat "$WORK/logs/wrk.out" >&2; return 1; }
    grep '^RESULT ' "$WORK/logs/wrk.out" | sed 's/^RESULT //'
}

CONFIGS=(
    "ccc-root|ccc|root.txt|seq"
    "ccc-assets|ccc-plain|assets-index.txt|seq"
    "ccc-assets-beside|ccc|assets-index.txt|seq"
    "nginx-root|nginx|root.txt|seq"
    "ccc-app|ccc|app.txt|random"
    "ccc-app-assets|ccc-plain|app-assets.txt|random"
    "nginx-app|nginx|app.txt|random"
    "ccc-spa|ccc|spa.txt|random"
    "nginx-spa|nginx|spa.txt|random"
)

run_one() { # config round
    local name server list mode
    IFS='|' read -r name server list mode <<<"$1"
    start "$server"
    load "$WARMUP" "$WORK/data/$list" "$mode" >/dev/null || die "$name: warm-up failed"
    local before after result core_before core_after
    before=$(cpu_ticks "${SERVER_PIDS[@]}")
    core_before=$(core_busy "$SERVER_CPU")
    result=$(load "$DURATION" "$WORK/data/$list" "$mode") || die "$name: wrk failed"
    core_after=$(core_busy "$SERVER_CPU")
    after=$(cpu_ticks "${SERVER_PIDS[@]}")
    stop
    local requests duration_us connect read write status timeout
    eval "$(echo "$result" | tr ' ' '\n' | grep -E '^(requests|duration_us|connect|read|write|status|timeout)=[0-9]+$')"
    local errors=$((connect + read + write + status + timeout))
    local rps us
    rps=$(awk -v r="$requests" -v d="$duration_us" 'BEGIN { printf "%.0f", r / (d / 1e6) }')
    us=$(awk -v t=$((after - before)) -v hz="$HZ" -v r="$requests" 'BEGIN { printf "%.2f", 1e6 * t / hz / r }')
    # What other processes took of the server's CPU during the run, in %.
    local others
    others=$(awk -v c=$((core_after - core_before)) -v s=$((after - before)) -v hz="$HZ" \
        -v d="$DURATION" 'BEGIN { o = (c - s) / hz; if (o < 0) o = 0; printf "%.0f", 100 * o / d }')
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$2" "$rps" "$us" "$errors" "$others" >>"$WORK/runs.tsv"
    log "$(printf '%-17s round %d: %7d req/s, %5.2f us CPU/req, %d errors, others %d%% of its CPU' \
        "$name" "$2" "$rps" "$us" "$errors" "$others")"
}

if [ -n "${CALLGRIND:-}" ]; then
    command -v valgrind >/dev/null || die "needs valgrind"
    mkdir -p "$WORK/callgrind"
    printf 'config\tinstructions_per_req\trequests\n' >"$WORK/instructions.tsv"
    for c in "${CONFIGS[@]}"; do
        IFS='|' read -r name server list mode <<<"$c"
        [[ $server == ccc* && $name =~ $ONLY ]] || continue
        db=$WORK/data/cdn.db
        [ "$server" = ccc-plain ] && db=$WORK/data/plain.db
        rm -f "$WORK/callgrind/$name".*
        valgrind --tool=callgrind --callgrind-out-file="$WORK/callgrind/$name.%p" \
            "$CCC" serve --db "$db" --bind 127.0.0.1 --port "$CCC_PORT" --threads 1 \
            --no-recompress >"$WORK/logs/$name.callgrind.log" 2>&1 &
        pid=$!
        PORT=$CCC_PORT
        for i in $(seq 300); do
            curl -sf -o /dev/null "http://127.0.0.1:$PORT/assets/app/1.0.0/index.html" && break
            sleep 0.2
        done
        CONNS=10 load "$WARMUP" "$WORK/data/$list" "$mode" >/dev/null
        callgrind_control -d "$pid" >/dev/null
        result=$(CONNS=10 load "$DURATION" "$WORK/data/$list" "$mode")
        callgrind_control -d "$pid" >/dev/null
        kill "$pid"
        wait "$pid" 2>/dev/null || true
        requests=$(echo "$result" | tr ' ' '\n' | sed -n 's/^requests=//p')
        total=$(sed -n 's/^summary: *\([0-9]*\).*/\1/p; s/^totals: *\([0-9]*\).*/\1/p' \
            "$WORK/callgrind/$name.$pid.2" | head -1)
        printf '%s\t%d\t%d\n' "$name" $((total / requests)) "$requests" | tee -a "$WORK/instructions.tsv"
    done
    exit 0
fi

printf 'config\tround\trps\tcpu_us_per_req\terrors\tothers_pct\n' >"$WORK/runs.tsv"
{
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
    echo "commit: $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "nginx: $("$NGINX" -v 2>&1)"
    echo "rounds=$ROUNDS duration=${DURATION}s warmup=${WARMUP}s conns=$CONNS server_cpu=$SERVER_CPU load_cpu=$LOAD_CPU"
} >"$WORK/machine.txt"
selected=()
for c in "${CONFIGS[@]}"; do
    [[ ${c%%|*} =~ $ONLY ]] && selected+=("$c")
done
for round in $(seq "$ROUNDS"); do
    n=${#selected[@]}
    for i in $(seq 0 $((n - 1))); do
        run_one "${selected[$(((i + round) % n))]}" "$round"
    done
done

# ---------------------------------------------------------------- ratios
# column 3: req/s; column 4: the server's CPU microseconds per request.
value_of() { awk -F'\t' -v n="$1" -v r="$2" -v c="$3" '$1 == n && $2 == r { print $c }' "$WORK/runs.tsv"; }
cat "$WORK/machine.txt"
header=$(for round in $(seq "$ROUNDS"); do printf ' round %d |' "$round"; done)
for what in "req/s, a / b|3|a/b" "CPU per request, b / a|4|b/a"; do
    IFS='|' read -r title column order <<<"$what"
    printf '\n| %s |%s\n|---|%s\n' "$title" "$header" "$(printf -- '--:|%.0s' $(seq "$ROUNDS"))"
    for pair in ccc-root/ccc-assets ccc-assets-beside/ccc-assets ccc-root/nginx-root \
        ccc-app/nginx-app ccc-app/ccc-app-assets ccc-spa/nginx-spa; do
        a=${pair%/*} b=${pair#*/}
        row="| $a / $b |"
        for round in $(seq "$ROUNDS"); do
            x=$(value_of "$a" "$round" "$column") y=$(value_of "$b" "$round" "$column")
            [ "$order" = b/a ] && { t=$x; x=$y; y=$t; }
            row+=" $(awk -v x="$x" -v y="$y" \
                'BEGIN { if (x > 0 && y > 0) printf "%.2f", x / y; else printf "n/a" }') |"
        done
        echo "$row"
    done
done
