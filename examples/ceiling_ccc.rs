//! The throughput ceiling of ccc's transport (`src/transport/`, what `ccc
//! serve` runs on): the same listener, runtime, connection policy,
//! deadlines and limits, with a handler that answers every request with
//! one fixed in-memory gzip body and the header lines `ccc serve` sends
//! for a cache hit, and no routing, cache or store at all.
//!
//! `bench/rps.sh` runs it beside `examples/ceiling.rs` (plain hyper) as the
//! configuration `ceiling-ccc`: what `ccc serve` answers below this server
//! is the price of routing, negotiation, the cache and the store; what
//! this server answers below plain hyper is the price of ccc's transport
//! policy (its deadlines, connection registry and counters).
//!
//! ```text
//! cargo run --release --example ceiling_ccc -- --port 8336 --size 2218 --threads 1
//! ```
//!
//! The flags are those of `examples/ceiling.rs` but `--bare`. It runs until
//! killed.

#[path = "common/asset_lines.rs"]
mod asset_lines;
#[path = "common/server_args.rs"]
mod server_args;

use bytes::Bytes;
use ccc::testing::transport::{ConnStats, Delivery, Handler, Limits, Payload, Peer, Transport};
use http::{HeaderMap, Response};
use std::net::SocketAddr;
use std::sync::Arc;

/// The one answer.
struct Fixed {
    headers: HeaderMap,
    body: Bytes,
}

impl Handler for Fixed {
    type Ticket = ();

    fn handle(&self, _head: http::request::Parts, _peer: Peer) -> (Response<Payload>, ()) {
        let mut response = Response::new(Payload::Whole(self.body.clone()));
        *response.headers_mut() = self.headers.clone();
        (response, ())
    }

    fn finished(&self, _ticket: (), _delivery: Delivery) {}

    fn over_capacity(&self) -> Response<Bytes> {
        let mut response = Response::new(Bytes::new());
        *response.status_mut() = http::StatusCode::SERVICE_UNAVAILABLE;
        response
    }

    fn record_refused(&self, _status: u16, _peer: &Peer) {}
}

fn fail(code: i32, message: String) -> ! {
    eprintln!("error: {message}");
    std::process::exit(code)
}

fn main() {
    let args = server_args::parse("ceiling_ccc", 8336, &["--current-thread"])
        .unwrap_or_else(|e| fail(2, e));
    let ip = args
        .bind
        .parse()
        .unwrap_or_else(|e| fail(2, format!("--bind {}: {e}", args.bind)));
    let listener = ccc::testing::transport::bind(SocketAddr::new(ip, args.port), false)
        .unwrap_or_else(|e| {
            fail(
                1,
                format!("cannot listen on {}:{}: {e}", args.bind, args.port),
            )
        });
    // Deterministic, gzip-looking bytes: only the length matters.
    let body: Bytes = (0..args.size)
        .map(|i| (i as u32).wrapping_mul(2_654_435_761).to_le_bytes()[3])
        .collect();
    let handler = Arc::new(Fixed {
        headers: asset_lines::gzip_asset_lines(args.size),
        body,
    });
    let runtime = args
        .runtime()
        .unwrap_or_else(|e| fail(1, format!("cannot start the runtime: {e}")));
    runtime.block_on(async move {
        let transport = Transport::start(
            vec![listener],
            true,
            Limits::default(),
            None,
            Arc::new(ConnStats::default()),
            handler,
        )
        .unwrap_or_else(|e| fail(1, format!("cannot serve: {e}")));
        println!("listening on http://{}", transport.addrs()[0]);
        eprintln!(
            "ceiling_ccc: {} byte gzip body, {} threads",
            args.size, args.threads
        );
        std::future::pending::<()>().await;
    });
}
