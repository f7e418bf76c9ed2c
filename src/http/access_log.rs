//! The line `serve --access-log` prints for each request, made in one
//! function ([`line`]) so that other formats can be added beside it.
//!
//! ```text
//! 2026-11-30T12:53:31.207Z 127.0.0.1 "GET /assets/app/1.0.0/a.js" 200 5120 84us
//! ```
//!
//! Fields: when the request was received (RFC 3339, UTC, milliseconds: it
//! sorts as text and reads the same on every machine), the client's
//! address (`-` when unknown), the method and request target as sent, the
//! status, the body bytes sent (0 for HEAD and 304) and the time from
//! receipt to the response being handed to the socket. As in nginx's logs,
//! a `"`, a `\` and bytes outside printable ASCII in the method or target
//! are written as `\xHH`, so a client cannot forge or break a line.

use std::fmt::Write;
use std::net::IpAddr;
use std::time::{Duration, SystemTime};

/// One request, as the access log records it.
#[derive(Debug, Clone)]
pub struct Entry<'a> {
    pub received: SystemTime,
    pub peer: Option<IpAddr>,
    pub method: &'a str,
    pub target: &'a str,
    pub status: u16,
    pub body_bytes: u64,
    pub elapsed: Duration,
}

/// The access-log line of `entry`, without the newline.
pub fn line(entry: &Entry<'_>) -> String {
    let mut out = String::with_capacity(96 + entry.target.len());
    let _ = write!(
        out,
        "{} {} \"",
        humantime::format_rfc3339_millis(entry.received),
        entry.peer.map_or("-".to_string(), |ip| ip.to_string()),
    );
    escape_into(&mut out, entry.method);
    out.push(' ');
    escape_into(&mut out, entry.target);
    let _ = write!(
        out,
        "\" {} {} {}us",
        entry.status,
        entry.body_bytes,
        entry.elapsed.as_micros()
    );
    out
}

fn escape_into(out: &mut String, text: &str) {
    for byte in text.bytes() {
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
            status: 200,
            body_bytes: 5120,
            elapsed: Duration::from_micros(84),
        }
    }

    #[test]
    fn a_line_has_every_field() {
        assert_eq!(
            line(&entry("/assets/app/1.0.0/a.js")),
            "2026-11-30T12:53:31.207Z 127.0.0.1 \"GET /assets/app/1.0.0/a.js\" 200 5120 84us"
        );
        let unknown = Entry {
            peer: None,
            method: "HEAD",
            status: 304,
            body_bytes: 0,
            ..entry("/x")
        };
        assert_eq!(
            line(&unknown),
            "2026-11-30T12:53:31.207Z - \"HEAD /x\" 304 0 84us"
        );
        let v6 = Entry {
            peer: Some("::1".parse().expect("ip")),
            ..entry("/")
        };
        assert!(line(&v6).contains(" ::1 \"GET /\" 200 "), "{}", line(&v6));
    }

    #[test]
    fn the_time_is_utc_with_milliseconds() {
        let whole = Entry {
            received: SystemTime::UNIX_EPOCH + Duration::from_secs(86_400),
            ..entry("/")
        };
        assert!(line(&whole).starts_with("1970-01-02T00:00:00.000Z "));
    }

    #[test]
    fn clients_cannot_forge_lines() {
        let got = line(&entry("/a\"b\\c\nd\u{7f}é"));
        assert!(
            got.contains("\"GET /a\\x22b\\x5Cc\\x0Ad\\x7F\\xC3\\xA9\" 200"),
            "{got}"
        );
        assert!(!got.contains('\n'));
    }
}
