//! Publishing from CI (`ccc serve --publish-api`, `ccc publish --to`):
//! tokens and their scopes against every action, the answers' shapes, and
//! hostile uploads (links, traversal, gzip bombs, bodies past the limit,
//! stalled and cut-off bodies, a server killed mid-publish), each leaving
//! the catalog as it was. The real npm tarballs over HTTPS, and the 1 GiB
//! uploads, are `#[ignore]`d and run by `.ci/run`.

use crate::serve_protocol::certificates;
use crate::serve_util::{Server, agent};
use crate::util::Workspace;
use serde_json::Value;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// A gzipped tar of `entries` (name, bytes), as `npm pack` lays them out
/// when the names start with `package/`.
fn tgz(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let mut tar = tar::Builder::new(gz);
    for (name, bytes) in entries {
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        header.set_entry_type(tar::EntryType::Regular);
        tar.append_data(&mut header, name, *bytes).expect("append");
    }
    tar.into_inner().expect("tar").finish().expect("gzip")
}

/// A package's tarball as npm packs it: `package/package.json` naming
/// `name@version`, and a script.
fn package(name: &str, version: &str) -> Vec<u8> {
    let manifest = format!(r#"{{"name":"{name}","version":"{version}"}}"#);
    let script = format!("export const version = '{version}';\n");
    tgz(&[
        ("package/package.json", manifest.as_bytes()),
        ("package/index.js", script.as_bytes()),
    ])
}

/// A token made on the catalog with `scopes` (`--scope` values).
fn token(ws: &Workspace, name: &str, scopes: &[&str]) -> String {
    let mut args = vec!["token", "create", name];
    for scope in scopes {
        args.extend(["--scope", scope]);
    }
    let out = ws.ok(&args);
    let token = String::from_utf8(out.stdout).expect("UTF-8");
    let token = token.trim().to_string();
    assert!(token.starts_with("ccc_") && token.len() == 63, "{token:?}");
    token
}

/// A catalog with seed@1.0.0, and a server on it with the write API on.
fn setup(extra: &[&str]) -> (Workspace, Server) {
    let ws = Workspace::new();
    ws.write("seed/index.html", "<p>seed</p>");
    ws.publish("seed@1.0.0", "seed", &[]);
    let mut args = vec!["--publish-api"];
    args.extend_from_slice(extra);
    let server = Server::start(&ws, &args);
    (ws, server)
}

/// `method` on `path` of the server with `token` and `body`: status and
/// JSON answer.
fn call(
    server: &Server,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: &[u8],
) -> (u16, Value) {
    let request = ureq::http::Request::builder()
        .method(method)
        .uri(server.url(path));
    let request = match token {
        Some(t) => request.header("Authorization", format!("Bearer {t}")),
        None => request,
    };
    let response = agent()
        .run(request.body(body.to_vec()).expect("request"))
        .expect("an answer");
    let status = response.status().as_u16();
    let text = response.into_body().read_to_string().expect("a body");
    let json: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(
        json["status"], status,
        "the body's status is the answer's: {json}"
    );
    assert!(json["code"].is_string(), "every answer has a code: {json}");
    (status, json)
}

fn versions(ws: &Workspace, package: &str) -> Vec<String> {
    let out = ws
        .ccc()
        .args(["ls", package, "--json"])
        .output()
        .expect("ls");
    if !out.status.success() {
        return Vec::new();
    }
    let listed: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    listed
        .as_array()
        .expect("array")
        .iter()
        .map(|v| v["version"].as_str().expect("version").to_string())
        .collect()
}

fn audit(ws: &Workspace) -> Vec<Value> {
    ws.json(&["audit", "--json", "--limit", "0"])
        .as_array()
        .expect("array")
        .clone()
}

#[test]
fn a_token_is_shown_once_and_only_its_hash_is_kept() {
    let ws = Workspace::new();
    ws.write("d/a.txt", "a");
    ws.publish("seed@1.0.0", "d", &[]);
    let made = ws.ok(&[
        "token",
        "create",
        "ci",
        "--scope",
        "publish,tag:@team/*,app",
    ]);
    let secret = String::from_utf8(made.stdout).expect("UTF-8");
    let secret = secret.trim();
    let said = String::from_utf8_lossy(&made.stderr);
    assert!(
        said.contains("shown once") && !said.contains(secret),
        "{said}"
    );
    // Nowhere in the catalog, nor in what ls prints.
    let db = std::fs::read(ws.db()).expect("read");
    let verifier = &secret[16..56];
    assert!(
        !db.windows(verifier.len()).any(|w| w == verifier.as_bytes()),
        "the secret is in the catalog file"
    );
    let listed = ws.json(&["token", "ls", "--json"]);
    assert!(!listed.to_string().contains(verifier));
    assert_eq!(listed[0]["name"], "ci");
    assert_eq!(listed[0]["state"], "active");
    assert_eq!(
        listed[0]["scopes"][0]["actions"],
        serde_json::json!(["publish", "tag"])
    );
    assert_eq!(
        listed[0]["scopes"][0]["packages"],
        serde_json::json!(["@team/*", "app"])
    );
    assert!(listed[0]["expires_at"].is_string() && listed[0]["last_used_at"].is_null());
    // A second token of the same name is refused until the first is revoked.
    ws.fails(&["token", "create", "ci", "--scope", "publish:app"], 1);
    ws.ok(&["token", "revoke", "ci"]);
    ws.fails(&["token", "revoke", "ci"], 1);
    let never = ws.ok(&["token", "create", "ci", "--expires", "never", "--json"]);
    let never: Value = serde_json::from_slice(&never.stdout).expect("JSON");
    assert!(never["expires_at"].is_null() && never["token"].as_str().is_some());
    let warned = String::from_utf8_lossy(&ws.ok(&["token", "create", "idle"]).stderr).into_owned();
    assert!(warned.contains("can do nothing"), "{warned}");
    let rows = audit(&ws);
    let actions: Vec<&str> = rows
        .iter()
        .map(|r| r["action"].as_str().expect("action"))
        .collect();
    assert_eq!(
        actions,
        [
            "token-create",
            "token-revoke",
            "token-create",
            "token-create"
        ]
    );
    assert!(
        !serde_json::to_string(&rows)
            .expect("JSON")
            .contains(verifier)
    );
}

/// A writer whose every version comes from CI starts from its first
/// token: `token create` makes the catalog, `serve --publish-api` serves
/// it empty, and the first upload lands.
#[test]
fn a_new_writer_starts_from_its_first_token() {
    let ws = Workspace::new();
    assert!(!ws.db().exists());
    let secret = token(&ws, "ci", &["publish:app"]);
    assert!(ws.db().exists());
    let server = Server::start(&ws, &["--publish-api"]);
    let (status, json) = call(
        &server,
        "PUT",
        "/-/api/v1/publish/app/1.0.0",
        Some(&secret),
        &package("app", "1.0.0"),
    );
    assert_eq!(status, 201, "{json}");
    let got = agent()
        .get(server.url("/assets/app/1.0.0/index.js"))
        .call()
        .expect("GET");
    assert_eq!(got.status(), 200);
    assert_eq!(versions(&ws, "app"), ["1.0.0"]);
}

/// Every kind of token against every action: what its scopes grant
/// succeeds, all else is refused with 401 (no token, expired, revoked),
/// 403 (out of scope) or 409 (a version it may not replace), and the
/// catalog changes only for what succeeded.
#[test]
fn every_scope_against_every_action() {
    let (ws, server) = setup(&[]);
    let kinds: Vec<(&str, Vec<&str>)> = vec![
        ("publish", vec!["publish:app"]),
        ("replace", vec!["replace:app"]),
        ("publish-replace", vec!["publish,replace:app"]),
        ("tag", vec!["tag:app"]),
        ("remove", vec!["remove:app"]),
        ("all-app", vec!["publish,replace,tag,remove:app"]),
        ("other-package", vec!["publish,replace,tag,remove:@team/*"]),
        ("stats", vec!["read-stats"]),
        ("none", vec![]),
        ("expired", vec!["publish,replace,tag,remove:*"]),
        ("revoked", vec!["publish,replace,tag,remove:*"]),
    ];
    let mut tokens = Vec::new();
    for (name, scopes) in &kinds {
        tokens.push((*name, token(&ws, name, scopes)));
    }
    ws.conn()
        .execute(
            "UPDATE tokens SET expires_at = 1 WHERE name = 'expired'",
            [],
        )
        .expect("expire");
    ws.ok(&["token", "revoke", "revoked"]);
    let admin = token(&ws, "admin", &["publish,replace,tag,remove:app"]);

    for (name, secret) in &tokens {
        // A fresh app@1.0.0 for each token, published by the admin.
        let _ = call(
            &server,
            "DELETE",
            "/-/api/v1/versions/app/1.0.0",
            Some(&admin),
            b"",
        );
        let _ = call(
            &server,
            "DELETE",
            "/-/api/v1/versions/app/2.0.0",
            Some(&admin),
            b"",
        );
        let (status, json) = call(
            &server,
            "PUT",
            "/-/api/v1/publish/app/1.0.0",
            Some(&admin),
            &package("app", "1.0.0"),
        );
        assert_eq!(status, 201, "{json}");
        let grants = |action: &str| {
            kinds
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, scopes)| {
                    scopes.iter().any(|s| {
                        let (actions, packages) = s.split_once(':').unwrap_or((s, ""));
                        actions.split(',').any(|a| a == action)
                            && packages.split(',').any(|p| p == "app" || p == "*")
                    })
                })
                .unwrap_or(false)
        };
        let dead = matches!(*name, "expired" | "revoked");
        let refused = |granted: bool| {
            if dead {
                401
            } else if granted {
                0
            } else {
                403
            }
        };

        // A new version.
        let want = match refused(grants("publish")) {
            0 => 201,
            s => s,
        };
        let (status, json) = call(
            &server,
            "PUT",
            "/-/api/v1/publish/app/2.0.0",
            Some(secret),
            &package("app", "2.0.0"),
        );
        assert_eq!(status, want, "{name} publishing: {json}");
        assert_eq!(
            versions(&ws, "app").contains(&"2.0.0".to_string()),
            want == 201,
            "{name}"
        );
        if dead {
            let words = json["error"].as_str().expect("error");
            assert!(
                words.contains(*name),
                "a dead token is named once its secret matched: {words}"
            );
        }

        // An existing version: without force, 409 for anyone who may
        // publish; with force, replaced only by a token that may replace.
        let (status, json) = call(
            &server,
            "PUT",
            "/-/api/v1/publish/app/1.0.0?force",
            Some(secret),
            &package("app", "1.0.0"),
        );
        let want = match refused(grants("publish") || grants("replace")) {
            0 if grants("replace") => 201,
            0 => 409,
            s => s,
        };
        assert_eq!(status, want, "{name} replacing: {json}");
        if want == 201 {
            assert_eq!(json["code"], "replaced", "{json}");
        }
        let (status, _) = call(
            &server,
            "PUT",
            "/-/api/v1/publish/app/1.0.0",
            Some(secret),
            &package("app", "1.0.0"),
        );
        let want = match refused(grants("publish") || grants("replace")) {
            0 => 409,
            s => s,
        };
        assert_eq!(status, want, "{name} republishing without force");

        // Dist-tags.
        let want = match refused(grants("tag")) {
            0 => 200,
            s => s,
        };
        let (status, json) = call(
            &server,
            "PUT",
            "/-/api/v1/dist-tags/app/beta/1.0.0",
            Some(secret),
            b"",
        );
        assert_eq!(status, want, "{name} tagging: {json}");
        let tagged = ws
            .json(&["tag", "ls", "app", "--json"])
            .to_string()
            .contains("beta");
        assert_eq!(tagged, want == 200, "{name}");
        if tagged {
            let (status, _) = call(
                &server,
                "DELETE",
                "/-/api/v1/dist-tags/app/beta",
                Some(secret),
                b"",
            );
            assert_eq!(status, 200, "{name} untagging");
        }

        // Removal.
        let want = match refused(grants("remove")) {
            0 => 200,
            s => s,
        };
        let (status, json) = call(
            &server,
            "DELETE",
            "/-/api/v1/versions/app/1.0.0",
            Some(secret),
            b"",
        );
        assert_eq!(status, want, "{name} removing: {json}");
        assert_eq!(
            !versions(&ws, "app").contains(&"1.0.0".to_string()),
            want == 200,
            "{name}"
        );
    }
    // No token at all, and a malformed one.
    let (status, json) = call(
        &server,
        "PUT",
        "/-/api/v1/publish/app/3.0.0",
        None,
        &package("app", "3.0.0"),
    );
    assert_eq!((status, json["code"].as_str()), (401, Some("unauthorized")));
    // The dead tokens failed ten times from this address: it now waits.
    let (status, json) = call(
        &server,
        "PUT",
        "/-/api/v1/publish/app/3.0.0",
        Some("ccc_nope"),
        b"",
    );
    assert_eq!(
        (status, json["code"].as_str()),
        (429, Some("too_many_failures"))
    );
    // What a token did is in the audit log, by name, and its last use.
    let rows = audit(&ws);
    let by = |token: &str, action: &str, status: u64| {
        rows.iter()
            .any(|r| r["token"] == token && r["action"] == action && r["status"] == status)
    };
    assert!(by("publish", "publish", 201) && !by("publish", "publish", 403));
    assert!(by("replace", "replace", 201) && by("tag", "publish", 403));
    assert!(by("tag", "tag-add", 200) && by("remove", "remove", 200));
    assert!(by("expired", "publish", 401) && by("revoked", "publish", 401));
    assert!(
        rows.iter()
            .all(|r| r["client"] == "127.0.0.1" || r["client"] == "local")
    );
    let listed = ws.json(&["token", "ls", "--json"]);
    let used = |name: &str| {
        listed
            .as_array()
            .expect("array")
            .iter()
            .any(|t| t["name"] == name && t["last_used_at"].is_string())
    };
    assert!(used("publish") && used("remove") && used("none"));
    assert!(!used("revoked"), "a revoked token's row is left as it was");
}

#[test]
fn publish_to_prints_the_summary_and_exits_as_a_local_publish() {
    let (ws, server) = setup(&[]);
    let secret = token(&ws, "ci", &["publish,tag,remove:app,site"]);
    ws.write(
        "site/index.html",
        "<script type=module src=\"./js/main.js\"></script>",
    );
    ws.write("site/js/main.js", "import './dep.js';\n");
    ws.write("site/js/dep.js", "export {};\n");
    // A folder, with a bar and the server's summary.
    let out = ws
        .ccc()
        .args(["publish", "--to", &server.base, "site@1.0.0", "site"])
        .env("CCC_TOKEN", &secret)
        .output()
        .expect("run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.starts_with("Published site@1.0.0: 3 files"),
        "{stdout}"
    );
    assert!(stdout.contains("references: 2 found"), "{stdout}");
    assert!(
        !stdout.contains("top folder"),
        "a folder strips nothing: {stdout}"
    );
    assert!(!String::from_utf8_lossy(&out.stderr).contains(&secret));
    // The same files and digests as a local publish of the folder.
    let local = Workspace::new();
    local.write(
        "site/index.html",
        "<script type=module src=\"./js/main.js\"></script>",
    );
    local.write("site/js/main.js", "import './dep.js';\n");
    local.write("site/js/dep.js", "export {};\n");
    local.publish("site@1.0.0", "site", &[]);
    let digests = |ws: &Workspace| {
        let mut files: Vec<(String, String)> = ws
            .files("site@1.0.0")
            .iter()
            .map(|f| (f["path"].to_string(), f["sha256"].to_string()))
            .collect();
        files.sort();
        files
    };
    assert_eq!(digests(&ws), digests(&local));
    // A tarball from a token file, without PKG@VERSION: package.json names it.
    ws.write_path("app.tgz", package("app", "1.2.0"));
    ws.write("token.txt", format!("{secret}\n"));
    let out = ws.ok(&[
        "publish",
        "--to",
        &server.base,
        "--token-file",
        "token.txt",
        "app.tgz",
        "--json",
    ]);
    let report: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(
        (report["package"].as_str(), report["version"].as_str()),
        (Some("app"), Some("1.2.0"))
    );
    assert_eq!(report["stripped_folder"], "package");
    // stdin.
    let piped = ws
        .ccc()
        .args(["publish", "--to", &server.base, "app@1.3.0", "-"])
        .env("CCC_TOKEN", &secret)
        .write_stdin(package("app", "1.3.0"))
        .output()
        .expect("run");
    assert!(
        piped.status.success(),
        "{}",
        String::from_utf8_lossy(&piped.stderr)
    );
    assert_eq!(versions(&ws, "app"), ["1.3.0", "1.2.0"]);
    // Refusals exit 1 with the server's words; usage errors exit 2.
    let exists = ws
        .ccc()
        .args(["publish", "--to", &server.base, "app.tgz"])
        .env("CCC_TOKEN", &secret)
        .assert()
        .code(1);
    let said = String::from_utf8_lossy(&exists.get_output().stderr).into_owned();
    assert!(
        said.contains("409 app@1.2.0 is already published"),
        "{said}"
    );
    let mismatch = ws
        .ccc()
        .args(["publish", "--to", &server.base, "app@9.0.0", "app.tgz"])
        .env("CCC_TOKEN", &secret)
        .assert()
        .code(1);
    let said = String::from_utf8_lossy(&mismatch.get_output().stderr).into_owned();
    assert!(
        said.contains("422") && said.contains("package.json says app@1.2.0"),
        "{said}"
    );
    ws.ccc()
        .args(["publish", "--to", &server.base, "app.tgz"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("CCC_TOKEN"));
    ws.ccc()
        .args(["publish", "--to", "http://cdn.example.com", "app.tgz"])
        .env("CCC_TOKEN", &secret)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("in clear"));
    // tag and rm over the same API print what the local commands print.
    let tagged = ws
        .ccc()
        .args(["tag", "add", "--to", &server.base, "app@1.2.0", "stable"])
        .env("CCC_TOKEN", &secret)
        .output()
        .expect("run");
    assert_eq!(
        String::from_utf8_lossy(&tagged.stdout).trim(),
        "app@stable: 1.2.0 (new tag)"
    );
    let removed = ws
        .ccc()
        .args(["rm", "--to", &server.base, "app@1.2.0"])
        .env("CCC_TOKEN", &secret)
        .output()
        .expect("run");
    let removed = String::from_utf8_lossy(&removed.stdout).into_owned();
    assert!(
        removed.starts_with("Removed app@1.2.0\nRemoved dist-tag app@stable (named 1.2.0)"),
        "{removed}"
    );
    assert_eq!(versions(&ws, "app"), ["1.3.0"]);
}

/// An upload runs the publish of the command line: references checked
/// (`--strict` refuses a broken one), gzip and brotli stored, content the
/// catalog holds deduplicated, `--tag` pointed, `--dry-run` leaving
/// nothing.
#[test]
fn an_upload_runs_the_publish_of_the_command_line() {
    let (ws, server) = setup(&[]);
    let secret = token(&ws, "ci", &["publish:app"]);
    let script = crate::util::Rng::new(9).script(64 << 10);
    ws.write(
        "site/index.html",
        "<script type=module src=\"./js/main.js\"></script>",
    );
    ws.write_path("site/js/main.js", &script);
    ws.write("site/js/more.js", "import './missing.js';\n");
    let send = |args: &[&str]| {
        let mut all = vec!["publish", "--to", &server.base];
        all.extend_from_slice(args);
        ws.ccc()
            .args(&all)
            .env("CCC_TOKEN", &secret)
            .output()
            .expect("run")
    };
    let strict = send(&["--strict", "app@1.0.0", "site"]);
    let said = String::from_utf8_lossy(&strict.stderr).into_owned();
    assert_eq!(strict.status.code(), Some(1), "{said}");
    assert!(
        said.contains("422") && said.contains("missing.js"),
        "{said}"
    );
    assert_eq!(versions(&ws, "app"), Vec::<String>::new());
    let dry = send(&["--dry-run", "app@1.0.0", "site", "--json"]);
    assert!(dry.status.success());
    let dry: Value = serde_json::from_slice(&dry.stdout).expect("JSON");
    assert_eq!(dry["dry_run"], true, "{dry}");
    assert_eq!(versions(&ws, "app"), Vec::<String>::new());

    let first = send(&["app@1.0.0", "site", "--json"]);
    assert!(first.status.success());
    let first: Value = serde_json::from_slice(&first.stdout).expect("JSON");
    assert_eq!(first["file_count"], 3, "{first}");
    assert_eq!(first["new_content"]["file_count"], 3, "{first}");
    assert_eq!(
        first["references"]["problems"][0]["file"], "js/more.js",
        "{first}"
    );
    assert!(first["brotli"]["blob_count"].as_u64() >= Some(1), "{first}");
    assert_eq!(first["tags"], serde_json::json!(["latest"]), "{first}");
    let served = agent()
        .get(server.url("/assets/app/1.0.0/js/main.js"))
        .header("Accept-Encoding", "br")
        .call()
        .expect("GET");
    assert_eq!(served.headers()["content-encoding"], "br");

    let second = send(&["--tag", "next", "app@2.0.0-rc.1", "site", "--json"]);
    assert!(second.status.success());
    let second: Value = serde_json::from_slice(&second.stdout).expect("JSON");
    assert_eq!(second["already_stored"]["file_count"], 3, "{second}");
    assert_eq!(second["new_content"]["file_count"], 0, "{second}");
    assert_eq!(second["tags"], serde_json::json!(["next"]), "{second}");
    let tags = ws.json(&["tag", "ls", "app", "--json"]).to_string();
    assert!(
        tags.contains("next") && tags.contains("2.0.0-rc.1"),
        "{tags}"
    );
}

/// On a terminal, `publish --to` draws a bar of the bytes sent, for an
/// archive and for a folder packed on the fly; the summary follows it.
#[test]
fn publish_to_draws_an_upload_bar_on_a_terminal() {
    let (ws, server) = setup(&[]);
    let secret = token(&ws, "ci", &["publish:app"]);
    // Bytes gzip cannot shrink, so the bar has something to count.
    let noise = crate::util::Rng::new(3).bytes(4 << 20);
    ws.write_path(
        "app.tgz",
        tgz(&[
            (
                "package/package.json",
                br#"{"name":"app","version":"1.0.0"}"#,
            ),
            ("package/noise.bin", &noise),
        ]),
    );
    ws.write_path("dist/noise.bin", &noise);
    let tgz_size = std::fs::metadata(ws.path().join("app.tgz"))
        .expect("stat")
        .len();
    for (version, source, size) in [
        ("1.0.0", "app.tgz", tgz_size),
        ("1.1.0", "dist", noise.len() as u64),
    ] {
        let target = format!("app@{version}");
        let line = [
            crate::util::ccc_path().to_str().expect("UTF-8"),
            "publish",
            "--to",
            &server.base,
            &target,
            source,
        ]
        .join(" ");
        // `script` gives the command a terminal and copies what it drew.
        let mut script = std::process::Command::new("script");
        crate::util::hermetic(&mut script);
        let out = script
            .args(["-qec", &line, "/dev/null"])
            .current_dir(ws.path())
            .env("CCC_TOKEN", &secret)
            .env("TERM", "xterm")
            .env("COLUMNS", "100")
            .stdin(std::process::Stdio::null())
            .output()
            .expect("script (util-linux)");
        let drawn = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(out.status.success(), "{source}: {drawn}");
        assert!(drawn.contains("Uploading"), "{source}: no bar in {drawn:?}");
        // indicatif's binary units, two decimals: the bar reached its total.
        let total = format!("{:.2} MiB", size as f64 / f64::from(1 << 20));
        assert!(
            drawn.contains(&format!("{total}/{total}")),
            "{source}: not {total}/{total} in {drawn:?}"
        );
        assert!(
            drawn.contains(&format!("Published app@{version}")),
            "{drawn:?}"
        );
        assert!(!drawn.contains(&secret));
    }
    assert_eq!(versions(&ws, "app"), ["1.1.0", "1.0.0"]);
}

/// An archive that a local publish refuses is refused the same way (422),
/// and the catalog is left as it was.
#[test]
fn hostile_archives_are_refused_and_leave_nothing() {
    let (ws, server) = setup(&["--max-unpacked-size", "1MiB"]);
    let secret = token(&ws, "ci", &["publish,remove:*"]);
    let manifest: &[u8] = br#"{"name":"evil","version":"1.0.0"}"#;
    // package.json and one entry of another kind: `special` adds it.
    type Tgz = tar::Builder<flate2::write::GzEncoder<Vec<u8>>>;
    let with = |special: &dyn Fn(&mut Tgz)| {
        let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        let mut tar = tar::Builder::new(gz);
        let mut h = tar::Header::new_gnu();
        h.set_size(manifest.len() as u64);
        h.set_entry_type(tar::EntryType::Regular);
        tar.append_data(&mut h, "package/package.json", manifest)
            .expect("append");
        special(&mut tar);
        tar.into_inner().expect("tar").finish().expect("gz")
    };
    let link = with(&|tar| {
        let mut h = tar::Header::new_gnu();
        h.set_size(0);
        h.set_entry_type(tar::EntryType::Symlink);
        tar.append_link(&mut h, "package/passwd", "/etc/passwd")
            .expect("link");
    });
    let device = with(&|tar| {
        let mut h = tar::Header::new_gnu();
        h.set_size(0);
        h.set_entry_type(tar::EntryType::Char);
        h.set_device_major(1).expect("major");
        h.set_device_minor(3).expect("minor");
        tar.append_data(&mut h, "package/null", std::io::empty())
            .expect("device");
    });
    // Names set by hand: the tar crate refuses to write them.
    let raw_named = |name: &[u8], kind: u8| {
        let mut block = vec![0u8; 512];
        block[..name.len()].copy_from_slice(name);
        block[100..108].copy_from_slice(b"0000644\0");
        block[124..136].copy_from_slice(b"00000000001\0");
        block[156] = kind;
        block[257..263].copy_from_slice(b"ustar\0");
        block[263..265].copy_from_slice(b"00");
        block[148..156].copy_from_slice(b"        ");
        let sum: u32 = block.iter().map(|b| u32::from(*b)).sum();
        block[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
        let mut tar = block;
        tar.extend([b'x']);
        tar.resize(1024, 0);
        tar.extend(vec![0u8; 1024]);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&tar).expect("gz");
        gz.finish().expect("gz")
    };
    let bomb = tgz(&[
        ("package/package.json", manifest),
        ("package/zeros.bin", &vec![0u8; 8 << 20]),
    ]);
    assert!(bomb.len() * 50 < 8 << 20, "a bomb is small: {}", bomb.len());
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("traversal", raw_named(b"package/../../etc/x", b'0'), ".."),
        ("absolute", raw_named(b"/etc/passwd", b'0'), "absolute"),
        (
            "not UTF-8",
            raw_named(b"package/\xff\xfe.js", b'0'),
            "UTF-8",
        ),
        ("gzip bomb", bomb, "--max-unpacked-size"),
        ("not an archive", b"PK\x03\x04 a zip".to_vec(), "zip"),
    ];
    for (what, body, words) in cases {
        let (status, json) = call(
            &server,
            "PUT",
            "/-/api/v1/publish/evil/1.0.0",
            Some(&secret),
            &body,
        );
        assert_eq!(status, 422, "{what}: {json}");
        let error = json["error"].as_str().expect("error");
        assert!(error.contains(words), "{what}: {error}");
        assert!(
            !error.contains("/tmp") && !error.contains(ws.path().to_str().expect("UTF-8")),
            "{what}: a server path: {error}"
        );
    }
    // A link and a device are left out and reported, as a local publish
    // does; only package.json is published.
    for (what, body, path) in [("link", &link, "passwd"), ("device", &device, "null")] {
        let (status, json) = call(
            &server,
            "PUT",
            "/-/api/v1/publish/evil/1.0.0",
            Some(&secret),
            body,
        );
        assert_eq!(status, 201, "{what}: {json}");
        assert_eq!(json["result"]["skipped"][0]["path"], path, "{what}: {json}");
        assert_eq!(json["result"]["file_count"], 1, "{what}: {json}");
        let (status, json) = call(
            &server,
            "DELETE",
            "/-/api/v1/versions/evil/1.0.0",
            Some(&secret),
            b"",
        );
        assert_eq!(status, 200, "{what}: {json}");
    }
    assert_eq!(versions(&ws, "evil"), Vec::<String>::new());
    // No temporary file is left beside the catalog.
    let left: Vec<String> = std::fs::read_dir(ws.path())
        .expect("list")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// Bodies past the limit, stalled and cut off: each is refused, the
/// catalog is left as it was, and the server goes on serving.
#[test]
fn hostile_bodies_are_cut_off() {
    let (ws, server) = setup(&["--max-upload-size", "64KiB", "--body-timeout", "1s"]);
    let secret = token(&ws, "ci", &["publish:*"]);
    let head = |length: Option<u64>, chunked: bool| {
        let mut head = format!(
            "PUT /-/api/v1/publish/big/1.0.0 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {secret}\r\n"
        );
        if let Some(n) = length {
            head.push_str(&format!("Content-Length: {n}\r\n"));
        }
        if chunked {
            head.push_str("Transfer-Encoding: chunked\r\n");
        }
        head.push_str("\r\n");
        head
    };
    let answer = |stream: &mut TcpStream| {
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .expect("timeout");
        let mut text = Vec::new();
        let _ = stream.read_to_end(&mut text);
        String::from_utf8_lossy(&text).into_owned()
    };
    // A declared length past the limit: 413 before any of the body.
    let mut s = TcpStream::connect(server.addr).expect("connect");
    s.write_all(head(Some(1 << 30), false).as_bytes())
        .expect("write");
    let said = answer(&mut s);
    assert!(said.starts_with("HTTP/1.1 413"), "{said}");
    assert!(said.contains("\"code\":\"too_large\""), "{said}");
    // A chunked body that goes past it: 413 once past.
    let mut s = TcpStream::connect(server.addr).expect("connect");
    s.write_all(head(None, true).as_bytes()).expect("write");
    let chunk = vec![b'a'; 16 << 10];
    for _ in 0..8 {
        let mut piece = format!("{:x}\r\n", chunk.len()).into_bytes();
        piece.extend(&chunk);
        piece.extend(b"\r\n");
        if s.write_all(&piece).is_err() {
            break;
        }
    }
    let said = answer(&mut s);
    assert!(said.starts_with("HTTP/1.1 413"), "{said}");
    // A body that stalls: cut off after --body-timeout.
    let started = Instant::now();
    let mut s = TcpStream::connect(server.addr).expect("connect");
    s.write_all(head(Some(1000), false).as_bytes())
        .expect("write");
    s.write_all(&[0x1f, 0x8b, 8]).expect("write");
    let said = answer(&mut s);
    assert!(said.starts_with("HTTP/1.1 408"), "{said}");
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(900) && took < Duration::from_secs(8),
        "{took:?}"
    );
    // A client that goes away mid-body.
    let mut s = TcpStream::connect(server.addr).expect("connect");
    s.write_all(head(Some(10_000), false).as_bytes())
        .expect("write");
    s.write_all(&[0x1f, 0x8b, 8, 0, 0]).expect("write");
    drop(s);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(versions(&ws, "big"), Vec::<String>::new());
    // The server still serves, and still takes a good upload.
    let (status, json) = call(
        &server,
        "PUT",
        "/-/api/v1/publish/big/1.0.0",
        Some(&secret),
        &package("big", "1.0.0"),
    );
    assert_eq!(status, 201, "{json}");
    let rows = audit(&ws);
    assert!(
        rows.iter().any(|r| r["status"] == 408),
        "the stall is audited"
    );
    assert!(
        rows.iter().any(|r| r["status"] == 413),
        "the size is audited"
    );
}

/// The same hostile bodies over HTTP/2 (cleartext, from loopback): past
/// the limit, reset by the client mid-body, stalled. Each stream gets its
/// answer or its end, nothing is published, and the connection goes on to
/// carry a good upload.
#[test]
fn hostile_bodies_over_http2_are_cut_off() {
    use crate::attack::h2::{CANCEL, rst_stream};
    use crate::attack::h2::{DATA, END_STREAM, H2, answer, frame, header_frames, request_with};
    let (ws, server) = setup(&["--max-upload-size", "32KiB", "--body-timeout", "1s"]);
    let secret = token(&ws, "ci", &["publish:*"]);
    let bearer = format!("Bearer {secret}");
    let put = |stream: u32, version: &str, length: Option<usize>| {
        let path = format!("/-/api/v1/publish/big/{version}");
        let length = length.map(|n| n.to_string());
        let mut extra: Vec<(&str, &[u8])> = vec![("authorization", bearer.as_bytes())];
        if let Some(n) = &length {
            extra.push(("content-length", n.as_bytes()));
        }
        let block = request_with(
            &[
                (":method", "PUT"),
                (":scheme", "http"),
                (":authority", "127.0.0.1"),
                (":path", &path),
            ],
            &extra,
        );
        header_frames(stream, &block, false)
    };
    let mut c = H2::open(server.addr, &[]);
    let code = |result: Result<(u16, Vec<u8>), String>| match result {
        Ok((status, body)) => {
            let json: Value = serde_json::from_slice(&body).expect("a JSON answer");
            assert_eq!(json["status"], status, "{json}");
            status
        }
        Err(e) => panic!("no answer: {e}"),
    };
    // A declared length past the limit: 413 before the body.
    c.send(&put(1, "1.0.0", Some(1 << 30))).expect("send");
    assert_eq!(code(answer(&mut c, 1)), 413);
    // 48 KiB without a length (within the stream's first window): 413
    // once past 32 KiB.
    c.send(&put(3, "1.0.0", None)).expect("send");
    for _ in 0..3 {
        c.send(&frame(DATA, 0, 3, &[b'a'; 16 << 10])).expect("data");
    }
    assert_eq!(code(answer(&mut c, 3)), 413);
    // Reset by the client after a few bytes.
    c.send(&put(5, "1.0.0", Some(10_000))).expect("send");
    c.send(&frame(DATA, 0, 5, &[0x1f, 0x8b, 8])).expect("data");
    c.send(&rst_stream(5, CANCEL)).expect("reset");
    // Stalled after a few bytes: 408 after --body-timeout.
    let started = Instant::now();
    c.send(&put(7, "1.0.0", Some(10_000))).expect("send");
    c.send(&frame(DATA, 0, 7, &[0x1f, 0x8b, 8])).expect("data");
    assert_eq!(code(answer(&mut c, 7)), 408);
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(900), "{took:?}");
    // The same connection carries a good upload.
    let body = package("big", "1.0.0");
    c.send(&put(9, "1.0.0", Some(body.len()))).expect("send");
    c.send(&frame(DATA, END_STREAM, 9, &body)).expect("data");
    assert_eq!(code(answer(&mut c, 9)), 201);
    assert_eq!(versions(&ws, "big"), ["1.0.0"]);
    let rows = audit(&ws);
    let statuses: Vec<u64> = rows
        .iter()
        .filter(|r| r["target"] == "big@1.0.0")
        .map(|r| r["status"].as_u64().expect("status"))
        .collect();
    assert_eq!(statuses.len(), 5, "{rows:?}");
    for want in [413, 408, 201] {
        assert!(statuses.contains(&want), "{want}: {statuses:?}");
    }
    assert!(
        statuses.iter().any(|s| matches!(s, 400 | 499)),
        "the reset is audited: {statuses:?}"
    );
}

#[test]
fn concurrent_uploads_of_one_version_leave_one_winner() {
    let (ws, server) = setup(&[]);
    let secret = token(&ws, "ci", &["publish:*"]);
    let body = package("race", "1.0.0");
    let other = package("race", "2.0.0");
    let results: Vec<u16> = std::thread::scope(|scope| {
        let runs: Vec<_> = (0..4)
            .map(|i| {
                let (server, secret) = (&server, &secret);
                let (version, body) = if i == 3 {
                    ("2.0.0", &other)
                } else {
                    ("1.0.0", &body)
                };
                scope.spawn(move || {
                    call(
                        server,
                        "PUT",
                        &format!("/-/api/v1/publish/race/{version}"),
                        Some(secret),
                        body,
                    )
                    .0
                })
            })
            .collect();
        runs.into_iter()
            .map(|r| r.join().expect("thread"))
            .collect()
    });
    let mut same = results[..3].to_vec();
    same.sort();
    assert_eq!(same, [201, 409, 409], "{results:?}");
    assert_eq!(results[3], 201, "another version lands too");
    assert_eq!(versions(&ws, "race"), ["2.0.0", "1.0.0"]);
}

#[test]
fn the_api_is_off_unless_asked_and_a_replica_names_its_writer() {
    let ws = Workspace::new();
    ws.write("d/a.txt", "a");
    ws.publish("seed@1.0.0", "d", &[]);
    let secret = token(&ws, "ci", &["publish:*"]);
    {
        let server = Server::start(&ws, &[]);
        let (status, json) = call(
            &server,
            "PUT",
            "/-/api/v1/publish/app/1.0.0",
            Some(&secret),
            &package("app", "1.0.0"),
        );
        assert_eq!(
            (status, json["code"].as_str()),
            (404, Some("api_off")),
            "{json}"
        );
        assert!(
            json["hint"]
                .as_str()
                .expect("hint")
                .contains("--publish-api")
        );
        // A GET there is no asset either.
        let got = agent()
            .get(server.url("/-/api/v1/publish/app/1.0.0"))
            .call()
            .expect("GET");
        assert_eq!(got.status(), 404);
    }
    std::fs::write(ws.path().join("cdn.db.follow"), "").expect("mark a replica");
    let server = Server::start(
        &ws,
        &["--publish-api", "--writer", "https://origin.example.com"],
    );
    let (status, json) = call(
        &server,
        "PUT",
        "/-/api/v1/publish/app/1.0.0",
        Some(&secret),
        &package("app", "1.0.0"),
    );
    assert_eq!(
        (status, json["code"].as_str()),
        (403, Some("replica")),
        "{json}"
    );
    assert_eq!(json["writer"], "https://origin.example.com");
    let out = ws
        .ccc()
        .args(["publish", "--to", &server.base, "app@1.0.0", "d"])
        .env("CCC_TOKEN", &secret)
        .assert()
        .code(1);
    let said = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        said.contains("replica") && said.contains("https://origin.example.com"),
        "{said}"
    );
}

#[test]
fn wrong_tokens_are_rate_limited_per_address() {
    let (ws, server) = setup(&["--access-log"]);
    let good = token(&ws, "ci", &["publish:*"]);
    // Well-formed tokens that are not the catalog's.
    let wrong = format!("ccc_{}", &good[4..]).replace(&good[10..20], "aaaaaaaaaa");
    let mut statuses = Vec::new();
    for _ in 0..12 {
        statuses.push(
            call(
                &server,
                "PUT",
                "/-/api/v1/publish/app/1.0.0",
                Some(&wrong),
                b"",
            )
            .0,
        );
    }
    assert_eq!(&statuses[..10], &[401; 10], "{statuses:?}");
    assert_eq!(&statuses[10..], &[429, 429], "{statuses:?}");
    let response = agent()
        .put(server.url("/-/api/v1/publish/app/1.0.0"))
        .header("Authorization", format!("Bearer {good}"))
        .send(package("app", "1.0.0"))
        .expect("answer");
    assert_eq!(
        response.status(),
        429,
        "the address waits, whatever it sends"
    );
    let retry: u64 = response.headers()["retry-after"]
        .to_str()
        .expect("text")
        .parse()
        .expect("seconds");
    assert!((1..=61).contains(&retry), "{retry}");
    // No token was logged anywhere: the access log, stderr, the audit log.
    crate::serve_util::poll_until(Duration::from_secs(10), || {
        server
            .stdout()
            .matches("/-/api/v1/publish/app/1.0.0")
            .count()
            >= 13
    });
    assert!(!server.stdout().contains("ccc_"), "{}", server.stdout());
    assert!(!server.stderr().contains("ccc_"), "{}", server.stderr());
    assert!(
        !serde_json::to_string(&audit(&ws))
            .expect("JSON")
            .contains(&good[16..56])
    );
}

/// Behind a proxy given with `--trust-proxy`, the audit log records, and
/// the rate limit counts, the client the proxy names, not the proxy.
#[test]
fn behind_a_trusted_proxy_the_client_is_the_one_it_names() {
    let (ws, server) = setup(&["--trust-proxy", "127.0.0.0/8"]);
    let good = token(&ws, "ci", &["publish:*"]);
    let wrong = format!("ccc_{}", &good[4..]).replace(&good[10..20], "aaaaaaaaaa");
    let put = |token: &str, client: &str, version: &str| {
        agent()
            .put(server.url(&format!("/-/api/v1/publish/app/{version}")))
            .header("Authorization", format!("Bearer {token}"))
            .header("X-Forwarded-For", format!("198.51.100.1, {client}"))
            .send(package("app", version))
            .expect("answer")
            .status()
            .as_u16()
    };
    let statuses: Vec<u16> = (0..11)
        .map(|_| put(&wrong, "203.0.113.9", "1.0.0"))
        .collect();
    assert_eq!(&statuses[..10], &[401; 10], "{statuses:?}");
    assert_eq!(statuses[10], 429, "{statuses:?}");
    // Another client behind the same proxy is not held back.
    assert_eq!(put(&good, "203.0.113.10", "1.0.0"), 201);
    assert_eq!(put(&good, "203.0.113.9", "1.0.1"), 429);
    let rows = audit(&ws);
    let remote: Vec<(&str, u64)> = rows
        .iter()
        .filter(|r| r["client"] != "local")
        .map(|r| {
            (
                r["client"].as_str().expect("client"),
                r["status"].as_u64().expect("status"),
            )
        })
        .collect();
    let mut want = vec![("203.0.113.9", 401); 10];
    want.push(("203.0.113.10", 201));
    assert_eq!(remote, want, "{rows:?}");
}

#[test]
fn stats_are_restricted_by_range_or_a_read_stats_token() {
    let (ws, server) = setup(&["--stats-allow", "10.0.0.0/8"]);
    let reader = token(&ws, "scraper", &["read-stats"]);
    let publisher = token(&ws, "ci", &["publish:*"]);
    for path in ["/_stats", "/metrics"] {
        let get = |token: Option<&str>| {
            let mut request = agent().get(server.url(path));
            if let Some(t) = token {
                request = request.header("Authorization", format!("Bearer {t}"));
            }
            request.call().expect("answer").status().as_u16()
        };
        assert_eq!(get(None), 403, "{path}");
        assert_eq!(get(Some(&publisher)), 403, "{path}");
        assert_eq!(get(Some(&reader)), 200, "{path}");
    }
    // Assets are not restricted.
    let asset = agent()
        .get(server.url("/assets/seed/1.0.0/index.html"))
        .call()
        .expect("GET");
    assert_eq!(asset.status(), 200);
    let open = Server::start(&ws, &["--stats-allow", "127.0.0.0/8"]);
    assert_eq!(
        agent()
            .get(open.url("/_stats"))
            .call()
            .expect("GET")
            .status(),
        200
    );
}

/// Over TLS, HTTP/1.1 from `ccc publish --to` with `--ca-file` and HTTP/2
/// from curl, against the same server; the CA is checked.
#[test]
fn uploads_over_tls_by_http1_and_http2() {
    use predicates::prelude::PredicateBooleanExt;
    let ws = Workspace::new();
    ws.write("d/a.txt", "a");
    ws.publish("seed@1.0.0", "d", &[]);
    let (ca, cert, key) = certificates(ws.path(), "api");
    let server = Server::start(
        &ws,
        &[
            "--publish-api",
            "--tls-cert",
            cert.to_str().expect("UTF-8"),
            "--tls-key",
            key.to_str().expect("UTF-8"),
        ],
    );
    let secret = token(&ws, "ci", &["publish:*"]);
    ws.write_path("app.tgz", package("app", "1.0.0"));
    ws.ccc()
        .args([
            "publish",
            "--to",
            &server.base,
            "--ca-file",
            ca.to_str().expect("UTF-8"),
            "app.tgz",
            "-q",
        ])
        .env("CCC_TOKEN", &secret)
        .assert()
        .success();
    // Without the CA, the server's certificate is refused, and the hint
    // names --ca-file.
    ws.ccc()
        .args(["publish", "--to", &server.base, "app@1.0.1", "app.tgz"])
        .env("CCC_TOKEN", &secret)
        .env("SSL_CERT_FILE", ws.path().join("api-cert.pem"))
        .assert()
        .code(1)
        .stderr(
            predicates::str::contains("certificate").and(predicates::str::contains("--ca-file")),
        );
    ws.write_path("app2.tgz", package("app", "2.0.0"));
    let out = std::process::Command::new("curl")
        .args([
            "-sS",
            "--http2",
            "--cacert",
            ca.to_str().expect("UTF-8"),
            "-X",
            "PUT",
            "--data-binary",
        ])
        .arg(format!("@{}", ws.path().join("app2.tgz").display()))
        .args([
            "-H",
            &format!("Authorization: Bearer {secret}"),
            "-w",
            "\n%{http_code} %{http_version}",
        ])
        .arg(server.url("/-/api/v1/publish/app/2.0.0"))
        .output()
        .expect("curl");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(text.ends_with("201 2"), "{text}");
    assert_eq!(versions(&ws, "app"), ["2.0.0", "1.0.0"]);
}

/// A change that waits for another past `--publish-wait` is answered 503
/// with `Retry-After`, and nothing of it is published.
#[test]
fn a_change_that_waits_too_long_is_answered_503() {
    let (ws, server) = setup(&["--publish-wait", "50ms"]);
    let secret = token(&ws, "ci", &["publish:*"]);
    // Text that takes gzip -9 and brotli a while.
    let mut rng = crate::util::Rng::new(5);
    let text: Vec<Vec<u8>> = (0..3).map(|_| rng.text(1 << 20)).collect();
    let mut entries: Vec<(String, &[u8])> = vec![(
        "package/package.json".into(),
        br#"{"name":"slow","version":"1.0.0"}"#,
    )];
    for (i, t) in text.iter().enumerate() {
        entries.push((format!("package/f{i}.js"), t));
    }
    let named: Vec<(&str, &[u8])> = entries.iter().map(|(n, b)| (n.as_str(), *b)).collect();
    let slow = tgz(&named);
    std::thread::scope(|scope| {
        let first = scope.spawn(|| {
            call(
                &server,
                "PUT",
                "/-/api/v1/publish/slow/1.0.0",
                Some(&secret),
                &slow,
            )
            .0
        });
        // Until the first's body is whole in its spool: it publishes now.
        let waited = Instant::now();
        while crate::publish_ci::spool_size(server.pid(), ws.path()) != Some(slow.len() as u64)
            && waited.elapsed() < Duration::from_secs(30)
        {
            std::thread::sleep(Duration::from_millis(1));
        }
        let response = agent()
            .put(server.url("/-/api/v1/publish/quick/1.0.0"))
            .header("Authorization", format!("Bearer {secret}"))
            .send(package("quick", "1.0.0"))
            .expect("answer");
        assert_eq!(response.status(), 503);
        assert!(response.headers().contains_key("retry-after"));
        assert_eq!(first.join().expect("thread"), 201);
    });
    assert_eq!(versions(&ws, "quick"), Vec::<String>::new());
    assert_eq!(versions(&ws, "slow"), ["1.0.0"]);
}
