//! Publishing from CI as CI does it, run by `.ci/run` (each `#[ignore]`d
//! here: they need npm's tarballs, gigabytes of disk or seconds of work):
//!
//! - the real npm tarballs of lodash-es, rxjs, @fortawesome/fontawesome-free
//!   and typescript (`CCC_NPM_TARBALLS`, packed by `.ci/run` into
//!   target/npm) sent with `ccc publish --to https://…` to a server on
//!   loopback, as tarballs and as folders, give the same files and digests
//!   as a local publish of the same trees;
//! - a 1 GiB upload is published while the server's anonymous memory stays
//!   under 128 MiB, and a 2 GiB body against a 1 GiB limit is refused
//!   with nothing left behind;
//! - `kill -9` of the client mid-upload, and of the server mid-publish,
//!   leave the catalog as it was.

use crate::serve_protocol::certificates;
use crate::serve_util::Server;
use crate::util::{Rng, Workspace};
use serde_json::Value;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const TARBALLS: &[&str] = &[
    "lodash-es-4.17.21.tgz",
    "rxjs-7.8.1.tgz",
    "fortawesome-fontawesome-free-6.5.2.tgz",
    "typescript-5.6.3.tgz",
];

fn tarballs() -> PathBuf {
    PathBuf::from(std::env::var_os("CCC_NPM_TARBALLS").expect(
        "CCC_NPM_TARBALLS names the folder of npm's tarballs (.ci/run packs them into target/npm)",
    ))
}

fn token(ws: &Workspace, scopes: &str) -> String {
    let out = ws.ok(&["token", "create", "ci", "--scope", scopes]);
    String::from_utf8(out.stdout)
        .expect("UTF-8")
        .trim()
        .to_string()
}

/// Every version of the catalog with its files' paths and digests.
fn contents(ws: &Workspace) -> Vec<(String, Vec<(String, String)>)> {
    let mut all = Vec::new();
    for version in ws.all_versions() {
        let mut files: Vec<(String, String)> = ws
            .files(&version)
            .iter()
            .map(|f| (f["path"].to_string(), f["sha256"].to_string()))
            .collect();
        files.sort();
        all.push((version, files));
    }
    all.sort();
    all
}

#[test]
#[ignore = "needs npm's tarballs (CCC_NPM_TARBALLS); run by .ci/run"]
fn real_npm_tarballs_over_https_match_a_local_publish() {
    let dir = tarballs();
    let local = Workspace::new();
    let remote = Workspace::new();
    remote.write("seed/index.html", "seed");
    remote.publish("seed@1.0.0", "seed", &[]);
    local.write("seed/index.html", "seed");
    local.publish("seed@1.0.0", "seed", &[]);
    let (ca, cert, key) = certificates(remote.path(), "ci");
    let server = Server::start(
        &remote,
        &[
            "--publish-api",
            "--max-upload-size",
            "64MiB",
            "--tls-cert",
            cert.to_str().expect("UTF-8"),
            "--tls-key",
            key.to_str().expect("UTF-8"),
        ],
    );
    assert!(server.base.starts_with("https://"));
    let secret = token(&remote, "publish,replace:*");
    let ca = ca.to_str().expect("UTF-8").to_string();
    let send = |args: &[&str]| {
        let mut all = vec!["publish", "--to", &server.base, "--ca-file", &ca];
        all.extend_from_slice(args);
        let out = remote
            .ccc()
            .args(&all)
            .env("CCC_TOKEN", &secret)
            .output()
            .expect("run");
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "{all:?}: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        stdout
    };
    for name in TARBALLS {
        let tgz = dir.join(name);
        let tgz = tgz.to_str().expect("UTF-8");
        local.ok(&["publish", tgz, "-q"]);
        let said = send(&[tgz]);
        assert!(said.starts_with("Published "), "{said}");
        assert!(said.contains("top folder `package/` stripped"), "{said}");
    }
    assert_eq!(contents(&local), contents(&remote), "tarballs");
    // The same trees as folders (what a build leaves), replacing each
    // version: the same files again.
    for name in TARBALLS {
        let tree = remote.path().join(name.trim_end_matches(".tgz"));
        std::fs::create_dir_all(&tree).expect("mkdir");
        let status = std::process::Command::new("tar")
            .args(["-xzf"])
            .arg(dir.join(name))
            .arg("-C")
            .arg(&tree)
            .status()
            .expect("tar");
        assert!(status.success());
        let said = send(&["--force", tree.join("package").to_str().expect("UTF-8")]);
        assert!(said.starts_with("Replaced "), "{said}");
        assert!(!said.contains("top folder"), "{said}");
    }
    assert_eq!(contents(&local), contents(&remote), "folders");
    let rows = remote.json(&["audit", "--json", "--limit", "0"]);
    let published = rows
        .as_array()
        .expect("array")
        .iter()
        .filter(|r| r["token"] == "ci" && matches!(r["status"].as_u64(), Some(201)))
        .count();
    assert_eq!(published, 2 * TARBALLS.len(), "{rows}");
}

/// A tar header for a regular file `name` of `size` bytes.
fn header(name: &str, size: u64) -> Vec<u8> {
    let mut h = tar::Header::new_gnu();
    h.set_path(name).expect("path");
    h.set_size(size);
    h.set_mode(0o644);
    h.set_entry_type(tar::EntryType::Regular);
    h.set_cksum();
    h.as_bytes().to_vec()
}

/// Writes a plain tar of `package/package.json` and a `size`-byte file of
/// pseudo-random bytes to `out`, generated as it goes; stops quietly at
/// the first failed write (the server may refuse it midway).
fn stream_package(out: &mut impl Write, name: &str, size: u64) -> std::io::Result<()> {
    let manifest = format!(r#"{{"name":"{name}","version":"1.0.0"}}"#);
    out.write_all(&header("package/package.json", manifest.len() as u64))?;
    let mut block = manifest.into_bytes();
    block.resize(512, 0);
    out.write_all(&block)?;
    out.write_all(&header("package/big.bin", size))?;
    let mut rng = Rng::new(7);
    let mut chunk = vec![0u8; 1 << 20];
    let mut left = size;
    while left > 0 {
        for word in chunk.chunks_mut(8) {
            word.copy_from_slice(&rng.next_u64().to_le_bytes());
        }
        let n = left.min(chunk.len() as u64) as usize;
        out.write_all(&chunk[..n])?;
        left -= n as u64;
    }
    let pad = (512 - (size % 512) as usize) % 512;
    out.write_all(&vec![0u8; pad + 1024])
}

fn tar_length(size: u64) -> u64 {
    512 + 512 + 512 + size.div_ceil(512) * 512 + 1024
}

fn answer(stream: &mut TcpStream) -> String {
    stream
        .set_read_timeout(Some(Duration::from_secs(300)))
        .expect("timeout");
    let mut text = Vec::new();
    let _ = stream.read_to_end(&mut text);
    String::from_utf8_lossy(&text).into_owned()
}

/// Bytes of files directly in `dir` whose names SQLite and ccc do not
/// give the catalog (temporary files), and what the disk holds there.
fn strays(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .expect("list")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with("cdn.db") && !n.ends_with(".pem") && n != "seed")
        .collect()
}

#[test]
#[ignore = "1 and 2 GiB bodies, 3 GiB of disk; run by .ci/run"]
fn a_1gib_upload_under_128mib_and_a_2gib_body_past_the_limit() {
    let ws = Workspace::new();
    ws.write("seed/index.html", "seed");
    ws.publish("seed@1.0.0", "seed", &[]);
    let server = Server::start(
        &ws,
        &[
            "--publish-api",
            "--max-upload-size",
            "1GiB",
            "--threads",
            "2",
        ],
    );
    let secret = token(&ws, "publish:*");
    let size: u64 = (1 << 30) - (64 << 10);
    let length = tar_length(size);
    assert!(length <= 1 << 30);
    let peak = crate::serve_memory::AnonPeak::start(server.pid());
    let started = Instant::now();
    let mut s = TcpStream::connect(server.addr).expect("connect");
    let head = format!(
        "PUT /-/api/v1/publish/huge/1.0.0 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {secret}\r\nContent-Length: {length}\r\nConnection: close\r\n\r\n"
    );
    s.write_all(head.as_bytes()).expect("head");
    stream_package(&mut s, "huge", size).expect("the body");
    let said = answer(&mut s);
    let took = started.elapsed();
    let peak_mib = peak.stop() as f64 / (1 << 20) as f64;
    eprintln!("1 GiB upload published in {took:.1?}; server RssAnon peak {peak_mib:.1} MiB");
    assert!(said.starts_with("HTTP/1.1 201"), "{said}");
    assert!(peak_mib < 128.0, "RssAnon peak {peak_mib:.1} MiB");
    let listed: Value = ws.json(&["ls", "huge@1.0.0", "--json"]);
    let big = listed["files"]
        .as_array()
        .expect("files")
        .iter()
        .find(|f| f["path"] == "big.bin")
        .expect("big.bin")
        .clone();
    assert_eq!(big["raw_bytes"].as_u64(), Some(size), "{big}");
    ws.ok(&["rm", "huge@1.0.0"]);
    ws.ok(&["gc"]);

    // 2 GiB, chunked, against the 1 GiB limit: refused once past it.
    let disk_before = free_bytes(ws.path());
    let mut s = TcpStream::connect(server.addr).expect("connect");
    let head = format!(
        "PUT /-/api/v1/publish/huger/1.0.0 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {secret}\r\nTransfer-Encoding: chunked\r\n\r\n"
    );
    s.write_all(head.as_bytes()).expect("head");
    struct Chunked<'a>(&'a mut TcpStream);
    impl Write for Chunked<'_> {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0
                .write_all(format!("{:x}\r\n", buf.len()).as_bytes())?;
            self.0.write_all(buf)?;
            self.0.write_all(b"\r\n")?;
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            self.0.flush()
        }
    }
    let sent = stream_package(&mut Chunked(&mut s), "huger", 2 << 30);
    let said = answer(&mut s);
    assert!(
        said.starts_with("HTTP/1.1 413") || sent.is_err(),
        "{said} ({sent:?})"
    );
    if !said.is_empty() {
        assert!(said.starts_with("HTTP/1.1 413"), "{said}");
    }
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        ws.ccc()
            .args(["ls", "huger"])
            .output()
            .expect("ls")
            .status
            .code()
            == Some(1),
        "nothing published"
    );
    let disk_after = free_bytes(ws.path());
    assert!(
        disk_after + (64 << 20) >= disk_before,
        "the spool is gone: {disk_before} free before, {disk_after} after"
    );
    assert!(strays(ws.path()).is_empty(), "{:?}", strays(ws.path()));
}

/// The size of the unnamed file process `pid` keeps open in `dir` (an
/// upload's spool), seen through /proc.
pub(crate) fn spool_size(pid: u32, dir: &Path) -> Option<u64> {
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?;
    for fd in fds.filter_map(|e| e.ok()) {
        let Ok(target) = std::fs::read_link(fd.path()) else {
            continue;
        };
        let target = target.to_string_lossy();
        if target.starts_with(dir.to_str()?) && target.ends_with("(deleted)") {
            return std::fs::metadata(fd.path()).ok().map(|m| m.len());
        }
    }
    None
}

fn free_bytes(path: &Path) -> u64 {
    let stat = rustix::fs::statvfs(path).expect("statvfs");
    stat.f_bavail * stat.f_frsize
}

#[test]
#[ignore = "kills processes mid-work, seconds of gzip; run by .ci/run"]
fn kill_9_of_client_or_server_mid_upload_leaves_no_trace() {
    let ws = Workspace::new();
    ws.write("seed/index.html", "seed");
    ws.publish("seed@1.0.0", "seed", &[]);
    // 48 MiB of text that gzip -9 and brotli take seconds over.
    let mut rng = Rng::new(11);
    for i in 0..48 {
        ws.write_path(format!("tree/f{i}.js"), rng.text(1 << 20));
    }
    ws.write("tree/package.json", r#"{"name":"tree","version":"1.0.0"}"#);
    let before = ws.snapshot();
    let mut server = Server::start(&ws, &["--publish-api"]);
    let secret = token(&ws, "publish:*");

    // The client, killed while it sends: once the server's spool (an
    // unnamed file beside the catalog) holds 256 KiB of the body (the
    // whole is about 4 MiB, gzipped).
    let mut client = ws
        .ccc_std()
        .args(["publish", "--to", &server.base, "tree"])
        .env("CCC_TOKEN", &secret)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    let waited = Instant::now();
    let spooled = || spool_size(server.pid(), ws.path()).unwrap_or(0);
    while spooled() < 256 << 10 && waited.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(2));
    }
    let reads = spooled();
    assert!(
        client.try_wait().expect("wait").is_none(),
        "the client ended before it was killed"
    );
    client.kill().expect("kill -9");
    client.wait().expect("reap");
    eprintln!(
        "client killed after {:?}, the server having spooled {reads} bytes",
        waited.elapsed()
    );
    let cut_off = |rows: &Value| {
        rows.as_array().expect("array").iter().any(|r| {
            r["target"] == "tree@1.0.0"
                && matches!(r["status"].as_u64(), Some(400 | 499))
                && r["detail"].as_str().is_some_and(|d| d.contains("cut off"))
        })
    };
    let waited = Instant::now();
    let mut rows = ws.json(&["audit", "--json"]);
    while !cut_off(&rows) && waited.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
        rows = ws.json(&["audit", "--json"]);
    }
    assert!(
        cut_off(&rows),
        "the server saw the body cut off: {rows}; its stats: {}; stderr: {}",
        server.stats(),
        server.stderr()
    );
    assert!(
        ws.ccc()
            .args(["ls", "tree"])
            .output()
            .expect("ls")
            .status
            .code()
            == Some(1)
    );

    // The server, killed while it publishes: once the whole body is sent
    // and the catalog's log grows with the new blobs.
    let wal = ws.path().join("cdn.db-wal");
    let wal_size = || std::fs::metadata(&wal).map_or(0, |m| m.len());
    let tarball = ws.path().join("tree.tgz");
    let status = std::process::Command::new("tar")
        .arg("-czf")
        .arg(&tarball)
        .arg("-C")
        .arg(ws.path())
        .arg("tree")
        .status()
        .expect("tar");
    assert!(status.success());
    let body = std::fs::read(&tarball).expect("read");
    let start_wal = wal_size();
    let mut s = TcpStream::connect(server.addr).expect("connect");
    let head = format!(
        "PUT /-/api/v1/publish/tree/1.0.0 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {secret}\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).expect("head");
    s.write_all(&body).expect("body");
    let waited = Instant::now();
    while wal_size() < start_wal + (4 << 20) && waited.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(
        wal_size() >= start_wal + (4 << 20),
        "the publish did not start"
    );
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(server.pid() as i32).expect("pid"),
        rustix::process::Signal::KILL,
    )
    .expect("kill -9");
    server.wait_exit(Duration::from_secs(10));
    drop(s);
    assert_eq!(ws.snapshot(), before, "the catalog is as it was");
    ws.ok(&["verify"]);
    std::fs::remove_file(&tarball).expect("rm");
    assert!(
        strays(ws.path()).iter().all(|n| n == "tree"),
        "{:?}",
        strays(ws.path())
    );
    // A new server takes the same upload whole.
    let server = Server::start(&ws, &["--publish-api"]);
    ws.ccc()
        .args(["publish", "--to", &server.base, "tree", "-q"])
        .env("CCC_TOKEN", &secret)
        .assert()
        .success();
    assert_eq!(ws.versions("tree"), ["1.0.0"]);
}
