//! Well-behaved clients: they ask for small assets at a steady pace, read
//! every answer in full, and record what a user would notice: latency
//! (p50, p99, max), statuses, refused connections, timeouts, and bodies that
//! are wrong.
//!
//! Two kinds run side by side. Keep-alive clients hold one connection and
//! reuse it, as browsers do; a connection the server closed while it sat
//! idle is retried once on a new one, as every HTTP client does for a GET
//! (counted as `stale`). Fresh clients open a new connection per request, so
//! they see what a newcomer sees: the accept path and the connection cap.
//!
//! How answers are classified, exactly:
//! - `capped`: a 503 with `Retry-After` as the first answer on a connection
//!   (the deliberate refusal at `--max-connections`; allowed during attacks);
//! - `server_errors`: any other 5xx;
//! - `refused`: `connect` failed with ECONNREFUSED;
//! - `timeouts`: connect, send or the answer took longer than the timeout;
//! - `dropped`: a new connection closed before any answer;
//! - `broken`: a reset or a cut-short or malformed answer;
//! - everything else is an answer, judged by the [`Check`] (by default only
//!   200 is right); `unexpected` and `wrong_bytes` count what it rejects.
//!
//! Latency runs from the first byte sent (the connect, for a new connection)
//! to the last byte read, and counts answers that are not `capped`; the
//! `new_conn` percentiles count only requests that opened their connection
//! (every fresh client's, a keep-alive client's first): what a newcomer
//! waits, accept included.

use super::Phases;
use super::wire::{self, Conn, ReadError, Response};
use serde::Serialize;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// What the well-behaved clients do.
#[derive(Clone)]
pub struct ProbeConfig {
    /// Request targets (`/assets/...`), picked at random.
    pub targets: Vec<String>,
    /// Picks a target from a random number instead, for a catalog that
    /// changes while it is probed.
    pub pick: Option<Arc<dyn Fn(u64) -> String + Send + Sync>>,
    /// Clients on one reused connection each.
    pub keepalive: usize,
    /// Clients opening a new connection for every request.
    pub fresh: usize,
    /// Pause between two requests of one client.
    pub pace: Duration,
    /// Longest wait for connect, send, and the whole answer.
    pub timeout: Duration,
    /// `Accept-Encoding` values, used in turn ("" sends none).
    pub accept_encodings: Vec<&'static str>,
    /// Judges answers; None accepts 200 only.
    pub check: Option<Arc<dyn Check>>,
}

impl ProbeConfig {
    /// `keepalive` + `fresh` clients asking for `targets` every 20 ms, with
    /// a 5 s timeout, accepting gzip, expecting 200.
    pub fn new(targets: Vec<String>, keepalive: usize, fresh: usize) -> ProbeConfig {
        ProbeConfig {
            targets,
            pick: None,
            keepalive,
            fresh,
            pace: Duration::from_millis(20),
            timeout: Duration::from_secs(5),
            accept_encodings: vec!["gzip"],
            check: None,
        }
    }
}

/// A judge of answers (the churn test checks every body's sha256).
pub trait Check: Send + Sync {
    /// Judges the answer to `target`, asked at `sent`, complete at `done`.
    fn check(&self, target: &str, response: &Response, sent: Instant, done: Instant) -> Verdict;
}

pub enum Verdict {
    Fine,
    /// A status or header the client should not have seen.
    Unexpected(String),
    /// Body bytes that are not the asset's.
    WrongBytes(String),
}

/// What the clients saw during one phase.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ProbeReport {
    /// Answers judged right.
    pub ok: u64,
    /// Every answer, by status.
    pub statuses: BTreeMap<u16, u64>,
    pub capped: u64,
    pub server_errors: u64,
    pub refused: u64,
    pub timeouts: u64,
    pub dropped: u64,
    pub broken: u64,
    pub stale: u64,
    pub unexpected: u64,
    pub wrong_bytes: u64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    /// Answers on a connection opened for the request, not `capped`.
    pub new_conn_answers: u64,
    pub new_conn_p50_ms: f64,
    pub new_conn_p99_ms: f64,
    /// The first few problems, described.
    pub problems: Vec<String>,
    #[serde(skip)]
    latencies: Vec<Duration>,
    #[serde(skip)]
    new_conn_latencies: Vec<Duration>,
}

/// Problems described in a report, at most.
const PROBLEMS_KEPT: usize = 20;

impl ProbeReport {
    /// Everything a user would call a failure (`capped` excluded).
    pub fn failures(&self) -> u64 {
        self.server_errors
            + self.refused
            + self.timeouts
            + self.dropped
            + self.broken
            + self.unexpected
            + self.wrong_bytes
    }

    fn problem(&mut self, what: String) {
        if self.problems.len() < PROBLEMS_KEPT {
            self.problems.push(what);
        }
    }

    fn merge(&mut self, other: ProbeReport) {
        self.ok += other.ok;
        for (status, n) in other.statuses {
            *self.statuses.entry(status).or_default() += n;
        }
        self.capped += other.capped;
        self.server_errors += other.server_errors;
        self.refused += other.refused;
        self.timeouts += other.timeouts;
        self.dropped += other.dropped;
        self.broken += other.broken;
        self.stale += other.stale;
        self.unexpected += other.unexpected;
        self.wrong_bytes += other.wrong_bytes;
        for p in other.problems {
            self.problem(p);
        }
        self.latencies.extend(other.latencies);
        self.new_conn_latencies.extend(other.new_conn_latencies);
    }

    fn finish(&mut self) {
        self.latencies.sort_unstable();
        self.new_conn_latencies.sort_unstable();
        let at = |latencies: &[Duration], q: f64| {
            let n = latencies.len();
            if n == 0 {
                return 0.0;
            }
            let i = ((n as f64 * q).ceil() as usize).clamp(1, n) - 1;
            latencies[i].as_secs_f64() * 1000.0
        };
        self.p50_ms = at(&self.latencies, 0.50);
        self.p99_ms = at(&self.latencies, 0.99);
        self.max_ms = at(&self.latencies, 1.0);
        self.new_conn_answers = self.new_conn_latencies.len() as u64;
        self.new_conn_p50_ms = at(&self.new_conn_latencies, 0.50);
        self.new_conn_p99_ms = at(&self.new_conn_latencies, 0.99);
    }

    /// Answers with status 503, whether `capped` or not.
    pub fn status_503(&self) -> u64 {
        self.statuses.get(&503).copied().unwrap_or(0)
    }

    /// The reports of several phases as one.
    pub fn combined(reports: impl IntoIterator<Item = ProbeReport>) -> ProbeReport {
        let mut all = ProbeReport::default();
        for r in reports {
            all.merge(r);
        }
        all.finish();
        all
    }
}

/// Running clients; [`Probe::finish`] stops them and reports per phase.
pub struct Probe {
    stop: Arc<AtomicBool>,
    clients: Vec<std::thread::JoinHandle<Vec<ProbeReport>>>,
}

impl Probe {
    pub fn start(addr: SocketAddr, config: &ProbeConfig, phases: Phases) -> Probe {
        assert!(
            !config.targets.is_empty() || config.pick.is_some(),
            "the probe needs targets"
        );
        let stop = Arc::new(AtomicBool::new(false));
        let clients = (0..config.keepalive + config.fresh)
            .map(|i| {
                let client = Client {
                    addr,
                    config: config.clone(),
                    keepalive: i < config.keepalive,
                    seed: 0x5eed ^ (i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15),
                    phases: phases.clone(),
                    stop: stop.clone(),
                };
                std::thread::spawn(move || client.run())
            })
            .collect();
        Probe { stop, clients }
    }

    /// Stops the clients after their current request; one report per phase.
    pub fn finish(self) -> Vec<ProbeReport> {
        self.stop.store(true, Ordering::Relaxed);
        let mut merged: Vec<ProbeReport> = Vec::new();
        for client in self.clients {
            let reports = client.join().expect("a probe client panicked");
            merged.resize_with(reports.len(), Default::default);
            for (m, r) in merged.iter_mut().zip(reports) {
                m.merge(r);
            }
        }
        for m in &mut merged {
            m.finish();
        }
        merged
    }
}

struct Client {
    addr: SocketAddr,
    config: ProbeConfig,
    keepalive: bool,
    seed: u64,
    phases: Phases,
    stop: Arc<AtomicBool>,
}

/// How one exchange ended.
enum Outcome {
    /// An answer, and whether it was the first on its connection.
    Answer(Response, bool),
    Refused,
    Timeout(String),
    Dropped,
    Broken(String),
}

impl Client {
    fn run(self) -> Vec<ProbeReport> {
        let mut reports = vec![ProbeReport::default(); self.phases.count()];
        let mut conn: Option<Conn> = None;
        let mut rng = self.seed | 1;
        let mut turn = 0usize;
        while !self.stop.load(Ordering::Relaxed) {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let target = match &self.config.pick {
                Some(pick) => pick(rng),
                None => {
                    self.config.targets[(rng % self.config.targets.len() as u64) as usize].clone()
                }
            };
            let target = target.as_str();
            let encoding = if self.config.accept_encodings.is_empty() {
                ""
            } else {
                self.config.accept_encodings[turn % self.config.accept_encodings.len()]
            };
            turn += 1;
            let header = format!("Accept-Encoding: {encoding}");
            let extra: Vec<&str> = if encoding.is_empty() {
                vec![]
            } else {
                vec![&header]
            };
            let request = wire::get_request(self.addr, target, &extra);
            let report = &mut reports[self.phases.current()];
            let sent = Instant::now();
            let outcome = self.exchange(&mut conn, &request, report);
            let done = Instant::now();
            self.record(report, target, outcome, sent, done);
            if !self.keepalive {
                conn = None;
            }
            std::thread::sleep(self.config.pace);
        }
        reports
    }

    /// Sends `request` and reads the answer, on the held connection when
    /// there is one (retried once on a new connection when the server had
    /// closed it).
    fn exchange(
        &self,
        conn: &mut Option<Conn>,
        request: &[u8],
        report: &mut ProbeReport,
    ) -> Outcome {
        let timeout = self.config.timeout;
        loop {
            let reused = conn.is_some();
            let c = match conn {
                Some(c) => c,
                None => match Conn::open(self.addr, timeout) {
                    Ok(c) => conn.insert(c),
                    Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                        return Outcome::Refused;
                    }
                    Err(e)
                        if matches!(
                            e.kind(),
                            std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock
                        ) =>
                    {
                        return Outcome::Timeout(format!("connect: {e}"));
                    }
                    Err(e) => return Outcome::Broken(format!("connect: {e}")),
                },
            };
            let result = c
                .send(request)
                .map_err(ReadError::Io)
                .and_then(|()| c.read(false));
            match result {
                Ok(response) => {
                    let first = c.answered == 1;
                    if response.close {
                        *conn = None;
                    }
                    return Outcome::Answer(response, first);
                }
                Err(e) if reused && is_stale(&e) => {
                    // Closed by the server while idle: a GET is retried.
                    report.stale += 1;
                    *conn = None;
                }
                Err(e) => {
                    *conn = None;
                    return if e.is_timeout() {
                        Outcome::Timeout(e.to_string())
                    } else if matches!(e, ReadError::ClosedBeforeAnswer) {
                        Outcome::Dropped
                    } else {
                        Outcome::Broken(e.to_string())
                    };
                }
            }
        }
    }

    fn record(
        &self,
        report: &mut ProbeReport,
        target: &str,
        outcome: Outcome,
        sent: Instant,
        done: Instant,
    ) {
        let kind = if self.keepalive {
            "keep-alive"
        } else {
            "fresh"
        };
        let response = match outcome {
            Outcome::Answer(response, first) => {
                *report.statuses.entry(response.status).or_default() += 1;
                if response.status == 503 && first && response.header("retry-after").is_some() {
                    report.capped += 1;
                    return;
                }
                report.latencies.push(done - sent);
                if first {
                    report.new_conn_latencies.push(done - sent);
                }
                response
            }
            Outcome::Refused => {
                report.refused += 1;
                report.problem(format!("{kind} GET {target}: connection refused"));
                return;
            }
            Outcome::Timeout(what) => {
                report.timeouts += 1;
                report.problem(format!("{kind} GET {target}: timed out ({what})"));
                return;
            }
            Outcome::Dropped => {
                report.dropped += 1;
                report.problem(format!("{kind} GET {target}: closed without an answer"));
                return;
            }
            Outcome::Broken(what) => {
                report.broken += 1;
                report.problem(format!("{kind} GET {target}: {what}"));
                return;
            }
        };
        if response.status >= 500 {
            report.server_errors += 1;
            report.problem(format!(
                "{kind} GET {target}: {} {}",
                response.status,
                String::from_utf8_lossy(&response.body)
            ));
            return;
        }
        let verdict = match &self.config.check {
            Some(check) => check.check(target, &response, sent, done),
            None if response.status == 200 => Verdict::Fine,
            None => Verdict::Unexpected(format!("status {}", response.status)),
        };
        match verdict {
            Verdict::Fine => report.ok += 1,
            Verdict::Unexpected(why) => {
                report.unexpected += 1;
                report.problem(format!("{kind} GET {target}: {why}"));
            }
            Verdict::WrongBytes(why) => {
                report.wrong_bytes += 1;
                report.problem(format!("{kind} GET {target}: WRONG BYTES: {why}"));
            }
        }
    }
}

/// Whether a failure on a reused connection means the server had closed it
/// before our request arrived (nothing of an answer was read).
fn is_stale(e: &ReadError) -> bool {
    match e {
        ReadError::ClosedBeforeAnswer => true,
        ReadError::Io(e) => matches!(
            e.kind(),
            std::io::ErrorKind::ConnectionReset
                | std::io::ErrorKind::BrokenPipe
                | std::io::ErrorKind::ConnectionAborted
        ),
        ReadError::Malformed(_) => false,
    }
}
