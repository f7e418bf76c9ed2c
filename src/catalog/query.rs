//! Read queries over the catalog: packages, versions, files, asset bodies,
//! and version resolution from a selector (`latest`, `1.4`, `^1.2`).
//!
//! Everything here is plain data out of SQL; tables and JSON are built from
//! these rows by the commands, and the server builds responses from them.

use super::SqliteResult;
use super::rows::{TagRow, VersionRow};
use super::{Catalog, Encoding, content_type};
use crate::error::{Error, Result};
pub(crate) use crate::page::Page;
use crate::spec::Selector;
use rusqlite::OptionalExtension;
use semver::Version;
use serde::Serialize;
use std::io::Read;

/// One package with its totals: an element of `ccc ls --json`.
///
/// The field names here and in the other rows are ccc's JSON vocabulary
/// (docs/JSON.md): `package` and `version` name things, counts end in
/// `_count`, byte quantities in `_bytes`, times are RFC 3339 strings.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct PackageRow {
    pub package: String,
    pub version_count: u64,
    /// What `latest` resolves to: the version its dist-tag names, else the
    /// newest release, or the newest prerelease when there is no release.
    pub latest: Option<String>,
    /// Files in the latest version.
    pub latest_file_count: u64,
    /// Bytes of distinct blobs used by any version of the package.
    pub stored_bytes: u64,
    #[serde(serialize_with = "crate::units::serialize_rfc3339")]
    pub created_at: i64,
}

/// A version with the dist-tags that name it: an element of `ccc ls PKG
/// --json` and of the `versions` of `GET /assets/PKG/`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct TaggedVersion {
    #[serde(flatten)]
    pub version: VersionRow,
    /// By name, `latest` first.
    pub tags: Vec<String>,
}

/// A package with its dist-tags and versions: `GET /assets/PKG/`.
/// `versions` may be one [`Page`] of them; `version_count` counts them all.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct PackageVersions {
    pub package: String,
    #[serde(serialize_with = "crate::units::serialize_rfc3339")]
    pub created_at: i64,
    pub version_count: u64,
    pub tags: Vec<TagRow>,
    /// Newest first by semver precedence.
    pub versions: Vec<TaggedVersion>,
}

/// One file of a version.
#[derive(Debug, Clone)]
pub(crate) struct AssetRow {
    pub path: String,
    /// From the path, by the running ccc's table ([`content_type`]).
    pub content_type: &'static str,
    pub encoding: Encoding,
    /// The file's size.
    pub raw_bytes: u64,
    /// The size of its stored body (gzip stream or original bytes).
    pub stored_bytes: u64,
    /// Other codings of the file the catalog holds beside the stored body
    /// (a brotli stream), each sent to clients that accept it.
    pub variants: Vec<Variant>,
    pub sha256: [u8; 32],
    pub blob_id: i64,
}

impl AssetRow {
    /// The file's Subresource Integrity value (`integrity="..."` in HTML,
    /// W3C SRI 3.5): `sha256-` and the base64 of the original bytes'
    /// digest, the one the catalog already holds.
    pub(crate) fn integrity(&self) -> String {
        use base64::Engine;
        format!(
            "sha256-{}",
            base64::engine::general_purpose::STANDARD.encode(self.sha256)
        )
    }
}

/// A file as JSON: the row, its digest in hex and as an SRI value.
impl Serialize for AssetRow {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct File<'a> {
            path: &'a str,
            content_type: &'a str,
            encoding: Encoding,
            raw_bytes: u64,
            stored_bytes: u64,
            variants: &'a [Variant],
            sha256: String,
            integrity: String,
        }
        File {
            path: &self.path,
            content_type: self.content_type,
            encoding: self.encoding,
            raw_bytes: self.raw_bytes,
            stored_bytes: self.stored_bytes,
            variants: &self.variants,
            sha256: hex::encode(self.sha256),
            integrity: self.integrity(),
        }
        .serialize(s)
    }
}

/// A page's SQL `LIMIT ? OFFSET ?` values (-1: no limit).
fn limit_offset(page: Page) -> (i64, i64) {
    let clamp = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
    (page.limit.map_or(-1, clamp), clamp(page.offset))
}

/// Another coding of a file, beside its stored body.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) struct Variant {
    pub encoding: Encoding,
    pub stored_bytes: u64,
}

/// A version with its files, by path: `ccc ls PKG@VERSION --json` and the
/// server's `/assets/PKG/VERSION/` listing. `files` may be one [`Page`] of
/// them; `version.file_count` counts them all.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct VersionFiles {
    #[serde(flatten)]
    pub version: VersionRow,
    pub files: Vec<AssetRow>,
}

impl Catalog {
    /// The packages of `page`, by name, with their totals. Each package's
    /// stored size reads every asset row of the package, so a page costs
    /// its packages' files, whatever the catalog's size.
    pub(crate) fn packages(&self, page: Page) -> Result<Vec<PackageRow>> {
        let mut stmt = self
            .conn()
            .prepare(concat!(
                "SELECT p.name, p.created_at,
                        (SELECT coalesce(sum(",
                crate::stored_len!("b"),
                "), 0) FROM blobs b
                          WHERE b.id IN (SELECT a.blob_id FROM assets a
                                           JOIN versions v ON v.id = a.version_id
                                          WHERE v.package_id = p.id))
                   FROM packages p ORDER BY p.name LIMIT ?1 OFFSET ?2"
            ))
            .at(self)?;
        let rows = stmt
            .query_map(limit_offset(page), |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, i64>(2)?,
                ))
            })
            .at(self)?
            .collect::<rusqlite::Result<Vec<_>>>()
            .at(self)?;
        let mut out = Vec::with_capacity(rows.len());
        for (name, created_at, stored) in rows {
            let versions = self.versions(&name)?;
            let latest = self.pick(&versions, &name, &Selector::Latest)?;
            out.push(PackageRow {
                version_count: versions.len() as u64,
                latest: latest.map(|v| v.version.to_string()),
                latest_file_count: latest.map_or(0, |v| v.file_count),
                stored_bytes: stored as u64,
                created_at,
                package: name,
            });
        }
        Ok(out)
    }

    /// Every package's name, in order: what commands that walk the whole
    /// catalog need, without [`Catalog::packages`]' totals.
    pub(crate) fn package_names(&self) -> Result<Vec<String>> {
        self.conn()
            .prepare("SELECT name FROM packages ORDER BY name")
            .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
            .at(self)
    }

    /// The path of a version equal to `path` but for ASCII case, if any
    /// (the first in order).
    pub(crate) fn path_in_another_case(
        &self,
        version_id: i64,
        path: &str,
    ) -> Result<Option<String>> {
        self.conn()
            .prepare_cached(
                "SELECT path FROM assets WHERE version_id = ?1 AND path = ?2 COLLATE NOCASE
                  AND path <> ?2 ORDER BY path LIMIT 1",
            )
            .and_then(|mut s| {
                s.query_row(rusqlite::params![version_id, path], |r| r.get(0))
                    .optional()
            })
            .at(self)
    }

    /// Every path of a version, in order.
    pub(crate) fn paths(&self, version_id: i64) -> Result<Vec<String>> {
        self.conn()
            .prepare_cached("SELECT path FROM assets WHERE version_id = ?1 ORDER BY path")
            .and_then(|mut s| s.query_map([version_id], |r| r.get(0))?.collect())
            .at(self)
    }

    /// How many packages the catalog holds.
    pub(crate) fn package_count(&self) -> Result<u64> {
        self.conn()
            .query_row("SELECT count(*) FROM packages", [], |r| r.get::<_, i64>(0))
            .map(|n| n as u64)
            .at(self)
    }

    /// The versions of `package`, newest first by semver precedence. An
    /// unknown package has no versions.
    pub(crate) fn versions(&self, package: &str) -> Result<Vec<VersionRow>> {
        let mut stmt = self
            .conn()
            .prepare_cached(
                "SELECT v.id, v.version, v.published_at, v.file_count, v.raw_bytes, v.stored_bytes
                   FROM versions v JOIN packages p ON p.id = v.package_id
                  WHERE p.name = ?1",
            )
            .at(self)?;
        let rows = stmt
            .query_map([package], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, i64>(2)?,
                    r.get::<_, i64>(3)?,
                    r.get::<_, i64>(4)?,
                    r.get::<_, i64>(5)?,
                ))
            })
            .at(self)?
            .collect::<rusqlite::Result<Vec<_>>>()
            .at(self)?;
        let mut out = Vec::with_capacity(rows.len());
        for (id, version, published_at, files, raw, stored) in rows {
            let version = Version::parse(&version).map_err(|_| Error::Corrupt {
                path: self.path().to_path_buf(),
                what: format!("{package} has an unparsable version `{version}`"),
            })?;
            out.push(VersionRow {
                id,
                package: package.to_string(),
                version,
                published_at,
                file_count: files as u64,
                raw_bytes: raw as u64,
                stored_bytes: stored as u64,
            });
        }
        out.sort_by(|a, b| b.version.cmp(&a.version));
        Ok(out)
    }

    /// The version of `package` that `selector` names: the exact one, the
    /// newest in a range, or the one a dist-tag names (`latest` without a
    /// tag: the newest release; see [`super::tags`]).
    pub(crate) fn resolve(&self, package: &str, selector: &Selector) -> Result<VersionRow> {
        let versions = self.versions(package)?;
        if versions.is_empty() {
            return Err(Error::package_not_found(package.to_string()));
        }
        match self.pick(&versions, package, selector)? {
            Some(v) => Ok(v.clone()),
            None if matches!(selector, Selector::Tag(_)) => Err(Error::TagNotFound {
                package: package.to_string(),
                tag: selector.to_string(),
            }),
            None => Err(Error::VersionNotFound {
                package: package.to_string(),
                version: selector.to_string(),
            }),
        }
    }

    /// The one of `versions` (all of `package`'s) that `selector` names.
    fn pick<'a>(
        &self,
        versions: &'a [VersionRow],
        package: &str,
        selector: &Selector,
    ) -> Result<Option<&'a VersionRow>> {
        let tag = match selector {
            Selector::Latest => "latest",
            Selector::Tag(tag) => tag.as_str(),
            Selector::Exact(_) | Selector::Range(..) => "",
        };
        if !tag.is_empty() && self.has_tags() {
            let named = super::tags::named(self.conn(), package, tag).at(self)?;
            if let Some(id) = named {
                return Ok(versions.iter().find(|v| v.id == id));
            }
        }
        let picked = selector.pick(versions.iter().map(|v| &v.version));
        Ok(picked.and_then(|want| versions.iter().find(|v| v.version == *want)))
    }

    /// The versions of `package`, newest first, each with the dist-tags
    /// that name it.
    pub(crate) fn tagged_versions(&self, package: &str) -> Result<Vec<TaggedVersion>> {
        let versions = self.versions(package)?;
        let tags = if versions.is_empty() {
            Vec::new()
        } else {
            self.tags(package)?
        };
        Ok(versions
            .into_iter()
            .map(|version| TaggedVersion {
                tags: tags
                    .iter()
                    .filter(|t| t.version == version.version)
                    .map(|t| t.tag.clone())
                    .collect(),
                version,
            })
            .collect())
    }

    /// A package's tags and the versions of `page`, or None when it has no
    /// version. The order is semver precedence, which SQL cannot sort by, so
    /// every version row is read and the page is cut from them: a package's
    /// thousands of nightlies cost their rows here, not their JSON or HTML.
    pub(crate) fn package_versions(
        &self,
        package: &str,
        page: Page,
    ) -> Result<Option<PackageVersions>> {
        let versions = self.tagged_versions(package)?;
        if versions.is_empty() {
            return Ok(None);
        }
        let version_count = versions.len() as u64;
        let created_at = self
            .conn()
            .prepare_cached("SELECT created_at FROM packages WHERE name = ?1")
            .and_then(|mut s| s.query_row([package], |r| r.get(0)))
            .at(self)?;
        Ok(Some(PackageVersions {
            package: package.to_string(),
            created_at,
            version_count,
            tags: self.tags(package)?,
            versions: page.apply(versions),
        }))
    }

    /// A version with the files of `page`.
    pub(crate) fn version_files(&self, version: VersionRow, page: Page) -> Result<VersionFiles> {
        let files = self.files(version.id, page)?;
        Ok(VersionFiles { version, files })
    }

    /// The files of a version in `page`, by path. The primary key orders
    /// them, so a page costs its own rows (and the skipped ones' keys).
    pub(crate) fn files(&self, version_id: i64, page: Page) -> Result<Vec<AssetRow>> {
        let mut stmt = self
            .conn()
            .prepare_cached(&format!(
                "{} WHERE a.version_id = ?1 ORDER BY a.path LIMIT ?2 OFFSET ?3",
                self.asset_select()
            ))
            .at(self)?;
        let (limit, offset) = limit_offset(page);
        stmt.query_map(rusqlite::params![version_id, limit, offset], asset_row)
            .at(self)?
            .collect::<rusqlite::Result<Vec<_>>>()
            .at(self)
    }

    /// One file of a version.
    pub(crate) fn asset(&self, version: &VersionRow, path: &str) -> Result<AssetRow> {
        let mut stmt = self
            .conn()
            .prepare_cached(&format!(
                "{} WHERE a.version_id = ?1 AND a.path = ?2",
                self.asset_select()
            ))
            .at(self)?;
        let found = stmt
            .query_row(rusqlite::params![version.id, path], asset_row)
            .optional()
            .at(self)?;
        if let Some(asset) = found {
            return Ok(asset);
        }
        // `app@1.0.0/dist` names a folder when files lie under `dist/`.
        let folder = path.trim_end_matches('/');
        let (files, first) = match folder {
            "" => (0, None),
            _ => self.files_under(version.id, folder)?,
        };
        let (package, version) = (version.package.clone(), version.version.to_string());
        Err(match (files, first) {
            (1.., Some(first)) => Error::IsFolder {
                package,
                version,
                path: folder.to_string(),
                files,
                first,
            },
            _ => Error::AssetNotFound {
                package,
                version,
                path: path.to_string(),
                similar: Vec::new(),
            },
        })
    }

    /// How many files of a version lie under the folder `folder` (no
    /// trailing `/`), and the first of them. Paths sort bytewise, and `0`
    /// follows `/`, so the folder's files are one range of the primary key.
    fn files_under(&self, version_id: i64, folder: &str) -> Result<(u64, Option<String>)> {
        self.conn()
            .query_row(
                "SELECT count(*), min(path) FROM assets \
                 WHERE version_id = ?1 AND path >= ?2 AND path < ?3",
                rusqlite::params![version_id, format!("{folder}/"), format!("{folder}0")],
                |r| Ok((r.get::<_, i64>(0)? as u64, r.get::<_, Option<String>>(1)?)),
            )
            .at(self)
    }

    /// The file a version's bare URL leads to (see
    /// [`super::manifest::entry_file`]); None when no rule finds one.
    pub(crate) fn entry(&self, version_id: i64) -> Result<Option<String>> {
        let manifest = self.manifest(version_id)?;
        let mut exists = self
            .conn()
            .prepare_cached("SELECT 1 FROM assets WHERE version_id = ?1 AND path = ?2")
            .at(self)?;
        let mut failed = None;
        let entry = super::manifest::entry_file(manifest.as_deref(), |path| {
            exists
                .exists(rusqlite::params![version_id, path])
                .unwrap_or_else(|e| {
                    failed = Some(e);
                    false
                })
        });
        match failed {
            Some(e) => Err(super::sqlite_err(self.as_ref(), e)),
            None => Ok(entry),
        }
    }

    /// The `package.json` at a version's root, decoded, if it has one no
    /// larger than [`super::manifest::MAX_MANIFEST_SIZE`].
    pub(crate) fn manifest(&self, version_id: i64) -> Result<Option<Vec<u8>>> {
        let found: Option<(Vec<u8>, Encoding)> = self
            .conn()
            .prepare_cached(
                "SELECT b.body, b.encoding FROM assets a JOIN blobs b ON b.id = a.blob_id
                  WHERE a.version_id = ?1 AND a.path = 'package.json'",
            )
            .and_then(|mut s| {
                s.query_row([version_id], |r| Ok((r.get(0)?, r.get(1)?)))
                    .optional()
            })
            .at(self)?;
        let Some((body, encoding)) = found else {
            return Ok(None);
        };
        let limit = super::manifest::MAX_MANIFEST_SIZE;
        let mut bytes = Vec::new();
        let read = Encoding::decoder(encoding, &body)
            .take(limit + 1)
            .read_to_end(&mut bytes);
        // A manifest that does not decode or is too large names no entry;
        // `ccc verify` reports a damaged blob.
        Ok((read.is_ok() && bytes.len() as u64 <= limit).then_some(bytes))
    }

    /// The stored body of a blob.
    pub(crate) fn blob_body(&self, blob_id: i64) -> Result<Vec<u8>> {
        self.conn()
            .query_row("SELECT body FROM blobs WHERE id = ?1", [blob_id], |r| {
                r.get(0)
            })
            .at(self)
    }

    /// The brotli stream of a blob, if the catalog holds one.
    pub(crate) fn brotli_body(&self, blob_id: i64) -> Result<Option<Vec<u8>>> {
        if !self.has_brotli() {
            return Ok(None);
        }
        self.conn()
            .query_row(
                "SELECT body FROM brotli WHERE blob_id = ?1",
                [blob_id],
                |r| r.get(0),
            )
            .optional()
            .at(self)
    }

    /// The columns of an [`AssetRow`] over `assets a JOIN blobs b`, as this
    /// catalog's schema has them.
    fn asset_select(&self) -> &'static str {
        if self.has_brotli() {
            ASSET_SELECT
        } else {
            ASSET_SELECT_NO_BROTLI
        }
    }

    /// Stored bytes of the distinct blobs of a version that some other
    /// version also uses.
    pub(crate) fn shared_bytes(&self, version_id: i64) -> Result<u64> {
        self.conn()
            .query_row(
                concat!(
                    "SELECT coalesce(sum(",
                    crate::stored_len!("b"),
                    "), 0) FROM blobs b
                  WHERE b.id IN (SELECT blob_id FROM assets WHERE version_id = ?1)
                    AND EXISTS (SELECT 1 FROM assets o
                                 WHERE o.blob_id = b.id AND o.version_id != ?1)"
                ),
                [version_id],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n as u64)
            .at(self)
    }

    /// The other files with the same content as `asset` of `version`, in
    /// any version, as `pkg@version/path`.
    pub(crate) fn same_content(
        &self,
        version: &VersionRow,
        asset: &AssetRow,
    ) -> Result<Vec<String>> {
        let itself = format!("{}@{}/{}", version.package, version.version, asset.path);
        let mut users = self.blob_users(asset.blob_id)?;
        users.retain(|user| *user != itself);
        Ok(users)
    }

    /// Every file whose content is the blob `blob_id`, as
    /// `pkg@version/path`, by package, then version in semver order
    /// (`1.9.0` before `1.10.0`), then path.
    pub(crate) fn blob_users(&self, blob_id: i64) -> Result<Vec<String>> {
        let mut stmt = self
            .conn()
            .prepare_cached(
                "SELECT p.name, v.version, a.path FROM assets a
                   JOIN versions v ON v.id = a.version_id
                   JOIN packages p ON p.id = v.package_id
                  WHERE a.blob_id = ?1",
            )
            .at(self)?;
        let mut users = stmt
            .query_map([blob_id], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                ))
            })
            .at(self)?
            .collect::<rusqlite::Result<Vec<_>>>()
            .at(self)?;
        // A damaged catalog's unparsable version sorts first rather than
        // hiding the file: verify lists these too.
        users.sort_by_cached_key(|(package, version, path)| {
            (package.clone(), Version::parse(version).ok(), path.clone())
        });
        Ok(users
            .into_iter()
            .map(|(package, version, path)| format!("{package}@{version}/{path}"))
            .collect())
    }

    /// Number of blobs and their stored bytes, for the whole catalog.
    pub(crate) fn blob_totals(&self) -> Result<(u64, u64)> {
        self.conn()
            .query_row(
                concat!(
                    "SELECT count(*), coalesce(sum(",
                    crate::stored_len!("blobs"),
                    "), 0) FROM blobs"
                ),
                [],
                |r| Ok((r.get::<_, i64>(0)? as u64, r.get::<_, i64>(1)? as u64)),
            )
            .at(self)
    }

    /// Number of brotli streams and their bytes, for the whole catalog.
    pub(crate) fn brotli_totals(&self) -> Result<(u64, u64)> {
        if !self.has_brotli() {
            return Ok((0, 0));
        }
        self.conn()
            .query_row(
                "SELECT count(*), coalesce(sum(length(body)), 0) FROM brotli",
                [],
                |r| Ok((r.get::<_, i64>(0)? as u64, r.get::<_, i64>(1)? as u64)),
            )
            .at(self)
    }
}

/// A reference publish stored (`refs`): where it is written, as written,
/// and what it resolved to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct StoredLink {
    /// The file that holds it.
    pub file: String,
    pub line: u32,
    pub column: u32,
    pub kind: String,
    pub reference: String,
    pub class: String,
    /// The file of the version it names, when found (or found only under
    /// another case).
    pub target: Option<String>,
}

impl Catalog {
    /// What file `path` of version `version_id` references (`outgoing`),
    /// or what references it; empty for a catalog or a version published
    /// before references were stored.
    pub(crate) fn links(
        &self,
        version_id: i64,
        path: &str,
        outgoing: bool,
    ) -> Result<Vec<StoredLink>> {
        if !self.has_refs() {
            return Ok(Vec::new());
        }
        let sql = if outgoing {
            "SELECT path, line, col, kind, written, class, target FROM refs
              WHERE version_id = ?1 AND path = ?2 ORDER BY line, col"
        } else {
            "SELECT path, line, col, kind, written, class, target FROM refs
              WHERE version_id = ?1 AND target = ?2 ORDER BY path, line, col"
        };
        let mut stmt = self.conn().prepare_cached(sql).at(self)?;
        stmt.query_map(rusqlite::params![version_id, path], stored_link)
            .at(self)?
            .collect::<rusqlite::Result<Vec<_>>>()
            .at(self)
    }
}

impl Catalog {
    /// Every static and dynamic `import` of version `version_id`'s files
    /// as publish stored them, by file, line and column; empty for a
    /// catalog or a version published without references.
    pub(crate) fn module_links(&self, version_id: i64) -> Result<Vec<StoredLink>> {
        if !self.has_refs() {
            return Ok(Vec::new());
        }
        let mut stmt = self
            .conn()
            .prepare_cached(
                "SELECT path, line, col, kind, written, class, target FROM refs
                  WHERE version_id = ?1 AND kind IN ('import', 'dynamic_import')
                  ORDER BY path, line, col",
            )
            .at(self)?;
        stmt.query_map([version_id], stored_link)
            .at(self)?
            .collect::<rusqlite::Result<Vec<_>>>()
            .at(self)
    }

    /// Whether publish stored any reference of version `version_id`: a
    /// version published with `--no-check`, or before references were
    /// stored, has none.
    pub(crate) fn has_stored_links(&self, version_id: i64) -> Result<bool> {
        if !self.has_refs() {
            return Ok(false);
        }
        self.conn()
            .prepare_cached("SELECT 1 FROM refs WHERE version_id = ?1 LIMIT 1")
            .and_then(|mut s| s.exists([version_id]))
            .at(self)
    }

    /// The original bytes of a file: its stored body, decoded.
    pub(crate) fn decoded(&self, file: &AssetRow) -> Result<Vec<u8>> {
        let mut stored = Vec::new();
        self.copy_blob(file.blob_id, &mut stored, &|e| {
            Error::Internal(e.to_string())
        })?;
        if file.encoding != Encoding::Gzip {
            return Ok(stored);
        }
        let mut raw = Vec::with_capacity(file.raw_bytes as usize);
        flate2::read::MultiGzDecoder::new(&stored[..])
            .read_to_end(&mut raw)
            .map_err(|e| Error::Corrupt {
                path: self.path().to_path_buf(),
                what: format!("{}: does not decode: {e}", file.path),
            })?;
        Ok(raw)
    }
}

fn stored_link(r: &rusqlite::Row<'_>) -> rusqlite::Result<StoredLink> {
    Ok(StoredLink {
        file: r.get(0)?,
        line: r.get(1)?,
        column: r.get(2)?,
        kind: r.get(3)?,
        reference: r.get(4)?,
        class: r.get(5)?,
        target: r.get(6)?,
    })
}

/// `$brotli`: the size of the blob's brotli stream, or NULL.
macro_rules! asset_select {
    ($brotli:literal) => {
        concat!(
            "SELECT a.path, b.raw_size, ",
            crate::stored_len!("b"),
            ", b.encoding, b.sha256, b.id, ",
            $brotli,
            "
   FROM assets a JOIN blobs b ON b.id = a.blob_id"
        )
    };
}
const ASSET_SELECT: &str =
    asset_select!("(SELECT length(r.body) FROM brotli r WHERE r.blob_id = b.id)");
/// [`ASSET_SELECT`] for a catalog whose schema predates the brotli table.
const ASSET_SELECT_NO_BROTLI: &str = asset_select!("NULL");

fn asset_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<AssetRow> {
    let sha: Vec<u8> = r.get(4)?;
    let mut sha256 = [0u8; 32];
    if sha.len() == 32 {
        sha256.copy_from_slice(&sha);
    }
    let path: String = r.get(0)?;
    Ok(AssetRow {
        content_type: content_type::for_path(&path).as_str(),
        path,
        raw_bytes: r.get::<_, i64>(1)? as u64,
        stored_bytes: r.get::<_, i64>(2)? as u64,
        encoding: r.get(3)?,
        variants: r
            .get::<_, Option<i64>>(6)?
            .map(|n| Variant {
                encoding: Encoding::Brotli,
                stored_bytes: n as u64,
            })
            .into_iter()
            .collect(),
        sha256,
        blob_id: r.get(5)?,
    })
}

impl Catalog {
    /// Whether a version row still exists (it is gone after rm, gc or a
    /// `--force` republish, which gives the version a new id).
    pub(crate) fn version_exists(&self, version_id: i64) -> Result<bool> {
        self.conn()
            .prepare_cached("SELECT 1 FROM versions WHERE id = ?1")
            .and_then(|mut s| s.exists([version_id]))
            .at(self)
    }

    /// SQLite's `data_version`: changes whenever another connection commits
    /// (as seen at the start of a transaction: call it outside one).
    pub(crate) fn data_version(&self) -> Result<i64> {
        self.conn()
            .pragma_query_value(None, "data_version", |r| r.get(0))
            .at(self)
    }

    /// Begins a deferred transaction: the reads that follow, until
    /// [`Catalog::end_read`], see one snapshot of the catalog and share
    /// one WAL read lock, taken at the first of them.
    pub(crate) fn begin_read(&self) -> Result<()> {
        self.run_cached("BEGIN")
    }

    /// Whether a transaction is open on this connection.
    pub(crate) fn in_transaction(&self) -> bool {
        !self.conn().is_autocommit()
    }

    /// Ends the transaction [`Catalog::begin_read`] opened, if it is still
    /// open (SQLite rolls some back by itself after an error): COMMIT, or
    /// ROLLBACK when that fails, which for reads is the same. An error only
    /// when the transaction is still open.
    pub(crate) fn end_read(&self) -> Result<()> {
        if !self.in_transaction() || self.run_cached("COMMIT").is_ok() || !self.in_transaction() {
            return Ok(());
        }
        self.run_cached("ROLLBACK")
    }

    /// Runs a statement without parameters or rows, prepared once.
    fn run_cached(&self, sql: &str) -> Result<()> {
        self.conn()
            .prepare_cached(sql)
            .and_then(|mut s| s.execute([]))
            .map(drop)
            .at(self)
    }
}
