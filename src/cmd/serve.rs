//! `ccc serve`: start the server, print where it listens, stop cleanly on
//! SIGINT/SIGTERM and print the final counters.

use crate::cli::{ServeArgs, ServerArgs};
use crate::error::{Error, Result};
use crate::output;
use crate::server::{self, Server};
use crate::store;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

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

/// Sets a flag on SIGINT or SIGTERM; a second signal exits at once.
pub fn stop_on_signals() -> Result<Arc<AtomicBool>> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [SIGINT, SIGTERM] {
        let install = signal_hook::flag::register_conditional_shutdown(signal, 1, stop.clone())
            .and_then(|_| signal_hook::flag::register(signal, stop.clone()));
        install.map_err(|e| Error::io("signal handler", e))?;
    }
    Ok(stop)
}

pub fn run(db: &Path, args: ServeArgs) -> Result<ExitCode> {
    let config = config(db, &args.server);
    let stop = stop_on_signals()?;
    let server = Server::start(config.clone())?;
    output::print(format_args!("listening on http://{}", server.addr()))?;
    eprintln!(
        "serving {} with {} workers; cache {} entries / {}",
        db.display(),
        config.threads,
        config.store.cache_entries,
        crate::units::human_size(config.store.cache_bytes),
    );
    let report = server.run(&stop)?;
    output::print(format_args!(
        "stopped after {:.1}s: {} requests, {} body bytes sent, cache {} hits / {} misses / {} evictions",
        report.uptime_secs,
        report.requests,
        report.bytes_sent,
        report.cache.hits,
        report.cache.misses,
        report.cache.evictions,
    ))?;
    Ok(ExitCode::SUCCESS)
}
