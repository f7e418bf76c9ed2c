//! Dist-tags, as npm has them: names (`latest`, `next`, `beta`) that point
//! at one version of a package, set by `ccc tag add` or `publish --tag` and
//! moved by either. `PKG@TAG` on the command line and `/assets/PKG/TAG/...`
//! on the server resolve through them ([`Catalog::resolve`]).
//!
//! # `latest`
//!
//! Without a `latest` row, `latest` is what it always was in ccc: the
//! newest release, or the newest pre-release while there is no release.
//! A `latest` row (set by `ccc tag add PKG@VERSION latest` or
//! `publish --tag latest`) overrides that, whatever the version, so a bad
//! release can be rolled back by pointing `latest` at the one before.
//! Publishing moves `latest` as npm users expect:
//!
//! - without `--tag`, a release newer than every other release of the
//!   package removes the row, so `latest` follows it; any other version
//!   (a pre-release, a backport) leaves `latest` where it was;
//! - with `--tag latest`, `latest` points at the version published;
//! - with another `--tag`, that tag points at it and `latest` stays where it
//!   was: when the version would have become the newest release, a row
//!   pins `latest` to the version it named before.
//!
//! `ccc tag rm PKG latest` removes the row, so `latest` is the newest
//! release again.
//!
//! # Deleting versions
//!
//! A tag goes with the version it names (`ON DELETE CASCADE`), as npm's
//! unpublish drops the tags of the version it removes; `rm` and `gc`
//! report the tags removed. gc never removes a tagged version on its own
//! (see [`super::gc::pinned`]). A forced republish gives the version a new
//! row, and its tags are moved to it.
//!
//! A catalog older than [`super::TAGS_SCHEMA`], read as it is by read-only
//! commands and the server, has no tags: `latest` is the newest release.

use super::Catalog;
use super::SqliteResult;
use super::rows::{TagRow, VersionRow};
use crate::error::{Error, Result};
use crate::spec::Selector;
use rusqlite::{Connection, OptionalExtension, params};
use semver::Version;

/// A package's versions, as `(row id, version)`; unparsable ones (a
/// damaged catalog) are left out.
fn version_ids(conn: &Connection, package: &str) -> rusqlite::Result<Vec<(i64, Version)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT v.id, v.version FROM versions v JOIN packages p ON p.id = v.package_id
          WHERE p.name = ?1",
    )?;
    let rows = stmt
        .query_map([package], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows
        .into_iter()
        .filter_map(|(id, v)| Version::parse(&v).ok().map(|v| (id, v)))
        .collect())
}

/// A package's tag rows, as `(tag, version row id)`, by tag.
fn rows(conn: &Connection, package: &str) -> rusqlite::Result<Vec<(String, i64)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT t.tag, t.version_id FROM dist_tags t JOIN packages p ON p.id = t.package_id
          WHERE p.name = ?1 ORDER BY t.tag",
    )?;
    stmt.query_map([package], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect()
}

/// The version row one tag names, if the package has that tag.
pub(super) fn named(conn: &Connection, package: &str, tag: &str) -> rusqlite::Result<Option<i64>> {
    conn.prepare_cached(
        "SELECT t.version_id FROM dist_tags t JOIN packages p ON p.id = t.package_id
          WHERE p.name = ?1 AND t.tag = ?2",
    )?
    .query_row([package, tag], |r| r.get(0))
    .optional()
}

/// What `latest` names among `versions`, given the package's tag rows.
fn latest(versions: &[(i64, Version)], rows: &[(String, i64)]) -> Option<i64> {
    if let Some((_, id)) = rows.iter().find(|(tag, _)| tag == "latest") {
        return Some(*id);
    }
    let newest = Selector::Latest.pick(versions.iter().map(|(_, v)| v))?;
    versions
        .iter()
        .find(|(_, v)| v == newest)
        .map(|(id, _)| *id)
}

/// Every tag of a package: `latest` first (set by a row or not), then the
/// others by name. Empty for a package without versions.
fn list(conn: &Connection, package: &str, has_table: bool) -> rusqlite::Result<Vec<TagRow>> {
    let versions = version_ids(conn, package)?;
    let rows = if has_table {
        rows(conn, package)?
    } else {
        Vec::new()
    };
    let version_of = |id: i64| versions.iter().find(|(v, _)| *v == id).map(|(_, v)| v);
    let mut out = Vec::with_capacity(rows.len() + 1);
    if let Some(version) = latest(&versions, &rows).and_then(version_of) {
        out.push(TagRow {
            tag: "latest".into(),
            version: version.clone(),
            explicit: rows.iter().any(|(tag, _)| tag == "latest"),
        });
    }
    for (tag, id) in rows.iter().filter(|(tag, _)| tag != "latest") {
        if let Some(version) = version_of(*id) {
            out.push(TagRow {
                tag: tag.clone(),
                version: version.clone(),
                explicit: true,
            });
        }
    }
    Ok(out)
}

/// Points `tag` of `package` at the version row `version_id`.
fn set(conn: &Connection, package: &str, tag: &str, version_id: i64) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO dist_tags (package_id, tag, version_id)
         VALUES ((SELECT id FROM packages WHERE name = ?1), ?2, ?3)
         ON CONFLICT (package_id, tag) DO UPDATE SET version_id = excluded.version_id",
    )?
    .execute(params![package, tag, version_id])?;
    Ok(())
}

/// Removes `tag` of `package`; whether it existed.
fn unset(conn: &Connection, package: &str, tag: &str) -> rusqlite::Result<bool> {
    let n = conn
        .prepare_cached(
            "DELETE FROM dist_tags
              WHERE package_id = (SELECT id FROM packages WHERE name = ?1) AND tag = ?2",
        )?
        .execute([package, tag])?;
    Ok(n > 0)
}

/// The tag rows that name one version row, by tag.
pub(super) fn of_version(conn: &Connection, version_id: i64) -> rusqlite::Result<Vec<String>> {
    conn.prepare_cached("SELECT tag FROM dist_tags WHERE version_id = ?1 ORDER BY tag")?
        .query_map([version_id], |r| r.get(0))?
        .collect()
}

/// What a publish needs to know about the package's tags before it
/// changes anything ([`before_publish`]).
pub(super) struct BeforePublish {
    /// The row `latest` named.
    latest: Option<i64>,
    /// The row a forced publish replaces, and its tags.
    replaced: Option<(i64, Vec<String>)>,
}

/// Reads what [`after_publish`] needs, inside the publish's transaction,
/// before the replaced version (if any) is deleted.
pub(super) fn before_publish(
    tx: &Connection,
    package: &str,
    replaced: Option<i64>,
) -> rusqlite::Result<BeforePublish> {
    let versions = version_ids(tx, package)?;
    let rows = rows(tx, package)?;
    Ok(BeforePublish {
        latest: latest(&versions, &rows),
        replaced: match replaced {
            Some(id) => Some((id, of_version(tx, id)?)),
            None => None,
        },
    })
}

/// Applies the module doc's publish rules once `version` of `package` is
/// in as row `new_id`; returns the tags that name it then, `latest`
/// included when it resolves to it.
pub(super) fn after_publish(
    tx: &Connection,
    package: &str,
    before: BeforePublish,
    new_id: i64,
    version: &Version,
    tag: Option<&str>,
) -> rusqlite::Result<Vec<String>> {
    // The replaced row's tags move to the new one, and so does `latest`.
    let mut latest_before = before.latest;
    if let Some((old_id, tags)) = &before.replaced {
        for tag in tags {
            set(tx, package, tag, new_id)?;
        }
        if latest_before == Some(*old_id) {
            latest_before = Some(new_id);
        }
    }
    let versions = version_ids(tx, package)?;
    match tag {
        Some("latest") => set(tx, package, "latest", new_id)?,
        None => {
            let newest_release = version.pre.is_empty()
                && versions
                    .iter()
                    .all(|(id, v)| *id == new_id || !v.pre.is_empty() || v < version);
            if newest_release {
                unset(tx, package, "latest")?;
            }
        }
        Some(other) => {
            set(tx, package, other, new_id)?;
            let now = latest(&versions, &rows(tx, package)?);
            if let Some(was) = latest_before
                && now != Some(was)
            {
                set(tx, package, "latest", was)?;
            }
        }
    }
    let mut tags = of_version(tx, new_id)?;
    if !tags.iter().any(|t| t == "latest") && latest(&versions, &rows(tx, package)?) == Some(new_id)
    {
        tags.insert(0, "latest".into());
    }
    Ok(tags)
}

/// What `ccc tag add` or `ccc tag rm` changed.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct TagChange {
    pub package: String,
    pub tag: String,
    /// The version it named before (none for a new tag).
    pub from: Option<String>,
    /// The version it names now: none once removed, except `latest`,
    /// which then names the newest release.
    pub to: Option<String>,
    pub removed: bool,
}

impl Catalog {
    /// Every tag of `package`, `latest` first; an error for an unknown
    /// package.
    pub(crate) fn tags(&self, package: &str) -> Result<Vec<TagRow>> {
        let tags = list(self.conn(), package, self.has_tags()).at(self)?;
        if tags.is_empty() {
            return Err(Error::package_not_found(package.to_string()));
        }
        Ok(tags)
    }

    /// The tag rows of `package` as `(tag, version row id)`: none for a
    /// catalog older than tags.
    pub(crate) fn tag_rows(&self, package: &str) -> Result<Vec<(String, i64)>> {
        if !self.has_tags() {
            return Ok(Vec::new());
        }
        rows(self.conn(), package).at(self)
    }

    /// Points `tag` at `version`, in one transaction.
    pub(crate) fn add_tag(&mut self, version: &VersionRow, tag: &str) -> Result<TagChange> {
        crate::spec::tag_name(tag)?;
        let package = version.package.as_str();
        self.write(|tx| {
            let from = resolve_tag(tx, package, tag)?;
            set(tx, package, tag, version.id)?;
            Ok(TagChange {
                package: package.to_string(),
                tag: tag.to_string(),
                from,
                to: Some(version.version.to_string()),
                removed: false,
            })
        })
    }

    /// Removes `tag` of `package`, in one transaction. `latest` can be
    /// removed only where a row sets it.
    pub(crate) fn remove_tag(&mut self, package: &str, tag: &str) -> Result<TagChange> {
        if self.versions(package)?.is_empty() {
            return Err(Error::package_not_found(package.to_string()));
        }
        let change = self.write(|tx| {
            let from = resolve_tag(tx, package, tag)?;
            if !unset(tx, package, tag)? {
                return Ok(None);
            }
            let to = match tag {
                "latest" => resolve_tag(tx, package, "latest")?,
                _ => None,
            };
            Ok(Some(TagChange {
                package: package.to_string(),
                tag: tag.to_string(),
                from,
                to,
                removed: true,
            }))
        })?;
        change.ok_or_else(|| match tag {
            "latest" => Error::InvalidTag {
                tag: tag.into(),
                why: format!(
                    "no tag sets {package}'s `latest`, which is its newest release; \
                     there is nothing to remove"
                ),
            },
            _ => Error::TagNotFound {
                package: package.to_string(),
                tag: tag.to_string(),
            },
        })
    }

    /// Runs `f` in an immediate transaction and commits what it did.
    fn write<T>(&mut self, f: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> Result<T> {
        let path = self.path().to_path_buf();
        let tx = self.write_transaction()?;
        let out = f(&tx).at(&path)?;
        super::changed(&tx).at(&path)?;
        tx.commit().at(&path)?;
        Ok(out)
    }
}

/// The version row `tag` of `package` names now (`latest` falling back
/// to the newest release), if any.
pub(super) fn version_id(
    conn: &Connection,
    package: &str,
    tag: &str,
) -> rusqlite::Result<Option<i64>> {
    match tag {
        "latest" => Ok(latest(&version_ids(conn, package)?, &rows(conn, package)?)),
        _ => named(conn, package, tag),
    }
}

/// The version `tag` of `package` resolves to now (`latest` falling back
/// to the newest release).
fn resolve_tag(conn: &Connection, package: &str, tag: &str) -> rusqlite::Result<Option<String>> {
    let versions = version_ids(conn, package)?;
    let id = match tag {
        "latest" => latest(&versions, &rows(conn, package)?),
        _ => named(conn, package, tag)?,
    };
    Ok(id.and_then(|id| {
        versions
            .iter()
            .find(|(v, _)| *v == id)
            .map(|(_, v)| v.to_string())
    }))
}
