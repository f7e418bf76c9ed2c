# Helpers the benchmark scripts share; sourced after REPO is set.

# Cargo's target directory for $REPO (it may be set elsewhere than
# $REPO/target by CARGO_TARGET_DIR or a config file).
target_dir() {
    local target
    target=$(cd "$REPO" && cargo metadata --format-version 1 --no-deps 2>/dev/null \
        | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
    echo "${target:-$REPO/target}"
}

# Percentage of the last second the whole machine was busy (all CPUs).
busy_pct() {
    local a b
    read -ra a < <(head -1 /proc/stat)
    sleep 1
    read -ra b < <(head -1 /proc/stat)
    awk -v a="${a[*]}" -v b="${b[*]}" 'BEGIN {
        n = split(a, x, " "); split(b, y, " ");
        for (i = 2; i <= n; i++) { t += y[i] - x[i] }
        idle = (y[5] - x[5]) + (y[6] - x[6]);
        printf "%d", (t > 0 ? 100 * (t - idle) / t : 0) }'
}
