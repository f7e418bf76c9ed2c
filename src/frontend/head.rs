//! Request heads: parsed by `httparse` from the bytes received so far, held
//! to the size limits of [`super::limits`] before they are complete, so a
//! client can never make the server buffer more than [`MAX_HEAD`] bytes of
//! head. Pure functions over byte slices, tested without sockets.
//!
//! RFC 9112 2.2: leading empty lines before a request line are ignored
//! (httparse does it); section 6.3 decides how a body is framed.

use super::limits::{MAX_HEAD, MAX_HEADER_LINE, MAX_HEADERS, MAX_REQUEST_LINE};
use std::ops::Range;

/// What the bytes received so far amount to.
#[derive(Debug)]
pub enum Parse {
    /// A complete head, and how many bytes of the input it took.
    Complete(Head, usize),
    /// Not complete yet, and within the limits: read more.
    Incomplete,
    /// Refused: answer and close.
    Reject(Reject),
}

/// Why a head, or the request it starts, is refused. Each is answered
/// with its status, then the connection is closed (the rest of the input
/// cannot be trusted to start a request).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reject {
    /// 400: not HTTP/1.x, or a malformed head.
    BadRequest(&'static str),
    /// 414: the request line is longer than [`MAX_REQUEST_LINE`].
    UriTooLong,
    /// 431: a header line, the head or the header count is over its limit.
    HeadersTooLarge(&'static str),
    /// 413: a body larger than the server throws away.
    ContentTooLarge,
}

impl Reject {
    pub fn status(self) -> u16 {
        match self {
            Reject::BadRequest(_) => 400,
            Reject::UriTooLong => 414,
            Reject::HeadersTooLarge(_) => 431,
            Reject::ContentTooLarge => 413,
        }
    }

    /// The `error` text of the JSON body.
    pub fn detail(self) -> &'static str {
        match self {
            Reject::BadRequest(why) | Reject::HeadersTooLarge(why) => why,
            Reject::UriTooLong => "the request line is longer than 8 KiB",
            Reject::ContentTooLarge => "a request body over 1 MiB is not accepted",
        }
    }
}

/// A complete request head, owned (it travels to a worker), with the
/// positions of its parts.
#[derive(Debug)]
pub struct Head {
    bytes: Box<[u8]>,
    method: Range<usize>,
    target: Range<usize>,
    /// 0 for HTTP/1.0, 1 for HTTP/1.1.
    pub minor: u8,
    headers: Vec<(Range<usize>, Range<usize>)>,
}

/// How the request's body is framed (RFC 9112 6.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// No body.
    None,
    /// `Content-Length` bytes follow the head.
    Length(u64),
    /// A `Transfer-Encoding` body: its end is not known without decoding it.
    Encoded,
}

impl Head {
    pub fn method(&self) -> &str {
        self.text(&self.method).unwrap_or_default()
    }

    pub fn target(&self) -> &str {
        self.text(&self.target).unwrap_or_default()
    }

    /// The values of every header named `name` (any case), in order;
    /// values that are not UTF-8 are left out.
    pub fn values<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.headers
            .iter()
            .filter(move |(n, _)| self.bytes[n.clone()].eq_ignore_ascii_case(name.as_bytes()))
            .filter_map(|(_, v)| self.text(v))
    }

    /// The first value of the header named `name` (any case), as sent.
    pub fn raw_value(&self, name: &str) -> Option<&[u8]> {
        self.headers
            .iter()
            .find(|(n, _)| self.bytes[n.clone()].eq_ignore_ascii_case(name.as_bytes()))
            .map(|(_, v)| &self.bytes[v.clone()])
    }

    /// Whether a comma-separated header (like `Connection`) lists `token`.
    pub fn has_token(&self, name: &str, token: &str) -> bool {
        self.values(name)
            .flat_map(|v| v.split(','))
            .any(|t| t.trim().eq_ignore_ascii_case(token))
    }

    /// RFC 9112 9.3: HTTP/1.1 keeps the connection unless `close`; HTTP/1.0
    /// only with `keep-alive`.
    pub fn keep_alive(&self) -> bool {
        if self.has_token("Connection", "close") {
            false
        } else {
            self.minor >= 1 || self.has_token("Connection", "keep-alive")
        }
    }

    /// The body's framing, or 400 for a `Content-Length` that is not one
    /// number, or that comes with a `Transfer-Encoding` (RFC 9112 6.3: a
    /// request smuggling vector).
    pub fn framing(&self) -> Result<Framing, Reject> {
        let encoded = self.values("Transfer-Encoding").next().is_some();
        let mut length = None;
        for value in self.values("Content-Length") {
            for part in value.split(',') {
                let part = part.trim();
                let n = (!part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()))
                    .then(|| part.parse::<u64>().ok())
                    .flatten()
                    .ok_or(Reject::BadRequest("invalid Content-Length"))?;
                if length.is_some_and(|l| l != n) {
                    return Err(Reject::BadRequest("conflicting Content-Length values"));
                }
                length = Some(n);
            }
        }
        match (encoded, length) {
            (true, Some(_)) => Err(Reject::BadRequest(
                "Content-Length and Transfer-Encoding together",
            )),
            (true, None) => Ok(Framing::Encoded),
            (false, Some(0) | None) => Ok(Framing::None),
            (false, Some(n)) => Ok(Framing::Length(n)),
        }
    }

    fn text(&self, range: &Range<usize>) -> Option<&str> {
        std::str::from_utf8(&self.bytes[range.clone()]).ok()
    }
}

/// Parses the start of `input`: a complete head, a need for more bytes, or
/// a refusal. Limits are checked on incomplete input too, so a head over a
/// limit is refused as soon as the excess arrives.
pub fn parse(input: &[u8]) -> Parse {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut headers);
    let parsed = request.parse(input);
    let complete = match parsed {
        Ok(httparse::Status::Complete(n)) => Some(n),
        Ok(httparse::Status::Partial) => None,
        Err(httparse::Error::TooManyHeaders) => {
            return Parse::Reject(Reject::HeadersTooLarge("more than 100 header lines"));
        }
        Err(e) => {
            // A request line too long to be anything but too long is
            // answered for its length, whatever httparse thinks of it.
            if let Some(reject) = over_limits(input) {
                return Parse::Reject(reject);
            }
            return Parse::Reject(Reject::BadRequest(bad_request(e)));
        }
    };
    let head_len = complete.unwrap_or(input.len());
    if let Some(reject) = over_limits(&input[..head_len]) {
        return Parse::Reject(reject);
    }
    let Some(n) = complete else {
        return Parse::Incomplete;
    };
    let base = input.as_ptr() as usize;
    let span = |s: &[u8]| {
        let start = s.as_ptr() as usize - base;
        start..start + s.len()
    };
    let method = request.method.map(|m| span(m.as_bytes())).unwrap_or(0..0);
    let target = request.path.map(|p| span(p.as_bytes())).unwrap_or(0..0);
    let minor = request.version.unwrap_or(1);
    let headers = request
        .headers
        .iter()
        .map(|h| (span(h.name.as_bytes()), span(h.value)))
        .collect();
    Parse::Complete(
        Head {
            bytes: input[..n].into(),
            method,
            target,
            minor,
            headers,
        },
        n,
    )
}

/// The limits, checked on a head or the start of one. Heads under 8 KiB
/// (all but hostile ones) pass without a scan.
fn over_limits(head: &[u8]) -> Option<Reject> {
    if head.len() <= MAX_REQUEST_LINE.min(MAX_HEADER_LINE) {
        return None;
    }
    // Leading empty lines are not the request line.
    let start = head
        .iter()
        .position(|b| !matches!(b, b'\r' | b'\n'))
        .unwrap_or(head.len());
    let mut lines = head[start..].split(|b| *b == b'\n');
    if lines.next().is_some_and(|l| l.len() > MAX_REQUEST_LINE) {
        return Some(Reject::UriTooLong);
    }
    if lines.any(|l| l.len() > MAX_HEADER_LINE) {
        return Some(Reject::HeadersTooLarge(
            "a header line is longer than 8 KiB",
        ));
    }
    (head.len() >= MAX_HEAD).then_some(Reject::HeadersTooLarge(
        "the request head is larger than 32 KiB",
    ))
}

fn bad_request(e: httparse::Error) -> &'static str {
    match e {
        httparse::Error::Version => "not an HTTP/1.0 or HTTP/1.1 request",
        httparse::Error::HeaderName | httparse::Error::HeaderValue => "malformed header",
        _ => "malformed request line",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn complete(input: &[u8]) -> (Head, usize) {
        match parse(input) {
            Parse::Complete(head, n) => (head, n),
            other => panic!("{other:?} for {:?}", String::from_utf8_lossy(input)),
        }
    }

    fn rejected(input: &[u8]) -> Reject {
        match parse(input) {
            Parse::Reject(r) => r,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_head_and_what_follows() {
        let input = b"\r\nGET /a?b HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\naccept-encoding: br\r\n\r\nGET /next";
        let (head, n) = complete(input);
        assert_eq!(&input[n..], b"GET /next");
        assert_eq!(
            (head.method(), head.target(), head.minor),
            ("GET", "/a?b", 1)
        );
        let ae: Vec<_> = head.values("ACCEPT-ENCODING").collect();
        assert_eq!(ae, ["gzip", "br"]);
        assert!(head.keep_alive());
        assert_eq!(head.framing(), Ok(Framing::None));
    }

    #[test]
    fn partial_heads_ask_for_more() {
        for cut in [0, 1, 5, 20, 26] {
            let input = &b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"[..cut];
            assert!(matches!(parse(input), Parse::Incomplete), "{cut}");
        }
    }

    #[test]
    fn keep_alive_by_version_and_connection() {
        let ka = |head: &[u8]| complete(head).0.keep_alive();
        assert!(!ka(b"GET / HTTP/1.0\r\n\r\n"));
        assert!(ka(b"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n"));
        assert!(!ka(b"GET / HTTP/1.1\r\nConnection: foo, close\r\n\r\n"));
        assert!(ka(b"GET / HTTP/1.1\r\nConnection: keep-alive\r\n\r\n"));
    }

    #[test]
    fn body_framing() {
        let framing = |h: &str| {
            complete(format!("GET / HTTP/1.1\r\n{h}\r\n\r\n").as_bytes())
                .0
                .framing()
        };
        assert_eq!(framing("Content-Length: 0"), Ok(Framing::None));
        assert_eq!(framing("Content-Length: 12"), Ok(Framing::Length(12)));
        assert_eq!(framing("Content-Length: 12, 12"), Ok(Framing::Length(12)));
        assert_eq!(framing("Transfer-Encoding: chunked"), Ok(Framing::Encoded));
        for bad in [
            "Content-Length: -1",
            "Content-Length: 1e3",
            "Content-Length: 99999999999999999999999",
            "Content-Length: 1, 2",
            "Content-Length: +5",
            "Content-Length: 5\r\nTransfer-Encoding: chunked",
        ] {
            assert_eq!(framing(bad).map_err(Reject::status), Err(400), "{bad}");
        }
    }

    #[test]
    fn the_request_line_is_limited_to_8_kib() {
        let line = |len: usize| format!("GET /{} HTTP/1.1", "a".repeat(len - 14));
        assert_eq!(line(MAX_REQUEST_LINE).len(), MAX_REQUEST_LINE);
        let ok = format!("{}\r\n\r\n", line(MAX_REQUEST_LINE - 1));
        complete(ok.as_bytes());
        let long = format!("{}\r\n\r\n", line(MAX_REQUEST_LINE + 1));
        assert_eq!(rejected(long.as_bytes()), Reject::UriTooLong);
        // Refused before the line is even complete.
        let partial = format!("GET /{}", "a".repeat(MAX_REQUEST_LINE));
        assert_eq!(rejected(partial.as_bytes()), Reject::UriTooLong);
    }

    #[test]
    fn header_lines_count_and_total_are_limited() {
        let with = |headers: &str| format!("GET / HTTP/1.1\r\n{headers}\r\n");
        let long_line = format!("X-Big: {}\r\n", "v".repeat(MAX_HEADER_LINE));
        assert_eq!(rejected(with(&long_line).as_bytes()).status(), 431);
        // Refused while the line is still arriving.
        let arriving = format!("GET / HTTP/1.1\r\nX-Big: {}", "v".repeat(MAX_HEADER_LINE));
        assert_eq!(rejected(arriving.as_bytes()).status(), 431);
        let many: String = (0..=MAX_HEADERS).map(|i| format!("X-{i}: 1\r\n")).collect();
        assert_eq!(rejected(with(&many).as_bytes()).status(), 431);
        let fits: String = (0..MAX_HEADERS).map(|i| format!("X-{i}: 1\r\n")).collect();
        complete(with(&fits).as_bytes());
        // Five 7 KiB lines: each within its limit, the head over 32 KiB.
        let line7k = format!("X-Seven: {}\r\n", "v".repeat(7 * 1024));
        let total = with(&line7k.repeat(5));
        assert_eq!(rejected(total.as_bytes()).status(), 431);
        assert_eq!(
            rejected(&total.as_bytes()[..MAX_HEAD]).status(),
            431,
            "refused at 32 KiB, before the end"
        );
    }

    #[test]
    fn bytes_that_are_not_http_are_bad_requests() {
        for junk in [
            &b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03"[..],
            b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
            b"GET / HTTP/1.1\r\nno colon here\r\n\r\n",
            b"GET / FTP/1.0\r\n\r\n",
            b"hello world\r\n\r\n",
        ] {
            assert_eq!(
                rejected(junk).status(),
                400,
                "{:?}",
                String::from_utf8_lossy(junk)
            );
        }
    }
}
