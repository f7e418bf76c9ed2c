//! The rows the catalog's modules hand each other and the commands: a
//! version, a dist-tag, a package and version to publish as, a file left
//! out. They live here, below every module that makes or reads them, so
//! that publish, manifest, query and tags depend on this module and not
//! on each other.

use semver::Version;
use serde::Serialize;

/// One published version: an element of `ccc ls PKG --json`, and the head
/// of every object that describes a version.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct VersionRow {
    #[serde(skip)]
    pub id: i64,
    pub package: String,
    #[serde(serialize_with = "as_string")]
    pub version: Version,
    #[serde(serialize_with = "crate::units::serialize_rfc3339")]
    pub published_at: i64,
    pub file_count: u64,
    pub raw_bytes: u64,
    /// Stored bytes of the version's files, each file's blob counted once
    /// per file.
    pub stored_bytes: u64,
}

/// One dist-tag of a package: an element of `ccc tag ls PKG --json` and of
/// the `tags` of `GET /assets/PKG/`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct TagRow {
    pub tag: String,
    #[serde(serialize_with = "as_string")]
    pub version: Version,
    /// Whether a tag row sets it; false only for a `latest` that is the
    /// newest release because no row sets it.
    pub explicit: bool,
}

/// A package name and version to publish as.
pub(crate) type Identity = (String, Version);

/// Something the walk passed over, reported to the user.
#[derive(Debug, Clone, Serialize)]
pub struct Skipped {
    pub path: String,
    pub reason: String,
}

pub(super) fn as_string<S: serde::Serializer>(
    v: &Version,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    s.collect_str(v)
}

pub(super) fn as_hex<S: serde::Serializer>(
    v: &[u8; 32],
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(&hex::encode(v))
}
