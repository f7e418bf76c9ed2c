//! Deltas between releases (RFC 9842's dcb and dcz) in the catalog:
//! publish makes them against the previous release, by path and by
//! hashed-name family, says so, and stores each pair once; `--no-deltas`
//! makes none; stock decoders (zstd's `--patch-from`, the brotli crate
//! given the dictionary) read them back to the file; verify decodes every
//! one; rm and gc drop those whose file or dictionary is gone.

use crate::util::{Rng, Workspace, sha256_hex};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The files of one release of a small app: a script, a hashed bundle, a
/// stylesheet, JSON, an image and a file too small to take part.
pub struct Release {
    pub app: Vec<u8>,
    pub bundle: (String, Vec<u8>),
    pub style: Vec<u8>,
    pub data: Vec<u8>,
}

/// Writes release `n` of the app into `dir`: `app.js` and the bundle
/// change a little from one release to the next, the stylesheet never.
pub fn release(ws: &Workspace, dir: &str, n: u64) -> Release {
    let mut rng = Rng::new(7);
    let mut app = rng.script(80_000);
    let mut bundle = rng.script(40_000);
    let mut style = Vec::new();
    for i in 0..600 {
        let n = rng.below(1000);
        style.extend_from_slice(format!(".c{i}{{margin:{n}px;color:#{n:03x}}}\n").as_bytes());
    }
    let mut data = br#"{"items":["#.to_vec();
    for i in 0..600 {
        let n = rng.below(100_000);
        data.extend_from_slice(format!(r#"{{"id":{i},"name":"item {n}"}},"#).as_bytes());
    }
    data.extend_from_slice(format!(r#"{{"release":{n}}}]}}"#).as_bytes());
    for i in 0..n {
        let at = 1000 + 777 * i as usize;
        app.splice(at..at, format!("console.log('release {i}');\n").bytes());
        bundle.splice(at..at, format!("export const v{i} = {i};\n").bytes());
    }
    // A content hash in the name, as a bundler writes it.
    let hash = &sha256_hex(&bundle)[..8];
    let bundle_name = format!("assets/index-B{hash}.js");
    ws.write(&format!("{dir}/app.js"), &app);
    ws.write(&format!("{dir}/{bundle_name}"), &bundle);
    ws.write(&format!("{dir}/css/site.css"), &style);
    ws.write(&format!("{dir}/data.json"), &data);
    ws.write(&format!("{dir}/logo.png"), rng.bytes(9_000));
    ws.write(&format!("{dir}/tiny.js"), "export default 1;\n");
    Release {
        app,
        bundle: (bundle_name, bundle),
        style,
        data,
    }
}

/// The deltas the catalog holds of `content`: (coding, dictionary sha256
/// in hex, body).
pub fn deltas_of(ws: &Workspace, content: &[u8]) -> Vec<(String, String, Vec<u8>)> {
    let sha = Sha256::digest(content).to_vec();
    let conn = ws.conn();
    let mut stmt = conn
        .prepare(
            "SELECT d.coding, hex(k.sha256), d.body FROM deltas d
               JOIN blobs b ON b.id = d.blob_id JOIN blobs k ON k.id = d.dictionary_id
              WHERE b.sha256 = ?1 ORDER BY d.coding, k.sha256",
        )
        .expect("the deltas table");
    stmt.query_map([&sha], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?.to_ascii_lowercase(),
            r.get(2)?,
        ))
    })
    .expect("query")
    .collect::<Result<_, _>>()
    .expect("rows")
}

/// A `dcz` body decoded by the stock zstd tool against `dictionary`.
fn unzstd(ws: &Workspace, body: &[u8], dictionary: &[u8]) -> Vec<u8> {
    assert_eq!(body[..8], [0x5e, 0x2a, 0x4d, 0x18, 0x20, 0, 0, 0]);
    let dict = ws.write("unzstd/dictionary", dictionary);
    // The header is a skippable frame: zstd skips it by itself.
    let input = ws.write("unzstd/body.dcz", body);
    let out = std::process::Command::new("zstd")
        .args(["-d", "-q", "-c", "--long=27", "--patch-from"])
        .arg(&dict)
        .arg(&input)
        .output()
        .expect("zstd runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// A `dcb` body decoded by the brotli crate given `dictionary`.
fn unbrotli(body: &[u8], dictionary: &[u8]) -> Vec<u8> {
    assert_eq!(body[..4], [0xff, 0x44, 0x43, 0x42]);
    assert_eq!(hex::encode(&body[4..36]), sha256_hex(dictionary));
    let mut out = Vec::new();
    let reader =
        ::brotli::Decompressor::new_with_custom_dict(&body[36..], 4096, dictionary.to_vec().into());
    std::io::Read::read_to_end(&mut { reader }, &mut out).expect("a dcb stream");
    out
}

/// Decodes a stored delta with the stock decoder of its coding.
pub fn decode(ws: &Workspace, coding: &str, body: &[u8], dictionary: &[u8]) -> Vec<u8> {
    match coding {
        "dcb" => unbrotli(body, dictionary),
        "dcz" => unzstd(ws, body, dictionary),
        other => panic!("not a delta coding: {other}"),
    }
}

#[test]
fn publish_codes_each_file_against_the_previous_release() {
    let ws = Workspace::new();
    let one = release(&ws, "v1", 1);
    let first = ws.publish_json("app@1.0.0", "v1", &[]);
    assert_eq!(
        first["deltas"]["delta_count"], 0,
        "nothing to code against yet: {first}"
    );
    let two = release(&ws, "v2", 2);
    assert_ne!(one.bundle.0, two.bundle.0, "the bundle's name changed");
    let report = ws.publish_json("app@1.1.0", "v2", &[]);
    let deltas = &report["deltas"];
    assert_eq!(deltas["against"], serde_json::json!(["1.0.0"]), "{report}");
    // app.js, the bundle (by family), the stylesheet (unchanged) and the
    // JSON; never the image or the tiny script.
    assert_eq!(deltas["file_count"], 4, "{report}");
    let brotli = deltas["brotli_bytes"].as_u64().unwrap();
    let smallest = deltas["smallest_delta_bytes"].as_u64().unwrap();
    assert!(smallest * 20 < brotli, "{smallest} against {brotli}");

    // Each changed file both ways, each decoding to the file against the
    // previous release's bytes.
    for (new, old) in [
        (&two.app, &one.app),
        (&two.bundle.1, &one.bundle.1),
        (&two.data, &one.data),
    ] {
        let found = deltas_of(&ws, new);
        let codings: Vec<&str> = found.iter().map(|(c, _, _)| c.as_str()).collect();
        assert_eq!(codings, ["dcb", "dcz"]);
        for (coding, dictionary, body) in &found {
            assert_eq!(*dictionary, sha256_hex(old));
            assert_eq!(decode(&ws, coding, body, old), *new, "{coding}");
        }
    }
    // The unchanged stylesheet, against its own bytes: a few dozen bytes.
    for (coding, dictionary, body) in deltas_of(&ws, &two.style) {
        assert_eq!(dictionary, sha256_hex(&one.style));
        assert!(body.len() < 80, "{coding}: {} bytes", body.len());
        assert_eq!(decode(&ws, &coding, &body, &one.style), two.style);
    }
    // The summary says so.
    release(&ws, "v3", 3);
    let out = ws.ok(&["publish", "app@1.2.0", "v3"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("deltas against 1.1.0: 4 files,"), "{text}");
    assert!(text.contains("for a browser holding 1.1.0"), "{text}");
    // The stylesheet's delta against its own bytes was made once, for
    // 1.1.0: 1.2.0 holds the same pair.
    assert_eq!(deltas_of(&ws, &two.style).len(), 2);
    let report = ws.json(&["verify", "--json"]);
    assert_eq!(report["ok"], true, "{report}");
    assert!(report["delta_count"].as_u64().unwrap() >= 14, "{report}");
    // inspect lists a file's deltas: against which file, size, ratio.
    let out = ws.ok(&["inspect", "app@1.1.0/app.js"]);
    let text = String::from_utf8_lossy(&out.stdout);
    for coding in ["dcb", "dcz"] {
        let line = text
            .lines()
            .find(|l| l.contains(&format!("{coding} against app@1.0.0/app.js: ")))
            .unwrap_or_else(|| panic!("no {coding} line in {text}"));
        assert!(line.trim_end().ends_with("of brotli)"), "{line}");
    }
    let detail = ws.json(&["inspect", "app@1.1.0/app.js", "--json"]);
    let listed = detail["deltas"].as_array().expect("deltas");
    assert_eq!(listed.len(), 2, "{detail}");
    for d in listed {
        assert_eq!(d["dictionary_sha256"], sha256_hex(&one.app));
        assert_eq!(d["against"][0], "app@1.0.0/app.js");
        assert!(d["stored_bytes"].as_u64().unwrap() * 20 < brotli, "{d}");
    }
    let image = ws.json(&["inspect", "app@1.1.0/logo.png", "--json"]);
    assert_eq!(image["deltas"], serde_json::json!([]));
}

#[test]
fn no_deltas_makes_none() {
    let ws = Workspace::new();
    release(&ws, "v1", 1);
    ws.publish("app@1.0.0", "v1", &[]);
    let two = release(&ws, "v2", 2);
    let report = ws.publish_json("app@1.1.0", "v2", &["--no-deltas"]);
    assert_eq!(report["deltas"], Value::Null, "{report}");
    assert!(deltas_of(&ws, &two.app).is_empty());
    // A later release is coded against its predecessor as usual.
    let three = release(&ws, "v3", 3);
    ws.publish("app@1.2.0", "v3", &[]);
    assert_eq!(deltas_of(&ws, &three.app).len(), 2);
}

#[test]
fn one_command_brings_an_older_catalog_up_to_date() {
    let ws = Workspace::new();
    let one = release(&ws, "v1", 1);
    ws.publish("app@1.0.0", "v1", &[]);
    let two = release(&ws, "v2", 2);
    ws.publish("app@1.1.0", "v2", &["--no-deltas"]);
    let three = release(&ws, "v3", 3);
    ws.publish("app@1.2.0", "v3", &["--no-deltas"]);
    // As a catalog from before deltas: the schema without their tables.
    let before = ccc::testing::catalog::DELTAS_SCHEMA - 1;
    ws.conn()
        .execute_batch(&format!(
            "DROP TABLE site_versions; DROP TABLE sites;
             DROP TABLE recoded; DROP TABLE deltas; DROP TABLE brotli_made;
             UPDATE meta SET value = '{before}' WHERE key = 'schema_version';
             PRAGMA user_version = {before};"
        ))
        .expect("downgrade");
    let out = ws.ok(&["deltas"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("app@1.1.0\n  deltas against 1.0.0: 4 files,"),
        "{text}"
    );
    assert!(
        text.contains("app@1.2.0\n  deltas against 1.1.0: 4 files,"),
        "{text}"
    );
    assert!(text.contains("for 1 package"), "{text}");
    for (new, old) in [(&two.app, &one.app), (&three.app, &two.app)] {
        let found = deltas_of(&ws, new);
        assert_eq!(found.len(), 2);
        for (coding, dictionary, body) in &found {
            assert_eq!(*dictionary, sha256_hex(old));
            assert_eq!(decode(&ws, coding, body, old), *new, "{coding}");
        }
    }
    // A second run has nothing left to make.
    let out = ws.ok(&["deltas", "app"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("0 deltas made (0 B) for 1 package"), "{text}");
    let report = ws.json(&["verify", "--json"]);
    assert_eq!(report["ok"], true, "{report}");
    // A package the catalog does not have is named.
    let out = ws
        .ccc()
        .args(["deltas", "nosuch"])
        .output()
        .expect("run ccc");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("nosuch"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn verify_decodes_every_delta() {
    let ws = Workspace::new();
    release(&ws, "v1", 1);
    ws.publish("app@1.0.0", "v1", &[]);
    let two = release(&ws, "v2", 2);
    ws.publish("app@1.1.0", "v2", &[]);
    let sha = Sha256::digest(&two.app).to_vec();
    let conn = ws.conn();
    let body: Vec<u8> = conn
        .query_row(
            "SELECT d.body FROM deltas d JOIN blobs b ON b.id = d.blob_id
              WHERE b.sha256 = ?1 AND d.coding = 'dcz'",
            [&sha],
            |r| r.get(0),
        )
        .expect("a dcz delta of app.js");
    // A damaged body fails its digest; one whose digest was made to match
    // fails to decode to the file.
    let mut damaged = body.clone();
    let last = damaged.len() - 3;
    damaged[last] ^= 0x20;
    let set = |body: &[u8], xxh3: bool| {
        let digest = xxhash_rust::xxh3::xxh3_128(body).to_be_bytes().to_vec();
        conn.execute(
            &format!(
                "UPDATE deltas SET body = ?1{} WHERE coding = 'dcz'
                   AND blob_id = (SELECT id FROM blobs WHERE sha256 = ?2)",
                if xxh3 { ", stored_xxh3 = ?3" } else { "" }
            ),
            rusqlite::params_from_iter(
                [body.to_vec(), sha.clone(), digest]
                    .into_iter()
                    .take(if xxh3 { 3 } else { 2 }),
            ),
        )
        .expect("update");
    };
    for (xxh3, needle) in [
        (false, "stored bytes hash to xxh3"),
        (true, "dcz delta against"),
    ] {
        set(&damaged, xxh3);
        let out = ws.fails(&["verify", "--json"], 1);
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        let problems = report["problems"].as_array().unwrap();
        assert_eq!(problems.len(), 1, "{report}");
        let detail = problems[0]["detail"].as_str().unwrap();
        assert!(detail.contains(needle), "{detail}");
        assert!(detail.contains("dcz delta against"), "{detail}");
        assert_eq!(
            problems[0]["affects"],
            serde_json::json!(["app@1.1.0/app.js"])
        );
    }
    set(&body, true);
    assert_eq!(ws.json(&["verify", "--json"])["ok"], true);
}

#[test]
fn rm_and_gc_drop_deltas_whose_file_or_dictionary_is_gone() {
    let ws = Workspace::new();
    let one = release(&ws, "v1", 1);
    ws.publish("app@1.0.0", "v1", &[]);
    let two = release(&ws, "v2", 2);
    ws.publish("app@1.1.0", "v2", &[]);
    let three = release(&ws, "v3", 3);
    ws.publish("app@1.2.0", "v3", &[]);
    assert_eq!(deltas_of(&ws, &two.app).len(), 2);
    // 1.0.0 goes: the deltas against its files go too, but for the
    // stylesheet's, whose bytes 1.1.0 and 1.2.0 still hold.
    let removed = ws.json(&["rm", "app@1.0.0", "--json"]);
    let count = removed["removed_delta_count"].as_u64().unwrap();
    assert_eq!(count, 6, "app.js, the bundle, data.json: {removed}");
    assert!(removed["removed_delta_bytes"].as_u64().unwrap() > 0);
    for content in [&two.app, &two.bundle.1, &two.data] {
        assert!(deltas_of(&ws, content).is_empty());
    }
    assert_eq!(deltas_of(&ws, &two.style).len(), 2);
    assert_eq!(deltas_of(&ws, &three.app).len(), 2);
    assert_eq!(sha256_hex(&one.style), sha256_hex(&two.style));
    // gc --keep 1 takes 1.1.0, and with it the dictionaries of 1.2.0.
    let report = ws.json(&["gc", "--keep", "1", "--json"]);
    assert_eq!(report["removed_delta_count"], 6, "{report}");
    assert!(deltas_of(&ws, &three.app).is_empty());
    assert_eq!(deltas_of(&ws, &three.style).len(), 2, "its own bytes stay");
    assert_eq!(ws.json(&["verify", "--json"])["ok"], true);
}
