//! Shared helpers: a hermetic `ccc` command and temporary workspaces.

use assert_cmd::Command;
use std::path::{Path, PathBuf};

/// A temporary directory holding a catalog (`cdn.db`) and source trees.
pub struct Workspace {
    pub dir: tempfile::TempDir,
}

impl Workspace {
    pub fn new() -> Workspace {
        Workspace {
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn db(&self) -> PathBuf {
        self.path().join("cdn.db")
    }

    /// `ccc` with `--db` pointing into this workspace and no environment
    /// leaking in from the developer's shell.
    pub fn ccc(&self) -> Command {
        let mut cmd = ccc();
        cmd.current_dir(self.path()).env("CCC_DB_PATH", self.db());
        cmd
    }

    /// Writes `contents` at `rel` below the workspace, creating folders.
    pub fn write(&self, rel: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.path().join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, contents).expect("write");
        path
    }
}

/// The `ccc` binary with every `CCC_*`, `NO_COLOR` and `COLUMNS` variable
/// cleared.
pub fn ccc() -> Command {
    let mut cmd = Command::cargo_bin("ccc").expect("ccc binary");
    for (key, _) in std::env::vars() {
        if key.starts_with("CCC_") || key == "NO_COLOR" || key == "COLUMNS" {
            cmd.env_remove(key);
        }
    }
    cmd
}

/// The repository root (where Cargo.toml is).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}
