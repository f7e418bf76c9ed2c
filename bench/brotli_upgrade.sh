#!/usr/bin/env bash
# First loads against the best static origin. For the compressible files
# of real npm trees (those ccc stores gzipped), what a client that accepts
# brotli is sent:
#   - by ccc as published today (brotli quality 5, gzip where brotli did
#     not beat it by 5%);
#   - by ccc after `ccc recompress` (quality 11, what `ccc serve` does in
#     the background);
#   - by nginx with `brotli_static`, from a pipeline that precompresses
#     every file with `gzip -9` and `brotli -q 11` (the .br file is sent
#     whenever it exists);
# and the wall and CPU time of each step, on the same cores.
#
#   CCC=target/release/ccc bash bench/brotli_upgrade.sh         # markdown on stdout
#   PACKS=/dir/of/tgz CCC=... bash bench/brotli_upgrade.sh      # tarballs already packed
#
# Needs python3, gzip and brotli (Debian's `brotli`), and npm unless PACKS
# holds the tarballs. Scratch files live under $WORK (default
# /tmp/ccc-brotli-upgrade) and are removed at the end.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PACKAGES=${PACKAGES:-"react-dom@18.3.1 three@0.170.0 monaco-editor@0.52.2 rxjs@7.8.1 bootstrap@5.3.3"}
WORK=${WORK:-/tmp/ccc-brotli-upgrade}
for tool in gzip brotli python3; do
    command -v "$tool" >/dev/null || { echo "error: $tool is needed" >&2; exit 1; }
done
if [ -z "${CCC:-}" ]; then
    (cd "$REPO" && cargo build --release --locked >&2)
    CCC="$REPO/target/release/ccc"
fi
rm -rf "$WORK" && mkdir -p "$WORK/packs"
trap 'rm -rf "$WORK"' EXIT
if [ -n "${PACKS:-}" ]; then
    cp "$PACKS"/*.tgz "$WORK/packs/"
else
    (cd "$WORK/packs" && npm pack --silent $PACKAGES >&2)
fi

# Seconds of wall and of CPU (user + sys) of a command: "WALL CPU".
timed() {
    local out="$WORK/time"
    /usr/bin/env time -f "%e %U %S" -o "$out" "$@" >/dev/null
    awk '{printf "%.2f %.2f", $1, $2 + $3}' "$out"
}

# What a brotli client gets for the gzip-stored files of catalog $1.
br_bytes() {
    python3 - "$1" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print(db.execute("""
    SELECT sum(coalesce((SELECT length(r.body) FROM brotli r WHERE r.blob_id = b.id), length(b.body)))
      FROM assets a JOIN blobs b ON b.id = a.blob_id WHERE b.encoding = 'gzip'""").fetchone()[0])
PY
}

echo "Measured by \`bash bench/brotli_upgrade.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC'), ccc \`$(git -C "$REPO" rev-parse --short HEAD)\`, $(nproc) cores ($(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)), load average $(cut -d' ' -f1-3 /proc/loadavg)."
echo
echo "| tree | files | ccc publish (q5) wall / CPU s | br clients get (q5) | ccc recompress wall / CPU s | br clients get (q11) | nginx pipeline wall / CPU s | nginx .br bytes | ccc q5 / nginx | ccc q11 / nginx |"
echo "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
for tgz in "$WORK"/packs/*.tgz; do
    name=$(basename "$tgz" .tgz)
    db="$WORK/$name.db"
    publish=$(timed "$CCC" --db "$db" publish --quiet --no-deltas "$tgz")
    q5=$(br_bytes "$db")
    recompress=$(timed "$CCC" --db "$db" recompress --quiet)
    q11=$(br_bytes "$db")
    # The same files, as an nginx origin's build step precompresses them.
    tree="$WORK/$name"
    mkdir -p "$tree" && tar -xzf "$tgz" -C "$tree"
    python3 - "$db" > "$WORK/files" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for (path,) in db.execute("""SELECT a.path FROM assets a JOIN blobs b ON b.id = a.blob_id
                             WHERE b.encoding = 'gzip'"""):
    print(path)
PY
    files=$(wc -l <"$WORK/files")
    pipeline=$(cd "$tree/package" && timed sh -c \
        "tr '\n' '\0' <'$WORK/files' | xargs -0 -P $(nproc) -n 16 gzip -9 -k -n -f &&
         tr '\n' '\0' <'$WORK/files' | xargs -0 -P $(nproc) -n 16 brotli -q 11 -f")
    nginx=$(cd "$tree/package" && tr '\n' '\0' <"$WORK/files" | sed -z 's/$/.br/' |
        xargs -0 stat -c %s | awk '{s += $1} END {print s}')
    ratios=$(awk -v a="$q5" -v b="$q11" -v n="$nginx" 'BEGIN {printf "%.3f | %.3f", a / n, b / n}')
    echo "| $name | $files | ${publish/ / \/ } | $q5 | ${recompress/ / \/ } | $q11 | ${pipeline/ / \/ } | $nginx | $ratios |"
    rm -rf "$tree" "$db" "$db-wal" "$db-shm"
done
