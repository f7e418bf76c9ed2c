//! The handler the transport calls for each request: it reads what
//! decides the answer into an [`Ask`], has [`answer`] build it, counts it,
//! logs it with `--access-log`, and hands it back as a response.
//!
//! Every request is answered right there, on the runtime thread that read
//! it. A cache hit waits on nothing. A miss, a listing or an alias waits
//! on the store's actor, as a thread of nginx waits on a disk read: handing
//! it to a blocking thread instead costs two more thread hops on every
//! miss, and a slow answer holds up only the connections of its own
//! runtime thread, whose queued work the other threads take over.

use crate::causal;
use crate::http::access_log;
use crate::log;
use crate::serve::alias;
use crate::serve::answer::{Answer, Ask, answer};
use crate::serve::counters::{Counters, Method};
use crate::serve::store;
use crate::transport::{Handler, Peer, limits};
use bytes::Bytes;
use http::request::Parts;
use http::{HeaderMap, Request, Response, Version, header};
use hyper::body::Incoming;
use std::sync::Arc;
use std::time::{Instant, SystemTime};

/// What every request shares: the store, the counters, the log's format.
pub(super) struct Service {
    pub(super) store: store::Handle,
    pub(super) counters: Arc<Counters>,
    pub(super) access_log: Option<access_log::Format>,
    pub(super) aliases: alias::Policy,
}

impl Handler for Service {
    fn handle(&self, request: Request<Incoming>, peer: Peer) -> Response<Bytes> {
        causal::check();
        causal::receive_external(Some(&peer.addr));
        let in_flight = causal::latency!(REQUEST);
        let received = Instant::now();
        // The body is never read: dropping it lets hyper discard or refuse it.
        let (parts, _body) = request.into_parts();
        let answer = self.decide(&parts);
        let response = self.respond(&parts, answer, received, &peer);
        in_flight.end();
        response
    }

    fn over_capacity(&self) -> Response<Bytes> {
        let mut refused = Answer::error(503, "too many connections; retry later").closing();
        refused.headers.push("Retry-After", "1");
        refused.into_response()
    }

    fn record_refused(&self, status: u16) {
        self.counters.record_refused(status);
    }

    fn responded(&self, peer: &Peer) {
        causal::after_respond(Some(&peer.addr));
    }
}

impl Service {
    /// The answer to the request `parts` heads.
    fn decide(&self, parts: &Parts) -> Answer {
        if let Some(refused) = refuse_head(parts) {
            return refused;
        }
        let headers = &parts.headers;
        let ask = Ask {
            method: parts.method.as_str(),
            target: target(parts),
            accept_encoding: values(headers, header::ACCEPT_ENCODING).collect(),
            accept: values(headers, header::ACCEPT).collect(),
            if_none_match: values(headers, header::IF_NONE_MATCH).next(),
            if_modified_since: values(headers, header::IF_MODIFIED_SINCE).next(),
            range: only(values(headers, header::RANGE)),
            if_range: only(values(headers, header::IF_RANGE)),
            access_control_request_headers: values(headers, header::ACCESS_CONTROL_REQUEST_HEADERS)
                .next(),
        };
        answer(&ask, &self.store, &self.counters, &self.aliases)
    }

    /// Counts and logs the answer, and makes it the response.
    fn respond(
        &self,
        parts: &Parts,
        answer: Answer,
        received: Instant,
        peer: &Peer,
    ) -> Response<Bytes> {
        let method = parts.method.as_str();
        let status = answer.status;
        let body_bytes = if method == "HEAD" || status == 304 {
            0
        } else {
            answer.body.len() as u64
        };
        // Counted before the response leaves, so a client that has its
        // answer finds it in /_stats and /metrics.
        let elapsed = received.elapsed();
        self.counters
            .record(Method::of(method), status, body_bytes, elapsed);
        if let Some(format) = self.access_log {
            let line = access_log::line(
                format,
                &access_log::Entry {
                    // The wall clock is read only for the log line.
                    received: {
                        let now = SystemTime::now();
                        now.checked_sub(elapsed).unwrap_or(now)
                    },
                    peer: Some(peer.addr.ip()),
                    method,
                    target: target(parts),
                    protocol: protocol(parts.version),
                    status,
                    body_bytes,
                    referer: parts.headers.get(header::REFERER).map(|v| v.as_bytes()),
                    user_agent: parts.headers.get(header::USER_AGENT).map(|v| v.as_bytes()),
                    elapsed,
                },
            );
            // Queued, never blocking: a stalled or broken stdout costs
            // lines, not requests.
            log::out(line);
        }
        let served_asset = answer.asset && matches!(status, 200 | 206 | 304);
        causal::before_respond();
        if served_asset {
            causal::progress!(ASSET_SERVED);
        }
        answer.into_response()
    }
}

/// What hyper accepts and ccc does not: an HTTP/1.1 request without
/// exactly one `Host` (RFC 9112 3.2), a header line longer than nginx's
/// buffer for one (8 KiB), or a head longer than its four (32 KiB). Each
/// closes the connection.
fn refuse_head(parts: &Parts) -> Option<Answer> {
    if parts.version == Version::HTTP_11 && parts.headers.get_all(header::HOST).iter().count() != 1
    {
        return Some(
            Answer::error(400, "an HTTP/1.1 request needs exactly one Host header").closing(),
        );
    }
    let mut head = parts.method.as_str().len() + target(parts).len() + 12;
    for (name, value) in &parts.headers {
        let line = name.as_str().len() + 2 + value.len();
        if line > limits::MAX_HEADER_LINE {
            let why = format!(
                "a header line is longer than {} bytes",
                limits::MAX_HEADER_LINE
            );
            return Some(Answer::error(431, &why).closing());
        }
        head += line + 2;
    }
    // hyper stops reading past its buffer, but a head that arrives in
    // one piece can pass it by what that piece held.
    (head > limits::MAX_HEAD).then(|| {
        let why = format!("the request head is longer than {} bytes", limits::MAX_HEAD);
        Answer::error(431, &why).closing()
    })
}

/// The request target: path and query (an absolute-form target's and an
/// HTTP/2 request's are the same).
fn target(parts: &Parts) -> &str {
    parts.uri.path_and_query().map_or("/", |p| p.as_str())
}

fn protocol(version: Version) -> &'static str {
    match version {
        Version::HTTP_09 => "HTTP/0.9",
        Version::HTTP_10 => "HTTP/1.0",
        Version::HTTP_2 => "HTTP/2.0",
        Version::HTTP_3 => "HTTP/3.0",
        _ => "HTTP/1.1",
    }
}

/// The values of every header named `name` that are text (a value with
/// other bytes is ignored, as if not sent: hyper has already framed the
/// request, so no such value can change where it ends).
fn values(headers: &HeaderMap, name: header::HeaderName) -> impl Iterator<Item = &str> {
    headers
        .get_all(name)
        .into_iter()
        .filter_map(|v| v.to_str().ok())
}

/// The value of a header that may appear once. `Range` and `If-Range` are
/// not lists (RFC 9110 14.2, 13.1.5): a request with two is ignored
/// rather than read one way here and another by a cache in front.
fn only<'a>(mut values: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let first = values.next();
    if values.next().is_some() { None } else { first }
}
