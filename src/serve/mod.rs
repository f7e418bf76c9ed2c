//! `ccc serve`: worker threads that answer the requests the
//! [`frontend`](crate::frontend) reads, and the store actor that owns the
//! catalog connection.
//!
//! ```text
//! frontend (one thread     N workers ([`worker`])          store actor ([`store`])
//! per connection) ------>  route, negotiate, validate      catalog connection (SQLite),
//!                          ([`answer`])                     cache admission and eviction
//!                             |  hit: read the cache  <----- publishes entries ([`cache`])
//!                             |  miss, latest/range,
//!                             |  listing, stats: call ---->  lookup, prepare ([`prepared`])
//!                             v
//!                          send (prepared header lines, body shared with the cache)
//! ```
//!
//! A cached asset is answered by the worker that read the request, from an
//! entry whose header lines and ETags were built once; it records the hit
//! for the store, which alone decides recency, admission and eviction.
//!
//! Startup order is deliberate: the store actor opens and checks the catalog
//! first, so a missing or invalid database fails before any port is bound;
//! then the open-files limit is raised and the listener bound (see
//! [`frontend::bind`]). A worker never panics on a request: every failure
//! becomes a JSON error response, and an internal error is logged to
//! stderr, never sent to the client.

pub mod alias;
pub mod answer;
pub mod browse;
pub mod cache;
pub mod counters;
mod frequency;
pub mod metrics;
pub mod prepared;
pub mod store;
mod worker;

pub use crate::frontend::bind;
pub use answer::{Answer, Ask, Body, answer};
pub use counters::{Counters, StatsReport};

use crate::causal;
use crate::error::{Error, Result};
use crate::frontend::{self, Frontend, Limits, OpenFiles};
use crate::http::access_log;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use worker::Worker;

/// How to run the server.
#[derive(Debug, Clone)]
pub struct Config {
    pub store: store::Config,
    pub bind: IpAddr,
    pub port: u16,
    /// Worker threads answering requests.
    pub threads: usize,
    /// Print one line per request to stdout, in this format.
    pub access_log: Option<access_log::Format>,
    /// How redirects from aliases are cached (`--alias-max-age`).
    pub aliases: alias::Policy,
    /// Connection limits; `max_connections` is replaced by the effective
    /// cap at start when `max_connections_asked` is None.
    pub limits: Limits,
    /// `--max-connections` as given.
    pub max_connections_asked: Option<usize>,
}

/// A started server: the store is open and the port is bound.
pub struct Server {
    http: Frontend,
    store: store::Running,
    counters: Arc<Counters>,
    open_files: OpenFiles,
    config: Config,
}

impl Server {
    /// Opens the store, raises the open-files limit, then binds the port.
    pub fn start(mut config: Config) -> Result<Server> {
        let store = store::start(config.store.clone())?;
        let open_files = frontend::limits::raise_open_files()
            .map_err(|e| Error::system("cannot raise the open-files limit (RLIMIT_NOFILE)", e))?;
        config.limits.max_connections =
            frontend::limits::max_connections(config.max_connections_asked, open_files);
        let addr = SocketAddr::new(config.bind, config.port);
        let listener = bind(addr).map_err(|source| Error::Bind { addr, source })?;
        let counters = Arc::new(Counters::new());
        let record = {
            let counters = counters.clone();
            Box::new(move |status| counters.record_refused(status))
        };
        let http = Frontend::start(
            listener,
            config.limits,
            counters.connections.clone(),
            record,
        )
        .map_err(|e| Error::system(format!("cannot serve on http://{addr}"), e))?;
        Ok(Server {
            http,
            store,
            counters,
            open_files,
            config,
        })
    }

    /// The bound address (the real port when 0 was asked for).
    pub fn addr(&self) -> SocketAddr {
        self.http.addr()
    }

    /// The limits in force (the connection cap resolved).
    pub fn limits(&self) -> Limits {
        self.config.limits
    }

    /// The open-files limit before and after raising it.
    pub fn open_files(&self) -> OpenFiles {
        self.open_files
    }

    /// Serves until `stop` becomes true, then lets the workers finish the
    /// requests they hold and returns the final counters.
    pub fn run(self, stop: &AtomicBool) -> Result<StatsReport> {
        let workers = self.config.threads.max(1);
        std::thread::scope(|scope| {
            for i in 0..workers {
                let worker = Worker {
                    http: &self.http,
                    store: self.store.handle.clone(),
                    counters: &self.counters,
                    access_log: self.config.access_log,
                    aliases: &self.config.aliases,
                };
                let name = format!("http-worker-{i}");
                let thread_name = name.clone();
                std::thread::Builder::new()
                    .name(name.clone())
                    .spawn_scoped(scope, move || {
                        causal::thread_started();
                        causal::register_thread(&thread_name);
                        worker.run(stop)
                    })
                    .map_err(|e| Error::system(format!("cannot start the {name} thread"), e))?;
            }
            Ok::<(), Error>(())
        })?;
        let cache = self.store.handle.stats().unwrap_or_default();
        let report = self.counters.snapshot(cache);
        self.http.shutdown();
        self.store.join();
        Ok(report)
    }
}
