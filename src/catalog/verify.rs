//! Verification: is every byte of the catalog what it claims to be?
//!
//! In order: SQLite's own `integrity_check` and `foreign_key_check`; every
//! blob decodes (gzip or identity) to exactly its recorded size and sha256;
//! every version's recorded totals match its assets. Blobs are read one at a
//! time, so memory stays at the largest blob whatever the catalog's size.
//! Ctrl-C is noticed every 64 KiB of decoded content (see `interrupt`).
//!
//! The blob check is also the server's: [`StoredAsset::check`] applies it to
//! every body the server loads, before the body is cached or sent.

use super::Catalog;
use super::query::StoredAsset;
use crate::error::Result;
use flate2::read::MultiGzDecoder;
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::io::Read;

/// One thing found wrong.
#[derive(Debug, Clone, Serialize)]
pub struct Problem {
    /// `database`, `blob` or `version`.
    pub kind: &'static str,
    /// What is wrong: a blob's sha256, `pkg@version`, or the check's name.
    pub object: String,
    pub detail: String,
    /// Files affected (`pkg@version/path`): every file of a bad blob;
    /// empty for the other kinds.
    pub affects: Vec<String>,
}

/// The result of a verify run: what was checked, and every problem found.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// No problems (the command exits 0).
    pub ok: bool,
    pub blob_count: u64,
    /// Stored bytes of the blobs, every one of them read and decoded.
    pub stored_bytes: u64,
    pub version_count: u64,
    pub problems: Vec<Problem>,
}

impl Catalog {
    /// Checks the catalog; `progress(bytes)` is called after each blob with
    /// its stored size, out of `blob_totals().1`.
    pub fn verify(&self, progress: &dyn Fn(u64)) -> Result<Report> {
        let mut problems = Vec::new();
        for check in ["integrity_check", "foreign_key_check"] {
            let mut stmt = self
                .conn()
                .prepare(&format!("PRAGMA {check}"))
                .map_err(|e| self.err(e))?;
            let columns = stmt.column_count();
            let rows: Vec<String> = stmt
                .query_map([], |r| {
                    let cells: Vec<String> = (0..columns)
                        .map(|i| {
                            r.get::<_, rusqlite::types::Value>(i)
                                .map(|v| format!("{v:?}"))
                                .unwrap_or_default()
                        })
                        .collect();
                    Ok(cells.join(" "))
                })
                .map_err(|e| self.err(e))?
                .collect::<rusqlite::Result<_>>()
                .map_err(|e| self.err(e))?;
            for row in rows {
                if check == "integrity_check" && row == "Text(\"ok\")" {
                    continue;
                }
                problems.push(Problem {
                    kind: "database",
                    object: check.to_string(),
                    detail: row,
                    affects: Vec::new(),
                });
            }
        }

        let (mut blob_count, mut stored_bytes) = (0u64, 0u64);
        let mut bad_blobs = Vec::new();
        {
            let mut stmt = self
                .conn()
                .prepare("SELECT id, sha256, raw_size, encoding, body FROM blobs ORDER BY id")
                .map_err(|e| self.err(e))?;
            let mut rows = stmt.query([]).map_err(|e| self.err(e))?;
            while let Some(row) = rows.next().map_err(|e| self.err(e))? {
                let id: i64 = row.get(0).map_err(|e| self.err(e))?;
                let sha: Vec<u8> = row.get(1).map_err(|e| self.err(e))?;
                let raw_size: i64 = row.get(2).map_err(|e| self.err(e))?;
                let encoding: String = row.get(3).map_err(|e| self.err(e))?;
                let body = row.get_ref(4).map_err(|e| self.err(e))?;
                let body = body.as_blob().unwrap_or_default();
                if let Some(detail) =
                    check_blob(&sha, raw_size, &encoding, body, crate::interrupt::check)?
                {
                    bad_blobs.push((id, hex::encode(&sha), detail));
                }
                blob_count += 1;
                stored_bytes += body.len() as u64;
                progress(body.len() as u64);
            }
        }
        for (id, sha, detail) in bad_blobs {
            problems.push(Problem {
                kind: "blob",
                object: sha,
                detail,
                affects: self.blob_users(id)?,
            });
        }

        let mut stmt = self
            .conn()
            .prepare(
                "SELECT p.name, v.version, v.file_count, v.raw_bytes, v.stored_bytes,
                        count(a.path), coalesce(sum(b.raw_size), 0), coalesce(sum(length(b.body)), 0)
                   FROM versions v JOIN packages p ON p.id = v.package_id
                   LEFT JOIN assets a ON a.version_id = v.id
                   LEFT JOIN blobs b ON b.id = a.blob_id
                  GROUP BY v.id ORDER BY p.name, v.id",
            )
            .map_err(|e| self.err(e))?;
        let versions: Vec<(String, String, [i64; 6])> = stmt
            .query_map([], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    [
                        r.get(2)?,
                        r.get(3)?,
                        r.get(4)?,
                        r.get(5)?,
                        r.get(6)?,
                        r.get(7)?,
                    ],
                ))
            })
            .map_err(|e| self.err(e))?
            .collect::<rusqlite::Result<_>>()
            .map_err(|e| self.err(e))?;
        let version_count = versions.len() as u64;
        for (package, version, [files, raw, stored, real_files, real_raw, real_stored]) in versions
        {
            let object = format!("{package}@{version}");
            let mut mismatch = |what: &str, recorded: i64, actual: i64| {
                if recorded != actual {
                    problems.push(Problem {
                        kind: "version",
                        object: object.clone(),
                        detail: format!("records {recorded} {what}, its assets have {actual}"),
                        affects: Vec::new(),
                    });
                }
            };
            mismatch("files", files, real_files);
            mismatch("raw bytes", raw, real_raw);
            mismatch("stored bytes", stored, real_stored);
            if real_files == 0 {
                problems.push(Problem {
                    kind: "version",
                    object,
                    detail: "has no files".into(),
                    affects: Vec::new(),
                });
            }
        }
        Ok(Report {
            ok: problems.is_empty(),
            blob_count,
            stored_bytes,
            version_count,
            problems,
        })
    }
}

impl StoredAsset {
    /// Whether the body is what its record says: decoded (when gzip), it
    /// has the recorded size and sha256. What the server checks before it
    /// caches or sends a body it loaded; `Err` says what is wrong.
    pub fn check(&self) -> std::result::Result<(), String> {
        let encoding = if self.gzip { "gzip" } else { "identity" };
        // Never interrupted: a server finishing its requests after SIGTERM
        // still checks what it sends.
        let never = || Ok(());
        match check_blob(
            &self.sha256,
            self.raw_size as i64,
            encoding,
            &self.body,
            never,
        ) {
            Ok(None) => Ok(()),
            Ok(Some(wrong)) => Err(wrong),
            Err(e) => Err(e.to_string()),
        }
    }
}

/// Decodes one blob and compares it with its record: `Ok(None)` when it
/// matches, `Ok(Some(problem))` when not. `poll` runs every 64 KiB of
/// content; its error stops the check.
fn check_blob(
    sha: &[u8],
    raw_size: i64,
    encoding: &str,
    body: &[u8],
    poll: impl Fn() -> Result<()>,
) -> Result<Option<String>> {
    const CHUNK: usize = 64 * 1024;
    let mut hasher = Sha256::new();
    let size = match encoding {
        "identity" => {
            for chunk in body.chunks(CHUNK) {
                poll()?;
                hasher.update(chunk);
            }
            body.len() as u64
        }
        "gzip" => {
            // A small body may decode to a lot: the check is per chunk out.
            let mut decoder = MultiGzDecoder::new(body);
            let mut buf = vec![0u8; CHUNK];
            let mut total = 0u64;
            loop {
                poll()?;
                match decoder.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        hasher.update(&buf[..n]);
                        total += n as u64;
                    }
                    Err(e) => return Ok(Some(format!("gzip stream does not decode: {e}"))),
                }
            }
            total
        }
        other => return Ok(Some(format!("unknown encoding `{other}`"))),
    };
    if size != raw_size as u64 {
        return Ok(Some(format!(
            "decodes to {}, recorded {raw_size}",
            crate::output::count(size, "byte")
        )));
    }
    let digest: [u8; 32] = hasher.finalize().into();
    if digest[..] != *sha {
        return Ok(Some(format!("content hashes to {}", hex::encode(digest))));
    }
    Ok(None)
}
