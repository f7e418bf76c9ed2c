//! The line `serve --access-log` prints for each request, in the format
//! `--log-format` names, made in one function ([`line()`]).
//!
//! `combined` is nginx's default `combined` format, field for field, with
//! `$request_time` after it, as nginx configurations that time requests
//! write it; the tools that read nginx logs (GoAccess, awstats, fail2ban,
//! lnav) read the combined fields, and GoAccess the time (`%T`):
//!
//! ```text
//! $remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" $request_time
//! 127.0.0.1 - - [30/Nov/2026:12:53:31 +0000] "GET /assets/app/1.0.0/a.js HTTP/1.1" 200 5120 "-" "curl/8.5.0" 0.000
//! ```
//!
//! `$remote_addr` is the client: the peer, or, behind a proxy trusted with
//! `--trust-proxy`, the address it forwarded ([`crate::http::forwarded`]).
//!
//! ccc has no user authentication, so `$remote_user` is always `-`; the
//! time is the moment the request was received, in UTC (`+0000`), so lines
//! read the same on every machine. As in nginx, a header that was not sent
//! is `-` and one sent empty is `""`; a `"`, a `\` and bytes outside
//! printable ASCII in the request line, referer or user agent are written
//! as `\xHH`, so a client cannot forge or break a line.
//!
//! `json` is one JSON object per line, with the fields docs/JSON.md lists
//! (the time with milliseconds, the duration in fractional milliseconds);
//! serde_json escapes quotes and control characters, and bytes that are
//! not UTF-8 become U+FFFD.
//!
//! A line is written once the response has left, as nginx writes one:
//! `$body_bytes_sent` is the body bytes the connection wrote, and the
//! duration runs from the request's head being received to the last of
//! them (nginx's `$request_time`). A response cut short (the client
//! reset the stream or closed the connection, or a timeout ended it) is
//! logged with its status and the bytes that did leave, as nginx logs it;
//! `json` also says `"complete": false` (nginx's `$request_completion`).
//!
//! A request the server answered before reading its line (a malformed or
//! oversized head, 400 or 431, or a connection past `--max-connections`,
//! 503) is logged too, as nginx logs one: its request is `"-"` (`null`
//! method, target and protocol in `json`), so a scan that sends garbage
//! shows in the log.

use serde::Serialize;
use std::borrow::Cow;
use std::fmt::Write;
use std::net::IpAddr;
use std::time::{Duration, SystemTime};

/// How access-log lines are written (`--log-format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// nginx's `combined`.
    Combined,
    /// One JSON object per line.
    Json,
}

/// One request, as the access log records it.
#[derive(Debug, Clone)]
pub(crate) struct Entry<'a> {
    pub received: SystemTime,
    pub peer: Option<IpAddr>,
    /// Empty, as `target` and `protocol`, for a request refused before its
    /// line was read.
    pub method: &'a str,
    pub target: &'a str,
    /// `HTTP/1.1` or `HTTP/1.0`.
    pub protocol: &'a str,
    pub status: u16,
    /// Body bytes written to the client.
    pub body_bytes: u64,
    /// Whether the whole body was written (false: cut short by a reset,
    /// a close or a timeout).
    pub complete: bool,
    /// The `Referer` header as sent, if it was.
    pub referer: Option<&'a [u8]>,
    /// The `User-Agent` header as sent, if it was.
    pub user_agent: Option<&'a [u8]>,
    pub elapsed: Duration,
}

/// The access-log line of `entry` in `format`, without the newline.
pub(crate) fn line(format: Format, entry: &Entry<'_>) -> String {
    match format {
        Format::Combined => combined(entry),
        Format::Json => json(entry),
    }
}

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

fn combined(entry: &Entry<'_>) -> String {
    let mut out = String::with_capacity(128 + entry.target.len());
    match entry.peer {
        Some(ip) => {
            let _ = write!(out, "{ip}");
        }
        None => out.push('-'),
    }
    out.push_str(" - - [");
    time_local(&mut out, entry.received);
    out.push_str("] \"");
    if entry.method.is_empty() {
        // A request refused before its line was read, as nginx logs one.
        out.push('-');
    } else {
        escape_into(&mut out, entry.method.as_bytes());
        out.push(' ');
        escape_into(&mut out, entry.target.as_bytes());
        out.push(' ');
        escape_into(&mut out, entry.protocol.as_bytes());
    }
    let _ = write!(out, "\" {} {} ", entry.status, entry.body_bytes);
    quoted_header(&mut out, entry.referer);
    out.push(' ');
    quoted_header(&mut out, entry.user_agent);
    // `$request_time`: seconds, to the millisecond.
    let millis = entry.elapsed.as_millis();
    let _ = write!(out, " {}.{:03}", millis / 1000, millis % 1000);
    out
}

/// nginx's `$time_local` in UTC: `30/Nov/2026:12:53:31 +0000`, taken
/// from humantime's RFC 3339 form (`2026-11-30T12:53:31Z`).
fn time_local(out: &mut String, at: SystemTime) {
    let rfc = humantime::format_rfc3339_seconds(at).to_string();
    let month = rfc
        .get(5..7)
        .and_then(|m| m.parse::<usize>().ok())
        .and_then(|m| MONTHS.get(m.wrapping_sub(1)));
    match (rfc.get(0..4), month, rfc.get(8..10), rfc.get(11..19)) {
        (Some(year), Some(month), Some(day), Some(time)) => {
            let _ = write!(out, "{day}/{month}/{year}:{time} +0000");
        }
        // humantime always writes that form; never a broken line anyway.
        _ => out.push_str(&rfc),
    }
}

fn quoted_header(out: &mut String, value: Option<&[u8]>) {
    match value {
        Some(value) => {
            out.push('"');
            escape_into(out, value);
            out.push('"');
        }
        None => out.push_str("\"-\""),
    }
}

/// nginx's escaping of logged values: `"`, `\` and anything outside
/// printable ASCII as `\xHH`.
fn escape_into(out: &mut String, text: &[u8]) {
    for &byte in text {
        match byte {
            b'"' | b'\\' => {
                let _ = write!(out, "\\x{byte:02X}");
            }
            0x20..=0x7e => out.push(char::from(byte)),
            _ => {
                let _ = write!(out, "\\x{byte:02X}");
            }
        }
    }
}

/// The `json` line's fields, documented in docs/JSON.md.
#[derive(Serialize)]
struct JsonLine<'a> {
    received_at: String,
    remote_addr: Option<IpAddr>,
    method: Option<&'a str>,
    target: Option<&'a str>,
    protocol: Option<&'a str>,
    status: u16,
    body_bytes: u64,
    complete: bool,
    referer: Option<Cow<'a, str>>,
    user_agent: Option<Cow<'a, str>>,
    duration_ms: f64,
}

/// A part of the request line, `None` when it was never read.
fn known(part: &str) -> Option<&str> {
    (!part.is_empty()).then_some(part)
}

fn lossy(bytes: Option<&[u8]>) -> Option<Cow<'_, str>> {
    bytes.map(String::from_utf8_lossy)
}

fn json(entry: &Entry<'_>) -> String {
    serde_json::to_string(&JsonLine {
        received_at: humantime::format_rfc3339_millis(entry.received).to_string(),
        remote_addr: entry.peer,
        method: known(entry.method),
        target: known(entry.target),
        protocol: known(entry.protocol),
        status: entry.status,
        body_bytes: entry.body_bytes,
        complete: entry.complete,
        referer: lossy(entry.referer),
        user_agent: lossy(entry.user_agent),
        // Nanoseconds over 1e6 rounds once: 84 µs is 0.084, not 0.08400000000000001.
        duration_ms: entry.elapsed.as_nanos() as f64 / 1e6,
    })
    .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(target: &str) -> Entry<'_> {
        Entry {
            // 2026-11-30T12:53:31.207Z
            received: SystemTime::UNIX_EPOCH + Duration::from_millis(1_796_043_211_207),
            peer: Some(IpAddr::from([127, 0, 0, 1])),
            method: "GET",
            target,
            protocol: "HTTP/1.1",
            status: 200,
            body_bytes: 5120,
            complete: true,
            referer: None,
            user_agent: Some(b"curl/8.5.0"),
            elapsed: Duration::from_micros(84),
        }
    }

    #[test]
    fn combined_is_nginx_combined() {
        assert_eq!(
            line(Format::Combined, &entry("/assets/app/1.0.0/a.js")),
            "127.0.0.1 - - [30/Nov/2026:12:53:31 +0000] \"GET /assets/app/1.0.0/a.js HTTP/1.1\" 200 5120 \"-\" \"curl/8.5.0\" 0.000"
        );
        let other = Entry {
            peer: None,
            method: "HEAD",
            protocol: "HTTP/1.0",
            status: 304,
            body_bytes: 0,
            referer: Some(b"https://example.com/page"),
            user_agent: Some(b""),
            elapsed: Duration::from_micros(12_345_678),
            ..entry("/x")
        };
        assert_eq!(
            line(Format::Combined, &other),
            "- - - [30/Nov/2026:12:53:31 +0000] \"HEAD /x HTTP/1.0\" 304 0 \"https://example.com/page\" \"\" 12.345"
        );
        let v6 = Entry {
            peer: Some("::1".parse().expect("ip")),
            ..entry("/")
        };
        assert!(line(Format::Combined, &v6).starts_with("::1 - - ["));
    }

    #[test]
    fn every_month_and_single_digit_days() {
        let day = |secs: u64| {
            let mut out = String::new();
            time_local(&mut out, SystemTime::UNIX_EPOCH + Duration::from_secs(secs));
            out
        };
        assert_eq!(day(0), "01/Jan/1970:00:00:00 +0000");
        // 2000-02-29T23:59:59Z, a leap day.
        assert_eq!(day(951_868_799), "29/Feb/2000:23:59:59 +0000");
        // 2026-12-05T07:08:09Z.
        assert_eq!(day(1_796_454_489), "05/Dec/2026:07:08:09 +0000");
    }

    #[test]
    fn clients_cannot_forge_combined_lines() {
        let hostile = Entry {
            user_agent: Some(b"a\"b\\c\nd\x7f\xff\xc3\xa9"),
            referer: Some(b"\" 200 0 \"x"),
            ..entry("/a\"b\\c\nd\u{7f}é")
        };
        let got = line(Format::Combined, &hostile);
        assert!(
            got.contains("\"GET /a\\x22b\\x5Cc\\x0Ad\\x7F\\xC3\\xA9 HTTP/1.1\" 200 5120 "),
            "{got}"
        );
        assert!(
            got.ends_with(
                " \"\\x22 200 0 \\x22x\" \"a\\x22b\\x5Cc\\x0Ad\\x7F\\xFF\\xC3\\xA9\" 0.000"
            ),
            "{got}"
        );
        assert!(!got.contains('\n'));
        // Exactly the six quotes of the three quoted fields.
        assert_eq!(got.matches('"').count(), 6, "{got}");
    }

    #[test]
    fn json_is_one_object_with_every_field() {
        let hostile = Entry {
            referer: Some(b"r\"\n\x01"),
            user_agent: Some(b"ua \xff end"),
            ..entry("/a\"b\\c\nd\u{7f}é")
        };
        let got = line(Format::Json, &hostile);
        assert!(!got.contains('\n'), "{got}");
        let value: serde_json::Value = serde_json::from_str(&got).expect("JSON");
        assert_eq!(
            value,
            serde_json::json!({
                "received_at": "2026-11-30T12:53:31.207Z",
                "remote_addr": "127.0.0.1",
                "method": "GET",
                "target": "/a\"b\\c\nd\u{7f}é",
                "protocol": "HTTP/1.1",
                "status": 200,
                "body_bytes": 5120,
                "complete": true,
                "referer": "r\"\n\u{1}",
                "user_agent": "ua \u{fffd} end",
                "duration_ms": 0.084,
            })
        );
        let bare = Entry {
            peer: None,
            user_agent: None,
            ..entry("/")
        };
        let value: serde_json::Value =
            serde_json::from_str(&line(Format::Json, &bare)).expect("JSON");
        assert_eq!(value["remote_addr"], serde_json::Value::Null);
        assert_eq!(value["referer"], serde_json::Value::Null);
        assert_eq!(value["user_agent"], serde_json::Value::Null);
    }
}
