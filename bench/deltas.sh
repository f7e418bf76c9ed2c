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
# seconds (user + sys, GNU time) and the wall seconds of the second
# publish. Both: publish runs on every core, and on a shared machine CPU
# time is the steadier of the two.
#
# Besides the npm pairs, an app built twice by Vite (the bundler .ci/run
# installs into target/bundlers; BUNDLERS names another folder): 400
# modules of about 3 KB each, 20 of them loaded lazily, and a stylesheet,
# with one line of one module changed between the builds, so the second
# build renames the chunk that holds it and keeps every other file.
#
# Needs the npm tarballs in $TARBALLS (default target/npm, as .ci/run packs
# them) and GNU time. CCC=/path/to/ccc picks the binary (default
# target/release/ccc).
set -euo pipefail
cd "$(dirname "$0")/.."
CCC=${CCC:-$PWD/target/release/ccc}
TARBALLS=${TARBALLS:-$PWD/target/npm}
BUNDLERS=${BUNDLERS:-$PWD/target/bundlers}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# name old new: PKG@OLD and PKG@NEW from $TARBALLS/PKG-VERSION.tgz
PAIRS=(
  "react-dom 18.3.0 18.3.1"
  "three 0.169.0 0.170.0"
  "jquery 3.7.0 3.7.1"
)

size() { sqlite3 "$1" 'VACUUM' && stat -c %s "$1"; }

# app_source DIR CHANGED: a Vite app's source; CHANGED is the value one
# module prints, the only difference between two releases. The modules'
# numbers come from a fixed seed, so both releases share everything else.
app_source() {
  python3 - "$1" "$2" <<'PY'
import os, random, sys
root, changed = sys.argv[1], sys.argv[2]
rng = random.Random(36)
os.makedirs(f"{root}/src", exist_ok=True)
with open(f"{root}/index.html", "w") as f:
    f.write("<!doctype html><link rel=stylesheet href=/src/style.css>"
            "<script type=module src=/src/main.js></script>\n")
main = []
for i in range(400):
    lines = [f"export function part{i}(x, table = TABLE{i}) {{"]
    for j in range(30):
        a, b, c = rng.randrange(1, 10**6), rng.randrange(1, 10**6), rng.randrange(2, 97)
        lines.append(f"  x = (x * {a} + table[{j} % table.length] + {b}) % {c * 10007}; "
                     f"if (x % {c} === 0) console.debug('part {i} step {j}', x);")
    if i == 3:
        lines.append(f"  console.log('release {changed}');")
    lines.append("  return x;\n}")
    table = ", ".join(str(rng.randrange(10**9)) for _ in range(40))
    with open(f"{root}/src/part{i}.js", "w") as f:
        f.write(f"const TABLE{i} = [{table}];\n" + "\n".join(lines) + "\n")
    if i % 20 == 19:
        main.append(f"document.getElementById('b{i}')?.addEventListener('click', "
                    f"() => import('./part{i}.js').then(m => m.part{i}(1)));")
    else:
        main.append(f"import {{ part{i} }} from './part{i}.js'; console.log(part{i}({i}));")
with open(f"{root}/src/main.js", "w") as f:
    f.write("\n".join(main) + "\n")
with open(f"{root}/src/style.css", "w") as f:
    for i in range(1500):
        n = rng.randrange(1000)
        f.write(f".item-{i} {{ margin: {n % 40}px; color: #{n:03x}; }}\n")
PY
}

# publish_pair LABEL DB OLD_SPEC OLD_SOURCE NEW_SPEC NEW_SOURCE: one row per mode.
publish_pair() {
  local label=$1 old_spec=$2 old_source=$3 new_spec=$4 new_source=$5 mode db flag before after out
  for mode in deltas no-deltas; do
    db="$WORK/$label-$mode.db"
    db=${db// /_}
    flag=()
    [ "$mode" = no-deltas ] && flag=(--no-deltas)
    "$CCC" --db "$db" publish -q "$old_spec" "$old_source" >/dev/null
    before=$(size "$db")
    out="$WORK/out"
    /usr/bin/time -f '%U %S %e' -o "$WORK/time" \
      "$CCC" --db "$db" publish "${flag[@]}" "$new_spec" "$new_source" >"$out" 2>/dev/null
    after=$(size "$db")
    cpu=$(awk '{printf "%.2f", $1 + $2}' "$WORK/time")
    wall=$(awk '{printf "%.2f", $3}' "$WORK/time")
    made=$(sqlite3 "$db" "SELECT count(*) || ' (' || coalesce(sum(length(body)), 0) || ')' FROM deltas")
    gets=$(grep -oE '[0-9.]+ [KMG]?i?B as brotli -> .* less\)' "$out" || echo "brotli, as before")
    echo "| $label | $mode | $((after - before)) B | $made | $gets | $cpu | $wall |"
  done
}

echo "| pair | mode | growth of the catalog | deltas (bytes) | a browser holding the old release gets | CPU s | wall s |"
echo "|---|---|--:|--:|---|--:|--:|"
for pair in "${PAIRS[@]}"; do
  read -r name old new <<<"$pair"
  publish_pair "$name $old → $new" "$name@$old" "$TARBALLS/$name-$old.tgz" \
    "$name@$new" "$TARBALLS/$name-$new.tgz"
done
if [ -x "$BUNDLERS/node_modules/.bin/vite" ]; then
  for release in 1.0.0 1.0.1; do
    app_source "$WORK/app-$release" "$release"
    (cd "$BUNDLERS" && node_modules/.bin/vite build "$WORK/app-$release" \
      --logLevel error --emptyOutDir)
  done
  publish_pair "app by Vite 1.0.0 → 1.0.1" app@1.0.0 "$WORK/app-1.0.0/dist" \
    app@1.0.1 "$WORK/app-1.0.1/dist"
else
  echo "no Vite in $BUNDLERS: the app pair is left out" >&2
fi
