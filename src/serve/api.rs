//! The write API of `ccc serve --publish-api`: CI publishes a version,
//! moves a dist-tag or removes a version with a token ([`crate::catalog::
//! tokens`]), and gets one JSON shape back (docs/JSON.md).
//!
//! ```text
//! PUT    /-/api/v1/publish/PKG/VERSION[?force&tag=T&strict&no_check&dry_run]  .tgz body
//! PUT    /-/api/v1/dist-tags/PKG/TAG/VERSION
//! DELETE /-/api/v1/dist-tags/PKG/TAG
//! DELETE /-/api/v1/versions/PKG/VERSION
//! ```
//!
//! Each request goes through, in order, and stops at the first refusal:
//!
//! 1. the API is on (`--publish-api`; else 404 saying how to turn it on);
//! 2. the server is the writer: a replica (a `DB.follow` beside the
//!    catalog) answers 403 naming the writer (`--writer URL`) when given;
//! 3. a token over plain HTTP comes from loopback only (403, and the token
//!    is to be revoked: it crossed a network in clear);
//! 4. the client's address has not failed too often (429);
//! 5. `Authorization: Bearer ccc_…` names an active token (401) whose
//!    scopes grant the action on the package (403); an upload of a
//!    version that exists is refused here, before its body is read (409),
//!    unless `force` is asked and the token may replace;
//! 6. for an upload: `Content-Length` within `--max-upload-size` (413),
//!    then the body, streamed to an unnamed temporary file (a kill of
//!    client or server leaves nothing) by a blocking thread, one piece at
//!    a time, cut off past the size (413) or after `--body-timeout`
//!    without a byte;
//! 7. the change itself, on a blocking thread, one at a time (a second
//!    upload waits for the first up to `--publish-wait`, else 503 with
//!    `Retry-After`): the same publish pipeline as `ccc publish` (one
//!    transaction, deduplicated, gzip and brotli on the server's cores,
//!    references checked), reading the spooled tarball with the archive
//!    checks of a local one (`--max-unpacked-size` for gzip bombs).
//!
//! Every change, and every refused token, gets a row in the audit log
//! with the token's name (never its secret) and the client's address
//! after `--trust-proxy`; a publish's row commits with the version.
//! Nothing here blocks a runtime thread: catalog work and disk writes run
//! on tokio's blocking threads.

// The error of these functions is the request's answer, made once per
// request: boxing it would save nothing.
#![allow(clippy::result_large_err)]

use super::response::Answer;
use crate::catalog::archive::{self, Rules};
use crate::catalog::audit::Entry;
use crate::catalog::publish::{self, NoProgress, Options};
use crate::catalog::tokens::{Action, Refused, TokenRow};
use crate::catalog::{Access, Catalog};
use crate::error::Error;
use crate::http::forwarded::TrustedProxies;
use crate::log;
use crate::transport::{BodyError, Peer, RequestBody};
use http::request::Parts;
use serde::Serialize;
use std::io::Write;
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The API's paths start with this.
pub(crate) const PREFIX: &str = "/-/api/";

/// Default `--max-upload-size`.
pub(crate) const DEFAULT_MAX_UPLOAD: u64 = 256 << 20;
/// Default `--publish-wait`.
pub(crate) const DEFAULT_PUBLISH_WAIT: Duration = Duration::from_secs(30);
/// Uploads received at once; past it a new one is answered 503.
const MAX_RECEIVING: usize = 8;
/// Authentication failures from one address within [`FAILURE_WINDOW`]
/// before it is answered 429 until the window ends.
const MAX_FAILURES: u32 = 10;
const FAILURE_WINDOW: Duration = Duration::from_secs(60);
/// Addresses whose failures are remembered; the oldest are forgotten.
const FAILURE_MEMORY: usize = 16 * 1024;
/// Pieces of a body queued for the disk.
const SPOOL_QUEUE: usize = 16;

/// How the API is set up (`ccc serve` flags).
#[derive(Debug, Clone)]
pub(crate) struct Config {
    /// `--publish-api`.
    pub enabled: bool,
    /// `--max-upload-size`.
    pub max_upload: u64,
    /// `--max-unpacked-size`.
    pub max_unpacked: u64,
    /// `--publish-wait`.
    pub publish_wait: Duration,
    /// `--writer`: where a replica sends writers.
    pub writer: Option<String>,
    /// `--stats-allow`: when given, /_stats and /metrics answer these
    /// ranges, and bearers of a read-stats token, only.
    pub stats_allow: Option<Vec<ipnet::IpNet>>,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            enabled: false,
            max_upload: DEFAULT_MAX_UPLOAD,
            max_unpacked: archive::DEFAULT_MAX_UNPACKED_SIZE,
            publish_wait: DEFAULT_PUBLISH_WAIT,
            writer: None,
            stats_allow: None,
        }
    }
}

/// The API's state, shared by every request.
pub(super) struct Api {
    config: Config,
    db: PathBuf,
    trusted_proxies: TrustedProxies,
    failures: Mutex<lru::LruCache<IpAddr, (Instant, u32)>>,
    receiving: tokio::sync::Semaphore,
    /// One change at a time: the catalog has one writer.
    writing: tokio::sync::Semaphore,
}

/// What a request asks.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Call {
    Publish {
        package: String,
        version: semver::Version,
        force: bool,
        tag: Option<String>,
        strict: bool,
        check: bool,
        dry_run: bool,
    },
    TagAdd {
        package: String,
        tag: String,
        version: semver::Version,
    },
    TagRm {
        package: String,
        tag: String,
    },
    Remove {
        package: String,
        version: semver::Version,
    },
}

impl Call {
    fn package(&self) -> &str {
        match self {
            Call::Publish { package, .. }
            | Call::TagAdd { package, .. }
            | Call::TagRm { package, .. }
            | Call::Remove { package, .. } => package,
        }
    }

    /// The audit log's action and target.
    fn audited(&self) -> (&'static str, String) {
        match self {
            Call::Publish {
                package, version, ..
            } => ("publish", format!("{package}@{version}")),
            Call::TagAdd {
                package,
                tag,
                version,
            } => ("tag-add", format!("{package} {tag} {version}")),
            Call::TagRm { package, tag } => ("tag-rm", format!("{package} {tag}")),
            Call::Remove { package, version } => ("remove", format!("{package}@{version}")),
        }
    }
}

/// An answer of the API: its status, a code for scripts, and what else
/// the shape holds (docs/JSON.md, "The publish API").
#[derive(Debug, Serialize)]
struct Reply {
    status: u16,
    code: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    hint: Option<String>,
    /// What `ccc` prints for it, as a local command prints its own.
    #[serde(skip_serializing_if = "Option::is_none")]
    summary: Option<String>,
    /// The change: `ccc publish --json`'s report, a tag change, or the
    /// versions removed.
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<serde_json::Value>,
    /// A replica's writer, when it is known.
    #[serde(skip_serializing_if = "Option::is_none")]
    writer: Option<String>,
    #[serde(skip)]
    retry_after: Option<u64>,
    #[serde(skip)]
    challenge: bool,
}

impl Reply {
    fn refused(status: u16, code: &'static str, error: impl Into<String>) -> Reply {
        Reply {
            status,
            code,
            error: Some(error.into()),
            hint: None,
            summary: None,
            result: None,
            writer: None,
            retry_after: None,
            challenge: status == 401,
        }
    }

    fn done(status: u16, code: &'static str, summary: String, result: serde_json::Value) -> Reply {
        Reply {
            status,
            code,
            error: None,
            hint: None,
            summary: Some(summary),
            result: Some(result),
            writer: None,
            retry_after: None,
            challenge: false,
        }
    }

    fn hint(mut self, hint: impl Into<String>) -> Reply {
        self.hint = Some(hint.into());
        self
    }

    fn retry_after(mut self, secs: u64) -> Reply {
        self.retry_after = Some(secs.max(1));
        self
    }

    fn into_answer(self) -> Answer {
        let body = serde_json::to_vec(&self).unwrap_or_default();
        let mut answer = Answer::json_bytes(self.status, "no-store", body);
        if let Some(secs) = self.retry_after {
            answer.headers.push("Retry-After", &secs.to_string());
        }
        if self.challenge {
            answer
                .headers
                .push("WWW-Authenticate", "Bearer realm=\"ccc\"");
        }
        answer
    }
}

/// A publish error as the API answers it: a status, a code, and words
/// that never carry a path of the server or a token.
fn reply_of(e: &Error) -> Reply {
    let (status, code) = match e {
        Error::VersionExists { .. } | Error::BuildMetadataTwin { .. } => (409, "version_exists"),
        Error::BadInput { .. }
        | Error::ManifestDisagrees { .. }
        | Error::BrokenReferences { .. }
        | Error::InvalidPackageName { .. }
        | Error::InvalidVersion { .. }
        | Error::InvalidTag { .. }
        | Error::SiteRules { .. } => (422, "unprocessable"),
        Error::PackageNotFound { .. }
        | Error::VersionNotFound { .. }
        | Error::TagNotFound { .. } => (404, "not_found"),
        Error::Busy(_) => {
            return Reply::refused(503, "busy", "the catalog is busy with another writer")
                .retry_after(5);
        }
        Error::Interrupted(_) => {
            return Reply::refused(503, "stopping", "the server is stopping").retry_after(5);
        }
        Error::ReplicaCopy(_) => (403, "replica"),
        e => {
            log::err(format_args!("error: the publish API: {e}"));
            return Reply::refused(500, "internal", "the server failed; its log says why");
        }
    };
    let mut text = e.to_string();
    // An archive's errors name it by the server's temporary file.
    if let Error::BadInput { what, .. } = e {
        text = format!("the uploaded archive {what}");
    }
    let reply = Reply::refused(status, code, text);
    match e.hint() {
        Some(hint) if status != 403 => reply.hint(hint),
        _ => reply,
    }
}

impl Api {
    pub(super) fn new(config: Config, db: PathBuf, trusted_proxies: TrustedProxies) -> Api {
        let memory =
            std::num::NonZeroUsize::new(FAILURE_MEMORY).unwrap_or(std::num::NonZeroUsize::MIN);
        Api {
            config,
            db,
            trusted_proxies,
            failures: Mutex::new(lru::LruCache::new(memory)),
            receiving: tokio::sync::Semaphore::new(MAX_RECEIVING),
            writing: tokio::sync::Semaphore::new(1),
        }
    }

    /// Whether the request `head` is the API's: any method but GET and
    /// HEAD on its paths (those are answered 404 by the router).
    pub(super) fn claims(head: &Parts) -> bool {
        head.uri.path().starts_with(PREFIX)
    }

    /// Whether `--stats-allow` restricts /_stats and /metrics.
    pub(super) fn restricts_stats(&self) -> bool {
        self.config.stats_allow.is_some()
    }

    /// Whether /_stats and /metrics are restricted, and the request may
    /// not read them: from outside `--stats-allow`, without a read-stats
    /// token. The refusal, or None to answer.
    pub(super) fn stats_refusal(&self, head: &Parts, peer: &Peer) -> Option<Answer> {
        let allowed = self.config.stats_allow.as_ref()?;
        let client = self.trusted_proxies.client(peer.addr.ip(), &head.headers);
        if allowed.iter().any(|net| net.contains(&client)) {
            return None;
        }
        let refused = match bearer(head) {
            Bearer::None => Reply::refused(
                403,
                "forbidden",
                "/_stats and /metrics answer --stats-allow's addresses, or a token with the \
                 read-stats scope",
            ),
            Bearer::Malformed => {
                Reply::refused(401, "unauthorized", "Authorization is not `Bearer TOKEN`")
            }
            Bearer::Token(_) if !peer.tls && !peer.addr.ip().is_loopback() => insecure(),
            Bearer::Token(_) if self.blocked(client).is_some() => too_many(self.blocked(client)?),
            Bearer::Token(token) => {
                // A quick read on the runtime thread, as a cache miss is.
                let found =
                    Catalog::open(&self.db, Access::ReadOnly).and_then(|c| c.authenticate(token));
                match found {
                    Ok(Ok(row)) if row.allows(Action::ReadStats, None) => return None,
                    Ok(Ok(row)) => Reply::refused(
                        403,
                        "forbidden",
                        format!("the token {} has no read-stats scope", row.name),
                    ),
                    Ok(Err(refused)) => {
                        self.failed(client);
                        Reply::refused(401, "unauthorized", refused.to_string())
                    }
                    Err(e) => reply_of(&e),
                }
            }
        };
        Some(refused.into_answer())
    }

    /// Answers a request of the API: `head` and its `body` (read only for
    /// an upload), from `peer`.
    pub(super) async fn answer(
        self: Arc<Self>,
        head: Parts,
        body: RequestBody,
        peer: Peer,
    ) -> Answer {
        self.reply(head, body, peer).await.into_answer()
    }

    async fn reply(self: Arc<Self>, head: Parts, body: RequestBody, peer: Peer) -> Reply {
        if !self.config.enabled {
            return Reply::refused(404, "api_off", "this server takes no uploads")
                .hint("start `ccc serve` with --publish-api on the writer of the catalog");
        }
        let call = match call_of(&head) {
            Ok(call) => call,
            Err(reply) => return reply,
        };
        if crate::follow::heartbeat_path(&self.db).exists() {
            let mut reply = Reply::refused(
                403,
                "replica",
                "this server is a replica (`ccc follow` keeps its catalog): it takes no writes",
            );
            reply = match &self.config.writer {
                Some(writer) => {
                    let hint = format!("send it to the writer: --to {writer}");
                    reply.writer = Some(writer.clone());
                    reply.hint(hint)
                }
                None => reply.hint("send it to the writer's server"),
            };
            return reply;
        }
        let client = self.trusted_proxies.client(peer.addr.ip(), &head.headers);
        let token = match bearer(&head) {
            Bearer::None => {
                return Reply::refused(
                    401,
                    "unauthorized",
                    "no token: send Authorization: Bearer TOKEN",
                )
                .hint("`ccc publish --to` sends the token in CCC_TOKEN or --token-file");
            }
            Bearer::Malformed => {
                return Reply::refused(401, "unauthorized", "Authorization is not `Bearer TOKEN`");
            }
            Bearer::Token(token) => token.to_string(),
        };
        // The hop that matters is the one to this server.
        if !peer.tls && !peer.addr.ip().is_loopback() {
            let (action, target) = call.audited();
            self.audit_later(Entry {
                client: client.to_string(),
                ..entry(action, target, 403, "a token sent over plain HTTP")
            });
            return insecure();
        }
        if let Some(wait) = self.blocked(client) {
            return too_many(wait);
        }
        let Ok(_receiving) = self.receiving.try_acquire() else {
            return Reply::refused(503, "busy", "too many uploads at once").retry_after(5);
        };
        // Who the token is, and what exists, before any body is read.
        let checked = {
            let (api, call) = (self.clone(), call.clone());
            blocking(move || api.admit(&token, &call, client)).await
        };
        let (row, force) = match checked {
            Ok(admitted) => admitted,
            Err(reply) => return reply,
        };
        // Should the connection go away meanwhile, this future is dropped
        // where it waits: the guard records that in the audit log.
        let (action, target) = call.audited();
        let mut cut_off = CutOff {
            api: Some(self.clone()),
            entry: Entry {
                token: Some(row.name.clone()),
                client: client.to_string(),
                ..entry(
                    action,
                    target,
                    499,
                    "the client went away before the answer (its body cut off)",
                )
            },
        };
        let spooled = match &call {
            Call::Publish { .. } => match self.spool(&head, body).await {
                Ok(file) => Some(file),
                Err(reply) => {
                    cut_off.disarm();
                    let (action, target) = call.audited();
                    let detail = reply.error.clone().unwrap_or_default();
                    self.audit_later(Entry {
                        token: Some(row.name.clone()),
                        client: client.to_string(),
                        ..entry(action, target, reply.status, &detail)
                    });
                    return reply;
                }
            },
            _ => {
                drop(body);
                None
            }
        };
        let Ok(Ok(_writing)) =
            tokio::time::timeout(self.config.publish_wait, self.writing.acquire()).await
        else {
            return Reply::refused(
                503,
                "busy",
                format!(
                    "another change has held the catalog for --publish-wait {}",
                    humantime::format_duration(self.config.publish_wait)
                ),
            )
            .retry_after(5);
        };
        // From here the change is made (or not) whether or not the client
        // waits for the answer, and audited either way.
        cut_off.disarm();
        let api = self.clone();
        blocking(move || Ok::<_, Reply>(api.change(call, row, force, client, spooled)))
            .await
            .unwrap_or_else(|reply| reply)
    }

    /// Authenticates `token` for `call` from `client`: its row, and the
    /// `force` a publish runs with (only when the token may replace).
    fn admit(&self, token: &str, call: &Call, client: IpAddr) -> Result<(TokenRow, bool), Reply> {
        let catalog = Catalog::open(&self.db, Access::ReadOnly).map_err(|e| reply_of(&e))?;
        let (action, target) = call.audited();
        let row = match catalog.authenticate(token).map_err(|e| reply_of(&e))? {
            Ok(row) => row,
            Err(refused) => {
                self.failed(client);
                let name = match &refused {
                    Refused::Revoked(name) | Refused::Expired(name) => Some(name.clone()),
                    _ => None,
                };
                let words = refused.to_string();
                self.audit(Entry {
                    token: name,
                    client: client.to_string(),
                    ..entry(action, target, 401, &words)
                });
                return Err(Reply::refused(401, "unauthorized", words));
            }
        };
        let package = call.package();
        let forbid = |what: &str| {
            let words = format!("the token {} may not {what} {package}", row.name);
            self.audit(Entry {
                token: Some(row.name.clone()),
                client: client.to_string(),
                ..entry(action, target.clone(), 403, &words)
            });
            Err(Reply::refused(403, "forbidden", words)
                .hint("`ccc token ls` on the catalog's machine shows each token's scopes"))
        };
        let force = match call {
            Call::Publish {
                package,
                version,
                force,
                ..
            } => {
                let exists = catalog
                    .versions(package)
                    .map(|v| v.iter().any(|v| v.version == *version))
                    .or_else(|e| match e {
                        Error::PackageNotFound { .. } => Ok(false),
                        e => Err(e),
                    })
                    .map_err(|e| reply_of(&e))?;
                let may_replace = row.allows(Action::Replace, Some(package));
                // A token that may do neither learns nothing of what exists.
                if !may_replace && !row.allows(Action::Publish, Some(package)) {
                    return forbid("publish to");
                }
                match (exists, *force, may_replace) {
                    (false, ..) if !row.allows(Action::Publish, Some(package)) => {
                        return forbid("publish to");
                    }
                    (true, false, _) | (true, true, false) => {
                        let mut reply = Reply::refused(
                            409,
                            "version_exists",
                            format!("{package}@{version} is already published"),
                        );
                        reply = if *force {
                            reply.hint(format!(
                                "the token {} may not replace versions of {package}",
                                row.name
                            ))
                        } else {
                            reply.hint("publish a new version; `force` replaces one, with a token that may replace")
                        };
                        let words = reply.error.clone().unwrap_or_default();
                        self.audit(Entry {
                            token: Some(row.name.clone()),
                            client: client.to_string(),
                            ..entry(action, target, 409, &words)
                        });
                        return Err(reply);
                    }
                    _ => *force && may_replace,
                }
            }
            Call::TagAdd { .. } | Call::TagRm { .. } => {
                if !row.allows(Action::Tag, Some(package)) {
                    return forbid("move the dist-tags of");
                }
                false
            }
            Call::Remove { .. } => {
                if !row.allows(Action::Remove, Some(package)) {
                    return forbid("remove versions of");
                }
                false
            }
        };
        Ok((row, force))
    }

    /// Streams an upload's body to an unnamed temporary file: written by a
    /// blocking thread, a bounded queue of pieces between (the client is
    /// held back when the disk is slower). Past `--max-upload-size` the
    /// upload is refused (413) and the rest is not read.
    async fn spool(&self, head: &Parts, mut body: RequestBody) -> Result<std::fs::File, Reply> {
        let limit = self.config.max_upload;
        let too_big = || {
            Reply::refused(
                413,
                "too_large",
                format!(
                    "the upload is larger than this server's --max-upload-size ({} bytes)",
                    limit
                ),
            )
        };
        let declared = head
            .headers
            .get(http::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|n| n > limit) {
            return Err(too_big());
        }
        let dir = self.db.parent().filter(|d| !d.as_os_str().is_empty());
        let file = dir
            .and_then(|d| tempfile::tempfile_in(d).ok())
            .map_or_else(tempfile::tempfile, Ok)
            .map_err(|e| {
                log::err(format_args!(
                    "error: the publish API: a temporary file: {e}"
                ));
                Reply::refused(500, "internal", "the server failed; its log says why")
            })?;
        let (pieces, mut queue) = tokio::sync::mpsc::channel::<bytes::Bytes>(SPOOL_QUEUE);
        let writer = tokio::task::spawn_blocking(move || {
            let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
            while let Some(piece) = queue.blocking_recv() {
                out.write_all(&piece)?;
            }
            out.into_inner().map_err(|e| e.into_error())
        });
        let mut failed = None;
        loop {
            match body.next().await {
                None => break,
                Some(Ok(piece)) => {
                    if body.received() > limit {
                        failed = Some(too_big());
                        break;
                    }
                    if pieces.send(piece).await.is_err() {
                        break;
                    }
                }
                Some(Err(e)) => {
                    let status = match e {
                        BodyError::Stalled(_) => 408,
                        BodyError::Broken(_) => 400,
                    };
                    failed = Some(Reply::refused(status, "body", e.to_string()));
                    break;
                }
            }
        }
        drop(pieces);
        let written = writer.await;
        if let Some(reply) = failed {
            return Err(reply);
        }
        match written {
            Ok(Ok(mut file)) => {
                use std::io::Seek;
                file.seek(std::io::SeekFrom::Start(0))
                    .map_err(|e| disk(&e))?;
                Ok(file)
            }
            Ok(Err(e)) => Err(disk(&e)),
            Err(e) => Err(disk(&e)),
        }
    }

    /// Makes the change `call` asks, as the token `row` from `client`.
    fn change(
        &self,
        call: Call,
        row: TokenRow,
        force: bool,
        client: IpAddr,
        spooled: Option<std::fs::File>,
    ) -> Reply {
        crate::catalog::forget_lock_wait();
        let (action, target) = call.audited();
        let mut catalog = match Catalog::open(&self.db, Access::ReadWrite) {
            Ok(catalog) => catalog,
            Err(e) => return reply_of(&e),
        };
        let audited = Entry {
            token: Some(row.name.clone()),
            client: client.to_string(),
            ..entry(action, target.clone(), 0, "")
        };
        let done = match call {
            Call::Publish {
                package,
                version,
                tag,
                strict,
                check,
                dry_run,
                ..
            } => {
                let Some(file) = spooled else {
                    return Reply::refused(500, "internal", "the upload was not kept");
                };
                let options = Options {
                    force,
                    dry_run,
                    check,
                    strict: strict && check,
                    tag,
                    manifest_must_agree: true,
                    audit: Some(Entry {
                        status: 201,
                        ..audited.clone()
                    }),
                    ..Options::default()
                };
                let rules = Rules {
                    excludes: Vec::new(),
                    max_file_size: options.max_file_size,
                    chunked_from: options.chunked_from,
                    max_unpacked_size: self.config.max_unpacked,
                    want_identity: false,
                };
                let name = PathBuf::from("upload");
                let stream = Box::new(move |sink: &publish::Sink<'_>| {
                    archive::read(&name, file, &rules, sink)
                });
                publish::publish_stream(
                    &mut catalog,
                    Some((package, version)),
                    stream,
                    &options,
                    &NoProgress,
                )
                .map(|mut report| {
                    if let Some(checked) = &mut report.references {
                        crate::importmap::commonjs::note_commonjs_entry(&report.package, checked);
                    }
                    let code = match (report.dry_run, report.replaced) {
                        (true, _) => "dry_run",
                        (false, true) => "replaced",
                        (false, false) => "published",
                    };
                    let status = if report.dry_run { 200 } else { 201 };
                    let summary = crate::outcome::published(&report);
                    let json = serde_json::to_value(&report).unwrap_or_default();
                    (Reply::done(status, code, summary, json), true)
                })
            }
            Call::TagAdd {
                package,
                tag,
                version,
            } => catalog
                .resolve(&package, &crate::spec::Selector::Exact(version))
                .and_then(|v| catalog.add_tag(&v, &tag))
                .map(|change| (tag_reply(&change), false)),
            Call::TagRm { package, tag } => catalog
                .remove_tag(&package, &tag)
                .map(|change| (tag_reply(&change), false)),
            Call::Remove { package, version } => {
                crate::outcome::remove_one(&mut catalog, &package, &version)
                    .map(|(summary, json)| (Reply::done(200, "removed", summary, json), false))
            }
        };
        match done {
            // A publish's row committed with it.
            Ok((reply, true)) => reply,
            Ok((reply, false)) => {
                self.audit_with(
                    &catalog,
                    Entry {
                        status: reply.status,
                        detail: reply.summary.clone().unwrap_or_default(),
                        ..audited
                    },
                );
                reply
            }
            Err(e) => {
                let reply = reply_of(&e);
                self.audit_with(
                    &catalog,
                    Entry {
                        status: reply.status,
                        detail: reply.error.clone().unwrap_or_default(),
                        ..audited
                    },
                );
                reply
            }
        }
    }

    /// Appends an audit row, best effort: a failure is logged.
    fn audit(&self, entry: Entry) {
        match Catalog::open(&self.db, Access::ReadWrite) {
            Ok(catalog) => self.audit_with(&catalog, entry),
            Err(e) => log::err(format_args!("warning: the audit log: {e}")),
        }
    }

    fn audit_with(&self, catalog: &Catalog, entry: Entry) {
        if let Err(e) = catalog.audit(&entry) {
            log::err(format_args!("warning: the audit log: {e}"));
        }
    }

    /// [`Api::audit`] on a blocking thread, not waited for.
    fn audit_later(self: &Arc<Self>, entry: Entry) {
        let api = self.clone();
        tokio::task::spawn_blocking(move || api.audit(entry));
    }

    /// Counts an authentication failure of `client`.
    fn failed(&self, client: IpAddr) {
        let mut failures = self.failures.lock().unwrap_or_else(PoisonError::into_inner);
        let now = Instant::now();
        match failures.get_mut(&client) {
            Some((since, count)) if now.duration_since(*since) < FAILURE_WINDOW => *count += 1,
            _ => {
                failures.put(client, (now, 1));
            }
        }
    }

    /// How long `client` must wait, when it has failed too often.
    fn blocked(&self, client: IpAddr) -> Option<Duration> {
        let mut failures = self.failures.lock().unwrap_or_else(PoisonError::into_inner);
        let (since, count) = *failures.peek(&client)?;
        let age = since.elapsed();
        if age >= FAILURE_WINDOW {
            failures.pop(&client);
            return None;
        }
        (count >= MAX_FAILURES).then(|| FAILURE_WINDOW - age)
    }
}

/// An audit row written if dropped armed: a request whose future was
/// dropped (its connection closed) before it was answered.
struct CutOff {
    api: Option<Arc<Api>>,
    entry: Entry,
}

impl CutOff {
    fn disarm(&mut self) {
        self.api = None;
    }
}

impl Drop for CutOff {
    fn drop(&mut self) {
        if let Some(api) = self.api.take()
            && tokio::runtime::Handle::try_current().is_ok()
        {
            api.audit_later(self.entry.clone());
        }
    }
}

fn entry(action: &str, target: String, status: u16, detail: &str) -> Entry {
    Entry {
        id: 0,
        at: crate::units::unix_now(),
        token: None,
        client: String::new(),
        action: action.into(),
        target,
        status,
        detail: detail.into(),
    }
}

fn insecure() -> Reply {
    Reply::refused(
        403,
        "insecure",
        "a token was sent over plain HTTP from another machine: it may have been read on the way",
    )
    .hint("revoke it (`ccc token revoke NAME`) and send a new one over https://")
}

fn too_many(wait: Duration) -> Reply {
    Reply::refused(
        429,
        "too_many_failures",
        "too many requests with a wrong token from this address",
    )
    .retry_after(wait.as_secs() + 1)
}

fn disk(e: &dyn std::fmt::Display) -> Reply {
    log::err(format_args!(
        "error: the publish API: spooling an upload: {e}"
    ));
    Reply::refused(
        507,
        "storage",
        "the server could not keep the upload (its disk?); its log says why",
    )
}

fn tag_reply(change: &crate::catalog::tags::TagChange) -> Reply {
    let summary = crate::outcome::tag_change(change);
    let json = serde_json::to_value(change).unwrap_or_default();
    Reply::done(
        200,
        if change.removed {
            "tag_removed"
        } else {
            "tagged"
        },
        summary,
        json,
    )
}

/// Runs `work` on a blocking thread.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, Reply> + Send + 'static,
) -> Result<T, Reply> {
    tokio::task::spawn_blocking(work).await.unwrap_or_else(|e| {
        log::err(format_args!("error: the publish API: {e}"));
        Err(Reply::refused(
            500,
            "internal",
            "the server failed; its log says why",
        ))
    })
}

/// The `Authorization` of a request.
enum Bearer<'a> {
    None,
    Malformed,
    Token(&'a str),
}

fn bearer(head: &Parts) -> Bearer<'_> {
    let mut values = head.headers.get_all(http::header::AUTHORIZATION).iter();
    let (Some(value), None) = (values.next(), values.next()) else {
        return if head.headers.contains_key(http::header::AUTHORIZATION) {
            Bearer::Malformed
        } else {
            Bearer::None
        };
    };
    let Ok(text) = value.to_str() else {
        return Bearer::Malformed;
    };
    match text.split_once(' ') {
        Some((scheme, token))
            if scheme.eq_ignore_ascii_case("bearer") && !token.trim().is_empty() =>
        {
            Bearer::Token(token.trim())
        }
        _ => Bearer::Malformed,
    }
}

/// What the request asks, from its method, path and query.
fn call_of(head: &Parts) -> Result<Call, Reply> {
    let path = head.uri.path();
    let query = head.uri.query().unwrap_or("");
    let not_found = || {
        Reply::refused(404, "not_found", format!("no such API path: {path}"))
            .hint("the paths are PUT /-/api/v1/publish/PKG/VERSION, PUT /-/api/v1/dist-tags/PKG/TAG/VERSION, DELETE /-/api/v1/dist-tags/PKG/TAG and DELETE /-/api/v1/versions/PKG/VERSION")
    };
    let Some(rest) = path.strip_prefix("/-/api/v1/") else {
        return Err(not_found());
    };
    let decoded = percent_encoding::percent_decode_str(rest)
        .decode_utf8()
        .map_err(|_| Reply::refused(400, "bad_request", "the path is not UTF-8"))?;
    let segments: Vec<&str> = decoded.split('/').collect();
    // A scoped package is two segments.
    let (kind, args) = segments.split_first().ok_or_else(not_found)?;
    let (package, args) = match args {
        [scope, name, rest @ ..] if scope.starts_with('@') => (format!("{scope}/{name}"), rest),
        [name, rest @ ..] => ((*name).to_string(), rest),
        [] => return Err(not_found()),
    };
    let unprocessable = |e: Error| Reply::refused(422, "unprocessable", e.to_string());
    crate::spec::package_name(&package).map_err(unprocessable)?;
    let version = |text: &str| {
        semver::Version::parse(text).map_err(|e| {
            Reply::refused(
                422,
                "unprocessable",
                format!("`{text}` is not a version (semver, like 1.4.0): {e}"),
            )
        })
    };
    let tag = |text: &str| {
        crate::spec::tag_name(text)
            .map(str::to_string)
            .map_err(unprocessable)
    };
    let method = head.method.as_str();
    let not_allowed = |allowed: &str| {
        Reply::refused(405, "method_not_allowed", format!("{path} takes {allowed}"))
    };
    let flag = |name: &str| {
        query.split('&').any(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, "1"));
            key == name && !matches!(value, "0" | "false" | "")
        })
    };
    let value = |name: &str| {
        query.split('&').find_map(|pair| {
            let (key, value) = pair.split_once('=')?;
            (key == name).then(|| {
                percent_encoding::percent_decode_str(value)
                    .decode_utf8_lossy()
                    .into_owned()
            })
        })
    };
    match (*kind, args) {
        ("publish", [v]) => {
            if method != "PUT" {
                return Err(not_allowed("PUT"));
            }
            Ok(Call::Publish {
                package,
                version: version(v)?,
                force: flag("force"),
                tag: value("tag").map(|t| tag(&t)).transpose()?,
                strict: flag("strict"),
                check: !flag("no_check"),
                dry_run: flag("dry_run"),
            })
        }
        ("dist-tags", [t, v]) => {
            if method != "PUT" {
                return Err(not_allowed("PUT"));
            }
            Ok(Call::TagAdd {
                package,
                tag: tag(t)?,
                version: version(v)?,
            })
        }
        ("dist-tags", [t]) => {
            if method != "DELETE" {
                return Err(not_allowed("DELETE"));
            }
            Ok(Call::TagRm {
                package,
                tag: tag(t)?,
            })
        }
        ("versions", [v]) => {
            if method != "DELETE" {
                return Err(not_allowed("DELETE"));
            }
            Ok(Call::Remove {
                package,
                version: version(v)?,
            })
        }
        _ => Err(not_found()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(method: &str, target: &str) -> Parts {
        http::Request::builder()
            .method(method)
            .uri(target)
            .body(())
            .unwrap()
            .into_parts()
            .0
    }

    #[test]
    fn paths_name_the_calls() {
        let call = call_of(&head(
            "PUT",
            "/-/api/v1/publish/@team/ui/1.4.0?force&tag=next",
        ))
        .unwrap();
        assert_eq!(
            call,
            Call::Publish {
                package: "@team/ui".into(),
                version: semver::Version::new(1, 4, 0),
                force: true,
                tag: Some("next".into()),
                strict: false,
                check: true,
                dry_run: false,
            }
        );
        let call = call_of(&head("PUT", "/-/api/v1/publish/%40team%2Fui/1.4.0?force=0")).unwrap();
        assert!(matches!(call, Call::Publish { force: false, .. }));
        assert_eq!(
            call_of(&head("DELETE", "/-/api/v1/dist-tags/app/beta")).unwrap(),
            Call::TagRm {
                package: "app".into(),
                tag: "beta".into()
            }
        );
        assert!(matches!(
            call_of(&head("PUT", "/-/api/v1/dist-tags/app/beta/2.0.0")).unwrap(),
            Call::TagAdd { .. }
        ));
        assert!(matches!(
            call_of(&head("DELETE", "/-/api/v1/versions/app/2.0.0")).unwrap(),
            Call::Remove { .. }
        ));
        for (method, target, status) in [
            ("POST", "/-/api/v1/publish/app/1.0.0", 405),
            ("PUT", "/-/api/v1/publish/app/1.0", 422),
            ("PUT", "/-/api/v1/publish/App%20Name/1.0.0", 422),
            ("PUT", "/-/api/v1/publish/app", 404),
            ("PUT", "/-/api/v2/publish/app/1.0.0", 404),
            ("PUT", "/-/api/v1/dist-tags/app/1.0.0/1.0.0", 422),
        ] {
            let reply = call_of(&head(method, target)).unwrap_err();
            assert_eq!(reply.status, status, "{method} {target}");
        }
    }

    #[test]
    fn bearers_are_read_strictly() {
        let with = |value: &str| {
            let mut h = head("PUT", "/");
            h.headers
                .insert(http::header::AUTHORIZATION, value.parse().unwrap());
            h
        };
        assert!(matches!(bearer(&head("PUT", "/")), Bearer::None));
        assert!(matches!(
            bearer(&with("Bearer ccc_x")),
            Bearer::Token("ccc_x")
        ));
        assert!(matches!(
            bearer(&with("bearer  ccc_x ")),
            Bearer::Token("ccc_x")
        ));
        assert!(matches!(bearer(&with("Basic eDp5")), Bearer::Malformed));
        assert!(matches!(bearer(&with("Bearer ")), Bearer::Malformed));
    }

    #[test]
    fn a_token_in_clear_from_another_machine_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("cdn.db");
        drop(Catalog::open(&db, Access::Create).unwrap());
        let config = Config {
            enabled: true,
            ..Config::default()
        };
        let api = Arc::new(Api::new(config, db, TrustedProxies::default()));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let mut h = head("PUT", "/-/api/v1/publish/app/1.0.0");
        h.headers
            .insert(http::header::AUTHORIZATION, "Bearer ccc_x".parse().unwrap());
        let reply = |ip: &str, tls: bool| {
            let peer = Peer {
                addr: std::net::SocketAddr::new(ip.parse().unwrap(), 40000),
                tls,
            };
            runtime.block_on(api.clone().reply(h.clone(), RequestBody::empty(), peer))
        };
        let refused = reply("192.0.2.7", false);
        assert_eq!((refused.status, refused.code), (403, "insecure"));
        assert!(refused.hint.unwrap().contains("revoke"));
        // Over TLS, or from this machine, the token is read (and is not
        // one of the catalog's).
        assert_eq!(reply("192.0.2.7", true).status, 401);
        assert_eq!(reply("127.0.0.1", false).status, 401);
        assert_eq!(reply("::1", false).status, 401);
    }

    #[test]
    fn failures_are_counted_per_address_and_forgotten() {
        let api = Api::new(
            Config::default(),
            PathBuf::from("x"),
            TrustedProxies::default(),
        );
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        let b: IpAddr = "192.0.2.2".parse().unwrap();
        for _ in 0..MAX_FAILURES - 1 {
            api.failed(a);
        }
        assert!(api.blocked(a).is_none());
        api.failed(a);
        let wait = api.blocked(a).expect("blocked");
        assert!(wait <= FAILURE_WINDOW);
        assert!(api.blocked(b).is_none());
    }
}
