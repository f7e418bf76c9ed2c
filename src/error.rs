//! The one error type of the library, and the exit code of each kind.
//!
//! Every variant names the thing a user has to look at (the catalog file, the
//! package, the version, the path in the published tree, the address) so
//! that the binary can print `error: <what>` plus an optional hint without
//! ever showing a backtrace.
//!
//! Exit codes ([`Error::exit_code`]) follow the conventions cargo and the
//! shells use: 1 for a failure, 2 for a command line that is wrong, and
//! 128 + the signal's number for a command stopped by SIGINT (130) or
//! SIGTERM (143). Nearly every usage error is clap's own (value parsers and
//! `cli::Checked` run while parsing, before any of this code);
//! [`Error::Usage`] is for the rare one found later.

use std::net::SocketAddr;
use std::path::PathBuf;

/// Result alias used across the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("no catalog at {}", .0.display())]
    NoCatalog(PathBuf),

    #[error("no catalog at {}, and --no-create forbids creating one", .0.display())]
    WontCreate(PathBuf),

    #[error("{} is empty (0 bytes), not a catalog", .0.display())]
    EmptyCatalog(PathBuf),

    /// A write into a replica's catalog, which its follower overwrites.
    #[error("{} is a replica's copy, kept by a follower (it writes {}.follow): it takes no writes of its own", .0.display(), .0.display())]
    ReplicaCopy(PathBuf),

    #[error("{} is not a SQLite database", .0.display())]
    NotSqlite(PathBuf),

    #[error("{} is a SQLite database but not a ccc catalog", .0.display())]
    NotCatalog(PathBuf),

    #[error(
        "{} was written by a newer ccc (catalog schema {found}, this ccc understands up to {known})",
        path.display()
    )]
    SchemaTooNew {
        path: PathBuf,
        found: i64,
        known: i64,
    },

    #[error("catalog {} is damaged: {what}", path.display())]
    Corrupt { path: PathBuf, what: String },

    /// A catalog this process may only read, whose write-ahead log holds
    /// commits it cannot read (see `catalog::read_only`).
    #[error("catalog {} cannot be read by this user: {} {why}", path.display(), wal.display())]
    UnreadableLog {
        path: PathBuf,
        wal: PathBuf,
        why: String,
    },

    /// `ccc backup` could not write its copy; `path` is the destination as
    /// given (never the catalog, never the hidden temporary file).
    #[error("cannot write the backup {}: {why}", path.display())]
    BackupFailed { path: PathBuf, why: String },

    /// A command that writes met a catalog (or folder) this user may only
    /// read.
    #[error("catalog {} is read-only for this user: it cannot be changed", .0.display())]
    ReadOnlyCatalog(PathBuf),

    #[error("catalog {} is busy: another ccc is writing to it", .0.display())]
    Busy(PathBuf),

    /// The TLS certificate or key cannot be used (the message names the
    /// file and why).
    #[error("{0}")]
    Tls(String),

    /// The server has no catalog open to answer from (see `store`).
    #[error("catalog {} is unavailable: {why}", path.display())]
    Unavailable { path: PathBuf, why: String },

    #[error("database error in {}: {source}", path.display())]
    Sqlite {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },

    #[error("invalid package name `{name}`: {why}")]
    InvalidPackageName { name: String, why: String },

    #[error("invalid version `{version}` for {package}: {why}")]
    InvalidVersion {
        package: String,
        version: String,
        why: String,
    },

    #[error("invalid dist-tag `{tag}`: {why}")]
    InvalidTag { tag: String, why: String },

    #[error("{package} has no dist-tag `{tag}`")]
    TagNotFound { package: String, tag: String },

    #[error("no site is set for {host}")]
    SiteNotFound { host: String },

    #[error("invalid {what} `{input}`: {why}")]
    InvalidSpec {
        what: &'static str,
        input: String,
        why: String,
    },

    #[error("{package}@{version} is already published")]
    VersionExists { package: String, version: String },

    /// An upload's `package.json` names another package or version than
    /// its URL.
    #[error(
        "{package}@{version} was not published: its package.json says {}@{}",
        name.as_deref().unwrap_or(package),
        declared.as_deref().unwrap_or(version)
    )]
    ManifestDisagrees {
        package: String,
        version: String,
        name: Option<String>,
        declared: Option<String>,
    },

    /// `ccc token`: a name taken, or no such token.
    #[error("{0}")]
    Token(String),

    /// A server refused a request made with `--to` (its status and words).
    #[error("{url}: {}", remote_text(*status, error))]
    Remote {
        url: String,
        status: u16,
        error: String,
        hint: Option<String>,
    },

    /// `publish --strict` found references that do not resolve.
    #[error(
        "{package}@{version} was not published: {} inside it, first {first}",
        crate::units::count_verb(*count as u64, "reference", "does not resolve", "do not resolve")
    )]
    BrokenReferences {
        package: String,
        version: String,
        count: usize,
        first: String,
        /// Some are root paths (`/vite.svg`): the hint names the bundler
        /// settings.
        root_paths: bool,
    },

    /// A version to publish equals a published one but for build metadata
    /// (`1.0.0+build.5` and `1.0.0`), which semver leaves out of precedence.
    #[error(
        "{package}@{version} is the published {package}@{existing} again: they differ only in build metadata, which semver leaves out of precedence"
    )]
    BuildMetadataTwin {
        package: String,
        version: String,
        existing: String,
    },

    /// `similar` holds the catalog's names close to `package`, when the
    /// command looked them up (see `cmd::suggest_packages`); the server
    /// never does.
    #[error("package {package} is not in the catalog")]
    PackageNotFound {
        package: String,
        similar: Vec<String>,
    },

    /// A glob naming packages (`ccc gc '@acme/*'`) that matches none.
    #[error("no package in the catalog matches `{0}`")]
    NoPackageMatches(String),

    /// `version` as the user typed it: an exact version, a range or a tag.
    #[error("{}", version_not_found(package, version))]
    VersionNotFound { package: String, version: String },

    /// `ccc importmap` on a version without a readable `package.json`.
    #[error(
        "{package}@{version} has no import map: {why}, and an import map takes the entry points and the dependencies' ranges from it"
    )]
    NoManifest {
        package: String,
        version: String,
        why: String,
    },

    /// `publish --importmap` could not write the version's import map
    /// into its pages (`why` names the page or the specifier).
    #[error("{package}@{version} was not published: {why}")]
    ImportMapRefused {
        package: String,
        version: String,
        why: String,
    },

    /// `similar` holds the version's paths a typo away, when the command
    /// looked them up (see `cmd::suggest_paths`).
    #[error("{path} is not a file of {package}@{version}")]
    AssetNotFound {
        package: String,
        version: String,
        path: String,
        similar: Vec<String>,
    },

    /// A path that names no file but the folder of `files` files.
    #[error("{path} is a folder of {package}@{version} ({}), not a file", crate::units::count(*files, "file"))]
    IsFolder {
        package: String,
        version: String,
        path: String,
        files: u64,
        /// The folder's first file, for the hint.
        first: String,
    },

    #[error("{}: {what}", path.display())]
    BadInput { path: PathBuf, what: String },

    /// A `_redirects` or `_headers` at a version's root that ccc cannot
    /// follow (`site::rules`), found by publish before anything is
    /// written; `target` is `package@version` once known.
    #[error(
        "{}{rules}",
        target.as_ref().map(|t| format!("{t} was not published: ")).unwrap_or_default()
    )]
    SiteRules {
        target: Option<String>,
        rules: crate::site::rules::RuleError,
    },

    /// No file or folder could be made in `dir` (the name of the one
    /// that was to be made, often a hidden temporary one, means nothing
    /// to the user); `why` in words (`Error::no_files_in`).
    #[error("cannot create files in {}: {why}", dir.display())]
    CannotCreate { dir: PathBuf, why: String },

    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// A command line that clap accepted but the command cannot: exit 2.
    #[error("{0}")]
    Usage(String),

    /// `--bind` names a host that does not resolve.
    #[error("cannot listen on {host}: {source}")]
    Resolve {
        host: String,
        #[source]
        source: std::io::Error,
    },

    #[error("cannot listen on http://{addr}: {source}")]
    Bind {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
        /// `--reuse-port` was given.
        reuse_port: bool,
        /// Who holds the port, when it is in use.
        holder: Option<crate::transport::holder::Holder>,
    },

    #[error("cannot write to standard output: {0}")]
    Stdout(#[source] std::io::Error),

    /// The system refused a thread, a signal handler or another resource a
    /// command needs; `what` says what could not be done.
    #[error("{what}: {source}")]
    System {
        what: String,
        #[source]
        source: std::io::Error,
    },

    /// `ccc causal` saw no asset served: no load came (`external`), or the
    /// built-in clients' requests failed (`failures` says how).
    #[error(
        "no asset was served at http://{addr} within {}s{}",
        waited.as_secs(),
        failures.as_ref().map(|f| format!(": {f}")).unwrap_or_default()
    )]
    NoLoad {
        addr: SocketAddr,
        waited: std::time::Duration,
        external: bool,
        failures: Option<String>,
    },

    /// Stopped by SIGINT (Ctrl-C) or SIGTERM before finishing.
    #[error("interrupted by {}", signal_name(*.0))]
    Interrupted(i32),

    /// A bug in ccc rather than a problem with its input or the system: a
    /// worker thread that panicked, an actor that stopped, a value that
    /// does not encode.
    #[error("internal error: {0}")]
    Internal(String),

    /// A cache named by `--purge` did not purge every URL; the change to
    /// the catalog itself is committed (see `purge`).
    #[error("the catalog is changed, but purging failed in {0}")]
    Purge(String),
}

impl From<crate::site::rules::RuleError> for Error {
    fn from(rules: crate::site::rules::RuleError) -> Self {
        Error::SiteRules {
            target: None,
            rules,
        }
    }
}

impl From<crate::actor::StartError> for Error {
    fn from(e: crate::actor::StartError) -> Self {
        Error::Internal(e.to_string())
    }
}

/// A missing version in the server's words (`app has no version 1.2.3`,
/// `no version of app matches ^9`), so the CLI and a 404 say the same.
fn version_not_found(package: &str, version: &str) -> String {
    if semver::Version::parse(version).is_ok() {
        format!("{package} has no version {version}")
    } else {
        format!("no version of {package} matches {version}")
    }
}

impl From<crate::actor::Stopped> for Error {
    fn from(e: crate::actor::Stopped) -> Self {
        Error::Internal(e.to_string())
    }
}

impl Error {
    /// A line that tells the user what to do next, where there is one.
    pub fn hint(&self) -> Option<String> {
        match self {
            Error::ReplicaCopy(_) => Some(
                "write into the writer's catalog: its changes reach every replica through Litestream"
                    .into(),
            ),
            Error::WontCreate(_) => Some(
                "point --db / CCC_DB_PATH at the catalog; a first publish without --no-create (and CCC_NO_CREATE) creates one"
                    .into(),
            ),
            Error::NoCatalog(_) => Some(
                "create one with `ccc publish <pkg>@<version> <DIR>`, or point --db / CCC_DB_PATH at an existing cdn.db"
                    .into(),
            ),
            Error::EmptyCatalog(_) => Some(
                "an empty file counts as no catalog: `ccc publish <pkg>@<version> <DIR>` creates the catalog in it, or point --db / CCC_DB_PATH at an existing cdn.db"
                    .into(),
            ),
            Error::VersionExists { package, version } => Some(format!(
                "publish a new version ({package}@{}): a published version is served \
                 `immutable` for a year, so browsers and caches keep its old bytes, and pages \
                 that pin its `integrity` stop loading once they change; --force replaces it \
                 anyway, atomically",
                next_version(version)
            )),
            Error::ManifestDisagrees { .. } => Some(
                "publish to the URL of the name and version the package.json gives, or fix \
                 package.json in the build"
                    .into(),
            ),
            Error::Remote { hint, .. } => hint.clone(),
            Error::BrokenReferences { root_paths, .. } => {
                let all = "`ccc check DIR` lists them all; without --strict the version is published and they are reported";
                Some(match root_paths {
                    true => format!("{}; {all}", ROOT_PATH_HINT),
                    false => all.to_string(),
                })
            }
            Error::BuildMetadataTwin {
                package, existing, ..
            } => Some(format!(
                "a version is published once, whatever its build metadata (npm refuses it too); \
                 publish a new version, or remove {package}@{existing} first with `ccc rm`"
            )),
            Error::SchemaTooNew { .. } => Some("upgrade ccc to open this catalog".into()),
            Error::NotSqlite(_) | Error::NotCatalog(_) => Some(
                "point --db (or CCC_DB_PATH) at a catalog made by `ccc publish`".into(),
            ),
            Error::Corrupt { .. } => Some("run `ccc verify` for a full report".into()),
            Error::UnreadableLog { .. } => Some(
                "run any ccc command on it as its owner, such as `ccc verify`: as it ends, it copies the log into the catalog and removes the side files"
                    .into(),
            ),
            Error::Busy(_) => Some("wait for the other ccc to finish, then retry".into()),
            Error::ReadOnlyCatalog(_) => Some(
                "run the command as a user who may write the catalog and its folder, such as its owner"
                    .into(),
            ),
            Error::InvalidVersion { .. } => {
                Some("versions are semver, like 1.4.0 or 2.0.0-rc.1 (no leading `v`)".into())
            }
            Error::PackageNotFound { similar, .. } if !similar.is_empty() => {
                let names: Vec<String> = similar.iter().map(|n| format!("`{n}`")).collect();
                Some(format!(
                    "did you mean {}? `ccc ls` lists what the catalog holds",
                    names.join(" or ")
                ))
            }
            Error::PackageNotFound { .. } | Error::NoPackageMatches(_) => {
                Some("`ccc ls` lists what the catalog holds".into())
            }
            Error::AssetNotFound {
                package,
                version,
                similar,
                ..
            } => {
                let list = format!("`ccc ls {package}@{version}` lists its files");
                Some(match similar.is_empty() {
                    true => list,
                    false => {
                        let names: Vec<String> = similar
                            .iter()
                            .map(|p| format!("`{package}@{version}/{p}`"))
                            .collect();
                        format!("did you mean {}? {list}", names.join(" or "))
                    }
                })
            }
            Error::VersionNotFound { package, .. } => {
                Some(format!("`ccc ls {package}` lists its versions"))
            }
            Error::IsFolder {
                package,
                version,
                first,
                ..
            } => Some(format!(
                "`ccc ls {package}@{version}` lists its files; name one, like \
                 `{package}@{version}/{first}`"
            )),
            Error::TagNotFound { package, .. } => {
                Some(format!("`ccc tag ls {package}` lists its dist-tags"))
            }
            Error::SiteNotFound { .. } => Some("`ccc site ls` lists the sites".into()),
            Error::Bind {
                addr,
                source,
                reuse_port,
                holder,
            } => bind_hint(*addr, source, *reuse_port, holder.as_ref()),
            Error::NoLoad { addr, external: true, .. } => Some(format!(
                "start the load generator (wrk, oha, ...) against http://{addr} once ccc prints that address, or let ccc drive the server with --load builtin:8"
            )),
            Error::NoLoad { failures: Some(_), .. } => Some(
                "every built-in request failed, for the causes listed; with --urls, each line must be a path like /assets/app/1.4.0/index.html"
                    .into(),
            ),
            Error::Purge(_) => Some(
                "until purged, a cache serves those files for as long as it keeps them \
                 (examples/deploy/ccc.vcl: at most a day); purge them by hand with \
                 `curl -X PURGE <cache><path>`"
                    .into(),
            ),
            Error::SiteRules { rules, .. } => Some(format!(
                "ccc follows {} at the root of a version served as a site, as Netlify and \
                 Cloudflare Pages do; fix that line, or move the file out of the root if it \
                 is not meant as a site's rules",
                rules.file
            )),
            Error::Usage(_) => Some("`ccc help <COMMAND>` shows how the arguments fit".into()),
            Error::Internal(_) => Some(
                "this is a bug in ccc; please report it with the command that caused it".into(),
            ),
            _ => None,
        }
    }

    /// The process exit code for this error: 2 for usage, 128 + N for
    /// signal N, 1 for everything else.
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Usage(_) => 2,
            Error::Interrupted(signal) => signal_exit_code(*signal),
            _ => 1,
        }
    }

    /// A package the catalog does not hold, with no suggestion yet.
    pub(crate) fn package_not_found(package: impl Into<String>) -> Self {
        Error::PackageNotFound {
            package: package.into(),
            similar: Vec::new(),
        }
    }

    /// Creating a file or folder in `dir` failed with `e`.
    pub(crate) fn no_files_in(dir: impl Into<PathBuf>, e: &std::io::Error) -> Self {
        use std::io::ErrorKind;
        let why = match e.kind() {
            ErrorKind::PermissionDenied => "permission denied".to_string(),
            ErrorKind::ReadOnlyFilesystem => "the file system is read-only".to_string(),
            ErrorKind::StorageFull => "no space left on the device".to_string(),
            ErrorKind::QuotaExceeded => "the disk quota is exceeded".to_string(),
            _ => match e.raw_os_error() {
                Some(code) => std::io::Error::from_raw_os_error(code).to_string(),
                None => e.kind().to_string(),
            },
        };
        Error::CannotCreate {
            dir: dir.into(),
            why,
        }
    }

    /// `e` with the version it refused named, when it is a
    /// [`Error::SiteRules`] found before the version was known.
    pub(crate) fn naming_version(self, target: impl FnOnce() -> Option<String>) -> Self {
        match self {
            Error::SiteRules {
                target: None,
                rules,
            } => Error::SiteRules {
                target: target(),
                rules,
            },
            e => e,
        }
    }

    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    pub(crate) fn system(what: impl Into<String>, source: std::io::Error) -> Self {
        Error::System {
            what: what.into(),
            source,
        }
    }

    pub(crate) fn bad_input(path: impl Into<PathBuf>, what: impl Into<String>) -> Self {
        Error::BadInput {
            path: path.into(),
            what: what.into(),
        }
    }
}

/// The version to suggest after `version`: the next prerelease
/// (`2.0.0-rc.1` -> `2.0.0-rc.2`) or the next patch (`1.4.0` -> `1.4.1`).
fn next_version(version: &str) -> String {
    let Ok(mut v) = semver::Version::parse(version) else {
        return "a new version".into();
    };
    v.build = semver::BuildMetadata::EMPTY;
    if !v.pre.is_empty() {
        let pre = v.pre.as_str().to_string();
        // The number at the end of the last identifier goes up: `rc.1`
        // -> `rc.2`, `build1` -> `build2`; without one, `.1` is added.
        let digits = pre.len() - pre.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        let (head, number) = pre.split_at(pre.len() - digits);
        let bumped = match number.parse::<u64>() {
            Ok(n) => format!("{head}{}", n + 1),
            _ => format!("{pre}.1"),
        };
        if let Ok(pre) = semver::Prerelease::new(&bumped) {
            v.pre = pre;
            return v.to_string();
        }
    }
    v.patch += 1;
    v.pre = semver::Prerelease::EMPTY;
    v.to_string()
}

/// What to try when a port cannot be bound; `holder` is who holds it
/// when it is in use, and whether it shares it (see `transport::holder`).
fn bind_hint(
    addr: SocketAddr,
    source: &std::io::Error,
    reuse_port: bool,
    holder: Option<&crate::transport::holder::Holder>,
) -> Option<String> {
    use std::io::ErrorKind;
    let port = addr.port();
    match source.kind() {
        ErrorKind::AddrInUse if reuse_port => {
            let who = holder.map_or("a program".to_string(), |h| h.describe());
            let ccc = holder
                .and_then(|h| h.process.as_ref())
                .is_some_and(|(_, name)| name == "ccc");
            let why = match ccc {
                true => "started without --reuse-port",
                false => "without sharing it (no SO_REUSEPORT, or another user's)",
            };
            Some(format!(
                "{who} listens on port {port}, {why}: a handover needs both servers to set \
                 --reuse-port. Stop that one first, or restart it once with --reuse-port \
                 (socket activation, examples/deploy/ccc.socket, needs neither)"
            ))
        }
        ErrorKind::AddrInUse if holder.is_some_and(|h| h.shares) => Some(format!(
            "{} listens on port {port} with --reuse-port: start this one with --reuse-port too \
             to serve beside it, or pick another port with --port",
            holder.map_or("a program".to_string(), |h| h.describe())
        )),
        ErrorKind::AddrInUse => Some(format!(
            "{} listens on port {port}; pick another with --port (0 picks a free one)",
            match holder.and_then(|h| h.process.as_ref()) {
                Some(_) => holder.map_or(String::new(), |h| h.describe()),
                None => "another program".to_string(),
            }
        )),
        ErrorKind::PermissionDenied if addr.port() < 1024 => Some(
            "ports below 1024 need extra privileges; use a higher --port (the default is 8333)"
                .into(),
        ),
        ErrorKind::AddrNotAvailable => Some(format!(
            "{} is not an address of this machine; --bind 127.0.0.1 or 0.0.0.0 always work",
            addr.ip()
        )),
        _ => None,
    }
}

/// A server's refusal as `--to`'s errors say it: the status, when there
/// was an answer, then its words.
fn remote_text(status: u16, error: &str) -> String {
    match status {
        0 => error.to_string(),
        status => format!("{status} {error}"),
    }
}

/// The exit code of a process stopped by `signal`: 128 + its number, as
/// the shells report it.
pub(crate) fn signal_exit_code(signal: i32) -> u8 {
    u8::try_from(128 + signal).unwrap_or(u8::MAX)
}

/// `SIGINT (Ctrl-C)`, `SIGTERM`: how error messages name a signal.
pub(crate) fn signal_name(signal: i32) -> &'static str {
    match signal {
        libc::SIGINT => "SIGINT (Ctrl-C)",
        libc::SIGTERM => "SIGTERM",
        _ => "a signal",
    }
}

/// The hint under a list of broken references that has root paths
/// (`/assets/index-B3x9a.js`): where a version is served, and the bundler
/// settings that write relative URLs instead. `ccc check` prints it too
/// (`refs::check::Report::root_path_hint`).
pub(crate) const ROOT_PATH_HINT: &str = "a root path (`/...`) names the top of the site, but ccc serves \
     each version under /assets/PKG/VERSION/; build with relative URLs: \
     Vite `base: './'`, webpack `output.publicPath: 'auto'`; or serve the app at a \
     host's root (`ccc site set`), where they name its files (`ccc check --site`)";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signal_exit_codes_follow_the_shell() {
        assert_eq!(signal_exit_code(libc::SIGINT), 130);
        assert_eq!(signal_exit_code(libc::SIGTERM), 143);
        assert_eq!(signal_name(libc::SIGINT), "SIGINT (Ctrl-C)");
    }

    #[test]
    fn exit_codes_by_kind() {
        assert_eq!(Error::Usage("x".into()).exit_code(), 2);
        assert_eq!(Error::Interrupted(libc::SIGINT).exit_code(), 130);
        assert_eq!(Error::Interrupted(libc::SIGTERM).exit_code(), 143);
        assert_eq!(Error::Internal("x".into()).exit_code(), 1);
        assert_eq!(Error::package_not_found("x").exit_code(), 1);
    }

    #[test]
    fn internal_failures_are_not_usage_errors() {
        let stopped: Error = crate::actor::Stopped("store").into();
        assert!(matches!(stopped, Error::Internal(_)), "{stopped:?}");
        assert_eq!(
            stopped.to_string(),
            "internal error: the store actor has stopped"
        );
        assert!(stopped.hint().is_some_and(|h| h.contains("bug")));
    }

    #[test]
    fn the_already_published_hint_says_what_force_costs() {
        let e = Error::VersionExists {
            package: "app".into(),
            version: "1.4.0".into(),
        };
        let hint = e.hint().unwrap_or_default();
        assert!(
            hint.starts_with("publish a new version (app@1.4.1)"),
            "{hint}"
        );
        assert!(
            hint.contains("`integrity`") && hint.contains("--force"),
            "{hint}"
        );
        assert_eq!(next_version("2.0.0-rc.1"), "2.0.0-rc.2");
        assert_eq!(next_version("2.0.0-beta"), "2.0.0-beta.1");
        assert_eq!(next_version("3.47.2-build1"), "3.47.2-build2");
        assert_eq!(next_version("1.0.0-0"), "1.0.0-1");
        assert_eq!(next_version("1.0.0+build.5"), "1.0.1");
    }

    #[test]
    fn a_bind_failure_names_the_address() {
        let addr: SocketAddr = "127.0.0.1:8333".parse().unwrap();
        let e = Error::Bind {
            addr,
            source: std::io::Error::from(std::io::ErrorKind::AddrInUse),
            reuse_port: false,
            holder: None,
        };
        assert!(
            e.to_string()
                .starts_with("cannot listen on http://127.0.0.1:8333: "),
            "{e}"
        );
        assert!(e.hint().is_some_and(|h| h.contains("port 8333")));
    }
}
