#!/usr/bin/env bash
# Benchmark of `ccc publish` against `tar | gzip -9`, republishing, and peak
# memory, all measured side by side in one run.
#
#   bash bench/publish.sh            # prints a markdown summary on stdout
#   bash bench/publish.sh --write    # also puts it into bench/PUBLISH.md
#
# Progress goes to stderr. Self-contained on a Debian machine as root: it
# installs what is missing (python3, GNU time, a C compiler, Rust through
# rustup when there is no cargo). Everything it generates lives under $WORK
# (default /tmp/ccc-bench) and is removed at the end unless KEEP=1.
#
# Knobs (environment):
#   REPS=5        repetitions of the main comparison (>= 3)
#   MEM_REPS=3    repetitions of each peak-memory measurement
#   MAIN_MB=200   size of the main tree (10k files at 200 MB)
#   MEM_MB="50 400"  other tree sizes for the peak-memory comparison
#   WORK=/tmp/ccc-bench   scratch directory (trees, catalogs, archives)
#   CCC=/path/to/ccc      use this binary instead of building one
#   REV=<git rev>         build that commit (from `git archive`) instead of
#                         the working tree
#   KEEP=1        keep $WORK afterwards
#   AB="name=/path/to/ccc ..."  also time these builds (first publish,
#                 republish, peak RSS by tree size), interleaved in the run
#
# Method: trees are generated deterministically (fixed seed), every file is
# read once before each repetition so both tools read from the page cache
# (the page cache cannot be dropped without privileges a VM may not give),
# every publish starts from a fresh catalog, the tools alternate within each
# repetition, wall time is taken with `date +%s%N` around the command and
# CPU time and peak RSS with `/usr/bin/time -v`.
set -euo pipefail

WRITE=0
for arg in "$@"; do
    case "$arg" in
        --write) WRITE=1 ;;
        -h | --help) awk 'NR > 1 && !/^#/ {exit} NR > 1 {print}' "$0"; exit 0 ;;
        *) echo "unknown argument: $arg (try --help)" >&2; exit 2 ;;
    esac
done

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REPS=${REPS:-5}
MEM_REPS=${MEM_REPS:-3}
MAIN_MB=${MAIN_MB:-200}
MEM_MB=${MEM_MB:-"50 400"}
WORK=${WORK:-/tmp/ccc-bench}
KEEP=${KEEP:-0}
SEED=20240601
SCRIPT_START=$(date +%s)

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# --- what the benchmark needs ------------------------------------------------

APT_UPDATED=0
apt_install() {
    command -v apt-get >/dev/null || die "missing $*, and no apt-get to install it"
    [ "$(id -u)" = 0 ] || die "missing $*; run as root or install it"
    # Update the package lists only when they are absent or the install fails.
    if ! ls /var/lib/apt/lists/*Packages* >/dev/null 2>&1; then
        apt-get update -qq >&2 && APT_UPDATED=1
    fi
    if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >&2; then
        [ "$APT_UPDATED" = 1 ] && die "apt-get install $* failed"
        apt-get update -qq >&2 && APT_UPDATED=1
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >&2
    fi
}

need() { # need COMMAND PACKAGE
    command -v "$1" >/dev/null 2>&1 || { log "installing $2"; apt_install "$2"; }
}

need python3 python3
need tar tar
need gzip gzip
need find findutils
[ -x /usr/bin/time ] || { log "installing time"; apt_install time; }
if [ -z "${CCC:-}" ]; then
    need cc build-essential
    if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
        export PATH="$HOME/.cargo/bin:$PATH"
    fi
    if ! command -v cargo >/dev/null 2>&1; then
        need curl curl
        [ -e /etc/ssl/certs/ca-certificates.crt ] || apt_install ca-certificates
        log "installing Rust with rustup (no cargo found)"
        curl -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal >&2
        export PATH="$HOME/.cargo/bin:$PATH"
    fi
fi

mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
SHM_DB=""
cleanup() {
    [ -z "$SHM_DB" ] || rm -f "$SHM_DB" "$SHM_DB-wal" "$SHM_DB-shm"
    [ "$KEEP" = 1 ] || rm -rf "$WORK"
}
trap cleanup EXIT

# --- ccc ---------------------------------------------------------------------

BUILT_FROM=""
if [ -n "${CCC:-}" ]; then
    [ -x "$CCC" ] || die "CCC=$CCC is not an executable"
    BUILT_FROM="prebuilt binary $CCC"
elif [ -n "${REV:-}" ]; then
    need git git
    rev=$(git -C "$REPO" rev-parse --short "$REV")
    log "building ccc at $rev (git archive, clean tree)"
    rm -rf "$WORK/src" && mkdir -p "$WORK/src"
    git -C "$REPO" archive "$rev" | tar -x -C "$WORK/src"
    # git archive dates files at the commit; without this an older commit
    # would look up to date in the shared target directory.
    find "$WORK/src" -type f -exec touch {} +
    # A target directory outside $WORK so that a second run is incremental.
    (cd "$WORK/src" && CARGO_TARGET_DIR=/tmp/ccc-bench-target cargo build --release --locked >&2)
    CCC=/tmp/ccc-bench-target/release/ccc
    BUILT_FROM="commit $rev, clean tree from git archive"
else
    log "building ccc (cargo build --release)"
    (cd "$REPO" && cargo build --release >&2)
    CCC="$REPO/target/release/ccc"
    BUILT_FROM="working tree of $REPO"
    if git -C "$REPO" rev-parse HEAD >/dev/null 2>&1; then
        dirty=$(git -C "$REPO" status --porcelain -- src Cargo.toml Cargo.lock build.rs 2>/dev/null | awk '{print $2}' | tr '\n' ' ')
        if [ -n "$dirty" ]; then
            BUILT_FROM="$BUILT_FROM, HEAD plus uncommitted changes in: $dirty"
        else
            BUILT_FROM="$BUILT_FROM, no uncommitted changes under src/"
        fi
    fi
fi
COMMIT=$(git -C "$REPO" rev-parse --short "${REV:-HEAD}" 2>/dev/null || echo unknown)

# --- trees -------------------------------------------------------------------

cat >"$WORK/gen.py" <<'PY'
"""Deterministic front-end build tree: text assets (JS, CSS, HTML, JSON,
source maps, SVG) drawn from fixed pools of generated statements, plus random
bytes standing in for images, fonts and wasm. Sizes are log-normal (many
small files, a few large), 50 files per MB, 30% of the bytes incompressible;
every tree has the same largest files (one 4 MiB text, one 4 MiB binary) so
that trees of different sizes differ only in how many files they hold."""
import hashlib, json, os, random, sys

out, total_mb, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(seed)
nfiles = total_mb * 50
target = total_mb * 1_000_000
BIN_SHARE = 0.30
MAX_SIZE = 4 << 20

syl = "ra to mi ka ne lo su de fi po xa zu ve bi gu ho ja qu we yo el an or is".split()
def ident(r):
    s = "".join(r.choice(syl) for _ in range(r.choice((1, 2, 2, 3, 3, 4))))
    return s if r.random() < 0.6 else s + r.choice(syl).capitalize()
IDS = [ident(rng) for _ in range(4000)]
ALNUM = "abcdefghijklmnopqrstuvwxyz0123456789"
SHORT = [a + b for a in "abcdefghijklmnopqrstuvwxyz$_" for b in ALNUM] + list("abcdefghijklmnopqrstuvwxyz")
WORDS = ("the of and to in is you that it for on are with as this your be at or have from by not all "
         "can more page user data click here search home about account settings cart product price "
         "shipping order login sign up new free help contact privacy terms cookie").split()
TAGS = "div span a p li ul section header footer nav button img input label h1 h2 h3 main article".split()
PROPS = ("margin padding color background display position top left width height font-size "
         "line-height border border-radius opacity transform transition z-index flex "
         "grid-template-columns box-shadow overflow").split()

def words(r, n): return " ".join(r.choice(WORDS) for _ in range(n))
def num(r): return str(r.choice((r.randint(0, 9), r.randint(0, 100), r.randint(0, 100000))))
def sh(r): return r.choice(SHORT)
def idn(r): return r.choice(IDS)
def js(r):
    i, s, t = idn(r), sh(r), r.randrange(10)
    if t == 0: return f'function {i}({s},{sh(r)}){{return {s}.{idn(r)}({num(r)})+"{words(r, 2)}"}}'
    if t == 1: return f"var {s}={sh(r)}.{i}||{{}};"
    if t == 2: return f"{sh(r)}.prototype.{i}=function({s}){{this.{idn(r)}={s};return this}};"
    if t == 3: return f'if({s}&&{s}.{i}>{num(r)}){{{sh(r)}({s},"{idn(r)}")}}else {{{s}=null}}'
    if t == 4: return f"const {i}=[{','.join(num(r) for _ in range(r.randint(2, 8)))}];"
    if t == 5:
        ev = r.choice(("click", "load", "input", "scroll", "keydown"))
        return f'{s}.addEventListener("{ev}",function({sh(r)}){{{i}({sh(r)}.target)}});'
    if t == 6: return f"export{{{i} as {sh(r)},{idn(r)} as {sh(r)}}};"
    if t == 7: return f"return {s}?{sh(r)}.{i}:void 0}}"
    if t == 8: return f"for(let {s}=0;{s}<{sh(r)}.length;{s}++){sh(r)}[{s}]={i}({s});"
    return f'{sh(r)}=Object.assign({{}},{s},{{{i}:"{words(r, 3)}",{idn(r)}:{num(r)}}});'
def css(r):
    vals = lambda: r.choice((num(r) + "px", "#%06x" % r.getrandbits(24), "none", "auto", "flex", "0 " + num(r) + "px", "inherit"))
    decl = ";".join(f"{r.choice(PROPS)}:{vals()}" for _ in range(r.randint(1, 5)))
    return f".{idn(r)}-{idn(r)} {r.choice(TAGS)}>.{idn(r)}{{{decl}}}"
def html(r):
    t = r.choice(TAGS)
    return f'<{t} class="{idn(r)} {idn(r)}"><a href="/{idn(r)}/{idn(r)}.html">{words(r, r.randint(1, 8))}</a></{t}>'
def jsn(r):
    return f'"{idn(r)}":{{"{idn(r)}":{num(r)},"{idn(r)}":"{words(r, r.randint(1, 4))}","id":"{r.getrandbits(40):010x}"}},'
B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
def vlq(r):
    seg = lambda: "".join(r.choice(B64[:r.choice((8, 16, 32, 64))]) for _ in range(r.randint(1, 6)))
    return ",".join(seg() for _ in range(r.randint(2, 8))) + ";"

POOL = 20000
pools = {k: [f(rng) for _ in range(POOL)] for k, f in
         (("js", js), ("css", css), ("html", html), ("json", jsn), ("map", vlq))}
# (extension, pool, joiner, weight)
TEXT = [("js", "js", "", 40), ("mjs", "js", "\n", 6), ("css", "css", "", 14), ("html", "html", "\n", 10),
        ("json", "json", "", 10), ("map", "map", "", 12), ("svg", "html", "", 8)]
BIN = [("png", 35), ("jpg", 25), ("webp", 15), ("woff2", 15), ("wasm", 5), ("ico", 5)]
DIRS = "assets static js css img fonts locales chunks vendor media icons pages components lib".split()

def sizes(n, mean, sigma):
    raw = [rng.lognormvariate(0, sigma) for _ in range(n)]
    big = max(range(n), key=raw.__getitem__)
    budget = n * mean - MAX_SIZE
    rest = [i for i in range(n) if i != big]
    for _ in range(30):  # scale to the budget, clamping both ends
        k = budget / sum(raw[i] for i in rest)
        for i in rest:
            raw[i] = min(MAX_SIZE, max(64.0, raw[i] * k))
    raw[big] = MAX_SIZE
    return [int(x) for x in raw]

nbin = round(nfiles * 0.30)
ntext = nfiles - nbin
kinds = [("t", s) for s in sizes(ntext, target * (1 - BIN_SHARE) / ntext, 1.7)]
kinds += [("b", s) for s in sizes(nbin, target * BIN_SHARE / nbin, 1.5)]
rng.shuffle(kinds)

dirs = [""]
for i in range(400):  # nested folders, up to 5 deep
    parent = rng.choice(dirs) if len(dirs) > 1 and rng.random() < 0.7 else ""
    if parent.count("/") >= 4:
        parent = ""
    name = rng.choice(DIRS + IDS[:200]) + (f"-{i}" if rng.random() < 0.3 else "")
    dirs.append(f"{parent}/{name}" if parent else name)

os.makedirs(out, exist_ok=True)
digest = hashlib.sha256()
by_ext, sizes_all, total, incompressible, depth, used = {}, [], 0, 0, 0, set()
for kind, size in kinds:
    d = rng.choice(dirs)
    if kind == "t":
        ext, pool, joiner, _ = rng.choices(TEXT, weights=[t[3] for t in TEXT])[0]
    else:
        ext = rng.choices(BIN, weights=[b[1] for b in BIN])[0][0]
    name = f"{rng.choice(IDS)}.{rng.getrandbits(32):08x}.{ext}"
    rel = f"{d}/{name}" if d else name
    if kind == "t":
        parts, have = [f"/*! {rel} */\n"], 0
        have = len(parts[0])
        while have < size:
            s = joiner.join(rng.choices(pools[pool], k=(size - have) // 60 + 1))
            parts.append(s)
            have += len(s)
        data = "".join(parts).encode()[:size]
    else:
        data = rng.randbytes(size)
        incompressible += size
    path = os.path.join(out, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    digest.update(rel.encode() + b"\0" + data)
    e = by_ext.setdefault(ext, [0, 0])
    e[0] += 1
    e[1] += size
    sizes_all.append(size)
    total += size
    depth = max(depth, rel.count("/"))
    used.add(d)
sizes_all.sort()
pct = lambda p: sizes_all[min(len(sizes_all) - 1, int(len(sizes_all) * p))]
json.dump({
    "mb": total_mb, "files": len(kinds), "bytes": total, "incompressible": incompressible,
    "dirs": len(used - {""}),
    "depth": depth, "p50": pct(0.5), "p90": pct(0.9), "p99": pct(0.99), "max": sizes_all[-1],
    "min": sizes_all[0], "by_ext": by_ext, "fingerprint": digest.hexdigest()[:16],
}, sys.stdout)
PY

declare -A TREE
for mb in $MAIN_MB $MEM_MB; do
    log "generating the ${mb} MB tree"
    TREE[$mb]="$WORK/tree-$mb"
    rm -rf "${TREE[$mb]}"
    python3 "$WORK/gen.py" "${TREE[$mb]}" "$mb" "$SEED" >"$WORK/tree-$mb.json"
done

# --- measuring ---------------------------------------------------------------

RUNS="$WORK/runs.tsv"
: >"$RUNS"
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
STAT_START=$(awk '/^cpu / {print $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9, $9}' /proc/stat)

warm() { find "$1" -type f -exec cat {} + >/dev/null; }

# timed NAME TREE_MB REP OUTPUT_FILE -- COMMAND...
# Appends: name mb rep wall_s user_s sys_s maxrss_kb output_bytes
timed() {
    local name=$1 mb=$2 rep=$3 output=$4
    shift 5
    local tv="$WORK/time.txt" t0 t1
    t0=$(date +%s%N)
    if ! /usr/bin/time -v -o "$tv" "$@" >"$WORK/stdout.txt" 2>"$WORK/stderr.txt"; then
        cat "$WORK/stderr.txt" >&2
        die "$name failed: $*"
    fi
    t1=$(date +%s%N)
    local user sys rss size=0
    user=$(awk -F': ' '/User time/ {print $2}' "$tv")
    sys=$(awk -F': ' '/System time/ {print $2}' "$tv")
    rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$tv")
    if [ "$output" != - ]; then
        size=0
        for f in "$output" "$output-wal"; do
            [ -e "$f" ] && size=$((size + $(stat -c %s "$f")))
        done
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$mb" "$rep" \
        "$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", (b - a) / 1e9}')" \
        "$user" "$sys" "$rss" "$size" >>"$RUNS"
    log "  $name (${mb} MB, rep $rep): $(tail -1 "$RUNS" | cut -f4)s wall, $((rss / 1024)) MiB peak RSS"
}

DB="$WORK/cdn.db"
TGZ="$WORK/out.tgz"
SHM_DIR=/dev/shm
[ -d "$SHM_DIR" ] && [ -w "$SHM_DIR" ] || SHM_DIR=""
SHM_DB="${SHM_DIR:+$SHM_DIR/ccc-bench-$$.db}"
fresh() { rm -f "$1" "$1-wal" "$1-shm"; }
T=${TREE[$MAIN_MB]}
TP=$(dirname "$T")
TN=$(basename "$T")

# A catalog that exists but holds nothing of the tree, for --dry-run.
mkdir -p "$WORK/seed" && echo seed >"$WORK/seed/seed.txt"

for rep in $(seq 1 "$REPS"); do
    log "repetition $rep of $REPS (${MAIN_MB} MB tree)"
    warm "$T"
    ccc_pair() {
        fresh "$DB"
        timed publish "$MAIN_MB" "$rep" "$DB" -- "$CCC" --db "$DB" publish --json app@1.0.0 "$T"
        cp "$WORK/stdout.txt" "$WORK/publish-$rep.json"
        timed republish "$MAIN_MB" "$rep" "$DB" -- "$CCC" --db "$DB" publish --json app@1.0.1 "$T"
        cp "$WORK/stdout.txt" "$WORK/republish-$rep.json"
    }
    tar_gzip() {
        rm -f "$TGZ"
        timed tar_gzip "$MAIN_MB" "$rep" "$TGZ" -- \
            bash -c 'set -o pipefail; tar -C "$1" -cf - "$2" | gzip -9 >"$3"' _ "$TP" "$TN" "$TGZ"
    }
    # Alternate the order so that drift on a shared machine hits both tools.
    if [ $((rep % 2)) = 1 ]; then ccc_pair; tar_gzip; else tar_gzip; ccc_pair; fi
    # Where ccc's time goes.
    fresh "$DB"
    timed publish_nobrotli "$MAIN_MB" "$rep" "$DB" -- "$CCC" --db "$DB" publish -q --brotli-quality 0 app@1.0.0 "$T"
    fresh "$DB"
    timed publish_j1 "$MAIN_MB" "$rep" "$DB" -- "$CCC" --db "$DB" publish -q --jobs 1 app@1.0.0 "$T"
    fresh "$DB"
    "$CCC" --db "$DB" publish -q seed@1.0.0 "$WORK/seed"
    timed dry_run "$MAIN_MB" "$rep" - -- "$CCC" --db "$DB" publish -q --dry-run app@1.0.0 "$T"
    if [ -n "$SHM_DB" ]; then
        fresh "$SHM_DB"
        timed publish_tmpfs "$MAIN_MB" "$rep" "$SHM_DB" -- "$CCC" --db "$SHM_DB" publish -q app@1.0.0 "$T"
        fresh "$SHM_DB"
    fi
done

log "peak memory of a first publish by tree size"
for mb in $MEM_MB; do
    for rep in $(seq 1 "$MEM_REPS"); do
        warm "${TREE[$mb]}"
        fresh "$DB"
        timed publish "$mb" "$rep" "$DB" -- "$CCC" --db "$DB" publish --json app@1.0.0 "${TREE[$mb]}"
    done
done
# A dry run with no catalog file works in an in-memory catalog: one run per
# size, reported beside the rest as a caveat.
for mb in $MEM_MB $MAIN_MB; do
    fresh "$DB"
    timed dry_run_nocatalog "$mb" 1 - -- "$CCC" --db "$DB" publish -q --dry-run app@1.0.0 "${TREE[$mb]}"
done
fresh "$DB"

# Optional A/B of other builds, interleaved in the same run:
#   AB="base=/tmp/ccc-base fix=/tmp/ccc-fix" bash bench/publish.sh
AB=${AB:-}
if [ -n "$AB" ]; then
    for spec in $AB; do
        [ -x "${spec#*=}" ] || die "AB: ${spec#*=} is not an executable"
    done
    for rep in $(seq 1 "$REPS"); do
        log "A/B repetition $rep of $REPS"
        warm "$T"
        for spec in $AB; do
            label=${spec%%=*} bin=${spec#*=}
            fresh "$DB"
            timed "ab_first:$label" "$MAIN_MB" "$rep" "$DB" -- "$bin" --db "$DB" publish --json app@1.0.0 "$T"
            timed "ab_repub:$label" "$MAIN_MB" "$rep" "$DB" -- "$bin" --db "$DB" publish --json app@1.0.1 "$T"
        done
    done
    for mb in $MEM_MB; do
        for rep in $(seq 1 "$MEM_REPS"); do
            warm "${TREE[$mb]}"
            for spec in $AB; do
                label=${spec%%=*} bin=${spec#*=}
                fresh "$DB"
                timed "ab_first:$label" "$mb" "$rep" "$DB" -- "$bin" --db "$DB" publish --json app@1.0.0 "${TREE[$mb]}"
            done
        done
    done
    fresh "$DB"
fi
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)
STAT_END=$(awk '/^cpu / {print $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9, $9}' /proc/stat)
STEAL=$(echo "$STAT_START $STAT_END" | awk '{d = $3 - $1; printf "%.1f%%", (d > 0 ? 100 * ($4 - $2) / d : 0)}')

# --- summary -----------------------------------------------------------------

cpu_model=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
mem_total=$(awk '/^MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)
os_name=$(. /etc/os-release 2>/dev/null && echo "${PRETTY_NAME:-unknown}")
fs_type=$(df -T "$WORK" | awk 'NR == 2 {print $2 " (" $1 ")"}')
export AB RUNS WORK REPS MEM_REPS MAIN_MB MEM_MB COMMIT BUILT_FROM LOAD_START LOAD_END STEAL SHM_DB
export M_DATE="$(date -u '+%Y-%m-%d %H:%M:%S UTC')"
export M_NPROC="$(nproc)" M_CPU="$cpu_model" M_MEM="$mem_total" M_KERNEL="$(uname -r)"
export M_OS="$os_name" M_FS="$fs_type"
export M_RUSTC="$(rustc --version 2>/dev/null || echo 'n/a (prebuilt binary)')"
export M_GZIP="$(gzip --version | head -1)" M_TAR="$(tar --version | head -1)"
export M_PY="$(python3 --version 2>&1)"
export M_ELAPSED=$(($(date +%s) - SCRIPT_START))

SUMMARY="$WORK/summary.md"
python3 - >"$SUMMARY" <<'PY'
import json, os, statistics as st
E = os.environ
runs = {}
for line in open(E["RUNS"]):
    name, mb, rep, wall, user, sys_, rss, size = line.rstrip("\n").split("\t")
    runs.setdefault((name, int(mb)), []).append(
        dict(rep=int(rep), wall=float(wall), cpu=float(user) + float(sys_), user=float(user),
             sys=float(sys_), rss=int(rss), size=int(size)))
main = int(E["MAIN_MB"])
mem_mb = [int(x) for x in E["MEM_MB"].split()]
trees = {mb: json.load(open(f"{E['WORK']}/tree-{mb}.json")) for mb in [main] + mem_mb}
R = lambda name, mb=main: runs.get((name, mb), [])
med = lambda name, key="wall", mb=main: st.median(r[key] for r in R(name, mb))
MiB = lambda b: f"{b / 1048576:.1f} MiB"
def pub_json(kind, rep):
    try:
        return json.load(open(f"{E['WORK']}/{kind}-{rep}.json"))
    except Exception:
        return {}
t = trees[main]
out = []
p = out.append
p(f"Generated by `bash bench/publish.sh` on {E['M_DATE']} in {int(E['M_ELAPSED']) // 60} min {int(E['M_ELAPSED']) % 60} s.")
p("")
p("### Machine and build")
p("")
p("| | |")
p("|---|---|")
for k, v in [("date", E["M_DATE"]), ("cores (`nproc`)", E["M_NPROC"]), ("CPU", E["M_CPU"]),
             ("memory", E["M_MEM"]), ("kernel", E["M_KERNEL"]), ("OS", E["M_OS"]),
             ("scratch file system (trees, catalog, .tgz)", E["M_FS"]),
             ("rustc", E["M_RUSTC"]), ("ccc", f"`{E['COMMIT']}` ({E['BUILT_FROM']})"),
             ("baseline", f"{E['M_TAR']}, {E['M_GZIP']}"), ("generator", E["M_PY"]),
             ("load average at start / end", f"{E['LOAD_START']} / {E['LOAD_END']}"),
             ("CPU time stolen by the hypervisor during the measurements", E["STEAL"])]:
    p(f"| {k} | {v} |")
p("")
p("### The tree")
p("")
inc = t["incompressible"] / t["bytes"]
p(f"{t['files']:,} files, {t['bytes']:,} bytes ({MiB(t['bytes'])}) in {t['dirs']} folders up to "
  f"{t['depth']} deep; {inc:.0%} of the bytes are incompressible (random bytes named .png, .jpg, "
  f".webp, .woff2, .wasm, .ico), the rest generated minified JS, CSS, HTML, JSON, source maps "
  f"and SVG. File sizes: median {t['p50']:,} B, 90th percentile {t['p90']:,} B, 99th "
  f"{t['p99']:,} B, largest {t['max']:,} B (smallest {t['min']} B). Content fingerprint "
  f"`{t['fingerprint']}` (fixed seed: the same on every run).")
p("")
p("| extension | files | bytes |")
p("|---|--:|--:|")
for ext, (n, b) in sorted(t["by_ext"].items(), key=lambda kv: -kv[1][1]):
    p(f"| .{ext} | {n:,} | {MiB(b)} |")
p("")
p("### Every repetition (wall seconds)")
p("")
cols = [("publish", "`ccc publish` 1.0.0, fresh catalog"), ("republish", "`ccc publish` 1.0.1, same tree"),
        ("tar_gzip", "`tar \\| gzip -9`"), ("publish_nobrotli", "`ccc publish --brotli-quality 0`"),
        ("publish_j1", "`ccc publish --jobs 1`"),
        ("dry_run", "`ccc publish --dry-run`"), ("publish_tmpfs", "`ccc publish`, catalog on tmpfs")]
cols = [c for c in cols if R(c[0])]
p("| rep | " + " | ".join(c[1] for c in cols) + " | tar\\|gzip / publish | publish / republish |")
p("|--:|" + "--:|" * (len(cols) + 2))
by = {c[0]: {r["rep"]: r for r in R(c[0])} for c in cols}
reps = sorted(by["publish"])
per_rep_a, per_rep_b = [], []
for rep in reps:
    a = by["tar_gzip"][rep]["wall"] / by["publish"][rep]["wall"]
    b = by["publish"][rep]["wall"] / by["republish"][rep]["wall"]
    per_rep_a.append(a); per_rep_b.append(b)
    p(f"| {rep} | " + " | ".join(f"{by[c][rep]['wall']:.3f}" for c, _ in cols) + f" | {a:.2f}x | {b:.1f}x |")
p("| **median** | " + " | ".join(f"**{med(c):.3f}**" for c, _ in cols)
  + f" | **{st.median(per_rep_a):.2f}x** | **{st.median(per_rep_b):.1f}x** |")
p("| CPU s (user+sys), median | " + " | ".join(f"{med(c, 'cpu'):.2f}" for c, _ in cols) + " | | |")
p("| peak RSS, median | " + " | ".join(MiB(med(c, 'rss') * 1024) for c, _ in cols) + " | | |")
p("")
p("### Targets")
p("")
ra = med("tar_gzip") / med("publish")
rb = med("publish") / med("republish")
def ok(x, target, per_rep):
    below = sum(1 for r in per_rep if r < target)
    if x >= target:
        return "**met**" + (f" (borderline: {below} of {len(per_rep)} repetitions below {target}x)" if below else "")
    return "**missed**" + (f" ({len(per_rep) - below} of {len(per_rep)} repetitions reach {target}x)" if below < len(per_rep) else "")
p("| target | measured (ratio of medians) | per-repetition range | |")
p("|---|--:|--:|---|")
p(f"| `ccc publish` at least 1.5x faster than `tar -cf - DIR \\| gzip -9` | {ra:.2f}x "
  f"({med('tar_gzip'):.2f} s vs {med('publish'):.2f} s) | {min(per_rep_a):.2f}x - {max(per_rep_a):.2f}x | {ok(ra, 1.5, per_rep_a)} |")
p(f"| republishing the unchanged tree at least 10x faster than the first publish | {rb:.1f}x "
  f"({med('publish'):.2f} s vs {med('republish'):.3f} s) | {min(per_rep_b):.1f}x - {max(per_rep_b):.1f}x | {ok(rb, 10, per_rep_b)} |")
mem_sizes = sorted([main] + mem_mb)
rss = {mb: med("publish", "rss", mb) for mb in mem_sizes if R("publish", mb)}
lo, hi = min(mem_sizes), max(mem_sizes)
growth = rss[hi] / rss[lo]
if lo != hi:
  p(f"| peak RSS of a first publish does not grow with the tree | {MiB(rss[lo] * 1024)} at {lo} MB, "
  f"{MiB(rss[hi] * 1024)} at {hi} MB ({hi // lo}x the bytes, {growth:.2f}x the RSS) | | "
  f"{'**met**' if growth < 1.5 else '**missed**'} (criterion: under 1.5x; a few hundred bytes "
  f"of bookkeeping per file may grow with the file count) |")
p("")
p("### Output sizes")
p("")
pj, rj = pub_json("publish", reps[0]), pub_json("republish", reps[0])
cat_size, tgz_size = med("publish", "size"), med("tar_gzip", "size")
p("| | bytes | of the tree |")
p("|---|--:|--:|")
p(f"| tree | {t['bytes']:,} | 100% |")
if pj:
    p(f"| ccc: stored bodies (`stored_bytes`, gzip or raw per file) | {pj['stored_bytes']:,} | {pj['stored_bytes'] / t['bytes']:.1%} |")
    br = pj.get("brotli")
    if br:
        p(f"| ccc: brotli streams kept (`brotli.brotli_bytes`, {br['blob_count']:,} files) | {br['brotli_bytes']:,} | {br['brotli_bytes'] / t['bytes']:.1%} |")
        p(f"| ccc: the gzip streams of those files (`brotli.gzip_bytes`) | {br['gzip_bytes']:,} | {br['gzip_bytes'] / t['bytes']:.1%} |")
p(f"| ccc: catalog file after the first publish (`cdn.db`) | {int(cat_size):,} | {cat_size / t['bytes']:.1%} |")
p(f"| ccc: catalog file after the republish | {int(med('republish', 'size')):,} | {med('republish', 'size') / t['bytes']:.1%} |")
p(f"| `tar \\| gzip -9` (.tgz) | {int(tgz_size):,} | {tgz_size / t['bytes']:.1%} |")
if rj:
    p("")
    p(f"The republish stored {rj['new_content']['stored_bytes']:,} new bytes and found "
      f"{rj['already_stored']['file_count']:,} of {rj['file_count']:,} files already in the catalog.")
p("")
p("### Peak memory of a first publish, by tree size")
p("")
p("| tree | files | bytes | largest file | peak RSS per repetition | median |")
p("|---|--:|--:|--:|---|--:|")
for mb in mem_sizes:
    tr = trees[mb]
    rs = [r["rss"] for r in R("publish", mb)]
    p(f"| {mb} MB | {tr['files']:,} | {MiB(tr['bytes'])} | {MiB(tr['max'])} | "
      + ", ".join(MiB(x * 1024) for x in rs) + f" | **{MiB(st.median(rs) * 1024)}** |")
nocat = [(mb, R("dry_run_nocatalog", mb)) for mb in mem_sizes if R("dry_run_nocatalog", mb)]
if nocat:
    p("")
    p("Caveat, one run each: `--dry-run` when the catalog file does not exist yet publishes into "
      "an in-memory catalog, so its peak RSS holds every stored body: "
      + ", ".join(f"{MiB(r[0]['rss'] * 1024)} at {mb} MB" for mb, r in nocat) + ".")
p("")
p("### Where ccc's time goes (medians, same run)")
p("")
j1, j2 = med("publish_j1"), med("publish")
p(f"- Parallel speedup on {E['M_NPROC']} cores: `--jobs 1` {j1:.2f} s vs default {j2:.2f} s = "
  f"{j1 / j2:.2f}x. CPU time {med('publish', 'cpu'):.2f} s for {j2:.2f} s wall "
  f"({med('publish', 'cpu') / j2:.2f} cores busy on average).")
p(f"- Single-core ccc vs single-core `gzip -9`: {med('tar_gzip'):.2f} s / {j1:.2f} s = "
  f"{med('tar_gzip') / j1:.2f}x; with all cores {ra:.2f}x.")
if R("publish_nobrotli"):
    nb = med("publish_nobrotli")
    p(f"- Brotli streams (the default `--brotli-quality`): a publish takes {j2:.2f} s with them and "
      f"{nb:.2f} s with `--brotli-quality 0` ({j2 - nb:+.2f} s, {med('publish', 'cpu') - med('publish_nobrotli', 'cpu'):+.2f} s "
      f"of CPU); without them `tar \\| gzip -9` / publish would be {med('tar_gzip') / nb:.2f}x.")
if R("dry_run"):
    p(f"- `--dry-run` into an existing catalog (everything but the commit and the WAL checkpoint "
      f"that follows it) {med('dry_run'):.2f} s: commit + checkpoint cost about "
      f"{j2 - med('dry_run'):.2f} s ({(j2 - med('dry_run')) / j2:.0%} of the publish).")
if R("publish_tmpfs"):
    p(f"- The catalog on tmpfs (no disk writes, fsync free) {med('publish_tmpfs'):.2f} s vs "
      f"{j2:.2f} s on {E['M_FS'].split()[0]} (difference {j2 - med('publish_tmpfs'):+.2f} s: what writing "
      f"and fsyncing the catalog on this disk costs beyond the CPU work).")
p(f"- Republish: {med('republish'):.3f} s wall, {med('republish', 'cpu'):.2f} s CPU (read + sha256 of "
  f"every file, one index lookup per file, {t['files']:,} asset rows, commit).")
if E.get("AB"):
    labels = [x.split("=", 1)[0] for x in E["AB"].split()]
    p("")
    p("### A/B of other builds (same run, interleaved)")
    p("")
    p("| build | path | first publish, median s | republish, median s | publish / republish | "
      + " | ".join(f"peak RSS {mb} MB" for mb in mem_sizes) + " |")
    p("|---|---|--:|--:|--:|" + "--:|" * len(mem_sizes))
    for spec in E["AB"].split():
        label, path = spec.split("=", 1)
        f, r = med(f"ab_first:{label}"), med(f"ab_repub:{label}")
        rss_cells = []
        for mb in mem_sizes:
            rs = [x["rss"] for x in R(f"ab_first:{label}", mb)]
            rss_cells.append(MiB(st.median(rs) * 1024) if rs else "")
        p(f"| {label} | `{path}` | {f:.3f} | {r:.3f} | {f / r:.1f}x | " + " | ".join(rss_cells) + " |")
print("\n".join(out))
PY

cat "$SUMMARY"
if [ "$WRITE" = 1 ]; then
    MD="$REPO/bench/PUBLISH.md"
    begin='<!-- BEGIN bench/publish.sh output -->'
    end='<!-- END bench/publish.sh output -->'
    if [ -f "$MD" ] && grep -qF "$begin" "$MD"; then
        python3 - "$MD" "$SUMMARY" "$begin" "$end" <<'PY'
import sys
md, summary, begin, end = sys.argv[1:]
text = open(md).read()
head, rest = text.split(begin, 1)
_, tail = rest.split(end, 1)
open(md, "w").write(head + begin + "\n" + open(summary).read() + end + tail)
PY
    else
        { echo "# ccc publish benchmark"; echo; echo "$begin"; cat "$SUMMARY"; echo "$end"; } >"$MD"
    fi
    log "wrote $MD"
fi
log "done in $(($(date +%s) - SCRIPT_START)) s"
