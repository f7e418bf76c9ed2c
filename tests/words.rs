//! The words people read: counted nouns in the singular for one, files
//! that repeat within a version told apart from stored ones,
//! "uncompressed", thread counts of 0 refused, and tables that fit the
//! terminal.

use crate::serve_util::{STARTUP, Server, get, sigterm};
use crate::util::{Rng, Workspace};

fn stdout(out: std::process::Output) -> String {
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

#[test]
fn one_of_a_thing_is_singular() {
    let ws = Workspace::new();
    ws.write("one/a.js", "let a = 1;\n");
    let published = stdout(ws.ok(&["publish", "app@1.0.0", "one"]));
    assert!(
        published.starts_with("Published app@1.0.0: 1 file, "),
        "{published}"
    );
    assert!(
        published.contains("  1 file with new content: "),
        "{published}"
    );
    let verified = stdout(ws.ok(&["verify"]));
    assert!(
        verified.starts_with("ok: 1 blob (")
            && verified.contains(" and 1 version checked, 0 problems"),
        "{verified}"
    );

    let mut server = Server::start(&ws, &["--threads", "1", "--cache-capacity", "1"]);
    assert_eq!(get(&server.url("/assets/app/1.0.0/a.js"), &[]).status, 200);
    sigterm(server.pid());
    assert!(server.wait_exit(STARTUP).is_some(), "serve did not stop");
    let stderr = server.stderr();
    assert!(
        stderr.contains(" with 1 thread; cache 1 entry / "),
        "{stderr}"
    );
    let stdout = server.stdout();
    assert!(
        stdout.contains(": 1 request, ") && stdout.contains("cache 0 hits / 1 miss / 0 evictions"),
        "{stdout}"
    );
}

#[test]
fn files_repeated_within_a_version_are_not_already_stored() {
    let ws = Workspace::new();
    ws.write("v1/a.css", "body{}\n");
    ws.write("v1/copy.css", "body{}\n");
    ws.write("v1/b.js", "let b = 2;\n");
    let first = stdout(ws.ok(&["publish", "app@1.0.0", "v1"]));
    assert!(first.contains("  2 files with new content: "), "{first}");
    assert!(
        first.contains("  1 file (7 B) repeats content of this version, stored once"),
        "{first}"
    );
    assert!(!first.contains("already"), "{first}");

    ws.write("v2/a.css", "body{}\n");
    ws.write("v2/c.js", "let c = 3;\n");
    let second = stdout(ws.ok(&["publish", "app@2.0.0", "v2"]));
    assert!(
        second.contains("  1 file (7 B) already in the catalog"),
        "{second}"
    );
    assert!(!second.contains("repeat"), "{second}");
}

#[test]
fn raw_storage_is_called_uncompressed() {
    let ws = Workspace::new();
    ws.write("dist/noise.bin", Rng::new(3).bytes(4096));
    ws.write("dist/app.js", "let x = 1;\n".repeat(200));
    ws.publish("app@1.0.0", "dist", &[]);
    let raw = stdout(ws.ok(&["inspect", "app@1.0.0/noise.bin"]));
    assert!(
        raw.contains("4.0 KiB, uncompressed (100.0% of raw)"),
        "{raw}"
    );
    assert!(raw.contains("(4096 bytes)"), "{raw}");
    let gz = stdout(ws.ok(&["inspect", "app@1.0.0/app.js"]));
    assert!(gz.contains(", gzip ("), "{gz}");
    for text in [&raw, &gz] {
        assert!(!text.contains("identity"), "{text}");
    }
    // Scripts keep HTTP's name for it.
    let json = ws.json(&["inspect", "app@1.0.0/noise.bin", "--json"]);
    assert_eq!(json["encoding"], "identity");
}

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

#[test]
fn a_missing_source_is_named_in_words_by_publish_and_check_alike() {
    let ws = Workspace::new();
    for args in [
        &["publish", "app@1.0.0", "no-such-dir"][..],
        &["publish", "app@1.0.0", "no-such.tgz"][..],
        &["check", "no-such-dir/"][..],
    ] {
        let out = ws.ccc().args(args).output().expect("run ccc");
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(": no such folder or archive") && !stderr.contains("os error"),
            "{args:?}: {stderr}"
        );
    }
    assert!(!ws.db().exists(), "a refused publish created the catalog");
}

/// The widest line of `text`, in characters (every character ccc draws
/// tables with is one column wide).
fn widest(text: &str) -> usize {
    text.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

#[test]
fn tables_fit_the_width_in_columns() {
    let ws = Workspace::new();
    let deep = format!("js/{}", "vendor/".repeat(12));
    let long_name = "a-rather-long-chunk-name.4f2a91c0.min.js";
    let mut rng = Rng::new(9);
    for i in 0..3 {
        ws.write(&format!("dist/{deep}{i}-{long_name}"), rng.text(2000));
    }
    ws.write("dist/font.woff2", rng.bytes(3000));
    ws.write("dist/site.webmanifest", "{}\n");
    ws.publish(
        "@some-scope/a-package-with-a-long-name@1.0.0-beta.12",
        "dist",
        &[],
    );
    let version = "@some-scope/a-package-with-a-long-name@latest";
    // Damage two blobs, so that verify has a table to draw.
    ws.conn()
        .execute(
            "UPDATE blobs SET body = x'00' WHERE id IN (SELECT id FROM blobs LIMIT 2)",
            [],
        )
        .expect("damage");

    for args in [
        &["ls"][..],
        &["ls", "@some-scope/a-package-with-a-long-name"],
        &["ls", version],
        &["inspect", version],
        &["inspect", &format!("{version}/{deep}0-{long_name}")],
        &["verify"],
    ] {
        let run = |columns: Option<&str>| {
            let mut cmd = ws.ccc();
            if let Some(columns) = columns {
                cmd.env("COLUMNS", columns);
            }
            let out = cmd.args(args).output().expect("run ccc");
            assert!(out.status.code().is_some_and(|c| c <= 1), "{args:?}");
            stdout(out)
        };
        let fitted = run(Some("80"));
        assert!(
            widest(&fitted) <= 80,
            "ccc {args:?} at 80 columns:\n{fitted}"
        );
        // Media types are never cut in two.
        if args.len() == 2 && args[1] == version {
            assert!(
                fitted.contains("application/manifest+json"),
                "ccc {args:?} at 80 columns:\n{fitted}"
            );
        }
        // Without a width, nothing is cut: a pipe gets whole lines.
        let whole = run(None);
        assert!(!whole.contains('…'), "ccc {args:?}:\n{whole}");
        if widest(&whole) > 80 {
            assert!(fitted.contains('…') || fitted.lines().count() > whole.lines().count());
        }
    }

    // A shortened path keeps its start and its end.
    let listing = stdout(
        ws.ccc()
            .env("COLUMNS", "80")
            .args(["ls", version])
            .output()
            .expect("ls"),
    );
    let shortened = listing
        .lines()
        .filter(|l| l.trim_start().starts_with("js/v") && l.contains('…') && l.contains(".min.js "))
        .count();
    assert_eq!(shortened, 3, "{listing}");
    // And the three, which differ only after a long common start, never
    // read alike.
    let paths: std::collections::HashSet<&str> = listing
        .lines()
        .filter(|l| l.trim_start().starts_with("js/v"))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(paths.len(), 3, "{listing}");
    let verify = stdout(
        ws.ccc()
            .env("COLUMNS", "80")
            .arg("verify")
            .output()
            .expect("verify"),
    );
    // Prose is wrapped, not cut.
    assert!(
        verify.contains("end of file") && !verify.contains("end …"),
        "{verify}"
    );
    let whole = stdout(ws.ccc().arg("verify").output().expect("verify"));
    assert!(widest(&whole) > 120, "the unfitted table is wide:\n{whole}");
}

/// Every path a fitted table shows, shortened or not, stands for one
/// path only: a shortened `head…tail` matches no other path of `all`.
fn assert_clear(shown: &[String], all: &[String], table: &str) {
    for short in shown {
        let matches: Vec<&String> = all
            .iter()
            .filter(|path| match short.split_once('…') {
                None => *path == short,
                Some((head, tail)) => {
                    path.len() > head.len() + tail.len()
                        && path.starts_with(head)
                        && path.ends_with(tail)
                }
            })
            .collect();
        assert_eq!(matches.len(), 1, "{short} reads as {matches:?}:\n{table}");
    }
}

#[test]
fn twin_trees_and_long_names_fit_80_columns_and_read_clearly() {
    let ws = Workspace::new();
    // Like an icon font's package: the same long names under svgs/ and
    // svgs-full/, in several styles, and names that differ in the middle.
    let mut paths = Vec::new();
    for tree in ["svgs", "svgs-full"] {
        for style in ["brands", "regular", "solid"] {
            for name in [
                "hands-american-sign-language-interpreting",
                "hands-asl-interpreting",
                "person-walking-dashed-line-arrow-right",
                "house-flood-water-circle-arrow-right",
            ] {
                paths.push(format!("{tree}/{style}/{name}.svg"));
            }
        }
    }
    for name in ["react-jsx-dev-runtime", "react-jsx-runtime"] {
        for build in ["development", "production", "profiling"] {
            paths.push(format!("cjs/{name}.{build}.js"));
            paths.push(format!("cjs/{name}.react-server.{build}.js"));
        }
    }
    for (i, path) in paths.iter().enumerate() {
        ws.write(&format!("one/{path}"), format!("<svg>{i}</svg>\n"));
    }
    ws.write("two/cjs/other.js", "1;\n");
    let package = "@a-long-scope-name/an-icon-font-package-with-a-long-name";
    ws.publish(&format!("{package}@7.3.1"), "one", &[]);
    ws.publish(&format!("{package}@7.3.2-beta.1"), "two", &[]);
    let one = format!("{package}@7.3.1");
    let two = format!("{package}@7.3.2-beta.1");
    for args in [
        &["ls", one.as_str()][..],
        &["ls", one.as_str(), "--limit", "0"],
        &["inspect", one.as_str()],
        &["diff", one.as_str(), two.as_str()],
    ] {
        let out = stdout(
            ws.ccc()
                .env("COLUMNS", "80")
                .args(args)
                .output()
                .expect("run ccc"),
        );
        assert!(widest(&out) <= 80, "ccc {args:?} at 80 columns:\n{out}");
        let shown: Vec<String> = out
            .lines()
            .filter_map(|l| {
                l.split_whitespace()
                    .find(|w| w.starts_with("svgs") || w.starts_with("cjs/r"))
            })
            .map(str::to_string)
            .collect();
        assert!(shown.len() >= paths.len(), "ccc {args:?}:\n{out}");
        assert!(out.contains('…'), "ccc {args:?}:\n{out}");
        assert_clear(&shown, &paths, &out);
        // Media types stay whole.
        if args[0] != "diff" {
            assert!(out.contains("image/svg+xml"), "ccc {args:?}:\n{out}");
        }
    }
}

/// A path typo gets a did-you-mean: `cat` and `inspect` name the paths a
/// typo away (another case, a missing folder, a swapped letter); the
/// server's 404 names the path when only its case differs, in words and
/// in `did_you_mean`.
#[test]
fn a_path_typo_gets_a_did_you_mean() {
    let ws = Workspace::new();
    ws.write("dist/img/Logo.png", "PNG");
    ws.write("dist/js/main.js", "export {};\n");
    ws.publish("app@1.0.0", "dist", &[]);
    for (command, asked, meant) in [
        ("cat", "img/logo.png", "img/Logo.png"),
        ("inspect", "main.js", "js/main.js"),
        ("cat", "js/mian.js", "js/main.js"),
    ] {
        let out = ws.fails(&[command, &format!("app@1.0.0/{asked}")], 1);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!("error: {asked} is not a file of app@1.0.0"))
                && err.contains(&format!(
                    "hint: did you mean `app@1.0.0/{meant}`? `ccc ls app@1.0.0` lists its files"
                )),
            "{command} {asked}: {err}"
        );
    }
    let out = ws.fails(&["cat", "app@1.0.0/css/app.css"], 1);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("hint: `ccc ls app@1.0.0` lists its files") && !err.contains("did you mean"),
        "{err}"
    );

    let server = Server::start(&ws, &[]);
    let r = get(&server.url("/assets/app/1.0.0/img/logo.png"), &[]);
    assert_eq!(r.status, 404);
    let body = r.json();
    assert_eq!(
        body["error"],
        "app@1.0.0 has no file img/logo.png; paths are case-sensitive: did you mean img/Logo.png?"
    );
    assert_eq!(body["did_you_mean"], "img/Logo.png");
    let r = get(&server.url("/assets/app/1.0.0/img/gone.png"), &[]);
    assert!(r.json().get("did_you_mean").is_none(), "{}", r.text());
}

/// A usage line shows the command's own usage, never the flags the
/// command line happened to give: `ccc publish --tag next` without a
/// source must not read as if `--tag` were required.
#[test]
fn usage_lines_do_not_make_given_flags_look_required() {
    let ws = Workspace::new();
    ws.write("dist/a.js", "1;\n");
    for args in [
        &["publish", "--tag", "next"][..],
        &["publish", "--strict", "--no-check", "dist"],
        &["publish", "--tag", "next", "--json"],
    ] {
        let out = ws.fails(args, 2);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("Usage: ccc publish [OPTIONS] <[PKG@VERSION] SOURCE>...")
                && !err.contains("Usage: ccc publish --"),
            "{args:?}: {err}"
        );
    }
    let out = ws.fails(&["ls", "--limit"], 2);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("Usage: ccc ls --limit"), "{err}");
}
