#!/usr/bin/env bash
# What deltas (RFC 9842's dcb and dcz, `ccc publish`'s default) cost and
# save on real upgrade pairs: each pair published into a fresh catalog,
# once with deltas and once with --no-deltas.
#
#   bash bench/deltas.sh            # prints a markdown table on stdout
#
# Per pair: the catalog's growth for the second release (file bytes after
# VACUUM), the deltas made and their bytes, what a browser holding the first
# release downloads of the second (the publish summary: the smallest delta
# of each changed file against its brotli, or gzip, stream), and the CPU
# seconds (user + sys, GNU time) of the second publish. CPU rather than
# wall time: publish runs on every core, and the machine may be shared.
#
# Needs the npm tarballs in $TARBALLS (default target/npm, as .ci/run packs
# them) and GNU time. CCC=/path/to/ccc picks the binary (default
# target/release/ccc).
set -euo pipefail
cd "$(dirname "$0")/.."
CCC=${CCC:-$PWD/target/release/ccc}
TARBALLS=${TARBALLS:-$PWD/target/npm}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# name old new: PKG@OLD and PKG@NEW from $TARBALLS/PKG-VERSION.tgz
PAIRS=(
  "react-dom 18.3.0 18.3.1"
  "three 0.169.0 0.170.0"
  "jquery 3.7.0 3.7.1"
)

size() { sqlite3 "$1" 'VACUUM' && stat -c %s "$1"; }

echo "| pair | mode | growth of the catalog | deltas (bytes) | a browser holding the old release gets | CPU s |"
echo "|---|---|--:|--:|---|--:|"
for pair in "${PAIRS[@]}"; do
  read -r name old new <<<"$pair"
  for mode in deltas no-deltas; do
    db="$WORK/$name-$mode.db"
    flag=()
    [ "$mode" = no-deltas ] && flag=(--no-deltas)
    "$CCC" --db "$db" publish -q "$name@$old" "$TARBALLS/$name-$old.tgz" >/dev/null
    before=$(size "$db")
    out="$WORK/out"
    /usr/bin/time -f '%U %S' -o "$WORK/time" \
      "$CCC" --db "$db" publish "${flag[@]}" "$name@$new" "$TARBALLS/$name-$new.tgz" >"$out" 2>/dev/null
    after=$(size "$db")
    cpu=$(awk '{printf "%.2f", $1 + $2}' "$WORK/time")
    made=$(sqlite3 "$db" "SELECT count(*) || ' (' || coalesce(sum(length(body)), 0) || ')' FROM deltas")
    gets=$(grep -oE '[0-9.]+ [KMG]?i?B as brotli -> .* less\)' "$out" || echo "brotli, as before")
    echo "| $name $old → $new | $mode | $((after - before)) B | $made | $gets | $cpu |"
  done
done
