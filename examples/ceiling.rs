//! The throughput ceiling of a tiny_http server set up as `ccc serve` was
//! before it took over its own connections (`src/frontend/`): listener bound
//! through `ccc::serve::bind` with `TCP_NODELAY`, handed to
//! `Server::from_listener`, N worker threads calling `recv`. It answers
//! every request with one fixed in-memory gzip body and no lookup at all.
//! It has none of ccc's limits or timeouts; it stays as the reference the
//! recorded numbers in `bench/RPS.md` were taken against.
//!
//! `bench/rps.sh` runs it beside `ccc serve` and nginx: whatever ccc serves
//! below this server's requests per second is the price of routing, the store
//! actor hop, the cache and SQLite; whatever this server serves below nginx
//! is the price of tiny_http itself.
//!
//! ```text
//! cargo run --release --example ceiling -- --port 8334 --size 2218
//! cargo run --release --example ceiling -- --port 8334 --size 2218 --threads 4 --bare
//! ```
//!
//! `--size` is the body length in bytes (`bench/rps.sh` passes the median
//! stored size of the seeded catalog's assets). By default the response
//! carries the same header lines `ccc serve` sends for a gzip asset, built
//! by ccc's own code once at startup (`examples/common/asset_lines.rs`), so
//! both servers put the same bytes on the wire; `--bare` sends only
//! Content-Type and Content-Encoding.
//! `--threads` defaults to what `ccc serve` uses: two per available core.
//! The body is shared (`Arc<[u8]>`), as a cache hit's is in ccc, so no body
//! bytes are copied before tiny_http writes them. It runs until killed.

#[path = "common/asset_lines.rs"]
mod asset_lines;
#[path = "common/server_args.rs"]
mod server_args;

use std::io::Cursor;
use std::net::SocketAddr;
use std::sync::Arc;
use tiny_http::{Header, Response, StatusCode};

fn parse_args() -> Result<server_args::ServerArgs, String> {
    server_args::parse("ceiling", 8334, &["--bare"])
}

/// The header lines of one of ccc's gzip asset responses (tiny_http adds
/// Date and Content-Length itself, as it did for ccc).
fn headers(bare: bool, size: usize) -> Vec<Header> {
    let lines = asset_lines::gzip_asset_lines(size);
    lines
        .iter()
        .filter(|(n, _)| !bare || matches!(*n, "Content-Type" | "Content-Encoding"))
        .filter_map(|(n, v)| Header::from_bytes(n.as_bytes(), v.as_bytes()).ok())
        .collect()
}

/// A body that is a shared view of the one buffer.
struct Shared(Arc<[u8]>);

impl AsRef<[u8]> for Shared {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    let bare = args.switches.contains(&"--bare");
    let ip = match args.bind.parse() {
        Ok(ip) => ip,
        Err(e) => {
            eprintln!("error: --bind {}: {e}", args.bind);
            std::process::exit(2);
        }
    };
    let listener = match ccc::serve::bind(SocketAddr::new(ip, args.port)) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("error: cannot listen on {}:{}: {e}", args.bind, args.port);
            std::process::exit(1);
        }
    };
    let addr = listener
        .local_addr()
        .map_or_else(|_| "?".into(), |a| a.to_string());
    let server = match tiny_http::Server::from_listener(listener, None) {
        Ok(s) => Arc::new(s),
        Err(e) => {
            eprintln!("error: cannot serve on {addr}: {e}");
            std::process::exit(1);
        }
    };
    // Deterministic, gzip-looking bytes: the content does not matter to the
    // server, only the length does.
    let body: Arc<[u8]> = (0..args.size)
        .map(|i| (i as u32).wrapping_mul(2_654_435_761).to_le_bytes()[3])
        .collect();
    let headers = headers(bare, args.size);
    println!("listening on http://{addr}");
    eprintln!(
        "ceiling: {} byte gzip body, {} workers{}",
        args.size,
        args.threads,
        if bare { ", bare headers" } else { "" }
    );
    let workers: Vec<_> = (0..args.threads.max(1))
        .map(|i| {
            let server = server.clone();
            let body = body.clone();
            let headers = headers.clone();
            std::thread::Builder::new()
                .name(format!("http-worker-{i}"))
                .spawn(move || {
                    loop {
                        let request = match server.recv() {
                            Ok(r) => r,
                            Err(e) => {
                                eprintln!("warning: accepting a request failed: {e}");
                                continue;
                            }
                        };
                        let response = Response::new(
                            StatusCode(200),
                            headers.clone(),
                            Cursor::new(Shared(body.clone())),
                            Some(body.len()),
                            None,
                        );
                        if let Err(e) = request.respond(response) {
                            eprintln!("warning: sending a response failed: {e}");
                        }
                    }
                })
        })
        .collect();
    for worker in workers {
        match worker {
            Ok(handle) => {
                let _ = handle.join();
            }
            Err(e) => {
                eprintln!("error: cannot start a worker: {e}");
                std::process::exit(1);
            }
        }
    }
}
