//! README.md's "Using ccc as your CDN" snippet stays true: every
//! `<script>` in it names a file of the bundled example site, and its
//! `integrity` is what ccc computes for that file and what the server
//! sends, so a change to examples/site or to ccc that breaks the snippet
//! fails here. Its "Import maps" workflow is run command by command, on
//! stand-ins for the npm tarballs it names, and its map checked. Its
//! "Layout", like the module list atop src/lib.rs, names every module.

use crate::serve_util::{Server, get};
use crate::util::{Workspace, repo_root};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use sha2::{Digest, Sha256};

/// The text of the README section `heading`, up to the next one.
fn section(heading: &str) -> String {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).expect("README.md");
    let section = readme
        .split_once(&format!("\n## {heading}\n"))
        .unwrap_or_else(|| panic!("README.md has no `## {heading}`"))
        .1;
    section
        .split("\n## ")
        .next()
        .unwrap_or_default()
        .to_string()
}

/// The ```html block of the README section `heading`.
fn html_block(heading: &str) -> String {
    let section = section(heading);
    let block = section
        .split_once("```html\n")
        .unwrap_or_else(|| panic!("`## {heading}` has no html block"))
        .1;
    block.split("```").next().unwrap_or_default().to_string()
}

/// The value of `name="..."` in `tag`.
fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    tag[start..].split('"').next()
}

fn sri(bytes: &[u8]) -> String {
    format!("sha256-{}", STANDARD.encode(Sha256::digest(bytes)))
}

#[test]
fn every_module_is_named_in_the_layout_and_in_lib_rs() {
    let src = repo_root().join("src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).expect("src/lib.rs");
    let declared: Vec<&str> = lib
        .lines()
        .filter_map(|line| {
            line.strip_prefix("pub mod ")
                .or_else(|| line.strip_prefix("pub(crate) mod "))
        })
        .map(|name| name.trim_end_matches(';'))
        .collect();
    // The module list links the public modules and names the others.
    let list: String = lib.lines().filter(|line| line.starts_with("//!")).collect();
    let mut in_tree: Vec<String> = std::fs::read_dir(&src)
        .expect("src/")
        .map(|entry| entry.expect("an entry of src/").file_name())
        .map(|name| name.to_string_lossy().trim_end_matches(".rs").to_string())
        .filter(|name| name != "lib" && name != "main")
        .collect();
    in_tree.sort();
    assert_eq!(declared, in_tree, "src/lib.rs declares what src/ holds");
    let layout = section("Layout");
    for name in declared {
        assert!(
            list.contains(&format!("`{name}`")),
            "src/lib.rs's module list does not name `{name}`"
        );
        let (file, dir) = (format!("src/{name}.rs"), format!("src/{name}/"));
        assert!(
            layout.contains(&file) || layout.contains(&dir),
            "README's Layout names neither {file} nor {dir}"
        );
    }
}

#[test]
fn the_cdn_snippet_integrity_is_what_ccc_serves() {
    let html = html_block("Using ccc as your CDN");
    let scripts: Vec<&str> = html.split("<script").skip(1).collect();
    assert!(!scripts.is_empty(), "no <script> in\n{html}");
    assert!(
        scripts.iter().any(|s| attr(s, "type") == Some("module")),
        "a module script: {html}"
    );

    let ws = Workspace::new();
    let mut published = None;
    let mut server = None;
    for tag in scripts {
        let src = attr(tag, "src").unwrap_or_else(|| panic!("no src in {tag}"));
        let integrity = attr(tag, "integrity").unwrap_or_else(|| panic!("no integrity in {tag}"));
        assert_eq!(attr(tag, "crossorigin"), Some("anonymous"), "{tag}");
        // https://HOST/assets/PKG/VERSION/PATH
        let url_path = src
            .find("/assets/")
            .map(|i| &src[i..])
            .unwrap_or_else(|| panic!("{src} is not a ccc asset URL"));
        let mut parts = url_path["/assets/".len()..].splitn(3, '/');
        let (package, version, path) = match (parts.next(), parts.next(), parts.next()) {
            (Some(p), Some(v), Some(path)) => (p, v, path),
            _ => panic!("{src}: want /assets/PKG/VERSION/PATH"),
        };
        assert!(
            semver::Version::parse(version).is_ok(),
            "{src}: integrity needs an exact version, not `{version}`"
        );
        let spec = format!("{package}@{version}");
        // The bundled example, published under the snippet's name.
        if published.as_ref() != Some(&spec) {
            assert!(published.is_none(), "one package in the snippet");
            let site = repo_root().join("examples/site");
            ws.ok(&[
                "publish",
                &spec,
                site.to_str().expect("UTF-8 path"),
                "--quiet",
            ]);
            published = Some(spec.clone());
            server = Some(Server::start(&ws, &[]));
        }

        let on_disk = std::fs::read(repo_root().join("examples/site").join(path))
            .unwrap_or_else(|e| panic!("examples/site/{path}: {e}"));
        assert_eq!(integrity, sri(&on_disk), "README's integrity for {path}");

        // What ccc computes, as the README says to get it, and as its
        // file list says.
        let file = ws.json(&["inspect", &format!("{spec}/{path}"), "--json"]);
        assert_eq!(file["integrity"], integrity, "ccc inspect {spec}/{path}");
        let listing = ws.json(&["ls", &spec, "--json"]);
        let listed = listing["files"]
            .as_array()
            .expect("files")
            .iter()
            .find(|f| f["path"] == path)
            .unwrap_or_else(|| panic!("{path} not in ccc ls {spec}"));
        assert_eq!(listed["integrity"], integrity, "ccc ls {spec}");

        // What a browser gets (no gzip asked, the bytes it hashes).
        let server = server.as_ref().expect("started");
        let served = get(&server.url(url_path), &[("Origin", "https://app.example")]);
        assert_eq!(served.status, 200, "{url_path}");
        assert_eq!(integrity, sri(&served.body), "{url_path} as served");
        // SRI on a cross-origin script needs CORS.
        assert_eq!(
            served.header("access-control-allow-origin"),
            Some("*"),
            "{url_path}"
        );
        if attr(tag, "type") == Some("module") {
            assert!(
                served.must("content-type").starts_with("text/javascript"),
                "{url_path}"
            );
        }
    }
}

/// The ```LANG block of the README section under the heading line
/// `heading` (`### Import maps`): the first one.
fn block_under(heading: &str, lang: &str) -> String {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).expect("README.md");
    let section = readme
        .split_once(&format!("\n{heading}\n"))
        .unwrap_or_else(|| panic!("README.md has no `{heading}`"))
        .1;
    let section = section.split("\n#").next().unwrap_or_default();
    let block = section
        .split_once(&format!("```{lang}\n"))
        .unwrap_or_else(|| panic!("`{heading}` has no {lang} block"))
        .1;
    block.split("```").next().unwrap_or_default().to_string()
}

/// A gzipped npm tarball of `files`, each under `package/`.
fn tgz(files: &[(&str, &str)]) -> Vec<u8> {
    use std::io::Write;
    let mut tar = tar::Builder::new(Vec::new());
    for (path, text) in files {
        let mut header = tar::Header::new_gnu();
        header.set_size(text.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        tar.append_data(&mut header, format!("package/{path}"), text.as_bytes())
            .expect("tar entry");
    }
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&tar.into_inner().expect("tar")).expect("gzip");
    gz.finish().expect("gzip")
}

/// Stand-ins for the tarballs `npm pack` makes, shaped as the real ones
/// are where the map depends on it: lodash-es without `exports`, rxjs with
/// conditions, extensionless relative imports and a dependency on tslib,
/// tslib whose `module` condition comes first. (The real packages run in
/// Chromium: `importmap::chromium_runs_an_app_...`.)
fn npm_tarballs(ws: &Workspace) {
    ws.write(
        "lodash-es-4.17.21.tgz",
        tgz(&[
            (
                "package.json",
                r#"{"name": "lodash-es", "version": "4.17.21", "main": "lodash.js", "module": "lodash.js"}"#,
            ),
            ("lodash.js", "export { default as debounce } from './debounce.js';\n"),
            ("debounce.js", "export default function debounce() {}\n"),
        ]),
    );
    ws.write(
        "rxjs-7.8.1.tgz",
        tgz(&[
            (
                "package.json",
                r#"{"name": "rxjs", "version": "7.8.1", "dependencies": {"tslib": "^2.1.0"},
                    "exports": {".": {"node": "./dist/cjs/index.js", "default": "./dist/esm5/index.js"},
                                "./operators": {"default": "./dist/esm5/operators/index.js"}}}"#,
            ),
            (
                "dist/esm5/index.js",
                "import { __extends } from 'tslib';\nexport { of } from './internal/of';\n",
            ),
            ("dist/esm5/internal/of.js", "export const of = 1;\n"),
            ("dist/esm5/operators/index.js", "export const map = 1;\n"),
            ("dist/cjs/index.js", "exports.of = 1;\n"),
        ]),
    );
    ws.write(
        "tslib-2.8.1.tgz",
        tgz(&[
            (
                "package.json",
                r#"{"name": "tslib", "version": "2.8.1", "exports": {".": {"module": {"types": "./x.d.ts",
                    "default": "./tslib.es6.mjs"}, "default": "./tslib.js"}}}"#,
            ),
            ("tslib.es6.mjs", "export function __extends() {}\n"),
            ("tslib.js", "exports.__extends = 1;\n"),
        ]),
    );
}

#[test]
fn the_import_map_workflow_runs_as_written() {
    let ws = Workspace::new();
    npm_tarballs(&ws);
    ws.write(
        "dist/package.json",
        r#"{"name": "app", "version": "1.4.0", "module": "js/main.js",
            "dependencies": {"lodash-es": "^4.17.21", "rxjs": "^7.8.1"}}"#,
    );
    ws.write(
        "dist/js/main.js",
        "import debounce from 'lodash-es/debounce.js';\nimport { of } from 'rxjs';\n\
         import { map } from 'rxjs/operators';\n",
    );
    let mut ran_serve = false;
    for line in block_under("### Import maps", "sh").lines() {
        let command = line.split(" #").next().unwrap_or_default().trim();
        if command.is_empty() {
            continue;
        }
        let (command, into) = match command.split_once(" > ") {
            Some((command, file)) => (command, Some(file.trim())),
            None => (command, None),
        };
        let words: Vec<&str> = command.split_whitespace().collect();
        assert_eq!(words.first(), Some(&"ccc"), "{line}");
        if words[1] == "serve" {
            // The server's map is the command's, but root-relative.
            let server = Server::start(&ws, &words[2..]);
            let served = get(&server.url("/assets/app/1.4.0/?importmap&integrity"), &[]);
            assert_eq!(served.status, 200, "{}", served.text());
            let written =
                std::fs::read_to_string(ws.path().join("importmap.json")).expect("importmap.json");
            assert_eq!(
                served.text(),
                written.replace("https://cdn.example.com", "")
            );
            ran_serve = true;
            continue;
        }
        let out = ws.ok(&words[1..]);
        if let Some(file) = into {
            ws.write(file, &out.stdout);
        }
    }
    assert!(ran_serve, "the workflow ends by serving");

    let map: serde_json::Value = serde_json::from_slice(
        &std::fs::read(ws.path().join("importmap.json")).expect("importmap.json"),
    )
    .expect("a map");
    let cdn = "https://cdn.example.com/assets";
    assert_eq!(map["imports"]["app"], format!("{cdn}/app/1.4.0/js/main.js"));
    assert_eq!(
        map["imports"]["lodash-es/debounce.js"],
        format!("{cdn}/lodash-es/4.17.21/debounce.js")
    );
    assert_eq!(
        map["imports"]["rxjs"],
        format!("{cdn}/rxjs/7.8.1/dist/esm5/index.js")
    );
    assert_eq!(
        map["imports"]["rxjs/operators"],
        format!("{cdn}/rxjs/7.8.1/dist/esm5/operators/index.js")
    );
    assert_eq!(
        map["imports"]["tslib"],
        format!("{cdn}/tslib/2.8.1/tslib.es6.mjs")
    );
    assert_eq!(
        map["scopes"][format!("{cdn}/rxjs/7.8.1/")]
            [format!("{cdn}/rxjs/7.8.1/dist/esm5/internal/of")],
        format!("{cdn}/rxjs/7.8.1/dist/esm5/internal/of.js")
    );
    assert_eq!(
        map["integrity"].as_object().map(|m| m.len()),
        Some(6),
        "{map}"
    );

    // The page the README shows loads the app by the name the map gives.
    let html = block_under("### Import maps", "html");
    assert!(html.contains("<script type=\"importmap\">"), "{html}");
    assert!(
        html.contains("<script type=\"module\">import 'app';</script>"),
        "{html}"
    );
}
