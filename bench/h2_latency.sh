#!/usr/bin/env bash
# HTTP/2 against HTTP/1.1 over a real round trip: headless Chromium loads a
# page that imports lodash-es 4.17.21's lodash.js as an ES module (640
# modules) from `ccc serve` and from nginx, both over TLS, across a link
# with 25 ms of delay each way (50 ms round trip) between two network
# namespaces this script makes.
#
#   bash bench/h2_latency.sh      # as root on a Debian machine with a Rust toolchain
#   RUNS=3 bash bench/h2_latency.sh
#
# What it does, in one run:
#   1. installs chromium, iproute2, iputils-ping, nginx with
#      libnginx-mod-http-brotli-static, npm, openssl and python3 from Debian
#      when they are missing; builds ccc and examples/page_load.rs in release
#      mode and copies both to $WORK/bin;
#   2. packs lodash-es 4.17.21 with `npm pack` (unless $LODASH_ES names the
#      tarball), publishes it and the page into $WORK/cdn.db and exports both
#      with `ccc export` for nginx; makes a self-signed ECDSA certificate for
#      $SRV_IP with openssl;
#   3. creates the network namespaces $NS_SRV and $NS_CLI joined by a veth
#      pair ($SRV_IP/30 and $CLI_IP/30, addresses that exist only inside
#      those namespaces) with `tc qdisc add dev ... root netem delay $DELAY`
#      on both ends, and checks the round trip with ping. A kernel without
#      sch_netem (this project's Firecracker machines have none, and no
#      modules to load) gets the same delay from bench/netdelay.py instead:
#      a TUN device in each namespace, every packet copied across after
#      $DELAY (LINK=netem or LINK=tun forces one);
#   4. in $NS_SRV starts `ccc serve --tls-cert --tls-key` (ALPN h2 and
#      http/1.1) on port 8443, and nginx on the exported files (gzip_static
#      and brotli_static on: the bytes ccc sends) with `listen ... ssl http2`
#      on 9443 and plain `listen ... ssl` (HTTP/1.1 only) on 9444; checks
#      that each answers the page;
#   5. takes `flock $LOCK`, then for RUNS rounds loads the page once per
#      configuration, the order rotating every round:
#        ccc-h2     ccc on 8443
#        ccc-h1     ccc on 8443, Chromium with --disable-http2
#        nginx-h2   nginx on 9443
#        nginx-h1   nginx on 9444, Chromium with --disable-http2
#      each load in $NS_CLI by a fresh Chromium (new profile, so nothing
#      cached; examples/page_load.rs), after waiting (IDLE_WAIT=30 s at most
#      per load, IDLE_BUDGET=600 s in all) until the machine is under
#      IDLE_MAX_BUSY=25 % busy; timed from the navigation's start to the
#      moment the page's module script ran (`performance.now()`), with the
#      TCP connections the server namespace accepted meanwhile
#      (PassiveOpens); then releases the lock;
#   6. writes $WORK/runs.jsonl (one line per load), $WORK/table.md and
#      $WORK/section.md (date, machine, commit, command, the table) and
#      prints the table.
#
# Everything it starts is stopped and both namespaces are deleted on exit,
# failure or signal (trap). The run is bounded: LOCK_WAIT (default 3600 s)
# for the lock, MAX_SECONDS (default 1800) for the rest, 120 s per page
# load, 30 s for each server to answer.
#
# Knobs: WORK (/tmp/ccc-h2lat), RUNS (5), DELAY (25ms: each way, in ms),
# LINK (auto, netem or tun), NS_SRV (ccc-srv), NS_CLI (ccc-cli), SRV_IP
# (10.203.0.1), CLI_IP (10.203.0.2), LODASH_ES (a tarball of lodash-es
# 4.17.21), CONFIGS (a subset of the four, in order), PAGE_LOAD_ARGS (more
# arguments for page_load), SKIP_BUILD=1 (reuse $WORK/bin), LOCK
# (/tmp/ccc-bench.lock), LOCK_WAIT, MAX_SECONDS, IDLE_MAX_BUSY, IDLE_WAIT, IDLE_BUDGET, CCC_COMMIT
# (reported when the tree is not a git work tree).

set -euo pipefail

MAX_SECONDS=${MAX_SECONDS:-1800}
LOCK_WAIT=${LOCK_WAIT:-3600}
if [ -z "${H2LAT_BOUNDED:-}" ]; then
    # The whole run under one deadline; TERM lets the trap below clean up.
    # --foreground: Ctrl-C still reaches the script; the kill comes only if
    # the trap has not finished 180 s after the TERM.
    H2LAT_BOUNDED=1 exec timeout --foreground --kill-after=180 "$((MAX_SECONDS + LOCK_WAIT))" bash "$0" "$@"
fi

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib/common.sh
. "$REPO/bench/lib/common.sh"
WORK=${WORK:-/tmp/ccc-h2lat}
RUNS=${RUNS:-5}
DELAY=${DELAY:-25ms}
NS_SRV=${NS_SRV:-ccc-srv}
NS_CLI=${NS_CLI:-ccc-cli}
SRV_IP=${SRV_IP:-10.203.0.1}
CLI_IP=${CLI_IP:-10.203.0.2}
VETH_SRV=${VETH_SRV:-ccch2-srv}
VETH_CLI=${VETH_CLI:-ccch2-cli}
LOCK=${LOCK:-/tmp/ccc-bench.lock}
BROTLI_MODULE=/usr/lib/nginx/modules/ngx_http_brotli_static_module.so
CCC_PORT=8443
NGINX_H2_PORT=9443
NGINX_H1_PORT=9444
PAGE=/assets/page/1.0.0/index.html

log() { printf '[h2_latency %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() {
    log "error: $*"
    exit 1
}

[ "$(id -u)" = 0 ] || die "needs root (network namespaces, tc, apt-get)"

# ---------------------------------------------------------------- cleanup
CREATED_NS=()
cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    set +e
    # Everything left in our namespaces was started by this script.
    for ns in "${CREATED_NS[@]}"; do
        local pids
        pids=$(ip netns pids "$ns" 2>/dev/null)
        [ -z "$pids" ] || kill $pids 2>/dev/null
    done
    sleep 0.5
    for ns in "${CREATED_NS[@]}"; do
        local pids
        pids=$(ip netns pids "$ns" 2>/dev/null)
        [ -z "$pids" ] || kill -9 $pids 2>/dev/null
        ip netns del "$ns" 2>/dev/null
    done
    [ "${#CREATED_NS[@]}" -eq 0 ] || log "stopped the servers, deleted ${CREATED_NS[*]}"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---------------------------------------------------------------- tools
install_tools() {
    local missing=()
    [ -x /usr/bin/chromium ] || missing+=(chromium)
    command -v ip >/dev/null && command -v tc >/dev/null || missing+=(iproute2)
    command -v ping >/dev/null || missing+=(iputils-ping)
    command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || missing+=(nginx)
    command -v npm >/dev/null || [ -n "${LODASH_ES:-}" ] || missing+=(npm)
    command -v openssl >/dev/null || missing+=(openssl)
    [ -x /usr/bin/python3 ] || missing+=(python3)
    [ -f "$BROTLI_MODULE" ] || missing+=(libnginx-mod-http-brotli-static)
    if [ ${#missing[@]} -gt 0 ]; then
        log "installing ${missing[*]}"
        apt-get -o DPkg::Lock::Timeout=300 update -qq
        DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq \
            --no-install-recommends "${missing[@]}" >/dev/null
    fi
    NGINX=$(command -v nginx || echo /usr/sbin/nginx)
    PYTHON=/usr/bin/python3
    "$NGINX" -V 2>&1 | grep -q -- --with-http_v2_module || die "$NGINX lacks HTTP/2"
    "$NGINX" -V 2>&1 | grep -q -- --with-http_gzip_static_module || die "$NGINX lacks gzip_static"
}

# ---------------------------------------------------------------- build, catalog, certificate
build() {
    mkdir -p "$WORK/bin"
    if [ -z "${SKIP_BUILD:-}" ]; then
        command -v cargo >/dev/null || die "needs a Rust toolchain on PATH"
        log "building ccc and examples/page_load.rs (release)"
        (cd "$REPO" && cargo build --release --locked --bin ccc --example page_load)
        local target
        target=$(target_dir)
        cp "$target/release/ccc" "$target/release/examples/page_load" "$WORK/bin/"
    fi
    [ -x "$WORK/bin/ccc" ] && [ -x "$WORK/bin/page_load" ] || die "no binaries in $WORK/bin"
}

catalog() {
    local tarball=${LODASH_ES:-$WORK/npm/lodash-es-4.17.21.tgz}
    if [ ! -f "$tarball" ]; then
        log "npm pack lodash-es@4.17.21"
        mkdir -p "$WORK/npm"
        (cd "$WORK/npm" && timeout 300 npm pack --silent lodash-es@4.17.21 >/dev/null)
    fi
    rm -rf "$WORK/cdn.db" "$WORK/cdn.db-wal" "$WORK/cdn.db-shm" "$WORK/page" "$WORK/export"
    mkdir -p "$WORK/page"
    # The page of tests/serve_protocol.rs, plus: a resource timing buffer
    # large enough for every module (the default keeps 250 entries) and the
    # moment the module graph has run, for page_load.
    cat >"$WORK/page/index.html" <<'EOF'
<!doctype html><meta charset=utf-8><title>lodash-es</title><link rel=icon href="data:,">
<script>performance.setResourceTimingBufferSize(10000);</script>
<script type=module>
import * as _ from '/assets/lodash-es/4.17.21/lodash.js';
window.loadedAt = performance.now();
window.exportCount = Object.keys(_).length;
document.body.textContent = _.kebabCase('Loaded From CCC');
</script>
EOF
    local ccc=("$WORK/bin/ccc" --db "$WORK/cdn.db")
    "${ccc[@]}" publish lodash-es@4.17.21 "$tarball" >"$WORK/logs/publish.log"
    "${ccc[@]}" publish page@1.0.0 "$WORK/page" >>"$WORK/logs/publish.log"
    "${ccc[@]}" export "$WORK/export" >"$WORK/logs/export.log"
    MODULE_FILES=$(find "$WORK/export/lodash-es/4.17.21" -name '*.js' | wc -l)
    GZ_FILES=$(find "$WORK/export/lodash-es/4.17.21" -name '*.js.gz' | wc -l)
    log "catalog: lodash-es@4.17.21 ($MODULE_FILES .js files, $GZ_FILES with .gz) and page@1.0.0"

    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
        -subj "/CN=$SRV_IP" -addext "subjectAltName=IP:$SRV_IP" \
        -keyout "$WORK/tls/key.pem" -out "$WORK/tls/cert.pem" 2>"$WORK/logs/openssl.log"
    SPKI=$(openssl x509 -in "$WORK/tls/cert.pem" -noout -pubkey \
        | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64)
}

# ---------------------------------------------------------------- namespaces
addresses() {
    ip -n "$NS_SRV" addr add "$SRV_IP/30" dev "$VETH_SRV"
    ip -n "$NS_CLI" addr add "$CLI_IP/30" dev "$VETH_CLI"
    for ns in "$NS_SRV" "$NS_CLI"; do ip -n "$ns" link set lo up; done
    ip -n "$NS_SRV" link set "$VETH_SRV" up
    ip -n "$NS_CLI" link set "$VETH_CLI" up
}

# A veth pair with netem on both ends; fails, leaving no link, when the
# kernel has no sch_netem.
veth_netem() {
    ip -n "$NS_SRV" link add "$VETH_SRV" type veth peer name "$VETH_CLI" netns "$NS_CLI"
    if ! tc -n "$NS_SRV" qdisc add dev "$VETH_SRV" root netem delay "$DELAY" 2>"$WORK/logs/tc.err"; then
        ip -n "$NS_SRV" link del "$VETH_SRV"
        return 1
    fi
    tc -n "$NS_CLI" qdisc add dev "$VETH_CLI" root netem delay "$DELAY"
    addresses
}

namespaces() {
    for ns in "$NS_SRV" "$NS_CLI"; do
        if ip netns list | grep -qw -- "$ns"; then
            die "network namespace $ns exists (another run, or a stale one: ip netns del $ns)"
        fi
    done
    ip netns add "$NS_SRV"
    CREATED_NS+=("$NS_SRV")
    ip netns add "$NS_CLI"
    CREATED_NS+=("$NS_CLI")
    # The link: a veth pair with netem on both ends; on a kernel without
    # sch_netem (a Firecracker guest's, say) bench/netdelay.py's two TUN
    # devices with the same delay each way instead.
    if [ "${LINK:-auto}" != tun ] && veth_netem; then
        LINK_DESC="veth pair, \`tc qdisc add dev ... root netem delay $DELAY\` on both ends"
    else
        [ "${LINK:-auto}" != netem ] || die "tc netem is not available here (LINK=netem)"
        log "no sch_netem in this kernel: a TUN delay line (bench/netdelay.py) instead"
        ip netns exec "$NS_SRV" "$PYTHON" -B "$REPO/bench/netdelay.py" --delay-ms "${DELAY%ms}" \
            "$NS_SRV" "$VETH_SRV" "$NS_CLI" "$VETH_CLI" \
            >"$WORK/logs/netdelay.out" 2>"$WORK/logs/netdelay.err" </dev/null &
        local i
        for i in $(seq 1 50); do
            grep -q ready "$WORK/logs/netdelay.out" 2>/dev/null && break
            sleep 0.1
        done
        grep -q ready "$WORK/logs/netdelay.out" || die "netdelay.py did not start (see $WORK/logs/netdelay.err)"
        addresses
        LINK_DESC="TUN devices joined by bench/netdelay.py, $DELAY each way (this kernel has no sch_netem)"
    fi
    ip netns exec "$NS_CLI" ping -c 5 -i 0.2 -W 2 "$SRV_IP" >"$WORK/logs/ping.log" \
        || die "no ping across the link (see $WORK/logs/ping.log)"
    RTT=$(sed -n 's|.*= \([0-9.]*\)/\([0-9.]*\)/\([0-9.]*\)/.*|min \1 / avg \2 / max \3 ms|p' \
        "$WORK/logs/ping.log")
    local avg
    avg=$(sed -n 's|.*= [0-9.]*/\([0-9.]*\)/.*|\1|p' "$WORK/logs/ping.log")
    log "namespaces $NS_SRV ($SRV_IP) and $NS_CLI ($CLI_IP), $LINK_DESC; ping: $RTT"
    local want=${DELAY%ms}
    awk -v a="$avg" -v w="$want" 'BEGIN { exit !(a >= 2 * w * 0.9 && a <= 2 * w * 1.5 + 2) }' \
        || die "round trip $avg ms, expected about $((2 * want)) ms"
}

# ---------------------------------------------------------------- servers
write_nginx_conf() {
    mkdir -p "$WORK/nginx/tmp"
    cat >"$WORK/nginx/nginx.conf" <<EOF
# Same files as ccc (ccc export, .gz and .br siblings), gzip_static and
# brotli_static (the bytes ccc sends), TLS; one listener speaks HTTP/2 (and
# HTTP/1.1 by ALPN), the other HTTP/1.1 only.
load_module $BROTLI_MODULE;
worker_processes auto;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/error.log warn;
events { worker_connections 1024; }
http {
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    access_log off;
    sendfile on;
    tcp_nodelay on;
    keepalive_timeout 75;
    ssl_certificate $WORK/tls/cert.pem;
    ssl_certificate_key $WORK/tls/key.pem;
    ssl_protocols TLSv1.2 TLSv1.3;
    client_body_temp_path $WORK/nginx/tmp/body;
    proxy_temp_path $WORK/nginx/tmp/proxy;
    fastcgi_temp_path $WORK/nginx/tmp/fastcgi;
    uwsgi_temp_path $WORK/nginx/tmp/uwsgi;
    scgi_temp_path $WORK/nginx/tmp/scgi;
    server {
        listen $SRV_IP:$NGINX_H2_PORT ssl http2;
        listen $SRV_IP:$NGINX_H1_PORT ssl;
        location /assets/ {
            alias $WORK/export/;
            gzip_static on;
            brotli_static on;
            add_header Cache-Control "public, max-age=31536000, immutable";
            add_header Access-Control-Allow-Origin "*";
            add_header Vary "Accept-Encoding";
        }
    }
}
EOF
    ip netns exec "$NS_SRV" "$NGINX" -t -c "$WORK/nginx/nginx.conf" -p "$WORK/nginx" 2>"$WORK/logs/nginx-t.log" \
        || die "nginx -t failed (see $WORK/logs/nginx-t.log)"
}

# Waits until URL answers 200 from the client namespace (HTTP/1.1, no curl
# needed: openssl s_client).
wait_for() {
    local port=$1 what=$2 i
    local status
    for i in $(seq 1 60); do
        # openssl exits 1 when the server closes without close_notify.
        status=$(printf 'HEAD %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n' "$PAGE" "$SRV_IP" \
            | ip netns exec "$NS_CLI" timeout 5 openssl s_client -quiet -connect "$SRV_IP:$port" \
                -alpn http/1.1 2>/dev/null | sed -n 1p) || true
        case $status in "HTTP/1.1 200"*) return 0 ;; esac
        sleep 0.5
    done
    die "$what on $port does not answer $PAGE with 200"
}

servers() {
    log "starting ccc serve (TLS, :$CCC_PORT) and nginx (:$NGINX_H2_PORT h2, :$NGINX_H1_PORT http/1.1) in $NS_SRV"
    ip netns exec "$NS_SRV" "$WORK/bin/ccc" --db "$WORK/cdn.db" serve --bind "$SRV_IP" \
        --port "$CCC_PORT" --tls-cert "$WORK/tls/cert.pem" --tls-key "$WORK/tls/key.pem" \
        >"$WORK/logs/ccc.out" 2>"$WORK/logs/ccc.err" </dev/null &
    write_nginx_conf
    ip netns exec "$NS_SRV" "$NGINX" -c "$WORK/nginx/nginx.conf" -p "$WORK/nginx" \
        2>"$WORK/logs/nginx.err"
    wait_for "$CCC_PORT" "ccc serve"
    wait_for "$NGINX_H2_PORT" nginx
    wait_for "$NGINX_H1_PORT" nginx
}

# ---------------------------------------------------------------- measuring
read -r -a CONFIGS <<<"${CONFIGS:-ccc-h2 ccc-h1 nginx-h2 nginx-h1}"
read -r -a PAGE_LOAD_ARGS <<<"${PAGE_LOAD_ARGS:-}"
config_url() {
    case $1 in
        ccc-*) echo "https://$SRV_IP:$CCC_PORT$PAGE" ;;
        nginx-h2) echo "https://$SRV_IP:$NGINX_H2_PORT$PAGE" ;;
        nginx-h1) echo "https://$SRV_IP:$NGINX_H1_PORT$PAGE" ;;
    esac
}

# Waits (IDLE_WAIT s at most before a load, IDLE_BUDGET s in all) until the
# machine, idle servers included, is under IDLE_MAX_BUSY % busy; leaves the
# last reading in BUSY.
IDLE_MAX_BUSY=${IDLE_MAX_BUSY:-25}
IDLE_WAIT=${IDLE_WAIT:-30}
IDLE_LEFT=${IDLE_BUDGET:-600}
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

# TCP connections accepted in the server namespace so far (PassiveOpens):
# its only clients are the browsers of the loads.
passive_opens() {
    ip netns exec "$NS_SRV" awk '$1 == "Tcp:" {
        if (!n) { for (i = 2; i <= NF; i++) if ($i == "PassiveOpens") n = i }
        else print $n }' /proc/net/snmp
}

load_page() {
    local config=$1 round=$2 switches=("--ignore-certificate-errors-spki-list=$SPKI")
    case $config in *-h1) switches+=(--disable-http2) ;; esac
    local line opened
    wait_for_quiet
    opened=$(passive_opens)
    # 9>&-: the browser must not inherit the benchmark lock.
    if ! line=$(ip netns exec "$NS_CLI" timeout --kill-after=10 120 "$WORK/bin/page_load" \
        "$(config_url "$config")" ${PAGE_LOAD_ARGS[@]+"${PAGE_LOAD_ARGS[@]}"} -- "${switches[@]}" 2>>"$WORK/logs/page_load.err" 9>&-); then
        log "$config round $round: page_load failed (see $WORK/logs/page_load.err)"
        line='{"failed":true}'
    fi
    opened=$(($(passive_opens) - opened))
    printf '{"config":"%s","round":%d,"busy_before":%d,"server_connections":%d,"result":%s}\n' \
        "$config" "$round" "$BUSY" "$opened" "$line" >>"$WORK/runs.jsonl"
    log "$config round $round: $(field loaded_ms <<<"$line") ms, $(field modules <<<"$line") modules over $(field protocols <<<"$line"), $opened connection(s); machine $BUSY% busy the second before"
    case $line in *'"problems":[]'*|*'"failed"'*) ;; *) log "$config round $round: the page reported problems: $line" ;; esac
}

measure() {
    : >"$WORK/runs.jsonl"
    exec 9>"$LOCK"
    log "waiting for $LOCK (at most $LOCK_WAIT s)"
    flock -w "$LOCK_WAIT" 9 || die "$LOCK still held by another benchmark after $LOCK_WAIT s"
    START=$(date -u '+%Y-%m-%d %H:%M')
    log "measuring: $RUNS rounds x ${#CONFIGS[@]} configurations"
    local round i n=${#CONFIGS[@]}
    for round in $(seq 1 "$RUNS"); do
        for i in $(seq 0 $((n - 1))); do
            load_page "${CONFIGS[$(((i + round - 1) % n))]}" "$round"
        done
    done
    END=$(date -u '+%H:%M')
    flock -u 9
    exec 9>&-
}

# ---------------------------------------------------------------- summary
# One number field of a JSON line, by name (page_load prints flat JSON).
field() { sed -n "s/.*\"$1\":\"\{0,1\}\([^\",}]*\).*/\1/p"; }

median() { # FORMAT: the median of the numbers on stdin
    sort -n | awk -v f="$1" '{ v[NR] = $1 } END {
        printf f, NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

summarize() {
    local table="$WORK/table.md"
    {
        echo "| configuration | loads | module graph loaded, median | min | max | page's last byte, median | module requests (from cache) | module bytes | protocol (page, modules) | connections | machine busy before, median |"
        echo "|---|--:|--:|--:|--:|--:|--:|--:|---|--:|--:|"
        for config in "${CONFIGS[@]}"; do
            local rows ok
            rows=$(grep "\"config\":\"$config\"" "$WORK/runs.jsonl" | grep -v '"failed"' || true)
            ok=$(printf '%s' "$rows" | grep -c . || true)
            if [ "$ok" -eq 0 ]; then
                echo "| $config | 0 | - | - | - | - | - | - | - | - | - |"
                continue
            fi
            local stats first modules cached bytes pproto protos conns busy
            stats=$(printf '%s\n' "$rows" | field loaded_ms | sort -n | awk '
                { v[NR] = $1 } END {
                    m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
                    printf "%.0f ms | %.0f ms | %.0f ms", m, v[1], v[NR] }')
            first=$(printf '%s\n' "$rows" | field page_response_ms | median "%.0f ms")
            busy=$(printf '%s\n' "$rows" | field busy_before | median "%.0f%%")
            cached=$(printf '%s\n' "$rows" | field cached | sort -n | uniq | paste -sd/)
            bytes=$(printf '%s\n' "$rows" | field module_bytes | sort -n | uniq | paste -sd/)
            pproto=$(printf '%s\n' "$rows" | field page_protocol | sort -u | paste -sd/)
            modules=$(printf '%s\n' "$rows" | field modules | sort -u | paste -sd/)
            protos=$(printf '%s\n' "$rows" | field protocols | sort -u | paste -sd/)
            conns=$(printf '%s\n' "$rows" | field server_connections | sort -n | uniq | paste -sd/)
            local failed
            failed=$(grep "\"config\":\"$config\"" "$WORK/runs.jsonl" | grep -c '"failed"' || true)
            local loads=$ok
            [ "$failed" -eq 0 ] || loads="$ok (+$failed failed)"
            echo "| $config | $loads | $stats | $first | $modules ($cached) | $bytes | $pproto, $protos | $conns | $busy |"
        done
    } >"$table"
    local commit
    commit=${CCC_COMMIT:-$(cd "$REPO" && git rev-parse --short HEAD 2>/dev/null || echo unknown)}
    if [ -z "${CCC_COMMIT:-}" ] && ! (cd "$REPO" && git diff --quiet HEAD 2>/dev/null); then
        commit="$commit (with uncommitted changes)"
    fi
    {
        echo "**Conditions.** $START-$END UTC; $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) cores, Linux $(uname -r); $(/usr/bin/chromium --version 2>/dev/null | head -1); $("$NGINX" -v 2>&1 | sed 's/.*: //'); commit $commit."
        echo "The link: $LINK_DESC. Round trip (ping, 5 packets): $RTT."
        echo
        echo '```sh'
        echo "RUNS=$RUNS DELAY=$DELAY bash bench/h2_latency.sh"
        echo '```'
        echo
        cat "$table"
    } >"$WORK/section.md"
    echo
    cat "$table"
    log "one line per load: $WORK/runs.jsonl; the section for bench/RPS.md: $WORK/section.md"
}

# ---------------------------------------------------------------- main
mkdir -p "$WORK/logs" "$WORK/tls"
: >"$WORK/logs/page_load.err"
install_tools
build
catalog
namespaces
servers
measure
summarize
