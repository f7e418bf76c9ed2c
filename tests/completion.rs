//! The bash completion: clap's script with the catalog's names added where
//! an argument names a package, a version or a file, and the values of
//! `causal --load`. Each case runs the committed script in bash, as
//! `complete -F` would, with `ccc` on PATH.

use crate::util::{Workspace, ccc_path, repo_root};

/// What bash would offer for the command line `words`, the last one being
/// completed, with the environment `env`.
fn complete(words: &[&str], env: &[(&str, &str)]) -> Vec<String> {
    const RUN: &str = r#"
source "$1"; shift
COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
complete -p ccc | grep -q _ccc_with_catalog_names || echo "not registered" >&2
_ccc_with_catalog_names ccc "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
printf '%s\n' "${COMPREPLY[@]}"
"#;
    let bin = ccc_path().parent().expect("bin dir").to_path_buf();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = std::process::Command::new("bash")
        .args(["--norc", "--noprofile", "-c", RUN, "bash"])
        .arg(repo_root().join("completions/ccc.bash"))
        .args(words)
        .env("PATH", path)
        .env_remove("CCC_DB_PATH")
        .envs(env.iter().copied())
        .output()
        .expect("bash");
    assert!(out.status.success() && out.stderr.is_empty(), "{out:?}");
    let mut offered: Vec<String> = String::from_utf8(out.stdout)
        .expect("UTF-8")
        .lines()
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect();
    offered.sort();
    offered
}

#[test]
fn bash_completion_offers_the_catalogs_names_where_an_argument_names_one() {
    let ws = Workspace::new();
    ws.write("v1/index.js", "1\n");
    ws.write("v1/js/app.js", "app\n");
    ws.write("v1/js/util.js", "util\n");
    ws.write("t/index.d.ts", "export {};\n");
    ws.write("v1/js/a*b.js", "star\n");
    ws.publish("app@1.0.0", "v1", &[]);
    ws.publish("app@1.1.0", "v1", &[]);
    ws.publish("@types/react@18.3.3", "t", &[]);
    let db = ws.db();
    let db = db.to_str().expect("UTF-8 path");
    let with_db = |rest: &[&str]| {
        let mut words = vec!["ccc", "--db", db];
        words.extend_from_slice(rest);
        complete(&words, &[])
    };

    assert_eq!(with_db(&["ls", ""]), ["@types/react", "app"]);
    assert_eq!(with_db(&["inspect", "a"]), ["app"]);
    assert_eq!(with_db(&["ls", "@ty"]), ["@types/react"]);
    assert_eq!(with_db(&["rm", "app@"]), ["app@1.0.0", "app@1.1.0"]);
    assert_eq!(with_db(&["ls", "@types/react@"]), ["@types/react@18.3.3"]);
    assert_eq!(
        with_db(&["cat", "app@1.0.0/js/"]),
        [
            "app@1.0.0/js/a*b.js",
            "app@1.0.0/js/app.js",
            "app@1.0.0/js/util.js"
        ]
    );
    assert_eq!(
        with_db(&["cat", "@types/react@18.3.3/"]),
        ["@types/react@18.3.3/index.d.ts"]
    );
    // diff takes two versions, rm any number; ls one.
    assert_eq!(with_db(&["diff", "app@1.0.0", "app@1.1"]), ["app@1.1.0"]);
    assert_eq!(with_db(&["rm", "app@1.0.0", "app@1.1"]), ["app@1.1.0"]);
    assert!(!with_db(&["ls", "app", ""]).contains(&"app".to_string()));
    // An option's value is the option's, and a new version is not listed.
    assert!(!with_db(&["ls", "--limit", ""]).contains(&"app".to_string()));
    assert!(!with_db(&["rm", "app@1.0.0", "--purge", ""]).contains(&"app".to_string()));
    assert_eq!(with_db(&["rm", "--purge", "u", "app@1.1"]), ["app@1.1.0"]);
    assert!(!with_db(&["publish", ""]).contains(&"app".to_string()));
    assert!(!with_db(&["tag", ""]).contains(&"app".to_string()));
    // Nested commands, and the catalog named by the environment.
    assert_eq!(
        complete(&["ccc", "tag", "add", "app@1.0"], &[("CCC_DB_PATH", db)]),
        ["app@1.0.0"]
    );
    // No catalog there: nothing from it, and no error on the terminal.
    let none = ws.path().join("none.db");
    let none = none.to_str().expect("UTF-8 path");
    assert!(complete(&["ccc", "--db", none, "ls", "a"], &[]).is_empty());
    assert!(
        !ws.path().join("none.db").exists(),
        "completion created nothing"
    );
}

#[test]
fn bash_completion_offers_the_forms_of_causal_load() {
    assert_eq!(
        complete(&["ccc", "causal", "--load", ""], &[]),
        ["builtin:8", "external"]
    );
}
