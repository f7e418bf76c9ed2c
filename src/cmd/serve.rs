//! `ccc serve`: start the server, print where it listens, stop cleanly on
//! SIGINT/SIGTERM and print the final counters. The signal is how a server
//! is meant to stop, so it exits 0 (see `interrupt`).
//!
//! Everything it prints goes through [`crate::log`], so a closed or full
//! stdout or stderr never stops it from serving.
//!
//! The `listening on` lines and the final counters go to stdout, except
//! while the access log goes there (`--access-log` without a file, in
//! either format): then stdout carries the log's lines alone, so that
//! `ccc serve --access-log --log-format json | jq .` reads every line and
//! a log tool reading `combined` lines meets nothing else, and those
//! lines go to stderr with the other notes. Without an access log on
//! stdout they stay there, where scripts that read the address from the
//! first line find it.

use crate::cli::{LogFormat, ServeArgs, ServerArgs};
use crate::error::{Error, Result};
use crate::http::access_log;
use crate::http::forwarded::TrustedProxies;
use crate::http::log_skip::LogSkip;
use crate::output::count;
use crate::serve::store;
use crate::serve::{self, Server};
use crate::transport::limits::DEFAULT_MAX_CONNECTIONS;
use crate::transport::{Limits, listen};
use crate::{interrupt, log};
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

/// How long the last lines may take to reach a slow stdout or stderr
/// before the process exits without them.
const FINAL_FLUSH: Duration = Duration::from_secs(2);

/// The port `serve` listens on unless `--port` says.
pub const DEFAULT_PORT: u16 = 8333;

/// Whether the access log goes to stdout (`--access-log`, or
/// `--access-log -`).
fn logs_to_stdout(args: &ServerArgs) -> bool {
    args.access_log.as_deref() == Some(Path::new("-"))
}

/// Opens the file `--access-log PATH` names for the access log, before
/// the server starts: one that cannot be opened is an error naming it.
pub fn open_access_log(args: &ServerArgs) -> Result<()> {
    match &args.access_log {
        Some(path) if !logs_to_stdout(args) => {
            log::access_to_file(path).map_err(|e| Error::io(path, e))
        }
        _ => Ok(()),
    }
}

/// Resolves the shared server flags into a server configuration.
pub fn config(db: &Path, args: &ServerArgs) -> Result<serve::Config> {
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let threads = args.threads.unwrap_or(cores).max(1);
    Ok(serve::Config {
        store: store::Config {
            db: db.to_path_buf(),
            cache_entries: args.cache_capacity.unwrap_or(usize::MAX),
            cache_bytes: args.cache_bytes,
            in_flight_bytes: args.in_flight_bytes,
            log_misses: args.log_misses,
            readers: threads,
            max_lag: args.max_lag,
        },
        bind: args.bind.clone(),
        port: args.port.unwrap_or(DEFAULT_PORT),
        threads,
        access_log: args.access_log.is_some().then_some(match args.log_format {
            LogFormat::Combined => access_log::Format::Combined,
            LogFormat::Json => access_log::Format::Json,
        }),
        log_skip: LogSkip::new(&args.log_exclude).map_err(Error::Usage)?,
        trusted_proxies: TrustedProxies::new(args.trust_proxy.clone()),
        aliases: serve::alias::Policy::new(args.alias_max_age)
            .with_not_found_max_age(args.not_found_max_age),
        limits: Limits {
            max_connections: DEFAULT_MAX_CONNECTIONS,
            header_timeout: args.header_timeout,
            keepalive_timeout: args.keepalive_timeout,
            send_timeout: args.send_timeout,
            body_timeout: args.body_timeout,
        },
        max_connections_asked: args.max_connections,
        tls: args.tls_cert.clone().zip(args.tls_key.clone()),
        reuse_port: args.reuse_port,
        shutdown_timeout: args.shutdown_timeout,
        api: serve::api::Config {
            enabled: args.publish_api,
            max_upload: args.max_upload_size,
            max_unpacked: args.max_unpacked_size,
            publish_wait: args.publish_wait,
            writer: args
                .writer
                .as_ref()
                .map(|u| u.as_str().trim_end_matches('/').to_string()),
            stats_allow: (!args.stats_allow.is_empty()).then(|| args.stats_allow.clone()),
        },
    })
}

pub fn run(db: &Path, args: ServeArgs) -> Result<ExitCode> {
    let config = config(db, &args.server)?;
    interrupt::watch()?;
    log::start();
    open_access_log(&args.server)?;
    let server = Server::start(config.clone())?;
    // Lines about the server, not about a request (module doc).
    let log_on_stdout = logs_to_stdout(&args.server);
    let say = |line: std::fmt::Arguments| {
        if log_on_stdout {
            log::err(line)
        } else {
            log::out(line)
        }
    };
    let scheme = if server.tls() { "https" } else { "http" };
    for addr in server.addrs() {
        say(format_args!("listening on {scheme}://{addr}"));
    }
    if config.reuse_port && !server.inherited() && listen::queued_connections_reset_on_close() {
        log::err(format_args!(
            "warning: net.ipv4.tcp_migrate_req is 0, so connections queued on this port when this server stops are reset, not handed to the next one; set it to 1 (examples/deploy/60-ccc-reuse-port.conf in /etc/sysctl.d/, or `sysctl -w net.ipv4.tcp_migrate_req=1`) for --reuse-port handovers that drop nothing"
        ));
    }
    if let Some(max_lag) = config.store.max_lag {
        let heartbeat = crate::follow::heartbeat_path(db);
        let age = std::fs::metadata(&heartbeat)
            .and_then(|m| m.modified())
            .ok()
            .map(|at| at.elapsed().unwrap_or_default());
        if let Some(age) = age.filter(|age| *age > max_lag) {
            log::err(format_args!(
                "warning: replica stale: its follower last confirmed catalog {} {} s ago ({} is \
                 older than --max-lag {}); /healthz answers 503 until it confirms again: is \
                 `ccc follow` running, and can it read the replica?",
                db.display(),
                age.as_secs(),
                heartbeat.display(),
                humantime::format_duration(max_lag),
            ));
        } else if age.is_none() {
            log::err(format_args!(
                "warning: --max-lag {} but no follower has confirmed catalog {} ({} does not \
                 exist): /healthz answers 503 `stale` until `ccc follow REPLICA` (or \
                 examples/deploy/ccc-follow) runs beside this server and confirms it",
                humantime::format_duration(max_lag),
                db.display(),
                heartbeat.display()
            ));
        }
    }
    if server.inherited() {
        log::err(format_args!(
            "serving the {} systemd passed (LISTEN_FDS); --bind and --port are not used",
            count(server.addrs().len() as u64, "socket")
        ));
    }
    let limits = server.limits();
    let files = server.open_files();
    let raised = if files.now > files.before {
        format!("open files raised {} -> {}", files.before, files.now)
    } else {
        format!("open files {}", files.now)
    };
    log::err(format_args!(
        "serving {} with {}; cache {}; in flight {}; up to {} ({raised}); timeouts: header {}, keep-alive {}, send {}",
        db.display(),
        count(config.threads as u64, "thread"),
        cache_bounds(&config.store),
        crate::units::human_size(config.store.in_flight_bytes),
        count(limits.max_connections as u64, "connection"),
        humantime::format_duration(limits.header_timeout),
        humantime::format_duration(limits.keepalive_timeout),
        humantime::format_duration(limits.send_timeout),
    ));
    if limits.max_connections > files.connection_budget() {
        log::err(format_args!(
            "warning: --max-connections {} is more than {} open files allow; past about {} connections, new ones wait until descriptors are free",
            limits.max_connections,
            files.now,
            files.connection_budget(),
        ));
    }
    let report = server.run(interrupt::stopped())?;
    say(format_args!(
        "stopped after {:.1}s: {}, {} sent, cache {} / {} / {}",
        report.uptime_secs,
        count(report.requests, "request"),
        count(report.bytes_sent, "body byte"),
        count(report.cache.hits, "hit"),
        count(report.cache.misses, "miss"),
        count(report.cache.evictions, "eviction"),
    ));
    log::flush(FINAL_FLUSH);
    Ok(ExitCode::SUCCESS)
}

/// The cache's bounds as the start line gives them: "64.0 MiB", or
/// "1000 entries / 64.0 MiB" with an entry limit, or "off".
fn cache_bounds(store: &store::Config) -> String {
    let bytes = crate::units::human_size(store.cache_bytes);
    match store.cache_entries {
        0 => "off".into(),
        usize::MAX => bytes,
        entries => format!("{} / {bytes}", count(entries as u64, "entry")),
    }
}
