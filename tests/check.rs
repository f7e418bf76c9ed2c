//! `ccc check`: every reference of a build resolves inside it, or the
//! problem is named where it is written. A fixture app is checked whole,
//! then broken the ways that only a browser finds: a deleted chunk, a
//! path's case, a font that was not copied, a dangling source map, a page
//! naming a missing script.

use crate::util::Workspace;
use serde_json::Value;

/// A small app whose every reference resolves.
fn app(ws: &Workspace, dir: &str) {
    let files: &[(&str, &str)] = &[
        (
            "index.html",
            "<!doctype html>\n<link rel=\"stylesheet\" href=\"css/app.css\">\n\
             <link rel=\"manifest\" href=\"app.webmanifest\">\n\
             <script type=\"module\" src=\"js/app.js\"></script>\n",
        ),
        (
            "js/app.js",
            "import { util } from './util.js';\n\
             export const load = () => import('./chunk-A1.js');\n\
             const lang = (l) => import(`./locale/${l}.js`);\n\
             import React from 'react';\n\
             //# sourceMappingURL=app.js.map\n",
        ),
        ("js/util.js", "export const util = 1;\n"),
        ("js/chunk-A1.js", "export default 2;\n"),
        (
            "js/app.js.map",
            "{\"version\":3,\"sources\":[],\"mappings\":\"\"}",
        ),
        (
            "css/app.css",
            "@font-face { src: url(../fonts/Icons.woff2) format('woff2'); }\n\
             .logo { background: url(\"../img/logo.png\"); }\n",
        ),
        ("fonts/Icons.woff2", "wOF2"),
        ("img/logo.png", "PNG"),
        (
            "app.webmanifest",
            "{\"name\": \"app\", \"icons\": [{\"src\": \"img/logo.png\"}]}",
        ),
    ];
    for (path, text) in files {
        ws.write(&format!("{dir}/{path}"), text);
    }
}

fn check_json(ws: &Workspace, target: &str, code: i32) -> Value {
    let out = ws.fails(&["check", target, "--json"], code);
    serde_json::from_slice(&out.stdout).expect("check --json")
}

#[test]
fn a_whole_build_checks_clean() {
    let ws = Workspace::new();
    app(&ws, "dist");
    let report = check_json(&ws, "dist", 0);
    let refs = &report["references"];
    assert_eq!(refs["found"], 9, "{report}");
    assert_eq!(refs["external"], 1, "react: {report}");
    assert_eq!(refs["unresolvable"], 1, "the locale chunk: {report}");
    assert_eq!(report["problems"], serde_json::json!([]));
    let out = ws.ok(&["check", "dist"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("Checked dist: 9 files, 6 read, 11 references"),
        "{text}"
    );
}

#[test]
fn every_kind_of_broken_build_is_caught_where_it_is_written() {
    let ws = Workspace::new();
    app(&ws, "dist");
    // A deleted chunk, a path in another case, a font not copied, a
    // dangling source map, a page naming a missing script.
    std::fs::remove_file(ws.path().join("dist/js/chunk-A1.js")).expect("rm chunk");
    ws.write(
        "dist/js/app.js",
        "import { util } from './Util.js';\n\
             export const load = () => import('./chunk-A1.js');\n\
             //# sourceMappingURL=gone.js.map\n",
    );
    ws.write(
        "dist/css/app.css",
        "@font-face { src: url(../fonts/Missing.woff2); }\n",
    );
    ws.write(
        "dist/about.html",
        "<p>about</p>\n<script src=\"js/about.js\"></script>\n",
    );
    let report = check_json(&ws, "dist", 1);
    let problems: Vec<(String, String, String, u64, u64)> = report["problems"]
        .as_array()
        .expect("problems")
        .iter()
        .map(|p| {
            (
                p["file"].as_str().unwrap_or_default().to_string(),
                p["reference"].as_str().unwrap_or_default().to_string(),
                p["class"].as_str().unwrap_or_default().to_string(),
                p["line"].as_u64().unwrap_or_default(),
                p["column"].as_u64().unwrap_or_default(),
            )
        })
        .collect();
    let expect = |file: &str, reference: &str, class: &str, line: u64| {
        assert!(
            problems
                .iter()
                .any(|p| p.0 == file && p.1 == reference && p.2 == class && p.3 == line),
            "{file}: {reference} ({class}, line {line}) in {problems:?}"
        );
    };
    expect("about.html", "js/about.js", "missing", 2);
    expect("css/app.css", "../fonts/Missing.woff2", "missing", 1);
    expect("js/app.js", "./Util.js", "case_mismatch", 1);
    expect("js/app.js", "./chunk-A1.js", "missing", 2);
    expect("js/app.js", "gone.js.map", "missing", 3);
    assert_eq!(problems.len(), 5, "{problems:?}");
    let case = report["problems"]
        .as_array()
        .and_then(|all| all.iter().find(|p| p["class"] == "case_mismatch"))
        .expect("the case mismatch");
    assert_eq!(case["actual"], "js/util.js");

    let out = ws.fails(&["check", "dist"], 1);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("js/app.js:1:22  import ./Util.js: the file is js/util.js"),
        "{text}"
    );
}

#[test]
fn a_published_version_and_a_tarball_are_checked_alike() {
    let ws = Workspace::new();
    app(&ws, "package");
    std::fs::remove_file(ws.path().join("package/img/logo.png")).expect("rm logo");
    ws.write(
        "package/package.json",
        r#"{"name": "app", "version": "1.0.0", "main": "js/app.js"}"#,
    );
    ws.publish("app@1.0.0", "package", &[]);
    let from_catalog = check_json(&ws, "app@1.0.0", 1);
    let status = std::process::Command::new("tar")
        .args(["czf", "app.tgz", "package"])
        .current_dir(ws.path())
        .status()
        .expect("tar");
    assert!(status.success());
    let from_tarball = check_json(&ws, "app.tgz", 1);
    let from_folder = check_json(&ws, "package", 1);
    for report in [&from_tarball, &from_folder] {
        assert_eq!(report["problems"], from_catalog["problems"]);
        assert_eq!(report["references"], from_catalog["references"]);
    }
    // The logo: from the stylesheet and the manifest; main resolves.
    assert_eq!(from_catalog["references"]["missing"], 2, "{from_catalog}");

    let out = ws.fails(&["check", "app@9.9.9"], 1);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("9.9.9"), "{err}");
    // A path that is not there is a failure (1), as for publish; a word
    // that is neither a path nor PKG@VERSION is a wrong command line (2).
    for missing in ["no-such-folder/", "./gone", "gone.tgz", "/no/such"] {
        let out = ws.fails(&["check", missing], 1);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("no such folder or archive"), "{err}");
        assert!(err.contains(missing), "{err}");
    }
    let out = ws.fails(&["check", "nope"], 2);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("neither a folder, an archive nor PKG@VERSION"),
        "{err}"
    );
}

#[test]
fn publish_reports_references_and_strict_refuses_a_broken_version() {
    let ws = Workspace::new();
    app(&ws, "dist");
    ws.publish("app@0.9.0", "dist", &["--strict"]);
    std::fs::remove_file(ws.path().join("dist/js/chunk-A1.js")).expect("rm chunk");
    let out = ws.fails(&["publish", "app@1.0.0", "dist", "--strict"], 1);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("app@1.0.0 was not published: 1 reference(s) do not resolve")
            && err.contains("js/app.js:2:34  import() ./chunk-A1.js: missing"),
        "{err}"
    );
    assert_eq!(ws.versions("app"), ["0.9.0"], "nothing published");

    let out = ws.ok(&["publish", "app@1.0.0", "dist"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("  references: 8 found, 1 missing, 1 external, 1 built at runtime\n    js/app.js:2:34  import() ./chunk-A1.js: missing"),
        "{text}"
    );
    let report = ws.publish_json("app@2.0.0", "dist", &[]);
    assert_eq!(report["references"]["references"]["missing"], 1, "{report}");
    let report = ws.publish_json("app@3.0.0", "dist", &["--no-check"]);
    assert_eq!(report["references"], Value::Null, "{report}");
}

/// Real npm tarballs: every problem `check` reports is one confirmed by
/// hand (the reason beside it), and nothing else is reported. Needs the
/// tarballs: `npm pack lodash-es@4.17.21 rxjs@7.8.1
/// @fortawesome/fontawesome-free@6.5.2 typescript@5.6.3 react-dom@18.3.1
/// monaco-editor@0.52.2` in a folder named by `CCC_NPM_TARBALLS`
/// (bench/PUBLISH.md, "The reference check").
#[test]
#[ignore = "needs npm tarballs in CCC_NPM_TARBALLS"]
fn real_packages_report_only_confirmed_problems() {
    let dir = std::env::var("CCC_NPM_TARBALLS").expect("CCC_NPM_TARBALLS names the tarballs");
    let source_maps = |files: &[&str]| -> Vec<(String, String)> {
        files
            .iter()
            .map(|f| {
                (
                    f.to_string(),
                    format!("{}.map", f.rsplit('/').next().unwrap_or(f)),
                )
            })
            .collect()
    };
    let nls = |lang: &str| {
        (
            format!("min/vs/nls.messages.{lang}.js"),
            format!("../min-maps/nls.messages.{lang}.js.map"),
        )
    };
    // (tarball, references found, (file, reference) of each problem)
    type Expected = (&'static str, u64, Vec<(String, String)>);
    let expected: Vec<Expected> = vec![
        ("lodash-es-4.17.21.tgz", 2310, vec![]),
        // The tarball has no dist/package/.
        (
            "rxjs-7.8.1.tgz",
            3486,
            vec![("src/Rx.global.js".into(), "../dist/package/Rx".into())],
        ),
        ("fortawesome-fontawesome-free-6.5.2.tgz", 81, vec![]),
        // lib/*.js name source maps the tarball does not ship.
        (
            "typescript-5.6.3.tgz",
            5,
            source_maps(&[
                "lib/cancellationToken.js",
                "lib/tsc.js",
                "lib/tsserver.js",
                "lib/typescript.js",
                "lib/typingsInstaller.js",
                "lib/watchGuard.js",
            ]),
        ),
        ("react-dom-18.3.1.tgz", 28, vec![]),
        // The nls maps are at min-maps/, not min/min-maps/; marked's map
        // is not shipped.
        (
            "monaco-editor-0.52.2.tgz",
            5427,
            std::iter::once((
                "esm/vs/base/common/marked/marked.js".to_string(),
                "marked.umd.js.map".to_string(),
            ))
            .chain(["de", "es", "fr", "it", "ja", "ko", "ru", "zh-cn", "zh-tw"].map(nls))
            .collect(),
        ),
    ];
    let ws = Workspace::new();
    for (tarball, found, problems) in expected {
        let path = std::path::Path::new(&dir).join(tarball);
        let out = ws
            .ccc()
            .args(["check", "--json"])
            .arg(&path)
            .output()
            .expect("run check");
        let report: Value = serde_json::from_slice(&out.stdout).expect("check --json");
        let mut reported: Vec<(String, String)> = report["problems"]
            .as_array()
            .expect("problems")
            .iter()
            .map(|p| {
                (
                    p["file"].as_str().unwrap_or_default().to_string(),
                    p["reference"].as_str().unwrap_or_default().to_string(),
                )
            })
            .collect();
        reported.sort();
        let mut problems = problems;
        problems.sort();
        assert_eq!(reported, problems, "{tarball}");
        assert_eq!(report["references"]["found"], found, "{tarball}: {report}");
    }
}

#[test]
fn inspect_lists_what_a_file_references_and_what_references_it() {
    let ws = Workspace::new();
    app(&ws, "dist");
    ws.publish("app@1.0.0", "dist", &[]);
    let detail = ws.json(&["inspect", "app@1.0.0/js/app.js", "--json"]);
    let outgoing: Vec<(String, Value)> = detail["references"]
        .as_array()
        .expect("references")
        .iter()
        .map(|l| {
            (
                l["reference"].as_str().unwrap_or_default().to_string(),
                l["target"].clone(),
            )
        })
        .collect();
    assert_eq!(
        outgoing,
        vec![
            ("./util.js".to_string(), Value::from("js/util.js")),
            ("./chunk-A1.js".to_string(), Value::from("js/chunk-A1.js")),
            ("`./locale/${l}.js`".to_string(), Value::Null),
            ("react".to_string(), Value::Null),
            ("app.js.map".to_string(), Value::from("js/app.js.map")),
        ],
        "{detail}"
    );
    let incoming = &detail["referenced_by"];
    assert_eq!(incoming[0]["file"], "index.html", "{detail}");
    assert_eq!(incoming[0]["line"], 4, "{detail}");
    let logo = ws.json(&["inspect", "app@1.0.0/img/logo.png", "--json"]);
    let by: Vec<&str> = logo["referenced_by"]
        .as_array()
        .expect("referenced_by")
        .iter()
        .filter_map(|l| l["file"].as_str())
        .collect();
    assert_eq!(by, ["app.webmanifest", "css/app.css"]);
    let text =
        String::from_utf8_lossy(&ws.ok(&["inspect", "app@1.0.0/js/app.js"]).stdout).into_owned();
    assert!(text.contains("1:22 ./util.js -> js/util.js"), "{text}");
}

/// `require('./')` and `require('../')` name a folder, as Node loads it:
/// the `main` of the root `package.json`, else its `index.js` (JSONStream's
/// bin.js and tests), in `check` and in publish's check alike.
#[test]
fn require_of_a_folder_loads_its_main_or_index() {
    let ws = Workspace::new();
    for (path, text) in [
        (
            "package.json",
            r#"{"name": "app", "version": "1.0.0", "main": "lib/main.js"}"#,
        ),
        ("lib/main.js", "module.exports = 1;\n"),
        ("bin.js", "#!/usr/bin/env node\nvar m = require('./');\n"),
        ("test/a.js", "require('../'); require('..');\n"),
        ("util/index.js", "require('.'); require('../util/');\n"),
    ] {
        ws.write(&format!("pkg/{path}"), text);
    }
    let report = check_json(&ws, "pkg", 0);
    assert_eq!(report["problems"], serde_json::json!([]), "{report}");
    assert_eq!(
        report["references"]["found"], 6,
        "main and 5 requires: {report}"
    );
    let report = ws.publish_json("app@1.0.0", "pkg", &["--strict"]);
    assert_eq!(report["references"]["references"]["missing"], 0, "{report}");
    let links = ws.json(&["inspect", "app@1.0.0/bin.js", "--json"]);
    assert!(links.to_string().contains("lib/main.js"), "{links}");
}
