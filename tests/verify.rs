//! `ccc verify`: a damaged blob is found and traced to the files it
//! affects.

use crate::util::{Rng, Workspace, sha256_hex};
use serde_json::Value;
use sha2::{Digest, Sha256};

struct Fixture {
    ws: Workspace,
    /// Stored raw (noise), in app@1.0.0 and app@1.1.0.
    noise: Vec<u8>,
    /// Stored gzipped, in app@1.1.0 only.
    text: Vec<u8>,
}

fn fixture() -> Fixture {
    let ws = Workspace::new();
    let mut rng = Rng::new(11);
    let noise = rng.bytes(50_000);
    let text = rng.text(80_000);
    ws.write("v1/img/noise.bin", &noise);
    ws.write("v1/index.html", "<p>1</p>\n");
    ws.write("v2/img/noise.bin", &noise);
    ws.write("v2/js/app.js", &text);
    ws.write("v2/index.html", "<p>2</p>\n");
    ws.publish("app@1.0.0", "v1", &[]);
    ws.publish("app@1.1.0", "v2", &[]);
    // Clean to begin with, so that the failures below are the damage's.
    let report = ws.json(&["verify", "--json"]);
    assert_eq!(report["problems"], serde_json::json!([]), "{report}");
    assert_eq!(report["ok"], true, "{report}");
    assert_eq!(report["blob_count"], 4);
    Fixture { ws, noise, text }
}

/// Flips one byte in the middle of the body of the blob holding `content`.
fn damage_body(ws: &Workspace, content: &[u8]) {
    let sha = Sha256::digest(content).to_vec();
    let conn = ws.conn();
    let mut body: Vec<u8> = conn
        .query_row("SELECT body FROM blobs WHERE sha256 = ?1", [&sha], |r| {
            r.get(0)
        })
        .expect("the blob is stored");
    let middle = body.len() / 2;
    body[middle] ^= 0x5a;
    let changed = conn
        .execute(
            "UPDATE blobs SET body = ?1 WHERE sha256 = ?2",
            rusqlite::params![body, sha],
        )
        .expect("update blob");
    assert_eq!(changed, 1);
}

/// `verify --json` must exit 1; returns its report.
#[track_caller]
fn verify_fails(ws: &Workspace) -> Value {
    let out = ws.fails(&["verify", "--json"], 1);
    serde_json::from_slice(&out.stdout).expect("verify --json prints JSON")
}

/// The blob problems of a report, as (object, affects).
fn blob_problems(report: &Value) -> Vec<(String, Vec<String>)> {
    report["problems"]
        .as_array()
        .expect("problems")
        .iter()
        .filter(|p| p["kind"] == "blob")
        .map(|p| {
            let affects = p["affects"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|s| s.as_str().expect("affects entry").to_string())
                        .collect()
                })
                .unwrap_or_default();
            (p["object"].as_str().expect("object").to_string(), affects)
        })
        .collect()
}

#[test]
fn a_flipped_byte_in_a_raw_blob_is_found() {
    let Fixture { ws, noise, .. } = fixture();
    damage_body(&ws, &noise);

    let out = ws.fails(&["verify"], 1);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("app@1.0.0/img/noise.bin"), "{stdout}");
    assert!(stdout.contains("app@1.1.0/img/noise.bin"), "{stdout}");
    assert!(stdout.contains("FAILED"), "{stdout}");

    let report = verify_fails(&ws);
    assert_eq!(
        blob_problems(&report),
        [(
            sha256_hex(&noise),
            vec![
                "app@1.0.0/img/noise.bin".to_string(),
                "app@1.1.0/img/noise.bin".to_string()
            ]
        )],
        "{report}"
    );
}

#[test]
fn a_flipped_byte_in_a_gzip_blob_is_found() {
    let Fixture { ws, text, .. } = fixture();
    damage_body(&ws, &text);
    let out = ws.fails(&["verify"], 1);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("app@1.1.0/js/app.js"), "{stdout}");
    let report = verify_fails(&ws);
    assert_eq!(
        blob_problems(&report),
        [(sha256_hex(&text), vec!["app@1.1.0/js/app.js".to_string()])],
        "{report}"
    );
}

#[test]
fn a_wrong_raw_size_is_found() {
    let Fixture { ws, text, .. } = fixture();
    let sha = Sha256::digest(&text).to_vec();
    let changed = ws
        .conn()
        .execute(
            "UPDATE blobs SET raw_size = raw_size + 1 WHERE sha256 = ?1",
            [&sha],
        )
        .unwrap();
    assert_eq!(changed, 1);
    let out = ws.fails(&["verify"], 1);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("app@1.1.0/js/app.js"), "{stdout}");
    let report = verify_fails(&ws);
    assert_eq!(
        blob_problems(&report),
        [(sha256_hex(&text), vec!["app@1.1.0/js/app.js".to_string()])],
        "{report}"
    );
    let detail = report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["kind"] == "blob")
        .unwrap()["detail"]
        .as_str()
        .unwrap()
        .to_string();
    let size = text.len().to_string();
    assert!(detail.contains(&size), "{detail}");
}

/// Sets the recorded digest of the stored bytes of the blob holding
/// `content`.
fn set_stored_digest(ws: &Workspace, content: &[u8], digest: &[u8]) {
    let changed = ws
        .conn()
        .execute(
            "UPDATE blobs SET stored_sha256 = ?1 WHERE sha256 = ?2",
            rusqlite::params![digest, Sha256::digest(content).to_vec()],
        )
        .expect("update blob");
    assert_eq!(changed, 1);
}

/// The `detail` of the one blob problem of a report.
fn blob_detail(report: &Value) -> String {
    let blobs: Vec<&Value> = report["problems"]
        .as_array()
        .expect("problems")
        .iter()
        .filter(|p| p["kind"] == "blob")
        .collect();
    assert_eq!(blobs.len(), 1, "{report}");
    blobs[0]["detail"].as_str().expect("detail").to_string()
}

#[test]
fn a_wrong_stored_digest_is_found() {
    let Fixture { ws, text, noise } = fixture();
    let right: Vec<u8> = ws
        .conn()
        .query_row(
            "SELECT stored_sha256 FROM blobs WHERE sha256 = ?1",
            [Sha256::digest(&text).to_vec()],
            |r| r.get(0),
        )
        .expect("the blob is stored");
    set_stored_digest(&ws, &text, &[7u8; 32]);
    let out = ws.fails(&["verify"], 1);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("app@1.1.0/js/app.js"), "{stdout}");
    only_a_stored_digest_is_wrong(&ws, &text, "stored bytes hash to", &"07".repeat(32));

    // For a body stored as it is, the stored digest is the file's: a wrong
    // one is found the same way.
    set_stored_digest(&ws, &text, &right);
    set_stored_digest(&ws, &noise, &[9u8; 32]);
    let report = verify_fails(&ws);
    assert_eq!(blob_problems(&report)[0].0, sha256_hex(&noise), "{report}");
    assert!(blob_detail(&report).contains("stored bytes hash to"));
}

#[test]
fn a_wrong_xxh3_digest_is_found() {
    let Fixture { ws, text, .. } = fixture();
    let changed = ws
        .conn()
        .execute(
            "UPDATE blobs SET stored_xxh3 = ?1 WHERE sha256 = ?2",
            rusqlite::params![[5u8; 16].to_vec(), Sha256::digest(&text).to_vec()],
        )
        .expect("update blob");
    assert_eq!(changed, 1);
    only_a_stored_digest_is_wrong(&ws, &text, "stored bytes hash to xxh3", &"05".repeat(16));
}

/// verify names the blob holding `text` (app@1.1.0's js/app.js) alone, for
/// a stored digest that does not match (`what`, recorded as `recorded`),
/// while the body still decodes right.
fn only_a_stored_digest_is_wrong(ws: &Workspace, text: &[u8], what: &str, recorded: &str) {
    let report = verify_fails(ws);
    assert_eq!(
        blob_problems(&report),
        [(sha256_hex(text), vec!["app@1.1.0/js/app.js".to_string()])],
        "{report}"
    );
    let detail = blob_detail(&report);
    assert!(detail.contains(what), "{detail}");
    assert!(detail.contains(recorded), "{detail}");
    assert!(
        !detail.contains("content hashes to"),
        "the body still decodes right: {detail}"
    );
}

#[test]
fn a_damaged_gzip_body_fails_both_digests() {
    let Fixture { ws, text, .. } = fixture();
    damage_body(&ws, &text);
    let detail = blob_detail(&verify_fails(&ws));
    assert!(detail.contains("stored bytes hash to"), "{detail}");
    assert!(
        detail.contains("does not decode") || detail.contains("content hashes to"),
        "{detail}"
    );
}

/// `cat` checks a body against its recorded digest before writing a byte,
/// as `serve` does, and reports the damage as the catalog's, naming the
/// file, not as a failure to write to stdout.
#[test]
fn cat_writes_nothing_of_a_damaged_body_and_names_the_file() {
    let f = fixture();
    damage_body(&f.ws, &f.text);
    damage_body(&f.ws, &f.noise);
    for (target, flags) in [
        ("app@1.1.0/js/app.js", &[][..]),
        ("app@1.1.0/js/app.js", &["--gzip"][..]),
        ("app@1.0.0/img/noise.bin", &[][..]),
        ("app@1.0.0/img/noise.bin", &["--gzip"][..]),
    ] {
        let mut args = vec!["cat", target];
        args.extend(flags);
        let out = f.ws.fails(&args, 1);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.stdout.is_empty(),
            "{target} {flags:?}: wrote {} bytes",
            out.stdout.len()
        );
        assert!(err.contains("is damaged"), "{target}: {err}");
        assert!(err.contains(target), "{target}: {err}");
        assert!(!err.contains("standard output"), "{target}: {err}");
        assert!(err.contains("ccc verify"), "{target}: {err}");
    }
    // The undamaged file still reads.
    assert_eq!(f.ws.cat("app@1.1.0/index.html"), b"<p>2</p>\n");
}
