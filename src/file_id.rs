//! Which file a path names, whatever the name: its device and inode. A
//! hard link or a second path to a file has the same id, and a file
//! replaced under the same path (a `mv` of a new catalog over the old one)
//! has another.

use std::fs::Metadata;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// One file: device and inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct FileId {
    dev: u64,
    ino: u64,
}

impl FileId {
    /// The file `meta` describes.
    pub(crate) fn of(meta: &Metadata) -> FileId {
        FileId {
            dev: meta.dev(),
            ino: meta.ino(),
        }
    }

    /// The file `path` names now, following symlinks.
    pub(crate) fn at(path: &Path) -> std::io::Result<FileId> {
        Ok(FileId::of(&std::fs::metadata(path)?))
    }
}
