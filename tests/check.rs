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

/// Packs folder `dir` of the workspace into the gzipped tarball `archive`.
fn tar_czf(ws: &Workspace, archive: &str, dir: &str) {
    let status = std::process::Command::new("tar")
        .args(["czf", archive, dir])
        .current_dir(ws.path())
        .status()
        .expect("tar");
    assert!(status.success(), "tar czf {archive} {dir}");
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
    tar_czf(&ws, "app.tgz", "package");
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
        err.contains("app@1.0.0 was not published: 1 reference does not resolve inside it")
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
/// monaco-editor@0.52.2 three@0.170.0 @sqlite.org/sqlite-wasm@3.47.2-build1`
/// in a folder named by `CCC_NPM_TARBALLS`, as .ci/run packs them
/// (bench/PUBLISH.md, "The reference check"). three and sqlite-wasm carry
/// Emscripten's preamble, `new URL('./', import.meta.url)`: a folder URL.
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
        // examples/jsm/libs/rhino3dm/rhino3dm.module.js is built by
        // Emscripten: its folder is the base its .wasm loads from.
        ("three-0.170.0.tgz", 3368, vec![]),
        // The SQLite project's own Emscripten build (sqlite3-node.mjs and
        // the bundler-friendly builds name their folder the same way).
        ("sqlite.org-sqlite-wasm-3.47.2-build1.tgz", 16, vec![]),
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

/// What Vite writes with its default `base: '/'`: root paths, which name
/// the top of the site, while ccc serves the version under
/// /assets/PKG/VERSION/. Each is reported as leaving the version, with the
/// file it meant and the relative form, and the hint names the bundler
/// settings; a catalog URL of another version stays external.
#[test]
fn root_paths_of_a_bundler_s_default_base_leave_the_version() {
    let ws = Workspace::new();
    for (path, text) in [
        (
            "index.html",
            "<!doctype html>\n<link rel=\"icon\" href=\"/vite.svg\">\n\
             <script type=\"module\" crossorigin src=\"/assets/index-B3x9a.js\"></script>\n\
             <script type=\"importmap\">{\"imports\": {\"react\": \"/assets/react/18.3.1/index.js\"}}</script>\n",
        ),
        (
            "assets/index-B3x9a.js",
            "import 'react';\nexport const chunk = () => import('/assets/gone.js');\n",
        ),
        (
            "assets/index-C2.css",
            ".logo { background: url(/assets/logo-D4.svg#mark); }\n",
        ),
        ("assets/logo-D4.svg", "<svg/>"),
        ("vite.svg", "<svg/>"),
    ] {
        ws.write(&format!("dist/{path}"), text);
    }
    let report = check_json(&ws, "dist", 1);
    let problems: Vec<(String, String, Value, Value)> = report["problems"]
        .as_array()
        .expect("problems")
        .iter()
        .map(|p| {
            assert_eq!(p["class"], "leaves_version", "{p}");
            (
                p["file"].as_str().unwrap_or_default().to_string(),
                p["reference"].as_str().unwrap_or_default().to_string(),
                p["actual"].clone(),
                p["relative"].clone(),
            )
        })
        .collect();
    let expect = |file: &str, reference: &str, actual: Option<&str>, relative: Option<&str>| {
        (
            file.to_string(),
            reference.to_string(),
            actual.map_or(Value::Null, Value::from),
            relative.map_or(Value::Null, Value::from),
        )
    };
    assert_eq!(
        problems,
        vec![
            expect("assets/index-B3x9a.js", "/assets/gone.js", None, None),
            expect(
                "assets/index-C2.css",
                "/assets/logo-D4.svg#mark",
                Some("assets/logo-D4.svg"),
                Some("./logo-D4.svg#mark")
            ),
            expect(
                "index.html",
                "/vite.svg",
                Some("vite.svg"),
                Some("./vite.svg")
            ),
            expect(
                "index.html",
                "/assets/index-B3x9a.js",
                Some("assets/index-B3x9a.js"),
                Some("./assets/index-B3x9a.js")
            ),
        ],
        "{report}"
    );
    // `react` twice: the bare import and the import map's catalog URL.
    assert_eq!(report["references"]["external"], 2, "{report}");
    assert_eq!(report["references"]["leaves_version"], 4, "{report}");

    let out = ws.fails(&["check", "dist"], 1);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "index.html:3:1  loads /assets/index-B3x9a.js: a root path, which leaves the version; \
             write ./assets/index-B3x9a.js"
        ),
        "{text}"
    );
    assert!(
        text.contains("a root path, which leaves the version and names no file of it"),
        "{text}"
    );
    assert!(
        text.contains("hint: a root path (`/...`) names the top of the site")
            && text.contains("Vite `base: './'`, webpack `output.publicPath: 'auto'`"),
        "{text}"
    );
    // --strict refuses it, with the same hint.
    let out = ws.fails(&["publish", "app@1.0.0", "dist", "--strict"], 1);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("4 references do not resolve inside it") && err.contains("Vite `base: './'`"),
        "{err}"
    );
    // Written relative, as `base: './'` writes them, the build is whole.
    ws.write(
        "dist/index.html",
        "<link rel=\"icon\" href=\"./vite.svg\">\n\
         <script type=\"module\" src=\"./assets/index-B3x9a.js\"></script>\n",
    );
    ws.write("dist/assets/index-B3x9a.js", "import 'react';\n");
    ws.write(
        "dist/assets/index-C2.css",
        ".logo { background: url(./logo-D4.svg#mark); }\n",
    );
    let report = check_json(&ws, "dist", 0);
    assert_eq!(report["references"]["found"], 3, "{report}");
    ws.publish("app@1.0.0", "dist", &["--strict"]);
}

/// The folders a bundler's app is built in, under `CCC_TEST_BUNDLERS`
/// (`npm install vite@7 webpack@5 webpack-cli@6 html-webpack-plugin@5
/// css-loader@7 mini-css-extract-plugin@2` there, as .ci/run does): the
/// app's sources, and `node_modules` linked to the installed bundlers.
fn bundler_app(ws: &Workspace) -> std::path::PathBuf {
    let installed = std::env::var("CCC_TEST_BUNDLERS")
        .expect("CCC_TEST_BUNDLERS names a folder with vite and webpack installed");
    let app = ws.path().join("app");
    std::fs::create_dir_all(&app).expect("app folder");
    std::os::unix::fs::symlink(
        std::path::Path::new(&installed).join("node_modules"),
        app.join("node_modules"),
    )
    .expect("link node_modules");
    // Big enough (over Vite's 4 KiB) to be a file of its own, not inlined.
    let logo = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\"><desc>{}</desc></svg>\n",
        "ccc ".repeat(2000)
    );
    let files: &[(&str, &str)] = &[
        (
            "index.html",
            "<!doctype html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n\
             <link rel=\"icon\" type=\"image/svg+xml\" href=\"/vite.svg\">\n<title>app</title>\n\
             </head>\n<body>\n<div id=\"app\"></div>\n\
             <script type=\"module\" src=\"/src/main.js\"></script>\n</body>\n</html>\n",
        ),
        (
            "src/index.html",
            "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>app</title></head>\
             <body><div id=\"app\"></div></body></html>\n",
        ),
        (
            "src/main.js",
            "import './style.css';\nimport logo from './logo.svg';\n\
             document.querySelector('#app').innerHTML = `<img src=\"${logo}\">`;\n",
        ),
        ("src/style.css", ".app { background: url(./logo.svg); }\n"),
        (
            "public/vite.svg",
            "<svg xmlns=\"http://www.w3.org/2000/svg\"/>\n",
        ),
        (
            "webpack.config.js",
            "const Html = require('html-webpack-plugin');\n\
             const Css = require('mini-css-extract-plugin');\n\
             module.exports = (env) => ({\n  mode: 'production',\n  entry: './src/main.js',\n\
             \x20 output: { path: __dirname + '/' + env.out, filename: '[name].[contenthash].js',\n\
             \x20   publicPath: env.publicPath || 'auto', clean: true },\n\
             \x20 module: { rules: [\n\
             \x20   { test: /\\.css$/, use: [Css.loader, 'css-loader'] },\n\
             \x20   { test: /\\.svg$/, type: 'asset/resource' },\n  ] },\n\
             \x20 plugins: [new Html({ template: './src/index.html' }), new Css()],\n});\n",
        ),
    ];
    for (path, text) in files {
        ws.write(&format!("app/{path}"), text);
    }
    ws.write("app/src/logo.svg", logo);
    app
}

/// Runs `node ARGS` in `dir`, which must succeed.
fn node(dir: &std::path::Path, args: &[&str]) {
    let out = std::process::Command::new("node")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run node");
    assert!(
        out.status.success(),
        "node {args:?}:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The (file, reference, relative) of each problem `check` reports.
fn root_problems(report: &Value) -> Vec<(String, String, String)> {
    let mut all: Vec<(String, String, String)> = report["problems"]
        .as_array()
        .expect("problems")
        .iter()
        .map(|p| {
            assert_eq!(p["class"], "leaves_version", "{p}");
            (
                p["file"].as_str().unwrap_or_default().to_string(),
                p["reference"].as_str().unwrap_or_default().to_string(),
                p["relative"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    all.sort();
    all
}

/// Real Vite and webpack builds, made here from the bundlers npm
/// installed: with `base: '/'` (Vite's default) and `publicPath: '/'`
/// every page, script and stylesheet reference is a root path, which
/// `check` reports with its relative form and the setting, and `publish
/// --strict` refuses; built with `--base ./` and webpack's default
/// `publicPath: 'auto'`, the same apps check clean and publish.
#[test]
#[ignore = "needs vite and webpack from npm in CCC_TEST_BUNDLERS; .ci/run installs them"]
fn bundlers_real_vite_and_webpack_builds() {
    let ws = Workspace::new();
    let app = bundler_app(&ws);
    let vite = "node_modules/vite/bin/vite.js";
    let webpack = "node_modules/webpack/bin/webpack.js";
    node(
        &app,
        &[vite, "build", "--logLevel", "warn", "--outDir", "vite-root"],
    );
    node(
        &app,
        &[webpack, "--env", "out=wp-root", "--env", "publicPath=/"],
    );
    node(
        &app,
        &[
            vite,
            "build",
            "--logLevel",
            "warn",
            "--base",
            "./",
            "--outDir",
            "vite-rel",
        ],
    );
    node(&app, &[webpack, "--env", "out=wp-auto"]);

    let file_named = |dir: &str, prefix: &str, ext: &str| -> String {
        let mut found: Vec<String> = walkdir(&app.join(dir))
            .into_iter()
            .filter(|p| {
                let name = p.rsplit('/').next().unwrap_or_default();
                name.starts_with(prefix) && name.ends_with(ext)
            })
            .collect();
        assert_eq!(found.len(), 1, "{dir}: {prefix}*{ext} in {found:?}");
        found.remove(0)
    };
    // Vite: the icon, the entry script and its stylesheet from the page;
    // the logo from the stylesheet.
    let js = file_named("vite-root", "index-", ".js");
    let css = file_named("vite-root", "index-", ".css");
    let logo = file_named("vite-root", "logo-", ".svg");
    let report = check_json(&ws, "app/vite-root", 1);
    let logo_name = logo.trim_start_matches("assets/");
    let mut want = vec![
        ("index.html".into(), "/vite.svg".into(), "./vite.svg".into()),
        ("index.html".into(), format!("/{js}"), format!("./{js}")),
        ("index.html".into(), format!("/{css}"), format!("./{css}")),
        (css.clone(), format!("/{logo}"), format!("./{logo_name}")),
    ];
    want.sort();
    assert_eq!(root_problems(&report), want, "{report}");
    let out = ws.fails(&["check", "app/vite-root"], 1);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Vite `base: './'`"), "{text}");
    ws.fails(&["publish", "app@1.0.0", "app/vite-root", "--strict"], 1);

    // webpack with `publicPath: '/'`: the page's script and stylesheet,
    // and the stylesheet's logo.
    let js = file_named("wp-root", "main.", ".js");
    let css = file_named("wp-root", "main.", ".css");
    let svg = file_named("wp-root", "", ".svg");
    let report = check_json(&ws, "app/wp-root", 1);
    let mut want = vec![
        ("index.html".into(), format!("/{js}"), format!("./{js}")),
        ("index.html".into(), format!("/{css}"), format!("./{css}")),
        (css.clone(), format!("/{svg}"), format!("./{svg}")),
    ];
    want.sort();
    assert_eq!(root_problems(&report), want, "{report}");
    let out = ws.fails(&["check", "app/wp-root"], 1);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("webpack `output.publicPath: 'auto'`"),
        "{text}"
    );

    // Relative builds: every reference found (Vite's script names the
    // logo by `new URL(..., import.meta.url)` too), published with --strict.
    for (dir, found) in [("vite-rel", 5), ("wp-auto", 3)] {
        let report = check_json(&ws, &format!("app/{dir}"), 0);
        assert_eq!(report["references"]["found"], found, "{dir}: {report}");
        assert_eq!(report["references"]["leaves_version"], 0, "{dir}: {report}");
    }
    ws.publish("app@1.0.0", "app/vite-rel", &["--strict"]);
    ws.publish("app@1.0.1", "app/wp-auto", &["--strict"]);
}

/// The files below `dir`, as paths relative to it.
fn walkdir(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).expect("read_dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if let Ok(rel) = path.strip_prefix(dir) {
                out.push(rel.to_string_lossy().into_owned());
            }
        }
    }
    out
}

/// Emscripten's preamble names the module's own folder as a URL, the base
/// its `.wasm` is loaded from: `new URL('./', import.meta.url)`, `'.'`,
/// `'./sub/'`. A folder that has files is found (inspect names it), as
/// `'../'` always was; one with none is missing.
#[test]
fn a_url_naming_a_folder_with_files_is_found() {
    let ws = Workspace::new();
    ws.write(
        "pkg/lib/module.js",
        "var dir = new URL('./', import.meta.url).href;\n\
         var same = new URL('.', import.meta.url);\n\
         var sub = new URL('./wasm/', import.meta.url);\n\
         var up = new URL('../', import.meta.url);\n\
         var gone = new URL('./gone/', import.meta.url);\n",
    );
    ws.write("pkg/lib/wasm/module.wasm", "\0asm");
    ws.write("pkg/index.js", "export * from './lib/module.js';\n");
    let report = check_json(&ws, "pkg", 1);
    assert_eq!(report["references"]["found"], 5, "{report}");
    let problems = report["problems"].as_array().expect("problems");
    assert_eq!(problems.len(), 1, "{report}");
    assert_eq!(problems[0]["reference"], "./gone/", "{report}");
    assert_eq!(problems[0]["class"], "missing", "{report}");
    ws.write("pkg/lib/gone/.keep", "");
    check_json(&ws, "pkg", 0);
    ws.publish("pkg@1.0.0", "pkg", &["--strict"]);
    let text = String::from_utf8_lossy(&ws.ok(&["inspect", "pkg@1.0.0/lib/module.js"]).stdout)
        .into_owned();
    assert!(text.contains("1:19 ./ -> lib/"), "{text}");
    assert!(text.contains("3:19 ./wasm/ -> lib/wasm/"), "{text}");
    assert!(text.contains("4:18 ../ -> ./"), "{text}");
}

/// The same root paths name the build's own files where it is served at
/// a site's root: `check --site` finds them, and a package a site serves
/// is checked so at publish (--strict passes) and in the catalog.
#[test]
fn root_paths_name_the_build_s_files_on_a_site() {
    let ws = Workspace::new();
    for (path, text) in [
        (
            "index.html",
            "<!doctype html>\n<link rel=\"icon\" href=\"/vite.svg\">\n\
             <script type=\"module\" crossorigin src=\"/assets/index-B3x9a.js\"></script>\n",
        ),
        (
            "assets/index-B3x9a.js",
            "export const chunk = () => import('/assets/lazy-C4.js');\n",
        ),
        ("assets/lazy-C4.js", "export default 1;\n"),
        ("vite.svg", "<svg/>"),
    ] {
        ws.write(&format!("dist/{path}"), text);
    }
    let leaving = check_json(&ws, "dist", 1);
    assert_eq!(leaving["references"]["leaves_version"], 3, "{leaving}");
    let out = ws.fails(&["check", "dist", "--site", "--json"], 0);
    let report: Value = serde_json::from_slice(&out.stdout).expect("check --json");
    assert_eq!(report["references"]["found"], 3, "{report}");
    assert_eq!(
        report["problems"].as_array().map(Vec::len),
        Some(0),
        "{report}"
    );

    ws.ok(&["site", "set", "default", "app"]);
    ws.ok(&["publish", "app@1.0.0", "dist", "--strict"]);
    let stored: Value = ws.json(&["check", "app@1.0.0", "--json"]);
    assert_eq!(stored["references"]["found"], 3, "{stored}");
}

#[test]
fn site_rules_publish_would_refuse_fail_the_check() {
    let ws = Workspace::new();
    app(&ws, "dist");
    // Rules ccc follows pass, a rules-named file below the root is a
    // plain file.
    ws.write(
        "dist/_redirects",
        "/old /index.html 301\n/app/* /index.html 200\n",
    );
    ws.write("dist/_headers", "/*\n  X-Frame-Options: DENY\n");
    ws.write("dist/docs/_redirects", "/x /y 302 Country=fr\n");
    let report = check_json(&ws, "dist", 0);
    assert_eq!(report["rules"], serde_json::json!([]), "{report}");

    // A condition (Netlify's `Country=`) and a header ccc owns: each
    // named by file and line, in the table and in --json, exit 1.
    ws.write(
        "dist/_redirects",
        "/old /index.html 301\n/ /fr 302 Country=fr\n",
    );
    ws.write("dist/_headers", "/*\n  Content-Length: 1\n");
    let report = check_json(&ws, "dist", 1);
    let rules = report["rules"].as_array().expect("rules");
    assert_eq!(rules.len(), 2, "{report}");
    let lines: Vec<(&str, u64)> = rules
        .iter()
        .map(|r| (r["file"].as_str().unwrap(), r["line"].as_u64().unwrap()))
        .collect();
    assert!(lines.contains(&("_redirects", 2)), "{report}");
    assert!(lines.contains(&("_headers", 2)), "{report}");
    assert_eq!(report["problems"], serde_json::json!([]), "{report}");
    let out = ws.fails(&["check", "dist"], 1);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("_redirects line 2:") && text.contains("publish refuses this version"),
        "{text}"
    );

    // A tarball is checked alike; publish refuses what check named.
    tar_czf(&ws, "dist.tgz", "dist");
    let from_tarball = check_json(&ws, "dist.tgz", 1);
    assert_eq!(from_tarball["rules"], report["rules"], "{from_tarball}");
    ws.fails(&["publish", "app@1.0.0", "dist"], 1);
}
