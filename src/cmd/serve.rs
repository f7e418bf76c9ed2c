//! `ccc serve`: start the server, print where it listens, stop cleanly on
//! SIGINT/SIGTERM and print the final counters. The signal is how a server
//! is meant to stop, so it exits 0 (see `interrupt`).

use crate::cli::{ServeArgs, ServerArgs};
use crate::error::Result;
use crate::output::count;
use crate::server::{self, Server};
use crate::{interrupt, output, store};
use std::path::Path;
use std::process::ExitCode;

/// Resolves the shared server flags into a server configuration.
pub fn config(db: &Path, args: &ServerArgs) -> server::Config {
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    server::Config {
        store: store::Config {
            db: db.to_path_buf(),
            cache_entries: args.cache_capacity,
            cache_bytes: args.cache_bytes,
            log_misses: args.log_misses,
        },
        bind: args.bind,
        port: args.port,
        threads: args.threads.unwrap_or(2 * cores).max(1),
        access_log: args.access_log,
    }
}

pub fn run(db: &Path, args: ServeArgs) -> Result<ExitCode> {
    let config = config(db, &args.server);
    let stop = interrupt::watch()?;
    let server = Server::start(config.clone())?;
    output::print(format_args!("listening on http://{}", server.addr()))?;
    eprintln!(
        "serving {} with {}; cache {} / {}",
        db.display(),
        count(config.threads as u64, "worker"),
        count(config.store.cache_entries as u64, "entry"),
        crate::units::human_size(config.store.cache_bytes),
    );
    let report = server.run(stop)?;
    output::print(format_args!(
        "stopped after {:.1}s: {}, {} sent, cache {} / {} / {}",
        report.uptime_secs,
        count(report.requests, "request"),
        count(report.bytes_sent, "body byte"),
        count(report.cache.hits, "hit"),
        count(report.cache.misses, "miss"),
        count(report.cache.evictions, "eviction"),
    ))?;
    Ok(ExitCode::SUCCESS)
}
