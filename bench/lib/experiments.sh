#!/usr/bin/env bash
# The "what would close the gap" runs of bench/RPS.md: ccc built with
# bench/lib/experiment.patch, which adds two switches read from the
# environment, measured with bench/rps.sh's machinery (same pinning, load,
# CPU accounting) on the catalog a previous bench/rps.sh run left in $WORK.
#
#   EXP_QPSG=1   turns on SQLite's query planner stability guarantee on the
#                catalog connection, so the cached lookup statement is not
#                re-prepared on every call;
#   EXP_L1=N     lets HTTP workers answer from a shared map of the first N
#                assets served, without the hop through the store actor
#                (a stand-in for a cache the workers can read directly).
#
#   bash bench/rps.sh                          # once: seeds $WORK, builds tools
#   bash bench/lib/experiments.sh              # builds the patched ccc, measures
#
# Knobs: WORK (/tmp/ccc-rps), ROUNDS (3), DURATION (10), plus bench/rps.sh's.
# Writes $WORK/experiments.tsv (rps.sh's runs.tsv format) and prints medians.

set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$HERE/../.." && pwd)
ROUNDS=${ROUNDS:-3}
# shellcheck source=bench/rps.sh
source "$REPO_ROOT/bench/rps.sh"

if [ ! -f "$WORK/data/urls.txt" ] || [ ! -x "$WORK/bin/ceiling" ]; then
    die "run bench/rps.sh first: $WORK has no catalog or binaries"
fi

command -v patch >/dev/null || { apt-get update -qq && apt-get install -y -qq patch; }
EXP=$WORK/exp-src
log "building ccc with bench/lib/experiment.patch in $EXP"
rm -rf "$EXP"
mkdir -p "$EXP"
if git -C "$REPO_ROOT" rev-parse HEAD >/dev/null 2>&1; then
    git -C "$REPO_ROOT" archive HEAD | tar -x -C "$EXP"
else
    cp -r "$REPO_ROOT/." "$EXP/"
fi
(cd "$EXP" && patch -p1 --quiet <"$HERE/experiment.patch" \
    && CARGO_TARGET_DIR=$WORK/exp-target cargo build --release --locked --bin ccc)
cp "$WORK/exp-target/release/ccc" "$WORK/bin/ccc-exp"
# Read by bench/rps.sh's functions.
# shellcheck disable=SC2034
CCC_BIN=$WORK/bin/ccc-exp
# shellcheck disable=SC2034
NGINX=${NGINX:-$(command -v nginx || echo /usr/sbin/nginx)}
# shellcheck disable=SC2034
HZ=$(getconf CLK_TCK)
# shellcheck disable=SC2034
MEDIAN_SIZE=$(find "$WORK/export" -name '*.gz' -printf '%s\n' | median)
CONFIGS=(
    "off-hot|ccc|0|64MiB|urls_hot.txt|seq|urls_hot.txt|seq"
    "off-hot+qpsg|ccc|0|64MiB|urls_hot.txt|seq|urls_hot.txt|seq|EXP_QPSG=1"
    "256-hot|ccc|256|64MiB|urls_hot.txt|seq|urls_hot.txt|seq"
    "256-hot+qpsg|ccc|256|64MiB|urls_hot.txt|seq|urls_hot.txt|seq|EXP_QPSG=1"
    "256-hot+qpsg+l1|ccc|256|64MiB|urls_hot.txt|seq|urls_hot.txt|seq|EXP_QPSG=1 EXP_L1=256"
    "off-uniform+qpsg|ccc|0|64MiB|urls.txt|random|urls.txt|random|EXP_QPSG=1"
    "10pct-uniform+qpsg|ccc|4000|2GiB|urls.txt|random|urls.txt|random|EXP_QPSG=1"
    "ceiling|ceiling|-|-|urls_hot.txt|seq|urls_hot.txt|seq"
)
mkdir -p "$WORK/logs" "$WORK/stats"
OFFICIAL=$WORK/runs.tsv.official
[ -f "$OFFICIAL" ] || cp "$WORK/runs.tsv" "$OFFICIAL" 2>/dev/null || true
head -1 "$OFFICIAL" >"$WORK/runs.tsv" 2>/dev/null \
    || printf 'config\tround\trps\trequests\tcpu_s\tcpu_s_per_1k\terrors\tstatus_errors\tbytes_per_resp\tp50_us\tp99_us\tmachine_busy_pct_before\tloadavg1\tuser_s\tsys_s\tothers_on_server_cpu_pct\n' >"$WORK/runs.tsv"
log "uptime before: $(uptime)"
n=${#CONFIGS[@]}
for round in $(seq "$ROUNDS"); do
    for i in $(seq 0 $((n - 1))); do
        run_one "${CONFIGS[$(((i + round - 1) % n))]}" "$round"
    done
done
mv "$WORK/runs.tsv" "$WORK/experiments.tsv"
cp "$OFFICIAL" "$WORK/runs.tsv" 2>/dev/null || true
echo
echo "| variant | runs | RPS median | min / max | CPU-s per 1000 req | others' share of the server CPU |"
echo "|---|---:|---:|---:|---:|---:|"
for cfg in "${CONFIGS[@]}"; do
    name=${cfg%%|*}
    awk -F'\t' -v n="$name" 'NR > 1 && $1 == n' "$WORK/experiments.tsv" | sort -t$'\t' -k3,3n | awk -F'\t' -v n="$name" '
        { rps[NR] = $3; cpu[NR] = $6; oth[NR] = $16 }
        END {
            if (NR == 0) { printf "| %s | 0 | - | - | - | - |\n", n; exit }
            m = int((NR + 1) / 2)
            printf "| %s | %d | %d | %d / %d | %.3f | %d%% |\n", n, NR, rps[m], rps[1], rps[NR], cpu[m], oth[m]
        }'
done
