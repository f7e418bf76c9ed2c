//! Deltas in a real browser: headless Chromium, with one profile, loads
//! a page of release N from ccc, then the page of release N+1, over
//! `http://localhost` and over HTTPS on localhost. The page has an import
//! map (with integrity), a module script, a stylesheet and classic
//! scripts with integrity. The upgrade pairs are real: react and react-dom
//! 18.3.0 -> 18.3.1 (production UMD builds) and three 0.169.0 -> 0.170.0
//! from npm, and an app built twice by Vite with
//! one line changed. The bytes Chromium received for release N+1
//! (`encodedBodySize`) are compared with a fresh profile's, which has no
//! dictionary and gets brotli: the patch releases must come in at least
//! 85% smaller, with no console error and every integrity check passed.
//!
//! Needs Debian's chromium, the npm tarballs in `CCC_NPM_TARBALLS` and
//! Vite in `CCC_TEST_BUNDLERS`, which .ci/run provides; hence `#[ignore]`.

use crate::chromium::Browser;
use crate::serve_protocol::{certificates, spki_hash};
use crate::serve_util::Server;
use crate::util::{Rng, Workspace};
use base64::Engine;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::path::Path;

/// One release of the page: its version and the URLs of what it loads.
struct Release {
    /// The app's version, which its script says once run.
    app: String,
    page: String,
    react: String,
    react_dom: String,
    three: String,
    script: String,
    style: String,
}

fn sri(bytes: &[u8]) -> String {
    format!(
        "sha256-{}",
        base64::engine::general_purpose::STANDARD.encode(Sha256::digest(bytes))
    )
}

/// The app's source: a module of a few hundred functions, its stylesheet,
/// and `changed`, the one line that differs between builds.
fn app_source(ws: &Workspace, dir: &str, changed: &str) {
    let mut rng = Rng::new(3);
    let mut js = String::from("import './style.css';\n");
    for i in 0..300 {
        let n = rng.below(1_000_000);
        js.push_str(&format!(
            "export function step{i}(x) {{ if (x > {n}) {{ return 'step {i} went past {n}: ' + x; }} \
             return step{}(x * 3 + {i}); }}\n",
            (i + 1) % 300
        ));
    }
    js.push_str(&format!("window.appVersion = '{changed}';\n"));
    js.push_str("window.appReady = step0.length + step299.length;\n");
    let mut css = String::new();
    for i in 0..400 {
        let n = rng.below(1000);
        css.push_str(&format!(
            ".item-{i} {{ margin: {n}px; color: #{n:03x}; }}\n"
        ));
    }
    ws.write(
        &format!("{dir}/index.html"),
        "<!doctype html><script type=module src=/main.js></script>\n",
    );
    ws.write(&format!("{dir}/main.js"), js);
    ws.write(&format!("{dir}/style.css"), css);
}

/// Builds the app in `dir` with Vite into `dir/dist`: the hashed names of
/// its script and stylesheet.
fn vite_build(ws: &Workspace, bundlers: &Path, dir: &str) -> (String, String) {
    let root = ws.path().join(dir);
    let out = std::process::Command::new(bundlers.join("node_modules/.bin/vite"))
        .arg("build")
        .arg(&root)
        .args(["--logLevel", "error", "--emptyOutDir"])
        .current_dir(bundlers)
        .output()
        .expect("vite runs");
    assert!(
        out.status.success(),
        "vite build: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut script = None;
    let mut style = None;
    for entry in std::fs::read_dir(root.join("dist/assets")).expect("dist/assets") {
        let name = entry
            .expect("entry")
            .file_name()
            .into_string()
            .expect("UTF-8");
        match name.rsplit('.').next() {
            Some("js") => script = Some(format!("assets/{name}")),
            Some("css") => style = Some(format!("assets/{name}")),
            _ => {}
        }
    }
    (script.expect("a script"), style.expect("a stylesheet"))
}

/// Publishes the packages of one release and its page.
fn publish_release(
    ws: &Workspace,
    tarballs: &Path,
    bundlers: &Path,
    (react_dom, three, app): (&str, &str, &str),
) -> Release {
    ws.ok(&[
        "publish",
        &format!("react@{react_dom}"),
        tarballs
            .join(format!("react-{react_dom}.tgz"))
            .to_str()
            .expect("UTF-8"),
    ]);
    ws.ok(&[
        "publish",
        &format!("react-dom@{react_dom}"),
        tarballs
            .join(format!("react-dom-{react_dom}.tgz"))
            .to_str()
            .expect("UTF-8"),
    ]);
    ws.ok(&[
        "publish",
        &format!("three@{three}"),
        tarballs
            .join(format!("three-{three}.tgz"))
            .to_str()
            .expect("UTF-8"),
    ]);
    let dir = format!("app-{app}");
    app_source(ws, &dir, app);
    let (script, style) = vite_build(ws, bundlers, &dir);
    ws.publish(&format!("app@{app}"), &format!("{dir}/dist"), &[]);

    let release = Release {
        app: app.to_string(),
        page: format!("/assets/page/{app}/index.html"),
        react: format!("/assets/react/{react_dom}/umd/react.production.min.js"),
        react_dom: format!("/assets/react-dom/{react_dom}/umd/react-dom.production.min.js"),
        three: format!("/assets/three/{three}/build/three.module.js"),
        script: format!("/assets/app/{app}/{script}"),
        style: format!("/assets/app/{app}/{style}"),
    };
    let file = |target: &str| ws.cat(target);
    let react_sri = sri(&file(&format!(
        "react@{react_dom}/umd/react.production.min.js"
    )));
    let react_dom_sri = sri(&file(&format!(
        "react-dom@{react_dom}/umd/react-dom.production.min.js"
    )));
    let three_sri = sri(&file(&format!("three@{three}/build/three.module.js")));
    let script_sri = sri(&file(&format!("app@{app}/{script}")));
    let style_sri = sri(&file(&format!("app@{app}/{style}")));
    let map = serde_json::json!({
        "imports": { "three": release.three, "app": release.script },
        "integrity": { release.three.clone(): three_sri, release.script.clone(): script_sri },
    });
    ws.write(
        &format!("page-{app}/index.html"),
        format!(
            "<!doctype html><meta charset=utf-8><title>release {app}</title>\
             <link rel=icon href=\"data:,\">\n\
             <link rel=stylesheet href=\"{style}\" integrity=\"{style_sri}\">\n\
             <script src=\"{react}\" integrity=\"{react_sri}\"></script>\n\
             <script src=\"{react_dom}\" integrity=\"{react_dom_sri}\"></script>\n\
             <script type=importmap>{map}</script>\n\
             <script type=module>\n\
             import * as THREE from 'three';\n\
             import 'app';\n\
             window.done = {{three: THREE.REVISION, app: window.appVersion, react: ReactDOM.version}};\n\
             </script>\n",
            style = release.style,
            react = release.react,
            react_dom = release.react_dom,
        ),
    );
    ws.publish(&format!("page@{app}"), &format!("page-{app}"), &[]);
    release
}

/// Loads `url` and waits for its module to finish: what it reported (no
/// error allowed) and the bytes received for each of `release`'s files.
fn load(browser: &mut Browser, base: &str, release: &Release) -> [(String, u64); 5] {
    let reports = browser.goto(&format!("{base}{}", release.page));
    let done = browser.eval(
        "new Promise(r => { const t = () => window.done ? r(window.done) : setTimeout(t, 50); t(); })",
    );
    assert!(
        done["react"]
            .as_str()
            .is_some_and(|v| v.starts_with("18.3.")),
        "{done}"
    );
    assert!(
        release
            .three
            .contains(&format!("/0.{}.", done["three"].as_str().expect("three"))),
        "{done}"
    );
    assert_eq!(done["app"].as_str(), Some(release.app.as_str()), "{done}");
    let bad: Vec<_> = reports
        .iter()
        .chain(browser.reports().iter())
        .filter(|r| matches!(r.level.as_str(), "error" | "exception"))
        .cloned()
        .collect();
    assert!(bad.is_empty(), "{}: {bad:?}", release.page);
    let entries: Value = browser.eval(
        "performance.getEntriesByType('resource').map(e => [new URL(e.name).pathname, e.encodedBodySize])",
    );
    let received = |path: &str| -> u64 {
        entries
            .as_array()
            .expect("entries")
            .iter()
            .find(|e| e[0] == path)
            .and_then(|e| e[1].as_u64())
            .unwrap_or_else(|| panic!("{path} not loaded: {entries}"))
    };
    [
        ("react-dom".into(), received(&release.react_dom)),
        ("react".into(), received(&release.react)),
        ("three".into(), received(&release.three)),
        ("app script".into(), received(&release.script)),
        ("app stylesheet".into(), received(&release.style)),
    ]
}

#[test]
#[ignore = "needs chromium, CCC_NPM_TARBALLS and CCC_TEST_BUNDLERS; .ci/run provides them"]
fn chromium_downloads_only_what_changed() {
    let tarballs = std::env::var("CCC_NPM_TARBALLS").expect("CCC_NPM_TARBALLS");
    let bundlers = std::env::var("CCC_TEST_BUNDLERS").expect("CCC_TEST_BUNDLERS");
    let (tarballs, bundlers) = (Path::new(&tarballs), Path::new(&bundlers));
    let ws = Workspace::new();
    let old = publish_release(&ws, tarballs, bundlers, ("18.3.0", "0.169.0", "1.0.0"));
    let new = publish_release(&ws, tarballs, bundlers, ("18.3.1", "0.170.0", "1.0.1"));
    assert_ne!(old.script.rsplit('/').next(), new.script.rsplit('/').next());

    let (_, cert, key) = certificates(ws.path(), "localhost");
    let plain = Server::start(&ws, &[]);
    let tls = Server::start(
        &ws,
        &[
            "--tls-cert",
            cert.to_str().expect("UTF-8"),
            "--tls-key",
            key.to_str().expect("UTF-8"),
        ],
    );
    let trust = [format!(
        "--ignore-certificate-errors-spki-list={}",
        spki_hash(&key)
    )];
    for (scheme, server) in [("http", &plain), ("https", &tls)] {
        let base = format!("{scheme}://localhost:{}", server.addr.port());
        // One profile: release N, then N+1.
        let mut browser = Browser::launch_with(&trust);
        load(&mut browser, &base, &old);
        // The dictionaries are stored once their responses complete.
        browser.drain(std::time::Duration::from_millis(500));
        let with = load(&mut browser, &base, &new);
        drop(browser);
        // A fresh profile holds no dictionary: brotli.
        let mut browser = Browser::launch_with(&trust);
        let without = load(&mut browser, &base, &new);
        for ((what, with), (_, without)) in with.iter().zip(&without) {
            let less = 100.0 * (1.0 - *with as f64 / *without as f64);
            println!(
                "{scheme} {what}: {with} B with dictionaries, {without} B without ({less:.1}% less)"
            );
            assert!(with < without, "{scheme} {what}: {with} against {without}");
        }
        for (what, with) in &with[..2] {
            let without = without.iter().find(|(w, _)| w == what).expect("same").1;
            assert!(
                *with * 100 <= without * 15,
                "{scheme} {what}: {with} B, not 85% below brotli's {without} B"
            );
        }
    }
}
