//! `ccc generate` (hidden): shell completions into `completions/` and one
//! man page per subcommand into `man/`, from the clap definitions. The files
//! are committed; a test renders them in memory and fails when they are
//! stale.

use crate::cli::{Cli, GenerateArgs};
use crate::error::{Error, Result};
use clap::CommandFactory;
use clap_complete::{Generator, Shell};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

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
        let mut cmd = Cli::command();
        let name = shell.file_name("ccc");
        let mut out = Vec::new();
        clap_complete::generate(shell, &mut cmd, "ccc", &mut out);
        files.push((Path::new("completions").join(name), out));
    }
    let mut cmd = Cli::command();
    cmd.build();
    files.push((Path::new("man").join("ccc.1"), man_page(&cmd)?));
    for sub in cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
    {
        let name = format!("ccc-{}", sub.get_name());
        let page = sub.clone().name(name.clone()).display_name(name.clone());
        files.push((Path::new("man").join(format!("{name}.1")), man_page(&page)?));
    }
    Ok(files)
}

fn man_page(cmd: &clap::Command) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    clap_mangen::Man::new(cmd.clone())
        .render(&mut out)
        .map_err(|e| Error::io("man page", e))?;
    Ok(out)
}

pub fn run(args: GenerateArgs) -> Result<ExitCode> {
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
