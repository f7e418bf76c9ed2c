//! Response header lines, and the heads built once and sent many times.
//!
//! [`HeaderLines`] are the lines of a response made for one request (an
//! error, a listing), kept as the names and values the transport sends,
//! checked once. The head of an asset's response is a header map cloned
//! from a template (`crate::serve::prepared`), not inserted line by line;
//! an answer that changes it (a range, a site's headers) takes its lines.

use http::header::{HeaderMap, HeaderName, HeaderValue};

/// The names ccc sends that `http` has no constant for: made once, shared
/// by every line that uses them.
const OWN_NAMES: [&str; 2] = ["cross-origin-resource-policy", "timing-allow-origin"];

/// Header lines, in the order added.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct HeaderLines {
    lines: Vec<(HeaderName, HeaderValue)>,
}

impl HeaderLines {
    pub(crate) fn new() -> HeaderLines {
        HeaderLines {
            lines: Vec::with_capacity(16),
        }
    }

    /// Adds a line. A name that is not a token, or a value with a control
    /// character or a byte outside ASCII, is left out rather than sent:
    /// names and values come from ccc and the catalog, and such a value
    /// would be a bug.
    pub(crate) fn push(&mut self, name: &str, value: &str) -> &mut HeaderLines {
        let value_ok = value
            .bytes()
            .all(|b| b == b'\t' || (b' '..=b'~').contains(&b));
        if let (Some(name), true) = (header_name(name), value_ok)
            && let Ok(value) = HeaderValue::from_str(value)
        {
            self.lines.push((name, value));
        }
        self
    }

    /// Replaces every line named `name` (any case) with one, as
    /// [`HeaderLines::push`] adds it.
    pub(crate) fn set(&mut self, name: &str, value: &str) -> &mut HeaderLines {
        self.lines
            .retain(|(n, _)| !n.as_str().eq_ignore_ascii_case(name));
        self.push(name, value)
    }

    /// Lines from names and values.
    pub(crate) fn of<'a>(lines: impl IntoIterator<Item = (&'a str, &'a str)>) -> HeaderLines {
        let mut out = HeaderLines::new();
        for (name, value) in lines {
            out.push(name, value);
        }
        out
    }

    /// The value of the first line named `name` (any case).
    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v)
    }

    /// Every line as (name, value); names in lower case, as HTTP/2 sends
    /// them.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.lines
            .iter()
            .map(|(n, v)| (n.as_str(), v.to_str().unwrap_or_default()))
    }

    /// The lines as HTTP/1.1 sends them, `name: value\r\n` each (names in
    /// lower case), for tests.
    #[cfg(test)]
    pub(crate) fn text(&self) -> String {
        self.iter().map(|(n, v)| format!("{n}: {v}\r\n")).collect()
    }

    /// Adds the lines `keep` accepts to `map`, sharing their names and
    /// values.
    pub(crate) fn append_to(&self, map: &mut HeaderMap) {
        for (name, value) in &self.lines {
            map.append(name.clone(), value.clone());
        }
    }

    /// The lines of a prepared head, to add to.
    pub(crate) fn from_map(map: &HeaderMap) -> HeaderLines {
        HeaderLines {
            lines: map.iter().map(|(n, v)| (n.clone(), v.clone())).collect(),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.lines.len()
    }
}

/// The name, shared when it is a standard one or one of ccc's own.
pub(crate) fn header_name(name: &str) -> Option<HeaderName> {
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
    fn lines_from_a_map_share_its_values() {
        let mut head = HeaderMap::new();
        head.append(http::header::VARY, HeaderValue::from_static("Accept"));
        head.append(http::header::ETAG, HeaderValue::from_static("\"x\""));
        head.append(http::header::VARY, HeaderValue::from_static("Origin"));
        let kept = HeaderLines::from_map(&head);
        let mut map = HeaderMap::new();
        kept.append_to(&mut map);
        assert_eq!(map.len(), 3);
        assert_eq!(map.get_all("vary").iter().count(), 2);
        assert_eq!(
            kept.text(),
            "vary: Accept\r\nvary: Origin\r\netag: \"x\"\r\n"
        );
    }
}
