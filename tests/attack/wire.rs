//! The smallest honest HTTP/1.1 client the kit needs: one request written by
//! hand, one response read off the socket with its framing checked
//! (`Content-Length`, chunked, or until close). Attacks need bytes no
//! library would send, and the probe must see refused connections, resets
//! and stale keep-alive connections as what they are, so both speak the
//! protocol themselves.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// The longest response head the kit accepts.
const MAX_HEAD: usize = 64 << 10;
/// The longest body the kit reads into memory.
const MAX_BODY: usize = 256 << 20;

/// A response read off the wire.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    /// Names lowercased, in order.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// The server said it closes the connection after this response.
    pub close: bool,
}

impl Response {
    /// The first header called `name` (lowercase).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// How reading a response ended when it did not end well.
#[derive(Debug)]
pub enum ReadError {
    /// The connection closed before the first byte of the answer.
    ClosedBeforeAnswer,
    /// The socket failed or timed out (the kind tells which).
    Io(io::Error),
    /// The bytes are not an HTTP/1.1 response, or it was cut short.
    Malformed(String),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::ClosedBeforeAnswer => write!(f, "closed before answering"),
            ReadError::Io(e) => write!(f, "{e}"),
            ReadError::Malformed(why) => write!(f, "malformed response: {why}"),
        }
    }
}

impl ReadError {
    pub fn is_timeout(&self) -> bool {
        matches!(self, ReadError::Io(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut))
    }
}

impl From<io::Error> for ReadError {
    fn from(e: io::Error) -> ReadError {
        ReadError::Io(e)
    }
}

/// Connects with `timeout` on connect, read and write.
pub fn connect(addr: SocketAddr, timeout: Duration) -> io::Result<TcpStream> {
    let stream = TcpStream::connect_timeout(&addr, timeout)?;
    stream.set_read_timeout(Some(timeout))?;
    stream.set_write_timeout(Some(timeout))?;
    stream.set_nodelay(true)?;
    Ok(stream)
}

/// `GET target HTTP/1.1` with a Host header and `extra` header lines.
pub fn get_request(addr: SocketAddr, target: &str, extra: &[&str]) -> Vec<u8> {
    let mut head = format!("GET {target} HTTP/1.1\r\nHost: {addr}\r\n");
    for line in extra {
        head.push_str(line);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    head.into_bytes()
}

/// A keep-alive connection: a stream and the reader that buffers it.
pub struct Conn {
    reader: BufReader<TcpStream>,
    /// Responses read on this connection so far.
    pub answered: u32,
}

impl Conn {
    pub fn open(addr: SocketAddr, timeout: Duration) -> io::Result<Conn> {
        Ok(Conn {
            reader: BufReader::new(connect(addr, timeout)?),
            answered: 0,
        })
    }

    pub fn send(&mut self, request: &[u8]) -> io::Result<()> {
        self.reader.get_mut().write_all(request)
    }

    /// Reads one response; `head_only` for answers to HEAD.
    pub fn read(&mut self, head_only: bool) -> Result<Response, ReadError> {
        let response = read_response(&mut self.reader, head_only)?;
        self.answered += 1;
        Ok(response)
    }
}

/// Reads one response from `reader`.
pub fn read_response(reader: &mut impl BufRead, head_only: bool) -> Result<Response, ReadError> {
    let mut line = String::new();
    if reader.read_line(&mut line)? == 0 {
        return Err(ReadError::ClosedBeforeAnswer);
    }
    let status_line = line.trim_end().to_string();
    let mut parts = status_line.splitn(3, ' ');
    let version = parts.next().unwrap_or("");
    if !version.starts_with("HTTP/1.") {
        return Err(ReadError::Malformed(format!("status line {status_line:?}")));
    }
    let status: u16 = parts
        .next()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| ReadError::Malformed(format!("status line {status_line:?}")))?;
    let mut headers = Vec::new();
    let mut head_bytes = line.len();
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            return Err(ReadError::Malformed("the head was cut short".into()));
        }
        head_bytes += line.len();
        if head_bytes > MAX_HEAD {
            return Err(ReadError::Malformed("the head is too long".into()));
        }
        let text = line.trim_end();
        if text.is_empty() {
            break;
        }
        let Some((name, value)) = text.split_once(':') else {
            return Err(ReadError::Malformed(format!("header line {text:?}")));
        };
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
    }
    let mut response = Response {
        status,
        headers,
        body: Vec::new(),
        close: version == "HTTP/1.0",
    };
    if let Some(connection) = response.header("connection") {
        let connection = connection.to_ascii_lowercase();
        response.close = connection.contains("close")
            || (version == "HTTP/1.0" && !connection.contains("keep-alive"));
    }
    // RFC 9112 6.3: no body after HEAD, 1xx, 204 or 304 whatever the
    // headers say.
    if head_only || status < 200 || status == 204 || status == 304 {
        return Ok(response);
    }
    let chunked = response
        .header("transfer-encoding")
        .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
    if chunked {
        response.body = read_chunked(reader)?;
    } else if let Some(length) = response.header("content-length") {
        let length: usize = length
            .parse()
            .map_err(|_| ReadError::Malformed(format!("Content-Length {length:?}")))?;
        if length > MAX_BODY {
            return Err(ReadError::Malformed(format!("a body of {length} bytes")));
        }
        response.body = vec![0; length];
        reader.read_exact(&mut response.body).map_err(cut_short)?;
    } else {
        reader
            .take(MAX_BODY as u64)
            .read_to_end(&mut response.body)?;
        response.close = true;
    }
    Ok(response)
}

fn cut_short(e: io::Error) -> ReadError {
    if e.kind() == io::ErrorKind::UnexpectedEof {
        ReadError::Malformed("the body was cut short".into())
    } else {
        ReadError::Io(e)
    }
}

fn read_chunked(reader: &mut impl BufRead) -> Result<Vec<u8>, ReadError> {
    let mut body = Vec::new();
    let mut line = String::new();
    loop {
        line.clear();
        reader.read_line(&mut line)?;
        let size = line.trim_end().split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size, 16)
            .map_err(|_| ReadError::Malformed(format!("chunk size {line:?}")))?;
        if size == 0 {
            // Trailer fields, then the blank line.
            loop {
                line.clear();
                if reader.read_line(&mut line)? == 0 || line.trim_end().is_empty() {
                    return Ok(body);
                }
            }
        }
        if body.len() + size > MAX_BODY {
            return Err(ReadError::Malformed("a chunked body too large".into()));
        }
        let start = body.len();
        body.resize(start + size, 0);
        reader.read_exact(&mut body[start..]).map_err(cut_short)?;
        let mut crlf = [0; 2];
        reader.read_exact(&mut crlf).map_err(cut_short)?;
    }
}

/// The status of whatever answer starts `bytes`, if it is one.
pub fn status_of(bytes: &[u8]) -> Option<u16> {
    let text = std::str::from_utf8(bytes.get(..12)?).ok()?;
    text.strip_prefix("HTTP/1.")?.get(2..5)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_by_length_and_chunks() {
        let wire = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabcHTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n2\r\nxy\r\n1\r\nz\r\n0\r\n\r\n";
        let mut reader = &wire[..];
        let first = read_response(&mut reader, false).expect("first");
        assert_eq!(
            (first.status, &first.body[..], first.close),
            (200, &b"abc"[..], false)
        );
        let second = read_response(&mut reader, false).expect("second");
        assert_eq!(
            (second.status, &second.body[..], second.close),
            (404, &b"xyz"[..], true)
        );
        assert!(matches!(
            read_response(&mut reader, false),
            Err(ReadError::ClosedBeforeAnswer)
        ));
    }

    #[test]
    fn a_short_body_is_malformed() {
        let wire = b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc";
        assert!(matches!(
            read_response(&mut &wire[..], false),
            Err(ReadError::Malformed(_))
        ));
        assert_eq!(status_of(b"HTTP/1.1 431 Too Large\r\n"), Some(431));
        assert_eq!(status_of(b"SSH-2.0"), None);
    }
}
