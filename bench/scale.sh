#!/usr/bin/env bash
# ccc at 1,000,000 assets against 40,000, in the same run (bench/SCALE.md).
#
#   cargo build --release --locked --bin ccc --example seed
#   bash bench/scale.sh                     # seeds /tmp/scale/{40k,1m} unless present
#   ROUNDS=3 DURATION=5 bash bench/scale.sh
#
# Both catalogs have the same shape (20 files per version, 10 versions per
# package, 10% of files changed per release: `seed --churn 10`), 200 and
# 5,000 packages. Each round, in alternating order, for each catalog:
#   - before each server starts, its catalog file is read once (cat >
#     /dev/null), so that both catalogs are served from the page cache, as
#     a served catalog is after its first minutes; without it the 1M run
#     measures this machine's disk, which others share;
#   - serve startup: spawn `ccc serve` and poll one asset URL every 5 ms
#     until it answers 200; the time from spawn to that answer;
#   - the miss path: `--cache-capacity 0`, wrk (1 thread, 8 connections,
#     DURATION s) with every request a uniformly random line of
#     urls_uniform.txt (100,000 lines drawn uniformly from urls.txt with a
#     fixed seed: wrk takes 40 s to load all 1,000,000);
#     requests per second and the server's CPU time per request
#     (utime+stime from /proc), which a busy machine disturbs less;
#   - serve RSS after the same load with a 64 MiB cache: anonymous
#     (RssAnon) and file-backed (RssFile, the catalog's mapped pages);
#   - the CLI's listing commands: wall time of each, best of 3;
#   - verify and gc --dry-run: wall time and peak RSS (/usr/bin/time).
# Results go to $WORK/results.tsv, one line per measurement.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORK=${WORK:-/tmp/scale}
CCC=${CCC:-$REPO/target/release/ccc}
SEED=${SEED:-$REPO/target/release/examples/seed}
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-5}
PORT=${PORT:-18433}
OUT=$WORK/results.tsv
mkdir -p "$WORK"
cp "$CCC" "$WORK/ccc.bin"
CCC=$WORK/ccc.bin

[ -f "$WORK/40k/cdn.db" ] || "$SEED" --out "$WORK/40k" --packages 200 --versions 10 --files 20 --churn 10 --level 6
[ -f "$WORK/1m/cdn.db" ] || "$SEED" --out "$WORK/1m" --million --level 6
for cat in 40k 1m; do
    [ -f "$WORK/$cat/urls_uniform.txt" ] ||
        shuf -n 100000 --random-source=<(yes ccc) "$WORK/$cat/urls.txt" >"$WORK/$cat/urls_uniform.txt" ||
        cp "$WORK/$cat/urls.txt" "$WORK/$cat/urls_uniform.txt"
done

: >"$OUT"
record() { printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" | tee -a "$OUT"; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

serve_run() { # catalog, cache capacity, label
    local db=$WORK/$1/cdn.db url start end pid
    url=$(head -1 "$WORK/$1/urls.txt")
    cat "$db" >/dev/null
    start=$(date +%s%N)
    "$CCC" --db "$db" serve --port "$PORT" --cache-capacity "$2" --cache-bytes 64MiB 2>/dev/null &
    pid=$!
    until curl -sf -o /dev/null "http://127.0.0.1:$PORT$url"; do sleep 0.005; done
    end=$(date +%s%N)
    record "$1" "startup_ms_$3" "$(( (end - start) / 1000000 ))" ""
    local before after res reqs
    before=$(cpu_ticks "$pid")
    res=$(wrk -t1 -c8 -d"${DURATION}s" -s "$REPO/bench/lib/urls.lua" "http://127.0.0.1:$PORT" \
        -- "$WORK/$1/urls_uniform.txt" random 7 | grep '^RESULT')
    after=$(cpu_ticks "$pid")
    reqs=$(sed 's/.*requests=\([0-9]*\).*/\1/' <<<"$res")
    record "$1" "rps_$3" "$(( reqs / DURATION ))" "$res"
    record "$1" "cpu_us_per_req_$3" "$(( (after - before) * 10000 / (reqs > 0 ? reqs : 1) ))" ""
    # Anonymous memory is what serve's budget is judged by; the file-backed
    # part is the mapped catalog, page cache shared with every reader.
    record "$1" "rss_anon_kb_$3" "$(awk '/RssAnon/ {print $2}' "/proc/$pid/status")" ""
    record "$1" "rss_file_kb_$3" "$(awk '/RssFile/ {print $2}' "/proc/$pid/status")" ""
    kill -TERM "$pid"
    wait "$pid" || true
}

cli_run() { # catalog, name, args...
    local cat=$1 name=$2 best=999999 t
    shift 2
    for _ in 1 2 3; do
        t=$( { /usr/bin/time -f '%e' "$CCC" --db "$WORK/$cat/cdn.db" "$@" >/dev/null; } 2>&1 | tail -1)
        best=$(awk -v a="$best" -v b="$t" 'BEGIN {print (b < a ? b : a)}')
    done
    record "$cat" "wall_s_$name" "$best" "$*"
}

heavy_run() { # catalog, name, args...
    local cat=$1 name=$2 line
    shift 2
    line=$( { /usr/bin/time -f '%e %M' "$CCC" --db "$WORK/$cat/cdn.db" "$@" >/dev/null; } 2>&1 | tail -1)
    record "$cat" "wall_s_$name" "${line% *}" "$*"
    record "$cat" "peak_rss_kb_$name" "${line#* }" "$*"
}

for round in $(seq 1 "$ROUNDS"); do
    order="40k 1m"
    [ $((round % 2)) = 0 ] && order="1m 40k"
    for cat in $order; do
        echo "round $round: $cat" >&2
        serve_run "$cat" 0 nocache
        serve_run "$cat" 100000 cache64m
        pkg=ui-10
        cli_run "$cat" ls ls
        cli_run "$cat" ls_all ls --limit 0
        cli_run "$cat" ls_pkg ls "$pkg"
        cli_run "$cat" ls_version ls "$pkg@1.3.0"
        cli_run "$cat" inspect inspect "$pkg@1.3.0"
        cli_run "$cat" diff diff "$pkg@1.0.0" "$pkg@1.3.0"
    done
done
for cat in 40k 1m; do
    heavy_run "$cat" verify verify -q
    heavy_run "$cat" gc_dry gc --keep 3 --dry-run
done
