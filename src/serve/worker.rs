//! The HTTP loop: each worker takes requests from the frontend, reads what
//! decides the answer, has [`answer`] build it, counts it, logs it with
//! `--access-log`, and hands it back to be sent.

use crate::causal;
use crate::frontend::{self, Frontend};
use crate::http::access_log;
use crate::log;
use crate::serve::alias;
use crate::serve::answer::{Ask, answer};
use crate::serve::counters::{Counters, Method};
use crate::serve::store;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};

/// One worker thread's view of the server: where requests come from, the
/// store, the shared counters.
pub(super) struct Worker<'a> {
    pub(super) http: &'a Frontend,
    pub(super) store: store::Handle,
    pub(super) counters: &'a Counters,
    /// The access log's format, when there is one.
    pub(super) access_log: Option<access_log::Format>,
    pub(super) aliases: &'a alias::Policy,
}

impl Worker<'_> {
    pub(super) fn run(&self, stop: &AtomicBool) {
        while !stop.load(Ordering::Relaxed) {
            causal::check();
            // A request already waiting found this worker busy; only an empty
            // queue makes it idle (the profiler's receive rule differs).
            let next = self.http.try_recv().or_else(|| {
                causal::idle_begin();
                self.http.recv_timeout(Duration::from_millis(100))
            });
            if let Some(request) = next {
                causal::receive_external(request.remote_addr());
                self.serve(request)
            }
        }
    }

    fn serve(&self, request: frontend::Request) {
        // The request's whole handling here, for the profiler's latency
        // profile: from taking its head to its response written.
        let in_flight = causal::latency!(REQUEST);
        let ask = Ask {
            method: request.method(),
            target: request.url(),
            accept_encoding: request.header("Accept-Encoding").collect(),
            accept: request.header("Accept").collect(),
            if_none_match: request.header("If-None-Match").next(),
            if_modified_since: request.header("If-Modified-Since").next(),
            range: only(request.header("Range")),
            if_range: only(request.header("If-Range")),
            access_control_request_headers: request.header("Access-Control-Request-Headers").next(),
        };
        let answer = answer(&ask, &self.store, self.counters, self.aliases);
        let status = answer.status;
        let body_bytes = if ask.method == "HEAD" || status == 304 {
            0
        } else {
            answer.body.len() as u64
        };
        // Counted before the response leaves, so a client that has its
        // answer finds it in /_stats and /metrics. The latency costs one
        // monotonic clock read here (the frontend stamped the receipt).
        let elapsed = request.received().elapsed();
        self.counters
            .record(Method::of(ask.method), status, body_bytes, elapsed);
        let log_line = self.access_log.map(|format| {
            access_log::line(
                format,
                &access_log::Entry {
                    // The wall clock is read only for the log line.
                    received: {
                        let now = SystemTime::now();
                        now.checked_sub(elapsed).unwrap_or(now)
                    },
                    peer: request.remote_addr().map(|a| a.ip()),
                    method: ask.method,
                    target: ask.target,
                    protocol: request.protocol(),
                    status,
                    body_bytes,
                    referer: request.header_bytes("Referer"),
                    user_agent: request.header_bytes("User-Agent"),
                    elapsed,
                },
            )
        });
        let served_asset = answer.asset && matches!(status, 200 | 206 | 304);
        let peer = request.remote_addr().copied();
        causal::before_respond();
        let sent = {
            let _s = causal::site!(HTTP_RESPOND);
            request.respond(answer.into_reply())
        };
        causal::after_respond(peer.as_ref());
        in_flight.end();
        match sent {
            Ok(()) if served_asset => causal::progress!(ASSET_SERVED),
            Ok(()) => {}
            Err(e) => log::err(format_args!("warning: sending a response failed: {e}")),
        }
        if let Some(line) = log_line {
            // Queued, never blocking: a stalled or broken stdout costs lines,
            // not requests.
            log::out(line);
        }
    }
}

/// The value of a header that may appear once. `Range` and `If-Range` are
/// not lists (RFC 9110 14.2, 13.1.5): a request with two is ignored
/// rather than read one way here and another by a cache in front.
fn only<'a>(mut values: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let first = values.next();
    if values.next().is_some() { None } else { first }
}
