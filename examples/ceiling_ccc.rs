//! The throughput ceiling of ccc's own frontend (`src/frontend/`, what
//! `ccc serve` runs on): the same listener, connection threads, request
//! queue, limits and response writing, with N worker threads that answer
//! every request with one fixed in-memory gzip body, its header lines
//! built once, and no routing, cache or store at all.
//!
//! `bench/rps.sh` runs it beside `examples/ceiling.rs` (tiny_http's own
//! server, the ceiling issue 9 defines) as the configuration
//! `ceiling-ccc`: what `ccc serve` answers below this server is the price
//! of routing, negotiation, the cache and the store; what this server
//! answers below tiny_http's is the price of ccc's frontend (its limits,
//! timeouts and connection threads).
//!
//! ```text
//! cargo run --release --example ceiling_ccc -- --port 8336 --size 2218 --threads 4
//! ```
//!
//! The flags are those of `examples/ceiling.rs`: `--size` is the body
//! length in bytes (`bench/rps.sh` passes the median stored size of the
//! seeded catalog's assets), `--threads` the workers (default: two per
//! available core, as `ccc serve`). The header lines are the ones `ccc
//! serve` builds for a gzip asset (`examples/common/asset_lines.rs`); the
//! frontend adds Date, Content-Length and, for HTTP/1.0, Connection, as
//! it does for `ccc serve`. It runs until killed.

#[path = "common/asset_lines.rs"]
mod asset_lines;
#[path = "common/server_args.rs"]
mod server_args;

use ccc::frontend::{ConnStats, Frontend, Limits, Reply};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

fn parse_args() -> Result<server_args::ServerArgs, String> {
    server_args::parse("ceiling_ccc", 8336, &[])
}

/// A body that is a shared view of the one buffer, as a cache hit's is.
struct Shared(Arc<[u8]>);

impl AsRef<[u8]> for Shared {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

fn fail(code: i32, message: String) -> ! {
    eprintln!("error: {message}");
    std::process::exit(code)
}

fn main() {
    let args = parse_args().unwrap_or_else(|e| fail(2, e));
    let ip = args
        .bind
        .parse()
        .unwrap_or_else(|e| fail(2, format!("--bind {}: {e}", args.bind)));
    let listener = ccc::frontend::bind(SocketAddr::new(ip, args.port)).unwrap_or_else(|e| {
        fail(
            1,
            format!("cannot listen on {}:{}: {e}", args.bind, args.port),
        )
    });
    let frontend = Frontend::start(
        listener,
        Limits::default(),
        Arc::new(ConnStats::default()),
        Box::new(|_| {}),
    )
    .unwrap_or_else(|e| fail(1, format!("cannot serve: {e}")));
    // Deterministic, gzip-looking bytes: only the length matters.
    let body: Arc<[u8]> = (0..args.size)
        .map(|i| (i as u32).wrapping_mul(2_654_435_761).to_le_bytes()[3])
        .collect();
    let lines = asset_lines::gzip_asset_lines(args.size);
    println!("listening on http://{}", frontend.addr());
    eprintln!(
        "ceiling_ccc: {} byte gzip body, {} workers",
        args.size, args.threads
    );
    std::thread::scope(|scope| {
        for i in 0..args.threads.max(1) {
            let (frontend, body, lines) = (&frontend, &body, &lines);
            let started = std::thread::Builder::new()
                .name(format!("http-worker-{i}"))
                .spawn_scoped(scope, move || {
                    loop {
                        let Some(request) = frontend.recv_timeout(Duration::from_secs(1)) else {
                            continue;
                        };
                        let reply = Reply {
                            status: 200,
                            lines: lines.as_ref(),
                            length: body.len(),
                            body: Shared(body.clone()),
                        };
                        if let Err(e) = request.respond(reply) {
                            eprintln!("warning: sending a response failed: {e}");
                        }
                    }
                });
            if let Err(e) = started {
                fail(1, format!("cannot start a worker: {e}"));
            }
        }
    });
}
