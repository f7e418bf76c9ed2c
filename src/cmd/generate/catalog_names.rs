//! Catalog names in the bash completion. clap's script completes commands,
//! flags and their values; where an argument names a package, a version or
//! a file (`PKG`, `PKG@VERSION`, `PKG@VERSION/PATH`), this adds the names
//! the catalog holds, read with `ccc ls --names` from the catalog the
//! command line names (`--db`, else `CCC_DB_PATH` or the default, as ccc reads
//! them). A function wraps clap's `_ccc` and is registered in its place.
//!
//! Which arguments take names is read from the clap definitions: every
//! positional whose value name starts with `PKG` or `[PKG@]`, so a new
//! command gets them without a change here. Scoped names (`@types/react`)
//! work: `@` is not one of bash's word breaks.

use clap::Command;

/// The bash script clap generated, with catalog names added (module doc).
/// `Err` when clap's registration of `_ccc` is not there to replace, as a
/// newer clap_complete might write it.
pub(super) fn add_to_bash(script: &str, cmd: &Command) -> Result<String, String> {
    const REGISTERED: &str = "complete -F _ccc ";
    if !script.contains(REGISTERED) {
        return Err(format!(
            "clap's bash script has no `{REGISTERED}` line to register the catalog names in"
        ));
    }
    let mut value_options = Vec::new();
    let mut targets = Vec::new();
    walk(cmd, &mut Vec::new(), &mut value_options, &mut targets);
    value_options.sort();
    value_options.dedup();
    let targets: String = targets
        .iter()
        .map(|(path, most)| format!("        \"{path}\") most={most} ;;\n"))
        .collect();
    let function = FUNCTION
        .replace("@VALUE_OPTIONS@", &value_options.join("|"))
        .replace("@TARGETS@\n", &targets);
    Ok(script.replace(REGISTERED, "complete -F _ccc_with_catalog_names ") + &function)
}

/// Collects, under `cmd`, every option that takes a value and, per
/// command path, how many leading positionals take catalog names (99: any
/// number).
fn walk(
    cmd: &Command,
    path: &mut Vec<String>,
    value_options: &mut Vec<String>,
    targets: &mut Vec<(String, usize)>,
) {
    let (mut most, mut counting) = (0, true);
    for arg in cmd.get_arguments() {
        let takes_values = arg.get_num_args().is_some_and(|n| n.takes_values());
        if !arg.is_positional() {
            if takes_values {
                value_options.extend(arg.get_long().map(|l| format!("--{l}")));
                value_options.extend(arg.get_short().map(|s| format!("-{s}")));
            }
            continue;
        }
        let names = arg.get_value_names().unwrap_or_default();
        let named = names.first().is_some_and(|n| {
            let n = n.as_str();
            n.starts_with("PKG") || n.starts_with("[PKG@]")
        });
        // Only the leading positionals that take names count.
        counting &= named && most < 99;
        if counting {
            let unbounded = arg.get_num_args().is_some_and(|n| n.max_values() > 1);
            most = if unbounded { 99 } else { most + 1 };
        }
    }
    if most > 0 {
        targets.push((path.join(" "), most));
    }
    for sub in cmd.get_subcommands() {
        if sub.is_hide_set() || sub.get_name() == "help" {
            continue;
        }
        path.push(sub.get_name().to_string());
        walk(sub, path, value_options, targets);
        path.pop();
    }
}

/// The wrapper: `@VALUE_OPTIONS@` is every option that takes a value,
/// `@TARGETS@` one `case` line per command that takes names.
const FUNCTION: &str = r#"
# Names from the catalog for the arguments that name a package, a version
# or a file, read with `ccc ls --names` from the catalog this command line
# would open. Everything else is clap's completion above.
_ccc_with_catalog_names() {
    _ccc "$@"
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
    [[ $cur == -* ]] && return 0
    case $prev in
        @VALUE_OPTIONS@) return 0 ;;
    esac
    local i word words=() db=()
    for ((i = 1; i < COMP_CWORD; i++)); do
        word=${COMP_WORDS[i]}
        case $word in
            --db) db=(--db "${COMP_WORDS[i + 1]}") ;;
            --db=*) db=("$word") ;;
        esac
        case $word in
            @VALUE_OPTIONS@) ((i++)) ;;
            -*) ;;
            *) words+=("$word") ;;
        esac
    done
    local most=0 depth
    for depth in 2 1; do
        ((${#words[@]} >= depth)) || continue
        case "${words[*]:0:depth}" in
@TARGETS@
        esac
        ((most)) && break
    done
    ((most && ${#words[@]} - depth < most)) || return 0

    # PKG, PKG@VERSION or PKG@VERSION/PATH, PKG maybe @scope/name.
    local scope= rest=$cur listing=() prefix=
    if [[ $rest == @*/* ]]; then
        scope=${rest%%/*}/
        rest=${rest#*/}
    fi
    if [[ $cur == @* && $cur != */* ]] || [[ $rest != *@* ]]; then
        listing=()
    elif [[ ${rest#*@} != */* ]]; then
        listing=("$scope${rest%%@*}")
    else
        listing=("$scope${rest%%/*}")
        prefix=$scope${rest%%/*}/
    fi
    local names name found=()
    names=$("${COMP_WORDS[0]}" "${db[@]}" ls "${listing[@]}" --names 2>/dev/null) || return 0
    # Line by line: a name is never split or globbed.
    while IFS= read -r name; do
        [[ -n $name && $prefix$name == "$cur"* ]] && found+=("$prefix$name")
    done <<<"$names"
    ((${#found[@]})) && COMPREPLY=("${found[@]}")
    return 0
}
"#;
