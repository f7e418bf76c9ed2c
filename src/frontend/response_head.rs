//! Response heads as bytes: header lines built once ([`HeaderLines`]),
//! and the head printed around them per response, with only what varies
//! (the status line's version, `Date`, `Content-Length`, `Connection`).
//!
//! A cached asset keeps its lines for as long as it is cached, so a
//! response copies them once into its head and formats two numbers and a
//! date that changes once a second; nothing is validated or allocated per
//! line. Values are checked once, when a line is added. A worker prints
//! its heads into one buffer it keeps ([`print_head_into`]), so a response
//! that the socket takes at once allocates nothing for its head.

use std::cell::RefCell;
use std::time::{SystemTime, UNIX_EPOCH};

/// Header lines, each `Name: value\r\n`, in the order added.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HeaderLines(Vec<u8>);

impl HeaderLines {
    pub fn new() -> HeaderLines {
        // An asset's nine lines take about 350 bytes.
        HeaderLines(Vec::with_capacity(512))
    }

    /// Adds a line. A name that is not a token, or a value with a control
    /// character or a byte outside ASCII, is left out rather than sent:
    /// names and values come from ccc and the catalog, and such a value
    /// would be a bug (a CR or LF in it would split the head).
    pub fn push(&mut self, name: &str, value: &str) -> &mut HeaderLines {
        let name_ok = !name.is_empty() && name.bytes().all(is_token_byte);
        let value_ok = value
            .bytes()
            .all(|b| b == b'\t' || (b' '..=b'~').contains(&b));
        if name_ok && value_ok {
            self.0.extend_from_slice(name.as_bytes());
            self.0.extend_from_slice(b": ");
            self.0.extend_from_slice(value.as_bytes());
            self.0.extend_from_slice(b"\r\n");
        }
        self
    }

    /// Lines from names and values.
    pub fn of<'a>(lines: impl IntoIterator<Item = (&'a str, &'a str)>) -> HeaderLines {
        let mut out = HeaderLines::new();
        for (name, value) in lines {
            out.push(name, value);
        }
        out
    }

    /// The value of the first line named `name` (any case).
    pub fn get(&self, name: &str) -> Option<&str> {
        self.iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v)
    }

    /// Removes every line, keeping the room (for a buffer that is reused).
    pub fn clear(&mut self) {
        self.0.clear();
    }

    /// The lines in an allocation of their exact size, for lines kept a
    /// long time (an asset's prepared responses, charged to the cache).
    /// A fresh allocation rather than shrinking in place: a shrink splits
    /// the block and leaves a small free piece beside long-lived data,
    /// which fragments glibc's heap under a cache that turns over.
    pub fn to_exact(&self) -> HeaderLines {
        HeaderLines(self.0.as_slice().to_vec())
    }

    /// The heap bytes the lines hold (their capacity).
    pub fn capacity(&self) -> usize {
        self.0.capacity()
    }

    /// Every line as (name, value).
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        // Only ASCII lines were added, so the bytes are UTF-8.
        std::str::from_utf8(&self.0)
            .unwrap_or_default()
            .split_terminator("\r\n")
            .filter_map(|line| line.split_once(": "))
    }
}

/// RFC 9110 5.6.2: the characters of a token (a header name).
fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

impl AsRef<[u8]> for HeaderLines {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

/// A whole response head: status line, `Date`, the given lines,
/// `Content-Length` and, when given, `Connection`, then the empty line.
/// `Content-Length` is sent with every status that has content (with a
/// HEAD or a 304 it is the length a GET would get), so no response is
/// ever chunked.
pub fn print_head(
    status: u16,
    minor: u8,
    lines: &[u8],
    length: usize,
    connection: Option<&str>,
) -> Vec<u8> {
    let mut head = Vec::new();
    print_head_into(&mut head, status, minor, lines, length, connection);
    head
}

/// [`print_head`], appended to `head`: a worker prints every head into
/// the same buffer.
pub fn print_head_into(
    head: &mut Vec<u8>,
    status: u16,
    minor: u8,
    lines: &[u8],
    length: usize,
    connection: Option<&str>,
) {
    let reason = tiny_http::StatusCode(status).default_reason_phrase();
    // The status line, `Date` and the two last lines take under 120 bytes.
    head.reserve(lines.len() + reason.len() + 120);
    head.extend_from_slice(if minor == 0 {
        b"HTTP/1.0 "
    } else {
        b"HTTP/1.1 "
    });
    push_decimal(head, u64::from(status));
    head.push(b' ');
    head.extend_from_slice(reason.as_bytes());
    head.extend_from_slice(b"\r\nDate: ");
    push_date(head);
    head.extend_from_slice(b"\r\n");
    head.extend_from_slice(lines);
    // RFC 9110 8.6: none on a 1xx or a 204, which have no content.
    if !matches!(status, 100..=199 | 204) {
        head.extend_from_slice(b"Content-Length: ");
        push_decimal(head, length as u64);
        head.extend_from_slice(b"\r\n");
    }
    if let Some(value) = connection {
        head.extend_from_slice(b"Connection: ");
        head.extend_from_slice(value.as_bytes());
        head.extend_from_slice(b"\r\n");
    }
    head.extend_from_slice(b"\r\n");
}

fn push_decimal(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[at..]);
}

/// The `Date` value, formatted once a second per thread.
fn push_date(out: &mut Vec<u8>) {
    thread_local! {
        static DATE: RefCell<(u64, String)> = const { RefCell::new((u64::MAX, String::new())) };
    }
    let now = SystemTime::now();
    let second = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    DATE.with_borrow_mut(|(at, text)| {
        if *at != second {
            *at = second;
            *text = httpdate::fmt_http_date(now);
        }
        out.extend_from_slice(text.as_bytes());
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_refuse_what_would_break_the_head() {
        let mut lines = HeaderLines::new();
        lines
            .push("Content-Type", "text/plain")
            .push("X-Split", "a\r\nSet-Cookie: x=1")
            .push("X-Utf8", "é")
            .push("Bad Name", "x")
            .push("Vary", "Accept-Encoding");
        assert_eq!(
            lines.as_ref(),
            b"Content-Type: text/plain\r\nVary: Accept-Encoding\r\n"
        );
        assert_eq!(lines.get("vary"), Some("Accept-Encoding"));
        assert_eq!(lines.get("X-Split"), None);
    }

    #[test]
    fn a_head_as_clients_read_it() {
        let lines = HeaderLines::of([("Server", "ccc/1"), ("ETag", "\"x\"")]);
        let head = print_head(304, 1, lines.as_ref(), 1234, Some("close"));
        let text = String::from_utf8(head).unwrap();
        let (date, rest) = text
            .strip_prefix("HTTP/1.1 304 Not Modified\r\nDate: ")
            .and_then(|t| t.split_once("\r\n"))
            .unwrap();
        assert!(httpdate::parse_http_date(date).is_ok(), "{date}");
        assert_eq!(
            rest,
            "Server: ccc/1\r\nETag: \"x\"\r\nContent-Length: 1234\r\nConnection: close\r\n\r\n"
        );
        let head = print_head(200, 0, b"", 0, None);
        assert!(head.starts_with(b"HTTP/1.0 200 OK\r\n"));
        assert!(head.ends_with(b"\r\nContent-Length: 0\r\n\r\n"));
        let head = print_head(204, 1, b"", 0, None);
        assert!(!String::from_utf8(head).unwrap().contains("Content-Length"));
    }

    #[test]
    fn a_head_printed_into_a_kept_buffer_is_appended() {
        let mut buffer = b"earlier".to_vec();
        print_head_into(&mut buffer, 404, 1, b"Server: ccc/1\r\n", 9, None);
        assert!(buffer.starts_with(b"earlierHTTP/1.1 404 Not Found\r\nDate: "));
        assert!(buffer.ends_with(b"\r\nServer: ccc/1\r\nContent-Length: 9\r\n\r\n"));
        let first = buffer.len();
        print_head_into(&mut buffer, 200, 0, b"", 0, Some("keep-alive"));
        assert!(buffer[first..].starts_with(b"HTTP/1.0 200 OK\r\n"));
        assert!(buffer.ends_with(b"Content-Length: 0\r\nConnection: keep-alive\r\n\r\n"));
    }
}
