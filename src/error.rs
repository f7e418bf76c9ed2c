//! The one error type of the library.
//!
//! Every variant names the thing a user has to look at (the catalog file, the
//! package, the version, the path in the published tree) so that the binary
//! can print `error: <what>` plus an optional hint and exit 1 without ever
//! showing a backtrace. Usage errors found by clap never get here: clap prints
//! them and exits 2.

use std::path::PathBuf;

/// Result alias used across the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("no catalog at {}", .0.display())]
    NoCatalog(PathBuf),

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

    #[error("catalog {} is busy: another ccc is writing to it", .0.display())]
    Busy(PathBuf),

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

    #[error("invalid {what} `{input}`: {why}")]
    InvalidSpec {
        what: &'static str,
        input: String,
        why: String,
    },

    #[error("{package}@{version} is already published")]
    VersionExists { package: String, version: String },

    #[error("package {0} is not in the catalog")]
    PackageNotFound(String),

    #[error("{package}@{version} is not in the catalog")]
    VersionNotFound { package: String, version: String },

    #[error("{path} is not a file of {package}@{version}")]
    AssetNotFound {
        package: String,
        version: String,
        path: String,
    },

    #[error("{}: {what}", path.display())]
    BadInput { path: PathBuf, what: String },

    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("{0}")]
    Usage(String),

    #[error(transparent)]
    ActorStart(#[from] crate::actor::StartError),

    #[error(transparent)]
    ActorStopped(#[from] crate::actor::Stopped),
}

impl Error {
    /// A line that tells the user what to do next, where there is one.
    pub fn hint(&self) -> Option<String> {
        match self {
            Error::NoCatalog(_) => Some(
                "create one with `ccc publish <pkg>@<version> <DIR>`, or point --db / CCC_DB_PATH at an existing cdn.db"
                    .into(),
            ),
            Error::VersionExists { .. } => {
                Some("versions are immutable; pass --force to replace it atomically".into())
            }
            Error::SchemaTooNew { .. } => Some("upgrade ccc to open this catalog".into()),
            Error::NotSqlite(_) | Error::NotCatalog(_) => Some(
                "point --db (or CCC_DB_PATH) at a catalog made by `ccc publish`".into(),
            ),
            Error::Corrupt { .. } => Some("run `ccc verify` for a full report".into()),
            Error::Busy(_) => Some("wait for the other ccc to finish, then retry".into()),
            Error::InvalidVersion { .. } => {
                Some("versions are semver, like 1.4.0 or 2.0.0-rc.1 (no leading `v`)".into())
            }
            Error::PackageNotFound(_) | Error::VersionNotFound { .. } => {
                Some("`ccc ls` lists what the catalog holds".into())
            }
            _ => None,
        }
    }

    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
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
