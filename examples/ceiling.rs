//! The throughput ceiling of hyper itself, set up as `ccc serve` sets it
//! up: the listener from `ccc::testing::transport::bind` (`TCP_NODELAY`),
//! hyper's HTTP/1 connections (vectored writes) on a tokio runtime of
//! `--threads` threads, and every request answered with one
//! fixed in-memory gzip body and the header lines `ccc serve` sends for a
//! cache hit. No limits, deadlines, routing, cache or store.
//!
//! `bench/rps.sh` runs it beside `ccc serve` and nginx: what ccc serves
//! below this server is the price of ccc's transport policy, routing,
//! negotiation, the cache and the store.
//!
//! ```text
//! cargo run --release --example ceiling -- --port 8334 --size 2218
//! cargo run --release --example ceiling -- --port 8334 --size 2218 --threads 1 --bare
//! ```
//!
//! `--size` is the body length in bytes (`bench/rps.sh` passes the median
//! stored size of the seeded catalog's assets); `--bare` sends only
//! Content-Type and Content-Encoding; `--current-thread` serves on one
//! current-thread runtime instead of a multi-thread one
//! (`bench/lib/runtimes.sh`). It runs until killed.

#[path = "common/asset_lines.rs"]
mod asset_lines;
#[path = "common/server_args.rs"]
mod server_args;

use bytes::Bytes;
use http::{HeaderMap, Response};
use http_body_util::Full;
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

fn fail(code: i32, message: String) -> ! {
    eprintln!("error: {message}");
    std::process::exit(code)
}

fn main() {
    let args = server_args::parse("ceiling", 8334, &["--bare", "--current-thread"])
        .unwrap_or_else(|e| fail(2, e));
    let bare = args.switches.contains(&"--bare");
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
    let headers: HeaderMap = asset_lines::gzip_asset_lines(args.size)
        .iter()
        .filter(|(name, _)| !bare || matches!(name.as_str(), "content-type" | "content-encoding"))
        .map(|(name, value)| (name.clone(), value.clone()))
        .collect();
    // Deterministic, gzip-looking bytes: only the length matters.
    let body: Bytes = (0..args.size)
        .map(|i| (i as u32).wrapping_mul(2_654_435_761).to_le_bytes()[3])
        .collect();
    let runtime = args
        .runtime()
        .unwrap_or_else(|e| fail(1, format!("cannot start the runtime: {e}")));
    let shared = Arc::new((headers, body));
    runtime.block_on(async move {
        listener
            .set_nonblocking(true)
            .unwrap_or_else(|e| fail(1, e.to_string()));
        let listener =
            tokio::net::TcpListener::from_std(listener).unwrap_or_else(|e| fail(1, e.to_string()));
        println!(
            "listening on http://{}",
            listener
                .local_addr()
                .map_or_else(|e| e.to_string(), |a| a.to_string())
        );
        eprintln!(
            "ceiling: {} byte gzip body, {} threads",
            args.size, args.threads
        );
        let http = Arc::new(http1::Builder::new());
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let (http, shared) = (http.clone(), shared.clone());
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |_request| {
                    let mut response = Response::new(Full::new(shared.1.clone()));
                    *response.headers_mut() = shared.0.clone();
                    async move { Ok::<_, Infallible>(response) }
                });
                let _ = http.serve_connection(TokioIo::new(stream), service).await;
            });
        }
    });
}
