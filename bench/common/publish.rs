//! What the in-process benchmarks share: publishing files held in memory
//! as `app@1.0.0` into a new catalog.

use ccc::testing::catalog::publish::{self, FileEntry, NoProgress, Options, Source};
use ccc::testing::catalog::{Access, Catalog};
use std::path::Path;
use std::sync::Arc;

/// Publishes `files` (path, bytes) as `app@1.0.0` into a catalog at `db`.
pub fn app_1_0_0(db: &Path, files: &[(String, Vec<u8>)]) {
    let mut catalog = Catalog::open(db, Access::Create).expect("create");
    let entries = files
        .iter()
        .map(|(path, bytes)| FileEntry {
            path: path.clone(),
            size: bytes.len() as u64,
            source: Source::Memory(Arc::from(&bytes[..])),
        })
        .collect();
    publish::publish(
        &mut catalog,
        "app",
        &semver::Version::new(1, 0, 0),
        entries,
        vec![],
        &Options::default(),
        &NoProgress,
    )
    .expect("publish");
}
