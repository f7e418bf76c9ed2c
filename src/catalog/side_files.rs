//! The names of the files that sit beside a catalog: SQLite's own (`-wal`,
//! `-shm`, `-journal`) and the follower's mark (`DB.follow`). The catalog
//! owns them, so that opening one (which refuses to write a replica's copy)
//! and the follower (which writes the mark) name them in one place.

use std::path::{Path, PathBuf};

/// `path` with `suffix` appended: `side(db, "-wal")` is the catalog's log.
pub(crate) fn side(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(suffix);
    PathBuf::from(name)
}

/// The file a follower writes beside the catalog at `db` each time it has
/// checked it against the replica: its heartbeat (`ccc serve --max-lag`),
/// its position (`ccc follow`), and the mark of a replica's copy, which
/// write commands refuse (`Catalog::open`).
pub(crate) fn heartbeat_path(db: &Path) -> PathBuf {
    side(db, ".follow")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_side_file_is_the_whole_name_and_a_suffix() {
        assert_eq!(
            side(Path::new("dir/cdn.db"), "-wal"),
            Path::new("dir/cdn.db-wal")
        );
        assert_eq!(
            heartbeat_path(Path::new("cdn.db")),
            Path::new("cdn.db.follow")
        );
    }
}
