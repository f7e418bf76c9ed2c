//! `ccc publish`: what goes in comes out byte for byte, atomically.

use crate::util::{Workspace, repo_root};

#[test]
fn example_site_round_trips_through_cat() {
    let ws = Workspace::new();
    let site = repo_root().join("examples/site");
    ws.ccc()
        .args(["publish", "demo-site@1.0.0"])
        .arg(&site)
        .assert()
        .success();
    for entry in walkdir::WalkDir::new(&site) {
        let entry = entry.unwrap();
        if !entry.file_type().is_file() {
            continue;
        }
        let rel = entry.path().strip_prefix(&site).unwrap().to_str().unwrap();
        let out = ws
            .ccc()
            .args(["cat", &format!("demo-site@1.0.0/{rel}")])
            .output()
            .unwrap();
        assert!(out.status.success(), "cat {rel}");
        assert_eq!(out.stdout, std::fs::read(entry.path()).unwrap(), "{rel}");
    }
}

#[test]
fn an_existing_version_is_refused_without_force() {
    let ws = Workspace::new();
    ws.write("dist/a.js", "console.log(1)\n");
    ws.ccc()
        .args(["publish", "app@1.0.0", "dist"])
        .assert()
        .success();
    ws.ccc()
        .args(["publish", "app@1.0.0", "dist"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("app@1.0.0 is already published"));
}
