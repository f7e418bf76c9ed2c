//! Who the client is behind a proxy: `--trust-proxy CIDR` names the
//! proxies (a CDN's edge, Varnish, a load balancer) whose forwarding
//! headers the access log believes.
//!
//! A request from a trusted peer names its client in `Forwarded` (RFC 7239,
//! `for=`) or, when it has none, `X-Forwarded-For`. Each proxy appends the
//! address it got the request from, so the list is read from the right:
//! the client is the first address that is not a trusted proxy, as nginx's
//! `real_ip_recursive on` reads it. An address a client wrote itself sits
//! left of that and is never believed; a value that is not an address
//! (`unknown`, an obfuscated `_name`, garbage, bytes that are not text)
//! stops the walk at the last address believed. A request from anyone
//! else is logged as its peer, whatever it says.

use http::HeaderMap;
use http::header::{FORWARDED, HeaderName};
use ipnet::IpNet;
use std::net::{IpAddr, SocketAddr};

/// The proxies whose forwarding headers name the client.
#[derive(Debug, Clone, Default)]
pub(crate) struct TrustedProxies(Vec<IpNet>);

impl TrustedProxies {
    pub(crate) fn new(nets: Vec<IpNet>) -> TrustedProxies {
        TrustedProxies(nets)
    }

    fn trusts(&self, ip: IpAddr) -> bool {
        self.0.iter().any(|net| net.contains(&ip))
    }

    /// The client of a request that came from `peer` with `headers`.
    pub(crate) fn client(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        if !self.trusts(peer) {
            return peer;
        }
        let hops = match headers.contains_key(FORWARDED) {
            true => forwarded_for(headers),
            false => x_forwarded_for(headers),
        };
        let mut client = peer;
        for hop in hops.iter().rev() {
            let Some(ip) = hop else { break };
            client = *ip;
            if !self.trusts(client) {
                break;
            }
        }
        client
    }
}

/// The `for=` of every element of every `Forwarded` line, in order; None
/// for one that is not an address.
fn forwarded_for(headers: &HeaderMap) -> Vec<Option<IpAddr>> {
    let mut hops = Vec::new();
    for value in headers.get_all(FORWARDED) {
        let Ok(text) = value.to_str() else {
            hops.push(None);
            continue;
        };
        for element in text.split(',') {
            let node = element.split(';').find_map(|pair| {
                let (key, value) = pair.split_once('=')?;
                key.trim().eq_ignore_ascii_case("for").then(|| value.trim())
            });
            if let Some(node) = node {
                hops.push(node_address(node.trim_matches('"')));
            }
        }
    }
    hops
}

/// The address of a `Forwarded` node: `192.0.2.60`, `192.0.2.60:4711`,
/// `[2001:db8::17]` or `[2001:db8::17]:4711`.
fn node_address(node: &str) -> Option<IpAddr> {
    node.parse::<IpAddr>()
        .ok()
        .or_else(|| node.parse::<SocketAddr>().ok().map(|a| a.ip()))
        .or_else(|| node.strip_prefix('[')?.strip_suffix(']')?.parse().ok())
}

/// The addresses of every `X-Forwarded-For` line, in order; None for one
/// that is not an address.
fn x_forwarded_for(headers: &HeaderMap) -> Vec<Option<IpAddr>> {
    const X_FORWARDED_FOR: HeaderName = HeaderName::from_static("x-forwarded-for");
    let mut hops = Vec::new();
    for value in headers.get_all(X_FORWARDED_FOR) {
        match value.to_str() {
            Ok(text) => hops.extend(text.split(',').map(|a| a.trim().parse().ok())),
            Err(_) => hops.push(None),
        }
    }
    hops
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn headers(lines: &[(&str, &[u8])]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in lines {
            map.append(
                HeaderName::from_bytes(name.as_bytes()).unwrap(),
                HeaderValue::from_bytes(value).unwrap(),
            );
        }
        map
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    fn proxies(nets: &[&str]) -> TrustedProxies {
        TrustedProxies::new(nets.iter().map(|n| n.parse().unwrap()).collect())
    }

    #[test]
    fn an_untrusted_peer_is_the_client_whatever_it_says() {
        let xff = headers(&[("x-forwarded-for", b"203.0.113.7")]);
        let none = TrustedProxies::default();
        assert_eq!(none.client(ip("10.0.0.2"), &xff), ip("10.0.0.2"));
        let other = proxies(&["10.1.0.0/16"]);
        assert_eq!(other.client(ip("10.0.0.2"), &xff), ip("10.0.0.2"));
    }

    #[test]
    fn x_forwarded_for_is_read_from_the_right_past_trusted_proxies() {
        let trusted = proxies(&["10.0.0.0/8", "::1/128"]);
        let peer = ip("10.0.0.2");
        for (lines, want) in [
            (&[&b"203.0.113.7"[..]][..], "203.0.113.7"),
            // A spoofed address left of the client's is never believed.
            (&[b"1.2.3.4, 203.0.113.7, 10.0.0.9"], "203.0.113.7"),
            // One line per proxy reads as one list.
            (&[b"1.2.3.4", b"203.0.113.7", b"10.0.0.9"], "203.0.113.7"),
            // Garbage stops the walk at the last address believed.
            (&[b"203.0.113.7, garbage, 10.0.0.9"], "10.0.0.9"),
            (&[b"\xff\xfe"], "10.0.0.2"),
            (&[b""], "10.0.0.2"),
            // Every hop trusted: the leftmost.
            (&[b"10.0.0.7, 10.0.0.9"], "10.0.0.7"),
            (&[b" 2001:db8::1 "], "2001:db8::1"),
        ] {
            let map = headers(
                &lines
                    .iter()
                    .map(|l| ("x-forwarded-for", *l))
                    .collect::<Vec<_>>(),
            );
            assert_eq!(trusted.client(peer, &map), ip(want), "{lines:?}");
        }
        let none = headers(&[]);
        assert_eq!(trusted.client(peer, &none), peer);
    }

    #[test]
    fn forwarded_comes_first_with_its_node_forms() {
        let trusted = proxies(&["127.0.0.0/8"]);
        let peer = ip("127.0.0.1");
        for (line, want) in [
            (
                &b"for=192.0.2.60;proto=http;by=203.0.113.43"[..],
                "192.0.2.60",
            ),
            (b"for=\"[2001:db8:cafe::17]:4711\"", "2001:db8:cafe::17"),
            (b"For=\"192.0.2.60:4711\", for=127.0.0.5", "192.0.2.60"),
            (b"for=\"[2001:db8::1]\"", "2001:db8::1"),
            (b"for=unknown", "127.0.0.1"),
            (b"for=192.0.2.60, for=_hidden", "127.0.0.1"),
            (b"proto=https", "127.0.0.1"),
        ] {
            let map = headers(&[("forwarded", line), ("x-forwarded-for", b"198.51.100.1")]);
            assert_eq!(
                trusted.client(peer, &map),
                ip(want),
                "{}",
                String::from_utf8_lossy(line)
            );
        }
    }
}
