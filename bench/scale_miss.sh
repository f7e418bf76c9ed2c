#!/usr/bin/env bash
# The miss path on catalogs of different sizes, pinned and warm, in one
# interleaved run: the first catalog is the reference, every other one is
# reported as a ratio of it, round by round (bench/SCALE.md).
#
#   cargo build --release --locked --bin ccc --example seed
#   S=target/release/examples/seed
#   $S --out /tmp/scale/40k --packages 200 --versions 10 --files 20 --churn 10 --level 6
#   $S --out /tmp/scale/1m --million --level 6
#   $S --out /tmp/scale/big --packages 5000 --versions 13 --level 1   # 3.3 GB
#   bash bench/scale_miss.sh /tmp/scale/40k /tmp/scale/1m /tmp/scale/big
#
# big is seeded at `--level 1`, so its responses are about a quarter longer
# than 40k's (the response_bytes column). Its reference is 40k seeded at the
# same level, whose rate is then read beside big's in the same run:
#
#   $S --out /tmp/scale/40k-l1 --packages 200 --versions 10 --files 20 --churn 10 --level 1
#   bash bench/scale_miss.sh /tmp/scale/40k /tmp/scale/40k-l1 /tmp/scale/1m /tmp/scale/big
#
# Each run: `ccc serve --cache-capacity 0 --no-recompress` (every request a
# miss; no brotli upgrade pass, which on a fresh seed would rewrite streams
# and move the catalog's generation during the run), and `--index-bytes 0`
# where the build has a file index (every miss a lookup, which is what
# grows with the catalog; INDEX=1 leaves the index at its default) pinned to
# CPU $SERVER_CPU (0), its catalog file read once beforehand so that every
# catalog is served from the page cache; wrk -t1 with $CONNS (50)
# connections pinned to CPU $LOAD_CPU (1), each request a uniformly random
# line of a fixed sample of 100,000 of the catalog's URLs (urls_uniform.txt,
# made on first use); $WARM (6) s of load, then the measured $DURATION (6)
# s, with the server's CPU time read around it. Knobs: ROUNDS (3), CCC
# (target/release/ccc), PORT (18439). Writes $OUT (/tmp/scale/miss.tsv).
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CCC=${CCC:-$REPO/target/release/ccc}
ROUNDS=${ROUNDS:-3}
WARM=${WARM:-6}
DURATION=${DURATION:-6}
CONNS=${CONNS:-50}
SERVER_CPU=${SERVER_CPU:-0}
LOAD_CPU=${LOAD_CPU:-1}
PORT=${PORT:-18439}
OUT=${OUT:-/tmp/scale/miss.tsv}
[ $# -ge 2 ] || { sed -n '2,30p' "$0" >&2; exit 2; }
HZ=$(getconf CLK_TCK)
BIN=$(mktemp /tmp/ccc-scale-miss.XXXXXX)
cp "$CCC" "$BIN"
chmod +x "$BIN"
trap 'rm -f "$BIN"' EXIT
for cat in "$@"; do
    [ -f "$cat/cdn.db" ] && [ -f "$cat/urls.txt" ] || { echo "$cat: no cdn.db and urls.txt" >&2; exit 2; }
    [ -f "$cat/urls_uniform.txt" ] ||
        shuf -n 100000 --random-source=<(yes ccc) "$cat/urls.txt" >"$cat/urls_uniform.txt"
done

load() { # seconds catalog: "requests bytes" served
    taskset -c "$LOAD_CPU" wrk -t1 -c"$CONNS" -d"$1"s -s "$REPO/bench/lib/urls.lua" \
        "http://127.0.0.1:$PORT" -- "$2/urls_uniform.txt" random |
        sed -n 's/^RESULT requests=\([0-9]*\).* bytes=\([0-9]*\).*/\1 \2/p'
}

NO_INDEX=()
if [ "${INDEX:-0}" != 1 ] && [[ $("$BIN" serve --help 2>/dev/null || true) == *--index-bytes* ]]; then
    NO_INDEX=(--index-bytes 0)
fi

run() { # catalog: prints "req/s cpu_us_per_request bytes_per_response"
    local pid before after n
    cat "$1/cdn.db" >/dev/null
    taskset -c "$SERVER_CPU" "$BIN" --db "$1/cdn.db" serve --port "$PORT" \
        --cache-capacity 0 --threads 1 --no-recompress "${NO_INDEX[@]}" >/dev/null 2>&1 &
    pid=$!
    local tries=0
    until curl -sf -o /dev/null "http://127.0.0.1:$PORT$(head -1 "$1/urls.txt")"; do
        kill -0 "$pid" 2>/dev/null && [ $((tries += 1)) -lt 600 ] || { echo "$1: serve did not start" >&2; exit 1; }
        sleep 0.05
    done
    load "$WARM" "$1" >/dev/null
    before=$(awk '{print $14 + $15}' "/proc/$pid/stat")
    read -r n bytes < <(load "$DURATION" "$1")
    after=$(awk '{print $14 + $15}' "/proc/$pid/stat")
    kill "$pid"
    wait "$pid" 2>/dev/null || true
    awk -v n="$n" -v b="$bytes" -v d="$DURATION" -v c=$((after - before)) -v hz="$HZ" \
        'BEGIN { printf "%.0f %.1f %.0f\n", n / d, 1e6 * c / hz / n, b / n }'
}

{
    echo "# $(date -u +%FT%TZ) $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null) $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
    printf 'round\tcatalog\tbytes\treq_s\tcpu_us_per_req\tresponse_bytes\tratio_to_first\n'
} | tee "$OUT"
for round in $(seq "$ROUNDS"); do
    # The order alternates, so neither catalog always runs on a warmer machine.
    cats=("$@")
    [ $((round % 2)) = 0 ] && mapfile -t cats < <(printf '%s\n' "$@" | tac)
    declare -A rps=() cpu=() size=()
    for cat in "${cats[@]}"; do
        read -r rps[$cat] cpu[$cat] size[$cat] < <(run "$cat")
    done
    for cat in "$@"; do
        printf '%d\t%s\t%d\t%d\t%s\t%s\t%.2f\n' "$round" "$cat" "$(stat -c %s "$cat/cdn.db")" \
            "${rps[$cat]}" "${cpu[$cat]}" "${size[$cat]}" \
            "$(awk -v a="${rps[$cat]}" -v b="${rps[$1]}" 'BEGIN { print a / b }')"
    done | tee -a "$OUT"
    unset rps cpu size
done
