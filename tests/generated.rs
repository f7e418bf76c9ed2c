//! The committed completions and man pages match what the clap definitions
//! generate. `CCC_BLESS=1 cargo test generated` rewrites them.

use crate::util::repo_root;

#[test]
fn completions_and_man_pages_are_fresh() {
    let bless = std::env::var_os("CCC_BLESS").is_some_and(|v| v == "1");
    let mut stale = Vec::new();
    for (rel, want) in ccc::cmd::generate::render().expect("render") {
        let path = repo_root().join(&rel);
        let have = std::fs::read(&path).unwrap_or_default();
        if have != want {
            if bless {
                std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
                std::fs::write(&path, &want).expect("write");
            } else {
                stale.push(rel.display().to_string());
            }
        }
    }
    assert!(
        stale.is_empty(),
        "stale generated files: {stale:?}\nrun `CCC_BLESS=1 cargo test generated` and commit the result"
    );
}
