//! The HTTP/2 limits of `ccc serve`, tested from the wire: the settings it
//! advertises (128 concurrent streams, a 32 KiB header list), what happens
//! to a client that goes past them (streams refused, 431, the connection
//! sent away with GOAWAY), and that the server serves everyone else
//! afterwards. The attacks are the known ones against HTTP/2 servers:
//! opening more streams than allowed, provoking resets without end, the
//! rapid reset (CVE-2023-44487), header blocks that decode far larger than
//! they are sent, and the CONTINUATION flood (CVE-2024-27316).
//!
//! A library client would refuse to send these frames, so the tests write
//! them by hand on a plain TCP socket (cleartext HTTP/2 with prior
//! knowledge, to 127.0.0.1 only). Every flood is bounded in frames, bytes
//! and time, so a limit that does not hold fails the test instead of
//! hanging it.

use crate::serve_util::{Server, get};
use crate::util::Workspace;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

// ------------------------------------------------- a hand-written HTTP/2 client

/// Frame types (RFC 9113 section 6).
const DATA: u8 = 0x0;
const HEADERS: u8 = 0x1;
const RST_STREAM: u8 = 0x3;
const SETTINGS: u8 = 0x4;
const PING: u8 = 0x6;
const GOAWAY: u8 = 0x7;
const WINDOW_UPDATE: u8 = 0x8;
const CONTINUATION: u8 = 0x9;

/// Frame flags.
const END_STREAM: u8 = 0x1;
const ACK: u8 = 0x1;
const END_HEADERS: u8 = 0x4;

/// Settings (RFC 9113 section 6.5.2).
const HEADER_TABLE_SIZE: u16 = 0x1;
const MAX_CONCURRENT_STREAMS: u16 = 0x3;
const INITIAL_WINDOW_SIZE: u16 = 0x4;
const MAX_HEADER_LIST_SIZE: u16 = 0x6;

/// Error codes (RFC 9113 section 7).
const NO_ERROR: u32 = 0x0;
const REFUSED_STREAM: u32 = 0x7;
const CANCEL: u32 = 0x8;
const ENHANCE_YOUR_CALM: u32 = 0xb;

/// The largest frame payload a peer must accept (the server keeps it).
const MAX_FRAME: usize = 16 * 1024;
/// The asset every test asks for, and its body.
const ASSET: &str = "/assets/site/1.0.0/v.txt";
const BODY: &[u8] = b"1.0.0";

/// One frame: 9-byte header (24-bit length, type, flags, 31-bit stream id)
/// and its payload.
fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    assert!(payload.len() < 1 << 24, "a frame's length has 24 bits");
    let mut out = (payload.len() as u32).to_be_bytes()[1..].to_vec();
    out.extend_from_slice(&[kind, flags]);
    out.extend_from_slice(&stream.to_be_bytes());
    out.extend_from_slice(payload);
    out
}

/// A SETTINGS frame with `pairs` (identifier, value).
fn settings(pairs: &[(u16, u32)]) -> Vec<u8> {
    let payload: Vec<u8> = pairs
        .iter()
        .flat_map(|(id, value)| [&id.to_be_bytes()[..], &value.to_be_bytes()].concat())
        .collect();
    frame(SETTINGS, 0, 0, &payload)
}

fn rst_stream(stream: u32, code: u32) -> Vec<u8> {
    frame(RST_STREAM, 0, stream, &code.to_be_bytes())
}

/// Appends `value` as an HPACK integer (RFC 7541 section 5.1): a `prefix`
/// bit prefix in a first byte that carries `flags` above it.
fn hpack_int(out: &mut Vec<u8>, flags: u8, prefix: u32, value: usize) {
    let max = (1usize << prefix) - 1;
    if value < max {
        out.push(flags | value as u8);
        return;
    }
    out.push(flags | max as u8);
    let mut rest = value - max;
    while rest >= 128 {
        out.push(0x80 | (rest % 128) as u8);
        rest /= 128;
    }
    out.push(rest as u8);
}

/// Reads an HPACK integer with a `prefix` bit prefix at the start of
/// `bytes`: (value, bytes used).
fn read_hpack_int(bytes: &[u8], prefix: u32) -> Option<(usize, usize)> {
    let max = (1usize << prefix) - 1;
    let first = usize::from(*bytes.first()?) & max;
    if first < max {
        return Some((first, 1));
    }
    let mut value = max;
    for (i, b) in bytes[1..].iter().enumerate().take(4) {
        value += usize::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Some((value, i + 2));
        }
    }
    None
}

/// Appends the start of a literal header field with a new name, up to its
/// value's length: `kind` 0x00 is "without indexing" (RFC 7541 6.2.2),
/// 0x40 "with incremental indexing" (6.2.1). Strings are sent as they are
/// (no Huffman coding).
fn field_head(out: &mut Vec<u8>, kind: u8, name: &str, value_len: usize) {
    out.push(kind);
    hpack_int(out, 0, 7, name.len());
    out.extend_from_slice(name.as_bytes());
    hpack_int(out, 0, 7, value_len);
}

/// Appends a literal header field without indexing.
fn literal(out: &mut Vec<u8>, name: &str, value: &[u8]) {
    field_head(out, 0x00, name, value.len());
    out.extend_from_slice(value);
}

/// The header block of `GET path` with `extra` header fields.
fn request(path: &str, extra: &[(&str, &[u8])]) -> Vec<u8> {
    let mut block = Vec::new();
    for (name, value) in [
        (":method", "GET"),
        (":scheme", "http"),
        (":authority", "127.0.0.1"),
        (":path", path),
    ] {
        literal(&mut block, name, value.as_bytes());
    }
    for (name, value) in extra {
        literal(&mut block, name, value);
    }
    block
}

/// `block` as a HEADERS frame and as many CONTINUATION frames as it needs.
fn header_frames(stream: u32, block: &[u8], end_stream: bool) -> Vec<u8> {
    let chunks: Vec<&[u8]> = block.chunks(MAX_FRAME).collect();
    let mut out = Vec::new();
    for (i, chunk) in chunks.iter().enumerate() {
        let mut flags = if i + 1 == chunks.len() {
            END_HEADERS
        } else {
            0
        };
        let kind = if i == 0 {
            flags |= if end_stream { END_STREAM } else { 0 };
            HEADERS
        } else {
            CONTINUATION
        };
        out.extend(frame(kind, flags, stream, chunk));
    }
    out
}

/// Decodes a Huffman-coded string of digits: '0' to '2' are 5-bit codes
/// 00000 to 00010, '3' to '9' 6-bit codes 011001 to 011111 (RFC 7541
/// appendix B); the padding is ones.
fn huffman_digits(bytes: &[u8]) -> Option<String> {
    let bits: Vec<u8> = bytes
        .iter()
        .flat_map(|b| (0..8).rev().map(move |i| (b >> i) & 1))
        .collect();
    let code = |at: usize, n: usize| bits[at..at + n].iter().fold(0, |a, b| a << 1 | b);
    let (mut at, mut out) = (0, String::new());
    while at + 5 <= bits.len() && code(at, 5) != 0b11111 {
        if code(at, 5) < 3 {
            out.push(char::from(b'0' + code(at, 5)));
            at += 5;
        } else if at + 6 <= bits.len() && (0x19..=0x1f).contains(&code(at, 6)) {
            out.push(char::from(b'0' + code(at, 6) - 0x16));
            at += 6;
        } else {
            return None;
        }
    }
    Some(out)
}

/// The `:status` of a response header block from a server told that the
/// client keeps no HPACK table (SETTINGS_HEADER_TABLE_SIZE 0): after any
/// table size updates, `:status` comes first, either one of the static
/// table's statuses or a literal value for its name (index 8).
fn status(block: &[u8]) -> Option<u16> {
    let mut at = 0;
    while block.get(at)? & 0xe0 == 0x20 {
        at += read_hpack_int(&block[at..], 5)?.1;
    }
    let first = block[at];
    if first & 0x80 != 0 {
        let statuses = [200, 204, 206, 304, 400, 404, 500];
        return statuses
            .get(usize::from(first & 0x7f).checked_sub(8)?)
            .copied();
    }
    let prefix = if first & 0xc0 == 0x40 { 6 } else { 4 };
    let (index, used) = read_hpack_int(&block[at..], prefix)?;
    if index != 8 {
        return None;
    }
    at += used;
    let huffman = block.get(at)? & 0x80 != 0;
    let (len, used) = read_hpack_int(&block[at..], 7)?;
    let value = block.get(at + used..at + used + len)?;
    let text = if huffman {
        huffman_digits(value)?
    } else {
        String::from_utf8(value.to_vec()).ok()?
    };
    text.parse().ok()
}

/// A frame read from the server.
#[derive(Debug)]
struct Frame {
    kind: u8,
    flags: u8,
    stream: u32,
    payload: Vec<u8>,
}

impl Frame {
    /// The error code of a RST_STREAM, or of a GOAWAY.
    fn code(&self) -> u32 {
        let at = if self.kind == GOAWAY { 4 } else { 0 };
        u32::from_be_bytes(self.payload[at..at + 4].try_into().expect("4 bytes"))
    }

    /// A GOAWAY's last stream id: the last stream the server processed.
    fn last_stream(&self) -> u32 {
        u32::from_be_bytes(self.payload[..4].try_into().expect("4 bytes")) & 0x7fff_ffff
    }
}

/// What waiting for the server's next frame gave.
#[derive(Debug)]
enum Got {
    Frame(Frame),
    /// Nothing within the wait.
    Quiet,
    /// The connection was closed (or reset).
    Closed,
}

/// A client connection: the preface and SETTINGS sent, frames read back
/// one at a time, the server's SETTINGS and PINGs acknowledged as they come.
struct H2 {
    tcp: TcpStream,
    buf: Vec<u8>,
    /// The server's first SETTINGS, once read.
    server_settings: Option<Vec<(u16, u32)>>,
}

impl H2 {
    /// Connects and sends the preface with `pairs` as the client's
    /// settings, plus HEADER_TABLE_SIZE 0 (so responses are easy to read,
    /// see [`status`]).
    fn open(addr: SocketAddr, pairs: &[(u16, u32)]) -> H2 {
        let mut tcp = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).expect("connect");
        tcp.set_write_timeout(Some(Duration::from_secs(5)))
            .expect("write timeout");
        tcp.set_nodelay(true).expect("nodelay");
        let mut all = vec![(HEADER_TABLE_SIZE, 0)];
        all.extend_from_slice(pairs);
        let mut hello = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
        hello.extend(settings(&all));
        tcp.write_all(&hello).expect("the preface");
        H2 {
            tcp,
            buf: Vec::new(),
            server_settings: None,
        }
    }

    fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.tcp.write_all(bytes)
    }

    /// The next frame, waiting up to `wait` for it.
    fn next(&mut self, wait: Duration) -> Got {
        let deadline = Instant::now() + wait;
        loop {
            if let Some(frame) = self.pop() {
                return Got::Frame(frame);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Got::Quiet;
            }
            self.tcp.set_read_timeout(Some(left)).expect("read timeout");
            let mut chunk = [0u8; 64 * 1024];
            match self.tcp.read(&mut chunk) {
                Ok(0) => return Got::Closed,
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    return Got::Quiet;
                }
                Err(_) => return Got::Closed,
            }
        }
    }

    /// A whole frame off the buffer, if there is one; SETTINGS and PING
    /// are acknowledged.
    fn pop(&mut self) -> Option<Frame> {
        let head = self.buf.get(..9)?;
        let len = u32::from_be_bytes([0, head[0], head[1], head[2]]) as usize;
        if self.buf.len() < 9 + len {
            return None;
        }
        let frame = Frame {
            kind: head[3],
            flags: head[4],
            stream: u32::from_be_bytes([head[5], head[6], head[7], head[8]]) & 0x7fff_ffff,
            payload: self.buf[9..9 + len].to_vec(),
        };
        self.buf.drain(..9 + len);
        if frame.kind == SETTINGS && frame.flags & ACK == 0 {
            let pairs = frame
                .payload
                .chunks_exact(6)
                .map(|p| {
                    let value = u32::from_be_bytes([p[2], p[3], p[4], p[5]]);
                    (u16::from_be_bytes([p[0], p[1]]), value)
                })
                .collect();
            self.server_settings.get_or_insert(pairs);
            let _ = self.send(&frame_ack(SETTINGS, &[]));
        }
        if frame.kind == PING && frame.flags & ACK == 0 {
            let _ = self.send(&frame_ack(PING, &frame.payload));
        }
        Some(frame)
    }

    /// The server's SETTINGS (its first frame), as (identifier, value).
    fn settings(&mut self) -> Vec<(u16, u32)> {
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.server_settings.is_none() && Instant::now() < deadline {
            if let Got::Closed = self.next(Duration::from_millis(100)) {
                break;
            }
        }
        self.server_settings.clone().expect("the server's SETTINGS")
    }

    /// Reads (for up to 5 s) until the server closes the connection; true
    /// when it did.
    fn closes(&mut self) -> bool {
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Got::Closed = self.next(Duration::from_millis(100)) {
                return true;
            }
        }
        false
    }
}

fn frame_ack(kind: u8, payload: &[u8]) -> Vec<u8> {
    frame(kind, ACK, 0, payload)
}

/// The value of setting `id` among `pairs`.
fn setting(pairs: &[(u16, u32)], id: u16) -> Option<u32> {
    pairs.iter().find(|(i, _)| *i == id).map(|(_, v)| *v)
}

/// The answer on `stream` (status and body), or what came instead: a
/// RST_STREAM or GOAWAY, the connection closed, nothing within 10 s.
fn answer(c: &mut H2, stream: u32) -> Result<(u16, Vec<u8>), String> {
    let (mut code, mut body) = (None, Vec::new());
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        match c.next(Duration::from_millis(100)) {
            Got::Frame(f) if f.stream == stream && (f.kind == HEADERS || f.kind == DATA) => {
                if f.kind == HEADERS {
                    code = status(&f.payload);
                } else {
                    body.extend(&f.payload);
                }
                if f.flags & END_STREAM != 0 {
                    return code
                        .map(|code| (code, body))
                        .ok_or(format!("no status: {f:?}"));
                }
            }
            Got::Frame(f) if f.stream == stream && f.kind == RST_STREAM => {
                return Err(format!("RST_STREAM {:#x}", f.code()));
            }
            Got::Frame(f) if f.kind == GOAWAY => return Err(format!("GOAWAY {:#x}", f.code())),
            Got::Closed => return Err("closed".to_string()),
            _ => {}
        }
    }
    Err("no answer within 10 s".to_string())
}

/// `GET path` on a new HTTP/2 connection.
fn h2_get(addr: SocketAddr, path: &str) -> Result<(u16, Vec<u8>), String> {
    let mut c = H2::open(addr, &[]);
    c.send(&header_frames(1, &request(path, &[]), true))
        .map_err(|e| format!("sending: {e}"))?;
    answer(&mut c, 1)
}

// ---------------------------------------------------------------- the server

fn site(ws: &Workspace) {
    ws.write("dist/v.txt", BODY);
    ws.publish("site@1.0.0", "dist", &[]);
}

/// The server answers others promptly after an attack: a new HTTP/2
/// connection and an HTTP/1.1 request are both served within 4 s.
#[track_caller]
fn still_serves(server: &Server, after: &str) {
    let started = Instant::now();
    let answer = h2_get(server.addr, ASSET);
    assert_eq!(
        answer,
        Ok((200, BODY.to_vec())),
        "after {after}: a new HTTP/2 connection"
    );
    let one = get(&server.url("/healthz"), &[]);
    assert_eq!(one.status, 200, "after {after}: HTTP/1.1 /healthz");
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "after {after}: the two requests took {:?}",
        started.elapsed()
    );
}

/// The CPU time (user and system, in clock ticks of 1/100 s) the process
/// has used, from `/proc/PID/stat`; None off Linux.
fn cpu_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
}

/// How a flood ended: the GOAWAY the server sent, if one was read, and
/// whether the connection was closed.
#[derive(Debug)]
struct Ended {
    goaway: Option<Frame>,
    closed: bool,
}

/// Reads what the server sent within `wait` (each frame shown to `seen`):
/// Some when it sent GOAWAY or closed the connection (then reads on to the
/// close, up to 5 s).
fn ended(c: &mut H2, wait: Duration, mut seen: impl FnMut(&Frame)) -> Option<Ended> {
    loop {
        match c.next(wait) {
            Got::Frame(f) if f.kind == GOAWAY => {
                let closed = c.closes();
                return Some(Ended {
                    goaway: Some(f),
                    closed,
                });
            }
            Got::Frame(f) => seen(&f),
            Got::Quiet => return None,
            Got::Closed => {
                return Some(Ended {
                    goaway: None,
                    closed: true,
                });
            }
        }
    }
}

/// Asserts the flood ended the connection: the server sent GOAWAY with an
/// error code (not NO_ERROR) and closed the connection.
#[track_caller]
fn assert_sent_away(end: &Option<Ended>, what: &str) -> u32 {
    let Some(Ended {
        goaway: Some(goaway),
        closed,
    }) = end
    else {
        panic!("{what}: no GOAWAY ({end:?})");
    };
    assert_ne!(goaway.code(), NO_ERROR, "{what}: {goaway:?}");
    assert!(
        closed,
        "{what}: the connection stayed open after {goaway:?}"
    );
    goaway.code()
}

// ---------------------------------------------------------------- the tests

/// 144 requests at once, on a connection whose client takes no response
/// body yet (initial window 0), so that every answered stream stays open:
/// exactly the first 128 are answered, the 16 past them are refused with
/// RST_STREAM REFUSED_STREAM (RFC 9113 5.1.2), and once the window opens
/// all 128 bodies arrive and the connection takes new streams.
#[test]
fn streams_past_128_at_once_are_refused_and_the_first_128_answered() {
    let ws = Workspace::new();
    site(&ws);
    let server = Server::start(&ws, &[]);
    let mut c = H2::open(server.addr, &[(INITIAL_WINDOW_SIZE, 0)]);
    let advertised = c.settings();
    assert_eq!(
        setting(&advertised, MAX_CONCURRENT_STREAMS),
        Some(128),
        "{advertised:?}"
    );
    let (allowed, extra) = (128u32, 16u32);
    let mut burst = Vec::new();
    for n in 0..allowed + extra {
        burst.extend(header_frames(2 * n + 1, &request(ASSET, &[]), true));
    }
    c.send(&burst).expect("the burst");

    let (mut answered, mut refused, mut other) = (Vec::new(), Vec::new(), Vec::new());
    let deadline = Instant::now() + Duration::from_secs(15);
    while answered.len() + refused.len() + other.len() < (allowed + extra) as usize
        && Instant::now() < deadline
    {
        match c.next(Duration::from_millis(100)) {
            Got::Frame(f) if f.kind == HEADERS && status(&f.payload) == Some(200) => {
                answered.push(f.stream)
            }
            Got::Frame(f) if f.kind == RST_STREAM && f.code() == REFUSED_STREAM => {
                refused.push(f.stream)
            }
            Got::Frame(f) if matches!(f.kind, SETTINGS | PING | WINDOW_UPDATE) => {}
            Got::Frame(f) => other.push(f),
            Got::Quiet => {}
            Got::Closed => panic!("the connection was closed"),
        }
    }
    answered.sort_unstable();
    refused.sort_unstable();
    let first: Vec<u32> = (0..allowed).map(|n| 2 * n + 1).collect();
    let rest: Vec<u32> = (allowed..allowed + extra).map(|n| 2 * n + 1).collect();
    assert!(other.is_empty(), "unexpected frames: {other:?}");
    assert_eq!(answered, first, "the first 128 streams are answered");
    assert_eq!(refused, rest, "the streams past 128 are refused");

    // Opening the window lets the 128 bodies through.
    c.send(&settings(&[(INITIAL_WINDOW_SIZE, 65_535)]))
        .expect("settings");
    let mut finished = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(15);
    while finished.len() < allowed as usize && Instant::now() < deadline {
        match c.next(Duration::from_millis(100)) {
            Got::Frame(f) if f.kind == DATA => {
                assert_eq!(f.payload, BODY, "stream {}", f.stream);
                assert!(f.flags & END_STREAM != 0, "one DATA frame per body");
                finished.push(f.stream);
            }
            Got::Frame(f) if matches!(f.kind, SETTINGS | PING | WINDOW_UPDATE) => {}
            Got::Frame(f) => panic!("unexpected {f:?}"),
            Got::Quiet => {}
            Got::Closed => panic!("the connection was closed"),
        }
    }
    finished.sort_unstable();
    assert_eq!(finished, first, "every answered stream gets its body");

    // The connection is not spoilt: a new stream is answered.
    let next = 2 * (allowed + extra) + 1;
    c.send(&header_frames(next, &request(ASSET, &[]), true))
        .expect("one more");
    assert_eq!(answer(&mut c, next), Ok((200, BODY.to_vec())));
    drop(c);
    still_serves(&server, "too many streams");
}

/// A client that keeps opening streams while it holds 128 open gets them
/// refused, but not without end: the server refuses 256 on one connection
/// (`H2_MAX_LOCAL_RESETS`), then sends GOAWAY ENHANCE_YOUR_CALM and closes
/// it.
#[test]
fn a_client_that_keeps_opening_refused_streams_is_sent_away() {
    let ws = Workspace::new();
    site(&ws);
    let server = Server::start(&ws, &[]);
    let mut c = H2::open(server.addr, &[(INITIAL_WINDOW_SIZE, 0)]);
    c.settings();
    let total = 128 + 400;
    let mut burst = Vec::new();
    for n in 0..total {
        burst.extend(header_frames(2 * n + 1, &request(ASSET, &[]), true));
    }
    // The server may close the connection before it has read them all.
    let _ = c.send(&burst);
    let (mut refused, mut end) = (Vec::new(), None);
    let deadline = Instant::now() + Duration::from_secs(15);
    while end.is_none() && Instant::now() < deadline {
        end = ended(&mut c, Duration::from_millis(100), |f| {
            if f.kind == RST_STREAM && f.code() == REFUSED_STREAM {
                refused.push(f.stream);
            }
        });
    }
    let code = assert_sent_away(&end, "refused streams without end");
    eprintln!(
        "{} streams refused (the first {:?}, the last {:?}), then GOAWAY code {code:#x}",
        refused.len(),
        refused.first(),
        refused.last()
    );
    // The first 128 streams are held open, the next 256 refused.
    let expected: Vec<u32> = (128..128 + 256).map(|n| 2 * n + 1).collect();
    assert_eq!(
        refused, expected,
        "the server refuses 256 streams, then no more"
    );
    assert_eq!(code, ENHANCE_YOUR_CALM);
    still_serves(&server, "refused streams without end");
}

/// SETTINGS_MAX_HEADER_LIST_SIZE is 32768: a request whose header list
/// (RFC 9113 6.5.2: names, values and 32 bytes a field) is 28 KiB is
/// served, one of 36 KiB is refused (431, or the stream reset) and the
/// connection serves the next request. A header block that decodes to more
/// than four times the limit (one 4 KB field in the HPACK table, then
/// referenced by its index, one byte each) ends the connection.
#[test]
fn a_header_list_past_32_kib_is_refused_and_the_connection_lives_on() {
    let ws = Workspace::new();
    site(&ws);
    let server = Server::start(&ws, &[]);
    let mut c = H2::open(server.addr, &[]);
    let advertised = c.settings();
    assert_eq!(
        setting(&advertised, MAX_HEADER_LIST_SIZE),
        Some(32_768),
        "{advertised:?}"
    );
    let value = vec![b'v'; 4000];
    let padded = |fields: usize| {
        let names: Vec<String> = (0..fields).map(|i| format!("x-pad-{i}")).collect();
        let extra: Vec<(&str, &[u8])> = names.iter().map(|n| (n.as_str(), &value[..])).collect();
        request(ASSET, &extra)
    };

    let mut answers = Vec::new();
    for (stream, block) in [(1, padded(7)), (3, padded(9)), (5, request(ASSET, &[]))] {
        c.send(&header_frames(stream, &block, true))
            .expect("a request");
        answers.push(answer(&mut c, stream));
    }
    let ok = Ok((200, BODY.to_vec()));
    eprintln!("28 KiB, 36 KiB, small header lists: {answers:?}");
    assert_eq!(answers[0], ok, "a 28 KiB header list is served");
    assert!(
        matches!(&answers[1], Ok((431, _)))
            || answers[1]
                .as_ref()
                .is_err_and(|e| e.starts_with("RST_STREAM")),
        "a 36 KiB header list is refused: {:?}",
        answers[1]
    );
    assert_eq!(answers[2], ok, "the connection serves on");
    drop(c);

    // A 4 KB field added to the HPACK table (literal with incremental
    // indexing, RFC 7541 6.2.1), then 40 one-byte references to it (index
    // 62, the table's first entry): 4 KB sent, 160 KB decoded.
    let mut bomb = request(ASSET, &[]);
    field_head(&mut bomb, 0x40, "x-bomb", value.len());
    bomb.extend_from_slice(&value);
    bomb.extend([0x80 | 62; 40]);
    let mut c = H2::open(server.addr, &[]);
    c.settings();
    c.send(&header_frames(1, &bomb, true)).expect("the bomb");
    let end = ended(&mut c, Duration::from_secs(10), |_| {});
    let code = assert_sent_away(&end, "a header list decoding to 160 KB");
    eprintln!("HPACK bomb: GOAWAY code {code:#x}");
    still_serves(&server, "header lists too large");
}

/// The rapid reset (CVE-2023-44487): streams opened and reset at once, 50
/// at a time, never waiting for an answer. The server sends GOAWAY long
/// before 10,000 of them (it holds at most 20 reset streams it has not
/// taken up yet, `H2_MAX_PENDING_RESETS`), uses little CPU for them, and
/// serves a new connection at once. (A client that waits for each stream
/// to be taken up before resetting it is not sent away: each stream then
/// costs the server what a request costs, and the client's own pace
/// bounds them.)
#[test]
fn rapid_reset_gets_the_connection_closed_and_others_are_served() {
    let ws = Workspace::new();
    site(&ws);
    let server = Server::start(&ws, &[]);
    let cpu_before = cpu_ticks(server.pid());
    let mut c = H2::open(server.addr, &[]);
    c.settings();
    let block = request(ASSET, &[]);
    let started = Instant::now();
    let (mut sent, mut end) = (0u32, None);
    while end.is_none() && sent < 10_000 && started.elapsed() < Duration::from_secs(20) {
        let mut batch = Vec::new();
        for _ in 0..50 {
            let id = 2 * sent + 1;
            batch.extend(header_frames(id, &block, true));
            batch.extend(rst_stream(id, CANCEL));
            sent += 1;
        }
        if c.send(&batch).is_err() {
            // Closed: what arrived before the close is still to be read.
            end = ended(&mut c, Duration::from_secs(1), |_| {}).or(Some(Ended {
                goaway: None,
                closed: true,
            }));
            break;
        }
        end = ended(&mut c, Duration::from_millis(5), |_| {});
    }
    let code = assert_sent_away(&end, &format!("{sent} streams opened and reset"));
    // Client streams are odd: the last one the server processed is the
    // (id + 1) / 2th.
    let taken = end
        .as_ref()
        .and_then(|e| e.goaway.as_ref())
        .map_or(0, |g| g.last_stream().div_ceil(2));
    let cpu = cpu_before.zip(cpu_ticks(server.pid())).map(|(a, b)| b - a);
    eprintln!(
        "rapid reset: {sent} streams sent (opened and reset) in {:?}; GOAWAY code {code:#x} \
         after {taken} of them; server CPU {cpu:?} ticks",
        started.elapsed()
    );
    assert_eq!(code, ENHANCE_YOUR_CALM);
    assert!(sent < 10_000 && taken < 1_000, "{sent} sent, {taken} taken");
    if let Some(cpu) = cpu {
        assert!(cpu < 200, "the server used {cpu} ticks of CPU");
    }
    still_serves(&server, "a rapid reset");
}

/// The CONTINUATION flood (CVE-2024-27316 and its kin): a HEADERS frame
/// without END_HEADERS, then CONTINUATION frames without end, either
/// full 16 KiB ones carrying a header value declared 16 MiB long, or empty
/// ones. The server does not buffer it all: a header block may take as
/// many frames as the 32 KiB header list needs and a few more (five
/// CONTINUATION frames without END_HEADERS), then the server sends GOAWAY
/// and closes the connection, well before the 64 full frames (1 MiB) or
/// 200 empty ones the test would send.
#[test]
fn a_continuation_flood_is_cut_off_within_the_header_list_limit() {
    let ws = Workspace::new();
    site(&ws);
    let server = Server::start(&ws, &[]);
    let cpu_before = cpu_ticks(server.pid());

    // A header value that never ends: 16 MiB declared, 16 KiB a frame.
    let mut endless = request(ASSET, &[]);
    field_head(&mut endless, 0x00, "x-flood", 16 << 20);
    endless.resize(MAX_FRAME, b'a');
    let full = frame(CONTINUATION, 0, 1, &[b'a'; MAX_FRAME]);
    // A complete header block whose end is never marked.
    let empty = frame(CONTINUATION, 0, 1, &[]);
    for (what, first, next, max_frames) in [
        ("16 KiB CONTINUATION frames", &endless, &full, 64),
        (
            "empty CONTINUATION frames",
            &request(ASSET, &[]),
            &empty,
            200,
        ),
    ] {
        let mut c = H2::open(server.addr, &[]);
        c.settings();
        c.send(&frame(HEADERS, END_STREAM, 1, first))
            .expect("HEADERS");
        let (mut sent, mut frames, mut end) = (first.len() + 9, 0, None);
        let started = Instant::now();
        while end.is_none() && frames < max_frames && started.elapsed() < Duration::from_secs(20) {
            // One frame, then a moment for the server to answer, so that
            // `sent` is close to what the server read before it refused.
            if c.send(next).is_err() {
                end = ended(&mut c, Duration::from_secs(1), |_| {}).or(Some(Ended {
                    goaway: None,
                    closed: true,
                }));
                break;
            }
            sent += next.len();
            frames += 1;
            end = ended(&mut c, Duration::from_millis(50), |_| {});
        }
        let code = assert_sent_away(&end, what);
        eprintln!(
            "{what}: GOAWAY code {code:#x} after {frames} CONTINUATION frames, \
             {sent} bytes sent"
        );
        assert_eq!(code, ENHANCE_YOUR_CALM, "{what}");
        assert!(
            frames <= 16 && sent <= 256 << 10,
            "{what}: {frames} frames, {sent} bytes sent"
        );
    }
    let cpu = cpu_before.zip(cpu_ticks(server.pid())).map(|(a, b)| b - a);
    eprintln!("CONTINUATION floods: server CPU {cpu:?} ticks");
    if let Some(cpu) = cpu {
        assert!(cpu < 200, "the server used {cpu} ticks of CPU");
    }
    still_serves(&server, "a CONTINUATION flood");
}

/// SIGTERM drains an HTTP/2 connection: GOAWAY with NO_ERROR (first with
/// the largest stream id, then naming the last stream taken, RFC 9113
/// 6.8), the stream in flight is still answered in full, and the server
/// exits 0 once it is.
#[test]
fn a_drain_sends_goaway_and_finishes_the_stream_in_flight() {
    let ws = Workspace::new();
    site(&ws);
    let mut server = Server::start(&ws, &[]);
    // A client that takes no body yet (window 0): stream 1 stays in flight.
    let mut c = H2::open(server.addr, &[(INITIAL_WINDOW_SIZE, 0)]);
    c.send(&header_frames(1, &request(ASSET, &[]), true))
        .expect("request");
    std::thread::sleep(Duration::from_millis(300));
    crate::serve_util::sigterm(server.pid());
    let mut goaways = Vec::new();
    let mut status = None;
    let deadline = Instant::now() + Duration::from_secs(10);
    while goaways.is_empty() && Instant::now() < deadline {
        match c.next(Duration::from_millis(100)) {
            Got::Frame(f) if f.kind == GOAWAY => goaways.push(f),
            Got::Frame(f) if f.stream == 1 && f.kind == HEADERS => {
                status = self::status(&f.payload);
            }
            Got::Closed => panic!("closed without GOAWAY"),
            _ => {}
        }
    }
    assert!(!goaways.is_empty(), "no GOAWAY after SIGTERM");
    // The window opens: the stream in flight is answered in full.
    let mut open = frame(WINDOW_UPDATE, 0, 1, &(1u32 << 20).to_be_bytes());
    open.extend(frame(WINDOW_UPDATE, 0, 0, &(1u32 << 20).to_be_bytes()));
    c.send(&open).expect("window update");
    let mut body = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        assert!(Instant::now() < deadline, "stream 1 not finished");
        match c.next(Duration::from_millis(100)) {
            Got::Frame(f) if f.kind == GOAWAY => goaways.push(f),
            Got::Frame(f) if f.stream == 1 && f.kind == HEADERS => {
                status = self::status(&f.payload)
            }
            Got::Frame(f) if f.stream == 1 && f.kind == DATA => {
                body.extend(&f.payload);
                if f.flags & END_STREAM != 0 {
                    break;
                }
            }
            Got::Frame(f) if f.stream == 1 && f.kind == RST_STREAM => panic!("{f:?}"),
            Got::Closed => panic!("closed before stream 1 finished"),
            _ => {}
        }
    }
    assert_eq!((status, body), (Some(200), BODY.to_vec()));
    for goaway in &goaways {
        assert_eq!(goaway.code(), NO_ERROR, "{goaway:?}");
        assert!(goaway.last_stream() >= 1, "{goaway:?}");
    }
    let exit = server
        .wait_exit(Duration::from_secs(20))
        .expect("the server exits");
    assert_eq!(exit.code(), Some(0), "{}", server.stderr());
}
