//! Helpers for the `ccc serve` tests: a real server process that is always
//! killed (even when a test panics), an HTTP client that shows responses as
//! they are (no redirects followed, no gzip decoding, 4xx/5xx as answers),
//! and a raw-socket client for requests a library would normalize.

#![allow(dead_code)]

use crate::util::Workspace;
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a server may take to print its address, or to exit.
pub const STARTUP: Duration = Duration::from_secs(15);
/// Client timeout for one request.
pub const REQUEST: Duration = Duration::from_secs(15);

/// A running `ccc serve`, killed and reaped on drop.
pub struct Server {
    child: Child,
    pub addr: SocketAddr,
    /// `http://127.0.0.1:PORT`
    pub base: String,
    stdout: Arc<Mutex<String>>,
    stderr: Arc<Mutex<String>>,
    readers: Vec<std::thread::JoinHandle<()>>,
}

impl Server {
    /// `ccc serve --db <workspace catalog> --port 0 --no-recompress
    /// EXTRA...`: brotli streams stay as published, so that a test sees
    /// the same bytes and tags from one request to the next.
    pub fn start(ws: &Workspace, extra: &[&str]) -> Server {
        let mut args = vec!["--no-recompress"];
        args.extend_from_slice(extra);
        Server::start_recompressing(ws, &args)
    }

    /// `ccc serve --db <workspace catalog> --port 0 EXTRA...`, with the
    /// background brotli pass on, as by default.
    pub fn start_recompressing(ws: &Workspace, extra: &[&str]) -> Server {
        let db = ws.db();
        let mut args = vec!["serve", "--db", db.to_str().expect("UTF-8 temp path")];
        args.extend_from_slice(&["--port", "0"]);
        args.extend_from_slice(extra);
        Server::start_with(ws.ccc_std().args(&args))
    }

    /// Starts `cmd` (a `ccc serve` command) and waits for its `listening on`
    /// line: stdout's first, or a line of stderr (`--log-format json`).
    pub fn start_with(cmd: &mut std::process::Command) -> Server {
        Server::start_with_stdin(cmd.stdin(Stdio::null()))
    }

    /// [`Server::start_with`] for a command whose stdin is set already
    /// (a socket passed as systemd passes it, in tests/restarts.rs).
    pub fn start_with_stdin(cmd: &mut std::process::Command) -> Server {
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn ccc serve");
        let stdout = Arc::new(Mutex::new(String::new()));
        let stderr = Arc::new(Mutex::new(String::new()));
        let (first_tx, first_rx) = mpsc::channel::<String>();
        let mut listening_tx = Some(first_tx.clone());
        let out_pipe = child.stdout.take().expect("stdout pipe");
        let err_pipe = child.stderr.take().expect("stderr pipe");
        let out_buf = stdout.clone();
        let out_reader = std::thread::spawn(move || {
            let mut first = Some(first_tx);
            for line in BufReader::new(out_pipe).lines() {
                let Ok(line) = line else { break };
                // In the buffer before anyone is told: a test that read the
                // first line may look for it in `stdout()` at once.
                {
                    let mut buf = out_buf.lock().expect("stdout buffer");
                    buf.push_str(&line);
                    buf.push('\n');
                }
                if let Some(tx) = first.take() {
                    let _ = tx.send(line);
                }
            }
        });
        let err_buf = stderr.clone();
        let err_reader = std::thread::spawn(move || {
            let mut pipe = err_pipe;
            let mut chunk = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                let mut buf = err_buf.lock().expect("stderr buffer");
                buf.push_str(&String::from_utf8_lossy(&chunk[..n]));
                let complete = &buf[..buf.rfind('\n').map_or(0, |i| i + 1)];
                if let Some(line) = complete.lines().find(|l| l.starts_with("listening on "))
                    && let Some(tx) = listening_tx.take()
                {
                    let _ = tx.send(line.to_string());
                }
            }
        });
        let mut server = Server {
            child,
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            base: String::new(),
            stdout,
            stderr,
            readers: vec![out_reader, err_reader],
        };
        let first = match first_rx.recv_timeout(STARTUP) {
            Ok(line) => line,
            Err(_) => panic!(
                "ccc serve printed no first line within {STARTUP:?}; stderr:\n{}",
                server.stderr()
            ),
        };
        let url = first
            .strip_prefix("listening on http://")
            .or_else(|| first.strip_prefix("listening on https://"))
            .unwrap_or_else(|| panic!("unexpected first line of ccc serve: {first:?}"));
        server.addr = url
            .parse()
            .unwrap_or_else(|e| panic!("bad address in {first:?}: {e}"));
        assert!(
            server.addr.ip().is_loopback(),
            "ccc serve should listen on 127.0.0.1 by default: {first}"
        );
        assert_ne!(server.addr.port(), 0, "the real port is printed: {first}");
        let scheme = if first.contains("https://") {
            "https"
        } else {
            "http"
        };
        server.base = format!("{scheme}://{}", server.addr);
        server
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Everything the server printed on stdout so far.
    pub fn stdout(&self) -> String {
        self.stdout.lock().expect("stdout buffer").clone()
    }

    /// Everything the server printed on stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().expect("stderr buffer").clone()
    }

    /// `GET /_stats`, parsed.
    pub fn stats(&self) -> Value {
        let r = get(&self.url("/_stats"), &[]);
        assert_eq!(r.status, 200, "/_stats: {}", r.text());
        r.json()
    }

    /// Waits (bounded) for the process to exit, then for its output pipes
    /// to close; None when it is still running after `limit`.
    pub fn wait_exit(&mut self, limit: Duration) -> Option<ExitStatus> {
        let status = wait_timeout(&mut self.child, limit)?;
        for reader in self.readers.drain(..) {
            let _ = reader.join();
        }
        Some(status)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
        // The pipes close with the process; the readers end by themselves.
        for reader in self.readers.drain(..) {
            let _ = reader.join();
        }
    }
}

/// Polls `child` until it exits or `limit` passes.
pub fn wait_timeout(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return Some(status);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Sends SIGTERM to `pid` through kill(1) (no unsafe code in the tests).
pub fn sigterm(pid: u32) {
    let status = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .expect("run kill");
    assert!(status.success(), "kill -TERM {pid} failed");
}

// ---------------------------------------------------------------- URLs

/// Percent-encodes everything but RFC 3986's unreserved characters.
pub fn enc(segment: &str) -> String {
    let mut out = String::new();
    for b in segment.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `/assets/PKG/VERSION/PATH` with every segment percent-encoded (a scoped
/// package keeps its `/`).
pub fn asset_path(package: &str, version: &str, path: &str) -> String {
    let mut url = String::from("/assets/");
    let pkg: Vec<String> = package.split('/').map(enc).collect();
    url.push_str(&pkg.join("/"));
    url.push('/');
    url.push_str(&enc(version));
    url.push('/');
    let segs: Vec<String> = path.split('/').map(enc).collect();
    url.push_str(&segs.join("/"));
    url
}

// ---------------------------------------------------------------- ureq client

/// A client that shows responses as sent: redirects are not followed,
/// 4xx/5xx are answers (not errors), no `Accept-Encoding` is added and no
/// body is decoded.
pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .max_redirects(0)
        .http_status_as_error(false)
        .accept_encoding("")
        .timeout_global(Some(REQUEST))
        .build()
        .new_agent()
}

/// The first header named `name` (any case) in a list with lowercased names.
fn find_header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    let name = name.to_ascii_lowercase();
    headers
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, v)| v.as_str())
}

/// A response, fully read.
#[derive(Debug, Clone)]
pub struct Resp {
    pub status: u16,
    /// Names lowercased, in order.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Resp {
    pub fn header(&self, name: &str) -> Option<&str> {
        find_header(&self.headers, name)
    }

    #[track_caller]
    pub fn must(&self, name: &str) -> &str {
        self.header(name)
            .unwrap_or_else(|| panic!("no {name} header in {self:?}"))
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    #[track_caller]
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", self.text()))
    }

    /// Headers other than `Date`, sorted (to compare two responses).
    pub fn stable_headers(&self) -> Vec<(String, String)> {
        let mut h: Vec<_> = self
            .headers
            .iter()
            .filter(|(n, _)| n != "date")
            .cloned()
            .collect();
        h.sort();
        h
    }
}

/// `METHOD url` with `headers`, through `agent`.
#[track_caller]
pub fn request_with(
    agent: &ureq::Agent,
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
) -> Resp {
    let mut builder = ureq::http::Request::builder().method(method).uri(url);
    for (n, v) in headers {
        builder = builder.header(*n, *v);
    }
    let request = builder.body(()).expect("a valid request");
    let mut response = agent
        .run(request)
        .unwrap_or_else(|e| panic!("{method} {url}: {e}"));
    let status = response.status().as_u16();
    let headers = response
        .headers()
        .iter()
        .map(|(n, v)| {
            (
                n.as_str().to_ascii_lowercase(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    let body = response
        .body_mut()
        .with_config()
        .limit(64 << 20)
        .read_to_vec()
        .unwrap_or_else(|e| panic!("{method} {url}: reading the body: {e}"));
    Resp {
        status,
        headers,
        body,
    }
}

#[track_caller]
pub fn request(method: &str, url: &str, headers: &[(&str, &str)]) -> Resp {
    request_with(&agent(), method, url, headers)
}

#[track_caller]
pub fn get(url: &str, headers: &[(&str, &str)]) -> Resp {
    request("GET", url, headers)
}

#[track_caller]
pub fn head(url: &str, headers: &[(&str, &str)]) -> Resp {
    request("HEAD", url, headers)
}

// ---------------------------------------------------------------- raw client

/// A response read straight off the socket.
#[derive(Debug, Clone)]
pub struct RawResp {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    /// The bytes after the header block, as sent (chunked framing left in).
    pub after_headers: Vec<u8>,
}

impl RawResp {
    pub fn header(&self, name: &str) -> Option<&str> {
        find_header(&self.headers, name)
    }

    /// The body, with chunked framing removed when there is some.
    pub fn body(&self) -> Vec<u8> {
        if self
            .header("transfer-encoding")
            .is_some_and(|v| v.eq_ignore_ascii_case("chunked"))
        {
            dechunk(&self.after_headers)
        } else {
            self.after_headers.clone()
        }
    }

    #[track_caller]
    pub fn json(&self) -> Value {
        let body = self.body();
        serde_json::from_slice(&body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", String::from_utf8_lossy(&body)))
    }
}

/// Sends `head` (a request line and headers, without the final blank line;
/// `Connection: close` is added) and reads the whole answer.
#[track_caller]
pub fn raw(addr: SocketAddr, head: &str) -> RawResp {
    let mut stream = TcpStream::connect_timeout(&addr, REQUEST).expect("connect");
    stream.set_read_timeout(Some(REQUEST)).expect("timeout");
    stream.set_write_timeout(Some(REQUEST)).expect("timeout");
    let message = format!(
        "{}\r\nHost: {addr}\r\nConnection: close\r\n\r\n",
        head.trim_end()
    );
    stream.write_all(message.as_bytes()).expect("send");
    let mut all = Vec::new();
    stream
        .read_to_end(&mut all)
        .unwrap_or_else(|e| panic!("reading the answer to {head:?}: {e}"));
    parse_raw(&all).unwrap_or_else(|| {
        panic!(
            "no HTTP answer to {head:?}: {:?}",
            String::from_utf8_lossy(&all)
        )
    })
}

/// `METHOD target HTTP/1.1`, sent raw.
#[track_caller]
pub fn raw_get(addr: SocketAddr, method: &str, target: &str, headers: &[&str]) -> RawResp {
    let mut head = format!("{method} {target} HTTP/1.1");
    for h in headers {
        head.push_str("\r\n");
        head.push_str(h);
    }
    raw(addr, &head)
}

pub fn parse_raw(all: &[u8]) -> Option<RawResp> {
    let end = all.windows(4).position(|w| w == b"\r\n\r\n")?;
    let text = std::str::from_utf8(&all[..end]).ok()?;
    let mut lines = text.split("\r\n");
    let status_line = lines.next()?;
    let status = status_line.split(' ').nth(1)?.parse().ok()?;
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    Some(RawResp {
        status,
        headers,
        after_headers: all[end + 4..].to_vec(),
    })
}

fn dechunk(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let Some(eol) = data.windows(2).position(|w| w == b"\r\n") else {
            panic!("truncated chunked body");
        };
        let size_text = std::str::from_utf8(&data[..eol]).expect("chunk size");
        let size_text = size_text.split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size_text, 16).expect("hex chunk size");
        data = &data[eol + 2..];
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&data[..size]);
        data = &data[size + 2..];
    }
}

/// Polls `check` every 50 ms until it returns true or `limit` passes;
/// returns how long it took, or None.
pub fn poll_until(limit: Duration, mut check: impl FnMut() -> bool) -> Option<Duration> {
    let started = Instant::now();
    loop {
        if check() {
            return Some(started.elapsed());
        }
        if started.elapsed() >= limit {
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// One client whose connections are reused (keep-alive) across requests,
/// so that a response framed wrongly (a 304 or HEAD with body bytes) would
/// corrupt the next answer.
pub struct Client(ureq::Agent);

#[allow(clippy::new_without_default)]
impl Client {
    pub fn new() -> Client {
        Client(agent())
    }

    #[track_caller]
    pub fn get(&self, url: &str, headers: &[(&str, &str)]) -> Resp {
        request_with(&self.0, "GET", url, headers)
    }

    #[track_caller]
    pub fn head(&self, url: &str, headers: &[(&str, &str)]) -> Resp {
        request_with(&self.0, "HEAD", url, headers)
    }
}
