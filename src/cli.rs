//! The command line's top: the global flags and the list of subcommands
//! (clap derive). Each subcommand's flags sit beside its command, in
//! `cmd/NAME.rs` (`PublishArgs` in `cmd/publish.rs`), as cargo keeps
//! them; what several share (flag groups, value parsers, the check of
//! flags that cannot go together) is in `cmd/args.rs`. The doc comments
//! are the help text; the same definitions generate the shell completions
//! and man pages (`ccc generate`). Nothing here does work: `crate::run`
//! resolves these into calls of the command modules.
//!
//! Every value a flag or argument takes is checked while parsing, by a
//! value parser, so that a malformed command line exits 2 with clap's
//! usage message, as clap's own errors do. Out-of-range numbers say what
//! is allowed in words.

use crate::cmd::args::{CheckArgs, Checked};
use crate::cmd::{
    audit::AuditArgs, backup::BackupArgs, cat::CatArgs, causal::CausalArgs, check::ReferencesArgs,
    deltas::DeltasArgs, diff::DiffArgs, export::ExportArgs, follow::FollowArgs, gc::GcArgs,
    importmap::ImportmapArgs, inspect::InspectArgs, ls::LsArgs, publish::PublishArgs,
    recompress::RecompressArgs, rm::RmArgs, serve::ServeArgs, site::SiteArgs, tag::TagArgs,
    token::TokenArgs, verify::VerifyArgs,
};
use clap::{Args, FromArgMatches, Parser, Subcommand};
use std::path::PathBuf;

/// Asset catalog with a built-in CDN server.
///
/// ccc stores versioned front-end builds (`dist/` folders) in one SQLite
/// file, gzipped and deduplicated by content, and serves them over HTTP.
//
// `C` is the set of subcommands (a plain comment: doc comments here are the
// help text): the binary parses `Invocation`, the default; completions and
// man pages are made from `Cli<Command>`, which has no `generate` at all,
// since clap_complete lists hidden subcommands too.
#[derive(Debug, Parser)]
#[command(name = "ccc", version, propagate_version = true, max_term_width = 100)]
pub struct Cli<C: Subcommand = Invocation> {
    /// The catalog file.
    #[arg(
        long,
        global = true,
        env = "CCC_DB_PATH",
        default_value = "cdn.db",
        value_name = "FILE"
    )]
    pub(crate) db: PathBuf,

    #[command(subcommand)]
    pub(crate) command: C,
}

impl Cli<Invocation> {
    /// Parses the process's arguments, exiting with clap's message on a
    /// wrong command line. Every command's usage line is its own plain one
    /// (`ccc publish [OPTIONS] <[PKG@VERSION] SOURCE>...`): clap would
    /// otherwise add the flags given to the usage of an error
    /// (`ccc publish --tag <TAG> <...>` for a missing SOURCE), which reads
    /// as if `--tag` were required.
    pub fn parse_args() -> Self {
        use clap::CommandFactory;
        let mut command = Self::command();
        command.build();
        plain_usage(&mut command);
        let matches = command.get_matches();
        Self::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
    }
}

/// Sets every subcommand's usage to the one clap renders for it alone.
fn plain_usage(command: &mut clap::Command) {
    for sub in command.get_subcommands_mut() {
        let rendered = sub.render_usage().to_string();
        let usage = rendered
            .strip_prefix("Usage: ")
            .unwrap_or(&rendered)
            .to_string();
        let taken = std::mem::replace(sub, clap::Command::new("-"));
        *sub = taken.override_usage(usage);
        plain_usage(sub);
    }
}

/// Everything the binary accepts: the commands users run, and the hidden
/// one that writes completions and man pages. Parsed once per process, so
/// the size of the larger variant costs nothing worth a box.
#[derive(Debug, Subcommand)]
#[allow(clippy::large_enum_variant)]
pub enum Invocation {
    #[command(flatten)]
    Public(Command),
    #[command(hide = true)]
    Generate(GenerateArgs),
}

/// The commands users run, as completions and man pages describe them.
#[derive(Debug, Subcommand)]
pub enum Command {
    Publish(Checked<PublishArgs>),
    #[command(visible_alias = "list")]
    Ls(LsArgs),
    Inspect(InspectArgs),
    Diff(DiffArgs),
    Cat(CatArgs),
    Tag(TagArgs),
    Site(SiteArgs),
    Rm(Checked<RmArgs>),
    Gc(Checked<GcArgs>),
    Deltas(DeltasArgs),
    Recompress(RecompressArgs),
    Verify(VerifyArgs),
    Check(ReferencesArgs),
    Importmap(ImportmapArgs),
    Backup(BackupArgs),
    Follow(FollowArgs),
    Serve(Box<ServeArgs>),
    Token(TokenArgs),
    Audit(AuditArgs),
    Export(ExportArgs),
    Causal(Box<Checked<CausalArgs>>),
}

impl<T: FromArgMatches + CheckArgs> FromArgMatches for Checked<T> {
    fn from_arg_matches(matches: &clap::ArgMatches) -> Result<Self, clap::Error> {
        let args = T::from_arg_matches(matches)?;
        args.check().map_err(conflict::<T>)?;
        Ok(Checked(args))
    }

    fn update_from_arg_matches(&mut self, matches: &clap::ArgMatches) -> Result<(), clap::Error> {
        self.0.update_from_arg_matches(matches)?;
        self.0.check().map_err(conflict::<T>)
    }
}

/// A broken rule as clap's error, with the usage of the command it belongs
/// to (`ccc gc [OPTIONS]`). clap would show the top-level usage instead,
/// since the rule is checked outside its parser; a message formatted here
/// keeps its usage when clap formats the error again.
fn conflict<T: CheckArgs>(why: String) -> clap::Error {
    use clap::CommandFactory;
    let error = clap::Error::raw(clap::error::ErrorKind::ArgumentConflict, why);
    let mut cli = Cli::<Command>::command();
    cli.build();
    match cli.find_subcommand_mut(T::COMMAND) {
        Some(command) => error.format(command),
        None => error,
    }
}

/// Write shell completions and man pages (for ccc's own maintainers).
#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// Directory that holds `completions/` and `man/`.
    #[arg(long, default_value = ".", value_name = "DIR")]
    pub(crate) out: PathBuf,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::args::*;
    use crate::cmd::causal::LoadArg;
    use clap::CommandFactory;
    use std::time::Duration;

    #[test]
    fn clap_definitions_are_consistent() {
        Cli::<Invocation>::command().debug_assert();
        Cli::<Command>::command().debug_assert();
    }

    #[test]
    fn broken_rules_show_their_own_command_s_usage() {
        let command = Cli::<Command>::command();
        for name in [
            PublishArgs::COMMAND,
            RmArgs::COMMAND,
            GcArgs::COMMAND,
            CausalArgs::COMMAND,
        ] {
            assert!(command.find_subcommand(name).is_some(), "{name}");
        }
        let error = Cli::<Invocation>::try_parse_from(["ccc", "gc", "--keep", "0"])
            .expect_err("--keep 0 alone is refused")
            .to_string();
        assert!(error.contains("Usage: ccc gc [OPTIONS]"), "{error}");
    }

    #[test]
    fn generate_is_parsed_but_not_public() {
        let parsed = Cli::<Invocation>::try_parse_from(["ccc", "generate", "--out", "x"]);
        assert!(matches!(
            parsed,
            Ok(Cli {
                command: Invocation::Generate(_),
                ..
            })
        ));
        let public = Cli::<Command>::command();
        assert!(public.find_subcommand("generate").is_none());
        assert!(public.find_subcommand("serve").is_some());
    }

    #[test]
    fn out_of_range_numbers_are_refused_in_words() {
        assert_eq!(parse_min_delta("5"), Ok(5));
        assert_eq!(
            parse_min_delta("1").unwrap_err(),
            "must be at least 5 (Coz's viewer plots no experiment with fewer)"
        );
        assert_eq!(parse_rounds("0").unwrap_err(), "must be at least 1");
        assert_eq!(parse_rounds("x").unwrap_err(), "`x` is not a whole number");
        assert_eq!(
            parse_rounds("-1").unwrap_err(),
            "`-1` is not a whole number"
        );
        let huge = "99999999999999999999999";
        for error in [
            parse_rounds(huge).unwrap_err(),
            parse_count(huge).unwrap_err(),
            parse_seed(huge).unwrap_err(),
        ] {
            assert_eq!(error, format!("`{huge}` is too large"));
        }
        assert_eq!(parse_count("0"), Ok(0));
        assert_eq!(
            parse_port("99999").unwrap_err(),
            "a port is a whole number from 0 to 65535"
        );
        assert_eq!(parse_port("0"), Ok(0));
        assert_eq!(
            parse_speedup("150").unwrap_err(),
            "a speedup is a whole number from 0 to 100 (a percentage)"
        );
        assert_eq!(
            parse_level("0").unwrap_err(),
            "the gzip level is a whole number from 1 to 9"
        );
        assert!(
            parse_positive_duration("0s")
                .unwrap_err()
                .contains("longer than zero")
        );
        assert_eq!(parse_positive_duration("1ms"), Ok(Duration::from_millis(1)));
    }

    #[test]
    fn load_specs() {
        assert_eq!("external".parse::<LoadArg>(), Ok(LoadArg::External));
        assert_eq!("builtin:8".parse::<LoadArg>(), Ok(LoadArg::Builtin(8)));
        assert_eq!(LoadArg::Builtin(8).to_string(), "builtin:8");
        assert!(
            "builtin:0"
                .parse::<LoadArg>()
                .unwrap_err()
                .contains("at least 1 client")
        );
        assert!("builtin:x".parse::<LoadArg>().unwrap_err().contains("`x`"));
        assert!("wrk".parse::<LoadArg>().unwrap_err().contains("builtin:N"));
    }

    #[test]
    fn export_takes_an_optional_target_before_the_directory() {
        let parse = |args: &[&str]| {
            let mut argv = vec!["ccc", "export"];
            argv.extend_from_slice(args);
            match Cli::<Command>::try_parse_from(argv).map(|c| c.command) {
                Ok(Command::Export(a)) => Ok((a.target.map(|t| t.package), a.dir)),
                Ok(_) => unreachable!("export parses as export"),
                Err(e) => Err(e.kind()),
            }
        };
        assert_eq!(parse(&["out"]), Ok((None, PathBuf::from("out"))));
        assert_eq!(
            parse(&["app@1.0.0", "out"]),
            Ok((Some("app".into()), PathBuf::from("out")))
        );
        assert!(parse(&[]).is_err());
        assert!(parse(&["app", "out", "more"]).is_err());
        assert!(parse(&["@App/x", "out"]).is_err());
    }
}
