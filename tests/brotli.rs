//! Brotli end to end: publish keeps a brotli stream where it beats gzip by
//! 5%, serve negotiates `br` > `gzip` > identity with an ETag per
//! representation, export writes `.br` siblings, verify decodes the streams
//! and gc drops them with their blobs.

use crate::serve_util::{Server, get, head};
use crate::util::{Rng, Workspace, gunzip, sha256_hex};
use serde_json::Value;

fn unbrotli(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    ::brotli::BrotliDecompress(&mut &bytes[..], &mut out).expect("a brotli stream");
    out
}

/// A version with a script (gzip and brotli), noise (stored raw) and a
/// tiny text file.
fn site(ws: &Workspace, target: &str, seed: u64, extra: &[&str]) -> (Vec<u8>, Vec<u8>) {
    let mut rng = Rng::new(seed);
    let script = rng.script(60_000);
    let noise = rng.bytes(8_000);
    let dir = format!("src-{seed}");
    ws.write(&format!("{dir}/app.js"), &script);
    ws.write(&format!("{dir}/logo.png"), &noise);
    ws.write(&format!("{dir}/a.txt"), "a\n");
    ws.publish(target, &dir, extra);
    (script, noise)
}

/// `variants` of one file as `ls --json` reports them.
fn variants(ws: &Workspace, version: &str, path: &str) -> Vec<Value> {
    let file = ws
        .files(version)
        .into_iter()
        .find(|f| f["path"] == path)
        .unwrap_or_else(|| panic!("{version} has no {path}"));
    file["variants"].as_array().expect("variants").clone()
}

#[test]
fn publish_keeps_brotli_only_where_it_beats_gzip_and_reports_it() {
    let ws = Workspace::new();
    let mut rng = Rng::new(1);
    let script = rng.script(60_000);
    ws.write("v1/app.js", &script);
    ws.write("v1/logo.png", rng.bytes(8_000));
    let report = ws.publish_json("app@1.0.0", "v1", &[]);
    let brotli = &report["brotli"];
    assert_eq!(brotli["blob_count"], 1, "{report}");
    assert_eq!(brotli["raw_bytes"], script.len(), "{report}");
    let (gz, br) = (
        brotli["gzip_bytes"].as_u64().expect("gzip_bytes"),
        brotli["brotli_bytes"].as_u64().expect("brotli_bytes"),
    );
    assert!(br as f64 <= gz as f64 * 0.95, "{report}");

    let js = variants(&ws, "app@1.0.0", "app.js");
    assert_eq!(js.len(), 1);
    assert_eq!(js[0]["encoding"], "br");
    assert_eq!(js[0]["stored_bytes"], br);
    assert!(variants(&ws, "app@1.0.0", "logo.png").is_empty());
    // The stored stream decodes to the file, and its digest is recorded.
    let (body, stored_sha256): (Vec<u8>, Vec<u8>) = ws
        .conn()
        .query_row("SELECT body, stored_sha256 FROM brotli", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .expect("one brotli stream");
    assert_eq!(unbrotli(&body), script);
    assert_eq!(hex::encode(stored_sha256), sha256_hex(&body));

    // The people's summary says it too.
    ws.write("v2/app.js", Rng::new(2).script(60_000));
    let out = ws.ok(&["publish", "app@2.0.0", "v2"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("1 of them also as brotli: "), "{text}");
    assert!(text.contains("smaller than their gzip"), "{text}");

    // Quality 0 stores none; out-of-range qualities are refused by name.
    ws.write("v3/app.js", Rng::new(3).script(60_000));
    let report = ws.publish_json("app@3.0.0", "v3", &["--brotli-quality", "0"]);
    assert_eq!(report["brotli"]["blob_count"], 0, "{report}");
    assert!(variants(&ws, "app@3.0.0", "app.js").is_empty());
    let out = ws.fails(&["publish", "--brotli-quality", "12", "app@4.0.0", "v3"], 2);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("brotli quality"), "{stderr}");
    assert!(stderr.contains("0 to 11"), "{stderr}");
}

#[test]
fn serve_negotiates_br_then_gzip_then_identity_by_q_values() {
    let ws = Workspace::new();
    let (script, noise) = site(&ws, "app@1.0.0", 4, &[]);
    let sha = sha256_hex(&script);
    let server = Server::start(&ws, &[]);
    let url = server.url("/assets/app/1.0.0/app.js");
    for (accept, want) in [
        ("gzip, deflate, br, zstd", Some("br")),
        ("br", Some("br")),
        ("BR;q=1.0, gzip;q=1.0", Some("br")),
        ("*", Some("br")),
        ("br;q=0.5, gzip;q=0.5", Some("br")),
        ("gzip;q=1, br;q=0.9", Some("gzip")),
        ("br;q=0, gzip", Some("gzip")),
        ("br;q=0, *", Some("gzip")),
        ("gzip", Some("gzip")),
        ("x-gzip, deflate", Some("gzip")),
        ("br;q=0.4, identity;q=0.5", None),
        ("br;q=0, gzip;q=0", None),
        ("identity", None),
        ("deflate", None),
        ("", None),
    ] {
        let headers = if accept.is_empty() {
            vec![]
        } else {
            vec![("Accept-Encoding", accept)]
        };
        let r = get(&url, &headers);
        assert_eq!(r.status, 200, "{accept:?}");
        assert_eq!(r.header("content-encoding"), want, "{accept:?}");
        assert_eq!(r.header("vary"), Some("Accept-Encoding"), "{accept:?}");
        assert_eq!(
            r.must("content-length").parse::<usize>().expect("a number"),
            r.body.len(),
            "{accept:?}"
        );
        let (decoded, tag) = match want {
            Some("br") => (unbrotli(&r.body), format!("\"{sha}-br.{}\"", r.body.len())),
            Some("gzip") => (gunzip(&r.body), format!("\"{sha}-gz\"")),
            _ => (r.body.clone(), format!("\"{sha}\"")),
        };
        assert_eq!(decoded, script, "{accept:?}: the body decodes to the file");
        assert_eq!(r.must("etag"), tag, "{accept:?}");
    }
    let br = get(&url, &[("Accept-Encoding", "br")]);
    let gz = get(&url, &[("Accept-Encoding", "gzip")]);
    assert!(br.body.len() < gz.body.len());

    // HEAD and 304 speak of the representation negotiated.
    let h = head(&url, &[("Accept-Encoding", "br, gzip")]);
    assert_eq!(h.header("content-encoding"), Some("br"));
    assert_eq!(
        h.header("content-length"),
        Some(&*br.body.len().to_string())
    );
    // Each validates only the representation it names (RFC 9110 13.1.2).
    let br_tag = format!("\"{sha}-br.{}\"", br.body.len());
    let gz_tag = format!("\"{sha}-gz\"");
    for (accept, tag, status) in [
        ("br", &br_tag, 304),
        ("gzip", &gz_tag, 304),
        ("gzip", &br_tag, 200),
        ("br", &gz_tag, 200),
    ] {
        let r = get(&url, &[("Accept-Encoding", accept), ("If-None-Match", tag)]);
        assert_eq!(r.status, status, "{accept} with {tag}");
        assert_eq!(r.header("vary"), Some("Accept-Encoding"));
        if status == 304 {
            assert_eq!(r.must("etag"), tag, "{accept}");
            assert!(r.body.is_empty());
        }
    }

    // A file without a brotli stream never goes out as br.
    let png = server.url("/assets/app/1.0.0/logo.png");
    let r = get(&png, &[("Accept-Encoding", "br, gzip")]);
    assert_eq!((r.header("content-encoding"), &r.body), (None, &noise));
    // Cached now: the same answers again, from the cache.
    for _ in 0..2 {
        let r = get(&url, &[("Accept-Encoding", "br")]);
        assert_eq!(unbrotli(&r.body), script);
        let r = get(&url, &[]);
        assert_eq!(r.body, script);
    }
    let stats = server.stats();
    assert!(
        stats["cache"]["hits"].as_u64().expect("hits") > 0,
        "{stats}"
    );
}

#[test]
fn export_writes_br_siblings_for_brotli_static() {
    let ws = Workspace::new();
    let (script, _) = site(&ws, "app@1.0.0", 5, &[]);
    // A version with a real file where a sibling would go.
    let mut rng = Rng::new(6);
    let other = rng.script(60_000);
    ws.write("clash/x.js", &other);
    ws.write("clash/x.js.br", "not a sibling\n");
    ws.publish("clash@1.0.0", "clash", &[]);
    let out = ws.path().join("out");
    let report = ws.json(&["export", out.to_str().expect("UTF-8"), "--json"]);

    let dir = out.join("app/1.0.0");
    let read = |p: &str| std::fs::read(dir.join(p)).unwrap_or_else(|e| panic!("{p}: {e}"));
    assert_eq!(read("app.js"), script);
    assert_eq!(gunzip(&read("app.js.gz")), script);
    assert_eq!(unbrotli(&read("app.js.br")), script);
    // The catalog's own stream, byte for byte.
    let stored: Vec<u8> = ws
        .conn()
        .query_row(
            "SELECT r.body FROM brotli r JOIN blobs b ON b.id = r.blob_id WHERE b.sha256 = ?1",
            [hex::decode(sha256_hex(&script)).expect("hex")],
            |r| r.get(0),
        )
        .expect("the stream");
    assert_eq!(read("app.js.br"), stored);
    for none in ["logo.png.br", "logo.png.gz", "a.txt.br"] {
        assert!(!dir.join(none).exists(), "{none}");
    }
    let clash = out.join("clash/1.0.0");
    assert_eq!(
        std::fs::read(clash.join("x.js.br")).expect("x.js.br"),
        b"not a sibling\n"
    );
    let skipped = report["siblings_skipped"].as_array().expect("skipped");
    assert!(
        skipped.iter().any(|s| s["path"] == "clash/1.0.0/x.js.br"
            && s["reason"] == "the version has a file of that name"),
        "{report}"
    );
    // app.js.gz, app.js.br, x.js.gz (x.js.br is the real file).
    assert_eq!(report["sibling_count"], 3, "{report}");
}

#[test]
fn verify_decodes_every_brotli_stream_and_names_a_bad_one() {
    let ws = Workspace::new();
    let (script, _) = site(&ws, "app@1.0.0", 7, &[]);
    let ok = ws.json(&["verify", "--json"]);
    assert_eq!(ok["ok"], true, "{ok}");
    assert_eq!(ok["brotli_count"], 1, "{ok}");
    let out = ws.ok(&["verify"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(" brotli) and 1 version checked"), "{text}");

    let sha = sha256_hex(&script);
    // A valid stream of other bytes, its digest updated to match: only
    // decoding finds it.
    let mut other = Vec::new();
    ::brotli::BrotliCompress(&mut &b"console.log(2)"[..], &mut other, &Default::default())
        .expect("brotli");
    let digest = hex::decode(sha256_hex(&other)).expect("hex");
    let xxh3 = xxhash_rust::xxh3::xxh3_128(&other).to_be_bytes().to_vec();
    ws.conn()
        .execute(
            "UPDATE brotli SET body = ?1, stored_sha256 = ?2, stored_xxh3 = ?3",
            rusqlite::params![other, digest, xxh3],
        )
        .expect("tamper");
    let out = ws.fails(&["verify", "--json"], 1);
    let report: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let problems = report["problems"].as_array().expect("problems");
    assert_eq!(problems.len(), 1, "{report}");
    assert_eq!(problems[0]["kind"], "blob");
    assert_eq!(problems[0]["object"], sha);
    assert_eq!(problems[0]["affects"][0], "app@1.0.0/app.js");
    let detail = problems[0]["detail"].as_str().expect("detail");
    assert!(
        detail.starts_with("brotli stream: decodes to 14 bytes"),
        "{detail}"
    );

    // Bytes that are no brotli stream, under the wrong digest.
    ws.conn()
        .execute("UPDATE brotli SET body = x'ffffffff'", [])
        .expect("tamper");
    let out = ws.fails(&["verify", "--json"], 1);
    let report: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let detail = report["problems"][0]["detail"].as_str().expect("detail");
    assert!(detail.contains("br stream does not decode"), "{detail}");
    assert!(detail.contains("stored bytes hash to"), "{detail}");
    // And the server refuses to send it.
    let server = Server::start(&ws, &[]);
    let r = get(
        &server.url("/assets/app/1.0.0/app.js"),
        &[("Accept-Encoding", "br")],
    );
    assert_eq!(r.status, 500);
}

#[test]
fn gc_drops_brotli_streams_with_their_blobs_and_orphans() {
    let ws = Workspace::new();
    site(&ws, "app@1.0.0", 8, &[]);
    site(&ws, "app@2.0.0", 9, &[]);
    let count = |ws: &Workspace| -> i64 {
        ws.conn()
            .query_row("SELECT count(*) FROM brotli", [], |r| r.get(0))
            .expect("count")
    };
    assert_eq!(count(&ws), 2);
    // A stream whose blob is gone, as a tool with foreign keys off leaves.
    let conn = ws.conn();
    conn.pragma_update(None, "foreign_keys", false)
        .expect("fk off");
    conn.execute(
        "INSERT INTO brotli (blob_id, body, stored_sha256) VALUES (9999, x'0102', zeroblob(32))",
        [],
    )
    .expect("orphan");
    drop(conn);
    let dry = ws.json(&["gc", "--keep", "1", "--dry-run", "--json"]);
    assert_eq!(dry["removed_brotli_count"], 2, "{dry}");
    assert_eq!(count(&ws), 3, "a dry run removes nothing");

    let report = ws.json(&["gc", "--keep", "1", "--json"]);
    assert_eq!(report["removed_brotli_count"], 2, "{report}");
    assert!(report["removed_brotli_bytes"].as_u64().expect("bytes") > 2);
    assert_eq!(count(&ws), 1, "the kept version's stream stays");
    let out = ws.ok(&["gc"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("brotli"), "nothing left to drop: {text}");
    assert_eq!(ws.json(&["verify", "--json"])["ok"], true);
}

#[test]
fn inspect_shows_the_brotli_stream() {
    let ws = Workspace::new();
    site(&ws, "app@1.0.0", 10, &[]);
    let br = variants(&ws, "app@1.0.0", "app.js")[0]["stored_bytes"]
        .as_u64()
        .expect("bytes");
    let detail = ws.json(&["inspect", "app@1.0.0/app.js", "--json"]);
    assert_eq!(detail["variants"][0]["encoding"], "br", "{detail}");
    assert_eq!(detail["variants"][0]["stored_bytes"], br, "{detail}");
    let out = ws.ok(&["inspect", "app@1.0.0/app.js"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("brotli"), "{text}");
    assert!(text.contains("smaller than gzip"), "{text}");
    let out = ws.ok(&["inspect", "app@1.0.0"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("brotli"), "{text}");
}

/// The brotli stream's length and the quality recorded for `app.js`'s
/// blob.
fn brotli_state(ws: &Workspace, sha: &str) -> (Option<i64>, Option<i64>) {
    ws.conn()
        .query_row(
            "SELECT (SELECT length(r.body) FROM brotli r WHERE r.blob_id = b.id),
                    (SELECT m.quality FROM brotli_made m WHERE m.blob_id = b.id)
               FROM blobs b WHERE b.sha256 = ?1",
            [hex::decode(sha).expect("hex")],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("the blob")
}

#[test]
fn recompress_brings_streams_to_quality_11_once_and_leaves_quality_0_alone() {
    let ws = Workspace::new();
    let (script, _) = site(&ws, "app@1.0.0", 21, &[]);
    let (plain, _) = site(&ws, "app@2.0.0", 22, &["--brotli-quality", "0"]);
    let (sha, plain_sha) = (sha256_hex(&script), sha256_hex(&plain));
    let (published, quality) = brotli_state(&ws, &sha);
    assert_eq!(quality, Some(5), "publish records its quality");
    let published = published.expect("a stream at quality 5");
    assert_eq!(brotli_state(&ws, &plain_sha), (None, Some(0)));

    let out = ws.ok(&["recompress", "--json"]);
    let done: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(done["blobs"], 1, "{done}: only the file at quality 5");
    assert_eq!(done["streams"], 1, "{done}");
    assert_eq!(done["bytes_before"], published, "{done}");
    let (upgraded, quality) = brotli_state(&ws, &sha);
    let upgraded = upgraded.expect("a stream");
    assert!(upgraded < published, "{upgraded} < {published}");
    assert_eq!(done["bytes_after"], upgraded, "{done}");
    assert_eq!(quality, Some(11));
    assert_eq!(brotli_state(&ws, &plain_sha), (None, Some(0)), "left alone");
    let body: Vec<u8> = ws
        .conn()
        .query_row(
            "SELECT r.body FROM brotli r JOIN blobs b ON b.id = r.blob_id WHERE b.sha256 = ?1",
            [hex::decode(&sha).expect("hex")],
            |r| r.get(0),
        )
        .expect("the stream");
    assert_eq!(unbrotli(&body), script);
    ws.ok(&["verify"]);

    // Once per quality: a second run has nothing to do.
    let out = ws.ok(&["recompress"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("nothing to do"), "{text}");
}

#[test]
fn a_server_recompresses_in_the_background_under_a_new_tag() {
    let ws = Workspace::new();
    ws.write("first/a.txt", "a\n");
    ws.publish("first@1.0.0", "first", &[]);
    let server = Server::start_recompressing(&ws, &[]);
    // Published while it runs: the pass follows the catalog's generation.
    let (script, _) = site(&ws, "app@1.0.0", 31, &[]);
    let sha = sha256_hex(&script);
    let published = brotli_state(&ws, &sha).0.expect("a stream at quality 5");
    let url = format!("{}/assets/app/1.0.0/app.js", server.base);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let br = loop {
        let r = get(&url, &[("Accept-Encoding", "br")]);
        assert_eq!(r.status, 200);
        assert_eq!(
            unbrotli(&r.body),
            script,
            "every answer decodes to the file"
        );
        if (r.body.len() as i64) < published {
            break r;
        }
        assert_eq!(r.must("etag"), format!("\"{sha}-br.{published}\""));
        assert!(
            std::time::Instant::now() < deadline,
            "still the published stream after 30 s; stderr:\n{}",
            server.stderr()
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    assert_eq!(brotli_state(&ws, &sha).1, Some(11));
    let tag = format!("\"{sha}-br.{}\"", br.body.len());
    assert_eq!(br.must("etag"), tag);
    // A client holding the old stream gets the new one whole: no 304 and
    // no range of other bytes under its tag.
    let old = format!("\"{sha}-br.{published}\"");
    let r = get(&url, &[("Accept-Encoding", "br"), ("If-None-Match", &old)]);
    assert_eq!(r.status, 200);
    let r = get(
        &url,
        &[
            ("Accept-Encoding", "br"),
            ("Range", "bytes=100-"),
            ("If-Range", &old),
        ],
    );
    assert_eq!((r.status, r.body.len()), (200, br.body.len()));
    let r = get(&url, &[("Accept-Encoding", "br"), ("If-None-Match", &tag)]);
    assert_eq!(r.status, 304);
    assert!(
        server.stderr().contains("brotli 11: 1 new streams"),
        "{}",
        server.stderr()
    );
}

#[test]
fn a_catalog_from_before_brotli_made_has_every_stream_recompressed() {
    let ws = Workspace::new();
    let (one, _) = site(&ws, "app@1.0.0", 41, &[]);
    let (two, _) = site(&ws, "app@2.0.0", 42, &["--brotli-quality", "0"]);
    let before = ccc::testing::catalog::BROTLI_MADE_SCHEMA - 1;
    ws.conn()
        .execute_batch(&format!(
            "DROP TABLE site_versions;
             DROP TABLE sites;
             DROP TABLE brotli_made;
             UPDATE meta SET value = '{before}' WHERE key = 'schema_version';
             PRAGMA user_version = {before};"
        ))
        .expect("downgrade");
    // Served as it is: the server never migrates, and says why it leaves
    // the streams alone.
    let server = Server::start_recompressing(&ws, &[]);
    let url = format!("{}/assets/app/1.0.0/app.js", server.base);
    assert_eq!(get(&url, &[("Accept-Encoding", "br")]).status, 200);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !server.stderr().contains("predates it") {
        assert!(std::time::Instant::now() < deadline, "{}", server.stderr());
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    drop(server);
    // Qualities unknown: both files are tried, the one published without
    // brotli too.
    let done = ws.json(&["recompress", "--json"]);
    assert_eq!(done["blobs"], 2, "{done}");
    for script in [one, two] {
        assert_eq!(brotli_state(&ws, &sha256_hex(&script)).1, Some(11));
    }
    ws.ok(&["verify"]);
}

#[test]
fn a_replica_leaves_its_streams_to_the_writer() {
    let ws = Workspace::new();
    let (script, _) = site(&ws, "app@1.0.0", 51, &[]);
    // A follower's heartbeat beside the catalog: this copy is a replica's.
    std::fs::write(ws.path().join("cdn.db.follow"), b"").expect("heartbeat");
    let server = Server::start_recompressing(&ws, &[]);
    let url = format!("{}/assets/app/1.0.0/app.js", server.base);
    assert_eq!(get(&url, &[("Accept-Encoding", "br")]).status, 200);
    std::thread::sleep(std::time::Duration::from_secs(2));
    assert_eq!(brotli_state(&ws, &sha256_hex(&script)).1, Some(5));
    // Not even tried: the pass is off on a replica, not refused by it.
    let stderr = server.stderr();
    assert!(!stderr.contains("brotli"), "{stderr}");
}
