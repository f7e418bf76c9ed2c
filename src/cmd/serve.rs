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
use crate::cmd::args::*;
use crate::error::{Error, Result};
use crate::http::access_log;
use crate::http::forwarded::TrustedProxies;
use crate::http::log_skip::LogSkip;
use crate::output::count;
use crate::remote::parse_remote_url;
use crate::serve::store;
use crate::serve::{self, Server};
use crate::transport::limits::{self, DEFAULT_MAX_CONNECTIONS};
use crate::transport::{Limits, listen};
use crate::units::{flag_duration, flag_size};
use crate::{interrupt, log};
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// Serve the catalog over HTTP.
///
/// GET/HEAD /assets/PKG/VERSION/PATH returns a file: its brotli stream to
/// clients that accept `br` when publish kept one, else the stored gzip
/// stream to clients that accept gzip, the original bytes to others, with a
/// strong
/// ETag, Last-Modified and a one-year immutable Cache-Control; one
/// `Range: bytes=` range of it answers 206. VERSION may be a dist-tag
/// (`latest`, `next`) or a semver range (`^1.2`, `1`, `~1.4.0`): those
/// answer 302 to the version they name, with an ETag naming it, so a cache
/// revalidates them with a 304 until the tag or range moves. Every answer
/// carries `Access-Control-Allow-Origin: *` and OPTIONS answers CORS
/// preflights. /assets/PKG/VERSION/ lists the files as JSON, /assets/PKG/
/// the package's versions and tags; /assets/PKG/VERSION redirects to the
/// version's entry file. unpkg's URL shape, /PKG@VERSION/PATH (and
/// /assets/PKG@VERSION/PATH), answers as /assets/PKG/VERSION/PATH does. /_stats (JSON), /metrics (Prometheus) and
/// /healthz report on the server. SIGINT or SIGTERM stops it after the
/// requests in flight.
#[derive(Debug, Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub(crate) server: ServerArgs,

    /// Leave brotli streams at the quality publish gave them. By default
    /// a server that may write its catalog (not a replica) brings them up
    /// to quality 11 in the background, on idle CPU only, as `ccc
    /// recompress` does: fewer bytes for brotli clients.
    #[arg(long)]
    pub(crate) no_recompress: bool,
}

/// The server's flags, shared by `serve` and `causal`.
#[derive(Debug, Clone, Args)]
pub(crate) struct ServerArgs {
    /// Address or host name to listen on; a name (`localhost`) listens on
    /// every address it resolves to.
    #[arg(
        long,
        env = "CCC_BIND",
        default_value = "127.0.0.1",
        value_name = "ADDR",
        value_parser = parse_bind
    )]
    pub bind: String,

    /// Port to listen on; 0 picks a free one (the first line of output
    /// names it) [default: 8333 for `serve`, a free one for `causal`, whose
    /// server only its own load reaches].
    #[arg(long, env = "CCC_PORT", value_name = "PORT", value_parser = parse_port)]
    pub port: Option<u16>,

    /// Threads serving connections, at least 1; a request the cache cannot
    /// answer holds its thread while the catalog is read [default: one per
    /// core].
    #[arg(long, env = "CCC_THREADS", value_name = "N", value_parser = at_least_one)]
    pub threads: Option<usize>,

    /// Most assets kept in memory; 0 turns the cache off [default: no
    /// limit but --cache-bytes].
    #[arg(
        long,
        env = "CCC_CACHE_CAPACITY",
        value_name = "N",
        value_parser = parse_count
    )]
    pub cache_capacity: Option<usize>,

    /// Most bytes the asset cache holds in memory, like 1GiB: bodies,
    /// names, prepared headers and the cache index.
    #[arg(long, env = "CCC_CACHE_BYTES", default_value = crate::serve::store::DEFAULT_CACHE_BYTES, value_parser = parse_size, value_name = "SIZE")]
    pub cache_bytes: u64,

    /// Most bytes the file index holds in memory, like 64MiB; 0 turns it
    /// off. It keeps what the catalog said of each file a miss read (where
    /// its bytes are, their digests, its headers' values), so the file's
    /// next miss reads only its bytes, as nginx's open_file_cache does.
    #[arg(long, env = "CCC_INDEX_BYTES", default_value = crate::serve::store::DEFAULT_INDEX_BYTES, value_parser = parse_size, value_name = "SIZE")]
    pub index_bytes: u64,

    /// Most bytes responses in flight hold beyond the cache, like 256MiB:
    /// bodies read for a response the cache does not keep, pieces being
    /// sent, decoders. A file longer than 64 KiB is sent from the catalog
    /// a checked piece at a time when its whole body does not fit; a
    /// piece waits for room (within --send-timeout).
    #[arg(long, env = "CCC_IN_FLIGHT_BYTES", default_value = crate::serve::in_flight::DEFAULT_IN_FLIGHT_BYTES, value_parser = parse_size, value_name = "SIZE")]
    pub in_flight_bytes: u64,

    /// Print a line to stderr for every cache miss.
    #[arg(long)]
    pub log_misses: bool,

    /// How long caches may reuse a redirect from a dist-tag or a range
    /// (`max-age`) before they revalidate it; 0 makes them revalidate
    /// every time (a 304 while the alias has not moved).
    #[arg(long, env = "CCC_ALIAS_MAX_AGE", default_value = flag_duration(crate::serve::alias::DEFAULT_ALIAS_MAX_AGE), value_parser = parse_duration, value_name = "DURATION")]
    pub alias_max_age: Duration,

    /// How long caches may keep a 404 for a missing package, version or
    /// file (`max-age`; 0: not at all), so that a scan of missing paths is
    /// answered by the cache in front instead of the catalog. A version
    /// published after such a 404 is seen through that cache at most this
    /// much later.
    #[arg(long, env = "CCC_NOT_FOUND_MAX_AGE", default_value = flag_duration(crate::serve::alias::DEFAULT_NOT_FOUND_MAX_AGE), value_parser = parse_duration, value_name = "DURATION")]
    pub not_found_max_age: Duration,

    /// On a replica kept by `ccc follow` (or examples/deploy/ccc-follow):
    /// the longest its follower may go without confirming that the catalog
    /// served is the replica's newest (it touches `DB.follow` each time it
    /// does). Past it, or with no such file, `/healthz` says `stale` and
    /// answers 503, so a load balancer takes the replica out; stderr says
    /// when the replica turns stale and when it recovers, and at start
    /// when no follower has confirmed it yet.
    #[arg(long, env = "CCC_MAX_LAG", value_parser = parse_positive_duration, value_name = "DURATION")]
    pub max_lag: Option<Duration>,

    /// Write a line for every request, in --log-format: to stdout, or
    /// appended to the file PATH (`-`: stdout). SIGUSR1 opens PATH again,
    /// for log rotation (logrotate renames the file, then signals). While
    /// the log goes to stdout, stdout holds its lines alone: the
    /// `listening on` and final lines go to stderr.
    #[arg(long, env = "CCC_ACCESS_LOG", value_name = "PATH", num_args = 0..=1, default_missing_value = "-")]
    pub access_log: Option<PathBuf>,

    /// The access log's format: `combined` is nginx's default format,
    /// `json` one object per line (fields in docs/JSON.md). Needs
    /// --access-log.
    #[arg(
        long,
        value_enum,
        default_value_t = LogFormat::Combined,
        requires = "access_log",
        value_name = "FORMAT"
    )]
    pub log_format: LogFormat,

    /// Leave requests whose path (without the query) matches GLOB out of
    /// the access log, like `/healthz` or `/metrics` (repeatable; `*`
    /// crosses `/`). They are still counted in /_stats and /metrics.
    #[arg(
        long,
        env = "CCC_LOG_EXCLUDE",
        value_delimiter = ',',
        value_name = "GLOB",
        value_parser = parse_glob,
        requires = "access_log"
    )]
    pub log_exclude: Vec<String>,

    /// A proxy (an address or a CIDR block, repeatable) whose `Forwarded`
    /// or `X-Forwarded-For` names the client the access log records, read
    /// from the right past every trusted proxy. Requests from anyone else
    /// are logged as their peer.
    #[arg(
        long,
        env = "CCC_TRUST_PROXY",
        value_delimiter = ',',
        value_name = "CIDR",
        value_parser = parse_proxy
    )]
    pub trust_proxy: Vec<ipnet::IpNet>,

    /// Most client connections open at once. Past it the longest idle
    /// keep-alive connections are closed to make room; when none is idle a
    /// new connection is answered 503 with `Retry-After: 1` and closed
    /// [default: 16384, or fewer if the open-files limit is lower].
    #[arg(long, env = "CCC_MAX_CONNECTIONS", value_name = "N", value_parser = parse_max_connections)]
    pub max_connections: Option<usize>,

    /// Time a client has to send a complete request head (line and
    /// headers), from connecting or from the first byte of a later
    /// request; then the connection is closed.
    #[arg(long, env = "CCC_HEADER_TIMEOUT", default_value = flag_duration(limits::DEFAULT_HEADER_TIMEOUT), value_parser = parse_positive_duration, value_name = "DURATION")]
    pub header_timeout: Duration,

    /// Time an idle keep-alive connection is kept open.
    #[arg(long, env = "CCC_KEEPALIVE_TIMEOUT", default_value = flag_duration(limits::DEFAULT_KEEPALIVE_TIMEOUT), value_parser = parse_positive_duration, value_name = "DURATION")]
    pub keepalive_timeout: Duration,

    /// Time a client may take no response bytes at all before its
    /// connection is closed. A slow client holds only its own connection,
    /// never a worker.
    #[arg(long, env = "CCC_SEND_TIMEOUT", default_value = flag_duration(limits::DEFAULT_SEND_TIMEOUT), value_parser = parse_positive_duration, value_name = "DURATION")]
    pub send_timeout: Duration,

    /// Time a client may go without sending a byte of an upload's body
    /// (--publish-api), counted between two reads, not for the whole body;
    /// then the upload fails, nothing is published, and the connection is
    /// closed.
    #[arg(long, env = "CCC_BODY_TIMEOUT", default_value = flag_duration(limits::DEFAULT_BODY_TIMEOUT), value_parser = parse_positive_duration, value_name = "DURATION")]
    pub body_timeout: Duration,

    /// On SIGINT or SIGTERM, how long requests in flight (a long download
    /// too) may take to finish after the server stops accepting; then the
    /// connections left are closed.
    #[arg(long, env = "CCC_SHUTDOWN_TIMEOUT", default_value = "30s", value_parser = parse_duration, value_name = "DURATION")]
    pub shutdown_timeout: Duration,

    /// Serve HTTPS (HTTP/2 and HTTP/1.1 by ALPN) with this PEM certificate
    /// chain, leaf first. SIGHUP reads it and the key again.
    #[arg(long, env = "CCC_TLS_CERT", value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,

    /// The PEM private key of --tls-cert (PKCS#8, PKCS#1 or SEC1).
    #[arg(long, env = "CCC_TLS_KEY", value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,

    /// With --tls-cert: also listen for plain HTTP on PORT (on the --bind
    /// addresses, or a socket systemd passes with FileDescriptorName=redirect)
    /// and answer every request there with a 308 to the same URL over HTTPS.
    #[arg(
        long,
        env = "CCC_REDIRECT_HTTP",
        value_name = "PORT",
        requires = "tls_cert"
    )]
    pub redirect_http: Option<u16>,

    /// With --redirect-http: answer ACME's HTTP-01 challenges
    /// (/.well-known/acme-challenge/TOKEN) there from this webroot, the
    /// folder given to `certbot certonly --webroot -w DIR` or `lego
    /// --http.webroot DIR`; renewals then need no other server on port 80.
    #[arg(
        long,
        env = "CCC_ACME_DIR",
        value_name = "DIR",
        requires = "redirect_http"
    )]
    pub acme_dir: Option<PathBuf>,

    /// Take changes over HTTP: `ccc publish --to`, `ccc tag --to` and `ccc
    /// rm --to` with a token made by `ccc token create` (PUT and DELETE
    /// under /-/api/v1/). Off unless given: a catalog may be served by many
    /// servers, and only its writer, over TLS, should take writes.
    #[arg(long, env = "CCC_PUBLISH_API", value_parser = clap::builder::BoolishValueParser::new(), action = clap::ArgAction::SetTrue)]
    pub publish_api: bool,

    /// With --publish-api: the largest upload taken; a larger one is
    /// answered 413 and nothing is published.
    #[arg(long, env = "CCC_MAX_UPLOAD_SIZE", value_name = "SIZE", default_value = flag_size(crate::serve::api::DEFAULT_MAX_UPLOAD), value_parser = parse_size)]
    pub max_upload_size: u64,

    /// With --publish-api: refuse an upload whose tar stream, decompressed,
    /// is larger than SIZE (a gzip bomb), answered 422.
    #[arg(long, env = "CCC_MAX_UNPACKED_SIZE", value_name = "SIZE", default_value = flag_size(crate::catalog::archive::DEFAULT_MAX_UNPACKED_SIZE), value_parser = parse_size)]
    pub max_unpacked_size: u64,

    /// With --publish-api: how long a change waits for the one before it
    /// (the catalog takes one at a time); then it is answered 503 with
    /// Retry-After.
    #[arg(long, env = "CCC_PUBLISH_WAIT", value_name = "DURATION", default_value = flag_duration(crate::serve::api::DEFAULT_PUBLISH_WAIT), value_parser = parse_duration)]
    pub publish_wait: Duration,

    /// On a replica: the writer's URL, which the write API names to a
    /// client that sends a change here.
    #[arg(long, env = "CCC_WRITER", value_name = "URL", value_parser = parse_remote_url)]
    pub writer: Option<url::Url>,

    /// Answer /_stats and /metrics only to these addresses (a CIDR block,
    /// repeatable), and to a bearer of a token with the read-stats scope,
    /// as nginx's allow/deny restricts stub_status [default: anyone].
    #[arg(long, env = "CCC_STATS_ALLOW", value_delimiter = ',', value_name = "CIDR", value_parser = parse_proxy)]
    pub stats_allow: Vec<ipnet::IpNet>,

    /// Share the port with other processes that set it too (SO_REUSEPORT),
    /// so a new `ccc serve` can start before the old one stops. Both must
    /// set it. For such a handover to drop nothing, Linux needs
    /// net.ipv4.tcp_migrate_req=1 (examples/deploy/60-ccc-reuse-port.conf);
    /// with its default, 0, the connections queued on the old server's
    /// socket when it closes are reset, and serve warns at start. Not
    /// needed under systemd socket activation, which passes the socket
    /// itself.
    #[arg(long)]
    pub reuse_port: bool,
}

/// `--log-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum LogFormat {
    /// nginx's default: addr - - [time] "request" status bytes "referer" "agent".
    Combined,
    /// One JSON object per line.
    Json,
}

/// How long the last lines may take to reach a slow stdout or stderr
/// before the process exits without them.
const FINAL_FLUSH: Duration = Duration::from_secs(2);

/// The port `serve` listens on unless `--port` says.
pub(crate) const DEFAULT_PORT: u16 = 8333;

/// Whether the access log goes to stdout (`--access-log`, or
/// `--access-log -`).
fn logs_to_stdout(args: &ServerArgs) -> bool {
    args.access_log.as_deref() == Some(Path::new("-"))
}

/// Opens the file `--access-log PATH` names for the access log, before
/// the server starts: one that cannot be opened is an error naming it.
pub(crate) fn open_access_log(args: &ServerArgs) -> Result<()> {
    match &args.access_log {
        Some(path) if !logs_to_stdout(args) => {
            log::access_to_file(path).map_err(|e| Error::io(path, e))
        }
        _ => Ok(()),
    }
}

/// Resolves the shared server flags into a server configuration.
pub(crate) fn config(db: &Path, args: &ServerArgs) -> Result<serve::Config> {
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let threads = args.threads.unwrap_or(cores).max(1);
    Ok(serve::Config {
        store: store::Config {
            db: db.to_path_buf(),
            cache_entries: args.cache_capacity.unwrap_or(usize::MAX),
            cache_bytes: args.cache_bytes,
            index_bytes: args.index_bytes,
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
        recompress: false,
        redirect_http: args.redirect_http,
        acme_dir: args.acme_dir.clone(),
    })
}

pub(crate) fn run(db: &Path, args: ServeArgs) -> Result<ExitCode> {
    let mut config = config(db, &args.server)?;
    // A replica's catalog is its follower's to write.
    let replica = config.api.writer.is_some()
        || config.store.max_lag.is_some()
        || crate::follow::heartbeat_path(db).exists();
    config.recompress = !args.no_recompress && !replica;
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
    for addr in server.redirect_addrs() {
        say(format_args!("redirecting http://{addr} to HTTPS"));
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
