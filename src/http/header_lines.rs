//! Response header lines built once and sent many times: an asset's lines
//! are made when it is loaded and shared by every response that sends it.
//!
//! They are kept as the names and values the transport sends, checked
//! once, so a response only copies references into its header map: a
//! standard or ccc's own name costs nothing to copy, and the values of a
//! set kept long ([`HeaderLines::to_exact`]) are slices of one shared text.

use bytes::{Bytes, BytesMut};
use http::header::{HeaderMap, HeaderName, HeaderValue};

/// The names ccc sends that `http` has no constant for: made once, shared
/// by every line that uses them.
const OWN_NAMES: [&str; 2] = ["cross-origin-resource-policy", "timing-allow-origin"];

/// Header lines, in the order added.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HeaderLines(Vec<(HeaderName, HeaderValue)>);

impl HeaderLines {
    pub fn new() -> HeaderLines {
        HeaderLines(Vec::with_capacity(16))
    }

    /// Adds a line. A name that is not a token, or a value with a control
    /// character or a byte outside ASCII, is left out rather than sent:
    /// names and values come from ccc and the catalog, and such a value
    /// would be a bug.
    pub fn push(&mut self, name: &str, value: &str) -> &mut HeaderLines {
        let value_ok = value
            .bytes()
            .all(|b| b == b'\t' || (b' '..=b'~').contains(&b));
        if let (Some(name), true) = (header_name(name), value_ok)
            && let Ok(value) = HeaderValue::from_str(value)
        {
            self.0.push((name, value));
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

    /// A copy to keep a long time (an asset's prepared responses, charged
    /// to the cache): its own room at the exact size, and every value a
    /// slice of one text, so the set is two allocations.
    pub fn to_exact(&self) -> HeaderLines {
        let mut text = BytesMut::with_capacity(self.0.iter().map(|(_, v)| v.len()).sum());
        for (_, value) in &self.0 {
            text.extend_from_slice(value.as_bytes());
        }
        let text: Bytes = text.freeze();
        let mut at = 0;
        let mut lines = Vec::with_capacity(self.0.len());
        for (name, value) in &self.0 {
            let slice = text.slice(at..at + value.len());
            at += value.len();
            // The bytes were checked when the line was added.
            let shared = HeaderValue::from_maybe_shared(slice).unwrap_or_else(|_| value.clone());
            lines.push((name.clone(), shared));
        }
        HeaderLines(lines)
    }

    /// About the heap bytes the lines hold: their room, and the values'
    /// text with its allocation's overhead.
    pub fn capacity(&self) -> usize {
        const SHARED_TEXT: usize = 32;
        self.0.capacity() * size_of::<(HeaderName, HeaderValue)>()
            + self.0.iter().map(|(_, v)| v.len()).sum::<usize>()
            + SHARED_TEXT
    }

    /// Every line as (name, value); names in lower case, as HTTP/2 sends
    /// them.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0
            .iter()
            .map(|(n, v)| (n.as_str(), v.to_str().unwrap_or_default()))
    }

    /// The lines as HTTP/1.1 sends them, `name: value\r\n` each (names in
    /// lower case), for tests and logs.
    pub fn text(&self) -> String {
        self.iter().map(|(n, v)| format!("{n}: {v}\r\n")).collect()
    }

    /// Adds the lines `keep` accepts to `map`, sharing their names and
    /// values.
    pub fn append_to(&self, map: &mut HeaderMap, keep: impl Fn(&HeaderName) -> bool) {
        for (name, value) in &self.0 {
            if keep(name) {
                map.append(name.clone(), value.clone());
            }
        }
    }

    /// A copy of the lines `keep` accepts.
    pub fn filtered(&self, keep: impl Fn(&HeaderName) -> bool) -> HeaderLines {
        HeaderLines(self.0.iter().filter(|(n, _)| keep(n)).cloned().collect())
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The name, shared when it is a standard one or one of ccc's own.
fn header_name(name: &str) -> Option<HeaderName> {
    let parsed = HeaderName::from_bytes(name.as_bytes()).ok()?;
    Some(
        OWN_NAMES
            .iter()
            .find(|own| **own == parsed.as_str())
            .map_or(parsed, |own| HeaderName::from_static(own)),
    )
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
            lines.text(),
            "content-type: text/plain\r\nvary: Accept-Encoding\r\n"
        );
        assert_eq!(lines.get("Vary"), Some("Accept-Encoding"));
        assert_eq!(lines.get("X-Split"), None);
    }

    #[test]
    fn kept_lines_share_one_text_and_keep_order_and_repeats() {
        let lines = HeaderLines::of([
            ("Vary", "Accept"),
            ("ETag", "\"x\""),
            ("Timing-Allow-Origin", "*"),
            ("Vary", "Origin"),
        ]);
        let kept = lines.to_exact();
        assert_eq!(kept, lines);
        assert_eq!(kept.0.capacity(), 4);
        let mut map = HeaderMap::new();
        kept.append_to(&mut map, |name| name != "etag");
        let vary: Vec<_> = map.get_all("vary").iter().collect();
        assert_eq!(vary, ["Accept", "Origin"]);
        assert_eq!(map.get("etag"), None);
        assert_eq!(
            map.get("timing-allow-origin").map(|v| v.as_bytes()),
            Some(&b"*"[..])
        );
    }
}
