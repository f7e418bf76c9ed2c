#!/usr/bin/env bash
# serve's CPU per delta hit against a brotli hit, and the bytes each sends:
# the same file of react-dom 18.3.1 ($FILE, by default its UMD development
# build, 1.1 MB, which ccc stores with brotli) asked for by a browser that holds
# 18.3.0 (`Available-Dictionary` naming the old file, `Accept-Encoding:
# dcb, dcz, br, gzip`) and by one that holds nothing (`br, gzip`), both
# answered from the cache. A third kind asks for a small file ($SMALL,
# by default react-dom's index.js, a few hundred bytes) with `br, gzip`:
# the cost of a hit whose body is as short as a delta's, to tell the
# delta's own cost from that of the bytes it spares.
#
#   bash bench/delta_hits.sh       # prints the runs and a markdown table
#
# `ccc serve --threads 1` is pinned to CPU $SERVER_CPU (0) and wrk to
# $LOAD_CPU (1), $CONNS (50) keep-alive connections for $DURATION (6) s
# after a $WARMUP (2) s warm-up, the two kinds interleaved for $ROUNDS (3)
# rounds, their order swapped every round. CPU per request is the server's
# utime+stime (/proc/PID/stat) over the run divided by wrk's requests.
#
# Needs wrk and curl (installed from Debian when missing), the npm tarballs
# react-dom-18.3.0.tgz and react-dom-18.3.1.tgz in $TARBALLS (default
# target/npm; packed with npm when missing) and CCC (default
# target/release/ccc).
set -euo pipefail
cd "$(dirname "$0")/.."
CCC=${CCC:-$PWD/target/release/ccc}
TARBALLS=${TARBALLS:-$PWD/target/npm}
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-6}
WARMUP=${WARMUP:-2}
CONNS=${CONNS:-50}
SERVER_CPU=${SERVER_CPU:-0}
LOAD_CPU=${LOAD_CPU:-1}
FILE=${FILE:-umd/react-dom.development.js}
SMALL=${SMALL:-index.js}
WORK=$(mktemp -d)
server=
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT

command -v wrk >/dev/null && command -v curl >/dev/null \
  || { apt-get update -qq && apt-get install -y -qq wrk curl >/dev/null; }
mkdir -p "$TARBALLS"
for v in 18.3.0 18.3.1; do
  [ -f "$TARBALLS/react-dom-$v.tgz" ] \
    || (cd "$TARBALLS" && npm pack --silent "react-dom@$v" >/dev/null)
done

db="$WORK/cdn.db"
"$CCC" --db "$db" publish -q react-dom@18.3.0 "$TARBALLS/react-dom-18.3.0.tgz" >/dev/null
"$CCC" --db "$db" publish -q react-dom@18.3.1 "$TARBALLS/react-dom-18.3.1.tgz" >/dev/null
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
taskset -c "$SERVER_CPU" "$CCC" --db "$db" serve --bind 127.0.0.1 --port "$port" \
  --threads 1 >"$WORK/serve.log" 2>&1 &
server=$!
base="http://127.0.0.1:$port"
for _ in $(seq 100); do curl -sf "$base/healthz" >/dev/null && break; sleep 0.1; done

old_url="$base/assets/react-dom/18.3.0/$FILE"
new_url="$base/assets/react-dom/18.3.1/$FILE"
hash=$(curl -sf "$old_url" | openssl dgst -sha256 -binary | base64)
dictionary="Available-Dictionary: :$hash:"
delta_enc="Accept-Encoding: dcb, dcz, br, gzip"
brotli_enc="Accept-Encoding: br, gzip"

# The answers each kind gets: coding and body bytes, checked before loading.
probe() {
  curl -s -o /dev/null -w '%{http_code} %header{content-encoding} %{size_download}' "$@" "$new_url"
}
read -r code coding bytes <<<"$(probe -H "$delta_enc" -H "$dictionary")"
[ "$code" = 200 ] && { [ "$coding" = dcb ] || [ "$coding" = dcz ]; } \
  || { echo "the delta request got $code $coding" >&2; exit 1; }
delta_answer="$coding, $bytes B"
read -r code coding bytes <<<"$(probe -H "$brotli_enc")"
[ "$code" = 200 ] && [ "$coding" = br ] \
  || { echo "the brotli request got $code $coding" >&2; exit 1; }
brotli_answer="$coding, $bytes B"
small_url="$base/assets/react-dom/18.3.1/$SMALL"
small_answer=$(curl -s -o /dev/null -w '%{http_code} %header{content-encoding} %{size_download}' \
  -H "$brotli_enc" "$small_url")
[ "${small_answer%% *}" = 200 ] || { echo "the small file got $small_answer" >&2; exit 1; }
read -r _ coding bytes <<<"$small_answer"
small_answer="$coding, $bytes B"

ticks() { awk '{print $14 + $15}' "/proc/$server/stat"; }
hz=$(getconf CLK_TCK)

# run KIND URL HEADER...: prints "KIND requests req/s µs-per-request".
run() {
  local kind=$1 url=$2
  shift 2
  local args=()
  for h in "$@"; do args+=(-H "$h"); done
  taskset -c "$LOAD_CPU" wrk -t1 -c"$CONNS" -d"${WARMUP}s" "${args[@]}" "$url" >/dev/null
  local before after out requests errors
  before=$(ticks)
  out=$(taskset -c "$LOAD_CPU" wrk -t1 -c"$CONNS" -d"${DURATION}s" "${args[@]}" "$url")
  after=$(ticks)
  requests=$(awk '/requests in/ {print $1}' <<<"$out")
  errors=$(grep -cE 'Non-2xx|Socket errors' <<<"$out" || true)
  [ "$errors" = 0 ] || { echo "$kind: $out" >&2; exit 1; }
  awk -v k="$kind" -v r="$requests" -v t=$((after - before)) -v hz="$hz" -v d="$DURATION" \
    'BEGIN { printf "%s %d %.0f %.2f\n", k, r, r / d, t / hz * 1e6 / r }'
}

echo "delta answer: $delta_answer; brotli answer: $brotli_answer; small: $small_answer" >&2
results="$WORK/results"
for round in $(seq "$ROUNDS"); do
  kinds=(delta brotli small)
  [ $((round % 2)) = 0 ] && kinds=(small brotli delta)
  for kind in "${kinds[@]}"; do
    case $kind in
      delta) line=$(run delta "$new_url" "$delta_enc" "$dictionary") ;;
      brotli) line=$(run brotli "$new_url" "$brotli_enc") ;;
      small) line=$(run small "$small_url" "$brotli_enc") ;;
    esac
    echo "round $round: $line" >&2
    echo "$round $line" >>"$results"
  done
done

echo "| round | delta hits req/s | µs CPU each | brotli hits req/s | µs CPU each | small hits req/s | µs CPU each | CPU delta / brotli | delta / small |"
echo "|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
awk '{ rps[$1, $2] = $4; us[$1, $2] = $5; n = $1 }
  END { for (r = 1; r <= n; r++)
    printf "| %d | %d | %.1f | %d | %.1f | %d | %.1f | %.2fx | %.2fx |\n", r,
      rps[r, "delta"], us[r, "delta"], rps[r, "brotli"], us[r, "brotli"],
      rps[r, "small"], us[r, "small"], us[r, "delta"] / us[r, "brotli"],
      us[r, "delta"] / us[r, "small"] }' "$results"
echo
echo "Answers: delta $delta_answer, brotli $brotli_answer ($FILE of react-dom 18.3.1); small $small_answer ($SMALL)."
