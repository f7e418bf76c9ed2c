//! `ccc serve`: the [`transport`] (hyper on tokio) hands
//! each request to the `service`, which answers it on the thread that
//! read it: from the cache, or from the thread's own catalog connection;
//! the store actor keeps what must stay single.
//!
//! ```text
//! transport (tokio threads:   service ([`service`])            store actor ([`store`])
//! connections, HTTP/1, /2,    route, negotiate, validate        cache admission and eviction,
//! TLS, deadlines) ------->    ([`answer`])                      staleness watch, the file
//!                                |  hit: read the cache  <----- publishes entries ([`cache`])
//!                                |  miss, latest/range,
//!                                |  listing: the thread's own
//!                                |  connection, lookup, prepare
//!                                |  ([`prepared`]); a miss is
//!                                |  offered to the cache ------>  admits or refuses it
//!                                v
//!                             response (prepared header lines, body shared with the cache)
//! ```
//!
//! A cached asset is answered from an entry whose header lines and ETags
//! were built once; the thread records the hit for the store, which alone
//! decides recency, admission and eviction.
//!
//! Startup order is deliberate: the store actor opens and checks the catalog
//! first, so a missing or invalid database fails before any port is bound;
//! then the open-files limit is raised and the listeners bound or taken
//! from systemd (see [`listen`]). A request never panics the server: every
//! failure becomes a JSON error response, and an internal error is logged
//! to stderr, never sent to the client.

pub(crate) mod alias;
mod allocator;
pub(crate) mod answer;
pub(crate) mod api;
pub(crate) mod browse;
pub(crate) mod cache;
pub(crate) mod counters;
mod frequency;
mod import_map;
pub(crate) mod in_flight;
pub(crate) mod metrics;
mod missing;
pub(crate) mod pieces;
pub(crate) mod prepared;
mod recompress;
mod redirect;
pub(crate) mod response;
mod service;
pub(crate) mod site;
pub(crate) mod store;
pub(crate) mod stored;

pub(crate) use counters::{Counters, StatsReport};

use crate::causal;
use crate::error::{Error, Result};
use crate::http::access_log;
use crate::http::forwarded::TrustedProxies;
use crate::http::log_skip::LogSkip;
use crate::log;
use crate::transport::{self, Limits, OpenFiles, Transport, listen, tls};
use service::Service;
use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// Listens on every address `host` resolves to (an IP address is its own),
/// all on one port: with port 0, the one the first address got. Of a name's
/// addresses, one the system cannot use (IPv6 turned off) is passed over
/// once another is bound.
fn bind_all(host: &str, port: u16, reuse_port: bool) -> Result<Vec<TcpListener>> {
    use std::net::ToSocketAddrs;
    let mut addrs: Vec<SocketAddr> = Vec::new();
    let resolved = (host, port)
        .to_socket_addrs()
        .map_err(|source| Error::Resolve {
            host: host.to_string(),
            source,
        })?;
    for addr in resolved {
        if !addrs.contains(&addr) {
            addrs.push(addr);
        }
    }
    let mut listeners: Vec<TcpListener> = Vec::new();
    for mut addr in addrs {
        if let Some(first) = listeners.first() {
            let bound = first.local_addr().map_err(|source| Error::Bind {
                addr,
                source,
                reuse_port,
                holder: None,
            })?;
            addr.set_port(bound.port());
        }
        match listen::bind(addr, reuse_port) {
            Ok(listener) => listeners.push(listener),
            Err(e)
                if !listeners.is_empty()
                    && (e.kind() == std::io::ErrorKind::AddrNotAvailable
                        || e.raw_os_error() == Some(libc::EAFNOSUPPORT)) => {}
            Err(source) => {
                let holder = (source.kind() == std::io::ErrorKind::AddrInUse)
                    .then(|| transport::holder::Holder::of(addr));
                return Err(Error::Bind {
                    addr,
                    source,
                    reuse_port,
                    holder,
                });
            }
        }
    }
    if listeners.is_empty() {
        return Err(Error::Resolve {
            host: host.to_string(),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "it has no address"),
        });
    }
    Ok(listeners)
}

/// How often the server considers giving freed memory back to the system
/// ([`allocator`]).
const RELEASE_EVERY: Duration = Duration::from_millis(200);

/// How long a stopping server waits for the background brotli pass to
/// close the catalog.
const RECOMPRESSOR_STOP_WAIT: Duration = Duration::from_secs(2);

/// How to run the server.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    pub store: store::Config,
    /// An IP address or a host name (see `bind_all`).
    pub bind: String,
    pub port: u16,
    /// The runtime's threads.
    pub threads: usize,
    /// Log one line per request, in this format (to stdout, or the file
    /// `crate::log::access_to_file` named).
    pub access_log: Option<access_log::Format>,
    /// The requests the access log leaves out (`--log-exclude`).
    pub log_skip: LogSkip,
    /// Whose forwarding headers name the client (`--trust-proxy`).
    pub trusted_proxies: TrustedProxies,
    /// How redirects from aliases are cached (`--alias-max-age`).
    pub aliases: alias::Policy,
    /// Connection limits; `max_connections` is replaced by the effective
    /// cap at start when `max_connections_asked` is None.
    pub limits: Limits,
    /// `--max-connections` as given.
    pub max_connections_asked: Option<usize>,
    /// `--tls-cert` and `--tls-key`, when TLS is on.
    pub tls: Option<(PathBuf, PathBuf)>,
    /// `--reuse-port`: share the port with another `ccc serve`.
    pub reuse_port: bool,
    /// `--shutdown-timeout`: how long a stop waits for requests in flight.
    pub shutdown_timeout: Duration,
    /// The write API (`--publish-api`) and who reads /_stats.
    pub api: api::Config,
    /// Brings brotli streams up to quality 11 in the background
    /// (`recompress`).
    pub recompress: bool,
    /// `--redirect-http`: a plain-HTTP port that redirects to HTTPS
    /// (`redirect`), and `--acme-dir`, the ACME webroot it answers
    /// challenges from.
    pub redirect_http: Option<u16>,
    pub acme_dir: Option<PathBuf>,
}

/// The name of a socket systemd passes for the redirecting listener
/// (`FileDescriptorName=redirect` in its socket unit); every other passed
/// socket serves.
pub(crate) const REDIRECT_SOCKET_NAME: &str = "redirect";

/// A started server: the store is open and the port is bound.
pub(crate) struct Server {
    runtime: tokio::runtime::Runtime,
    transport: Transport,
    /// The plain-HTTP listener that redirects to HTTPS, if any.
    redirecting: Option<Transport>,
    certificate: Option<tls::Certificate>,
    service: Arc<Service>,
    store: store::Running,
    counters: Arc<Counters>,
    open_files: OpenFiles,
    /// Whether the listeners came from systemd's socket activation.
    inherited: bool,
    /// The background brotli pass, when on.
    recompressor: Option<recompress::Recompressor>,
    config: Config,
}

impl Server {
    /// Opens the store, raises the open-files limit, loads the TLS pair,
    /// then binds the port (or takes systemd's sockets).
    pub(crate) fn start(mut config: Config) -> Result<Server> {
        allocator::tune();
        let store = store::start(config.store.clone())?;
        let open_files = transport::limits::raise_open_files()
            .map_err(|e| Error::system("cannot raise the open-files limit (RLIMIT_NOFILE)", e))?;
        config.limits.max_connections =
            transport::limits::max_connections(config.max_connections_asked, open_files);
        let certificate = match &config.tls {
            Some((cert, key)) => Some(tls::Certificate::load(cert, key).map_err(Error::Tls)?),
            None => None,
        };
        let acceptor = match &certificate {
            Some(c) => Some(c.acceptor().map_err(Error::Tls)?),
            None => None,
        };
        let passed = listen::inherited()
            .map_err(|e| Error::system("cannot use the sockets systemd passed (LISTEN_FDS)", e))?;
        let inherited = !passed.is_empty();
        let (redirect_listeners, listeners) = if inherited {
            let (redirect, serve): (Vec<_>, Vec<_>) = passed
                .into_iter()
                .partition(|(_, name)| name == REDIRECT_SOCKET_NAME);
            let unnamed = |v: Vec<(std::net::TcpListener, String)>| -> Vec<_> {
                v.into_iter().map(|(l, _)| l).collect()
            };
            (unnamed(redirect), unnamed(serve))
        } else {
            let redirect = match config.redirect_http {
                Some(port) => bind_all(&config.bind, port, config.reuse_port)?,
                None => Vec::new(),
            };
            (
                redirect,
                bind_all(&config.bind, config.port, config.reuse_port)?,
            )
        };
        let counters = Arc::new(Counters::new());
        let api = Arc::new(api::Api::new(
            config.api.clone(),
            config.store.db.clone(),
            config.trusted_proxies.clone(),
        ));
        let service = Arc::new_cyclic(|me| Service {
            store: store.handle.clone(),
            counters: counters.clone(),
            access_log: config.access_log,
            log_skip: config.log_skip.clone(),
            trusted_proxies: config.trusted_proxies.clone(),
            aliases: config.aliases.clone(),
            api,
            me: me.clone(),
        });
        let runtime = runtime(config.threads)
            .map_err(|e| Error::system("cannot start the server's threads", e))?;
        // Sockets no other process accepts on are shut at stop.
        let sole = !inherited && !config.reuse_port;
        let transport = {
            let _entered = runtime.enter();
            Transport::start(
                listeners,
                sole,
                config.limits,
                acceptor,
                counters.connections.clone(),
                service.clone(),
            )
            .map_err(|e| Error::system("cannot serve on the listening socket", e))?
        };
        let redirecting = match redirect_listeners.is_empty() {
            true => None,
            false => {
                let _entered = runtime.enter();
                let redirector = Arc::new(redirect::Redirector {
                    https_port: transport.addrs()[0].port(),
                    acme_dir: config.acme_dir.clone(),
                });
                let stats = Arc::new(transport::ConnStats::default());
                let started = Transport::start(
                    redirect_listeners,
                    sole,
                    config.limits,
                    None,
                    stats,
                    redirector,
                );
                Some(
                    started
                        .map_err(|e| Error::system("cannot serve on the redirecting socket", e))?,
                )
            }
        };
        let recompressor = match config.recompress {
            true => Some(
                recompress::start(config.store.db.clone())
                    .map_err(|e| Error::system("cannot start the recompressing thread", e))?,
            ),
            false => None,
        };
        Ok(Server {
            runtime,
            transport,
            redirecting,
            certificate,
            service,
            store,
            counters,
            open_files,
            inherited,
            recompressor,
            config,
        })
    }

    /// The first bound address (the real port when 0 was asked for).
    #[cfg(feature = "causal")]
    pub(crate) fn addr(&self) -> SocketAddr {
        self.transport.addrs()[0]
    }

    /// Every bound address.
    pub(crate) fn addrs(&self) -> &[SocketAddr] {
        self.transport.addrs()
    }

    /// The addresses of the listener that redirects to HTTPS, if any.
    pub(crate) fn redirect_addrs(&self) -> &[SocketAddr] {
        self.redirecting.as_ref().map_or(&[], |t| t.addrs())
    }

    /// Whether the listeners came from systemd (`LISTEN_FDS`).
    pub(crate) fn inherited(&self) -> bool {
        self.inherited
    }

    /// Whether connections are TLS.
    pub(crate) fn tls(&self) -> bool {
        self.certificate.is_some()
    }

    /// The limits in force (the connection cap resolved).
    pub(crate) fn limits(&self) -> Limits {
        self.config.limits
    }

    /// The open-files limit before and after raising it.
    pub(crate) fn open_files(&self) -> OpenFiles {
        self.open_files
    }

    /// Serves until `stop` is ready (`interrupt::stopped` for the
    /// command), reloading the TLS pair on SIGHUP and opening the access
    /// log's file again on SIGUSR1; then stops accepting, lets requests in
    /// flight finish (up to `--shutdown-timeout`) and returns the final
    /// counters.
    pub(crate) fn run(self, stop: impl Future<Output = ()>) -> Result<StatsReport> {
        let Server {
            runtime,
            transport,
            redirecting,
            certificate,
            service,
            store,
            counters,
            config,
            mut recompressor,
            ..
        } = self;
        let cut_off = runtime.block_on(async {
            use tokio::signal::unix::{SignalKind, signal};
            let mut hangup = signal(SignalKind::hangup()).ok();
            let mut rotate = signal(SignalKind::user_defined1()).ok();
            let mut releaser = allocator::Releaser::default();
            let mut release = tokio::time::interval(RELEASE_EVERY);
            release.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            let mut stop = std::pin::pin!(stop);
            loop {
                let hung_up = async {
                    match hangup.as_mut() {
                        Some(signal) => signal.recv().await,
                        None => std::future::pending().await,
                    }
                };
                let rotated = async {
                    match rotate.as_mut() {
                        Some(signal) => signal.recv().await,
                        None => std::future::pending().await,
                    }
                };
                tokio::select! {
                    _ = &mut stop => {
                        if let Some(r) = recompressor.as_mut() {
                            r.ask_to_stop();
                        }
                        break;
                    }
                    _ = hung_up => reload(certificate.as_ref()),
                    _ = rotated => reopen_access_log(),
                    _ = release.tick() => releaser.tick(),
                }
            }
            let redirects_cut_off = async {
                match redirecting {
                    Some(t) => t.shutdown(config.shutdown_timeout).await,
                    None => 0,
                }
            };
            let (cut_off, redirects_cut_off) = tokio::join!(
                transport.shutdown(config.shutdown_timeout),
                redirects_cut_off
            );
            cut_off + redirects_cut_off
        });
        if cut_off > 0 {
            log::err(format_args!(
                "warning: {} after --shutdown-timeout {} closed",
                crate::output::count_verb(
                    cut_off as u64,
                    "connection",
                    "still busy was",
                    "still busy were"
                ),
                humantime::format_duration(config.shutdown_timeout)
            ));
        }
        let cache = store.handle.stats().unwrap_or_default();
        let report = counters.snapshot(cache, store.handle.in_flight().stats());
        runtime.shutdown_timeout(Duration::from_secs(1));
        drop(service);
        if let Some(r) = recompressor {
            r.stop(RECOMPRESSOR_STOP_WAIT);
        }
        store.join();
        Ok(report)
    }
}

/// SIGHUP: the TLS pair is read again; a pair that does not load leaves
/// the old one in force.
fn reload(certificate: Option<&tls::Certificate>) {
    match certificate.map(tls::Certificate::reload) {
        None => log::err(format_args!("SIGHUP: nothing to reload (no --tls-cert)")),
        Some(Ok(())) => log::err(format_args!("SIGHUP: TLS certificate reloaded")),
        Some(Err(e)) => log::err(format_args!(
            "warning: SIGHUP: {e}; the certificate in force is kept"
        )),
    }
}

/// SIGUSR1: the access log's file is opened again at its path, as nginx
/// does for log rotation; one that does not open leaves the old one in
/// use.
fn reopen_access_log() {
    match log::reopen_access() {
        Ok(Some(path)) => log::err(format_args!(
            "SIGUSR1: access log {} opened again",
            path.display()
        )),
        Ok(None) => log::err(format_args!(
            "SIGUSR1: nothing to reopen (the access log, if any, goes to stdout)"
        )),
        Err((path, e)) => log::err(format_args!(
            "warning: SIGUSR1: cannot open the access log {} ({e}); still writing to the file open before",
            path.display()
        )),
    }
}

/// The runtime: `threads` threads serve connections. Each is registered
/// with the causal profiler when a session is armed, and is idle for it
/// while parked.
fn runtime(threads: usize) -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads.max(1))
        .thread_name("http")
        .on_thread_start(|| {
            static STARTED: AtomicUsize = AtomicUsize::new(0);
            causal::thread_started();
            let n = STARTED.fetch_add(1, Ordering::Relaxed);
            causal::register_thread(&format!("http-{n}"));
            // Waiting for work until a task comes.
            causal::idle_begin();
        })
        .on_thread_park(causal::idle_begin)
        .enable_all()
        .build()
}
