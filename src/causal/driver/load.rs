//! Built-in load for `ccc causal --load builtin:N`: N closed-loop clients,
//! each on one keep-alive HTTP/1.1 connection to 127.0.0.1, sending the next
//! request as soon as the previous response is read. Closed-loop load is
//! what virtual speedups need: with open-loop load below saturation the
//! throughput is pinned to the offered rate and every site looks useless.
//!
//! The clients are environment threads (never registered with the engine):
//! like an outside load generator, they are not delayed.
//!
//! URLs come from a file (one per line, used in order, as `urls_hot.txt`
//! already encodes a skew) or from a list the command gives, with a hot-set
//! skew: 80% of requests go to the first 50 assets, 20% to any asset. The
//! generator knows nothing of the catalog or of how URLs are built: it is
//! an HTTP client like any other.
//!
//! A request fails on a status outside 2xx/3xx or an I/O error; failures are
//! counted by cause (`HTTP 404`, `connection reset`), so a run can say what
//! went wrong rather than only how often.

use crate::error::{Error, Result};
use crate::rng::SplitMix64;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// Hot-set size and share for URLs drawn from the catalog.
const HOT_ASSETS: usize = 50;
const HOT_SHARE_PERCENT: usize = 80;

/// Where request targets come from.
pub(crate) enum Urls {
    /// Used in order, each client starting at a different offset.
    InOrder(Vec<String>),
    /// 80% from the first `HOT_ASSETS`, 20% uniform.
    HotSet(Vec<String>),
}

impl Urls {
    /// Reads a URL list file: one target per line (`/assets/...`), blank
    /// lines ignored.
    pub(crate) fn from_file(path: &Path) -> Result<Urls> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        let urls: Vec<String> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect();
        if urls.is_empty() {
            return Err(Error::bad_input(path, "holds no URLs"));
        }
        Ok(Urls::InOrder(urls))
    }

    /// The given targets with the hot-set skew: the first `HOT_ASSETS` take
    /// 80% of the requests.
    pub(crate) fn hot_set(urls: Vec<String>, source: &Path) -> Result<Urls> {
        if urls.is_empty() {
            return Err(Error::bad_input(source, "has no assets to request"));
        }
        Ok(Urls::HotSet(urls))
    }

    fn pick(&self, rng: &mut SplitMix64, next: &mut usize) -> &str {
        match self {
            Urls::InOrder(urls) => {
                let url = &urls[*next % urls.len()];
                *next += 1;
                url
            }
            Urls::HotSet(urls) => {
                let hot = urls.len().min(HOT_ASSETS);
                if rng.below(100) < HOT_SHARE_PERCENT {
                    &urls[rng.below(hot)]
                } else {
                    &urls[rng.below(urls.len())]
                }
            }
        }
    }
}

/// What the built-in clients did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Report {
    /// Requests answered with a 2xx or 3xx status.
    pub completed: u64,
    /// Failed requests by cause (`HTTP 404`, `connection reset`).
    pub failures: BTreeMap<String, u64>,
}

impl Report {
    pub(crate) fn failed(&self) -> u64 {
        self.failures.values().sum()
    }

    /// `12 of 3400 built-in requests failed: 8× HTTP 404, 4× connection
    /// reset`, the commonest cause first; None when none failed.
    pub(crate) fn failure_summary(&self) -> Option<String> {
        let failed = self.failed();
        if failed == 0 {
            return None;
        }
        let mut causes: Vec<(&String, &u64)> = self.failures.iter().collect();
        causes.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let causes: Vec<String> = causes.iter().map(|(c, n)| format!("{n}× {c}")).collect();
        let requests = if self.completed + failed == 1 {
            "request"
        } else {
            "requests"
        };
        Some(format!(
            "{failed} of {} built-in {requests} failed: {}",
            self.completed + failed,
            causes.join(", ")
        ))
    }
}

/// Running clients.
pub(crate) struct Load {
    stop: Arc<AtomicBool>,
    clients: Vec<JoinHandle<()>>,
    completed: Arc<AtomicU64>,
    failures: Arc<Mutex<BTreeMap<String, u64>>>,
}

impl Load {
    /// Starts `clients` clients against `addr`.
    pub(crate) fn start(
        addr: SocketAddr,
        urls: Arc<Urls>,
        clients: usize,
        seed: u64,
    ) -> Result<Load> {
        let stop = Arc::new(AtomicBool::new(false));
        let completed = Arc::new(AtomicU64::new(0));
        let failures = Arc::new(Mutex::new(BTreeMap::new()));
        let mut handles = Vec::with_capacity(clients);
        for i in 0..clients {
            let client = Client {
                addr,
                urls: urls.clone(),
                stop: stop.clone(),
                completed: completed.clone(),
                failures: failures.clone(),
            };
            let handle = std::thread::Builder::new()
                .name(format!("load-{i}"))
                .spawn(move || client.run(seed.wrapping_add(i as u64), i * 7919))
                .map_err(|e| {
                    Error::system(format!("cannot start the load-{i} client thread"), e)
                })?;
            handles.push(handle);
        }
        Ok(Load {
            stop,
            clients: handles,
            completed,
            failures,
        })
    }

    /// What the clients did so far.
    pub(crate) fn report(&self) -> Report {
        Report {
            completed: self.completed.load(Ordering::Relaxed),
            failures: self
                .failures
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
        }
    }

    /// Stops every client and waits for them.
    pub(crate) fn stop(mut self) -> Report {
        self.stop.store(true, Ordering::Relaxed);
        for handle in std::mem::take(&mut self.clients) {
            let _ = handle.join();
        }
        self.report()
    }
}

struct Client {
    addr: SocketAddr,
    urls: Arc<Urls>,
    stop: Arc<AtomicBool>,
    completed: Arc<AtomicU64>,
    failures: Arc<Mutex<BTreeMap<String, u64>>>,
}

impl Client {
    fn run(&self, seed: u64, offset: usize) {
        let mut rng = SplitMix64::new(seed);
        let mut next = offset;
        let mut conn: Option<BufReader<TcpStream>> = None;
        let mut scratch = Vec::new();
        while !self.stop.load(Ordering::Relaxed) {
            let url = self.urls.pick(&mut rng, &mut next);
            let result = match conn.as_mut() {
                Some(c) => exchange(c, url, &mut scratch),
                None => connect(self.addr).and_then(|mut c| {
                    let r = exchange(&mut c, url, &mut scratch);
                    conn = Some(c);
                    r
                }),
            };
            match result {
                Ok(Exchange { status, keep_alive }) => {
                    if (200..400).contains(&status) {
                        self.completed.fetch_add(1, Ordering::Relaxed);
                    } else {
                        self.fail(format!("HTTP {status}"));
                    }
                    if !keep_alive {
                        conn = None;
                    }
                }
                Err(e) => {
                    // Once stopping, a connection the server closed is not
                    // a failure of the run.
                    if self.stop.load(Ordering::Relaxed) {
                        break;
                    }
                    self.fail(io_cause(&e));
                    conn = None;
                    // The server may be stopping; do not spin.
                    std::thread::sleep(Duration::from_millis(5));
                }
            }
        }
    }

    fn fail(&self, cause: String) {
        let mut failures = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        *failures.entry(cause).or_default() += 1;
    }
}

/// A failed exchange's cause, in a few words.
fn io_cause(e: &std::io::Error) -> String {
    use std::io::ErrorKind;
    let cause = match e.kind() {
        ErrorKind::ConnectionRefused => "connection refused",
        ErrorKind::ConnectionReset => "connection reset",
        ErrorKind::ConnectionAborted => "connection aborted",
        ErrorKind::BrokenPipe => "connection closed while sending",
        ErrorKind::TimedOut | ErrorKind::WouldBlock => "no answer within 10s",
        ErrorKind::UnexpectedEof => "connection closed mid-response",
        // The exchange's own descriptions (`no status line`, ...).
        _ => return e.to_string(),
    };
    cause.to_string()
}

fn connect(addr: SocketAddr) -> std::io::Result<BufReader<TcpStream>> {
    let stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
    stream.set_nodelay(true)?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    Ok(BufReader::with_capacity(64 * 1024, stream))
}

struct Exchange {
    status: u16,
    keep_alive: bool,
}

/// One request and its whole response on a keep-alive connection.
fn exchange(
    conn: &mut BufReader<TcpStream>,
    target: &str,
    scratch: &mut Vec<u8>,
) -> std::io::Result<Exchange> {
    let request = format!(
        "GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept-Encoding: gzip\r\nUser-Agent: ccc-causal\r\n\r\n"
    );
    conn.get_mut().write_all(request.as_bytes())?;
    let mut line = String::new();
    let bad = |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_string());
    if conn.read_line(&mut line)? == 0 {
        return Err(bad("connection closed"));
    }
    let status: u16 = line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| bad("no status line"))?;
    let mut length = 0usize;
    let mut keep_alive = true;
    loop {
        line.clear();
        if conn.read_line(&mut line)? == 0 {
            return Err(bad("connection closed in headers"));
        }
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            let value = value.trim();
            if name.eq_ignore_ascii_case("content-length") {
                length = value.parse().map_err(|_| bad("bad Content-Length"))?;
            } else if name.eq_ignore_ascii_case("connection") && value.eq_ignore_ascii_case("close")
            {
                keep_alive = false;
            } else if name.eq_ignore_ascii_case("transfer-encoding") {
                return Err(bad("chunked responses are not expected"));
            }
        }
    }
    scratch.resize(length, 0);
    conn.read_exact(scratch)?;
    Ok(Exchange { status, keep_alive })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_are_summarised_by_cause_commonest_first() {
        let mut report = Report {
            completed: 3388,
            failures: BTreeMap::new(),
        };
        assert_eq!(report.failure_summary(), None);
        report.failures.insert("connection reset".into(), 4);
        report.failures.insert("HTTP 404".into(), 8);
        assert_eq!(
            report.failure_summary().as_deref(),
            Some("12 of 3400 built-in requests failed: 8× HTTP 404, 4× connection reset")
        );
    }

    #[test]
    fn io_causes_are_named() {
        use std::io::{Error, ErrorKind};
        assert_eq!(
            io_cause(&Error::from(ErrorKind::ConnectionReset)),
            "connection reset"
        );
        assert_eq!(
            io_cause(&Error::from(ErrorKind::WouldBlock)),
            "no answer within 10s"
        );
        assert_eq!(
            io_cause(&Error::new(ErrorKind::InvalidData, "no status line")),
            "no status line"
        );
    }

    #[test]
    fn a_404_is_counted_as_a_404() {
        // A one-shot server that answers every request with 404.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let server = std::thread::spawn(move || {
            let (stream, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut stream = stream;
            let mut line = String::new();
            // Answer requests until the client goes away.
            loop {
                line.clear();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    return;
                }
                if line == "\r\n" {
                    let body = "{\"error\":\"no such package\"}";
                    let head = format!(
                        "HTTP/1.1 404 Not Found\r\nContent-Length: {}\r\n\r\n",
                        body.len()
                    );
                    if stream.write_all(head.as_bytes()).is_err()
                        || stream.write_all(body.as_bytes()).is_err()
                    {
                        return;
                    }
                }
            }
        });
        let urls = Arc::new(Urls::InOrder(vec!["/assets/none/1.0.0/a.js".into()]));
        let load = Load::start(addr, urls, 1, 1).unwrap();
        let started = std::time::Instant::now();
        while load.report().failed() < 3 && started.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(5));
        }
        let report = load.stop();
        server.join().unwrap();
        assert_eq!(report.completed, 0);
        assert!(
            report.failures.get("HTTP 404").is_some_and(|n| *n >= 3),
            "{report:?}"
        );
        assert_eq!(report.failures.len(), 1, "{report:?}");
    }
}
