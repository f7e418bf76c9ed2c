//! docs/JSON.md against the real output: every documented command and
//! endpoint is run, and its JSON must have exactly the documented fields
//! with the documented types; every subcommand with `--json` must be
//! documented; and every output keeps the vocabulary (`*_at` times are
//! RFC 3339, `*_bytes` and `*_count` are unsigned integers, `sha256` is 64
//! hex digits).

use crate::serve_util::{Server, get, poll_until};
use crate::util::{Rng, Workspace, repo_root, unix_time};
use clap::CommandFactory;
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::Duration;

/// In a documented object, this key stands for fields the page does not
/// list: the listed ones must be there, others may be too.
const MORE: &str = "…";

/// The documented examples, by heading (`ccc ls --json`).
fn documented() -> BTreeMap<String, Value> {
    let path = repo_root().join("docs/JSON.md");
    let text = std::fs::read_to_string(&path).expect("docs/JSON.md");
    let mut out = BTreeMap::new();
    let mut heading: Option<String> = None;
    let mut block: Option<String> = None;
    for line in text.lines() {
        if let Some(json) = block.as_mut() {
            if line.starts_with("```") {
                let name = heading.take().expect("a ```json block under a ### heading");
                let value = serde_json::from_str(json)
                    .unwrap_or_else(|e| panic!("docs/JSON.md, {name}: invalid JSON: {e}"));
                out.insert(name, value);
                block = None;
            } else {
                json.push_str(line);
                json.push('\n');
            }
        } else if let Some(h) = line.strip_prefix("### ") {
            heading = Some(h.trim_matches('`').to_string());
        } else if line == "```json" && heading.is_some() {
            block = Some(String::new());
        }
    }
    out
}

/// What kind of JSON value `v` is, integers told from other numbers.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_u64() || n.is_i64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Checks that `real` has the shape of the documented `doc`; `at` names
/// the place for the message.
fn same_shape(doc: &Value, real: &Value, at: &str, errors: &mut Vec<String>) {
    match (doc, real) {
        (Value::Object(d), Value::Object(r)) => {
            for (key, dv) in d {
                if key == MORE {
                    continue;
                }
                match r.get(key) {
                    // A time that has not come is null (the vocabulary).
                    Some(rv) if key.ends_with("_at") && (dv.is_null() || rv.is_null()) => {}
                    Some(rv) => same_shape(dv, rv, &format!("{at}.{key}"), errors),
                    None => errors.push(format!("{at}.{key}: documented, not printed")),
                }
            }
            if !d.contains_key(MORE) {
                for key in r.keys().filter(|k| !d.contains_key(*k)) {
                    errors.push(format!("{at}.{key}: printed, not documented"));
                }
            }
        }
        (Value::Array(d), Value::Array(r)) => {
            if let Some(first) = d.first() {
                for (i, rv) in r.iter().enumerate() {
                    same_shape(first, rv, &format!("{at}[{i}]"), errors);
                }
            }
        }
        // An elided value: any object or list.
        (Value::String(s), Value::Object(_) | Value::Array(_)) if s == MORE => {}
        (d, r) if kind(d) == kind(r) => {}
        // A float that happens to be whole is still a number.
        (d, r) if kind(d) == "number" && kind(r) == "integer" => {}
        (d, r) => errors.push(format!(
            "{at}: documented as {} ({d}), printed as {} ({r})",
            kind(d),
            kind(r)
        )),
    }
}

/// Checks the vocabulary in every field of `v`.
fn vocabulary(v: &Value, at: &str, errors: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            for (key, value) in map {
                let here = format!("{at}.{key}");
                if key.ends_with("_at") && !value.is_null() {
                    match value.as_str().map(humantime::parse_rfc3339) {
                        Some(Ok(_)) if value.as_str().is_some_and(|s| s.ends_with('Z')) => {}
                        _ => errors.push(format!("{here}: {value} is not an RFC 3339 UTC time")),
                    }
                }
                if (key.ends_with("_bytes") || key.ends_with("_count")) && !value.is_u64() {
                    errors.push(format!("{here}: {value} is not an unsigned integer"));
                }
                if key == "sha256" {
                    let hex = value.as_str().unwrap_or_default();
                    if hex.len() != 64
                        || !hex
                            .bytes()
                            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
                    {
                        errors.push(format!("{here}: {value} is not a lowercase sha256"));
                    }
                }
                vocabulary(value, &here, errors);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                vocabulary(item, &format!("{at}[{i}]"), errors);
            }
        }
        _ => {}
    }
}

/// A catalog where every list the docs show has something in it.
fn fixture() -> Workspace {
    let ws = Workspace::new();
    let mut rng = Rng::new(17);
    let text = rng.text(20_000);
    ws.write("v1/js/app.js", &text);
    ws.write("v1/js/copy.js", &text);
    ws.write("v1/index.html", "<p>1</p>\n");
    ws.publish("app@1.0.0", "v1", &[]);
    ws.write("old/a.txt", "old\n");
    ws.publish("old-app@0.1.0", "old", &[]);
    import_map_fixture(&ws);
    ws
}

/// `web@1.0.0`, whose import map has a scope (rxjs needs another tslib
/// than web), a relative import without its extension and a specifier
/// nothing satisfies.
fn import_map_fixture(ws: &Workspace) {
    let packages: [(&str, &[(&str, &str)]); 4] = [
        (
            "tslib@1.14.1",
            &[
                (
                    "package.json",
                    r#"{"name": "tslib", "version": "1.14.1", "module": "tslib.es6.js"}"#,
                ),
                ("tslib.es6.js", "export function __extends() {}\n"),
            ],
        ),
        (
            "tslib@2.8.1",
            &[
                (
                    "package.json",
                    r#"{"name": "tslib", "version": "2.8.1",
                        "exports": {".": {"module": "./tslib.es6.mjs", "default": "./tslib.js"}}}"#,
                ),
                ("tslib.es6.mjs", "export function __extends() {}\n"),
                ("tslib.js", "exports.__extends = 1;\n"),
            ],
        ),
        (
            "rxjs@7.8.1",
            &[
                (
                    "package.json",
                    r#"{"name": "rxjs", "version": "7.8.1", "module": "index.js",
                        "dependencies": {"tslib": "^1.9.0"}}"#,
                ),
                (
                    "index.js",
                    "import 'tslib';\nexport * from './internal/of';\n",
                ),
                ("internal/of.js", "export const of = 1;\n"),
            ],
        ),
        (
            "web@1.0.0",
            &[
                (
                    "package.json",
                    r#"{"name": "web", "version": "1.0.0", "module": "js/main.js",
                        "dependencies": {"rxjs": "^7.8.0", "tslib": "^2.1.0", "left-pad": "^1.0.0"}}"#,
                ),
                (
                    "js/main.js",
                    "import 'rxjs';\nimport 'tslib';\nimport 'left-pad';\n",
                ),
            ],
        ),
    ];
    for (spec, files) in packages {
        let dir = format!("importmap/{spec}");
        for (path, text) in files {
            ws.write(&format!("{dir}/{path}"), text);
        }
        ws.publish(spec, &dir, &[]);
    }
}

/// Runs what the heading `name` documents.
fn run(ws: &Workspace, name: &str) -> Value {
    let out = ws.path().to_str().expect("UTF-8 temp path");
    match name {
        "ccc ls --json" => ws.json(&["ls", "--json"]),
        "ccc ls PKG --json" => ws.json(&["ls", "app", "--json"]),
        "ccc ls PKG@VERSION --json" => ws.json(&["ls", "app@latest", "--json"]),
        "ccc inspect PKG@VERSION --json" => ws.json(&["inspect", "app@^1", "--json"]),
        "ccc inspect PKG@VERSION/PATH --json" => {
            ws.json(&["inspect", "app@1.1.0/js/app.js", "--json"])
        }
        "ccc diff PKG@VERSION [PKG@]VERSION --json" => {
            ws.json(&["diff", "app@1.0.0", "latest", "--json"])
        }
        "ccc rm PKG@VERSION... --json" => {
            // A tag of its own, so that `tags_removed` has one; gone after,
            // so that gc may remove the version.
            ws.ok(&["tag", "add", "app@1.0.0", "legacy"]);
            let out = ws.json(&["rm", "app@1.0.0", "old-app@0.1.0", "--dry-run", "--json"]);
            ws.ok(&["tag", "rm", "app", "legacy"]);
            out
        }
        "ccc tag ls PKG --json" => ws.json(&["tag", "ls", "app", "--json"]),
        "ccc site ls --json" => {
            // A rollback, so that the site has a recent version; undone.
            ws.ok(&["site", "set", "default", "app", "--spa"]);
            ws.ok(&["tag", "add", "app@1.0.0", "latest"]);
            let out = ws.json(&["site", "ls", "--json"]);
            ws.ok(&["tag", "rm", "app", "latest"]);
            ws.ok(&["site", "rm", "default"]);
            out
        }
        // app@1.0.0 is an older release; each package's latest stays.
        "ccc gc --json" => ws.json(&["gc", "--keep", "1", "--dry-run", "--json"]),
        "ccc backup OUT --json" => ws.json(&["backup", &format!("{out}/backup.db"), "--json"]),
        "ccc export [PKG[@VERSION]] DIR --json" => {
            ws.json(&["export", "app", &format!("{out}/export"), "--json"])
        }
        "ccc check DIR|FILE|PKG@VERSION --json" => {
            // A problem of each shape the page shows first: a case mismatch.
            let dir = format!("{out}/check");
            ws.write(&format!("{dir}/js/app.js"), "import './Util.js';\n");
            ws.write(&format!("{dir}/js/util.js"), "export {};\n");
            let out = ws.fails(&["check", &dir, "--json"], 1);
            serde_json::from_slice(&out.stdout).expect("check --json")
        }
        "ccc importmap PKG@VERSION --json" => {
            let out = ws.fails(&["importmap", "web@1.0.0", "--integrity", "--json"], 1);
            serde_json::from_slice(&out.stdout).expect("importmap --json")
        }
        "ccc verify --json" => {
            // Last: it damages the catalog.
            ws.conn()
                .execute(
                    "UPDATE blobs SET body = x'1f8b' WHERE id = (SELECT min(id) FROM blobs)",
                    [],
                )
                .expect("damage a blob");
            let out = ws.fails(&["verify", "--json"], 1);
            serde_json::from_slice(&out.stdout).expect("verify --json")
        }
        "ccc token create NAME --json" => ws.json(&[
            "token",
            "create",
            "docs-made",
            "--scope",
            "publish,tag:app",
            "--json",
        ]),
        "ccc token ls --json" => ws.json(&["token", "ls", "--json"]),
        "ccc recompress --json" => ws.json(&["recompress", "--json"]),
        "ccc audit --json" => ws.json(&["audit", "--token", "docs", "--json"]),
        other => panic!("docs/JSON.md documents {other:?}, which this test cannot run"),
    }
}

/// The JSON the server answers for each documented endpoint.
fn server_answers(ws: &Workspace) -> BTreeMap<String, Value> {
    let server = Server::start(ws, &["--access-log", "--log-format", "json"]);
    let mut out = BTreeMap::new();
    let index = get(&server.url("/assets/"), &[]);
    assert_eq!(index.status, 200, "{}", index.text());
    out.insert("GET /assets/".into(), index.json());
    let package = get(&server.url("/assets/app/"), &[]);
    assert_eq!(package.status, 200, "{}", package.text());
    out.insert("GET /assets/PKG/".into(), package.json());
    let listing = get(&server.url("/assets/app/1.1.0/"), &[]);
    assert_eq!(listing.status, 200, "{}", listing.text());
    out.insert("GET /assets/PKG/VERSION/".into(), listing.json());
    let map = get(&server.url("/assets/web/1.0.0/?importmap&integrity"), &[]);
    assert_eq!(map.status, 200, "{}", map.text());
    out.insert("GET /assets/PKG/VERSION/?importmap".into(), map.json());
    let from_a_page = [
        ("Referer", "https://example.com/"),
        ("User-Agent", "Mozilla/5.0"),
    ];
    assert_eq!(
        get(&server.url("/assets/app/1.1.0/js/app.js"), &from_a_page).status,
        200
    );
    let logged = |line: &&str| line.contains("\"target\":\"/assets/app/1.1.0/js/app.js\"");
    poll_until(Duration::from_secs(10), || {
        server.stdout().lines().any(|l| logged(&l))
    });
    let stdout = server.stdout();
    let line = stdout.lines().find(logged).expect("the asset's log line");
    out.insert(
        "ccc serve --access-log --log-format json".into(),
        serde_json::from_str(line).expect("a JSON log line"),
    );
    out.insert("GET /_stats".into(), server.stats());
    out.insert(
        "GET /healthz".into(),
        get(&server.url("/healthz"), &[]).json(),
    );
    let bad = get(&server.url("/assets/app/1.1.0/a%00.js"), &[]);
    assert_eq!(bad.status, 400, "{}", bad.text());
    out.insert("Errors".into(), bad.json());
    let missing = get(&server.url("/assets/app/1.1.0/nope.js"), &[]);
    assert_eq!(missing.status, 404);
    out.insert("404 Not Found".into(), missing.json());
    out.extend(write_api_answers(ws));
    out
}

/// The write API's answers: a publish, a tag, a refusal.
fn write_api_answers(ws: &Workspace) -> BTreeMap<String, Value> {
    let server = Server::start(ws, &["--publish-api"]);
    let made = ws.ok(&[
        "token",
        "create",
        "docs",
        "--scope",
        "publish,tag,remove:app",
    ]);
    let token = String::from_utf8(made.stdout).expect("UTF-8");
    let auth = format!("Bearer {}", token.trim());
    let tgz = {
        let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        let mut tar = tar::Builder::new(gz);
        for (name, bytes) in [
            (
                "package/package.json",
                &br#"{"name":"app","version":"2.0.0"}"#[..],
            ),
            ("package/index.js", b"export {};\n"),
        ] {
            let mut header = tar::Header::new_gnu();
            header.set_size(bytes.len() as u64);
            header.set_mode(0o644);
            tar.append_data(&mut header, name, bytes).expect("append");
        }
        tar.into_inner().expect("tar").finish().expect("gzip")
    };
    let agent = crate::serve_util::agent();
    let send = |method: &str, path: &str, body: &[u8]| {
        let request = ureq::http::Request::builder()
            .method(method)
            .uri(server.url(path))
            .header("Authorization", &auth)
            .body(body.to_vec())
            .expect("request");
        let response = agent.run(request).expect("an answer");
        let text = response.into_body().read_to_string().expect("body");
        serde_json::from_str::<Value>(&text).expect("JSON")
    };
    let mut out = BTreeMap::new();
    let published = send("PUT", "/-/api/v1/publish/app/2.0.0", &tgz);
    assert_eq!(published["status"], 201, "{published}");
    out.insert("PUT /-/api/v1/publish/PKG/VERSION".into(), published);
    let again = send("PUT", "/-/api/v1/publish/app/2.0.0", &tgz);
    assert_eq!(again["status"], 409, "{again}");
    out.insert("The write API's refusals".into(), again);
    let tagged = send("PUT", "/-/api/v1/dist-tags/app/beta/2.0.0", b"");
    assert_eq!(tagged["status"], 200, "{tagged}");
    out.insert("PUT /-/api/v1/dist-tags/PKG/TAG/VERSION".into(), tagged);
    let removed = send("DELETE", "/-/api/v1/versions/app/2.0.0", b"");
    assert_eq!(removed["status"], 200, "{removed}");
    out
}

#[cfg(feature = "causal")]
fn causal(ws: &Workspace) -> Value {
    let out = ws
        .ccc()
        .args([
            "causal",
            "--port",
            "0",
            "--rounds",
            "1",
            "--window",
            "200ms",
            "--warmup",
            "300ms",
            "--settle",
            "20ms",
            "--min-delta",
            "5",
            "--sites",
            "cache-lookup",
            "--speedups",
            "0,50",
            "--load",
            "builtin:2",
            "--seed",
            "7",
            "--json-out",
            "run.json",
        ])
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .expect("run ccc causal");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read(ws.path().join("run.json")).expect("run.json");
    serde_json::from_slice(&text).expect("causal --json-out")
}

#[test]
fn the_documented_json_is_the_printed_json() {
    let docs = documented();
    let ws = fixture();

    // The second version shares app.js with the first, and brings a file
    // whose `.gz` sibling name is taken, and a symlink to skip.
    ws.write("v2/js/app.js", ws.cat("app@1.0.0/js/app.js"));
    ws.write("v2/js/new.js", Rng::new(3).text(9_000));
    ws.write("v2/js/new.js.gz", "a real file of that name\n");
    ws.write("v2/index.html", "<p>2</p>\n");
    std::os::unix::fs::symlink("/etc/hostname", ws.path().join("v2/link")).expect("symlink");
    let mut real: BTreeMap<String, Value> = BTreeMap::new();
    real.insert(
        "ccc publish PKG@VERSION DIR --json".into(),
        ws.publish_json("app@1.1.0", "v2", &[]),
    );
    ws.ok(&["tag", "add", "app@1.1.0", "next"]);
    real.extend(server_answers(&ws));
    #[cfg(feature = "causal")]
    real.insert("ccc causal --json-out FILE".into(), causal(&ws));
    // Without the profiler, `ccc causal` only explains how to get it.
    let causal_built = cfg!(feature = "causal");
    let mut names: Vec<&String> = docs
        .keys()
        .filter(|n| !real.contains_key(*n))
        .filter(|n| causal_built || !n.starts_with("ccc causal"))
        .collect();
    // verify damages the catalog: run it last.
    names.sort_by_key(|n| n.starts_with("ccc verify"));
    for name in names {
        real.insert(name.clone(), run(&ws, name));
    }

    let mut errors = Vec::new();
    for (name, doc) in &docs {
        match real.get(name) {
            Some(value) => same_shape(doc, value, name, &mut errors),
            None if !causal_built && name.starts_with("ccc causal") => {}
            None => errors.push(format!("{name}: documented, never run")),
        }
    }
    for (name, value) in &real {
        vocabulary(value, name, &mut errors);
    }
    assert!(
        errors.is_empty(),
        "docs/JSON.md disagrees with ccc:\n{}",
        errors.join("\n")
    );

    // The fixture filled every list the shapes are checked through.
    for (name, field) in [
        ("ccc publish PKG@VERSION DIR --json", "skipped"),
        ("ccc rm PKG@VERSION... --json", "packages_removed"),
        ("ccc rm PKG@VERSION... --json", "tags_removed"),
        ("ccc gc --json", "versions"),
        ("ccc gc --json", "kept"),
        ("ccc verify --json", "problems"),
        ("ccc check DIR|FILE|PKG@VERSION --json", "problems"),
        ("ccc importmap PKG@VERSION --json", "dependencies"),
        ("ccc importmap PKG@VERSION --json", "unresolved"),
        ("ccc importmap PKG@VERSION --json", "lacking"),
        ("ccc export [PKG[@VERSION]] DIR --json", "siblings_skipped"),
        ("ccc inspect PKG@VERSION/PATH --json", "same_content"),
        ("ccc diff PKG@VERSION [PKG@]VERSION --json", "added"),
        ("ccc diff PKG@VERSION [PKG@]VERSION --json", "removed"),
        ("ccc diff PKG@VERSION [PKG@]VERSION --json", "changed"),
    ] {
        let list = real[name][field].as_array();
        assert!(list.is_some_and(|l| !l.is_empty()), "{name}: empty {field}");
    }
    // The listing is the same object whether ls or the server prints it.
    assert_eq!(
        real["ccc ls PKG@VERSION --json"],
        real["GET /assets/PKG/VERSION/"]
    );
    // The package document is the tags and versions ls prints.
    assert_eq!(
        real["GET /assets/PKG/"]["versions"],
        real["ccc ls PKG --json"]
    );
    assert_eq!(
        real["GET /assets/PKG/"]["tags"],
        real["ccc tag ls PKG --json"]
    );
    // The server's import map is the one the command writes.
    assert_eq!(
        real["GET /assets/PKG/VERSION/?importmap"],
        real["ccc importmap PKG@VERSION --json"]["importmap"]
    );
    let published = &real["ccc ls PKG --json"][0]["published_at"];
    assert!(unix_time(published) > 0);
}

#[test]
fn every_json_flag_is_documented() {
    let docs = documented();
    let cli = ccc::cli::Cli::<ccc::cli::Command>::command();
    let with_json: Vec<String> = cli
        .get_subcommands()
        .filter(|c| !c.is_hide_set())
        .filter(|c| c.get_arguments().any(|a| a.get_long() == Some("json")))
        .map(|c| c.get_name().to_string())
        .collect();
    assert!(with_json.len() >= 8, "{with_json:?}");
    for name in with_json {
        let prefix = format!("ccc {name} ");
        assert!(
            docs.keys().any(|heading| heading.starts_with(&prefix)),
            "`ccc {name} --json` is not in docs/JSON.md"
        );
    }
}
