#!/usr/bin/env bash
# Instructions per cache miss of `ccc serve` at 40k and 1M assets, counted
# by callgrind (valgrind), which a busy machine does not disturb.
#
#   bash bench/scale_callgrind.sh            # after bench/scale.sh seeded /tmp/scale
#
# For each catalog, serve runs under callgrind with the cache off, twice:
# once answering N requests (uniform lines of urls_uniform.txt, one
# keep-alive connection from python3), once answering 1 (start-up and
# shutdown alone). Instructions per request = the difference / (N - 1).
# Callgrind counts user-space instructions only: the kernel's side of the
# reads SQLite makes (more of them at 1M) is not in these numbers.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORK=${WORK:-/tmp/scale}
CCC=${CCC:-$REPO/target/release/ccc}
N=${N:-2000}
PORT=${PORT:-18533}

count() { # catalog, requests -> total instructions
    local out=$WORK/cg.$1.$2 pid
    rm -f "$out"
    valgrind --tool=callgrind --callgrind-out-file="$out" "$CCC" --db "$WORK/$1/cdn.db" \
        serve --port "$PORT" --cache-capacity 0 --threads 1 2>/dev/null >/dev/null &
    pid=$!
    python3 - "$PORT" "$WORK/$1/urls_uniform.txt" "$2" <<'PY'
import http.client, sys, time
port, urls, n = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
lines = [l.strip() for l in open(urls)][:n]
for _ in range(600):
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=60); c.connect(); break
    except OSError:
        time.sleep(0.1)
for url in lines:
    c.request("GET", url, headers={"Accept-Encoding": "gzip"})
    r = c.getresponse(); r.read()
    assert r.status == 200, (url, r.status)
PY
    kill -TERM "$pid"
    wait "$pid" || true
    awk '/^summary:/ {print $2}' "$out"
}

for cat in 40k 1m; do
    full=$(count "$cat" "$N")
    one=$(count "$cat" 1)
    echo -e "$cat\tinstructions_per_miss\t$(( (full - one) / (N - 1) ))"
done
