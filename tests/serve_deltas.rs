//! Deltas served (RFC 9842): a versioned script offers itself as a
//! dictionary for the same file, or family, in every version; a request
//! naming a dictionary the catalog has deltas against gets the smaller of
//! `dcb` and `dcz` it accepts, decoding to the exact file, with its own
//! ETag, `Vary` on the dictionary, HEAD and ranges of the same
//! representation, and brotli for anyone else: a wrong, garbled or
//! non-UTF-8 `Available-Dictionary`, a client that does not name the
//! coding, a cross-origin `no-cors` load.

use crate::deltas::{decode, release};
use crate::serve_util::{RawResp, Server, asset_path, parse_raw, raw_get};
use crate::util::Workspace;
use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use sha2::{Digest, Sha256};
use std::io::{Read, Write};
use std::net::TcpStream;

/// Chromium's `Accept-Encoding` when it holds a dictionary for the URL.
const CHROMIUM: &str = "Accept-Encoding: gzip, deflate, br, zstd, dcb, dcz";

fn available(dictionary: &[u8]) -> String {
    format!(
        "Available-Dictionary: :{}:",
        BASE64.encode(Sha256::digest(dictionary))
    )
}

#[track_caller]
fn get(server: &Server, method: &str, path: &str, headers: &[&str]) -> RawResp {
    raw_get(server.addr, method, path, headers)
}

#[test]
fn a_release_is_sent_as_a_delta_against_the_one_the_client_holds() {
    let ws = Workspace::new();
    let one = release(&ws, "v1", 1);
    ws.publish("app@1.0.0", "v1", &[]);
    let two = release(&ws, "v2", 2);
    ws.publish("app@1.1.0", "v2", &[]);
    let server = Server::start(&ws, &[]);
    let holds = available(&one.app);
    let url = asset_path("app", "1.1.0", "app.js");

    // Offered as a dictionary for the same path in every version.
    let first = get(
        &server,
        "GET",
        &asset_path("app", "1.0.0", "app.js"),
        &[CHROMIUM],
    );
    assert_eq!(first.status, 200);
    assert_eq!(
        first.header("use-as-dictionary"),
        Some(r#"match="/assets/app/*/app.js", match-dest=("script")"#)
    );
    // The hashed bundle, for its family.
    let bundle = get(
        &server,
        "GET",
        &asset_path("app", "1.0.0", &one.bundle.0),
        &[CHROMIUM],
    );
    let offer = bundle.header("use-as-dictionary").expect("offered");
    assert!(
        offer.starts_with(r#"match="/assets/app/*/assets/index-*.js""#),
        "{offer}"
    );

    // Without a dictionary: brotli, and the answer varies by dictionary.
    let plain = get(&server, "GET", &url, &[CHROMIUM]);
    assert_eq!(plain.header("content-encoding"), Some("br"));
    assert_eq!(
        plain.header("vary"),
        Some("Accept-Encoding, Available-Dictionary")
    );
    let br_len = plain.body().len();
    let br_tag = plain.header("etag").expect("etag").to_string();

    // With it: the smaller delta, decoding to the file.
    let delta = get(&server, "GET", &url, &[CHROMIUM, &holds]);
    assert_eq!(delta.status, 200, "{delta:?}");
    let coding = delta.header("content-encoding").expect("coded").to_string();
    assert!(coding == "dcb" || coding == "dcz", "{coding}");
    assert_eq!(
        delta.header("vary"),
        Some("Accept-Encoding, Available-Dictionary")
    );
    let body = delta.body();
    assert!(body.len() * 20 < br_len, "{} against {br_len}", body.len());
    assert_eq!(decode(&ws, &coding, &body, &one.app), two.app);
    let tag = delta.header("etag").expect("etag").to_string();
    assert_ne!(tag, br_tag);
    assert!(!tag.starts_with("W/"), "strong: {tag}");
    // Each coding on its own, each decoding, each with its own tag.
    let mut tags = vec![tag.clone(), br_tag.clone()];
    for only in ["dcb", "dcz"] {
        let ae = format!("Accept-Encoding: br, {only}");
        let r = get(&server, "GET", &url, &[&ae, &holds]);
        assert_eq!(r.header("content-encoding"), Some(only));
        assert_eq!(decode(&ws, only, &r.body(), &one.app), two.app);
        tags.push(r.header("etag").expect("etag").to_string());
    }
    tags.sort();
    tags.dedup();
    assert_eq!(tags.len(), 3, "br, dcb and dcz tags differ: {tags:?}");

    // A 304 only for the representation the client holds.
    let inm = format!("If-None-Match: {br_tag}");
    let r = get(&server, "GET", &url, &[CHROMIUM, &holds, &inm]);
    assert_eq!(r.status, 200, "holding br, asking with a dictionary");
    let inm = format!("If-None-Match: {tag}");
    let r = get(&server, "GET", &url, &[CHROMIUM, &holds, &inm]);
    assert_eq!(r.status, 304);
    assert_eq!(r.header("etag"), Some(tag.as_str()));
    let r = get(&server, "GET", &url, &[CHROMIUM, &inm]);
    assert_eq!(r.status, 200, "holding the delta, asking without one");

    // HEAD and ranges are of the same representation: the delta's bytes.
    let r = get(&server, "HEAD", &url, &[CHROMIUM, &holds]);
    assert_eq!(r.header("content-encoding"), Some(coding.as_str()));
    assert_eq!(
        r.header("content-length"),
        Some(body.len().to_string().as_str())
    );
    assert_eq!(r.header("etag"), Some(tag.as_str()));
    let r = get(
        &server,
        "GET",
        &url,
        &[CHROMIUM, &holds, "Range: bytes=4-35"],
    );
    assert_eq!(r.status, 206);
    assert_eq!(r.header("content-encoding"), Some(coding.as_str()));
    assert_eq!(r.body(), body[4..36]);
    let total = format!("bytes 4-35/{}", body.len());
    assert_eq!(r.header("content-range"), Some(total.as_str()));

    // The stylesheet, unchanged since 1.0.0, is a few dozen bytes.
    let css = get(
        &server,
        "GET",
        &asset_path("app", "1.1.0", "css/site.css"),
        &[CHROMIUM, &available(&one.style)],
    );
    assert!(css.body().len() < 80, "{css:?}");

    // Anything else gets brotli, as before.
    let stranger = format!(
        "Available-Dictionary: :{}:",
        BASE64.encode(Sha256::digest(b"a file no release holds"))
    );
    for headers in [
        vec![CHROMIUM, stranger.as_str()],
        vec![CHROMIUM, "Available-Dictionary: :not base64 at all:"],
        vec![CHROMIUM, "Available-Dictionary: \"a string\""],
        vec![CHROMIUM, "Available-Dictionary: :AAAA:"],
        vec!["Accept-Encoding: gzip, br", &holds],
        vec!["Accept-Encoding: *", &holds],
        vec!["Accept-Encoding: br, dcb;q=0, dcz;q=0", &holds],
        // A classic script of another site, without `crossorigin`.
        vec![
            CHROMIUM,
            &holds,
            "Sec-Fetch-Site: cross-site",
            "Sec-Fetch-Mode: no-cors",
        ],
    ] {
        let r = get(&server, "GET", &url, &headers);
        assert_eq!(r.status, 200, "{headers:?}");
        assert_eq!(r.header("content-encoding"), Some("br"), "{headers:?}");
        assert_eq!(r.body().len(), br_len, "{headers:?}");
    }
    // A module script of another site is a CORS load: it may.
    let r = get(
        &server,
        "GET",
        &url,
        &[
            CHROMIUM,
            &holds,
            "Sec-Fetch-Site: cross-site",
            "Sec-Fetch-Mode: cors",
            "Origin: https://other.example",
        ],
    );
    assert_eq!(r.header("content-encoding"), Some(coding.as_str()));

    // Bytes that are not UTF-8 in the header: a clear answer, brotli.
    let mut stream = TcpStream::connect(server.addr).expect("connect");
    let mut head = format!(
        "GET {url} HTTP/1.1\r\nHost: {}\r\n{CHROMIUM}\r\n",
        server.addr
    )
    .into_bytes();
    head.extend_from_slice(b"Available-Dictionary: :\xff\xfe\x80:\r\nConnection: close\r\n\r\n");
    stream.write_all(&head).expect("send");
    let mut all = Vec::new();
    stream.read_to_end(&mut all).expect("read");
    let r = parse_raw(&all).expect("an answer");
    assert!(
        r.status == 200 || r.status == 400,
        "a clear answer: {}",
        r.status
    );
    if r.status == 200 {
        assert_eq!(r.header("content-encoding"), Some("br"));
    }

    // Hot deltas are cache hits, like everything else: no more misses.
    let misses = |s: &Server| s.stats()["cache"]["misses"].as_u64().expect("misses");
    let before = misses(&server);
    for _ in 0..3 {
        let r = get(&server, "GET", &url, &[CHROMIUM, &holds]);
        assert_eq!(r.body(), body);
    }
    assert_eq!(misses(&server), before);

    // /metrics counts them by coding, and what they saved.
    let page = String::from_utf8(get(&server, "GET", "/metrics", &[]).body()).expect("text");
    let sample = |name: &str| -> u64 {
        let line = page
            .lines()
            .find(|l| l.starts_with(name) && l[name.len()..].starts_with(' '))
            .unwrap_or_else(|| panic!("no {name} in {page}"));
        line.rsplit(' ')
            .next()
            .and_then(|v| v.parse().ok())
            .expect("a count")
    };
    let deltas = |what: &str| {
        sample(&format!("ccc_asset_{what}{{encoding=\"dcb\"}}"))
            + sample(&format!("ccc_asset_{what}{{encoding=\"dcz\"}}"))
    };
    // The first answer, dcb and dcz alone, the one holding br, the range
    // (its part's bytes), the stylesheet, the CORS load, three hits.
    assert_eq!(deltas("responses_total"), 10, "{page}");
    assert!(sample("ccc_asset_responses_total{encoding=\"br\"}") >= 10);
    let saved = sample("ccc_delta_saved_bytes_total");
    assert!(saved > 7 * (br_len - body.len()) as u64, "{saved}");
    assert!(deltas("response_body_bytes_total") > 5 * body.len() as u64);
}

#[test]
fn aliases_and_unversioned_kinds_are_not_offered_as_dictionaries() {
    let ws = Workspace::new();
    release(&ws, "v1", 1);
    ws.publish("app@1.0.0", "v1", &[]);
    let server = Server::start(&ws, &[]);
    // An alias redirects (its freshness is short): no dictionary there.
    let alias = get(&server, "GET", "/assets/app/latest/app.js", &[CHROMIUM]);
    assert_eq!(alias.status, 302);
    assert_eq!(alias.header("use-as-dictionary"), None);
    // Nor an image, nor a file too small for a delta to pay.
    for path in ["logo.png", "tiny.js"] {
        let r = get(
            &server,
            "GET",
            &asset_path("app", "1.0.0", path),
            &[CHROMIUM],
        );
        assert_eq!(r.status, 200);
        assert_eq!(r.header("use-as-dictionary"), None, "{path}");
        assert_eq!(r.header("vary"), Some("Accept-Encoding"), "{path}");
    }
}

#[test]
fn a_running_server_offers_deltas_made_after_it_cached_the_file() {
    let ws = Workspace::new();
    let one = release(&ws, "v1", 1);
    ws.publish("app@1.0.0", "v1", &[]);
    let server = Server::start(&ws, &[]);
    let url = asset_path("app", "1.0.0", "css/site.css");
    let holds = available(&one.style);
    // Cached before any delta of its content exists: brotli, and no
    // dictionary in Vary.
    let before = get(&server, "GET", &url, &[CHROMIUM, &holds]);
    assert_eq!(before.header("content-encoding"), Some("br"));
    assert_eq!(before.header("vary"), Some("Accept-Encoding"));
    // 1.1.0 holds the same stylesheet: its content gains a delta against
    // its own bytes, which the server learns of within its staleness check.
    release(&ws, "v2", 2);
    ws.publish("app@1.1.0", "v2", &[]);
    let served = crate::serve_util::poll_until(std::time::Duration::from_secs(10), || {
        let r = get(&server, "GET", &url, &[CHROMIUM, &holds]);
        matches!(r.header("content-encoding"), Some("dcb" | "dcz"))
    });
    assert!(served.is_some(), "the new delta is never offered");
    let r = get(&server, "GET", &url, &[CHROMIUM, &holds]);
    assert_eq!(
        r.header("vary"),
        Some("Accept-Encoding, Available-Dictionary")
    );
    let coding = r.header("content-encoding").expect("coded").to_string();
    assert_eq!(decode(&ws, &coding, &r.body(), &one.style), one.style);
}
