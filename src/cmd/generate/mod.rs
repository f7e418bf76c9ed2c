//! `ccc generate` (hidden): shell completions into `completions/` and one
//! man page per subcommand into `man/`, from the clap definitions. The files
//! are committed; a test renders them in memory and fails when they are
//! stale.
//!
//! Both describe `Cli<Command>`, the public commands only: clap_complete
//! lists hidden subcommands too, so `generate` is not part of that command
//! at all (see [`crate::cli::Invocation`]). The man pages follow
//! man-pages(7) where clap_mangen does not:
//!
//! - no page and no SUBCOMMANDS entry for clap's `help` pseudo-subcommand
//!   (`ccc help serve` is `ccc serve --help`; there is no `ccc-help(1)`);
//! - the SYNOPSIS names each option's value (`[--db <FILE>]`), where
//!   clap_mangen writes a bare `[--db]`;
//! - an ENVIRONMENT section lists every variable the page's command reads:
//!   the `env` fallbacks of its arguments, and for `ccc(1)` all of them
//!   plus [`OTHER_ENV`];
//! - EXIT STATUS, EXAMPLES and SEE ALSO come from `pages`.
//!
//! The bash completion also offers the catalog's names where an argument
//! names a package, a version or a file (`catalog_names`).

use crate::cli::{Cli, Command, GenerateArgs};

mod catalog_names;
mod pages;

use crate::error::{Error, Result};
use clap::{Arg, ArgAction, CommandFactory};
use clap_complete::{Generator, Shell};
use clap_mangen::roff::{Inline, Roff, bold, italic, roman};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Variables ccc reads other than through a clap `env` fallback, with what
/// they do. Code that reads one directly must list it here; the man page
/// test fails for a `CCC_*` name in `src/` that no page documents.
/// `CCC_TOKEN` is no flag's fallback on purpose: a flag's value shows in
/// `ps`, so `--to` takes the token from it or from `--token-file` only.
pub const OTHER_ENV: &[(&str, &str)] = &[(
    "CCC_TOKEN",
    "The token that publish, tag and rm send with --to (made by `ccc token create`), unless --token-file names a file holding it",
)];

/// Every generated file: its path relative to the repository root and its
/// contents.
pub fn render() -> Result<Vec<(PathBuf, Vec<u8>)>> {
    let mut files = Vec::new();
    for shell in [
        Shell::Bash,
        Shell::Zsh,
        Shell::Fish,
        Shell::Elvish,
        Shell::PowerShell,
    ] {
        let mut cmd = public_command();
        let name = shell.file_name("ccc");
        let mut out = Vec::new();
        clap_complete::generate(shell, &mut cmd, "ccc", &mut out);
        if shell == Shell::Bash {
            cmd.build();
            let script = String::from_utf8_lossy(&out);
            out = catalog_names::add_to_bash(&script, &cmd)
                .map_err(Error::Internal)?
                .into_bytes();
        }
        files.push((Path::new("completions").join(name), out));
    }
    // `help` is clap's alias of `--help`, not a command with a page.
    let mut cmd = public_command().disable_help_subcommand(true);
    cmd.build();
    let everything = environment(&cmd, OTHER_ENV);
    files.push((Path::new("man").join("ccc.1"), man_page(&cmd, &everything)?));
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = format!("ccc-{}", sub.get_name());
        let page = sub.clone().name(name.clone()).display_name(name.clone());
        let env = environment(&page, &[]);
        files.push((
            Path::new("man").join(format!("{name}.1")),
            man_page(&page, &env)?,
        ));
    }
    Ok(files)
}

/// The command line the generated files describe: every public command,
/// with `help` but without the hidden `generate`.
pub fn public_command() -> clap::Command {
    Cli::<Command>::command()
}

/// One variable of an ENVIRONMENT section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EnvVar {
    pub name: String,
    /// What it sets, as a sentence.
    pub meaning: String,
    /// The option it is the default of, when it comes from one.
    pub option: Option<String>,
    /// The subcommands that read it; empty when every command does or when
    /// the page is one command's own.
    pub commands: Vec<String>,
}

/// The variables `cmd` reads, by name: its arguments' `env` fallbacks, its
/// subcommands' (each naming the subcommands that read it), and `other`
/// (name, meaning). `cmd` must be built, so that global arguments have
/// reached the subcommands.
pub(crate) fn environment(cmd: &clap::Command, other: &[(&str, &str)]) -> Vec<EnvVar> {
    let mut vars: BTreeMap<String, EnvVar> = BTreeMap::new();
    let mut add = |arg: &Arg, command: Option<&str>| {
        let Some(name) = arg.get_env().filter(|_| !arg.is_hide_env_set()) else {
            return;
        };
        let name = name.to_string_lossy().into_owned();
        let var = vars.entry(name.clone()).or_insert_with(|| EnvVar {
            name,
            meaning: arg.get_help().map(sentence).unwrap_or_default(),
            option: arg.get_long().map(|l| format!("--{l}")),
            commands: Vec::new(),
        });
        if let Some(command) = command.filter(|_| !arg.is_global_set()) {
            var.commands.push(command.to_string());
        }
    };
    for arg in cmd.get_arguments() {
        add(arg, None);
    }
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        for arg in sub.get_arguments() {
            add(arg, Some(sub.get_name()));
        }
    }
    for (name, meaning) in other {
        vars.entry(name.to_string()).or_insert_with(|| EnvVar {
            name: name.to_string(),
            meaning: sentence(meaning),
            option: None,
            commands: Vec::new(),
        });
    }
    vars.into_values().collect()
}

/// A help line as a sentence: clap drops the final period.
fn sentence(help: impl std::fmt::Display) -> String {
    let text = help.to_string();
    if text.ends_with('.') {
        text
    } else {
        format!("{text}.")
    }
}

/// clap_mangen's page, with the synopsis and the ENVIRONMENT section made
/// here (see the module doc).
fn man_page(cmd: &clap::Command, env: &[EnvVar]) -> Result<Vec<u8>> {
    let man = clap_mangen::Man::new(cmd.clone());
    // Rendering into memory fails only through a bug.
    let failed = |e: std::io::Error| {
        Error::Internal(format!(
            "cannot render the man page of {}: {e}",
            cmd.get_name()
        ))
    };
    let mut out = Vec::new();
    man.render_title(&mut out).map_err(failed)?;
    let mut section = |render: &dyn Fn(&mut Vec<u8>) -> std::io::Result<()>| {
        let mut buf = Vec::new();
        render(&mut buf)?;
        // Each section clap_mangen renders repeats the page's preamble.
        let preamble = Roff::new().render();
        out.extend_from_slice(buf.strip_prefix(preamble.as_bytes()).unwrap_or(&buf));
        Ok(())
    };
    section(&|w| man.render_name_section(w)).map_err(failed)?;
    section(&|w| synopsis(cmd).to_writer(w)).map_err(failed)?;
    section(&|w| man.render_description_section(w)).map_err(failed)?;
    if cmd.get_arguments().any(|a| !a.is_hide_set()) {
        section(&|w| man.render_options_section(w)).map_err(failed)?;
    }
    if cmd.get_subcommands().any(|s| !s.is_hide_set()) {
        section(&|w| man.render_subcommands_section(w)).map_err(failed)?;
    }
    if !env.is_empty() {
        section(&|w| environment_section(env).to_writer(w)).map_err(failed)?;
    }
    if cmd.get_after_long_help().is_some() || cmd.get_after_help().is_some() {
        section(&|w| man.render_extra_section(w)).map_err(failed)?;
    }
    let command = cmd
        .get_name()
        .strip_prefix("ccc-")
        .unwrap_or(cmd.get_name());
    if let Some(page) = pages::page(command) {
        section(&|w| pages::sections(page).to_writer(w)).map_err(failed)?;
    }
    if cmd.get_version().is_some() || cmd.get_long_version().is_some() {
        section(&|w| man.render_version_section(w)).map_err(failed)?;
    }
    Ok(out)
}

/// `ccc serve [--bind <ADDR>] ... [-h|--help]`: literal parts bold, the
/// parts a user replaces in italics, as man-pages(7) asks.
fn synopsis(cmd: &clap::Command) -> Roff {
    let mut line = vec![bold(cmd.get_bin_name().unwrap_or(cmd.get_name()))];
    let mut options: Vec<&Arg> = cmd
        .get_arguments()
        .filter(|a| !a.is_hide_set() && !a.is_positional())
        .collect();
    options.sort_by_key(|a| (a.get_display_order(), a.get_long().unwrap_or_default()));
    for arg in options {
        line.push(roman(" "));
        line.extend(synopsis_option(arg));
    }
    for arg in cmd.get_positionals().filter(|a| !a.is_hide_set()) {
        let (open, close) = if arg.is_required_set() {
            ("<", ">")
        } else {
            ("[", "]")
        };
        line.push(roman(" "));
        line.push(italic(format!("{open}{}{close}", value_names(arg))));
        if repeats(arg) {
            line.push(roman("..."));
        }
    }
    if cmd.get_subcommands().any(|s| !s.is_hide_set()) {
        line.push(roman(" "));
        line.push(italic("<COMMAND>"));
    }
    let mut roff = Roff::new();
    roff.control("SH", ["SYNOPSIS"]).text(line);
    roff
}

/// `[-j|--jobs <N>]`, `[--exclude <GLOB>]...`, `[--ledger [<LEVEL>]]`.
fn synopsis_option(arg: &Arg) -> Vec<Inline> {
    let mut parts = Vec::new();
    let optional = !arg.is_required_set();
    if optional {
        parts.push(roman("["));
    }
    match (arg.get_short(), arg.get_long()) {
        (Some(short), Some(long)) => {
            parts.push(bold(format!("-{short}")));
            parts.push(roman("|"));
            parts.push(bold(format!("--{long}")));
        }
        (Some(short), None) => parts.push(bold(format!("-{short}"))),
        (None, Some(long)) => parts.push(bold(format!("--{long}"))),
        (None, None) => {}
    }
    if let Some(range) = arg.get_num_args().filter(|r| r.takes_values()) {
        let value = format!("<{}>", value_names(arg));
        if range.min_values() == 0 {
            parts.push(roman(" ["));
            parts.push(italic(value));
            parts.push(roman("]"));
        } else {
            parts.push(roman(" "));
            parts.push(italic(value));
        }
    }
    if optional {
        parts.push(roman("]"));
    }
    if repeats(arg) {
        parts.push(roman("..."));
    }
    parts
}

/// The value names clap shows in `--help`: the declared ones, or the
/// argument's id in capitals.
fn value_names(arg: &Arg) -> String {
    match arg.get_value_names() {
        Some(names) => names
            .iter()
            .map(|n| n.as_str())
            .collect::<Vec<_>>()
            .join(" "),
        None => arg.get_id().as_str().to_uppercase(),
    }
}

/// Whether an argument may be given more than once.
fn repeats(arg: &Arg) -> bool {
    matches!(arg.get_action(), ArgAction::Append | ArgAction::Count)
        || arg.get_num_args().is_some_and(|r| r.max_values() > 1)
}

fn environment_section(vars: &[EnvVar]) -> Roff {
    let mut roff = Roff::new();
    roff.control("SH", ["ENVIRONMENT"]);
    for var in vars {
        roff.control("TP", []).text([bold(var.name.as_str())]);
        let mut text = vec![roman(format!("{} ", var.meaning))];
        if let Some(option) = &var.option {
            text.push(roman("Used when "));
            text.push(bold(option.as_str()));
            text.push(roman(" is not given"));
            text.push(roman(match var.commands.as_slice() {
                [] => ".".to_string(),
                commands => format!(" ({}).", commands.join(", ")),
            }));
        }
        roff.text(text);
    }
    roff
}

pub(crate) fn run(args: GenerateArgs) -> Result<ExitCode> {
    for (rel, contents) in render()? {
        let path = args.out.join(&rel);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        }
        std::fs::write(&path, contents).map_err(|e| Error::io(&path, e))?;
        println!("wrote {}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}
