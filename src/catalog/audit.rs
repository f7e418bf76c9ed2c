//! The audit log: one row per change asked of the catalog over HTTP
//! (publish, replace, a dist-tag moved, a version removed), per refused
//! attempt, and per token made or revoked, in the catalog itself so that
//! replicas and backups keep it. `ccc audit` lists it.
//!
//! A row names the token by its name, never by its secret, the client by
//! its address (the one `--trust-proxy` resolves), what was asked, when,
//! and how it ended: the HTTP status (0 for what the administrator did on
//! the machine), and a detail in words. A successful publish's row is
//! written in the publish's own transaction, so the version and its row
//! commit together or not at all.

use super::{Catalog, SqliteResult};
use crate::error::Result;
use crate::units::unix_now;
use rusqlite::{Connection, params};
use serde::Serialize;

/// One row of the audit log.
#[derive(Debug, Clone, Serialize)]
pub struct Entry {
    #[serde(skip)]
    pub id: i64,
    #[serde(serialize_with = "crate::units::serialize_rfc3339")]
    pub at: i64,
    /// The token's name; None when no token was accepted.
    pub token: Option<String>,
    /// The client's address, or `local` for the administrator.
    pub client: String,
    /// `publish`, `replace`, `tag-add`, `tag-rm`, `remove`,
    /// `token-create`, `token-revoke`, or `auth` for a refused bearer.
    pub action: String,
    /// `PKG@VERSION`, `PKG TAG`, or a token's name.
    pub target: String,
    /// The HTTP status of the answer; 0 for a local action.
    pub status: u16,
    pub detail: String,
}

impl Entry {
    /// What the administrator did on the machine.
    pub(crate) fn local(action: &str, target: &str, status: u16, detail: &str) -> Entry {
        Entry {
            id: 0,
            at: unix_now(),
            token: None,
            client: "local".into(),
            action: action.into(),
            target: target.into(),
            status,
            detail: detail.into(),
        }
    }
}

/// Appends `entry` within the transaction `tx` is in.
pub(crate) fn record(tx: &Connection, entry: &Entry) -> rusqlite::Result<()> {
    tx.prepare_cached(
        "INSERT INTO audit (at, token, client, action, target, status, detail)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?
    .execute(params![
        entry.at,
        entry.token,
        entry.client,
        entry.action,
        entry.target,
        entry.status,
        entry.detail
    ])?;
    if let Some(token) = &entry.token {
        tx.prepare_cached(
            "UPDATE tokens SET last_used_at = ?2 WHERE name = ?1 AND revoked_at IS NULL",
        )?
        .execute(params![token, entry.at])?;
    }
    Ok(())
}

impl Catalog {
    /// Appends `entry` in a transaction of its own.
    pub(crate) fn audit(&self, entry: &Entry) -> Result<()> {
        let tx = self.write_transaction()?;
        record(&tx, entry).at(self.path())?;
        tx.commit().at(self.path())
    }

    /// The newest `limit` rows (all with None), oldest first, of those at
    /// or after `since` (unix seconds) and, with `token`, of that token.
    pub(crate) fn audit_log(
        &self,
        since: Option<i64>,
        token: Option<&str>,
        limit: Option<u64>,
    ) -> Result<Vec<Entry>> {
        if !self.has_tokens() {
            return Ok(Vec::new());
        }
        let mut stmt = self
            .conn()
            .prepare(
                "SELECT id, at, token, client, action, target, status, detail FROM audit
                  WHERE at >= ?1 AND (?2 IS NULL OR token = ?2)
                  ORDER BY id DESC LIMIT ?3",
            )
            .at(self.path())?;
        let limit = limit.map_or(-1, |n| i64::try_from(n).unwrap_or(i64::MAX));
        let mut rows = stmt
            .query_map(params![since.unwrap_or(i64::MIN), token, limit], |r| {
                Ok(Entry {
                    id: r.get(0)?,
                    at: r.get(1)?,
                    token: r.get(2)?,
                    client: r.get(3)?,
                    action: r.get(4)?,
                    target: r.get(5)?,
                    status: r.get(6)?,
                    detail: r.get(7)?,
                })
            })
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
            .at(self.path())?;
        rows.reverse();
        Ok(rows)
    }
}
