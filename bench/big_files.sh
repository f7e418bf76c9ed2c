#!/usr/bin/env bash
# Big files (bench/PUBLISH.md and bench/SCALE.md, "Big files"): publish
# time and peak memory, and serve's memory and time for a whole GET and
# for 16 concurrent range readers, two builds side by side.
#
#   bash bench/big_files.sh OLD_CCC NEW_CCC
#
# Knobs (environment): WORK=/tmp/ccc-big (scratch; removed unless KEEP=1),
# SIZES="20 300 1024" (file sizes in MiB; a build that refuses a size is
# reported as refusing it), ROUNDS=2, PORT=18481, CACHE=64MiB (serve's
# --cache-bytes).
#
# Each file is pseudo-random bytes (AES-CTR of zeros: fixed key, so the same
# on every run; incompressible, as video and archives are) plus a 20 MiB
# text file for the compressing path. Every file is read once first, so
# publishes read from the page cache. Peak RSS is /usr/bin/time's maximum
# resident set. serve's memory is sampled from /proc every 20 ms while the
# readers run: the highest RssAnon (the heap: what the budget bounds) and
# VmHWM (everything, the catalog's mapped pages included). Prints one
# tab-separated line per measurement.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 CCC [CCC...]" >&2; exit 2; }
WORK=${WORK:-/tmp/ccc-big}
SIZES=${SIZES:-20 300 1024}
ROUNDS=${ROUNDS:-2}
PORT=${PORT:-18481}
CACHE=${CACHE:-64MiB}
mkdir -p "$WORK"
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$WORK"' EXIT

random_file() { # MiB PATH
    [ -s "$2" ] || head -c "$(( $1 << 20 ))" /dev/zero |
        openssl enc -aes-128-ctr -nosalt -K 000102030405060708090a0b0c0d0e0f \
            -iv 00000000000000000000000000000000 >"$2"
}
for mib in $SIZES; do
    mkdir -p "$WORK/src-$mib"
    random_file "$mib" "$WORK/src-$mib/big.bin"
done
mkdir -p "$WORK/src-text"
[ -s "$WORK/src-text/app.js" ] || python3 - "$WORK/src-text/app.js" <<'EOF'
import random, sys
rng = random.Random(7)
words = "export const function return import from await this value render props state null true".split()
with open(sys.argv[1], "w") as f:
    n = 0
    while n < 20 << 20:
        line = " ".join(rng.choice(words) + str(rng.randrange(1000)) for _ in range(12)) + ";\n"
        f.write(line); n += len(line)
EOF

# rss_sampler PID OUT: highest RssAnon and VmHWM (kB) until PID's sampler is stopped.
rss_sampler() {
    local pid=$1 out=$2 anon=0 a
    while kill -0 "$pid" 2>/dev/null && [ ! -e "$out.stop" ]; do
        a=$(awk '/RssAnon/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
        [ "${a:-0}" -gt "$anon" ] && anon=$a
        sleep 0.02
    done
    echo "$anon $(awk '/VmHWM/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)" >"$out"
}

printf 'round\tbuild\ttest\tMiB\tseconds\tMiB_per_s\tpeak_rss_kb\tnote\n'
for round in $(seq 1 "$ROUNDS"); do
    for bin in "$@"; do
        name=$(basename "$(dirname "$bin")")/$(basename "$bin")
        for src in text $SIZES; do
            dir="$WORK/src-$src"
            kind=random; [ "$src" = text ] && kind=text
            cat "$dir"/* >/dev/null
            mib=$(( $(du -b "$dir" | cut -f1) >> 20 ))
            db="$WORK/cat-$round-$src-$(echo "$name" | tr / _).db"
            rm -f "$db"*
            start=$(date +%s%N)
            if /usr/bin/time -f '%M' -o "$WORK/time" "$bin" --db "$db" publish "big@1.0.0" "$dir" \
                --quiet --max-file-size "$(( mib + 1 ))MiB" >"$WORK/out" 2>&1; then
                end=$(date +%s%N)
                secs=$(python3 -c "print(f'{($end-$start)/1e9:.2f}')")
                rate=$(python3 -c "print(f'{$mib/(($end-$start)/1e9):.1f}')")
                printf '%s\t%s\tpublish %s\t%s\t%s\t%s\t%s\t\n' "$round" "$name" "$kind" "$mib" "$secs" "$rate" \
                    "$(tail -1 "$WORK/time")"
            else
                printf '%s\t%s\tpublish %s\t%s\t-\t-\t-\trefused: %s\n' "$round" "$name" "$kind" "$mib" \
                    "$(grep -m1 -i error "$WORK/out" | cut -c1-100)"
                continue
            fi
            [ "$src" = text ] && { rm -f "$db"*; continue; }
            url="http://127.0.0.1:$PORT/assets/big/1.0.0/big.bin"
            "$bin" --db "$db" serve --port "$PORT" --cache-bytes "$CACHE" >/dev/null 2>&1 &
            pid=$!
            until curl -sf -o /dev/null "http://127.0.0.1:$PORT/_stats"; do sleep 0.05; done
            # One whole GET.
            rm -f "$WORK/rss.stop"; rss_sampler "$pid" "$WORK/rss" & sampler=$!
            start=$(date +%s%N)
            got=$(curl -s -o /dev/null -w '%{size_download}' "$url")
            end=$(date +%s%N)
            touch "$WORK/rss.stop"; wait "$sampler"
            read -r anon hwm <"$WORK/rss"
            secs=$(python3 -c "print(f'{($end-$start)/1e9:.2f}')")
            printf '%s\t%s\tserve GET\t%s\t%s\t%s\t%s\tRssAnon peak %s kB; %s bytes\n' "$round" "$name" "$mib" \
                "$secs" "$(python3 -c "print(f'{$mib/(($end-$start)/1e9):.1f}')")" "$hwm" "$anon" "$got"
            # 16 readers at once, each a 16 MiB range at its own offset.
            rm -f "$WORK/rss.stop"; rss_sampler "$pid" "$WORK/rss" & sampler=$!
            start=$(date +%s%N)
            readers=()
            for i in $(seq 0 15); do
                from=$(( (i * (mib - 16) / 16) << 20 ))
                curl -s -o "$WORK/part$i" -w '%{http_code} %{size_download}\n' \
                    -H "Range: bytes=$from-$(( from + (16 << 20) - 1 ))" "$url" >"$WORK/code$i" &
                readers+=($!)
            done
            wait "${readers[@]}"
            end=$(date +%s%N)
            touch "$WORK/rss.stop"; wait "$sampler"
            read -r anon hwm <"$WORK/rss"
            ok=$(cat "$WORK"/code* | grep -c '^206 16777216$' || true)
            wrong=0
            for i in $(seq 0 15); do
                from=$(( (i * (mib - 16) / 16) << 20 ))
                cmp -s "$WORK/part$i" <(tail -c +$(( from + 1 )) "$dir/big.bin" | head -c $(( 16 << 20 ))) ||
                    wrong=$(( wrong + 1 ))
            done
            secs=$(python3 -c "print(f'{($end-$start)/1e9:.2f}')")
            printf '%s\t%s\tserve 16 ranges\t%s\t%s\t%s\t%s\tRssAnon peak %s kB; %s/16 answered 206 in full, %s wrong\n' \
                "$round" "$name" "$mib" "$secs" "$(python3 -c "print(f'{256/(($end-$start)/1e9):.1f}')")" \
                "$hwm" "$anon" "$ok" "$wrong"
            rm -f "$WORK"/part* "$WORK"/code*
            kill -TERM "$pid"; wait "$pid" || true
            rm -f "$db"*
        done
    done
done
