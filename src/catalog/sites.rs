//! Sites: a host, or the default for every host no site names, served
//! from one dist-tag of one package at the root (`/`), as an app host
//! serves its current deploy. `ccc site set` writes the row; `ccc serve`
//! reads every site once per catalog change and answers by `Host`.
//!
//! A site is a row in the catalog, not a flag of the server, so that every
//! server of the catalog (replicas included, through Litestream) serves
//! the same sites, and so that moving a site is the same atomic commit as
//! the tag move or publish that moves it: deploying is `ccc publish` or
//! `ccc tag add`, rolling back is `ccc tag add` to the version before.
//!
//! # What a site served
//!
//! Every change of the catalog passes `record_moves` in its own
//! transaction (through `catalog::changed`), which appends to
//! `site_versions` each site's version when it differs from the last one
//! recorded. So the table is the site's deploy history, whichever command
//! moved the tag (a publish that makes a newer release `latest` moves it
//! without touching a tag row). Skew protection reads it: a page of a
//! version the site stopped serving a moment ago may still ask for that
//! version's fingerprinted files ([`SiteState::recent`]). The history of
//! a site keeps its last [`HISTORY_KEPT`] moves.

use super::{Catalog, SqliteResult};
use crate::error::{Error, Result};
use crate::units::unix_now;
use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

/// Moves of a site kept in its history; older rows are dropped as new ones
/// come.
pub(crate) const HISTORY_KEPT: i64 = 64;

/// Versions a page may still load its fingerprinted files from once the
/// site has moved on, unless the site says otherwise.
pub(crate) const DEFAULT_SKEW_VERSIONS: u32 = 3;
/// For how long after the site stopped serving a version, unless the site
/// says otherwise.
pub(crate) const DEFAULT_SKEW_SECONDS: u64 = 24 * 60 * 60;

/// One site's settings, as `ccc site set` writes them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Site {
    /// The host, in lower case, without a port; None for the default site.
    pub host: Option<String>,
    pub package: String,
    pub tag: String,
    /// A path with no file and no extension is answered with `/index.html`.
    pub spa: bool,
    /// `/about` is answered with `/about.html`.
    pub clean_urls: bool,
    /// `Strict-Transport-Security: max-age=N` on every answer over HTTPS.
    pub hsts_max_age: Option<u64>,
    /// How many versions the site served before the current one still
    /// answer their fingerprinted files, and for how long after the site
    /// stopped serving each.
    pub skew_versions: u32,
    pub skew_seconds: u64,
}

impl Site {
    /// The host as stored: `''` for the default site.
    fn key(&self) -> &str {
        self.host.as_deref().unwrap_or("")
    }

    /// How the host is written for people: `default` for the default site.
    pub(crate) fn host_label(&self) -> &str {
        self.host.as_deref().unwrap_or("default")
    }
}

/// A version a site serves or served.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct SiteVersion {
    #[serde(skip)]
    pub id: i64,
    pub version: String,
    /// When the site began serving it (Unix seconds).
    #[serde(serialize_with = "crate::units::serialize_rfc3339")]
    pub since: i64,
    /// When the site stopped serving it; None for the current version.
    #[serde(serialize_with = "serialize_optional_time")]
    pub until: Option<i64>,
}

fn serialize_optional_time<S: serde::Serializer>(
    at: &Option<i64>,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    match at {
        Some(at) => crate::units::serialize_rfc3339(at, s),
        None => s.serialize_none(),
    }
}

/// A site, the version its tag names now, and the versions skew
/// protection still answers from, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct SiteState {
    #[serde(flatten)]
    pub site: Site,
    /// None while the package has no version at the tag.
    pub current: Option<SiteVersion>,
    pub recent: Vec<SiteVersion>,
}

/// What `ccc site set` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SiteChange {
    pub state: SiteState,
    /// Whether the host had a site before (now replaced).
    pub replaced: bool,
}

impl Catalog {
    /// Sets the site of `site.host`, replacing what it had.
    pub(crate) fn set_site(&mut self, site: &Site) -> Result<SiteChange> {
        let path = self.path().to_path_buf();
        let tx = self.write_transaction()?;
        let replaced = tx
            .query_row("SELECT 1 FROM sites WHERE host = ?1", [site.key()], |_| {
                Ok(())
            })
            .optional()
            .at(&path)?
            .is_some();
        tx.execute(
            "INSERT INTO sites (host, package, tag, spa, clean_urls, hsts_max_age,
                                skew_versions, skew_seconds)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
             ON CONFLICT (host) DO UPDATE SET
               package = excluded.package, tag = excluded.tag, spa = excluded.spa,
               clean_urls = excluded.clean_urls, hsts_max_age = excluded.hsts_max_age,
               skew_versions = excluded.skew_versions, skew_seconds = excluded.skew_seconds",
            params![
                site.key(),
                site.package,
                site.tag,
                site.spa,
                site.clean_urls,
                site.hsts_max_age.map(|s| s.min(i64::MAX as u64) as i64),
                site.skew_versions,
                site.skew_seconds.min(i64::MAX as u64) as i64,
            ],
        )
        .at(&path)?;
        // Another package at this host: its history is not this site's.
        if replaced {
            tx.execute(
                "DELETE FROM site_versions WHERE host = ?1 AND version_id NOT IN
                   (SELECT v.id FROM versions v JOIN packages p ON p.id = v.package_id
                     WHERE p.name = ?2)",
                params![site.key(), site.package],
            )
            .at(&path)?;
        }
        super::changed(&tx).at(&path)?;
        let state = state_of(&tx, site.clone(), unix_now()).at(&path)?;
        tx.commit().at(&path)?;
        Ok(SiteChange { state, replaced })
    }

    /// Removes the site of `host` (None: the default site).
    pub(crate) fn remove_site(&mut self, host: Option<&str>) -> Result<Site> {
        let path = self.path().to_path_buf();
        let tx = self.write_transaction()?;
        let key = host.unwrap_or("");
        let Some(site) = read_site(&tx, key).at(&path)? else {
            return Err(Error::SiteNotFound {
                host: host.unwrap_or("the default site").to_string(),
            });
        };
        tx.execute("DELETE FROM sites WHERE host = ?1", [key])
            .at(&path)?;
        super::changed(&tx).at(&path)?;
        tx.commit().at(&path)?;
        Ok(site)
    }

    /// Every site, by host (the default site first), with what it serves;
    /// none for a catalog older than [`super::SITES_SCHEMA`].
    pub(crate) fn sites(&self) -> Result<Vec<SiteState>> {
        if self.schema() < super::SITES_SCHEMA {
            return Ok(Vec::new());
        }
        let now = unix_now();
        let sites = all_sites(self.conn()).at(self)?;
        sites
            .into_iter()
            .map(|site| state_of(self.conn(), site, now).at(self))
            .collect()
    }
}

impl Catalog {
    /// The paths of the files of version row `version_id`.
    pub(crate) fn version_paths(&self, version_id: i64) -> Result<Vec<String>> {
        let mut stmt = self
            .conn()
            .prepare_cached("SELECT path FROM assets WHERE version_id = ?1")
            .at(self)?;
        let paths = stmt
            .query_map([version_id], |r| r.get(0))
            .at(self)?
            .collect::<rusqlite::Result<Vec<String>>>()
            .at(self)?;
        Ok(paths)
    }

    /// The bytes of a small file of `package@version` (a site's rules),
    /// checked against its digest and decoded; None when there is no such
    /// file. A file over `max` bytes is an error that names it.
    pub(crate) fn small_file(
        &self,
        package: &str,
        version: &str,
        path: &str,
        max: u64,
    ) -> Result<Option<Vec<u8>>> {
        let name = || format!("{package}@{version}/{path}");
        let Some(mut record) = self.lookup(package, version, path)? else {
            return Ok(None);
        };
        if record.raw_size > max || record.chunks.is_some() {
            return Err(Error::Usage(format!(
                "{} is {} bytes; at most {max} are read",
                name(),
                record.raw_size
            )));
        }
        record.brotli = None;
        record.check().map_err(|what| Error::Corrupt {
            path: self.path().to_path_buf(),
            what: format!("{} {what}", name()),
        })?;
        self.load_bodies(&mut record)?;
        let body = record.body.unwrap_or_default();
        let mut raw = Vec::with_capacity(record.raw_size as usize);
        std::io::Read::read_to_end(&mut record.encoding.decoder(&body[..]), &mut raw).map_err(
            |e| Error::Corrupt {
                path: self.path().to_path_buf(),
                what: format!("{} does not decode: {e}", name()),
            },
        )?;
        Ok(Some(raw))
    }
}

impl Catalog {
    /// Whether a site serves `package`, whose root paths then name its own
    /// files (`ccc check`, publish's summary).
    pub(crate) fn serves_as_site(&self, package: &str) -> Result<bool> {
        if self.schema() < super::SITES_SCHEMA {
            return Ok(false);
        }
        let found = self
            .conn()
            .query_row("SELECT 1 FROM sites WHERE package = ?1", [package], |_| {
                Ok(())
            })
            .optional()
            .at(self)?;
        Ok(found.is_some())
    }
}

const SITE_COLUMNS: &str =
    "host, package, tag, spa, clean_urls, hsts_max_age, skew_versions, skew_seconds";

fn site_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Site> {
    let host: String = r.get(0)?;
    Ok(Site {
        host: (!host.is_empty()).then_some(host),
        package: r.get(1)?,
        tag: r.get(2)?,
        spa: r.get(3)?,
        clean_urls: r.get(4)?,
        hsts_max_age: r.get::<_, Option<i64>>(5)?.map(|s| s.max(0) as u64),
        skew_versions: r.get::<_, i64>(6)?.clamp(0, u32::MAX as i64) as u32,
        skew_seconds: r.get::<_, i64>(7)?.max(0) as u64,
    })
}

fn all_sites(conn: &Connection) -> rusqlite::Result<Vec<Site>> {
    let mut stmt =
        conn.prepare_cached(&format!("SELECT {SITE_COLUMNS} FROM sites ORDER BY host"))?;
    stmt.query_map([], site_row)?.collect()
}

fn read_site(conn: &Connection, key: &str) -> rusqlite::Result<Option<Site>> {
    conn.prepare_cached(&format!("SELECT {SITE_COLUMNS} FROM sites WHERE host = ?1"))?
        .query_row([key], site_row)
        .optional()
}

/// A site's history, newest first: (version row, version, since).
fn history(conn: &Connection, key: &str) -> rusqlite::Result<Vec<(i64, String, i64)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT s.version_id, v.version, s.since FROM site_versions s
           JOIN versions v ON v.id = s.version_id
          WHERE s.host = ?1 ORDER BY s.seq DESC",
    )?;
    stmt.query_map([key], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect()
}

/// What `site` serves now and which versions before it skew protection
/// answers from at `now`: those the history shows the site stopped
/// serving less than `skew_seconds` ago, at most `skew_versions`, newest
/// first, each once and never the current one.
fn state_of(conn: &Connection, site: Site, now: i64) -> rusqlite::Result<SiteState> {
    let current_id = super::tags::version_id(conn, &site.package, &site.tag)?;
    let rows = history(conn, site.key())?;
    let mut current = None;
    let mut recent: Vec<SiteVersion> = Vec::new();
    // Each row was served from its `since` until the `since` of the row
    // before it in this order (the next move).
    let mut until: Option<i64> = None;
    for (id, version, since) in rows {
        let row = SiteVersion {
            id,
            version,
            since,
            until,
        };
        until = Some(since);
        if Some(id) == current_id {
            if current.is_none() && row.until.is_none() {
                current = Some(row);
            }
            continue;
        }
        let Some(stopped) = row.until else { continue };
        let fresh = now.saturating_sub(stopped) < site.skew_seconds.min(i64::MAX as u64) as i64;
        if fresh && recent.len() < site.skew_versions as usize && !recent.iter().any(|r| r.id == id)
        {
            recent.push(row);
        }
    }
    // A current version the history does not show (a catalog changed by
    // an older ccc): it is served all the same.
    if current.is_none()
        && let Some(id) = current_id
    {
        let version: String =
            conn.query_row("SELECT version FROM versions WHERE id = ?1", [id], |r| {
                r.get(0)
            })?;
        current = Some(SiteVersion {
            id,
            version,
            since: now,
            until: None,
        });
    }
    Ok(SiteState {
        site,
        current,
        recent,
    })
}

/// Appends to each site's history the version its tag names now, when
/// that is not the last one recorded, and drops what is past
/// [`HISTORY_KEPT`]. Runs inside every change's transaction.
pub(super) fn record_moves(conn: &Connection) -> rusqlite::Result<()> {
    let has_sites: bool = conn
        .query_row(
            "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'sites'",
            [],
            |_| Ok(()),
        )
        .optional()?
        .is_some();
    if !has_sites {
        return Ok(());
    }
    let now = unix_now();
    for site in all_sites(conn)? {
        let Some(id) = super::tags::version_id(conn, &site.package, &site.tag)? else {
            continue;
        };
        let last: Option<(i64, i64)> = conn
            .prepare_cached(
                "SELECT seq, version_id FROM site_versions WHERE host = ?1
                  ORDER BY seq DESC LIMIT 1",
            )?
            .query_row([site.key()], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        if last.is_some_and(|(_, v)| v == id) {
            continue;
        }
        let seq = last.map_or(1, |(seq, _)| seq + 1);
        conn.prepare_cached(
            "INSERT INTO site_versions (host, seq, version_id, since) VALUES (?1, ?2, ?3, ?4)",
        )?
        .execute(params![site.key(), seq, id, now])?;
        conn.prepare_cached("DELETE FROM site_versions WHERE host = ?1 AND seq <= ?2")?
            .execute(params![site.key(), seq - HISTORY_KEPT])?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Access;

    fn site(host: Option<&str>) -> Site {
        Site {
            host: host.map(str::to_string),
            package: "app".into(),
            tag: "latest".into(),
            spa: true,
            clean_urls: false,
            hsts_max_age: None,
            skew_versions: DEFAULT_SKEW_VERSIONS,
            skew_seconds: DEFAULT_SKEW_SECONDS,
        }
    }

    fn publish(catalog: &mut Catalog, version: &str) {
        use crate::catalog::publish::{self, FileEntry, NoProgress, Options, Source};
        let page = FileEntry {
            path: "index.html".into(),
            size: version.len() as u64,
            source: Source::Memory(std::sync::Arc::from(version.as_bytes())),
        };
        let version = semver::Version::parse(version).unwrap();
        let options = Options::default();
        publish::publish(
            catalog,
            "app",
            &version,
            vec![page],
            vec![],
            &options,
            &NoProgress,
        )
        .unwrap();
    }

    #[test]
    fn a_site_follows_its_tag_and_remembers_what_it_served() {
        let dir = tempfile::tempdir().unwrap();
        let mut catalog = Catalog::open(&dir.path().join("cdn.db"), Access::Create).unwrap();
        let change = catalog.set_site(&site(Some("example.com"))).unwrap();
        assert!(!change.replaced);
        assert_eq!(change.state.current, None, "no version yet");
        publish(&mut catalog, "1.0.0");
        publish(&mut catalog, "1.0.1");
        let states = catalog.sites().unwrap();
        assert_eq!(states.len(), 1);
        let state = &states[0];
        assert_eq!(state.current.as_ref().unwrap().version, "1.0.1");
        let recent: Vec<_> = state.recent.iter().map(|r| r.version.as_str()).collect();
        assert_eq!(recent, ["1.0.0"]);
        // A rollback: 1.0.1 is now the one a page may still ask for.
        let v100 = catalog
            .resolve(
                "app",
                &crate::spec::Selector::Exact("1.0.0".parse().unwrap()),
            )
            .unwrap();
        catalog.add_tag(&v100, "latest").unwrap();
        let state = &catalog.sites().unwrap()[0];
        assert_eq!(state.current.as_ref().unwrap().version, "1.0.0");
        let recent: Vec<_> = state.recent.iter().map(|r| r.version.as_str()).collect();
        assert_eq!(
            recent,
            ["1.0.1"],
            "the current version is never a recent one"
        );
    }

    #[test]
    fn skew_ends_after_its_age_and_count() {
        let dir = tempfile::tempdir().unwrap();
        let mut catalog = Catalog::open(&dir.path().join("cdn.db"), Access::Create).unwrap();
        let mut s = site(None);
        s.skew_versions = 2;
        catalog.set_site(&s).unwrap();
        for v in ["1.0.0", "1.0.1", "1.0.2", "1.0.3"] {
            publish(&mut catalog, v);
        }
        let state = &catalog.sites().unwrap()[0];
        let recent: Vec<_> = state.recent.iter().map(|r| r.version.as_str()).collect();
        assert_eq!(recent, ["1.0.2", "1.0.1"], "newest first, at most two");
        let later = state_of(catalog.conn(), s.clone(), unix_now() + 86_400).unwrap();
        assert!(later.recent.is_empty(), "a day later none is recent");
    }

    #[test]
    fn removing_a_site_names_a_missing_one() {
        let dir = tempfile::tempdir().unwrap();
        let mut catalog = Catalog::open(&dir.path().join("cdn.db"), Access::Create).unwrap();
        catalog.set_site(&site(None)).unwrap();
        assert!(catalog.set_site(&site(None)).unwrap().replaced);
        assert_eq!(catalog.remove_site(None).unwrap().package, "app");
        let err = catalog.remove_site(Some("example.com")).unwrap_err();
        assert_eq!(err.to_string(), "no site is set for example.com");
    }
}
