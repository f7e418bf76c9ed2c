//! The host a request names: `Host` (RFC 9110 7.2) and, over HTTP/2,
//! `:authority` (RFC 9113 8.3.1), checked as nginx checks them.
//!
//! A request is refused (400) when its host is not a host:
//!
//! - two `Host` headers, which two readers may read two ways;
//! - over HTTP/2, an `:authority` and a `Host` that name different hosts
//!   ("If both are present and differ, the request is malformed");
//! - a `Host` value that is not `uri-host [ ":" port ]` (RFC 3986 3.2.2):
//!   `a b/c`, a control character, a port that is not digits.
//!
//! ccc serves every host alike, so a valid host is never refused for
//! which host it is.

/// Whether `value` is a `Host` value: empty (allowed for a target
/// without an authority, RFC 9112 3.2), or a host with an optional port.
pub(crate) fn valid(value: &[u8]) -> bool {
    let (host, port) = split_port(value);
    port.is_none_or(|p| p.iter().all(u8::is_ascii_digit)) && valid_host(host)
}

/// Whether two host values name the same host (hosts compare without
/// regard to case, RFC 3986 6.2.2.1).
pub(crate) fn same(a: &[u8], b: &[u8]) -> bool {
    a.eq_ignore_ascii_case(b)
}

/// The host a `Host` value names, without its port (an IPv6 literal keeps
/// its brackets).
pub(crate) fn without_port(value: &str) -> &str {
    let (host, _) = split_port(value.as_bytes());
    // `split_port` splits at an ASCII `:`, so `host` ends on a char boundary.
    &value[..host.len()]
}

/// The host and the port after its last `:` (outside an IP literal).
fn split_port(value: &[u8]) -> (&[u8], Option<&[u8]>) {
    let literal_end = value.iter().rposition(|b| *b == b']').map_or(0, |i| i + 1);
    match value[literal_end..].iter().rposition(|b| *b == b':') {
        Some(i) => (
            &value[..literal_end + i],
            Some(&value[literal_end + i + 1..]),
        ),
        None => (value, None),
    }
}

/// `IP-literal / IPv4address / reg-name` (RFC 3986 3.2.2); an IPv4
/// address is a reg-name's characters too.
fn valid_host(host: &[u8]) -> bool {
    if let Some(inner) = host.strip_prefix(b"[").and_then(|h| h.strip_suffix(b"]")) {
        // IPv6 (hex digits, `:` and a trailing dotted IPv4) or IPvFuture.
        return !inner.is_empty()
            && inner
                .iter()
                .all(|b| b.is_ascii_hexdigit() || matches!(b, b':' | b'.' | b'v' | b'V'));
    }
    let mut bytes = host.iter();
    while let Some(&b) = bytes.next() {
        let ok = match b {
            // pct-encoded
            b'%' => {
                bytes.next().is_some_and(u8::is_ascii_hexdigit)
                    && bytes.next().is_some_and(u8::is_ascii_hexdigit)
            }
            b => REG_NAME[usize::from(b)],
        };
        if !ok {
            return false;
        }
    }
    true
}

/// The bytes of a reg-name but `%`: unreserved and sub-delims.
static REG_NAME: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = c.is_ascii_alphanumeric()
            || matches!(
                c,
                b'-' | b'.'
                    | b'_'
                    | b'~'
                    | b'!'
                    | b'$'
                    | b'&'
                    | b'\''
                    | b'('
                    | b')'
                    | b'*'
                    | b'+'
                    | b','
                    | b';'
                    | b'='
            );
        b += 1;
    }
    table
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_as_rfc_3986_writes_them() {
        for good in [
            &b""[..],
            b"localhost",
            b"cdn.example.com",
            b"cdn.example.com:8443",
            b"127.0.0.1:8333",
            b"[::1]",
            b"[::1]:8333",
            b"[2001:db8::7]:80",
            b"xn--bcher-kva.example",
            b"a%2Db",
            b"example.com:",
        ] {
            assert!(valid(good), "{}", String::from_utf8_lossy(good));
        }
        for bad in [
            &b"a b/c"[..],
            b"a/b",
            b"host:80x",
            b"[::1",
            b"[]",
            b"a\x01b",
            b"caf\xc3\xa9.example",
            b"a%zz",
            b"user@host",
            b"host:8080:80",
        ] {
            assert!(!valid(bad), "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn hosts_compare_without_case() {
        assert!(same(b"CDN.example.com:443", b"cdn.EXAMPLE.com:443"));
        assert!(!same(b"a.example", b"b.example"));
    }
}
