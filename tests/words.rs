//! The words people read: thread counts of 0 refused.

use crate::util::Workspace;

#[test]
fn zero_threads_are_refused() {
    let ws = Workspace::new();
    ws.write("dist/a.js", "a\n");
    for (args, env) in [
        (&["publish", "app@1.0.0", "dist", "--jobs", "0"][..], None),
        (&["publish", "app@1.0.0", "dist", "-j", "0"][..], None),
        (&["serve", "--port", "0", "--threads", "0"][..], None),
        (&["serve", "--port", "0"][..], Some(("CCC_THREADS", "0"))),
    ] {
        let mut cmd = ws.ccc();
        if let Some((key, value)) = env {
            cmd.env(key, value);
        }
        let out = cmd.args(args).output().expect("run ccc");
        assert_eq!(out.status.code(), Some(2), "{args:?} {env:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("must be at least 1"), "{args:?}: {stderr}");
    }
    assert!(!ws.db().exists(), "a refused publish created the catalog");
}
