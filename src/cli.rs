//! Command-line definitions (clap derive). The doc comments are the help
//! text; the same definitions generate the shell completions and man pages
//! (`ccc generate`). Nothing here does work: `crate::run` resolves these into
//! calls of the command modules.
//!
//! Every value a flag or argument takes is checked here, by a value parser,
//! so that a malformed command line exits 2 with clap's usage message, as
//! clap's own errors do. Out-of-range numbers say what is allowed in words.

use crate::catalog::compression::{BrotliQuality, GzipLevel};
use crate::catalog::{archive, chunks, publish};
use crate::spec::{PackageVersion, Part, Selector, Target};
use crate::units::flag_size;
use clap::{Args, FromArgMatches, Parser, Subcommand};
use std::path::PathBuf;
use std::time::Duration;

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
    pub db: PathBuf,

    #[command(subcommand)]
    pub command: C,
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
    Rm(Checked<RmArgs>),
    Gc(Checked<GcArgs>),
    Deltas(DeltasArgs),
    Verify(VerifyArgs),
    Check(ReferencesArgs),
    Importmap(ImportmapArgs),
    Backup(BackupArgs),
    Follow(FollowArgs),
    Serve(ServeArgs),
    Token(TokenArgs),
    Audit(AuditArgs),
    Export(ExportArgs),
    Causal(Box<Checked<CausalArgs>>),
}

/// Publish a directory or a tar archive as PKG@VERSION, in one atomic
/// transaction.
///
/// SOURCE is a directory, a .tar or .tgz/.tar.gz file (told by its first
/// bytes, whatever its name), or `-` for either kind of archive on stdin.
/// As npm reads a tarball, an archive's top folder (`package/`, `react/`,
/// whatever its name) is stripped from every entry. Without
/// PKG@VERSION, the `name` and `version` of the package.json at SOURCE's
/// root are used. Every file is hashed (sha256); content the catalog
/// already holds is reused, new content is gzipped on all cores and kept
/// raw when gzip saves under 5%. Links are never followed (each is
/// reported); `.git/` and `.DS_Store` are always left out, and so are
/// catalogs: the one written to (with its -wal, -shm and -journal files,
/// under any name) and any other ccc catalog, each reported. An archive
/// entry named with `..`, an absolute path, a NUL byte or non-UTF-8 fails
/// the publish. A published version is immutable: publishing it again
/// fails unless --force.
///
/// Without --tag, `latest` moves to the version only when it is a release
/// newer than every other release of the package; --tag TAG points TAG at
/// it instead and leaves `latest` where it was (--tag latest moves
/// `latest` to it, whatever the version).
#[derive(Debug, Args)]
pub struct PublishArgs {
    /// Package and version, like `app@1.4.0` or `@scope/app@2.0.0-rc.1`
    /// (optional: package.json names them), then the directory or archive
    /// to publish (`-`: an archive on stdin).
    #[arg(value_name = "[PKG@VERSION] SOURCE", num_args = 1..=2, required = true)]
    pub args: Vec<PathBuf>,

    /// Leave out paths matching GLOB (relative to SOURCE's root; `*` crosses `/`).
    /// May be repeated. A matching directory is left out whole.
    #[arg(long, value_name = "GLOB", value_parser = parse_glob)]
    pub exclude: Vec<String>,

    /// Gzip level, 1 (fastest) to 9 (smallest).
    #[arg(long, default_value_t = GzipLevel::DEFAULT, value_parser = parse_level)]
    pub level: GzipLevel,

    /// Brotli quality, 1 (fastest) to 11 (smallest); 0 stores no brotli.
    /// A brotli stream is kept beside the gzip one when it is at least 5%
    /// smaller, and sent to clients that accept `br`.
    #[arg(long, value_name = "N", default_value_t = BrotliQuality::DEFAULT, value_parser = parse_brotli_quality)]
    pub brotli_quality: BrotliQuality,

    /// Replace the version if it exists, atomically (its dist-tags stay
    /// on it).
    #[arg(long)]
    pub force: bool,

    /// Point the dist-tag TAG (`next`, `beta`, or `latest`) at the version.
    #[arg(long, value_name = "TAG", value_parser = parse_tag)]
    pub tag: Option<String>,
    #[command(flatten)]
    pub purge: PurgeArgs,

    /// Do everything except commit, and report what would be stored.
    #[arg(long)]
    pub dry_run: bool,

    /// Refuse files larger than SIZE.
    #[arg(long, value_name = "SIZE", default_value = flag_size(publish::DEFAULT_MAX_FILE_SIZE), value_parser = parse_size)]
    pub max_file_size: u64,

    /// Store files of SIZE or more as they are, in 64 KiB chunks that
    /// publish, serve, cat and export read one at a time, instead of
    /// compressed whole: memory never holds such a file.
    #[arg(long, value_name = "SIZE", default_value = flag_size(chunks::CHUNKED_FROM), value_parser = parse_chunked_from)]
    pub chunked_from: u64,

    /// Refuse the version, publishing nothing, when a reference of its
    /// files is missing, matches a file only under another case, or
    /// leaves it (what `ccc check` reports).
    #[arg(long, conflicts_with = "no_check")]
    pub strict: bool,

    /// Do not read the references of scripts, stylesheets and pages.
    #[arg(long)]
    pub no_check: bool,

    /// Make no deltas. By default each script, stylesheet, JSON and wasm
    /// file is also coded against the same file (or hashed-name family) in
    /// the newest earlier version and the one `latest` named (dcb and
    /// dcz, RFC 9842), kept where clearly smaller than its brotli stream:
    /// a browser holding that version downloads only the change.
    #[arg(long)]
    pub no_deltas: bool,

    /// Refuse an archive whose tar stream, decompressed, is larger than
    /// SIZE.
    #[arg(long, value_name = "SIZE", default_value = flag_size(archive::DEFAULT_MAX_UNPACKED_SIZE), value_parser = parse_size)]
    pub max_unpacked_size: u64,

    /// Compression threads, at least 1 [default: one per core].
    #[arg(long, short = 'j', value_name = "N", value_parser = at_least_one)]
    pub jobs: Option<usize>,

    /// Give up after waiting DURATION for another ccc's lock on the
    /// catalog [default: wait as long as it takes, saying so after a
    /// second].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub wait: Option<std::time::Duration>,

    /// Refuse to create the catalog when --db names none (or an empty
    /// file), instead of creating it: for scripts and servers, where a
    /// missing catalog is a mistake to stop at, not a first publish.
    #[arg(
        long,
        env = "CCC_NO_CREATE",
        value_parser = clap::builder::BoolishValueParser::new(),
        action = clap::ArgAction::SetTrue
    )]
    pub no_create: bool,

    /// Print no progress and no summary.
    #[arg(long, short)]
    pub quiet: bool,

    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,

    /// With --to, the archive is sent to the server, which publishes it
    /// with its own settings (--level, --brotli-quality and the size
    /// limits are the server's); --force, --tag, --strict, --no-check and
    /// --dry-run are sent with it.
    #[command(flatten)]
    pub remote: RemoteArgs,
}

/// List packages, one package's versions, or one version's files.
///
/// Without an argument, packages with their number of versions, latest
/// version and stored size, by name. With PKG, its versions, newest first.
/// With PKG@VERSION, the files of that version, by path (VERSION may be
/// `latest` or a range such as `^1.2`). A table shows 100 rows unless
/// --limit says otherwise, and says how to see the next ones; --json lists
/// every row unless --limit is given.
#[derive(Debug, Args)]
pub struct LsArgs {
    /// What to list: nothing, PKG, or PKG@VERSION.
    #[arg(value_name = "PKG[@VERSION]", value_parser = parse_package_or_version)]
    pub target: Option<Target>,

    /// List at most N rows (0: all of them). Default: 100 in a table, all in JSON.
    #[arg(long, value_name = "N")]
    pub limit: Option<u64>,

    /// Skip the first N rows of the listing.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub offset: u64,

    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,

    /// Print names alone, one per line: the packages, a package's versions
    /// as PKG@VERSION (newest first), or a version's paths. For scripts and
    /// shell completion; all of them unless --limit is given.
    #[arg(long, conflicts_with = "json")]
    pub names: bool,
}

/// Show a version's sizes, compression and dedup, or one file in detail.
#[derive(Debug, Args)]
pub struct InspectArgs {
    /// A version, like `app@1.4.0`, or one of its files, `app@1.4.0/js/main.js`.
    #[arg(value_name = "PKG@VERSION[/PATH]", value_parser = parse_version_or_file)]
    pub target: Target,

    /// Print JSON instead of tables.
    #[arg(long)]
    pub json: bool,
}

impl PublishArgs {
    /// The `PKG@VERSION` given before SOURCE, if any.
    pub fn target(&self) -> Result<Option<PackageVersion>, String> {
        let [target, _] = self.args.as_slice() else {
            return Ok(None);
        };
        let input = target.to_string_lossy();
        PackageVersion::parse(&input).map(Some).map_err(|e| {
            format!(
                "invalid value '{input}' for '[PKG@VERSION]': {}",
                spec_error(e)
            )
        })
    }

    /// What to publish: a directory, an archive, or `-` for stdin.
    pub fn source(&self) -> &std::path::Path {
        self.args
            .last()
            .map_or(std::path::Path::new("-"), |p| p.as_path())
    }
}

impl CheckArgs for PublishArgs {
    const COMMAND: &str = "publish";

    fn check(&self) -> Result<(), String> {
        // `ccc publish app@1.0.0` forgot the source.
        if let [only] = self.args.as_slice()
            && !only.exists()
            && PackageVersion::parse(&only.to_string_lossy()).is_ok()
        {
            return Err(format!(
                "the SOURCE to publish is missing after '{}': a directory, a .tgz or .tar, \
                 or `-` for stdin",
                only.display()
            ));
        }
        // `ccc publish dist app@1.0.0`: the source came first.
        if let [first, second] = self.args.as_slice()
            && first.exists()
            && !second.exists()
            && PackageVersion::parse(&first.to_string_lossy()).is_err()
            && PackageVersion::parse(&second.to_string_lossy()).is_ok()
        {
            return Err(format!(
                "'{}' is a package version and '{}' a source: arguments swapped? \
                 usage: ccc publish PKG@VERSION SOURCE",
                second.display(),
                first.display()
            ));
        }
        if self.remote.to.is_some() && !self.purge.caches.is_empty() {
            return Err(
                "--purge purges from this machine after a local publish; with --to, purge \
                 from the server's side"
                    .into(),
            );
        }
        if !self.purge.caches.is_empty() && !self.force {
            return Err(
                "--purge purges the files --force replaces; a version published for the \
                 first time has nothing in any cache"
                    .into(),
            );
        }
        self.target().map(|_| ())
    }
}

/// Show the files added, removed and changed from one version to another.
///
/// Files are compared by content (sha256) without reading or decompressing
/// any of it: each file added, removed or changed is listed with its size
/// and stored size and their change (--json: both versions' sizes), then
/// the number of unchanged files. A
/// version may be `latest` or a range; the versions compared are named.
/// The table shows 100 files, as `ls` does, and says how to see the next
/// ones (--limit, --offset); the summary line counts them all.
/// Exits 0 whether or not the versions differ, like `git diff`.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The version to compare from, like `app@1.4.0`.
    #[arg(value_name = "PKG@VERSION", value_parser = parse_version)]
    pub from: Target,

    /// The version to compare to: `app@1.5.0`, `other@2.0.0`, or just
    /// `1.5.0` (`latest`, `next`, `^1`) for another version of the same
    /// package.
    #[arg(value_name = "[PKG@]VERSION", value_parser = parse_other_version)]
    pub to: OtherVersion,

    /// Show at most N files that differ (0: all of them). Default: 100 in
    /// a table, all in JSON.
    #[arg(long, value_name = "N")]
    pub limit: Option<u64>,

    /// Skip the first N files that differ, in path order.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub offset: u64,

    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// The second version `diff` compares.
#[derive(Debug, Clone)]
pub enum OtherVersion {
    /// A version of the first one's package: `1.5.0`, `latest`, `^1`.
    SamePackage(Selector),
    /// `PKG@VERSION`.
    Target(Target),
}

/// Write a file's original bytes to stdout.
#[derive(Debug, Args)]
pub struct CatArgs {
    /// The file, like `app@1.4.0/js/main.js`.
    #[arg(value_name = "PKG@VERSION/PATH", value_parser = parse_file)]
    pub target: Target,

    /// Write a gzip stream instead: the stored one, or for files stored raw,
    /// one made on the fly.
    #[arg(long)]
    pub gzip: bool,
}

/// Add, remove or list a package's dist-tags.
///
/// A dist-tag (`latest`, `next`, `beta`) names one version of a package:
/// `PKG@TAG` on the command line and /assets/PKG/TAG/... on the server
/// resolve to it. Tag names are npm's: letters, digits and `-_.!~*'()`,
/// never a version or a range. Without a `latest` tag, `latest` is the
/// newest release; a `latest` tag overrides that until removed or a newer
/// release is published without `ccc publish --tag`.
#[derive(Debug, Args)]
pub struct TagArgs {
    #[command(subcommand)]
    pub action: TagAction,
    #[command(flatten)]
    pub remote: RemoteArgs,
}

#[derive(Debug, Subcommand)]
pub enum TagAction {
    /// Point TAG at PKG@VERSION (moving it if it names another version).
    Add {
        /// The version, exact, like `app@2.0.0-rc.1`.
        #[arg(value_name = "PKG@VERSION", value_parser = parse_version_to_tag)]
        target: PackageVersion,
        /// The tag, like `next` or `latest`.
        #[arg(value_name = "TAG", value_parser = parse_tag)]
        tag: String,
    },
    /// Remove TAG from PKG (`latest` then is the newest release again).
    Rm {
        /// The package, like `app`.
        #[arg(value_name = "PKG", value_parser = parse_package)]
        package: String,
        /// The tag to remove.
        #[arg(value_name = "TAG", value_parser = parse_tag)]
        tag: String,
    },
    /// List PKG's tags, `latest` first, with the versions they name.
    Ls {
        /// The package, like `app`.
        #[arg(value_name = "PKG", value_parser = parse_package)]
        package: String,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
}

/// `--to` and what goes with it: a server's upload API instead of the
/// catalog file (`ccc serve --publish-api`).
#[derive(Debug, Clone, Args)]
pub struct RemoteArgs {
    /// Send the change to the `ccc serve --publish-api` at URL (like
    /// https://cdn.example.com) instead of writing the catalog file. The
    /// token comes from CCC_TOKEN or --token-file, never from the command
    /// line. Plain http:// is for a server on this machine only (loopback).
    #[arg(long, global = true, value_name = "URL", value_parser = parse_remote_url)]
    pub to: Option<url::Url>,

    /// With --to: read the token from FILE (its first line) instead of
    /// CCC_TOKEN.
    #[arg(long, global = true, value_name = "FILE", requires = "to")]
    pub token_file: Option<PathBuf>,

    /// With --to: check the server's certificate against the PEM
    /// certificates in FILE (a private CA) instead of the system's roots.
    #[arg(long, global = true, value_name = "FILE", requires = "to")]
    pub ca_file: Option<PathBuf>,
}

/// Make, list and revoke the tokens that may change the catalog over HTTP.
///
/// A token is given to CI (as CCC_TOKEN) for `ccc publish --to URL`
/// against a `ccc serve --publish-api` of this catalog. It is shown once,
/// when made: the catalog keeps only a hash of it, so replicas and backups
/// hold nothing a thief could use. Each token has scopes: ACTIONS:GLOBS,
/// where the actions are publish (a new version), replace (a version
/// published again, replacing it), tag (dist-tags), remove (rm), and
/// GLOBS are package names
/// where `*` stands for anything (`@team/*`, `app`, `*`); read-stats (a
/// restricted /_stats and /metrics) takes no package. A token with no
/// scope can do nothing.
#[derive(Debug, Args)]
pub struct TokenArgs {
    #[command(subcommand)]
    pub action: TokenAction,
}

#[derive(Debug, Subcommand)]
pub enum TokenAction {
    /// Make a token and print it, once, on stdout.
    ///
    /// Only a hash of it is kept, in the catalog; the catalog is made when
    /// there is none yet (a writer whose versions all come from CI).
    Create {
        /// A name for the token, like `ci-github` (letters, digits, `-_.`):
        /// the audit log records it, and revoke takes it.
        #[arg(value_name = "NAME")]
        name: String,
        /// What the token may do, as ACTIONS:GLOBS, like
        /// `publish,tag:@team/*` or `read-stats` (repeatable).
        #[arg(long, value_name = "SCOPE", value_parser = crate::catalog::tokens::parse_scope)]
        scope: Vec<crate::catalog::tokens::Scope>,
        /// How long the token lasts, like 90d or 1y; `never` for a token
        /// that does not expire.
        #[arg(long, value_name = "DURATION", default_value = "30d", value_parser = parse_expiry)]
        expires: Expiry,
        /// Print the token and its details as JSON.
        #[arg(long)]
        json: bool,
    },
    /// List the tokens: name, scopes, expiry, last use, state.
    Ls {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Revoke the token NAME: every server of the catalog refuses it from
    /// its next request.
    Revoke {
        #[arg(value_name = "NAME")]
        name: String,
    },
}

/// How long a token lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expiry {
    After(Duration),
    Never,
}

fn parse_expiry(s: &str) -> Result<Expiry, String> {
    if s == "never" {
        return Ok(Expiry::Never);
    }
    parse_positive_duration(s)
        .map(Expiry::After)
        .map_err(|e| format!("{e}; or `never`"))
}

/// A `--to` URL: http or https with a host, and no path beyond `/`.
fn parse_remote_url(s: &str) -> Result<url::Url, String> {
    match url::Url::parse(s) {
        Ok(url) if matches!(url.scheme(), "http" | "https") && url.host().is_some() => Ok(url),
        _ => Err(format!(
            "`{s}` is not an http:// or https:// URL, like https://cdn.example.com"
        )),
    }
}

/// Show the audit log: what was changed over HTTP, by which token, from
/// where, and tokens made and revoked; oldest first.
#[derive(Debug, Args)]
pub struct AuditArgs {
    /// Show the last N rows [default: 100; 0: all].
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub limit: u64,
    /// Only rows newer than DURATION ago, like 24h or 7d.
    #[arg(long, value_name = "DURATION", value_parser = parse_positive_duration)]
    pub since: Option<Duration>,
    /// Only the rows of the token NAME.
    #[arg(long, value_name = "NAME")]
    pub token: Option<String>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// `--purge` and `--purge-delay`: HTTP caches to purge of what `rm` and
/// `gc` remove and `publish --force` replaces (see `crate::purge`).
#[derive(Debug, Args)]
pub struct PurgeArgs {
    /// Once the catalog has changed, send PURGE for every file removed or
    /// replaced (and its version's listing) to the HTTP cache at URL, like
    /// http://127.0.0.1:6081 (repeatable, one per cache); see README
    /// "Running ccc in production".
    #[arg(long = "purge", value_name = "URL", value_parser = parse_purge_url)]
    pub caches: Vec<crate::purge::CacheUrl>,

    /// With --purge, wait DURATION first: the time every origin behind the
    /// caches takes to serve the change, or a cache would fetch the old
    /// files again (`ccc serve` on this catalog: 250 ms; on a replica: its
    /// follower's interval plus a restore).
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = parse_duration, requires = "caches")]
    pub purge_delay: std::time::Duration,
}

/// Remove versions from the catalog (their blobs stay until `ccc gc`).
///
/// The dist-tags that name a removed version go with it, as with npm's
/// unpublish; without its tag, `latest` is the newest release left.
#[derive(Debug, Args)]
pub struct RmArgs {
    /// Versions to remove, like `app@1.4.0`; with --all, package names.
    #[arg(value_name = "PKG@VERSION", required = true, value_parser = parse_rm_target)]
    pub targets: Vec<Target>,

    /// Remove every version of the named packages.
    #[arg(long)]
    pub all: bool,

    /// Show what would be removed, and change nothing.
    #[arg(long)]
    pub dry_run: bool,

    /// Print what was removed as JSON.
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub purge: PurgeArgs,

    #[command(flatten)]
    pub remote: RemoteArgs,
}

impl CheckArgs for RmArgs {
    const COMMAND: &str = "rm";

    fn check(&self) -> Result<(), String> {
        if self.remote.to.is_some() {
            let local_only = [
                (self.all, "--all"),
                (self.dry_run, "--dry-run"),
                (!self.purge.caches.is_empty(), "--purge"),
            ];
            if let Some((_, flag)) = local_only.iter().find(|(set, _)| *set) {
                return Err(format!(
                    "{flag} is for the catalog file; with --to, name each version to remove"
                ));
            }
        }
        for target in &self.targets {
            match (target.exact_version(), self.all) {
                (None, false) => {
                    return Err(format!(
                        "`{}` names no version: name one (PKG@VERSION), or pass --all to remove every version of the package",
                        target.package
                    ));
                }
                (Some(version), true) => {
                    return Err(format!(
                        "--all takes package names without a version, not `{}@{version}`",
                        target.package
                    ));
                }
                _ => {}
            }
        }
        Ok(())
    }
}

/// Prune old versions, drop unreferenced blobs and reclaim disk space.
///
/// --keep N keeps, in each package, the N newest releases (semver order),
/// every prerelease newer than the newest release (the next version's
/// previews), and --keep-prereleases M of the prereleases a release has
/// superseded. --older-than removes versions published longer ago. With
/// both, a version goes only when both allow it; with neither, only blobs no
/// version uses are removed. Whatever the rules, the version `latest`
/// resolves to and every version a dist-tag names are never removed,
/// unless --keep 0 --delete-all-versions.
/// --dry-run lists every version with why it would be kept or removed.
///
/// PKG-GLOB... limits the rules to the packages whose names match (`app`,
/// `'@acme/*'`), so that a vendored library's versions are not judged by
/// the app's rule; one that matches no package is an error. Content no
/// version uses is dropped catalog-wide either way.
#[derive(Debug, Args)]
pub struct GcArgs {
    /// Judge only these packages: names, or globs like `@acme/*` (quote
    /// them from the shell) [default: every package].
    #[arg(value_name = "PKG-GLOB", value_parser = parse_package_glob)]
    pub packages: Vec<String>,

    /// Keep the N newest releases of each package, and the prereleases
    /// newer than them (0 only with --delete-all-versions).
    #[arg(long, value_name = "N", value_parser = parse_count)]
    pub keep: Option<usize>,

    /// With --keep, also keep the M newest prereleases that are older than
    /// the package's newest release [default: 0].
    #[arg(long, value_name = "M", requires = "keep", value_parser = parse_count)]
    pub keep_prereleases: Option<usize>,

    /// Allow --keep 0: remove every version, `latest` included (with
    /// --older-than, every version older than that).
    #[arg(long)]
    pub delete_all_versions: bool,

    /// Remove versions published longer ago than DURATION, like `30days`,
    /// `2weeks` or `12h`.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub older_than: Option<std::time::Duration>,

    /// List every choice (what goes, what stays and why), and change
    /// nothing.
    #[arg(long)]
    pub dry_run: bool,

    /// Print no progress.
    #[arg(long, short)]
    pub quiet: bool,

    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub purge: PurgeArgs,
}

impl CheckArgs for GcArgs {
    const COMMAND: &str = "gc";

    fn check(&self) -> Result<(), String> {
        let keep_nothing = self.keep == Some(0);
        if keep_nothing && !self.delete_all_versions {
            return Err(
                "--keep 0 would remove every version of every package, the ones `latest` serves \
                 included; add --delete-all-versions if that is what you want \
                 (`ccc rm --all PKG` removes one package)"
                    .into(),
            );
        }
        if self.delete_all_versions && !keep_nothing {
            return Err(
                "--delete-all-versions goes only with --keep 0 (it allows removing every version)"
                    .into(),
            );
        }
        if !self.packages.is_empty() && self.keep.is_none() && self.older_than.is_none() {
            return Err(format!(
                "`{}` limits --keep and --older-than to the packages named; give one of them \
                 (`ccc gc {} --keep 5`)",
                self.packages.join(" "),
                self.packages.join(" ")
            ));
        }
        if keep_nothing && self.keep_prereleases.is_some() {
            return Err(
                "--keep-prereleases cannot keep anything with --keep 0 --delete-all-versions"
                    .into(),
            );
        }
        Ok(())
    }
}

/// Make the deltas the catalog lacks, for versions published before ccc
/// made them or without them (`ccc publish --no-deltas`).
///
/// Goes through every version of each package, oldest first, as publish
/// does for the version it writes: each script, stylesheet, JSON and wasm
/// file is coded against the same file (or hashed-name family) in the
/// newest earlier version and in the one `latest` names when it is older
/// (dcb and dcz, RFC 9842), kept where clearly smaller than its brotli
/// stream. Pairs the catalog holds are not made again, so a second run
/// makes nothing. Each version is one transaction; a running `ccc serve`
/// offers the new deltas within a second.
#[derive(Debug, Args)]
pub struct DeltasArgs {
    /// The packages to bring up to date [default: every package].
    #[arg(value_name = "PKG", value_parser = parse_package)]
    pub packages: Vec<String>,

    /// Coding threads, at least 1 [default: one per core].
    #[arg(long, short = 'j', value_name = "N", value_parser = at_least_one)]
    pub jobs: Option<usize>,

    /// Print no progress.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Check the database and that every blob decodes to its recorded sha256.
///
/// Exits 1 when anything is wrong, after listing every problem and the files
/// it affects.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Print no progress.
    #[arg(long, short)]
    pub quiet: bool,

    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Check that every reference of a version's files resolves inside it.
///
/// Reads each script (static and dynamic `import`, `export ... from`, `new
/// URL(..., import.meta.url)`, `importScripts`, relative `require`),
/// stylesheet (`url()`, `@import`), page (`src`, `srcset`, the `<link>`s it
/// loads, an import map), web manifest (icons), `sourceMappingURL` comment
/// and the root `package.json` (`main`, `module`, `browser`, `exports`), and
/// resolves each reference against the file's place in the version. Each
/// is found (a URL naming a folder with files, like `new URL('./',
/// import.meta.url)`, too), missing, found only under another case,
/// leaving the version (`../` above its root, or a root path like
/// `/assets/index.js`: ccc serves the version under /assets/PKG/VERSION/,
/// so build with Vite's `base: './'` or webpack's `publicPath: 'auto'`),
/// external (a URL, a bare specifier such as `react`, another version's
/// /assets/ URL) or built at runtime (never guessed). Exits 1 when any is
/// missing, a case mismatch or leaving the version.
#[derive(Debug, Args)]
pub struct ReferencesArgs {
    /// A build folder, a tarball (.tgz, .tar), or PKG@VERSION in the
    /// catalog.
    #[arg(value_name = "DIR|FILE|PKG@VERSION")]
    pub target: String,

    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Write the import map that loads a version and what it imports from the
/// catalog, without a bundler.
///
/// The map (JSON, as browsers read it, on stdout) sends the version's own
/// entry points (package.json `exports`, with the `browser`, `import`,
/// `module` and `default` conditions and `./*` patterns, else `module` or
/// `main`) and every bare specifier its files import (`rxjs`,
/// `lodash-es/debounce.js`) to exact-version URLs under /assets/. Each
/// package imported is the newest version in the catalog that the range
/// of the version's `dependencies` or `peerDependencies` allows (npm's
/// rules; an undeclared one takes the newest release), and what it
/// imports is resolved the same way, into `scopes` where two versions
/// need different answers. `ccc serve` answers
/// /assets/PKG/VERSION/?importmap with the same map.
///
/// A specifier nothing satisfies is left out of the map and listed on
/// stderr (with --json, in `unresolved`); the map is still written, and
/// the exit code is 1, as for `ccc check`. So is one whose file is
/// CommonJS, which a browser cannot import (the ES module builds to use
/// instead are named). The packages the catalog lacks are listed with
/// everything they depend on, as the npm registry says (--registry,
/// --offline), and the `npm pack` line that fetches them all.
#[derive(Debug, Args)]
pub struct ImportmapArgs {
    /// The version, like `app@1.4.0` (or `app@latest`, `app@^1`).
    #[arg(value_name = "PKG@VERSION", value_parser = parse_version)]
    pub target: Target,

    /// Where the URLs start, like https://cdn.example.com (an http or https
    /// URL, optionally with a path); default: none, so URLs are
    /// root-relative (/assets/...) for pages served by the same ccc.
    #[arg(long, value_name = "URL", value_parser = parse_base)]
    pub base: Option<crate::importmap::Base>,

    /// Pin every module the map can reach to its bytes: `integrity` with
    /// each file's `sha256-...` Subresource Integrity value, which browsers
    /// check before running it.
    #[arg(long)]
    pub integrity: bool,

    /// Print the map with what went into it (the versions it pins, the
    /// specifiers left unresolved, the packages lacking) as JSON.
    #[arg(long)]
    pub json: bool,

    /// The npm registry asked what the packages the catalog lacks depend
    /// on, so that all of them are listed at once [default: npm's
    /// npm_config_registry, else https://registry.npmjs.org/].
    #[arg(long, env = "npm_config_registry", value_name = "URL", value_parser = parse_registry)]
    pub registry: Option<String>,

    /// Ask no registry: list only the packages the map itself lacks, by
    /// range.
    #[arg(
        long,
        env = "CCC_OFFLINE",
        value_parser = clap::builder::BoolishValueParser::new(),
        action = clap::ArgAction::SetTrue
    )]
    pub offline: bool,
}

/// Copy the catalog to OUT, consistently, while it is served or published to.
///
/// The copy is made with SQLite's online backup API inside one read
/// transaction, so it holds the catalog exactly as one commit left it, and
/// publishes and the server carry on meanwhile. It is written to a hidden
/// temporary file beside OUT and renamed into place once complete and on
/// disk: OUT is never half-written. An existing OUT is refused unless
/// --force. Check the copy with `ccc --db OUT verify`.
#[derive(Debug, Args)]
pub struct BackupArgs {
    /// The file to write.
    #[arg(value_name = "OUT")]
    pub out: PathBuf,

    /// Replace OUT if it exists.
    #[arg(long)]
    pub force: bool,

    /// Print no progress.
    #[arg(long, short)]
    pub quiet: bool,

    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Keep the catalog a copy of a writer's, from its Litestream replica.
///
/// For a replica server: run `ccc serve` on --db and `ccc follow REPLICA`
/// beside it. Each round (every --interval) reads the replica's LTX files
/// newer than the copy and writes their pages into the catalog in one
/// SQLite transaction, so the server moves to the new state at once, and a
/// round costs the pages a change touched, not the catalog's size. Without
/// a catalog, or when the files after it are gone, the copy is taken from
/// Litestream's newest snapshot. After each round that leaves the copy at
/// the replica's newest, the transaction id is written to DB.follow,
/// whose age `ccc serve --max-lag` reports. A failed round changes
/// nothing; the next try waits twice as long (at most 64 intervals).
///
/// REPLICA is where Litestream replicates to: the directory of a `file`
/// replica (a path or file:// URL), or an `s3` replica, s3://BUCKET/PATH
/// (credentials from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or
/// Litestream's LITESTREAM_ACCESS_KEY_ID and LITESTREAM_SECRET_ACCESS_KEY;
/// the region from ?region= or AWS_REGION; another S3 service from
/// ?endpoint=URL or AWS_ENDPOINT_URL). A replica that cannot be read at
/// the start ends the command with exit 1.
#[derive(Debug, Args)]
pub struct FollowArgs {
    /// The replica: a directory (path or file:// URL) or s3://BUCKET/PATH.
    #[arg(value_name = "REPLICA")]
    pub replica: String,

    /// How often to look for new transactions.
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = parse_positive_duration)]
    pub interval: Duration,

    /// Bring the catalog up to date once and exit (0 when it is the
    /// replica's newest).
    #[arg(long)]
    pub once: bool,

    /// Print nothing but errors.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Serve the catalog over HTTP.
///
/// GET/HEAD /assets/PKG/VERSION/PATH returns a file: its brotli stream to
/// clients that accept `br` when publish kept one, else the stored gzip
/// stream to clients that accept gzip, the original bytes to others, with a
/// strong
/// ETag, Last-Modified and a one-year immutable Cache-Control; one
/// `Range: bytes=` range of it answers 206. VERSION may be a dist-tag
/// (`latest`, `next`) or a semver range (`^1.2`, `1`, `~1.4.0`): those
/// answer 302 to the version they name, with an ETag naming it, so a cache
/// revalidates them with a 304 until the tag or range moves. Every answer
/// carries `Access-Control-Allow-Origin: *` and OPTIONS answers CORS
/// preflights. /assets/PKG/VERSION/ lists the files as JSON, /assets/PKG/
/// the package's versions and tags; /assets/PKG/VERSION redirects to the
/// version's entry file. unpkg's URL shape, /PKG@VERSION/PATH (and
/// /assets/PKG@VERSION/PATH), answers as /assets/PKG/VERSION/PATH does. /_stats (JSON), /metrics (Prometheus) and
/// /healthz report on the server. SIGINT or SIGTERM stops it after the
/// requests in flight.
#[derive(Debug, Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub server: ServerArgs,
}

/// The server's flags, shared by `serve` and `causal`.
#[derive(Debug, Clone, Args)]
pub struct ServerArgs {
    /// Address or host name to listen on; a name (`localhost`) listens on
    /// every address it resolves to.
    #[arg(
        long,
        env = "CCC_BIND",
        default_value = "127.0.0.1",
        value_name = "ADDR",
        value_parser = parse_bind
    )]
    pub bind: String,

    /// Port to listen on; 0 picks a free one (the first line of output
    /// names it) [default: 8333 for `serve`, a free one for `causal`, whose
    /// server only its own load reaches].
    #[arg(long, env = "CCC_PORT", value_name = "PORT", value_parser = parse_port)]
    pub port: Option<u16>,

    /// Threads serving connections, at least 1; a request the cache cannot
    /// answer holds its thread while the catalog is read [default: one per
    /// core].
    #[arg(long, env = "CCC_THREADS", value_name = "N", value_parser = at_least_one)]
    pub threads: Option<usize>,

    /// Most assets kept in memory; 0 turns the cache off [default: no
    /// limit but --cache-bytes].
    #[arg(
        long,
        env = "CCC_CACHE_CAPACITY",
        value_name = "N",
        value_parser = parse_count
    )]
    pub cache_capacity: Option<usize>,

    /// Most bytes the asset cache holds in memory, like 1GiB: bodies,
    /// names, prepared headers and the cache index.
    #[arg(long, env = "CCC_CACHE_BYTES", default_value = crate::serve::store::DEFAULT_CACHE_BYTES, value_parser = parse_size, value_name = "SIZE")]
    pub cache_bytes: u64,

    /// Most bytes responses in flight hold beyond the cache, like 256MiB:
    /// bodies read for a response the cache does not keep, pieces being
    /// sent, decoders. A file longer than 64 KiB is sent from the catalog
    /// a checked piece at a time when its whole body does not fit; a
    /// piece waits for room (within --send-timeout).
    #[arg(long, env = "CCC_IN_FLIGHT_BYTES", default_value = crate::serve::in_flight::DEFAULT_IN_FLIGHT_BYTES, value_parser = parse_size, value_name = "SIZE")]
    pub in_flight_bytes: u64,

    /// Print a line to stderr for every cache miss.
    #[arg(long)]
    pub log_misses: bool,

    /// How long caches may reuse a redirect from a dist-tag or a range
    /// (`max-age`) before they revalidate it; 0 makes them revalidate
    /// every time (a 304 while the alias has not moved).
    #[arg(long, env = "CCC_ALIAS_MAX_AGE", default_value = crate::serve::alias::DEFAULT_ALIAS_MAX_AGE, value_parser = parse_duration, value_name = "DURATION")]
    pub alias_max_age: Duration,

    /// How long caches may keep a 404 for a missing package, version or
    /// file (`max-age`; 0: not at all), so that a scan of missing paths is
    /// answered by the cache in front instead of the catalog. A version
    /// published after such a 404 is seen through that cache at most this
    /// much later.
    #[arg(long, env = "CCC_NOT_FOUND_MAX_AGE", default_value = crate::serve::alias::DEFAULT_NOT_FOUND_MAX_AGE, value_parser = parse_duration, value_name = "DURATION")]
    pub not_found_max_age: Duration,

    /// On a replica kept by `ccc follow` (or examples/deploy/ccc-follow):
    /// the longest its follower may go without confirming that the catalog
    /// served is the replica's newest (it touches `DB.follow` each time it
    /// does). Past it, or with no such file, `/healthz` says `stale` and
    /// answers 503, so a load balancer takes the replica out; stderr says
    /// when the replica turns stale and when it recovers, and at start
    /// when no follower has confirmed it yet.
    #[arg(long, env = "CCC_MAX_LAG", value_parser = parse_positive_duration, value_name = "DURATION")]
    pub max_lag: Option<Duration>,

    /// Write a line for every request, in --log-format: to stdout, or
    /// appended to the file PATH (`-`: stdout). SIGUSR1 opens PATH again,
    /// for log rotation (logrotate renames the file, then signals). While
    /// the log goes to stdout, stdout holds its lines alone: the
    /// `listening on` and final lines go to stderr.
    #[arg(long, env = "CCC_ACCESS_LOG", value_name = "PATH", num_args = 0..=1, default_missing_value = "-")]
    pub access_log: Option<PathBuf>,

    /// The access log's format: `combined` is nginx's default format,
    /// `json` one object per line (fields in docs/JSON.md). Needs
    /// --access-log.
    #[arg(
        long,
        value_enum,
        default_value_t = LogFormat::Combined,
        requires = "access_log",
        value_name = "FORMAT"
    )]
    pub log_format: LogFormat,

    /// Leave requests whose path (without the query) matches GLOB out of
    /// the access log, like `/healthz` or `/metrics` (repeatable; `*`
    /// crosses `/`). They are still counted in /_stats and /metrics.
    #[arg(
        long,
        env = "CCC_LOG_EXCLUDE",
        value_delimiter = ',',
        value_name = "GLOB",
        value_parser = parse_glob,
        requires = "access_log"
    )]
    pub log_exclude: Vec<String>,

    /// A proxy (an address or a CIDR block, repeatable) whose `Forwarded`
    /// or `X-Forwarded-For` names the client the access log records, read
    /// from the right past every trusted proxy. Requests from anyone else
    /// are logged as their peer.
    #[arg(
        long,
        env = "CCC_TRUST_PROXY",
        value_delimiter = ',',
        value_name = "CIDR",
        value_parser = parse_proxy
    )]
    pub trust_proxy: Vec<ipnet::IpNet>,

    /// Most client connections open at once. Past it the longest idle
    /// keep-alive connections are closed to make room; when none is idle a
    /// new connection is answered 503 with `Retry-After: 1` and closed
    /// [default: 16384, or fewer if the open-files limit is lower].
    #[arg(long, env = "CCC_MAX_CONNECTIONS", value_name = "N", value_parser = parse_max_connections)]
    pub max_connections: Option<usize>,

    /// Time a client has to send a complete request head (line and
    /// headers), from connecting or from the first byte of a later
    /// request; then the connection is closed.
    #[arg(long, env = "CCC_HEADER_TIMEOUT", default_value = "60s", value_parser = parse_positive_duration, value_name = "DURATION")]
    pub header_timeout: Duration,

    /// Time an idle keep-alive connection is kept open.
    #[arg(long, env = "CCC_KEEPALIVE_TIMEOUT", default_value = "75s", value_parser = parse_positive_duration, value_name = "DURATION")]
    pub keepalive_timeout: Duration,

    /// Time a client may take no response bytes at all before its
    /// connection is closed. A slow client holds only its own connection,
    /// never a worker.
    #[arg(long, env = "CCC_SEND_TIMEOUT", default_value = "60s", value_parser = parse_positive_duration, value_name = "DURATION")]
    pub send_timeout: Duration,

    /// Time a client may go without sending a byte of an upload's body
    /// (--publish-api), counted between two reads, not for the whole body;
    /// then the upload fails, nothing is published, and the connection is
    /// closed.
    #[arg(long, env = "CCC_BODY_TIMEOUT", default_value = "60s", value_parser = parse_positive_duration, value_name = "DURATION")]
    pub body_timeout: Duration,

    /// On SIGINT or SIGTERM, how long requests in flight (a long download
    /// too) may take to finish after the server stops accepting; then the
    /// connections left are closed.
    #[arg(long, env = "CCC_SHUTDOWN_TIMEOUT", default_value = "30s", value_parser = parse_duration, value_name = "DURATION")]
    pub shutdown_timeout: Duration,

    /// Serve HTTPS (HTTP/2 and HTTP/1.1 by ALPN) with this PEM certificate
    /// chain, leaf first. SIGHUP reads it and the key again.
    #[arg(long, env = "CCC_TLS_CERT", value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,

    /// The PEM private key of --tls-cert (PKCS#8, PKCS#1 or SEC1).
    #[arg(long, env = "CCC_TLS_KEY", value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,

    /// Take changes over HTTP: `ccc publish --to`, `ccc tag --to` and `ccc
    /// rm --to` with a token made by `ccc token create` (PUT and DELETE
    /// under /-/api/v1/). Off unless given: a catalog may be served by many
    /// servers, and only its writer, over TLS, should take writes.
    #[arg(long, env = "CCC_PUBLISH_API", value_parser = clap::builder::BoolishValueParser::new(), action = clap::ArgAction::SetTrue)]
    pub publish_api: bool,

    /// With --publish-api: the largest upload taken; a larger one is
    /// answered 413 and nothing is published.
    #[arg(long, env = "CCC_MAX_UPLOAD_SIZE", value_name = "SIZE", default_value = crate::serve::api::DEFAULT_MAX_UPLOAD, value_parser = parse_size)]
    pub max_upload_size: u64,

    /// With --publish-api: refuse an upload whose tar stream, decompressed,
    /// is larger than SIZE (a gzip bomb), answered 422.
    #[arg(long, env = "CCC_MAX_UNPACKED_SIZE", value_name = "SIZE", default_value = "4GiB", value_parser = parse_size)]
    pub max_unpacked_size: u64,

    /// With --publish-api: how long a change waits for the one before it
    /// (the catalog takes one at a time); then it is answered 503 with
    /// Retry-After.
    #[arg(long, env = "CCC_PUBLISH_WAIT", value_name = "DURATION", default_value = crate::serve::api::DEFAULT_PUBLISH_WAIT, value_parser = parse_duration)]
    pub publish_wait: Duration,

    /// On a replica: the writer's URL, which the write API names to a
    /// client that sends a change here.
    #[arg(long, env = "CCC_WRITER", value_name = "URL", value_parser = parse_remote_url)]
    pub writer: Option<url::Url>,

    /// Answer /_stats and /metrics only to these addresses (a CIDR block,
    /// repeatable), and to a bearer of a token with the read-stats scope,
    /// as nginx's allow/deny restricts stub_status [default: anyone].
    #[arg(long, env = "CCC_STATS_ALLOW", value_delimiter = ',', value_name = "CIDR", value_parser = parse_proxy)]
    pub stats_allow: Vec<ipnet::IpNet>,

    /// Share the port with other processes that set it too (SO_REUSEPORT),
    /// so a new `ccc serve` can start before the old one stops. Both must
    /// set it. For such a handover to drop nothing, Linux needs
    /// net.ipv4.tcp_migrate_req=1 (examples/deploy/60-ccc-reuse-port.conf);
    /// with its default, 0, the connections queued on the old server's
    /// socket when it closes are reset, and serve warns at start. Not
    /// needed under systemd socket activation, which passes the socket
    /// itself.
    #[arg(long)]
    pub reuse_port: bool,
}

/// Write versions out as plain files with precompressed `.gz` and `.br` siblings.
///
/// DIR/PKG/VERSION/PATH holds the original bytes and, for files stored
/// gzipped, PATH.gz holds the stored gzip stream and PATH.br the brotli
/// stream when publish kept one: the layout nginx (`gzip_static on`,
/// `brotli_static on`) and object-store CDNs serve. Without PKG, every
/// version of every package; with PKG, its versions; with PKG@VERSION, one.
///
/// All or nothing: everything is written into a hidden folder in DIR first,
/// then each version folder is moved into place; on any failure DIR is left
/// as it was. DIR may hold other files: only the exported version folders
/// are created, or replaced whole when they exist. A sibling that cannot
/// exist (its name is too long, or the version has a file of that name) is
/// skipped with a warning; servers send the plain file instead.
#[derive(Debug, Args)]
#[command(allow_missing_positional = true)]
pub struct ExportArgs {
    /// What to export: PKG or PKG@VERSION [default: everything].
    #[arg(value_name = "PKG[@VERSION]", value_parser = parse_package_or_version)]
    pub target: Option<Target>,

    /// The directory to write into.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,

    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Profile `serve` under live load: which code is worth optimizing?
///
/// Runs the server, drives it (or waits for your load), and applies virtual
/// speedups (Coz's method) to its instrumented sites: while a site is
/// "sped up" by P%, everything else is delayed by P% of each visit. The
/// change in served assets per second predicts what a real P% speedup of
/// that site would gain. Prints a table; --json-out, --coz-out (for Coz's
/// viewer) and --plot write the full results.
#[derive(Debug, Args)]
pub struct CausalArgs {
    #[command(flatten)]
    pub server: ServerArgs,

    /// Sites to profile, comma-separated [default: all].
    #[arg(long, value_delimiter = ',', value_name = "SITE,...", value_parser = site_parser())]
    pub sites: Vec<u16>,

    /// Virtual speedups in percent, comma-separated (0 is always added).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "0,25,50",
        value_name = "PCT,...",
        value_parser = parse_speedup
    )]
    pub speedups: Vec<u8>,

    /// Rounds over every site and speedup (at least 1).
    #[arg(long, default_value_t = 5, value_name = "N", value_parser = parse_rounds)]
    pub rounds: usize,

    /// Shortest measurement window of one experiment.
    #[arg(long, default_value = "500ms", value_parser = parse_positive_duration, value_name = "DURATION")]
    pub window: Duration,

    /// Longest window, when progress is slow (at least --window).
    #[arg(long, default_value = "4s", value_parser = parse_positive_duration, value_name = "DURATION")]
    pub max_window: Duration,

    /// Load before the first experiment (warms caches, measures the rate).
    #[arg(long, default_value = "2s", value_parser = parse_positive_duration, value_name = "DURATION")]
    pub warmup: Duration,

    /// Pause after each experiment starts, before measuring.
    #[arg(long, default_value = "100ms", value_parser = parse_duration, value_name = "DURATION")]
    pub settle: Duration,

    /// Progress counts an experiment needs to be reliable (at least 5, the
    /// least Coz's viewer plots).
    #[arg(long, default_value_t = 1000, value_name = "N", value_parser = parse_min_delta)]
    pub min_delta: u64,

    /// Seed of the experiment order (printed, so a run can be repeated).
    #[arg(long, value_name = "N", value_parser = parse_seed)]
    pub seed: Option<u64>,

    /// `builtin:N`: N keep-alive clients of ccc's own; `external`: wait for
    /// someone else's load (wrk, oha, ...).
    #[arg(
        long,
        default_value = "builtin:8",
        value_name = "builtin:N|external",
        value_parser = LoadValues,
        hide_possible_values = true
    )]
    pub load: LoadArg,

    /// URL list for the built-in load, one per line, used in order
    /// [default: every asset, 80% of requests on the first 50].
    #[arg(long, value_name = "FILE")]
    pub urls: Option<PathBuf>,

    /// How a request from a client moves the worker's virtual clock.
    #[arg(long, value_enum, default_value = "conn")]
    pub external_wake: ExternalWakeArg,

    /// What times a visit of the selected site: elapsed time less the
    /// profiler's own pauses (`wall`), or the thread's CPU time (`cpu`), for
    /// sites that block on what optimizing them would not shorten.
    #[arg(long, value_enum, default_value = "wall")]
    pub site_clock: SiteClockArg,

    /// What idle cores do while profiling: `spin` keeps each awake with a
    /// lowest-priority (SCHED_IDLE) spinner, so waking a thread costs the
    /// same whether the profiler pauses threads or not; `sleep` leaves
    /// them to the OS (less power, predictions that run low).
    #[arg(long, value_enum, default_value = "spin")]
    pub idle_cores: IdleCoresArg,

    /// Write every cell, the summary and the ledger as JSON (`-` for
    /// stdout), as --coz-out writes Coz's profile.
    #[arg(long, value_name = "FILE")]
    pub json_out: Option<PathBuf>,

    /// Write a profile Coz's viewer loads.
    #[arg(long, value_name = "FILE")]
    pub coz_out: Option<PathBuf>,

    /// Format of --coz-out.
    #[arg(long, value_enum, default_value = "tsv")]
    pub coz_format: CozFormatArg,

    /// Append to --coz-out instead of replacing it.
    #[arg(long)]
    pub coz_append: bool,

    /// Print the delay-accounting audit: per cell, or per cell and thread.
    #[arg(long, value_enum, num_args = 0..=1, default_missing_value = "summary", value_name = "LEVEL")]
    pub ledger: Option<LedgerArg>,

    /// Exit 4 when the ledger audit finds an error.
    #[arg(long)]
    pub strict: bool,

    /// Draw the speedup curves as SVG.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
}

impl CheckArgs for CausalArgs {
    const COMMAND: &str = "causal";

    fn check(&self) -> Result<(), String> {
        if self.max_window < self.window {
            return Err(format!(
                "--max-window {} is shorter than --window {}; the longest window must be at least the shortest",
                humantime::format_duration(self.max_window),
                humantime::format_duration(self.window),
            ));
        }
        if self.load == LoadArg::External && self.urls.is_some() {
            return Err(
                "--urls lists what the built-in load requests; with --load external your own load generator chooses"
                    .into(),
            );
        }
        Ok(())
    }
}

/// Where `ccc causal`'s load comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadArg {
    /// This many keep-alive clients of ccc's own.
    Builtin(usize),
    /// Someone else's load generator.
    External,
}

impl std::str::FromStr for LoadArg {
    type Err = String;

    fn from_str(s: &str) -> Result<LoadArg, String> {
        if s == "external" {
            return Ok(LoadArg::External);
        }
        let expected = "expected `external` or `builtin:N` with N clients, like builtin:8";
        let n = s.strip_prefix("builtin:").ok_or(expected)?;
        match n.parse::<usize>() {
            Ok(0) => Err("the built-in load needs at least 1 client, like builtin:8".into()),
            Ok(n) => Ok(LoadArg::Builtin(n)),
            Err(_) => Err(format!("`{n}` is not a number of clients; {expected}")),
        }
    }
}

/// `--load`'s values: parsed as [`LoadArg`] is, and offered to shell
/// completion in both forms (`builtin:N` takes any N; the help shows the
/// value name instead).
#[derive(Clone)]
struct LoadValues;

impl clap::builder::TypedValueParser for LoadValues {
    type Value = LoadArg;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<LoadArg, clap::Error> {
        clap::builder::StringValueParser::new()
            .try_map(|s| s.parse::<LoadArg>())
            .parse_ref(cmd, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        let values = ["builtin:8", "external"];
        Some(Box::new(
            values.into_iter().map(clap::builder::PossibleValue::new),
        ))
    }
}

impl std::fmt::Display for LoadArg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadArg::Builtin(n) => write!(f, "builtin:{n}"),
            LoadArg::External => f.write_str("external"),
        }
    }
}

/// `--log-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// nginx's default: addr - - [time] "request" status bytes "referer" "agent".
    Combined,
    /// One JSON object per line.
    Json,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ExternalWakeArg {
    /// Memo of the last response per connection (exact for closed loops).
    Conn,
    /// Idle workers absorb nothing (Coz's rule for blocking I/O).
    Owe,
    /// Idle workers skip all delay (over-predicts closed loops).
    Skip,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum SiteClockArg {
    /// Elapsed time, less pauses and idle waits.
    Wall,
    /// The thread's CPU time (leaves out blocking and preemption).
    Cpu,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum IdleCoresArg {
    /// A SCHED_IDLE spinner per CPU keeps idle cores out of sleep states.
    Spin,
    /// Idle cores sleep as the OS decides.
    Sleep,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum CozFormatArg {
    /// Tab-separated, read by every viewer version.
    Tsv,
    /// JSON lines.
    Jsonl,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LedgerArg {
    Summary,
    Full,
}

/// Write shell completions and man pages (for ccc's own maintainers).
#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// Directory that holds `completions/` and `man/`.
    #[arg(long, default_value = ".", value_name = "DIR")]
    pub out: PathBuf,
}

/// Rules between several flags of one command, checked while clap parses.
pub trait CheckArgs {
    /// The subcommand these flags belong to, whose usage an error shows.
    const COMMAND: &str;

    /// Why the flags cannot go together, if they cannot.
    fn check(&self) -> Result<(), String>;
}

/// A command's flags, parsed by clap's derive and then checked by
/// [`CheckArgs`], so that a broken rule is a usage error like clap's own:
/// `error:` with the usage, exit 2, before any work starts.
#[derive(Debug)]
pub struct Checked<T>(pub T);

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

impl<T: Args + CheckArgs> Args for Checked<T> {
    fn group_id() -> Option<clap::Id> {
        T::group_id()
    }

    fn augment_args(cmd: clap::Command) -> clap::Command {
        T::augment_args(cmd)
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        T::augment_args_for_update(cmd)
    }
}

/// A number of threads: at least 1, since 0 would leave the work undone.
fn at_least_one(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(0) => Err("must be at least 1 (leave the flag out for the default)".into()),
        Ok(n) => Ok(n),
        Err(_) => Err("expected a whole number of threads, like 4".into()),
    }
}

fn parse_size(s: &str) -> Result<u64, String> {
    crate::units::parse_size(s)
}

/// A `--chunked-from` size: at least one chunk.
fn parse_chunked_from(s: &str) -> Result<u64, String> {
    let size = parse_size(s)?;
    let least = chunks::CHUNK_SIZE as u64;
    if size < least {
        return Err(format!("at least one chunk, {least} bytes (64KiB)"));
    }
    Ok(size)
}

fn parse_duration(s: &str) -> Result<Duration, String> {
    crate::units::parse_duration(s)
}

/// A duration that is not zero: a window or warm-up of nothing measures
/// nothing.
fn parse_positive_duration(s: &str) -> Result<Duration, String> {
    match parse_duration(s)? {
        d if d.is_zero() => Err("must be longer than zero, like 500ms or 2s".into()),
        d => Ok(d),
    }
}

/// A whole number that fits `T`; the error says which way it is wrong
/// (Rust's own says "number too large to fit in target type").
fn whole<T: std::str::FromStr>(s: &str) -> Result<T, String> {
    let digits = s.trim();
    digits.parse::<T>().map_err(|_| {
        if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            format!("`{digits}` is too large")
        } else {
            format!("`{s}` is not a whole number")
        }
    })
}

fn parse_purge_url(s: &str) -> Result<crate::purge::CacheUrl, String> {
    crate::purge::CacheUrl::parse(s)
}

/// A count (of versions, entries, ...): any whole number from 0.
fn parse_count(s: &str) -> Result<usize, String> {
    whole(s)
}

fn parse_seed(s: &str) -> Result<u64, String> {
    whole(s)
}

/// `--trust-proxy`: a CIDR block, or one address (a block of one).
fn parse_proxy(text: &str) -> Result<ipnet::IpNet, String> {
    text.parse::<ipnet::IpNet>()
        .or_else(|_| text.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
        .map_err(|_| format!("`{text}` is neither an address nor a CIDR block like 10.0.0.0/8"))
}

fn parse_port(s: &str) -> Result<u16, String> {
    between(s, 0, u16::MAX, "a port")
}

/// A whole number of at least `min`; the error says so in words.
fn at_least<T>(s: &str, min: T, why: &str) -> Result<T, String>
where
    T: std::str::FromStr + PartialOrd + std::fmt::Display,
{
    match whole::<T>(s)? {
        n if n >= min => Ok(n),
        _ => Err(format!("must be at least {min}{why}")),
    }
}

/// A whole number from `lo` to `hi`; the error says so in words.
fn between<T>(s: &str, lo: T, hi: T, what: &str) -> Result<T, String>
where
    T: std::str::FromStr + PartialOrd + std::fmt::Display,
{
    match s.trim().parse::<T>() {
        Ok(n) if n >= lo && n <= hi => Ok(n),
        _ => Err(format!("{what} is a whole number from {lo} to {hi}")),
    }
}

fn parse_level(s: &str) -> Result<GzipLevel, String> {
    s.parse()
}

fn parse_brotli_quality(s: &str) -> Result<BrotliQuality, String> {
    s.parse()
}

fn parse_speedup(s: &str) -> Result<u8, String> {
    between(s, 0, 100, "a speedup").map_err(|e| format!("{e} (a percentage)"))
}

fn parse_max_connections(s: &str) -> Result<usize, String> {
    at_least(s, 1, " (leave the flag out for the default)")
}

fn parse_rounds(s: &str) -> Result<usize, String> {
    at_least(s, 1, "")
}

fn parse_min_delta(s: &str) -> Result<u64, String> {
    at_least(s, 5, " (Coz's viewer plots no experiment with fewer)")
}

/// The sites of `ccc causal`, by name; the value is the site's id.
fn site_parser() -> impl clap::builder::TypedValueParser<Value = u16> {
    use crate::causal::points::SITES;
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(SITES.iter().map(|s| s.name))
        .map(|name| SITES.iter().find(|s| s.name == name).map_or(0, |s| s.id))
}

/// A package name or a glob of them: a glob that parses, made of what
/// names hold (no `/` but a scope's, nothing a name cannot have besides
/// the glob's own `*?[]{},!`).
fn parse_package_glob(s: &str) -> Result<String, String> {
    if s.is_empty() {
        return Err("a package name or glob, like app or '@acme/*'".into());
    }
    if s.contains('@') && !s.starts_with('@') {
        return Err(format!(
            "gc judges whole packages: give `{}`, not a version (`ccc rm PKG@VERSION` removes one)",
            s.split('@').next().unwrap_or(s)
        ));
    }
    parse_glob(s)
}

fn parse_glob(s: &str) -> Result<String, String> {
    globset::Glob::new(s)
        .map(|_| s.to_string())
        .map_err(|e| e.kind().to_string())
}

/// A spec error as a value parser reports it: clap already quotes the
/// input, so an `InvalidSpec` says only what was expected; a hint follows.
fn spec_error(e: crate::Error) -> String {
    let text = match &e {
        crate::Error::InvalidSpec { why, .. } | crate::Error::InvalidTag { why, .. } => why.clone(),
        other => other.to_string(),
    };
    match e.hint() {
        Some(hint) => format!("{text}\n  hint: {hint}"),
        None => text,
    }
}

/// An IP address, or a host name resolved when the server starts. `[::1]`
/// is taken for `::1`, as in a URL.
fn parse_bind(s: &str) -> Result<String, String> {
    let host = s
        .strip_prefix('[')
        .and_then(|s| s.strip_suffix(']'))
        .unwrap_or(s);
    if host.parse::<std::net::IpAddr>().is_ok() {
        return Ok(host.to_string());
    }
    let label = |l: &str| {
        !l.is_empty()
            && l.len() <= 63
            && !l.starts_with('-')
            && !l.ends_with('-')
            && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
    };
    let name = host.strip_suffix('.').unwrap_or(host);
    if name.len() <= 253 && name.split('.').all(label) {
        return Ok(host.to_string());
    }
    Err(
        "expected an IP address (127.0.0.1, ::) or a host name (localhost); \
         the port goes in --port"
            .into(),
    )
}

fn parse_tag(s: &str) -> Result<String, String> {
    crate::spec::tag_name(s)
        .map(str::to_string)
        .map_err(spec_error)
}

fn parse_package(s: &str) -> Result<String, String> {
    let form = "PKG, like app or @scope/app";
    Target::parse_as(s, Part::Refused, Part::Refused, form)
        .map(|t| t.package)
        .map_err(spec_error)
}

fn parse_version_to_tag(s: &str) -> Result<PackageVersion, String> {
    PackageVersion::parse_for(s, "tag").map_err(spec_error)
}

fn parse_package_or_version(s: &str) -> Result<Target, String> {
    Target::parse_as(
        s,
        Part::Optional,
        Part::Refused,
        "PKG or PKG@VERSION, like app@1.4.0",
    )
    .map_err(spec_error)
}

fn parse_version(s: &str) -> Result<Target, String> {
    let form = "PKG@VERSION, like app@1.4.0 or app@latest";
    Target::parse_as(s, Part::Required, Part::Refused, form).map_err(spec_error)
}

fn parse_registry(s: &str) -> Result<String, String> {
    crate::importmap::registry::parse_url(s)
}

fn parse_base(s: &str) -> Result<crate::importmap::Base, String> {
    crate::importmap::Base::parse(s)
}

/// `PKG@VERSION` when there is an `@` after a scope's, else a version of
/// the first package.
fn parse_other_version(s: &str) -> Result<OtherVersion, String> {
    if s.get(1..).is_some_and(|rest| rest.contains('@')) {
        return parse_version(s).map(OtherVersion::Target);
    }
    Selector::parse("the first package", s)
        .map(OtherVersion::SamePackage)
        .map_err(|_| {
            "expected PKG@VERSION, or a version of the first package: exact (1.5.0), \
             a range (^1) or a dist-tag (`latest`, `next`)"
                .to_string()
        })
}

fn parse_version_or_file(s: &str) -> Result<Target, String> {
    let form = "PKG@VERSION or PKG@VERSION/PATH, like app@1.4.0 or app@1.4.0/index.html";
    Target::parse_as(s, Part::Required, Part::Optional, form).map_err(spec_error)
}

fn parse_file(s: &str) -> Result<Target, String> {
    let form = "PKG@VERSION/PATH, like app@1.4.0/index.html";
    Target::parse_as(s, Part::Required, Part::Required, form).map_err(spec_error)
}

/// `PKG@VERSION` with an exact version, or (for --all) a bare `PKG`. Only
/// exact versions: a range is too easy to get wrong when removing.
fn parse_rm_target(s: &str) -> Result<Target, String> {
    let form = "PKG@VERSION (files cannot be removed one by one), or PKG with --all";
    let target = Target::parse_as(s, Part::Optional, Part::Refused, form).map_err(spec_error)?;
    if target.version.is_some() && target.exact_version().is_none() {
        return Err("rm takes exact versions, like app@1.4.0, not `latest` or a range".into());
    }
    Ok(target)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

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
