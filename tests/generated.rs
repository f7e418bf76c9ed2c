//! The committed completions and man pages match what the clap definitions
//! generate, and say what users need: no hidden command, no page for
//! `help`, value names in the synopsis, every `CCC_*` variable documented,
//! no flag named in a description that does not exist.
//! `CCC_BLESS=1 cargo test --locked --test main generated` rewrites them.

use crate::util::{Workspace, repo_root};
use std::collections::BTreeSet;
use std::path::PathBuf;

/// The generated files as committed, checked fresh first.
fn committed() -> Vec<(PathBuf, String)> {
    let bless = std::env::var_os("CCC_BLESS").is_some_and(|v| v == "1");
    let mut stale = Vec::new();
    let mut files = Vec::new();
    for (rel, want) in ccc::testing::generate::render().expect("render") {
        let path = repo_root().join(&rel);
        let have = std::fs::read(&path).unwrap_or_default();
        if have != want {
            if bless {
                std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
                std::fs::write(&path, &want).expect("write");
            } else {
                stale.push(rel.display().to_string());
            }
        }
        files.push((rel, String::from_utf8(want).expect("UTF-8")));
    }
    assert!(
        stale.is_empty(),
        "stale generated files: {stale:?}\nrun `CCC_BLESS=1 cargo test --locked --test main generated` and commit the result"
    );
    files
}

fn man_pages() -> Vec<(String, String)> {
    committed()
        .into_iter()
        .filter(|(rel, _)| rel.starts_with("man"))
        .map(|(rel, text)| (rel.display().to_string(), text))
        .collect()
}

fn page<'a>(pages: &'a [(String, String)], rel: &str) -> &'a str {
    &pages
        .iter()
        .find(|(r, _)| r == rel)
        .unwrap_or_else(|| panic!("no {rel}"))
        .1
}

/// The text of one `.SH` section, with roff's font changes and escapes
/// removed (`\fB\-\-db\fR` -> `--db`).
fn section(page: &str, name: &str) -> Option<String> {
    let start = page.find(&format!("\n.SH {name}\n"))? + name.len() + 5;
    let body = &page[start..];
    let body = &body[..body.find("\n.SH ").unwrap_or(body.len())];
    Some(plain(body))
}

fn plain(roff: &str) -> String {
    roff.replace("\\fB", "")
        .replace("\\fI", "")
        .replace("\\fR", "")
        .replace("\\-", "-")
        .replace("\\*(Aq", "'")
}

/// `CCC_*` names in a text.
fn ccc_vars(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    // ccc's own, and npm's that it reads as npm does (`npm_config_registry`).
    for prefix in ["CCC_", "npm_config_"] {
        let mut rest = text;
        while let Some(at) = rest.find(prefix) {
            let tail = &rest[at..];
            let end = tail
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(tail.len());
            if end > prefix.len() {
                found.insert(tail[..end].to_string());
            }
            rest = &tail[end..];
        }
    }
    found
}

/// Every subcommand page's name and its clap command.
fn pages_and_commands() -> Vec<(String, clap::Command)> {
    let mut cmd = ccc::testing::generate::public_command();
    cmd.build();
    let mut out = vec![("man/ccc.1".to_string(), cmd.clone())];
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        if sub.get_name() != "help" {
            out.push((format!("man/ccc-{}.1", sub.get_name()), sub.clone()));
        }
    }
    out
}

#[test]
fn completions_and_man_pages_are_fresh() {
    let rendered: BTreeSet<PathBuf> = committed().into_iter().map(|(rel, _)| rel).collect();
    // Nothing else lies in the generated folders (a page left over from a
    // removed command would still be installed).
    for dir in ["completions", "man"] {
        for entry in std::fs::read_dir(repo_root().join(dir)).expect(dir) {
            let rel = PathBuf::from(dir).join(entry.expect("entry").file_name());
            assert!(
                rendered.contains(&rel),
                "{} is not generated",
                rel.display()
            );
        }
    }
}

#[test]
fn completions_leave_out_the_hidden_generate_command() {
    let completions: Vec<_> = committed()
        .into_iter()
        .filter(|(rel, _)| rel.starts_with("completions"))
        .collect();
    assert_eq!(completions.len(), 5, "bash, zsh, fish, elvish, powershell");
    for (rel, text) in completions {
        assert!(text.contains("serve"), "{}", rel.display());
        assert!(
            !text.contains("generate"),
            "{} offers `generate`",
            rel.display()
        );
    }
    // The binary still runs it, and writes what the test renders.
    let ws = Workspace::new();
    let out = ws.path().join("out");
    ws.ok(&["generate", "--out", out.to_str().expect("UTF-8 temp path")]);
    for (rel, want) in ccc::testing::generate::render().expect("render") {
        let have = std::fs::read(out.join(&rel)).expect("generated file");
        assert!(have == want, "{} differs", rel.display());
    }
}

#[test]
fn man_pages_have_no_help_or_generate_page() {
    for (rel, text) in man_pages() {
        for name in ["ccc-help", "ccc-generate"] {
            assert!(!rel.contains(name), "{rel}");
            assert!(!plain(&text).contains(name), "{rel} mentions {name}");
        }
    }
    let list = section(page(&man_pages(), "man/ccc.1"), "SUBCOMMANDS").expect("SUBCOMMANDS");
    assert!(list.contains("ccc-serve(1)"), "{list}");
}

#[test]
fn synopses_name_every_value() {
    let pages = man_pages();
    for (rel, cmd) in pages_and_commands() {
        let synopsis = section(page(&pages, &rel), "SYNOPSIS").expect("SYNOPSIS");
        for arg in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
            let Some(long) = arg.get_long() else { continue };
            let values = arg.get_num_args().expect("built");
            let name = arg.get_value_names().map_or_else(
                || arg.get_id().as_str().to_uppercase(),
                |names| names[0].to_string(),
            );
            let want = match (values.takes_values(), values.min_values()) {
                (false, _) => format!("--{long}]"),
                (true, 0) => format!("--{long} [<{name}>]"),
                (true, _) => format!("--{long} <{name}>"),
            };
            assert!(synopsis.contains(&want), "{rel}: no `{want}` in {synopsis}");
        }
    }
    let top = section(page(&pages, "man/ccc.1"), "SYNOPSIS").expect("SYNOPSIS");
    assert_eq!(
        top.trim(),
        "ccc [--db <FILE>] [-h|--help] [-V|--version] <COMMAND>"
    );
    let serve = section(page(&pages, "man/ccc-serve.1"), "SYNOPSIS").expect("SYNOPSIS");
    for part in [
        "[--port <PORT>]",
        "[--cache-bytes <SIZE>]",
        "[--access-log [<PATH>]]",
    ] {
        assert!(serve.contains(part), "{serve}");
    }
}

#[test]
fn every_ccc_variable_is_in_an_environment_section() {
    let pages = man_pages();
    // Each page lists exactly the variables its command's flags read.
    for (rel, cmd) in pages_and_commands() {
        let mut want: BTreeSet<String> = BTreeSet::new();
        let mut commands = vec![&cmd];
        commands.extend(cmd.get_subcommands());
        for c in commands {
            for arg in c.get_arguments() {
                if let Some(env) = arg.get_env() {
                    want.insert(env.to_string_lossy().into_owned());
                }
            }
        }
        if rel == "man/ccc.1" {
            want.extend(
                ccc::testing::generate::OTHER_ENV
                    .iter()
                    .map(|(n, _)| n.to_string()),
            );
        }
        let listed =
            section(page(&pages, &rel), "ENVIRONMENT").map_or_else(BTreeSet::new, |s| ccc_vars(&s));
        assert_eq!(listed, want, "{rel}");
    }
    let top = section(page(&pages, "man/ccc.1"), "ENVIRONMENT").expect("ENVIRONMENT");
    assert!(
        top.contains("CCC_PORT\nPort to listen on; 0 picks a free one"),
        "{top}"
    );
    assert!(
        top.contains("Used when --port is not given (serve, causal)."),
        "{top}"
    );
    assert!(top.contains("Used when --db is not given."), "{top}");

    // Every CCC_* name the program's source mentions is documented there.
    let documented = ccc_vars(&top);
    for entry in walkdir::WalkDir::new(repo_root().join("src")) {
        let entry = entry.expect("walk src");
        if entry.path().extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(entry.path()).expect("read source");
            for var in ccc_vars(&text) {
                assert!(
                    documented.contains(&var),
                    "{var} is read in {} but no man page documents it; \
                     give it a clap `env` or add it to generate::OTHER_ENV",
                    entry.path().display()
                );
            }
        }
    }
}

/// The `--flag`s a command's description names are flags it takes, or
/// the named command's (`ccc serve --max-lag`): a renamed flag left behind
/// in the prose would send users to an error.
#[test]
fn descriptions_name_only_flags_that_exist() {
    let commands = pages_and_commands();
    let flags_of = |cmd: &clap::Command| -> BTreeSet<String> {
        cmd.get_arguments()
            .filter_map(|a| a.get_long())
            .map(|l| format!("--{l}"))
            .collect()
    };
    let mut wrong = Vec::new();
    for (page, cmd) in &commands {
        let about = [cmd.get_about(), cmd.get_long_about()]
            .into_iter()
            .flatten()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .join(" ");
        let words: Vec<&str> = about
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .filter(|w| !w.is_empty())
            .collect();
        for (i, word) in words.iter().enumerate() {
            if !word.starts_with("--") || word.len() <= 2 {
                continue;
            }
            // `ccc NAME --flag` names another command's flag.
            let named = i
                .checked_sub(2)
                .filter(|&j| words[j] == "ccc")
                .and_then(|j| commands.iter().find(|(_, c)| c.get_name() == words[j + 1]));
            let flags = flags_of(named.map_or(cmd, |(_, c)| c));
            if !flags.contains(*word) {
                wrong.push(format!("{page}: {word}"));
            }
        }
    }
    assert!(wrong.is_empty(), "flags that do not exist: {wrong:?}");
}
