//! `ccc serve`'s engine: worker threads that take requests from the
//! [`frontend`](crate::frontend), turn them into calls on the store actor
//! and hand the answers back to be sent.
//!
//! ```text
//! frontend (connections) -> N workers --call--> store actor
//!                           (route, negotiate,   (cache + SQLite)
//!                            validate, respond)
//! ```
//!
//! Startup order is deliberate: the store actor opens and checks the catalog
//! first, so a missing or invalid database fails before any port is bound;
//! then the open-files limit is raised and the listener bound (see
//! [`frontend::bind`]). A worker never panics on a request: every failure
//! becomes a JSON error response, and an internal error is logged to
//! stderr, never sent to the client.

use crate::actor;
use crate::catalog::query::StoredAsset;
use crate::causal;
use crate::error::{Error, Result};
use crate::frontend::{self, ConnReport, ConnStats, Frontend, Limits, OpenFiles, Reply};
use crate::http::access_log;
use crate::http::conditional::{etag, http_date, not_modified};
use crate::http::negotiate::{self, Coding};
use crate::http::not_found;
use crate::http::route::{self, Route, RouteError};
use crate::log::{self, LogStats};
use crate::spec::Selector;
use crate::store::{self, AssetKey, CacheStats, CatalogState, Msg};
use serde::Serialize;
use std::io::Read;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tiny_http::{Header, Response, StatusCode};

pub use frontend::bind;

/// `Cache-Control` of an exact version's files: they never change.
const IMMUTABLE: &str = "public, max-age=31536000, immutable";
/// `Cache-Control` of redirects from `latest` or a range: the target moves
/// when a new version is published.
const SHORT: &str = "public, max-age=60";
const NO_STORE: &str = "no-store";

/// How to run the server.
#[derive(Debug, Clone)]
pub struct Config {
    pub store: store::Config,
    pub bind: IpAddr,
    pub port: u16,
    /// Worker threads answering requests.
    pub threads: usize,
    /// Print one line per request to stdout.
    pub access_log: bool,
    /// Connection limits; `max_connections` is replaced by the effective
    /// cap at start when `max_connections_asked` is None.
    pub limits: Limits,
    /// `--max-connections` as given.
    pub max_connections_asked: Option<usize>,
}

/// Request counters, shared by the workers.
#[derive(Debug)]
pub struct Counters {
    started: Instant,
    by_status: [AtomicU64; STATUSES.len() + 1],
    bytes_sent: AtomicU64,
    connections: Arc<ConnStats>,
}

/// Statuses counted one by one; anything else counts as "other".
const STATUSES: [u16; 12] = [200, 302, 304, 400, 404, 405, 413, 414, 431, 500, 503, 505];

impl Counters {
    fn new() -> Counters {
        Counters {
            started: Instant::now(),
            by_status: Default::default(),
            bytes_sent: AtomicU64::new(0),
            connections: Arc::default(),
        }
    }

    fn record(&self, status: u16, body_bytes: u64) {
        let slot = STATUSES
            .iter()
            .position(|s| *s == status)
            .unwrap_or(STATUSES.len());
        self.by_status[slot].fetch_add(1, Ordering::Relaxed);
        self.bytes_sent.fetch_add(body_bytes, Ordering::Relaxed);
    }

    /// A snapshot, with the cache's counters.
    pub fn snapshot(&self, cache: CacheStats) -> StatsReport {
        let mut by_status = std::collections::BTreeMap::new();
        let mut total = 0;
        for (i, count) in self.by_status.iter().enumerate() {
            let n = count.load(Ordering::Relaxed);
            total += n;
            if n > 0 {
                let key = STATUSES
                    .get(i)
                    .map_or("other".to_string(), |s| s.to_string());
                by_status.insert(key, n);
            }
        }
        StatsReport {
            uptime_secs: self.started.elapsed().as_secs_f64(),
            requests: total,
            by_status,
            bytes_sent: self.bytes_sent.load(Ordering::Relaxed),
            cache,
            connections: self.connections.report(),
            log: log::stats(),
        }
    }
}

/// What `/_stats` returns and what the server prints when it stops.
#[derive(Debug, Serialize)]
pub struct StatsReport {
    pub uptime_secs: f64,
    pub requests: u64,
    pub by_status: std::collections::BTreeMap<String, u64>,
    /// Body bytes sent (headers not included).
    pub bytes_sent: u64,
    pub cache: CacheStats,
    pub connections: ConnReport,
    /// Log lines written and dropped (a stream not writable or not read).
    pub log: LogStats,
}

/// A started server: the store is open and the port is bound.
pub struct Server {
    http: Frontend,
    store: actor::Running<Msg>,
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
            Box::new(move |status| counters.record(status, 0))
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
                };
                let name = format!("http-worker-{i}");
                let thread_name = name.clone();
                std::thread::Builder::new()
                    .name(name.clone())
                    .spawn_scoped(scope, move || {
                        causal::register_thread(&thread_name);
                        worker.run(stop)
                    })
                    .map_err(|e| Error::system(format!("cannot start the {name} thread"), e))?;
            }
            Ok::<(), Error>(())
        })?;
        let cache = self.store.handle.call(Msg::Stats).unwrap_or_default();
        let report = self.counters.snapshot(cache);
        self.http.shutdown();
        self.store.join();
        Ok(report)
    }
}

struct Worker<'a> {
    http: &'a Frontend,
    store: store::Handle,
    counters: &'a Counters,
    access_log: bool,
}

impl Worker<'_> {
    fn run(&self, stop: &AtomicBool) {
        while !stop.load(Ordering::Relaxed) {
            causal::check();
            // A request already waiting found this worker busy; only an empty
            // queue makes it idle (the profiler's receive rule differs).
            let next = self.http.try_recv().or_else(|| {
                causal::idle_begin();
                self.http.recv_timeout(Duration::from_millis(100))
            });
            if let Some(request) = next {
                causal::receive_external(request.remote_addr());
                self.serve(request)
            }
        }
    }

    fn serve(&self, request: frontend::Request) {
        let received = request.received();
        let started = Instant::now();
        let ask = Ask {
            method: request.method(),
            target: request.url(),
            accept_encoding: request.header("Accept-Encoding").collect(),
            if_none_match: request.header("If-None-Match").next(),
            if_modified_since: request.header("If-Modified-Since").next(),
        };
        let answer = answer(&ask, &self.store, self.counters);
        let status = answer.status;
        let body_bytes = if ask.method == "HEAD" || status == 304 {
            0
        } else {
            answer.body.len() as u64
        };
        self.counters.record(status, body_bytes);
        let log_line = self.access_log.then(|| {
            access_log::line(&access_log::Entry {
                received,
                peer: request.remote_addr().map(|a| a.ip()),
                method: ask.method,
                target: ask.target,
                status,
                body_bytes,
                elapsed: started.elapsed(),
            })
        });
        let served_asset = answer.asset && matches!(status, 200 | 304);
        let peer = request.remote_addr().copied();
        causal::before_respond();
        let sent = {
            let _s = causal::site!(HTTP_RESPOND);
            request.respond(answer.into_reply())
        };
        causal::after_respond(peer.as_ref());
        match sent {
            Ok(()) if served_asset => causal::progress!(ASSET_SERVED),
            Ok(()) => {}
            Err(e) => log::err(format_args!("warning: sending a response failed: {e}")),
        }
        if let Some(line) = log_line {
            // Queued, never blocking: a stalled or broken stdout costs lines,
            // not requests.
            log::out(line);
        }
    }
}

/// The parts of a request that decide the answer.
#[derive(Debug)]
pub struct Ask<'a> {
    pub method: &'a str,
    pub target: &'a str,
    pub accept_encoding: Vec<&'a str>,
    pub if_none_match: Option<&'a str>,
    pub if_modified_since: Option<&'a str>,
}

/// A response before it meets the socket.
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    pub body: Body,
    /// Content-Length when it differs from the body held (HEAD, 304).
    pub length: Option<usize>,
    /// Whether this answers for an asset (the profiler's unit of progress).
    pub asset: bool,
}

/// A response body: shared with the cache, or owned.
pub enum Body {
    Empty,
    Shared(Arc<StoredAsset>),
    Owned(Vec<u8>),
}

impl Body {
    fn len(&self) -> usize {
        self.as_ref().len()
    }
}

impl AsRef<[u8]> for Body {
    fn as_ref(&self) -> &[u8] {
        match self {
            Body::Empty => &[],
            Body::Shared(asset) => &asset.body,
            Body::Owned(bytes) => bytes,
        }
    }
}

impl Answer {
    fn into_reply(self) -> Reply<Body> {
        // Values come from ccc or the catalog and are ASCII; one that is not
        // would be a bug, and is left out rather than failing the request.
        let server = ("Server", frontend::SERVER);
        let headers: Vec<Header> = std::iter::once(server)
            .chain(self.headers.iter().map(|(n, v)| (*n, v.as_str())))
            .filter_map(|(n, v)| Header::from_bytes(n.as_bytes(), v.as_bytes()).ok())
            .collect();
        let length = self.length.unwrap_or_else(|| self.body.len());
        // Every body's length is known: send Content-Length, never chunked
        // (tiny_http would chunk bodies over 32 KiB), so clients and HEAD
        // requests see sizes.
        let head = Response::new(
            StatusCode(self.status),
            headers,
            std::io::empty(),
            Some(length),
            None,
        )
        .with_chunked_threshold(usize::MAX);
        Reply {
            head,
            body: self.body,
        }
    }

    fn json(status: u16, cache_control: &'static str, value: &impl Serialize) -> Answer {
        Answer::json_bytes(
            status,
            cache_control,
            serde_json::to_vec(value).unwrap_or_default(),
        )
    }

    fn json_bytes(status: u16, cache_control: &'static str, body: Vec<u8>) -> Answer {
        Answer {
            status,
            headers: vec![
                ("Content-Type", "application/json".into()),
                ("Cache-Control", cache_control.into()),
            ],
            body: Body::Owned(body),
            length: None,
            asset: false,
        }
    }

    fn error(status: u16, detail: &str) -> Answer {
        Answer::json_bytes(status, NO_STORE, frontend::error_body(status, detail))
    }

    fn redirect(location: String) -> Answer {
        Answer {
            status: 302,
            headers: vec![("Location", location), ("Cache-Control", SHORT.into())],
            body: Body::Empty,
            length: None,
            asset: false,
        }
    }

    fn internal(e: &dyn std::fmt::Display) -> Answer {
        log::err(format_args!("error: {e}"));
        Answer::error(500, "internal error")
    }

    /// 503 for a server that has no catalog to answer from (see `store`).
    fn unavailable(e: &dyn std::fmt::Display) -> Answer {
        log::err(format_args!("error: {e}"));
        let mut a = Answer::error(503, "the catalog is unavailable");
        a.headers.push(("Retry-After", "1".into()));
        a
    }
}

/// Decides the answer to one request.
pub fn answer(ask: &Ask<'_>, store: &store::Handle, counters: &Counters) -> Answer {
    let routed = {
        let _s = causal::site!(HTTP_PARSE);
        route::route(ask.method, ask.target)
    };
    let route = match routed {
        Ok(route) => route,
        Err(RouteError::MethodNotAllowed) => {
            let mut a = Answer::error(405, "only GET and HEAD are supported");
            a.headers.push(("Allow", "GET, HEAD".into()));
            return a;
        }
        Err(RouteError::TargetTooLong) => {
            return Answer::error(414, "the request target is too long");
        }
        Err(RouteError::BadRequest(why)) => return Answer::error(400, &why),
        Err(RouteError::NotFound(why)) => return Answer::error(404, &why),
    };
    let result = match route {
        Route::Asset {
            package,
            version,
            path,
        } => asset(ask, store, package, version, path),
        Route::Listing { package, version } => listing(store, ask.target, package, version),
        Route::VersionRoot { package, version } => Ok(Answer::redirect(route::redirect_url(
            &package, &version, "", ask.target,
        ))),
        Route::Package { package } => redirect_to(store, ask.target, &package, "latest", ""),
        Route::Stats => store
            .call(Msg::Stats)
            .map(|cache| Answer::json(200, NO_STORE, &counters.snapshot(cache)))
            .map_err(Error::from),
        Route::Health => store.call(Msg::Health).map(health).map_err(Error::from),
    };
    result.unwrap_or_else(|e| match e {
        Error::Unavailable { .. } => Answer::unavailable(&e),
        e => Answer::internal(&e),
    })
}

/// `/healthz`: 200 while the server answers from a catalog, `degraded` when
/// that is no longer the file its path names (it still answers exactly
/// what it did); 503 when it has no catalog to answer from.
fn health(catalog: store::CatalogHealth) -> Answer {
    let (code, status) = match catalog.state {
        CatalogState::Current => (200, "ok"),
        CatalogState::Deleted | CatalogState::Rejected => (200, "degraded"),
        CatalogState::Unavailable => (503, "unavailable"),
    };
    Answer::json(
        code,
        NO_STORE,
        &serde_json::json!({"status": status, "catalog": catalog}),
    )
}

fn asset(
    ask: &Ask<'_>,
    store: &store::Handle,
    package: String,
    version: String,
    path: String,
) -> Result<Answer> {
    let Ok(exact) = semver::Version::parse(&version) else {
        return redirect_to(store, ask.target, &package, &version, &path);
    };
    let key = AssetKey {
        package,
        version,
        path,
    };
    let Some(asset) = store.call(|reply| Msg::Get(key.clone(), reply))?? else {
        return missing(store, &key.package, &Selector::Exact(exact), &key.path);
    };
    let sha = hex::encode(asset.sha256);
    let send_gzip =
        asset.gzip && negotiate::choose(ask.accept_encoding.iter().copied()) == Coding::Gzip;
    let tag = etag(&sha, send_gzip);
    let last_modified = http_date(asset.published_at);
    let mut headers = vec![
        ("Content-Type", asset.content_type.clone()),
        ("Vary", "Accept-Encoding".to_string()),
        ("Cache-Control", IMMUTABLE.to_string()),
        ("ETag", tag.clone()),
        ("Last-Modified", last_modified),
        ("Access-Control-Allow-Origin", "*".to_string()),
        ("X-Content-Type-Options", "nosniff".to_string()),
    ];
    let length = if send_gzip {
        asset.body.len()
    } else {
        asset.raw_size as usize
    };
    // Either representation's tag validates; only build the other one when
    // the request carries a validator at all.
    let conditional = ask.if_none_match.is_some() || ask.if_modified_since.is_some();
    if conditional
        && not_modified(
            ask.if_none_match,
            ask.if_modified_since,
            &[&tag, &etag(&sha, !send_gzip)],
            asset.published_at,
        )
    {
        // RFC 9110 15.4.5: a 304 carries the validators and caching headers,
        // and no content headers. Its Content-Length is the 200's.
        headers.retain(|(name, _)| !matches!(*name, "Content-Type" | "X-Content-Type-Options"));
        return Ok(Answer {
            status: 304,
            headers,
            body: Body::Empty,
            length: Some(length),
            asset: true,
        });
    }
    if send_gzip {
        headers.push(("Content-Encoding", "gzip".to_string()));
    }
    let body = if ask.method == "HEAD" {
        Body::Empty
    } else if asset.gzip && !send_gzip {
        let mut raw = Vec::with_capacity(asset.raw_size as usize);
        let decoded = {
            let _s = causal::site!(GZIP_DECODE);
            // Every member, as the check on load decoded it.
            flate2::read::MultiGzDecoder::new(&asset.body[..]).read_to_end(&mut raw)
        };
        if let Err(e) = decoded {
            return Ok(Answer::internal(&format!(
                "stored gzip of {sha} does not decode: {e}"
            )));
        }
        Body::Owned(raw)
    } else {
        Body::Shared(asset)
    };
    Ok(Answer {
        status: 200,
        headers,
        body,
        length: Some(length),
        asset: true,
    })
}

/// 302 to the exact version a selector picks (query string kept), or 404.
fn redirect_to(
    store: &store::Handle,
    target: &str,
    package: &str,
    selector: &str,
    path: &str,
) -> Result<Answer> {
    let Ok(parsed) = Selector::parse(package, selector) else {
        return Ok(Answer::error(
            400,
            "the version is not a version, `latest` or a semver range",
        ));
    };
    let picked = store.call(|reply| Msg::Resolve(package.to_string(), parsed.clone(), reply))??;
    match picked {
        Some(exact) => Ok(Answer::redirect(route::redirect_url(
            package, &exact, path, target,
        ))),
        None => missing(store, package, &parsed, path),
    }
}

fn listing(
    store: &store::Handle,
    target: &str,
    package: String,
    version: String,
) -> Result<Answer> {
    let Ok(exact) = semver::Version::parse(&version) else {
        return redirect_to(store, target, &package, &version, "");
    };
    match store.call(|reply| Msg::List(package.clone(), version, reply))?? {
        Some(listing) => Ok(Answer::json(200, IMMUTABLE, &listing)),
        None => missing(store, &package, &Selector::Exact(exact), ""),
    }
}

/// The 404 after a miss, naming the missing package, version or file; the
/// store is asked what it holds only now, off the hot path.
fn missing(store: &store::Handle, package: &str, asked: &Selector, path: &str) -> Result<Answer> {
    let missing = not_found::diagnose(package, asked, path, |selector| {
        let picked =
            store.call(|reply| Msg::Resolve(package.to_string(), selector.clone(), reply))??;
        Ok::<bool, Error>(picked.is_some())
    })?;
    Ok(Answer::json(404, NO_STORE, &not_found::Body::new(&missing)))
}
