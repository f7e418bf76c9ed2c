//! The catalog's generation: a number every change raises by one, and the
//! time of that change, stamped in `meta` by the writer inside the
//! transaction that makes the change. A server reports both (`/healthz`,
//! `/metrics`), so an operator can tell which catalog a server or a
//! replica answers from, and how old it is, from the outside: two replicas
//! at the same generation serve the same catalog, and one behind is stale
//! by the difference.
//!
//! A catalog written before generations existed has no row: `None` until
//! its first change, which starts it at 1. Nothing else about the schema
//! changes, so no migration is needed and older ccc builds ignore the
//! rows.

use super::{Catalog, SqliteResult};
use crate::error::Result;
use crate::units::unix_now;
use rusqlite::{Connection, OptionalExtension};
use serde::Serialize;

/// Which change of the catalog this is, and when it was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) struct Generation {
    /// Changes made since the catalog started counting them.
    pub number: u64,
    /// When the last one was committed, in seconds since the Unix epoch.
    pub changed_at: i64,
}

/// Raises the generation inside `tx`, the transaction of a change, just
/// before it commits (through [`super::changed`]).
pub(super) fn stamp(tx: &Connection) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT INTO meta (key, value) VALUES ('generation', '1')
         ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1",
        [],
    )?;
    tx.execute(
        "INSERT INTO meta (key, value) VALUES ('changed_at', ?1)
         ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        [unix_now().to_string()],
    )?;
    Ok(())
}

impl Catalog {
    /// The catalog's generation; None for a catalog never changed since it
    /// started counting (module doc).
    pub(crate) fn generation(&self) -> Result<Option<Generation>> {
        let read = |key: &str| -> Result<Option<i64>> {
            let value: Option<String> = self
                .conn()
                .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
                .optional()
                .at(self)?;
            Ok(value.and_then(|v| v.parse().ok()))
        };
        Ok(match (read("generation")?, read("changed_at")?) {
            (Some(number), Some(changed_at)) => Some(Generation {
                number: number.max(0) as u64,
                changed_at,
            }),
            _ => None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Access;

    #[test]
    fn every_stamp_raises_the_generation_by_one() {
        let dir = tempfile::tempdir().unwrap();
        let catalog = Catalog::open(&dir.path().join("cdn.db"), Access::Create).unwrap();
        assert_eq!(catalog.generation().unwrap(), None);
        for n in 1..=3 {
            let tx = catalog.write_transaction().unwrap();
            stamp(&tx).unwrap();
            tx.commit().unwrap();
            let generation = catalog.generation().unwrap().unwrap();
            assert_eq!(generation.number, n);
            assert!((generation.changed_at - unix_now()).abs() <= 1);
        }
        // A change rolled back leaves it as it was.
        let tx = catalog.write_transaction().unwrap();
        stamp(&tx).unwrap();
        tx.rollback().unwrap();
        assert_eq!(catalog.generation().unwrap().unwrap().number, 3);
    }
}
