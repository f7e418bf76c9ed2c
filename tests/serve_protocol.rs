//! HTTP framing and protocols on hyper: requests that would smuggle a
//! second request past a proxy, heads RFC 9112 refuses, bodies that
//! trickle, `Expect: 100-continue`, HTTP/2 in cleartext (prior knowledge)
//! and over TLS with ALPN, the certificate reloaded on SIGHUP, and the
//! ways a restart hands over without refusing a connection: a drain on
//! SIGTERM, `--reuse-port`, and systemd's socket activation.
//!
//! curl is the HTTP/2 and TLS client, as users run it; the certificates
//! come from a certificate authority each test makes (rcgen).

use crate::serve_util::{Server, get, parse_raw, poll_until, sigterm, wait_timeout};
use crate::util::{Rng, Workspace, ccc_path, hermetic};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tokio_rustls::rustls::NamedGroup;
use tokio_rustls::rustls::client::{
    ClientSessionMemoryCache, ClientSessionStore, Tls12ClientSessionValue, Tls13ClientSessionValue,
};
use tokio_rustls::rustls::pki_types::ServerName;

fn site(ws: &Workspace) {
    ws.write("dist/v.txt", "1.0.0");
    ws.write("dist/index.html", "<!doctype html><p>ccc</p>\n".repeat(200));
    ws.publish("site@1.0.0", "dist", &[]);
}

/// Sends `bytes` on a new connection and reads until the server closes it.
fn exchange(addr: SocketAddr, bytes: &[u8]) -> Vec<u8> {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let _ = stream.write_all(bytes);
    let mut all = Vec::new();
    let mut chunk = [0u8; 16384];
    loop {
        match stream.read(&mut chunk) {
            Ok(0) => return all,
            Ok(n) => all.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return all,
            Err(e) => panic!("the connection was not closed: {e}"),
        }
    }
}

fn responses(all: &[u8]) -> usize {
    all.windows(9).filter(|w| w == b"HTTP/1.1 ").count()
}

#[test]
fn requests_that_would_smuggle_a_second_one_are_refused_and_closed() {
    let ws = Workspace::new();
    site(&ws);
    let server = Server::start(&ws, &[]);
    let smuggled = b"GET /SMUGGLED HTTP/1.1\r\nHost: x\r\n\r\n";
    let cases: [(&str, Vec<u8>); 3] = [
        (
            "a Content-Length with a byte that is not ASCII",
            [
                &b"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 35\xff\r\n\r\n"[..],
                smuggled,
            ]
            .concat(),
        ),
        (
            "chunked with a byte that is not ASCII, and a Content-Length",
            [
                &b"GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\xff\r\nContent-Length: 35\r\n\r\n"[..],
                smuggled,
            ]
            .concat(),
        ),
        (
            "two Content-Lengths, one with a byte that is not ASCII",
            [
                &b"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 35\r\nContent-Length: 3\xa05\r\n\r\n"[..],
                smuggled,
            ]
            .concat(),
        ),
    ];
    for (what, bytes) in cases {
        let all = exchange(server.addr, &bytes);
        let answer = parse_raw(&all).unwrap_or_else(|| panic!("{what}: no answer"));
        assert!(matches!(answer.status, 400 | 501), "{what}: {answer:?}");
        assert_eq!(
            responses(&all),
            1,
            "{what}: {}",
            String::from_utf8_lossy(&all)
        );
        assert!(
            !String::from_utf8_lossy(&all).contains("SMUGGLED"),
            "{what}"
        );
    }
    assert_eq!(server.stats()["by_status"]["404"], serde_json::Value::Null);
}

#[test]
fn http_1_1_heads_need_one_host_and_a_text_target() {
    let ws = Workspace::new();
    site(&ws);
    let server = Server::start(&ws, &[]);
    for (what, head, status) in [
        ("no Host", &b"GET /healthz HTTP/1.1\r\n\r\n"[..], 400),
        (
            "two Hosts",
            b"GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
            400,
        ),
        (
            "a target that is not UTF-8",
            b"GET /assets/site/1.0.0/\xff HTTP/1.1\r\nHost: x\r\n\r\n",
            400,
        ),
    ] {
        let all = exchange(server.addr, head);
        let answer = parse_raw(&all).unwrap_or_else(|| panic!("{what}: no answer"));
        assert_eq!(answer.status, status, "{what}: {answer:?}");
        assert_eq!(answer.header("connection"), Some("close"), "{what}");
    }
    // HTTP/1.0 has no Host requirement.
    let all = exchange(server.addr, b"GET /healthz HTTP/1.0\r\n\r\n");
    assert_eq!(parse_raw(&all).map(|r| r.status), Some(200));

    // An absolute-form target's scheme is matched in any case.
    for target in [
        "http://x/assets/site/1.0.0/v.txt",
        "HTTP://x/assets/site/1.0.0/v.txt",
    ] {
        let head = format!("GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        let all = exchange(server.addr, head.as_bytes());
        let answer = parse_raw(&all).unwrap_or_else(|| panic!("{target}: no answer"));
        assert_eq!(
            (answer.status, answer.body()),
            (200, b"1.0.0".to_vec()),
            "{target}"
        );
    }
}

#[test]
fn an_answer_to_a_client_that_asks_to_close_says_it_closes() {
    let ws = Workspace::new();
    site(&ws);
    let server = Server::start(&ws, &[]);
    for (head, closes) in [
        (
            "GET /assets/site/1.0.0/v.txt HTTP/1.1\r\nHost: x\r\nConnection: close",
            true,
        ),
        (
            "GET /assets/site/1.0.0/v.txt HTTP/1.1\r\nHost: x\r\nConnection: TE, Close",
            true,
        ),
        ("GET /assets/site/1.0.0/v.txt HTTP/1.0", true),
        (
            "GET /assets/site/1.0.0/v.txt HTTP/1.0\r\nConnection: keep-alive",
            false,
        ),
        ("GET /assets/site/1.0.0/v.txt HTTP/1.1\r\nHost: x", false),
    ] {
        let mut stream = TcpStream::connect(server.addr).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .expect("timeout");
        stream
            .write_all(format!("{head}\r\n\r\n").as_bytes())
            .expect("send");
        let mut all = Vec::new();
        let mut chunk = [0u8; 4096];
        // Up to the end of the answer's body (5 bytes), or the close.
        while !all.ends_with(b"1.0.0") {
            match stream.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => all.extend_from_slice(&chunk[..n]),
            }
        }
        let answer = parse_raw(&all).unwrap_or_else(|| panic!("{head:?}: no answer"));
        assert_eq!(answer.status, 200, "{head:?}");
        let said = answer.header("connection").map(str::to_ascii_lowercase);
        assert_eq!(
            said.as_deref() == Some("close"),
            closes,
            "{head:?}: {said:?}"
        );
        if closes {
            assert!(
                matches!(stream.read(&mut chunk), Ok(0) | Err(_)),
                "{head:?}: the connection stays open"
            );
        }
    }
}

#[test]
fn expect_100_continue_is_answered_without_waiting_for_the_body() {
    let ws = Workspace::new();
    site(&ws);
    let server = Server::start(&ws, &[]);
    let mut stream = TcpStream::connect(server.addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    stream
        .write_all(
            b"GET /assets/site/1.0.0/v.txt HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 100000\r\n\r\n",
        )
        .expect("head");
    let started = Instant::now();
    let mut all = Vec::new();
    let mut chunk = [0u8; 4096];
    while parse_raw(&all).is_none_or(|r| r.body().len() < 5) {
        let n = stream.read(&mut chunk).expect("an answer before any body");
        assert!(n > 0, "closed without an answer");
        all.extend_from_slice(&chunk[..n]);
    }
    let answer = parse_raw(&all).expect("an answer");
    // The final answer, at once: the body it would have sent is not needed
    // (hyper sends 100 Continue only to a handler that reads the body).
    assert_eq!((answer.status, answer.body()), (200, b"1.0.0".to_vec()));
    assert!(started.elapsed() < Duration::from_secs(3));
    assert!(!String::from_utf8_lossy(&all).contains("100 Continue"));
}

#[test]
fn a_trickled_body_is_answered_and_cut_off_within_the_header_timeout() {
    let ws = Workspace::new();
    site(&ws);
    let server = Server::start(
        &ws,
        &["--header-timeout", "2s", "--keepalive-timeout", "30s"],
    );
    let mut stream = TcpStream::connect(server.addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_millis(200)))
        .expect("timeout");
    stream
        .write_all(
            b"GET /assets/site/1.0.0/v.txt HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n",
        )
        .expect("head");
    // A byte every 250 ms, for up to 20 s: the server must close first.
    let started = Instant::now();
    let mut closed = false;
    let mut got = Vec::new();
    while started.elapsed() < Duration::from_secs(20) {
        if stream.write_all(b"x").is_err() {
            closed = true;
            break;
        }
        let mut chunk = [0u8; 4096];
        match stream.read(&mut chunk) {
            Ok(0) => {
                closed = true;
                break;
            }
            Ok(n) => got.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(_) => {
                closed = true;
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let took = started.elapsed();
    assert!(closed, "still open after {took:?} of a trickled body");
    assert!(took < Duration::from_secs(8), "closed after {took:?}");
    // It was answered first: bodies are never waited for.
    assert_eq!(parse_raw(&got).map(|r| r.status), Some(200));
}

/// curl's output for `url` with `args`: (status, body).
fn curl(args: &[&str], url: &str) -> (String, Vec<u8>) {
    let out = Command::new("curl")
        .args(["--silent", "--show-error", "--max-time", "20"])
        .args(["--write-out", "\n%{http_code} %{http_version}"])
        .args(args)
        .arg(url)
        .output()
        .expect("curl runs (Debian's curl package)");
    assert!(
        out.status.success(),
        "curl {args:?} {url}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let at = out
        .stdout
        .iter()
        .rposition(|b| *b == b'\n')
        .expect("a status line");
    let status = String::from_utf8_lossy(&out.stdout[at + 1..]).to_string();
    (status, out.stdout[..at].to_vec())
}

#[test]
fn http2_with_prior_knowledge_serves_the_same_bytes() {
    // The bundled example site, every file, as files on disk: curl over
    // HTTP/2 with prior knowledge gets the bytes of the file, as HTTP/1.1
    // does, and the same gzip bytes when it asks for them.
    let ws = Workspace::new();
    let site_dir = crate::util::repo_root().join("examples/site");
    ws.ok(&["publish", "site@1.0.0", site_dir.to_str().expect("UTF-8")]);
    let server = Server::start(&ws, &[]);
    let paths = ws.paths("site@1.0.0");
    assert!(paths.len() >= 10, "{paths:?}");
    for path in &paths {
        let url = server.url(&crate::serve_util::asset_path("site", "1.0.0", path));
        let (h1, one) = curl(&["--http1.1"], &url);
        let (h2, two) = curl(&["--http2-prior-knowledge"], &url);
        assert_eq!((h1.as_str(), h2.as_str()), ("200 1.1", "200 2"), "{path}");
        let on_disk = std::fs::read(site_dir.join(path)).expect("the file");
        assert!(
            two == on_disk,
            "{path}: HTTP/2 sent other bytes than the file's"
        );
        assert!(
            one == on_disk,
            "{path}: HTTP/1.1 sent other bytes than the file's"
        );
        let gzip = ["-H", "Accept-Encoding: gzip"];
        let (_, gz2) = curl(&[&["--http2-prior-knowledge"][..], &gzip].concat(), &url);
        let (_, gz1) = curl(&[&["--http1.1"][..], &gzip].concat(), &url);
        assert!(gz1 == gz2, "{path}: other gzip bytes over HTTP/2");
    }
    let listing = server.url("/assets/site/1.0.0/");
    let (h2, list) = curl(&["--http2-prior-knowledge"], &listing);
    assert_eq!(h2, "200 2");
    let (_, list1) = curl(&["--http1.1"], &listing);
    assert_eq!(list, list1, "the listing");
}

/// A certificate authority and a certificate for 127.0.0.1 and localhost
/// signed by it, as PEM files in `dir`: (ca.pem, cert.pem, key.pem).
pub(crate) fn certificates(dir: &Path, name: &str) -> (PathBuf, PathBuf, PathBuf) {
    certificates_for(dir, name, &["localhost", "127.0.0.1"])
}

/// [`certificates`] for the names `hosts` (DNS names or IP addresses).
pub(crate) fn certificates_for(
    dir: &Path,
    name: &str,
    hosts: &[&str],
) -> (PathBuf, PathBuf, PathBuf) {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
    let ca_key = KeyPair::generate().expect("a CA key");
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, format!("ccc test CA {name}"));
    let ca = ca_params.self_signed(&ca_key).expect("the CA");
    let key = KeyPair::generate().expect("a key");
    let hosts = hosts.iter().map(|h| h.to_string()).collect::<Vec<_>>();
    let mut params = CertificateParams::new(hosts).expect("params");
    params.distinguished_name.push(DnType::CommonName, name);
    let issuer = Issuer::from_params(&ca_params, &ca_key);
    let cert = params.signed_by(&key, &issuer).expect("the certificate");
    let paths = (
        dir.join(format!("{name}-ca.pem")),
        dir.join(format!("{name}-cert.pem")),
        dir.join(format!("{name}-key.pem")),
    );
    std::fs::write(&paths.0, ca.pem()).expect("write");
    std::fs::write(&paths.1, cert.pem()).expect("write");
    std::fs::write(&paths.2, key.serialize_pem()).expect("write");
    paths
}

#[test]
fn tls_speaks_http2_and_http1_by_alpn_and_reloads_on_sighup() {
    let ws = Workspace::new();
    site(&ws);
    let (ca, cert, key) = certificates(ws.path(), "first");
    let served_cert = ws.path().join("served-cert.pem");
    let served_key = ws.path().join("served-key.pem");
    std::fs::copy(&cert, &served_cert).expect("copy");
    std::fs::copy(&key, &served_key).expect("copy");
    let server = Server::start(
        &ws,
        &[
            "--tls-cert",
            served_cert.to_str().expect("UTF-8"),
            "--tls-key",
            served_key.to_str().expect("UTF-8"),
        ],
    );
    assert!(server.base.starts_with("https://"), "{}", server.base);
    let url = server.url("/assets/site/1.0.0/index.html");
    let ca_arg = ca.to_str().expect("UTF-8");
    let (h2, two) = curl(&["--cacert", ca_arg, "--http2"], &url);
    let (h1, one) = curl(&["--cacert", ca_arg, "--http1.1"], &url);
    assert_eq!((h2.as_str(), h1.as_str()), ("200 2", "200 1.1"));
    assert_eq!(one, two);
    assert_eq!(one, "<!doctype html><p>ccc</p>\n".repeat(200).into_bytes());

    // A plain-text request to the TLS port is not answered as HTTP.
    let plain = Command::new("curl")
        .args([
            "--silent",
            "--max-time",
            "5",
            &url.replacen("https", "http", 1),
        ])
        .output()
        .expect("curl");
    assert!(!plain.status.success());

    // A new pair from another authority, then SIGHUP: new handshakes use it.
    let (ca2, cert2, key2) = certificates(ws.path(), "second");
    std::fs::copy(&cert2, &served_cert).expect("copy");
    std::fs::copy(&key2, &served_key).expect("copy");
    let status = Command::new("kill")
        .args(["-HUP", &server.pid().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    let reloaded = poll_until(Duration::from_secs(10), || {
        server.stderr().contains("TLS certificate reloaded")
    });
    assert!(reloaded.is_some(), "{}", server.stderr());
    let (h2, _) = curl(&["--cacert", ca2.to_str().expect("UTF-8"), "--http2"], &url);
    assert_eq!(h2, "200 2");
    let old = Command::new("curl")
        .args(["--silent", "--max-time", "5", "--cacert", ca_arg, &url])
        .output()
        .expect("curl");
    assert!(
        !old.status.success(),
        "the old authority no longer verifies"
    );

    // A broken pair on SIGHUP keeps the one in force.
    std::fs::write(&served_key, "not a key").expect("write");
    let _ = Command::new("kill")
        .args(["-HUP", &server.pid().to_string()])
        .status();
    let kept = poll_until(Duration::from_secs(10), || {
        server.stderr().contains("the certificate in force is kept")
    });
    assert!(kept.is_some(), "{}", server.stderr());
    let (h2, _) = curl(&["--cacert", ca2.to_str().expect("UTF-8"), "--http2"], &url);
    assert_eq!(h2, "200 2");
}

#[test]
fn a_key_that_does_not_match_is_refused_before_listening() {
    let ws = Workspace::new();
    site(&ws);
    let (_, cert, _) = certificates(ws.path(), "one");
    let (_, _, other_key) = certificates(ws.path(), "two");
    let out = ws
        .ccc()
        .args(["serve", "--port", "0", "--tls-cert"])
        .arg(&cert)
        .arg("--tls-key")
        .arg(&other_key)
        .output()
        .expect("ccc runs");
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("does not belong to the certificate"),
        "{stderr}"
    );
    let out = ws
        .ccc()
        .args(["serve", "--port", "0", "--tls-cert"])
        .arg(&cert)
        .output()
        .expect("ccc runs");
    assert_eq!(out.status.code(), Some(2), "--tls-cert needs --tls-key");
}

/// A 1024-bit RSA key made for this test with `openssl genrsa 1024`: too
/// small for the TLS library.
const SMALL_RSA_KEY: &str = "-----BEGIN PRIVATE KEY-----\nMIICeAIBADANBgkqhkiG9w0BAQEFAASCAmIwggJeAgEAAoGBALYAE+ZeZn7IbSn4\nFjPtvEGGHY4WRgP8G7fPeJ5OAB6Bv8hzz17P+8ulHbZZr3ZWmX6la4HHTVQ1se6x\nVbhxv2yVQDQAuPr+Mz4j3oSTlTjksBxDhxuTc1GO/ZHsAIfF2rDaboMhq3nfOs9k\n2BsOSER/C4WuwhhMzzser6w3T42hAgMBAAECgYAdecm/R46l/ePgJjPCWUBiBEyJ\nFIZmYtBCZrGMQem3ByB+YHM3Ucvf4W/8dm36ZnAZmMTekd6uQrv8gm/1nUZ5E0Ho\ncKGqbFCoGW/ct0RDlr8VlRpkLWSxjsmVp71HfPljmyZXEyu+EJOQRWbFDt/7ihrV\nI99NofLxX3ycRvGUIQJBAO0AH4IaZth08w0KXlBiclXDIFt95Wc4AF/sucrPd3kZ\nzDBshMXsODRA38oGQHs5neKndX4KRbzqeC5KIjw499UCQQDElzSbtFtfHueF+Gu/\nGTyrUl9qz3CL0Zq2GupU7b3nJIoPTytUAl/PHZycoLAiJ6DR+XmfOJUHOJFKppHa\nuVCdAkEAqHJR8rK5LlfQ+A/KgO+3u+T39o9AoWBYQ9WJJ/DVRalkS3aV1+bQ+7Kw\nXHKdGfgVk6baBz9d2av8x0nBk3QaEQJBAJzs/ieUTqOdbb65UHjY0l8Hf/co43QY\nuuDGl2t343EQ78vMrI+A3a3cu1kjw7Vf4LX76KO6bOu4sfHfCOqJptkCQQC3AiLt\nbyIIMsYvReLAKQzagvx6mjgjLM0LYlFf2v8lJR8wEaUtambBCSbFqBG0k07G3z8z\ntUfJHmEyNXB2SmbI\n-----END PRIVATE KEY-----";

#[test]
fn bad_key_files_are_named_for_what_is_wrong() {
    let ws = Workspace::new();
    site(&ws);
    let (_, cert, key) = certificates(ws.path(), "one");
    let good = std::fs::read_to_string(&key).expect("the key");
    let cases = [
        (
            "encrypted.pem",
            "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIFHDBOBgkqhkiG9w0BBQ0wQTApBgkqhkiG9w0BBQwwHAQI\n-----END ENCRYPTED PRIVATE KEY-----\n".to_string(),
            "is encrypted (a passphrase protects it)",
        ),
        (
            "cut.pem",
            good[..good.len() / 2].to_string(),
            "is cut short",
        ),
        (
            "small.pem",
            SMALL_RSA_KEY.to_string(),
            "RSA key shorter than 2048 bits",
        ),
        (
            "cert.pem",
            std::fs::read_to_string(&cert).expect("the certificate"),
            "holds a certificate, not a private key",
        ),
    ];
    for (name, text, says) in cases {
        let path = ws.path().join(name);
        std::fs::write(&path, text).expect("write");
        let out = ws
            .ccc()
            .args(["serve", "--port", "0", "--tls-cert"])
            .arg(&cert)
            .arg("--tls-key")
            .arg(&path)
            .output()
            .expect("ccc runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{name}: {stderr}");
        assert!(stderr.contains(says), "{name}: {stderr}");
        assert!(stderr.contains(name), "the file is named: {stderr}");
    }
}

/// A client that downloads `path` slowly (16 KiB reads with pauses) over
/// one connection, saying on `started` once the response's head arrived;
/// returns the bytes of the body it received.
fn slow_download(
    addr: SocketAddr,
    path: &str,
    started: std::sync::mpsc::Sender<()>,
) -> std::thread::JoinHandle<(u16, usize, usize)> {
    let path = path.to_string();
    std::thread::spawn(move || {
        let mut stream = TcpStream::connect(addr).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .expect("timeout");
        stream
            .write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes())
            .expect("request");
        let mut all = Vec::new();
        let mut told = false;
        let mut chunk = [0u8; 16384];
        loop {
            match stream.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => all.extend_from_slice(&chunk[..n]),
            }
            if let Some(r) = parse_raw(&all) {
                if !told {
                    let _ = started.send(());
                    told = true;
                }
                let want: usize = r
                    .header("content-length")
                    .and_then(|l| l.parse().ok())
                    .unwrap_or(0);
                if r.after_headers.len() >= want {
                    return (r.status, r.after_headers.len(), want);
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let r = parse_raw(&all);
        (
            r.as_ref().map_or(0, |r| r.status),
            r.as_ref().map_or(0, |r| r.after_headers.len()),
            r.and_then(|r| r.header("content-length").and_then(|l| l.parse().ok()))
                .unwrap_or(0),
        )
    })
}

/// Voluntary context switches of every thread of `pid` so far.
fn context_switches(pid: u32) -> u64 {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).expect("the server's threads");
    tasks
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("status")).ok())
        .flat_map(|status| {
            status
                .lines()
                .filter_map(|line| line.strip_prefix("voluntary_ctxt_switches:"))
                .filter_map(|n| n.trim().parse::<u64>().ok())
                .collect::<Vec<_>>()
        })
        .sum()
}

#[test]
fn an_idle_server_sleeps_until_a_signal_and_stops_at_once() {
    let ws = Workspace::new();
    ws.write("dist/a.js", b"export const a = 1;\n");
    ws.publish("site@1.0.0", "dist", &[]);
    let mut server = Server::start(&ws, &[]);
    // With no client, the server wakes only for its timers: giving memory
    // back (5 a second) and the catalog's staleness check (4 a second),
    // about 26 switches a second in all. A stop flag polled every 20 ms
    // made it about 140.
    std::thread::sleep(Duration::from_millis(500));
    let before = context_switches(server.pid());
    std::thread::sleep(Duration::from_secs(2));
    let woken = context_switches(server.pid()) - before;
    assert!(
        woken < 120,
        "{woken} context switches in 2 s with no client"
    );
    let signalled = Instant::now();
    sigterm(server.pid());
    let exit = server.wait_exit(Duration::from_secs(10)).expect("exits");
    assert_eq!(exit.code(), Some(0), "{}", server.stderr());
    assert!(
        signalled.elapsed() < Duration::from_secs(2),
        "took {:?} to stop",
        signalled.elapsed()
    );
}

#[test]
fn sigterm_lets_downloads_in_flight_finish_then_exits_0() {
    let ws = Workspace::new();
    let big: Vec<u8> = (0..8u32 << 20)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    ws.write("dist/big.bin", &big);
    ws.publish("site@1.0.0", "dist", &["--level", "1"]);
    // Far longer than the downloads take, even with the whole test suite
    // loading both cores: this test is about finishing them, not the limit.
    let mut server = Server::start(&ws, &["--shutdown-timeout", "5m"]);
    let (started, heads) = std::sync::mpsc::channel();
    let downloads: Vec<_> = (0..3)
        .map(|_| slow_download(server.addr, "/assets/site/1.0.0/big.bin", started.clone()))
        .collect();
    // Every download under way (its head received), however loaded the
    // machine: a connection whose request was not read yet is not in flight.
    for _ in 0..3 {
        heads
            .recv_timeout(Duration::from_secs(60))
            .expect("a download started");
    }
    sigterm(server.pid());
    // The port closes at once: no new connection is taken.
    let refused = poll_until(Duration::from_secs(5), || {
        TcpStream::connect(server.addr).is_err()
    });
    assert!(refused.is_some(), "still accepting after SIGTERM");
    for d in downloads {
        let (status, got, want) = d.join().expect("download");
        assert_eq!(
            (status, got),
            (200, want),
            "a download cut short; server said: {}",
            server.stderr()
        );
        assert_eq!(want, big.len());
    }
    let exit = server.wait_exit(Duration::from_secs(40)).expect("exits");
    assert_eq!(exit.code(), Some(0), "{}", server.stderr());
}

#[test]
fn reuse_port_lets_a_second_server_take_over_the_port() {
    let ws = Workspace::new();
    site(&ws);
    let mut first = Server::start(&ws, &["--reuse-port"]);
    let port = first.addr.port().to_string();
    let mut cmd = ws.ccc_std();
    cmd.args(["serve", "--db"])
        .arg(ws.db())
        .args(["--port", &port, "--reuse-port"]);
    let second = Server::start_with(&mut cmd);
    assert_eq!(second.addr, first.addr);
    sigterm(first.pid());
    assert_eq!(
        first
            .wait_exit(Duration::from_secs(20))
            .and_then(|s| s.code()),
        Some(0)
    );
    // The port never closed: the second server answers.
    let r = get(
        &format!("http://{}/assets/site/1.0.0/v.txt", second.addr),
        &[],
    );
    assert_eq!((r.status, r.text().as_str()), (200, "1.0.0"));
    // Without the flag, a port in use is an error that names it.
    let out = ws
        .ccc()
        .args(["serve", "--port", &port])
        .output()
        .expect("ccc runs");
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn socket_activation_serves_the_socket_systemd_passes() {
    let ws = Workspace::new();
    site(&ws);
    let Ok(probe) = std::net::TcpListener::bind("127.0.0.1:0") else {
        panic!("no free port");
    };
    let addr = probe.local_addr().expect("addr");
    drop(probe);
    let mut cmd = Command::new("systemd-socket-activate");
    hermetic(&mut cmd);
    cmd.current_dir(ws.path())
        .args(["--listen", &addr.to_string()])
        .arg(ccc_path())
        .args(["serve", "--db"])
        .arg(ws.db())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut activator = cmd
        .spawn()
        .expect("systemd-socket-activate runs (Debian's systemd package)");
    // The socket is listening before ccc starts: the first connection
    // starts it, and waits in the backlog instead of being refused.
    let ready = poll_until(Duration::from_secs(10), || TcpStream::connect(addr).is_ok());
    assert!(
        ready.is_some(),
        "systemd-socket-activate did not listen on {addr}"
    );
    let r = get(&format!("http://{addr}/assets/site/1.0.0/v.txt"), &[]);
    assert_eq!((r.status, r.text().as_str()), (200, "1.0.0"));
    // Stopped as systemd stops it, so that it writes out what it printed
    // (a kill could beat its log writer on a loaded machine).
    sigterm(activator.id());
    if wait_timeout(&mut activator, Duration::from_secs(20)).is_none() {
        let _ = activator.kill();
        let _ = activator.wait();
    }
    let mut out = String::new();
    if let Some(mut pipe) = activator.stdout.take() {
        let _ = pipe.read_to_string(&mut out);
    }
    assert!(
        out.contains(&format!("listening on http://{addr}")),
        "{out}"
    );
}

#[test]
fn a_connection_idle_past_parking_serves_its_next_requests() {
    let ws = Workspace::new();
    site(&ws);
    let server = Server::start(&ws, &[]);
    let mut stream = TcpStream::connect(server.addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let request = b"GET /assets/site/1.0.0/v.txt HTTP/1.1\r\nHost: x\r\n\r\n";
    // Idle for longer than a connection keeps hyper's buffers (2 s): the
    // same connection still answers, pipelined requests included.
    for (pause, pipelined) in [(0, 1), (3, 1), (3, 3)] {
        std::thread::sleep(Duration::from_secs(pause));
        stream
            .write_all(&request.repeat(pipelined))
            .expect("request");
        let mut all = Vec::new();
        let mut chunk = [0u8; 4096];
        while all.windows(5).filter(|w| w == b"1.0.0").count() < pipelined {
            let n = stream
                .read(&mut chunk)
                .expect("answers on the same connection");
            assert!(n > 0, "closed after {pause}s idle");
            all.extend_from_slice(&chunk[..n]);
        }
        assert_eq!(
            responses(&all),
            pipelined,
            "{}",
            String::from_utf8_lossy(&all)
        );
    }
    assert_eq!(server.stats()["connections"]["accepted"].as_u64(), Some(2));
}

/// The base64 sha256 of the public key in the PEM key file `key`, as
/// Chromium's `--ignore-certificate-errors-spki-list` takes it.
pub fn spki_hash(key: &Path) -> String {
    use base64::Engine;
    use rcgen::PublicKeyData;
    use sha2::Digest;
    let pem = std::fs::read_to_string(key).expect("read the key");
    let pair = rcgen::KeyPair::from_pem(&pem).expect("a key");
    let digest = sha2::Sha256::digest(pair.subject_public_key_info());
    base64::engine::general_purpose::STANDARD.encode(digest)
}

#[test]
#[ignore = "needs Chromium and lodash-es's npm tarball (CCC_TEST_LODASH_ES); .ci/run provides both"]
fn chromium_loads_lodash_es_as_modules_over_https_and_http2() {
    let tarball = std::env::var("CCC_TEST_LODASH_ES")
        .expect("CCC_TEST_LODASH_ES: the path of `npm pack lodash-es@4.17.21`");
    let ws = Workspace::new();
    ws.ok(&["publish", "lodash-es@4.17.21", &tarball]);
    ws.write(
        "page/index.html",
        "<!doctype html><meta charset=utf-8><title>lodash-es</title><link rel=icon href=\"data:,\">\n\
         <script>performance.setResourceTimingBufferSize(2000)</script>\n\
         <script type=module>\n\
         import * as _ from '/assets/lodash-es/4.17.21/lodash.js';\n\
         window.loaded = Object.keys(_).length;\n\
         document.body.textContent = _.kebabCase('Loaded From CCC');\n\
         </script>\n",
    );
    ws.publish("page@1.0.0", "page", &[]);
    let (ca, cert, key) = certificates(ws.path(), "chromium");
    let server = Server::start(
        &ws,
        &[
            "--tls-cert",
            cert.to_str().expect("UTF-8"),
            "--tls-key",
            key.to_str().expect("UTF-8"),
        ],
    );
    let mut browser = crate::chromium::Browser::launch_with(&[format!(
        "--ignore-certificate-errors-spki-list={}",
        spki_hash(&key)
    )]);
    let reports = browser.goto(&server.url("/assets/page/1.0.0/index.html"));
    let problems: Vec<_> = reports
        .iter()
        .filter(|r| matches!(r.level.as_str(), "error" | "exception" | "warning"))
        .collect();
    assert!(problems.is_empty(), "{problems:?}");
    let mut loaded = serde_json::Value::Null;
    let done = poll_until(Duration::from_secs(30), || {
        loaded = browser.eval("window.loaded || 0");
        loaded.as_u64().is_some_and(|n| n > 0)
    });
    assert!(done.is_some(), "the module graph did not load: {loaded}");
    assert!(loaded.as_u64() > Some(250), "{loaded} exports");
    assert_eq!(browser.eval("document.body.textContent"), "loaded-from-ccc");
    let modules = browser.eval(
        "performance.getEntriesByType('resource').filter(e => e.name.includes('/lodash-es/')).length",
    );
    assert!(modules.as_u64() >= Some(600), "{modules} module requests");
    let protocols = browser.eval(
        "[...new Set(performance.getEntriesByType('resource').map(e => e.nextHopProtocol))].join()",
    );
    assert_eq!(protocols, "h2", "every module over HTTP/2");
    let ca = ca.to_str().expect("UTF-8");
    let (status, stats) = curl(&["--cacert", ca], &server.url("/_stats"));
    assert_eq!(status, "200 2");
    let stats: serde_json::Value = serde_json::from_slice(&stats).expect("JSON");
    assert!(stats["by_status"]["200"].as_u64() >= Some(250), "{stats}");
}

/// At the cap, TLS connections stuck in the middle of a handshake (the
/// start of a ClientHello, then nothing) are reclaimed, oldest first, as
/// silent or half-headed ones are: every newcomer gets its answer.
#[test]
fn at_the_cap_half_done_tls_handshakes_make_room() {
    let ws = Workspace::new();
    site(&ws);
    let (ca, cert, key) = certificates(ws.path(), "cap");
    let server = Server::start(
        &ws,
        &[
            "--tls-cert",
            cert.to_str().expect("UTF-8"),
            "--tls-key",
            key.to_str().expect("UTF-8"),
            "--max-connections",
            "30",
        ],
    );
    // 40 handshakes begun: a handshake record of 512 bytes of which 4 came.
    let half_hello = [0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc];
    let held: Vec<TcpStream> = (0..40)
        .map(|_| {
            let mut s = TcpStream::connect(server.addr).expect("connect");
            s.write_all(&half_hello).expect("half a ClientHello");
            s
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let url = server.url("/assets/site/1.0.0/v.txt");
    let ca_arg = ca.to_str().expect("UTF-8");
    for newcomer in 0..31 {
        let (status, body) = curl(&["--cacert", ca_arg], &url);
        assert_eq!(
            (status.as_str(), &body[..]),
            ("200 2", &b"1.0.0"[..]),
            "newcomer {newcomer}"
        );
    }
    let (_, stats) = curl(&["--cacert", ca_arg], &server.url("/_stats"));
    let stats: serde_json::Value = serde_json::from_slice(&stats).expect("JSON");
    assert!(
        stats["connections"]["reclaimed"].as_u64() >= Some(10),
        "{stats}"
    );
    assert_eq!(stats["connections"]["refused"].as_u64(), Some(0), "{stats}");
    drop(held);
}

/// A rustls client that trusts `ca` alone.
pub(crate) fn tls_client(ca: &Path) -> std::sync::Arc<tokio_rustls::rustls::ClientConfig> {
    use pki_types::pem::PemObject;
    use tokio_rustls::rustls::{self, pki_types};
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(pki_types::CertificateDer::from_pem_file(ca).expect("the CA"))
        .expect("a root");
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    std::sync::Arc::new(config)
}

/// `GET path` with `Connection: close` over a new TLS connection made
/// with `config`: what reading to the end gave, with the answer read so
/// far, and whether the handshake was a full one or resumed a session.
fn tls_get(
    addr: SocketAddr,
    config: &std::sync::Arc<tokio_rustls::rustls::ClientConfig>,
    path: &str,
) -> (
    std::io::Result<usize>,
    String,
    Option<tokio_rustls::rustls::HandshakeKind>,
) {
    use tokio_rustls::rustls::{self, pki_types};
    let name = pki_types::ServerName::try_from("localhost").expect("a name");
    let tls = rustls::ClientConnection::new(config.clone(), name).expect("TLS");
    let tcp = TcpStream::connect(addr).expect("connect");
    tcp.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let mut stream = rustls::StreamOwned::new(tls, tcp);
    let request = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).expect("the request");
    let mut answer = Vec::new();
    let read = stream.read_to_end(&mut answer);
    let kind = stream.conn.handshake_kind();
    (read, String::from_utf8_lossy(&answer).into_owned(), kind)
}

fn tls_server(ws: &Workspace, name: &str) -> (Server, PathBuf) {
    tls_server_with(ws, name, &[])
}

/// `ccc serve` over TLS with a certificate made for it, and `extra`
/// flags: the server and the CA that signed its certificate.
pub(crate) fn tls_server_with(ws: &Workspace, name: &str, extra: &[&str]) -> (Server, PathBuf) {
    let (ca, cert, key) = certificates(ws.path(), name);
    let mut flags = vec![
        "--tls-cert",
        cert.to_str().expect("UTF-8"),
        "--tls-key",
        key.to_str().expect("UTF-8"),
    ];
    flags.extend_from_slice(extra);
    let server = Server::start(ws, &flags);
    (server, ca)
}

/// A TLS connection to `addr` (trusting `ca`) whose socket has a receive
/// buffer of `receive` bytes, so that a client that reads slowly holds
/// the server back sooner.
fn tls_connect_with_receive_buffer(
    addr: SocketAddr,
    ca: &Path,
    receive: usize,
) -> tokio_rustls::rustls::StreamOwned<tokio_rustls::rustls::ClientConnection, TcpStream> {
    use tokio_rustls::rustls::{self, pki_types};
    let name = pki_types::ServerName::try_from("localhost").expect("a name");
    let tls = rustls::ClientConnection::new(tls_client(ca), name).expect("TLS");
    let tcp =
        socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).expect("a socket");
    tcp.set_recv_buffer_size(receive)
        .expect("a small receive buffer");
    tcp.connect(&addr.into()).expect("connect");
    let tcp = TcpStream::from(tcp);
    tcp.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    rustls::StreamOwned::new(tls, tcp)
}

/// Reads `tcp` to its end, which must come (the server closing or
/// resetting it) within 2 s of `since`; `what` names what was sent.
fn assert_ends_soon(tcp: &mut TcpStream, since: Instant, what: &str) {
    let mut rest = Vec::new();
    let end = tcp.read_to_end(&mut rest);
    assert!(
        end.is_ok()
            || end
                .as_ref()
                .is_err_and(|e| e.kind() == std::io::ErrorKind::ConnectionReset),
        "the connection was still open after {what}: {end:?}"
    );
    assert!(
        since.elapsed() < Duration::from_secs(2),
        "the connection ended {:?} after {what}",
        since.elapsed()
    );
}

/// An HTTP/1.1 connection over TLS that ends after its answer (the
/// client's `Connection: close`) ends with TLS's close_notify (RFC 8446
/// 6.1), as nginx ends it: a client that finds the socket closed without
/// one cannot tell the end from a cut (rustls reports UnexpectedEof).
#[test]
fn a_tls_connection_that_ends_sends_close_notify() {
    let ws = Workspace::new();
    site(&ws);
    let (server, ca) = tls_server(&ws, "close");
    let (read, answer, _) = tls_get(server.addr, &tls_client(&ca), "/assets/site/1.0.0/v.txt");
    assert!(read.is_ok(), "{read:?} after {answer:?}");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.ends_with("1.0.0"), "{answer}");
}

/// Sends what `tls` has to send, one byte per write (the socket has
/// `TCP_NODELAY`, so records arrive in pieces as small as a byte).
fn send_bytewise(tls: &mut tokio_rustls::rustls::ClientConnection, tcp: &mut TcpStream) {
    let mut out = Vec::new();
    while tls.wants_write() {
        tls.write_tls(&mut out).expect("TLS bytes");
    }
    for (n, byte) in out.iter().enumerate() {
        tcp.write_all(&[*byte]).expect("a byte");
        if n % 64 == 63 {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

/// A client whose TLS records (handshake and requests) reach the server a
/// byte at a time, with two requests in one record, gets both answers;
/// the handshake, the record boundaries and the pipelined request do not
/// depend on how the bytes were cut.
#[test]
fn tls_records_a_byte_at_a_time_with_two_requests_in_one_are_answered() {
    use tokio_rustls::rustls::{self, pki_types};
    let ws = Workspace::new();
    site(&ws);
    let (server, ca) = tls_server(&ws, "bytewise");
    let name = pki_types::ServerName::try_from("localhost").expect("a name");
    let mut tls = rustls::ClientConnection::new(tls_client(&ca), name).expect("TLS");
    let mut tcp = TcpStream::connect(server.addr).expect("connect");
    tcp.set_nodelay(true).expect("nodelay");
    tcp.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    loop {
        send_bytewise(&mut tls, &mut tcp);
        if !tls.is_handshaking() {
            break;
        }
        let read = tls.read_tls(&mut tcp).expect("the server's handshake");
        assert!(read > 0, "the server closed during the handshake");
        tls.process_new_packets().expect("a valid handshake");
    }
    let path = "/assets/site/1.0.0/v.txt";
    let requests = format!(
        "GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n\
         GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    );
    tls.writer()
        .write_all(requests.as_bytes())
        .expect("the requests");
    send_bytewise(&mut tls, &mut tcp);
    let mut stream = rustls::StreamOwned::new(tls, tcp);
    let mut answer = Vec::new();
    let read = stream.read_to_end(&mut answer);
    let answer = String::from_utf8_lossy(&answer);
    assert!(read.is_ok(), "{read:?} after {answer:?}");
    assert_eq!(answer.matches("HTTP/1.1 200 OK").count(), 2, "{answer}");
    assert_eq!(answer.matches("\r\n\r\n1.0.0").count(), 2, "{answer}");
}

/// After a good request, a record that does not decrypt (bytes of noise
/// under a record header), or a header that claims more than a record
/// may hold, ends the connection at once; the server goes on serving.
#[test]
fn a_tls_record_that_does_not_decrypt_ends_the_connection() {
    use tokio_rustls::rustls::{self, pki_types};
    let ws = Workspace::new();
    site(&ws);
    let (server, ca) = tls_server(&ws, "noise");
    let config = tls_client(&ca);
    let mut noise = vec![0x17, 0x03, 0x03, 0x00, 0x40];
    noise.extend(Rng::new(7).bytes(64));
    let too_long = vec![0x17, 0x03, 0x03, 0xff, 0xff, 0, 0, 0, 0];
    for bad in [noise, too_long] {
        let name = pki_types::ServerName::try_from("localhost").expect("a name");
        let tls = rustls::ClientConnection::new(config.clone(), name).expect("TLS");
        let tcp = TcpStream::connect(server.addr).expect("connect");
        tcp.set_read_timeout(Some(Duration::from_secs(10)))
            .expect("timeout");
        let mut stream = rustls::StreamOwned::new(tls, tcp);
        let request = "GET /assets/site/1.0.0/v.txt HTTP/1.1\r\nHost: localhost\r\n\r\n";
        stream.write_all(request.as_bytes()).expect("the request");
        let mut answer = [0u8; 4096];
        let n = stream.read(&mut answer).expect("the answer");
        assert!(
            answer[..n].starts_with(b"HTTP/1.1 200"),
            "{:?}",
            &answer[..n]
        );
        let started = Instant::now();
        stream.sock.write_all(&bad).expect("the bad record");
        assert_ends_soon(
            &mut stream.sock,
            started,
            &format!("the record {:02x?}", &bad[..5]),
        );
    }
    let (read, answer, _) = tls_get(server.addr, &config, "/assets/site/1.0.0/v.txt");
    assert!(
        read.is_ok() && answer.ends_with("1.0.0"),
        "{read:?}: {answer}"
    );
}

/// A ClientHello sent in one-byte records, declaring 64 KiB and never
/// finished, is refused once 128 KiB of records are held: the server does
/// not keep taking records for a handshake message without bound.
#[test]
fn a_client_hello_in_endless_one_byte_records_is_refused() {
    let ws = Workspace::new();
    site(&ws);
    let (server, _ca) = tls_server(&ws, "crumbs");
    let mut tcp = TcpStream::connect(server.addr).expect("connect");
    tcp.set_read_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    let record = |byte: u8| [0x16, 0x03, 0x01, 0x00, 0x01, byte];
    // A handshake header: ClientHello, 65,535 bytes long.
    let mut crumbs: Vec<u8> = [0x01, 0x00, 0xff, 0xff]
        .into_iter()
        .flat_map(record)
        .collect();
    crumbs.extend((0..40_000).flat_map(|_| record(0)));
    let sent = crumbs
        .chunks(6 * 1000)
        .take_while(|chunk| tcp.write_all(chunk).is_ok())
        .count();
    let what = format!("{sent} writes of 6,000 bytes");
    assert_ends_soon(&mut tcp, Instant::now(), &what);
}

/// A TLS client that reads a big file slowly but steadily costs the
/// server a bounded amount of memory, not the file: the file is sent in
/// pieces (budgets of 1 MiB), and the records encrypted ahead of the
/// socket stay within their bound however long the client takes.
#[test]
fn a_slow_steady_tls_reader_does_not_grow_the_server() {
    const LEN: usize = 12 << 20;
    let ws = Workspace::new();
    ws.write("big/noise.bin", Rng::new(12).bytes(LEN));
    ws.publish("big@1.0.0", "big", &[]);
    // Budgets that keep the file out of memory: it is sent in pieces.
    let budgets = ["--cache-bytes", "1MiB", "--in-flight-bytes", "1MiB"];
    let (server, ca) = tls_server_with(&ws, "steady", &budgets);
    let (read, answer, _) = tls_get(server.addr, &tls_client(&ca), "/_stats");
    assert!(
        read.is_ok() && answer.contains("200 OK"),
        "{read:?}: {answer}"
    );
    let before = crate::serve_memory::memory(server.pid(), "RssAnon");
    let peak = crate::serve_memory::AnonPeak::start(server.pid());
    let mut stream = tls_connect_with_receive_buffer(server.addr, &ca, 16 << 10);
    let request =
        "GET /assets/big/1.0.0/noise.bin HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
    stream.write_all(request.as_bytes()).expect("the request");
    let mut got = 0;
    let mut chunk = vec![0u8; 8 << 10];
    loop {
        match stream.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) => panic!("after {got} bytes: {e}"),
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let grew = peak.stop().saturating_sub(before);
    assert!(got > LEN, "{got} bytes");
    assert!(
        grew < 4 << 20,
        "the server's RssAnon grew by {} KiB while a {} MiB file was read slowly",
        grew >> 10,
        LEN >> 20
    );
}

/// A TLS client that asks for a big file and stops reading is cut off at
/// the send timeout, as a cleartext one is: the records ccc encrypts ahead
/// of the socket are bounded, so a write then waits, and waiting has a
/// deadline.
#[test]
fn a_tls_client_that_stops_reading_is_cut_off_at_the_send_timeout() {
    let ws = Workspace::new();
    ws.write("big/noise.bin", Rng::new(11).bytes(12 << 20));
    ws.publish("big@1.0.0", "big", &[]);
    let (server, ca) = tls_server_with(&ws, "stall", &["--send-timeout", "1s"]);
    let mut stream = tls_connect_with_receive_buffer(server.addr, &ca, 4096);
    let request = "GET /assets/big/1.0.0/noise.bin HTTP/1.1\r\nHost: localhost\r\n\r\n";
    stream.write_all(request.as_bytes()).expect("the request");
    let mut first = [0u8; 1024];
    stream
        .read_exact(&mut first)
        .expect("the start of the answer");
    assert!(first.starts_with(b"HTTP/1.1 200"), "{:?}", &first[..64]);
    let ca = ca.to_str().expect("UTF-8").to_string();
    let stats = || -> serde_json::Value {
        let (_, body) = curl(&["--cacert", &ca], &server.url("/_stats"));
        serde_json::from_slice(&body).expect("JSON")
    };
    let started = Instant::now();
    loop {
        let stats = stats();
        if stats["connections"]["send_timeouts"].as_u64() >= Some(1) {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "no send timeout after 10 s: {stats}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    drop(stream);
}

/// A TLS 1.3 client store that counts the tickets servers give it.
#[derive(Debug)]
struct CountedTickets {
    store: ClientSessionMemoryCache,
    tickets: AtomicUsize,
}

impl ClientSessionStore for CountedTickets {
    fn set_kx_hint(&self, name: ServerName<'static>, group: NamedGroup) {
        self.store.set_kx_hint(name, group)
    }

    fn kx_hint(&self, name: &ServerName<'_>) -> Option<NamedGroup> {
        self.store.kx_hint(name)
    }

    fn set_tls12_session(&self, name: ServerName<'static>, value: Tls12ClientSessionValue) {
        self.store.set_tls12_session(name, value)
    }

    fn tls12_session(&self, name: &ServerName<'_>) -> Option<Tls12ClientSessionValue> {
        self.store.tls12_session(name)
    }

    fn remove_tls12_session(&self, name: &ServerName<'static>) {
        self.store.remove_tls12_session(name)
    }

    fn insert_tls13_ticket(&self, name: ServerName<'static>, value: Tls13ClientSessionValue) {
        self.tickets.fetch_add(1, Ordering::Relaxed);
        self.store.insert_tls13_ticket(name, value)
    }

    fn take_tls13_ticket(&self, name: &ServerName<'static>) -> Option<Tls13ClientSessionValue> {
        self.store.take_tls13_ticket(name)
    }
}

/// Every TLS 1.3 handshake, full or resumed, leaves the client one
/// ticket, and each connection resumes from the ticket the one before
/// it left.
#[test]
fn tls_handshakes_leave_one_ticket_each() {
    use tokio_rustls::rustls::{HandshakeKind, client::Resumption};
    let ws = Workspace::new();
    site(&ws);
    let (server, ca) = tls_server(&ws, "tickets");
    let store = std::sync::Arc::new(CountedTickets {
        store: ClientSessionMemoryCache::new(16),
        tickets: 0.into(),
    });
    let mut config = (*tls_client(&ca)).clone();
    config.resumption = Resumption::store(store.clone());
    let config = std::sync::Arc::new(config);
    let mut kinds = Vec::new();
    for connection in 1..=3 {
        let (read, answer, kind) = tls_get(server.addr, &config, "/assets/site/1.0.0/v.txt");
        assert!(
            read.is_ok() && answer.ends_with("1.0.0"),
            "{read:?}: {answer}"
        );
        kinds.push(kind);
        let tickets = store.tickets.load(Ordering::Relaxed);
        assert_eq!(
            tickets, connection,
            "tickets after {connection} connections"
        );
    }
    assert_eq!(
        kinds,
        [
            HandshakeKind::Full,
            HandshakeKind::Resumed,
            HandshakeKind::Resumed
        ]
        .map(Some)
    );
}

/// A client that comes back resumes its TLS session from the ticket it
/// was given, however many other clients came between: 300 clients
/// (more than rustls's in-memory session cache holds) each make a full
/// handshake, then each comes back and resumes.
#[test]
fn tls_sessions_resume_after_hundreds_of_other_clients() {
    use tokio_rustls::rustls::HandshakeKind;
    let ws = Workspace::new();
    site(&ws);
    let (server, ca) = tls_server(&ws, "resume");
    let clients: Vec<_> = (0..300).map(|_| tls_client(&ca)).collect();
    let path = "/assets/site/1.0.0/v.txt";
    for client in &clients {
        let (read, answer, kind) = tls_get(server.addr, client, path);
        assert!(
            read.is_ok() && answer.ends_with("1.0.0"),
            "{read:?}: {answer}"
        );
        assert_eq!(kind, Some(HandshakeKind::Full));
    }
    let resumed = clients
        .iter()
        .filter(|client| {
            let (read, answer, kind) = tls_get(server.addr, client, path);
            assert!(
                read.is_ok() && answer.ends_with("1.0.0"),
                "{read:?}: {answer}"
            );
            kind == Some(HandshakeKind::Resumed)
        })
        .count();
    assert_eq!(resumed, clients.len());
}
