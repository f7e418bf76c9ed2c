//! `Range` requests against a real `ccc serve`: one `bytes=` range gets a
//! 206 of the selected representation (the brotli or gzip stream when that
//! coding is negotiated), checked byte for byte against the original files.

use crate::serve_util::{Client, Resp, Server, asset_path, raw_get};
use crate::util::{Rng, Workspace, gunzip};

const GZIP: (&str, &str) = ("Accept-Encoding", "gzip");
const BR: (&str, &str) = ("Accept-Encoding", "br");

/// The file a whole representation (or its pieces, joined) decodes to,
/// by the `Content-Encoding` it was sent with.
fn decode(coding: Option<&str>, body: &[u8]) -> Vec<u8> {
    match coding {
        Some("gzip") => gunzip(body),
        Some("br") => {
            let mut out = Vec::new();
            ::brotli::BrotliDecompress(&mut &body[..], &mut out).expect("a brotli stream");
            out
        }
        None => body.to_vec(),
        Some(other) => panic!("unexpected Content-Encoding {other}"),
    }
}

/// Compressible text (stored gzip, with brotli beside it), noise (stored as it is) and the edge
/// sizes, past the socket buffer for the big ones.
fn tree() -> Vec<(String, Vec<u8>)> {
    let mut rng = Rng::new(9110);
    vec![
        ("big.js".into(), rng.script(400_000)),
        ("noise.bin".into(), rng.bytes(300_000)),
        ("small.css".into(), b"a{b:c}\n".repeat(40)),
        ("one.txt".into(), b"x".to_vec()),
        ("empty.txt".into(), Vec::new()),
    ]
}

fn start() -> (Workspace, Server, Vec<(String, Vec<u8>)>) {
    let ws = Workspace::new();
    let files = tree();
    ws.write_tree("site", &files);
    ws.publish("site@1.0.0", "site", &[]);
    let server = Server::start(&ws, &[]);
    (ws, server, files)
}

/// The ranges asked of a representation of `len` bytes, with the slice
/// each names.
fn ranges(len: usize) -> Vec<(String, std::ops::Range<usize>)> {
    let mut asked = vec![
        ("bytes=0-0".to_string(), 0..1),
        (format!("bytes=0-{}", len + 1000), 0..len),
        ("bytes=0-".into(), 0..len),
        (format!("bytes={}-", len - 1), len - 1..len),
        ("bytes=-1".into(), len - 1..len),
        (format!("bytes=-{}", len + 5), 0..len),
    ];
    if len > 1000 {
        asked.extend([
            ("bytes=100-199".to_string(), 100..200),
            ("bytes=100-".into(), 100..len),
            ("bytes=-500".into(), len - 500..len),
            (
                format!("bytes={}-{}", len / 3, 2 * len / 3),
                len / 3..2 * len / 3 + 1,
            ),
        ]);
    }
    asked
}

#[track_caller]
fn check_part(r: &Resp, whole: &Resp, part: &std::ops::Range<usize>, what: &str) {
    let len = whole.body.len();
    assert_eq!(r.status, 206, "{what}: {}", r.text());
    assert_eq!(r.body, whole.body[part.clone()], "{what}");
    assert_eq!(
        r.header("content-range"),
        Some(format!("bytes {}-{}/{len}", part.start, part.end - 1).as_str()),
        "{what}"
    );
    assert_eq!(r.must("content-length"), part.len().to_string(), "{what}");
    for same in [
        "etag",
        "content-encoding",
        "content-type",
        "accept-ranges",
        "vary",
    ] {
        assert_eq!(r.header(same), whole.header(same), "{what}: {same}");
    }
}

#[test]
fn one_range_of_either_representation_matches_the_original() {
    let (_ws, server, files) = start();
    let client = Client::new();
    for (path, original) in &files {
        let url = server.url(&asset_path("site", "1.0.0", path));
        for accept in [&[][..], &[GZIP][..], &[BR][..]] {
            let whole = client.get(&url, accept);
            assert_eq!(whole.status, 200, "{path}");
            assert_eq!(whole.header("accept-ranges"), Some("bytes"), "{path}");
            let coding = whole.header("content-encoding");
            if path == "big.js" {
                // Text is held in every coding: each asked is the one sent.
                let asked = accept.first().map(|(_, coding)| *coding);
                assert_eq!(coding, asked, "{path}");
            }
            let decoded = decode(coding, &whole.body);
            assert_eq!(&decoded, original, "{path} {accept:?}");
            let coded = coding.is_some();
            let len = whole.body.len();
            if len == 0 {
                continue;
            }
            for (range, part) in ranges(len) {
                let what = format!("{path} {accept:?} {range}");
                let mut headers = vec![("Range", range.as_str())];
                headers.extend_from_slice(accept);
                check_part(&client.get(&url, &headers), &whole, &part, &what);
                if !coded {
                    // The identity representation is the file itself.
                    let r = client.get(&url, &headers);
                    assert_eq!(r.body, original[part], "{what}");
                }
            }
        }
    }
}

#[test]
fn a_download_resumed_in_pieces_reassembles_the_file() {
    let (_ws, server, files) = start();
    let client = Client::new();
    for (path, original) in files.iter().filter(|(_, b)| b.len() > 1000) {
        let url = server.url(&asset_path("site", "1.0.0", path));
        for accept in [&[][..], &[GZIP][..], &[BR][..]] {
            let first = client.get(&url, &[&[("Range", "bytes=0-65535")], accept].concat());
            assert_eq!(first.status, 206, "{path}");
            let (tag, total) = (first.must("etag").to_string(), first.must("content-range"));
            let total: usize = total
                .rsplit('/')
                .next()
                .and_then(|n| n.parse().ok())
                .unwrap();
            let mut got = first.body.clone();
            while got.len() < total {
                let range = format!("bytes={}-{}", got.len(), got.len() + 65_535);
                let headers = [
                    &[("Range", range.as_str()), ("If-Range", tag.as_str())],
                    accept,
                ]
                .concat();
                let r = client.get(&url, &headers);
                assert_eq!(r.status, 206, "{path} {range}");
                got.extend_from_slice(&r.body);
            }
            let file = decode(first.header("content-encoding"), &got);
            assert_eq!(&file, original, "{path} {accept:?}");
        }
    }
}

#[test]
fn unsatisfiable_several_and_malformed_ranges() {
    let (_ws, server, _files) = start();
    let client = Client::new();
    let url = server.url("/assets/site/1.0.0/big.js");
    for accept in [&[][..], &[GZIP][..], &[BR][..]] {
        let whole = client.get(&url, accept);
        let len = whole.body.len();
        let with = |range: &str| client.get(&url, &[&[("Range", range)], accept].concat());

        for past in [
            format!("bytes={len}-"),
            format!("bytes={}-{}", len + 5, len + 9),
            "bytes=-0".into(),
        ] {
            let r = with(&past);
            assert_eq!(r.status, 416, "{past}: {}", r.text());
            assert_eq!(
                r.header("content-range"),
                Some(format!("bytes */{len}").as_str())
            );
            assert_eq!(r.json()["status"], 416);
            assert_eq!(r.header("access-control-allow-origin"), Some("*"));
        }
        // Several ranges: the whole representation, as a 200.
        for several in ["bytes=0-9,20-29", "bytes=0-9, -5", "bytes=0-1,1-2"] {
            let r = with(several);
            assert_eq!(r.status, 200, "{several}");
            assert_eq!(r.body, whole.body, "{several}");
            assert_eq!(r.header("content-range"), None);
        }
        // What is not a bytes range is ignored.
        for odd in ["bytes=9-1", "bytes=x-y", "lines=0-1", "bytes=", "0-1"] {
            let r = with(odd);
            assert_eq!((r.status, r.body.len()), (200, len), "{odd}");
        }
    }
    let empty = server.url("/assets/site/1.0.0/empty.txt");
    let r = client.get(&empty, &[("Range", "bytes=0-")]);
    assert_eq!(
        (r.status, r.header("content-range")),
        (416, Some("bytes */0"))
    );
    // Two Range headers are not one range.
    let two = raw_get(
        server.addr,
        "GET",
        "/assets/site/1.0.0/small.css",
        &["Range: bytes=0-1", "Range: bytes=2-3"],
    );
    assert_eq!(two.status, 200);
    let stats = server.stats();
    assert_eq!(stats["by_status"]["416"], 10, "{stats}");
}

#[test]
fn if_range_and_if_none_match() {
    let (_ws, server, _files) = start();
    let client = Client::new();
    let url = server.url("/assets/site/1.0.0/big.js");
    let gz = client.get(&url, &[GZIP]);
    let plain = client.get(&url, &[]);
    let (gz_tag, plain_tag) = (gz.must("etag"), plain.must("etag"));
    let modified = gz.must("last-modified");
    let range = ("Range", "bytes=10-19");
    let weak = format!("W/{gz_tag}");
    for (if_range, status) in [
        (gz_tag, 206),
        (modified, 206),
        (plain_tag, 200),
        (weak.as_str(), 200),
        ("\"other\"", 200),
        ("Thu, 01 Jan 1970 00:00:00 GMT", 200),
        ("not a date", 200),
    ] {
        let r = client.get(&url, &[GZIP, range, ("If-Range", if_range)]);
        assert_eq!(r.status, status, "If-Range: {if_range}");
        let expected = if status == 206 {
            &gz.body[10..20]
        } else {
            &gz.body[..]
        };
        assert_eq!(r.body, expected, "If-Range: {if_range}");
    }
    // RFC 9110 13.2.2: a matching If-None-Match answers 304 before any
    // range; a failing one lets the range through.
    let r = client.get(&url, &[GZIP, range, ("If-None-Match", gz_tag)]);
    assert_eq!((r.status, r.body.len()), (304, 0));
    let r = client.get(&url, &[GZIP, range, ("If-None-Match", "\"other\"")]);
    assert_eq!(r.status, 206);
    let r = client.get(
        &url,
        &[
            GZIP,
            ("Range", "bytes=999999999-"),
            ("If-None-Match", gz_tag),
        ],
    );
    assert_eq!(r.status, 304, "304 before 416");

    // The brotli representation: its own tag makes the range apply, a
    // range of the brotli stream; the gzip tag names another
    // representation, so the whole brotli stream comes back.
    let br = client.get(&url, &[BR]);
    assert_eq!(br.header("content-encoding"), Some("br"));
    let br_tag = br.must("etag");
    assert_ne!(br_tag, gz_tag);
    for (if_range, status, expected) in [
        (br_tag, 206, &br.body[10..20]),
        (gz_tag, 200, &br.body[..]),
        (plain_tag, 200, &br.body[..]),
    ] {
        let r = client.get(&url, &[BR, range, ("If-Range", if_range)]);
        assert_eq!(r.status, status, "br, If-Range: {if_range}");
        assert_eq!(r.body, expected, "br, If-Range: {if_range}");
        assert_eq!(r.header("content-encoding"), Some("br"));
        if status == 206 {
            let total = format!("bytes 10-19/{}", br.body.len());
            assert_eq!(r.header("content-range"), Some(total.as_str()));
        }
    }
}

#[test]
fn head_with_a_range_sends_the_206_head_only() {
    let (_ws, server, _files) = start();
    for (accept, path) in [
        ("br", "big.js"),
        ("gzip", "big.js"),
        ("identity", "big.js"),
        ("gzip", "noise.bin"),
    ] {
        let target = asset_path("site", "1.0.0", path);
        let ae = format!("Accept-Encoding: {accept}");
        let g = raw_get(server.addr, "GET", &target, &[&ae, "Range: bytes=5-1004"]);
        let h = raw_get(server.addr, "HEAD", &target, &[&ae, "Range: bytes=5-1004"]);
        assert_eq!((g.status, h.status), (206, 206), "{path} {accept}");
        assert_eq!(g.body().len(), 1000);
        assert!(h.after_headers.is_empty(), "HEAD sent a body: {h:?}");
        for name in [
            "content-length",
            "content-range",
            "etag",
            "content-encoding",
        ] {
            assert_eq!(h.header(name), g.header(name), "{path} {accept} {name}");
        }
        assert_eq!(h.header("content-length"), Some("1000"));
    }
}
