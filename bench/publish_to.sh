#!/usr/bin/env bash
# `ccc publish --to https://...` against a local `ccc publish` of the same
# trees, in pairs: each round publishes the four npm trees (lodash-es,
# rxjs, @fortawesome/fontawesome-free, typescript) into a fresh catalog
# both ways, back to back in alternating order, and the figures are the
# medians of the rounds' remote/local ratios of wall time and of CPU time
# (user + system: the client's and the server's for --to), the second
# steadier on a machine others load.
#
#   bash bench/publish_to.sh ROUNDS [tree|tgz]
#   NPM=target/npm bash bench/publish_to.sh 5 tree
#
# `tree` publishes the unpacked folders (what a build leaves; --to packs
# them on the fly), `tgz` the tarballs as npm packed them. The remote side
# is a `ccc serve --publish-api` over TLS (a CA and certificate made with
# openssl) on 127.0.0.1:$PORT (18411), started before the clock runs and
# on a fresh catalog each round; both sides use the same binary ($BIN,
# target/release/ccc) and every core. Prints each round (wall and CPU
# seconds of each side, their ratios), then the median ratios.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=${BIN:-$REPO/target/release/ccc}
NPM=${NPM:-$REPO/target/npm}
PORT=${PORT:-18411}
ROUNDS=${1:-5}
FORM=${2:-tree}
TARBALLS=(lodash-es-4.17.21.tgz rxjs-7.8.1.tgz fortawesome-fontawesome-free-6.5.2.tgz typescript-5.6.3.tgz)
WORK=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$WORK"' EXIT

# What each side publishes.
sources=()
for t in "${TARBALLS[@]}"; do
    [ -f "$NPM/$t" ] || { echo "no $NPM/$t: npm pack it (see .ci/run)" >&2; exit 2; }
    if [ "$FORM" = tree ]; then
        mkdir -p "$WORK/trees/${t%.tgz}"
        tar -xzf "$NPM/$t" -C "$WORK/trees/${t%.tgz}"
        sources+=("$WORK/trees/${t%.tgz}/package")
    else
        sources+=("$NPM/$t")
    fi
done

# A CA and a certificate for 127.0.0.1.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
    -subj /CN=bench-ca -keyout "$WORK/ca.key" -out "$WORK/ca.pem" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=127.0.0.1 \
    -keyout "$WORK/key.pem" -out "$WORK/cert.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\n' >"$WORK/ext"
openssl x509 -req -in "$WORK/cert.csr" -CA "$WORK/ca.pem" -CAkey "$WORK/ca.key" \
    -CAcreateserial -days 1 -extfile "$WORK/ext" -out "$WORK/cert.pem" 2>/dev/null

now() { date +%s.%N; }

# CPU seconds (user + system) of process $1 so far, from /proc.
cpu_of() {
    awk -v hz="$(getconf CLK_TCK)" '{printf "%.3f", ($14 + $15) / hz}' "/proc/$1/stat"
}

# Runs "$@" and prints "WALL CPU": its wall seconds and the CPU seconds of
# the processes it started.
timed() {
    local TIMEFORMAT='%R %U %S' out
    out=$( { time "$@" >/dev/null 2>&3; } 3>&2 2>&1 ) || return 1
    echo "$out" | awk '{printf "%.3f %.3f", $1, $2 + $3}'
}

publish_locally() {
    for s in "${sources[@]}"; do "$BIN" --db "$WORK/local/cdn.db" publish "$s" -q || return 1; done
}

publish_to() {
    for s in "${sources[@]}"; do
        "$BIN" publish --to "https://127.0.0.1:$PORT" --ca-file "$WORK/ca.pem" \
            --token-file "$WORK/token" "$s" -q || return 1
    done
}

local_round() { # "WALL CPU" of publishing every source into a fresh catalog
    rm -rf "$WORK/local" && mkdir "$WORK/local"
    timed publish_locally
}

remote_round() { # the same through --to into a fresh served catalog; CPU of both ends
    rm -rf "$WORK/remote" && mkdir "$WORK/remote"
    "$BIN" --db "$WORK/remote/cdn.db" token create bench --scope 'publish:*' --expires 1d \
        >"$WORK/token" 2>"$WORK/token.err" || { cat "$WORK/token.err" >&2; return 1; }
    "$BIN" --db "$WORK/remote/cdn.db" serve --port "$PORT" --publish-api \
        --tls-cert "$WORK/cert.pem" --tls-key "$WORK/key.pem" >/dev/null 2>"$WORK/serve.err" &
    local pid=$! up="" before client server
    for _ in $(seq 200); do
        curl -s --cacert "$WORK/ca.pem" -o /dev/null "https://127.0.0.1:$PORT/healthz" \
            && { up=1; break; }
        sleep 0.05
    done
    [ -n "$up" ] || { kill "$pid" 2>/dev/null; cat "$WORK/serve.err" >&2; return 1; }
    before=$(cpu_of "$pid")
    client=$(timed publish_to) || { kill "$pid"; return 1; }
    server=$(cpu_of "$pid")
    kill "$pid"
    wait "$pid" 2>/dev/null || true
    echo "$client" | awk -v a="$before" -v b="$server" '{printf "%.3f %.3f", $1, $2 + b - a}'
}

echo "form: $FORM; $(nproc) cores; $BIN"
walls=() cpus=()
for round in $(seq "$ROUNDS"); do
    # A round that fails stops the script (set -e sees a failed $(...)).
    if [ $((round % 2)) = 0 ]; then r=$(remote_round); l=$(local_round); else l=$(local_round); r=$(remote_round); fi
    read -r lw lc <<<"$l"
    read -r rw rc <<<"$r"
    wall=$(awk -v l="$lw" -v r="$rw" 'BEGIN {printf "%.3f", r / l}')
    cpu=$(awk -v l="$lc" -v r="$rc" 'BEGIN {printf "%.3f", r / l}')
    echo "round $round: local ${lw}s (${lc}s CPU), --to ${rw}s (${rc}s CPU, client and server), --to/local wall $wall, CPU $cpu"
    walls+=("$wall") cpus+=("$cpu")
done
median() { printf '%s\n' "$@" | sort -n | awk '{r[NR] = $1} END {print r[int((NR + 1) / 2)]}'; }
echo "median --to/local: wall $(median "${walls[@]}"), CPU $(median "${cpus[@]}")"
