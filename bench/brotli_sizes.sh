#!/usr/bin/env bash
# What brotli saves over gzip -9 on real JavaScript and CSS: `npm pack` of
# real packages from the npm registry, published into a fresh catalog at
# each brotli quality, then the bytes a br client is sent (the brotli stream
# where ccc kept one, else the gzip stream) against what a gzip client is
# sent, summed over the .js/.mjs/.cjs/.css files.
#
#   bash bench/brotli_sizes.sh                 # markdown on stdout
#   QUALITIES="5 11" PACKAGES="react-dom@18.3.1" bash bench/brotli_sizes.sh
#
# Needs npm (for `npm pack`) and python3; builds ccc with `cargo build
# --release` unless CCC=path. Scratch files live under $WORK (default
# /tmp/ccc-brotli) and are removed at the end.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PACKAGES=${PACKAGES:-"react-dom@18.3.1 rxjs@7.8.1 bootstrap@5.3.3"}
QUALITIES=${QUALITIES:-"5 11"}
WORK=${WORK:-/tmp/ccc-brotli}
command -v npm >/dev/null || { echo "error: npm is needed for npm pack" >&2; exit 1; }
if [ -z "${CCC:-}" ]; then
    (cd "$REPO" && cargo build --release --locked >&2)
    CCC="$REPO/target/release/ccc"
fi
rm -rf "$WORK" && mkdir -p "$WORK/packs"
trap 'rm -rf "$WORK"' EXIT
(cd "$WORK/packs" && npm pack --silent $PACKAGES >&2)

echo "Measured by \`bash bench/brotli_sizes.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC'), ccc \`$(git -C "$REPO" rev-parse --short HEAD)\`, $(nproc) cores ($(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)), load average $(cut -d' ' -f1-3 /proc/loadavg)."
echo
echo "| package | quality | JS/CSS files | raw | gzip -9 (gzip clients) | br clients get | saved vs gzip | files with a br stream | publish wall s |"
echo "|---|--:|--:|--:|--:|--:|--:|--:|--:|"
for q in $QUALITIES; do
    for tgz in "$WORK"/packs/*.tgz; do
        db="$WORK/cdn-$q.db"
        rm -f "$db" "$db-wal" "$db-shm"
        t0=$(date +%s%N)
        report=$("$CCC" --db "$db" publish --json --brotli-quality "$q" "$tgz")
        t1=$(date +%s%N)
        target=$(python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["package"] + "@" + r["version"])' <<<"$report")
        "$CCC" --db "$db" ls "$target" --json |
            python3 -c '
import json, sys
q, target, secs = sys.argv[1], sys.argv[2], float(sys.argv[3])
files = [f for f in json.load(sys.stdin)["files"]
         if f["path"].rsplit(".", 1)[-1] in ("js", "mjs", "cjs", "css")]
raw = sum(f["raw_bytes"] for f in files)
gz = sum(f["stored_bytes"] for f in files)
br = sum(next((v["stored_bytes"] for v in f["variants"] if v["encoding"] == "br"), f["stored_bytes"]) for f in files)
kept = sum(1 for f in files if f["variants"])
print(f"| {target} | {q} | {len(files):,} | {raw:,} | {gz:,} | {br:,} | {gz - br:,} ({(gz - br) / gz:.1%}) | {kept:,} | {secs:.2f} |")
' "$q" "$target" "$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", (b - a) / 1e9}')"
        rm -f "$db" "$db-wal" "$db-shm"
    done
done
