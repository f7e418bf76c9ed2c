//! The handler the transport calls for each request: it reads what
//! decides the answer into an [`Ask`], has [`answer`] build it, counts it,
//! logs it with `--access-log`, and hands it back as a response.
//!
//! Every request is answered right there, on the runtime thread that read
//! it, but those of the write API ([`super::api`]), which the transport
//! defers: their answer is made by a future, their work done on blocking
//! threads, and the ticket made as for any other once it is ready.
//!
//! A cache hit waits on nothing. A miss, a listing or an alias reads the
//! catalog on this thread (its pooled connection, else the store's
//! actor), as an nginx worker waits on its disk read. Telling tokio first
//! (`block_in_place`, or a blocking thread) was measured and loses on
//! both counts: each miss pays a thread handoff, and the hits' tail
//! latency grows (bench/COLD_MISSES.md). A read that waits on the disk
//! holds up only what is queued on its own runtime thread, which the
//! other threads steal.

use crate::causal;
use crate::http::access_log;
use crate::http::forwarded::TrustedProxies;
use crate::http::host;
use crate::http::log_skip::LogSkip;
use crate::http::negotiate::Accepted;
use crate::log;
use crate::serve::alias;
use crate::serve::answer::answer;
use crate::serve::api::Api;
use crate::serve::counters::{Counters, Method, RouteClass};
use crate::serve::response::{Answer, Ask, Values};
use crate::serve::site;
use crate::serve::store;
use crate::transport::{Delivery, H1Response, Handler, Later, Payload, Peer, RequestBody, limits};
use bytes::Bytes;
use http::request::Parts;
use http::{Response, Version, header};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant, SystemTime};

/// What every request shares: the store, the counters, the log's format.
pub(super) struct Service {
    pub(super) store: store::Handle,
    pub(super) counters: Arc<Counters>,
    pub(super) access_log: Option<access_log::Format>,
    pub(super) log_skip: LogSkip,
    pub(super) trusted_proxies: TrustedProxies,
    pub(super) aliases: alias::Policy,
    /// The write API, and who may read /_stats and /metrics.
    pub(super) api: Arc<Api>,
    /// This service, for the futures of deferred requests.
    pub(super) me: Weak<Service>,
}

impl Handler for Service {
    type Ticket = Ticket;

    fn handle(&self, head: Parts, peer: Peer) -> (Response<Payload>, Ticket) {
        let version = head.version;
        self.handle_as(head, peer, |answer| answer.into_response_over(version))
    }

    fn handle_h1(&self, head: Parts, peer: Peer, lines: &mut Vec<u8>) -> (H1Response, Ticket) {
        self.handle_as(head, peer, |answer| answer.into_h1(lines))
    }

    fn defers(&self, head: &Parts) -> bool {
        Api::claims(head)
    }

    fn handle_later(&self, head: Parts, body: RequestBody, peer: Peer) -> Later<Ticket> {
        let received = Instant::now();
        self.counters.begin();
        let (Some(me), api) = (self.me.upgrade(), self.api.clone()) else {
            // The server is going away: answered at once.
            let answer = Answer::error(503, "the server is stopping").closing();
            return Box::pin(std::future::ready(
                self.respond(&head, answer, received, &peer),
            ));
        };
        Box::pin(async move {
            let answer = api.answer(head.clone(), body, peer).await;
            me.respond(&head, answer, received, &peer)
        })
    }

    fn finished(&self, ticket: Ticket, delivery: Delivery) {
        self.counters
            .delivered(delivery.body_bytes, delivery.complete);
        if let (Some(format), Some(logged)) = (self.access_log, ticket.logged) {
            let elapsed = ticket.received.elapsed();
            let entry = access_log::Entry {
                received: logged.received,
                peer: Some(logged.peer),
                method: &logged.method,
                target: &logged.target,
                protocol: logged.protocol,
                status: logged.status,
                body_bytes: delivery.body_bytes,
                complete: delivery.complete,
                referer: logged.referer.as_deref(),
                user_agent: logged.user_agent.as_deref(),
                elapsed,
            };
            // Queued, never blocking: a stalled or broken stdout costs
            // lines, not requests.
            log::access(access_log::line(format, &entry));
        }
        causal::after_respond(Some(&ticket.peer.addr));
    }

    fn over_capacity(&self) -> Response<Bytes> {
        let mut refused = Answer::error(503, "too many connections; retry later").closing();
        refused.headers.push("Retry-After", "1");
        // An error answer is always whole.
        refused.into_response().map(|body| match body {
            Payload::Whole(bytes) => bytes,
            Payload::Pieces(_) => Bytes::new(),
        })
    }

    fn record_refused(&self, status: u16, peer: &Peer) {
        self.counters.record_refused(status);
        if let Some(format) = self.access_log {
            // hyper's 400 and 431 have no body; a TLS client past the cap
            // is closed without an answer.
            let body_bytes = match status {
                503 if !peer.tls => self.over_capacity().body().len() as u64,
                _ => 0,
            };
            let entry = access_log::Entry {
                received: SystemTime::now(),
                // No header was read, so no forwarded client either.
                peer: Some(peer.addr.ip()),
                method: "",
                target: "",
                protocol: "",
                status,
                body_bytes,
                complete: true,
                referer: None,
                user_agent: None,
                elapsed: Duration::ZERO,
            };
            log::access(access_log::line(format, &entry));
        }
    }
}

/// What is kept of a request until its response has left: when it came,
/// and, with `--access-log`, the fields of its line that the request set.
pub(super) struct Ticket {
    received: Instant,
    peer: Peer,
    logged: Option<Box<Logged>>,
}

/// The access-log fields a request sets (the body bytes and the duration
/// are known once the response has left).
struct Logged {
    received: SystemTime,
    peer: std::net::IpAddr,
    method: String,
    target: String,
    protocol: &'static str,
    status: u16,
    referer: Option<Vec<u8>>,
    user_agent: Option<Vec<u8>>,
}

impl Service {
    /// The answer to the request `parts` heads.
    fn decide(&self, parts: &Parts, peer: &Peer) -> Answer {
        match read_head(parts, peer.tls) {
            Ok(ask) => {
                if let Some(refused) = self.stats_refusal(&ask, parts, peer) {
                    return refused;
                }
                // A site's host is answered by its site, but for the
                // server's own paths.
                site::answer(&ask, &self.store, &self.aliases)
                    .unwrap_or_else(|| answer(&ask, &self.store, &self.counters, &self.aliases))
            }
            Err(refused) => *refused,
        }
    }

    /// With `--stats-allow`, the refusal of a request for /_stats or
    /// /metrics that may not read them.
    fn stats_refusal(&self, ask: &Ask<'_>, parts: &Parts, peer: &Peer) -> Option<Answer> {
        if !self.api.restricts_stats() {
            return None;
        }
        let path = parts.uri.path();
        if ask.method == "OPTIONS" || !(path == "/_stats" || path == "/metrics") {
            return None;
        }
        self.api.stats_refusal(parts, peer)
    }

    /// The answer to the request `head`, counted, and made into a
    /// response by `into`.
    fn handle_as<R>(&self, head: Parts, peer: Peer, into: impl FnOnce(Answer) -> R) -> (R, Ticket) {
        causal::check();
        causal::receive_external(Some(&peer.addr));
        let in_flight = causal::latency!(REQUEST);
        let received = Instant::now();
        self.counters.begin();
        let answer = self.decide(&head, &peer);
        let ticket = self.ticket(&head, &answer, received, &peer);
        let response = into(answer);
        in_flight.end();
        (response, ticket)
    }

    /// Counts the answer, keeps what its log line needs, and makes it the
    /// response.
    fn respond(
        &self,
        parts: &Parts,
        answer: Answer,
        received: Instant,
        peer: &Peer,
    ) -> (Response<Payload>, Ticket) {
        let ticket = self.ticket(parts, &answer, received, peer);
        (answer.into_response_over(parts.version), ticket)
    }

    /// Counts the answer to `parts` and keeps what the access log writes
    /// once it has left.
    fn ticket(&self, parts: &Parts, answer: &Answer, received: Instant, peer: &Peer) -> Ticket {
        let method = parts.method.as_str();
        let status = answer.status;
        // Counted before the response leaves, so a client that has its
        // answer finds it in /_stats and /metrics.
        let elapsed = received.elapsed();
        self.counters
            .record(Method::of(method), status, answer.class, elapsed);
        if let Some(sent) = answer
            .sent
            .filter(|_| matches!(status, 200 | 206) && method != "HEAD")
        {
            self.counters
                .record_sent(&sent, answer.length.unwrap_or(sent.length));
        }
        let logged = (self.access_log)
            .filter(|_| !self.log_skip.skips(target(parts)))
            .map(|_| {
                Box::new(Logged {
                    // The wall clock is read only for the log line.
                    received: {
                        let now = SystemTime::now();
                        now.checked_sub(elapsed).unwrap_or(now)
                    },
                    peer: self.trusted_proxies.client(peer.addr.ip(), &parts.headers),
                    method: method.to_string(),
                    target: target(parts).to_string(),
                    protocol: protocol(parts.version),
                    status,
                    referer: parts
                        .headers
                        .get(header::REFERER)
                        .map(|v| v.as_bytes().to_vec()),
                    user_agent: parts
                        .headers
                        .get(header::USER_AGENT)
                        .map(|v| v.as_bytes().to_vec()),
                })
            });
        let served_asset = answer.class == RouteClass::Asset && matches!(status, 200 | 206 | 304);
        causal::before_respond();
        if served_asset {
            causal::progress!(ASSET_SERVED);
        }
        Ticket {
            received,
            peer: *peer,
            logged,
        }
    }
}

/// What decides the answer to the request `parts` heads, read in one pass
/// over its header lines; or the refusal of what hyper accepts and ccc
/// does not: an HTTP/1.1 request without exactly one `Host` (RFC 9112
/// 3.2), a header line longer than nginx's buffer for one (8 KiB), or a
/// head longer than its four (32 KiB). Each refusal closes the connection.
///
/// A value that is not text is ignored, as if not sent: hyper has already
/// framed the request, so no such value can change where it ends.
/// `Range` and `If-Range` are not lists (RFC 9110 14.2, 13.1.5): a request
/// with two of either is read as having none, rather than read one way
/// here and another by a cache in front.
fn read_head(parts: &Parts, tls: bool) -> Result<Ask<'_>, Box<Answer>> {
    let target = target(parts);
    let mut ask = Ask {
        method: parts.method.as_str(),
        target,
        host: None,
        tls,
        accept_encoding: Accepted::default(),
        accept: Values::new(),
        if_none_match: None,
        if_modified_since: None,
        range: None,
        if_range: None,
        access_control_request_headers: None,
        available_dictionary: None,
        sec_fetch_site: None,
        sec_fetch_mode: None,
    };
    let (mut hosts, mut ranges, mut if_ranges) = (0, 0, 0);
    let mut host_value: Option<&[u8]> = None;
    let mut longest_line = 0;
    let mut head = ask.method.len() + target.len() + 12;
    for (name, value) in &parts.headers {
        let line = name.as_str().len() + 2 + value.len();
        longest_line = longest_line.max(line);
        head += line + 2;
        if name == header::HOST {
            hosts += 1;
            host_value = Some(value.as_bytes());
            continue;
        }
        let Ok(text) = value.to_str() else {
            continue;
        };
        match *name {
            header::ACCEPT_ENCODING => ask.accept_encoding.add(text),
            header::ACCEPT => ask.accept.push(text),
            header::IF_NONE_MATCH => _ = ask.if_none_match.get_or_insert(text),
            header::IF_MODIFIED_SINCE => _ = ask.if_modified_since.get_or_insert(text),
            header::ACCESS_CONTROL_REQUEST_HEADERS => {
                _ = ask.access_control_request_headers.get_or_insert(text)
            }
            header::RANGE => {
                ranges += 1;
                ask.range = Some(text);
            }
            header::IF_RANGE => {
                if_ranges += 1;
                ask.if_range = Some(text);
            }
            // Not lists: a second one is not read.
            _ if name == AVAILABLE_DICTIONARY => _ = ask.available_dictionary.get_or_insert(text),
            _ if name == SEC_FETCH_SITE => _ = ask.sec_fetch_site.get_or_insert(text),
            _ if name == SEC_FETCH_MODE => _ = ask.sec_fetch_mode.get_or_insert(text),
            _ => {}
        }
    }
    if parts.version == Version::HTTP_11 && hosts != 1 {
        return Err(Box::new(
            Answer::error(400, "an HTTP/1.1 request needs exactly one Host header").closing(),
        ));
    }
    if hosts > 1 {
        return Err(Box::new(
            Answer::error(400, "a request has at most one Host header").closing(),
        ));
    }
    ask.host = match host_value {
        Some(value) => std::str::from_utf8(value).ok(),
        None => parts.uri.authority().map(|a| a.as_str()),
    };
    if let Some(value) = host_value {
        if !host::valid(value) {
            let why = "the Host header is not a host name or address with an optional port";
            return Err(Box::new(Answer::error(400, why).closing()));
        }
        // RFC 9113 8.3.1: a request with both must name one host.
        if let Some(authority) = parts.uri.authority()
            && parts.version == Version::HTTP_2
            && !host::same(authority.as_str().as_bytes(), value)
        {
            let why = "the request's :authority and Host name different hosts";
            return Err(Box::new(Answer::error(400, why).closing()));
        }
    }
    if longest_line > limits::MAX_HEADER_LINE {
        let why = format!(
            "a header line is longer than {} bytes",
            limits::MAX_HEADER_LINE
        );
        return Err(Box::new(Answer::error(431, &why).closing()));
    }
    // hyper stops reading past its buffer, but a head that arrives in
    // one piece can pass it by what that piece held.
    if head > limits::MAX_HEAD {
        let why = format!("the request head is longer than {} bytes", limits::MAX_HEAD);
        return Err(Box::new(Answer::error(431, &why).closing()));
    }
    if ranges > 1 {
        ask.range = None;
    }
    if if_ranges > 1 {
        ask.if_range = None;
    }
    Ok(ask)
}

/// RFC 9842 2.2's request header, and Fetch Metadata's (for the
/// cross-origin rule of `http::dictionary`).
static AVAILABLE_DICTIONARY: header::HeaderName =
    header::HeaderName::from_static("available-dictionary");
static SEC_FETCH_SITE: header::HeaderName = header::HeaderName::from_static("sec-fetch-site");
static SEC_FETCH_MODE: header::HeaderName = header::HeaderName::from_static("sec-fetch-mode");

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
