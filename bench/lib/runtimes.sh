#!/usr/bin/env bash
# The runtime question of bench/RPS.md: on one pinned core, does tokio's
# multi-thread runtime (one worker thread, what `ccc serve` runs) cost more
# than a current-thread runtime? Measured with bench/rps.sh's machinery
# (same catalog, pinning, load, CPU accounting) on what a bench/rps.sh run
# left in $WORK: both ceilings with and without `--current-thread`, and
# ccc built with bench/lib/runtime.patch, which reads two switches from
# the environment (a current-thread runtime when it has one thread,
# CCC_SERVE_RUNTIME=current; N blocking threads for misses,
# CCC_SERVE_BLOCKING=N). Without them the patched build is `ccc serve`
# as it is, so each pair runs the same binary.
#
#   bash bench/rps.sh                  # once: seeds $WORK, builds
#   bash bench/lib/runtimes.sh         # builds the patched ccc, measures
#
# Knobs: WORK (/tmp/ccc-rps), ROUNDS (3), DURATION (10), CONNS (50), ONLY,
# RUNS (where its runs.tsv goes: $WORK/runtimes), RT_TARGET (the patched
# build's target directory: $WORK/rt-target).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$HERE/../.." && pwd)
SELECT=${ONLY:-}
unset ONLY
# shellcheck source=bench/rps.sh
source "$REPO_ROOT/bench/rps.sh"
ROUNDS=${ROUNDS:-3}
[ -f "$WORK/data/urls.txt" ] && [ -x "$WORK/bin/ceiling" ] \
    || die "run bench/rps.sh first: $WORK has no catalog or binaries"
command -v patch >/dev/null || { apt-get update -qq && apt-get install -y -qq patch; }
SRC=$WORK/rt-src
log "building ccc with bench/lib/runtime.patch in $SRC"
rm -rf "$SRC"
mkdir -p "$SRC"
git -C "$REPO_ROOT" archive HEAD | tar -x -C "$SRC"
(cd "$SRC" && patch -p1 --quiet <"$HERE/runtime.patch" \
    && CARGO_TARGET_DIR=${RT_TARGET:-$WORK/rt-target} cargo build --release --locked --bin ccc)
cp "${RT_TARGET:-$WORK/rt-target}/release/ccc" "$WORK/bin/ccc-rt"
# Read by bench/rps.sh's run_one.
# shellcheck disable=SC2034
CCC_BIN=$WORK/bin/ccc-rt
# Its own runs.tsv, beside the catalog and binaries of $WORK.
RUNS=${RUNS:-$WORK/runtimes}
mkdir -p "$RUNS"
for d in bin data export; do ln -sfn "$WORK/$d" "$RUNS/$d"; done
WORK=$RUNS
CT=CCC_SERVE_RUNTIME=current
CONFIGS=(
    "ceiling|ceiling|-|-|urls_hot.txt|seq|urls_hot.txt|seq"
    "ceiling-ct|ceiling|-|-|urls_hot.txt|seq|urls_hot.txt|seq|--current-thread"
    "ceiling-ccc|ceiling-ccc|-|-|urls_hot.txt|seq|urls_hot.txt|seq"
    "ceiling-ccc-ct|ceiling-ccc|-|-|urls_hot.txt|seq|urls_hot.txt|seq|--current-thread"
    "ccc-all-hot|ccc|50000|2GiB|urls_hot.txt|seq|urls.txt|fill"
    "ccc-ct-all-hot|ccc|50000|2GiB|urls_hot.txt|seq|urls.txt|fill|$CT"
    "ccc-256-hot|ccc|256|64MiB|urls_hot.txt|seq|urls_hot.txt|seq"
    "ccc-ct-256-hot|ccc|256|64MiB|urls_hot.txt|seq|urls_hot.txt|seq|$CT"
    "ccc-ct-b8-256-hot|ccc|256|64MiB|urls_hot.txt|seq|urls_hot.txt|seq|$CT CCC_SERVE_BLOCKING=8"
    "ccc-off-uniform|ccc|0|64MiB|urls.txt|random|urls.txt|random"
    "ccc-ct-off-uniform|ccc|0|64MiB|urls.txt|random|urls.txt|random|$CT"
    "ccc-ct-b8-off-uniform|ccc|0|64MiB|urls.txt|random|urls.txt|random|$CT CCC_SERVE_BLOCKING=8"
    "nginx-hot|nginx|-|-|urls_hot.txt|seq|urls_hot.txt|seq"
)
if [ -n "$SELECT" ]; then
    kept=()
    for cfg in "${CONFIGS[@]}"; do [[ ${cfg%%|*} =~ $SELECT ]] && kept+=("$cfg"); done
    CONFIGS=("${kept[@]}")
fi
SKIP_INSTALL=1 SKIP_BUILD=1 SKIP_SEED=1 main
