//! A hand-written HTTP/2 client, frame by frame: what the tests of
//! serve's HTTP/2 limits and the attacks need, since a library client
//! refuses to send what they send (no window, floods, malformed heads).
//! Cleartext with prior knowledge, to 127.0.0.1 only; every read is
//! bounded in time.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// Frame types (RFC 9113 section 6).
pub const DATA: u8 = 0x0;
pub const HEADERS: u8 = 0x1;
pub const RST_STREAM: u8 = 0x3;
pub const SETTINGS: u8 = 0x4;
pub const PING: u8 = 0x6;
pub const GOAWAY: u8 = 0x7;
pub const WINDOW_UPDATE: u8 = 0x8;
pub const CONTINUATION: u8 = 0x9;

/// Frame flags.
pub const END_STREAM: u8 = 0x1;
pub const ACK: u8 = 0x1;
pub const END_HEADERS: u8 = 0x4;

/// Settings (RFC 9113 section 6.5.2).
pub const HEADER_TABLE_SIZE: u16 = 0x1;
pub const MAX_CONCURRENT_STREAMS: u16 = 0x3;
pub const INITIAL_WINDOW_SIZE: u16 = 0x4;
pub const MAX_HEADER_LIST_SIZE: u16 = 0x6;

/// Error codes (RFC 9113 section 7).
pub const NO_ERROR: u32 = 0x0;
pub const REFUSED_STREAM: u32 = 0x7;
pub const CANCEL: u32 = 0x8;
pub const ENHANCE_YOUR_CALM: u32 = 0xb;

/// The largest frame payload a peer must accept (the server keeps it).
pub const MAX_FRAME: usize = 16 * 1024;

/// One frame: 9-byte header (24-bit length, type, flags, 31-bit stream id)
/// and its payload.
pub fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    assert!(payload.len() < 1 << 24, "a frame's length has 24 bits");
    let mut out = (payload.len() as u32).to_be_bytes()[1..].to_vec();
    out.extend_from_slice(&[kind, flags]);
    out.extend_from_slice(&stream.to_be_bytes());
    out.extend_from_slice(payload);
    out
}

/// A SETTINGS frame with `pairs` (identifier, value).
pub fn settings(pairs: &[(u16, u32)]) -> Vec<u8> {
    let payload: Vec<u8> = pairs
        .iter()
        .flat_map(|(id, value)| [&id.to_be_bytes()[..], &value.to_be_bytes()].concat())
        .collect();
    frame(SETTINGS, 0, 0, &payload)
}

pub fn rst_stream(stream: u32, code: u32) -> Vec<u8> {
    frame(RST_STREAM, 0, stream, &code.to_be_bytes())
}

/// Appends `value` as an HPACK integer (RFC 7541 section 5.1): a `prefix`
/// bit prefix in a first byte that carries `flags` above it.
pub fn hpack_int(out: &mut Vec<u8>, flags: u8, prefix: u32, value: usize) {
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
pub fn read_hpack_int(bytes: &[u8], prefix: u32) -> Option<(usize, usize)> {
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
pub fn field_head(out: &mut Vec<u8>, kind: u8, name: &str, value_len: usize) {
    out.push(kind);
    hpack_int(out, 0, 7, name.len());
    out.extend_from_slice(name.as_bytes());
    hpack_int(out, 0, 7, value_len);
}

/// Appends a literal header field without indexing.
pub fn literal(out: &mut Vec<u8>, name: &str, value: &[u8]) {
    field_head(out, 0x00, name, value.len());
    out.extend_from_slice(value);
}

/// The header block of `GET path` with `extra` header fields.
pub fn request(path: &str, extra: &[(&str, &[u8])]) -> Vec<u8> {
    request_with(
        &[
            (":method", "GET"),
            (":scheme", "http"),
            (":authority", "127.0.0.1"),
            (":path", path),
        ],
        extra,
    )
}

/// The header block of the pseudo-header fields `pseudo` (as given: a
/// test may leave one out or send one the server must refuse) and `extra`.
pub fn request_with(pseudo: &[(&str, &str)], extra: &[(&str, &[u8])]) -> Vec<u8> {
    let mut block = Vec::new();
    for (name, value) in pseudo {
        literal(&mut block, name, value.as_bytes());
    }
    for (name, value) in extra {
        literal(&mut block, name, value);
    }
    block
}

/// `block` as a HEADERS frame and as many CONTINUATION frames as it needs.
pub fn header_frames(stream: u32, block: &[u8], end_stream: bool) -> Vec<u8> {
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
pub fn huffman_digits(bytes: &[u8]) -> Option<String> {
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
pub fn status(block: &[u8]) -> Option<u16> {
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
pub struct Frame {
    pub kind: u8,
    pub flags: u8,
    pub stream: u32,
    pub payload: Vec<u8>,
}

impl Frame {
    /// The error code of a RST_STREAM, or of a GOAWAY.
    pub fn code(&self) -> u32 {
        let at = if self.kind == GOAWAY { 4 } else { 0 };
        u32::from_be_bytes(self.payload[at..at + 4].try_into().expect("4 bytes"))
    }

    /// A GOAWAY's last stream id: the last stream the server processed.
    pub fn last_stream(&self) -> u32 {
        u32::from_be_bytes(self.payload[..4].try_into().expect("4 bytes")) & 0x7fff_ffff
    }
}

/// What waiting for the server's next frame gave.
#[derive(Debug)]
pub enum Got {
    Frame(Frame),
    /// Nothing within the wait.
    Quiet,
    /// The connection was closed (or reset).
    Closed,
}

/// A client connection: the preface and SETTINGS sent, frames read back
/// one at a time, the server's SETTINGS and PINGs acknowledged as they come.
pub struct H2 {
    pub tcp: TcpStream,
    pub buf: Vec<u8>,
    /// The server's first SETTINGS, once read.
    pub server_settings: Option<Vec<(u16, u32)>>,
}

impl H2 {
    /// Connects and sends the preface with `pairs` as the client's
    /// settings, plus HEADER_TABLE_SIZE 0 (so responses are easy to read,
    /// see [`status`]).
    pub fn open(addr: SocketAddr, pairs: &[(u16, u32)]) -> H2 {
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

    pub fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.tcp.write_all(bytes)
    }

    /// The next frame, waiting up to `wait` for it.
    pub fn next(&mut self, wait: Duration) -> Got {
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
    pub fn pop(&mut self) -> Option<Frame> {
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
    pub fn settings(&mut self) -> Vec<(u16, u32)> {
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
    pub fn closes(&mut self) -> bool {
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Got::Closed = self.next(Duration::from_millis(100)) {
                return true;
            }
        }
        false
    }
}

pub fn frame_ack(kind: u8, payload: &[u8]) -> Vec<u8> {
    frame(kind, ACK, 0, payload)
}

/// The value of setting `id` among `pairs`.
pub fn setting(pairs: &[(u16, u32)], id: u16) -> Option<u32> {
    pairs.iter().find(|(i, _)| *i == id).map(|(_, v)| *v)
}

/// The answer on `stream` (status and body), or what came instead: a
/// RST_STREAM or GOAWAY, the connection closed, nothing within 10 s.
pub fn answer(c: &mut H2, stream: u32) -> Result<(u16, Vec<u8>), String> {
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
pub fn h2_get(addr: SocketAddr, path: &str) -> Result<(u16, Vec<u8>), String> {
    let mut c = H2::open(addr, &[]);
    c.send(&header_frames(1, &request(path, &[]), true))
        .map_err(|e| format!("sending: {e}"))?;
    answer(&mut c, 1)
}
