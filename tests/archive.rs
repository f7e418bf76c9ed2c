//! `ccc publish [PKG@VERSION] FILE.tgz|-`: archives publish like
//! directories, `npm pack` output included, and hostile ones are refused
//! whole.

use crate::util::{Rng, Workspace};
use flate2::{Compression, write::GzEncoder};
use std::io::Write;
use std::path::Path;
use std::process::Command;

/// One raw tar entry (header, data, padding) with any name and link
/// target, bytes as given: the tar crate's builder refuses the hostile
/// names these tests need.
fn entry(name: &[u8], kind: tar::EntryType, link: &[u8], data: &[u8]) -> Vec<u8> {
    let mut header = tar::Header::new_gnu();
    {
        let old = header.as_old_mut();
        old.name[..name.len()].copy_from_slice(name);
        old.linkname[..link.len()].copy_from_slice(link);
    }
    header.set_entry_type(kind);
    header.set_mode(0o644);
    header.set_size(data.len() as u64);
    header.set_cksum();
    let mut out = header.as_bytes().to_vec();
    out.extend_from_slice(data);
    out.resize(out.len().div_ceil(512) * 512, 0);
    out
}

fn file(name: &str, data: &[u8]) -> Vec<u8> {
    entry(name.as_bytes(), tar::EntryType::Regular, b"", data)
}

/// A PAX extended header giving the next entry's `path`.
fn pax_path(path: &[u8]) -> Vec<u8> {
    let body_len = " path=".len() + path.len() + 1;
    let mut len = body_len + 1;
    while len != body_len + len.to_string().len() {
        len = body_len + len.to_string().len();
    }
    let mut record = format!("{len} path=").into_bytes();
    record.extend_from_slice(path);
    record.push(b'\n');
    entry(b"PaxHeader", tar::EntryType::XHeader, b"", &record)
}

/// Runs a publish that must fail naming every one of `needles`, and leave
/// the catalog as it was: unchanged, or still absent.
#[track_caller]
fn refused(ws: &Workspace, args: &[&str], needles: &[&str]) {
    if ws.db().exists() {
        ws.publish_fails(args, needles);
        return;
    }
    let out = ws.fails(args, 1);
    let stderr = String::from_utf8_lossy(&out.stderr);
    for needle in needles {
        assert!(
            stderr.contains(needle),
            "ccc {args:?}: no {needle:?} in:\n{stderr}"
        );
    }
    assert!(!ws.db().exists(), "ccc {args:?} failed but left a catalog");
}

/// A tar archive of `entries` with its end-of-archive blocks.
fn tar(entries: &[Vec<u8>]) -> Vec<u8> {
    let mut out = entries.concat();
    out.extend_from_slice(&[0; 1024]);
    out
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut gz = GzEncoder::new(Vec::new(), Compression::fast());
    gz.write_all(bytes).expect("gzip into memory");
    gz.finish().expect("gzip into memory")
}

/// `npm pack` of a small package in `dir`, written into `dir`; the path
/// of the tarball. npm is on every machine this project tests on, so its
/// absence fails the test rather than skipping it.
fn npm_pack(dir: &Path) -> std::path::PathBuf {
    let out = Command::new("npm")
        .args(["pack", "--json", "--pack-destination"])
        .arg(dir)
        .current_dir(dir)
        .env("npm_config_cache", dir.join(".npm-cache"))
        .env("npm_config_update_notifier", "false")
        .output()
        .expect("npm must be installed to run this test (it packs a real tarball)");
    assert!(
        out.status.success(),
        "npm pack failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("npm pack --json");
    dir.join(report[0]["filename"].as_str().expect("filename"))
}

/// A package as a build would leave it, packed by npm itself.
fn packed(ws: &Workspace) -> std::path::PathBuf {
    let mut rng = Rng::new(7);
    ws.write(
        "pkg/package.json",
        r#"{"name":"@demo/widget","version":"1.2.3","main":"dist/index.js","files":["dist/"]}"#,
    );
    ws.write("pkg/dist/index.js", rng.text(40_000));
    ws.write("pkg/dist/css/site.css", "body{margin:0}\n".repeat(100));
    ws.write("pkg/dist/img/noise.bin", rng.bytes(5000));
    ws.write("pkg/README.md", "# widget\n");
    ws.write("pkg/src/secret.ts", "left out by `files`\n");
    npm_pack(&ws.path().join("pkg"))
}

const WIDGET_FILES: &[&str] = &[
    "README.md",
    "dist/css/site.css",
    "dist/img/noise.bin",
    "dist/index.js",
    "package.json",
];

#[test]
fn npm_pack_output_publishes_under_its_own_name_without_package_prefix() {
    let ws = Workspace::new();
    let tgz = packed(&ws);
    let report = ws.json(&["publish", tgz.to_str().unwrap(), "--json"]);
    assert_eq!(report["package"], "@demo/widget");
    assert_eq!(report["version"], "1.2.3");
    assert_eq!(ws.paths("@demo/widget@1.2.3"), WIDGET_FILES);
    for path in WIDGET_FILES {
        assert_eq!(
            ws.cat(&format!("@demo/widget@1.2.3/{path}")),
            std::fs::read(ws.path().join("pkg").join(path)).unwrap(),
            "{path}"
        );
    }
    // Told by its bytes, not its name.
    let renamed = ws.path().join("build-output.bin");
    std::fs::copy(&tgz, &renamed).unwrap();
    ws.ok(&["publish", "widget@9.0.0", renamed.to_str().unwrap(), "-q"]);
    assert_eq!(ws.paths("widget@9.0.0"), WIDGET_FILES);
}

#[test]
fn an_archive_on_stdin_publishes_gzipped_or_plain() {
    let ws = Workspace::new();
    let tgz = std::fs::read(packed(&ws)).unwrap();
    ws.ccc()
        .args(["publish", "-", "-q"])
        .write_stdin(tgz.clone())
        .assert()
        .success();
    assert_eq!(ws.paths("@demo/widget@1.2.3"), WIDGET_FILES);
    let mut plain = Vec::new();
    std::io::copy(&mut flate2::read::GzDecoder::new(&tgz[..]), &mut plain).unwrap();
    ws.ccc()
        .args(["publish", "widget@2.0.0", "-", "-q"])
        .write_stdin(plain)
        .assert()
        .success();
    assert_eq!(ws.paths("widget@2.0.0"), WIDGET_FILES);
    assert_eq!(
        ws.cat("widget@2.0.0/dist/index.js"),
        ws.cat("@demo/widget@1.2.3/dist/index.js")
    );
    // The same version again is refused, like a directory's.
    ws.ccc()
        .args(["publish", "-"])
        .write_stdin(tgz)
        .assert()
        .code(1)
        .stderr(predicates::str::contains(
            "@demo/widget@1.2.3 is already published",
        ));
    // Nothing on stdin is named as it was given: `-`.
    ws.ccc()
        .args(["publish", "widget@3.0.0", "-"])
        .write_stdin(Vec::new())
        .assert()
        .code(1)
        .stderr(predicates::str::contains(
            "error: - (stdin): is empty, not a tar archive",
        ));
}

#[test]
fn a_directory_without_version_is_named_by_its_package_json() {
    let ws = Workspace::new();
    ws.write("site/package.json", r#"{"name":"site","version":"0.3.0"}"#);
    ws.write("site/index.html", "<p>hi</p>");
    ws.ok(&["publish", "site", "-q"]);
    assert_eq!(ws.paths("site@0.3.0"), ["index.html", "package.json"]);
    ws.write("bare/index.html", "<p>hi</p>");
    refused(
        &ws,
        &["publish", "bare"],
        &["bare", "has no package.json", "PKG@VERSION"],
    );
    ws.write(
        "bad/package.json",
        r#"{"name":"@Team/site","version":"1.0.0"}"#,
    );
    refused(
        &ws,
        &["publish", "bad"],
        &["bad/package.json", "`name`", "scope must be lowercase"],
    );
    // A forgotten source is named as such.
    ws.ccc()
        .args(["publish", "app@1.0.0"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("SOURCE to publish is missing"));
    // So is a source given before the version.
    ws.write("dist/index.html", "<p>home</p>");
    ws.ccc()
        .args(["publish", "dist", "app@1.0.0"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "arguments swapped? usage: ccc publish PKG@VERSION SOURCE",
        ));
}

#[test]
fn plain_archives_keep_their_layout_and_follow_directory_rules() {
    let ws = Workspace::new();
    let archive = tar(&[
        entry(b"./", tar::EntryType::Directory, b"", b""),
        file("./index.html", b"<p>home</p>"),
        file("./dist/app.js", b"app()"),
        file("./.git/config", b"[core]"),
        file("./docs/guide.md", b"guide"),
        file("./.DS_Store", b"junk"),
    ]);
    ws.write("site.tar", &archive);
    ws.ok(&[
        "publish",
        "site@1.0.0",
        "site.tar",
        "--exclude",
        "docs",
        "-q",
    ]);
    assert_eq!(ws.paths("site@1.0.0"), ["dist/app.js", "index.html"]);
    // A file first: nothing to strip, every entry stays where it is.
    ws.write(
        "flat.tar",
        tar(&[file("index.html", b"x"), file("js/app.js", b"y")]),
    );
    let report = ws.json(&["publish", "site@2.0.0", "flat.tar", "--json"]);
    assert_eq!(report["stripped_folder"], serde_json::Value::Null);
    assert_eq!(ws.paths("site@2.0.0"), ["index.html", "js/app.js"]);
}

/// A tarball as `@types/react` ships it: its files below `react/`, not
/// `package/`.
fn types_react() -> Vec<u8> {
    gzip(&tar(&[
        entry(b"react/", tar::EntryType::Directory, b"", b""),
        file("react/LICENSE", b"MIT"),
        file(
            "react/package.json",
            br#"{"name":"@types/react","version":"18.3.3","types":"index.d.ts"}"#,
        ),
        file("react/index.d.ts", b"export = React;"),
        file("react/ts5.0/jsx-runtime.d.ts", b"export {};"),
    ]))
}

const TYPES_REACT_FILES: &[&str] = &[
    "LICENSE",
    "index.d.ts",
    "package.json",
    "ts5.0/jsx-runtime.d.ts",
];

#[test]
fn the_top_folder_is_stripped_whatever_its_name_as_npm_does() {
    let ws = Workspace::new();
    ws.write("types-react-18.3.3.tgz", types_react());
    let out = ws.ok(&["publish", "types-react-18.3.3.tgz"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("Published @types/react@18.3.3")
            && stdout.contains("the archive's top folder `react/` stripped from every path"),
        "{stdout}"
    );
    assert_eq!(ws.paths("@types/react@18.3.3"), TYPES_REACT_FILES);
    assert_eq!(ws.cat("@types/react@18.3.3/index.d.ts"), b"export = React;");

    // Given a name, the same: the folder is never part of the version.
    let report = ws.json(&[
        "publish",
        "types-react@1.0.0",
        "types-react-18.3.3.tgz",
        "--json",
    ]);
    assert_eq!(report["stripped_folder"], "react");
    assert_eq!(ws.paths("types-react@1.0.0"), TYPES_REACT_FILES);

    // npm's `package/` and a build's `dist/` are named like any other;
    // `./` (`tar -C dist .`) is no folder and is not named.
    for (name, entries, stripped) in [
        (
            "npm.tgz",
            ["package/index.js", "package/lib/a.js"],
            "package",
        ),
        ("dist.tgz", ["dist/index.js", "dist/lib/a.js"], "dist"),
        ("dot.tgz", ["./index.js", "./lib/a.js"], ""),
    ] {
        let files: Vec<Vec<u8>> = entries.iter().map(|e| file(e, b"x")).collect();
        ws.write(name, gzip(&tar(&files)));
        let report = ws.json(&["publish", "site@1.0.0", name, "--json", "--force"]);
        let expected = match stripped {
            "" => serde_json::Value::Null,
            folder => folder.into(),
        };
        assert_eq!(report["stripped_folder"], expected, "{name}");
        assert_eq!(ws.paths("site@1.0.0"), ["index.js", "lib/a.js"], "{name}");
    }
}

#[test]
fn names_npm_gave_before_lowercase_publish_and_read_back() {
    let ws = Workspace::new();
    ws.write(
        "JSONStream-1.3.5.tgz",
        gzip(&tar(&[
            file(
                "package/package.json",
                br#"{"name":"JSONStream","version":"1.3.5","main":"index.js"}"#,
            ),
            file("package/index.js", b"module.exports = {}"),
        ])),
    );
    ws.ok(&["publish", "JSONStream-1.3.5.tgz", "-q"]);
    assert_eq!(ws.cat("JSONStream@1.3.5/index.js"), b"module.exports = {}");
    // Typed, the same name is the same package.
    ws.ok(&["publish", "JSONStream@1.3.6", "JSONStream-1.3.5.tgz", "-q"]);
    assert_eq!(ws.versions("JSONStream"), ["1.3.6", "1.3.5"]);
    // Scopes are newer than capitals in names: lowercase only.
    ws.fails(
        &["publish", "@types/JSONStream@1.0.0", "JSONStream-1.3.5.tgz"],
        2,
    );
}

#[test]
fn entries_npm_would_drop_or_merge_are_refused() {
    let ws = Workspace::new();
    let first = file("react/index.d.ts", b"x");
    for (name, bad, needle) in [
        // npm drops a file at the top: nothing is left once `react/` goes.
        (
            "top.tgz",
            file("README.md", b"x"),
            "`README.md` is outside `react/`",
        ),
        // npm would merge it into the same tree.
        (
            "other.tgz",
            file("types/index.d.ts", b"y"),
            "`types/index.d.ts` is outside `react/`",
        ),
        (
            "file-as-folder.tgz",
            file("react", b"y"),
            "`react` is a file where this archive has its top folder `react/`",
        ),
    ] {
        ws.write(name, gzip(&tar(&[first.clone(), bad])));
        refused(
            &ws,
            &["publish", "app@1.0.0", name],
            &[name, needle, "nothing was published"],
        );
    }
    // Without a package.json, the error says where it was looked for.
    ws.write("nameless.tgz", gzip(&tar(std::slice::from_ref(&first))));
    refused(
        &ws,
        &["publish", "nameless.tgz"],
        &["has no react/package.json", "PKG@VERSION"],
    );
}

#[test]
fn links_in_an_archive_are_left_out_and_reported() {
    let ws = Workspace::new();
    ws.write(
        "links.tgz",
        gzip(&tar(&[
            file("package/index.js", b"ok()"),
            entry(
                b"package/passwd",
                tar::EntryType::Symlink,
                b"/etc/passwd",
                b"",
            ),
            entry(b"package/up", tar::EntryType::Symlink, b"../../..", b""),
            entry(b"package/shadow", tar::EntryType::Link, b"/etc/shadow", b""),
            entry(b"package/fifo", tar::EntryType::Fifo, b"", b""),
        ])),
    );
    let out = ws.ok(&["publish", "app@1.0.0", "links.tgz"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    for (path, why) in [
        ("passwd", "symlink to /etc/passwd"),
        ("up", "symlink to ../../.."),
        ("shadow", "hard link to /etc/shadow"),
        ("fifo", "not a regular file"),
    ] {
        assert!(
            stderr.contains(&format!("skipped {path}: {why}")),
            "{path}: {stderr}"
        );
    }
    assert_eq!(ws.paths("app@1.0.0"), ["index.js"]);
    let report = ws.json(&["publish", "app@1.0.1", "links.tgz", "--json"]);
    assert_eq!(report["skipped"].as_array().unwrap().len(), 4, "{report}");
}

#[test]
fn hostile_entry_names_fail_the_whole_publish_naming_the_entry() {
    let ws = Workspace::new();
    let good = file("package/index.js", b"ok()");
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "dotdot",
            file("package/../../evil.js", b"x"),
            "`package/../../evil.js` has a `..` segment",
        ),
        (
            "absolute",
            file("/etc/cron.d/evil", b"x"),
            "`/etc/cron.d/evil` is an absolute path",
        ),
        (
            "latin1",
            entry(b"package/caf\xe9.js", tar::EntryType::Regular, b"", b"x"),
            "`package/caf\\xe9.js` is not valid UTF-8",
        ),
        (
            "nul",
            [pax_path(b"package/a\0b.js"), file("package/ab.js", b"x")].concat(),
            "`package/a\\0b.js` contains a NUL byte",
        ),
        (
            "outside",
            file("other.js", b"x"),
            "`other.js` is outside `package/`",
        ),
        (
            "twice",
            file("package/index.js", b"y"),
            "`package/index.js` appears twice",
        ),
        (
            "under-a-file",
            file("package/index.js/x", b"y"),
            "lies below a path that is a file",
        ),
    ];
    for (name, bad, needle) in cases {
        let archive = format!("{name}.tgz");
        // The good file comes first: it was read, hashed and compressed
        // before the bad entry, and still nothing is committed.
        ws.write(&archive, gzip(&tar(&[good.clone(), bad])));
        refused(
            &ws,
            &["publish", "app@1.0.0", &archive],
            &[&archive, needle, "nothing was published"],
        );
        assert!(
            !ws.db().exists(),
            "{name}: a failed first publish left a catalog"
        );
    }
    // Into an existing catalog: it stays as it was (publish_fails compares).
    ws.write("ok.tgz", gzip(&tar(std::slice::from_ref(&good))));
    ws.ok(&["publish", "app@0.1.0", "ok.tgz", "-q"]);
    ws.write("evil.tgz", gzip(&tar(&[good, file("package/../x", b"x")])));
    refused(
        &ws,
        &["publish", "app@1.0.0", "evil.tgz"],
        &["`package/../x`"],
    );
}

#[test]
fn size_limits_and_bombs_are_refused() {
    let ws = Workspace::new();
    let big = vec![0u8; 300_000];
    ws.write(
        "big.tgz",
        gzip(&tar(&[file("a.js", b"a"), file("big.bin", &big)])),
    );
    refused(
        &ws,
        &[
            "publish",
            "app@1.0.0",
            "big.tgz",
            "--max-file-size",
            "256KiB",
        ],
        &["`big.bin` is 300000 bytes", "--max-file-size"],
    );
    // Small files, many of them: the total is what is bounded.
    let many: Vec<Vec<u8>> = (0..8).map(|i| file(&format!("f{i}.bin"), &big)).collect();
    let bomb = gzip(&tar(&many));
    assert!(bomb.len() * 50 < 8 * big.len(), "{}", bomb.len());
    ws.write("bomb.tgz", bomb);
    refused(
        &ws,
        &[
            "publish",
            "app@1.0.0",
            "bomb.tgz",
            "--max-unpacked-size",
            "1MiB",
        ],
        &["bomb.tgz", "--max-unpacked-size 1048576 bytes"],
    );
    // Header records are read into memory by the tar reader: a long name
    // of any length would be, were it not stopped at 1 MiB.
    let long_name = entry(
        b"././@LongLink",
        tar::EntryType::GNULongName,
        b"",
        &vec![b'a'; 2 << 20],
    );
    ws.write("names.tgz", gzip(&tar(&[long_name, file("x", b"x")])));
    refused(
        &ws,
        &["publish", "app@1.0.0", "names.tgz"],
        &["names.tgz", "header records"],
    );
    let ok = ws.json(&["publish", "app@1.0.0", "big.tgz", "--json", "--level", "1"]);
    assert_eq!(ok["raw_bytes"], 300_001);
}

#[test]
fn what_is_not_a_tar_archive_is_named() {
    let ws = Workspace::new();
    for (name, bytes, needle) in [
        (
            "notes.tgz",
            b"just some text, not an archive at all".to_vec(),
            "neither a tar archive",
        ),
        ("site.tar.xz", b"\xfd7zXZ\0rest".to_vec(), "xz-compressed"),
        ("site.zip", b"PK\x03\x04rest".to_vec(), "zip file"),
        ("text.gz", gzip(b"plain text, gzipped"), "not a tar archive"),
        (
            "cut.tgz",
            gzip(&file("a.js", &Rng::new(3).bytes(4000)))[..2000].to_vec(),
            "cut.tgz",
        ),
        ("empty.tar", tar(&[]), "contains no files"),
    ] {
        ws.write(name, bytes);
        refused(&ws, &["publish", "app@1.0.0", name], &[name, needle]);
    }
    ws.write("nameless.tgz", gzip(&tar(&[file("index.js", b"x")])));
    refused(
        &ws,
        &["publish", "nameless.tgz"],
        &[
            "nameless.tgz",
            "has no package.json",
            "ccc publish PKG@VERSION nameless.tgz",
        ],
    );
    ws.write(
        "badjson.tgz",
        gzip(&tar(&[file("package/package.json", b"{\"name\":\"x\"}")])),
    );
    refused(
        &ws,
        &["publish", "badjson.tgz"],
        &["badjson.tgz: package/package.json", "has no `version`"],
    );
}

#[test]
fn a_catalog_in_an_archive_is_left_out_like_one_in_a_directory() {
    let ws = Workspace::new();
    ws.write("dist/a.js", "a");
    ws.publish("app@1.0.0", "dist", &[]);
    let catalog = std::fs::read(ws.db()).unwrap();
    ws.write(
        "with-db.tgz",
        gzip(&tar(&[file("a.js", b"x"), file("data/cdn.db", &catalog)])),
    );
    let out = ws.ok(&["publish", "app@2.0.0", "with-db.tgz"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("skipped data/cdn.db: a ccc catalog"),
        "{stderr}"
    );
    assert_eq!(ws.paths("app@2.0.0"), ["a.js"]);
    ws.write("only-db.tgz", gzip(&tar(&[file("cdn.db", &catalog)])));
    refused(
        &ws,
        &["publish", "app@3.0.0", "only-db.tgz"],
        &["only-db.tgz", "contains no files"],
    );
}

#[test]
fn an_existing_version_is_refused_as_soon_as_package_json_names_it() {
    let ws = Workspace::new();
    let manifest = file(
        "package/package.json",
        br#"{"name":"app","version":"1.0.0"}"#,
    );
    ws.write(
        "v1.tgz",
        gzip(&tar(&[manifest.clone(), file("package/a.js", b"a")])),
    );
    ws.ok(&["publish", "v1.tgz", "-q"]);
    // The hostile entry comes after package.json: the version is refused
    // before the archive is read that far.
    ws.write(
        "again.tgz",
        gzip(&tar(&[
            manifest,
            file("package/a.js", b"a"),
            file("package/../evil.js", b"x"),
        ])),
    );
    let stderr = ws.publish_fails(
        &["publish", "again.tgz"],
        &["app@1.0.0 is already published"],
    );
    assert!(!stderr.contains("evil"), "{stderr}");
    // With --force the whole archive is read, and the bad entry refused.
    ws.publish_fails(
        &["publish", "again.tgz", "--force"],
        &["`package/../evil.js` has a `..` segment"],
    );
}
