//! The client of `ccc serve --publish-api` (`serve::api`): what `ccc
//! publish --to`, `ccc tag --to` and `ccc rm --to` send, and how their
//! answers become the same output and exit codes as a local command's.
//!
//! The token comes from `CCC_TOKEN` or the first line of `--token-file`,
//! never from an argument (which `ps` shows to every user). It is sent
//! only over TLS, checked against the system's roots or `--ca-file`, or
//! over plain HTTP to a loopback address; anything else is refused before
//! a byte leaves. An upload asks `Expect: 100-continue`, so a refused
//! token or a version that exists is answered before the body is sent.
//! Errors never repeat the token.
use crate::error::{Error, Result};
use clap::Args;
use serde::Deserialize;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// `--to` and what goes with it: a server's upload API instead of the
/// catalog file (`ccc serve --publish-api`).
// The doc comments are `--help` text, where a URL is text.
#[allow(rustdoc::bare_urls)]
#[derive(Debug, Clone, Args)]
pub(crate) struct RemoteArgs {
    /// Send the change to the `ccc serve --publish-api` at URL (like
    /// https://cdn.example.com) instead of writing the catalog file. The
    /// token comes from CCC_TOKEN or --token-file, never from the command
    /// line. Plain http:// is for a server on this machine only (loopback).
    #[arg(long, global = true, value_name = "URL", value_parser = parse_remote_url)]
    pub to: Option<url::Url>,

    /// With --to: read the token from FILE (its first line) instead of
    /// CCC_TOKEN.
    #[arg(long, global = true, value_name = "FILE", requires = "to")]
    pub token_file: Option<PathBuf>,

    /// With --to: check the server's certificate against the PEM
    /// certificates in FILE (a private CA) instead of the system's roots.
    #[arg(long, global = true, value_name = "FILE", requires = "to")]
    pub ca_file: Option<PathBuf>,
}

/// A `--to` URL: http or https with a host, and no path beyond `/`.
pub(crate) fn parse_remote_url(s: &str) -> Result<url::Url, String> {
    match url::Url::parse(s) {
        Ok(url) if matches!(url.scheme(), "http" | "https") && url.host().is_some() => Ok(url),
        _ => Err(format!(
            "`{s}` is not an http:// or https:// URL, like https://cdn.example.com"
        )),
    }
}

/// Where the system keeps its CA certificates, tried in order (after
/// `SSL_CERT_FILE`).
const CA_BUNDLES: &[&str] = &[
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/ca-bundle.pem",
    "/etc/ssl/cert.pem",
];

/// The environment variable that holds the token.
pub(crate) const TOKEN_ENV: &str = "CCC_TOKEN";

/// How long the server may take to answer once the body is sent: the
/// publish runs then (a big version takes a while on a busy server).
const ANSWER_WAIT: Duration = Duration::from_secs(600);

/// A server's write API, and the token to use it with.
pub(crate) struct Remote {
    base: url::Url,
    agent: ureq::Agent,
    token: String,
}

/// An answer of the write API (docs/JSON.md, "The publish API").
#[derive(Debug, Deserialize)]
pub(crate) struct Reply {
    pub status: u16,
    pub code: String,
    #[serde(default)]
    pub error: Option<String>,
    #[serde(default)]
    pub hint: Option<String>,
    #[serde(default)]
    pub summary: Option<String>,
    #[serde(default)]
    pub result: Option<serde_json::Value>,
}

/// A body to upload: a reader, its length when known, and a callback
/// told how many of its bytes (or of what it is made from) have gone.
pub(crate) struct Upload<'a> {
    pub reader: Box<dyn Read + Send + 'a>,
    pub length: Option<u64>,
}

impl Remote {
    /// The API at `args.to`, with the token from `token_env` (the value of
    /// `CCC_TOKEN`, read by the caller) or `--token-file`.
    pub(crate) fn new(args: &RemoteArgs, token_env: Option<String>) -> Result<Remote> {
        let Some(base) = args.to.clone() else {
            return Err(Error::Internal("a remote without --to".into()));
        };
        let token = match &args.token_file {
            Some(path) => read_token(path)?,
            None => token_env.map(|t| t.trim().to_string()).unwrap_or_default(),
        };
        if token.is_empty() {
            return Err(Error::Usage(format!(
                "--to needs a token: set {TOKEN_ENV} (in CI, from a secret) or pass --token-file \
                 FILE; `ccc token create` makes one on the catalog's machine"
            )));
        }
        if base.scheme() == "http" && !is_loopback(&base) {
            return Err(Error::Usage(format!(
                "--to {base} is plain HTTP: the token would cross the network in clear; use \
                 https:// (plain http:// is for a server on this machine)"
            )));
        }
        let mut config = ureq::Agent::config_builder()
            .timeout_connect(Some(Duration::from_secs(30)))
            .timeout_await_100(Some(Duration::from_secs(30)))
            .timeout_recv_response(Some(ANSWER_WAIT))
            .timeout_per_read(Some(ANSWER_WAIT))
            .http_status_as_error(false)
            .user_agent(concat!("ccc/", env!("CARGO_PKG_VERSION")));
        if base.scheme() == "https" {
            let roots = match &args.ca_file {
                Some(path) => ca_file(path)?,
                None => system_roots("the server's")
                    .map_err(|why| Error::Usage(format!("{why}, or pass --ca-file")))?,
            };
            let provider = tokio_rustls::rustls::crypto::ring::default_provider();
            config = config.tls_config(
                ureq::tls::TlsConfig::builder()
                    .provider(ureq::tls::TlsProvider::Rustls)
                    .root_certs(roots)
                    .unversioned_rustls_crypto_provider(Arc::new(provider))
                    .build(),
            );
        }
        Ok(Remote {
            base,
            agent: config.build().new_agent(),
            token,
        })
    }

    /// `path` (below `/-/api/v1/`) on the server, with `query`.
    fn url(&self, path: &str, query: &[(&str, String)]) -> Result<url::Url> {
        let mut url = self.base.clone();
        let joined = format!("{}/-/api/v1/{path}", url.path().trim_end_matches('/'));
        url.set_path(&joined);
        url.set_query(None);
        if !query.is_empty() {
            let mut pairs = url.query_pairs_mut();
            for (key, value) in query {
                pairs.append_pair(key, value);
            }
        }
        Ok(url)
    }

    /// Uploads `body` as `package@version`.
    pub(crate) fn publish(
        &self,
        package: &str,
        version: &semver::Version,
        query: &[(&str, String)],
        body: Upload<'_>,
    ) -> Result<Reply> {
        let url = self.url(&format!("publish/{package}/{version}"), query)?;
        let mut request = self
            .agent
            .put(url.as_str())
            .header("Authorization", format!("Bearer {}", self.token))
            .header("Content-Type", "application/gzip")
            .header("Expect", "100-continue");
        if let Some(length) = body.length {
            request = request.header("Content-Length", length.to_string());
        }
        let mut reader = body.reader;
        let sent = request.send(ureq::SendBody::from_reader(&mut reader));
        self.reply(&url, sent)
    }

    /// Points `tag` of `package` at `version`.
    pub(crate) fn tag_add(
        &self,
        package: &str,
        tag: &str,
        version: &semver::Version,
    ) -> Result<Reply> {
        let url = self.url(&format!("dist-tags/{package}/{tag}/{version}"), &[])?;
        let sent = self
            .agent
            .put(url.as_str())
            .header("Authorization", format!("Bearer {}", self.token))
            .send_empty();
        self.reply(&url, sent)
    }

    /// Removes `tag` from `package`.
    pub(crate) fn tag_rm(&self, package: &str, tag: &str) -> Result<Reply> {
        let url = self.url(&format!("dist-tags/{package}/{tag}"), &[])?;
        let sent = self
            .agent
            .delete(url.as_str())
            .header("Authorization", format!("Bearer {}", self.token))
            .call();
        self.reply(&url, sent)
    }

    /// Removes `package@version`.
    pub(crate) fn remove(&self, package: &str, version: &semver::Version) -> Result<Reply> {
        let url = self.url(&format!("versions/{package}/{version}"), &[])?;
        let sent = self
            .agent
            .delete(url.as_str())
            .header("Authorization", format!("Bearer {}", self.token))
            .call();
        self.reply(&url, sent)
    }

    /// The server's answer as a [`Reply`], or the error that a refusal, a
    /// failed connection or an answer not of ccc's shape is.
    fn reply(
        &self,
        url: &url::Url,
        sent: std::result::Result<ureq::http::Response<ureq::Body>, ureq::Error>,
    ) -> Result<Reply> {
        crate::interrupt::check()?;
        let shown = {
            let mut shown = url.clone();
            shown.set_query(None);
            shown.to_string()
        };
        let mut response = sent.map_err(|e| Error::Remote {
            url: shown.clone(),
            status: 0,
            error: scrub(&e.to_string(), &self.token),
            hint: Some(match e {
                _ if refused_certificate(&e) => {
                    "the server's certificate is not signed by a CA this machine trusts: give \
                     its CA's certificate with --ca-file FILE (a private CA), or check that --to \
                     names the server"
                        .into()
                }
                ureq::Error::Io(_) | ureq::Error::ConnectionFailed => {
                    "is the server up, and was the upload within its --max-upload-size?".into()
                }
                _ => "is --to the URL of a `ccc serve --publish-api`?".into(),
            }),
        })?;
        let status = response.status().as_u16();
        let text = response
            .body_mut()
            .with_config()
            .limit(64 << 20)
            .read_to_string()
            .unwrap_or_default();
        let reply: Reply = match serde_json::from_str(&text) {
            Ok(reply) => reply,
            Err(_) => {
                let start: String = text.chars().take(200).collect();
                return Err(Error::Remote {
                    url: shown,
                    status,
                    error: format!("an answer that is not ccc's: {}", start.trim()),
                    hint: Some(
                        "is --to the URL of a `ccc serve --publish-api`, or a proxy in front of \
                         one?"
                            .into(),
                    ),
                });
            }
        };
        if !(200..300).contains(&reply.status) {
            return Err(Error::Remote {
                url: shown,
                status: reply.status,
                error: reply.error.unwrap_or_else(|| reply.code.clone()),
                hint: reply.hint,
            });
        }
        Ok(reply)
    }
}

/// Whether `e` is the TLS handshake refusing the server's certificate.
fn refused_certificate(e: &ureq::Error) -> bool {
    use tokio_rustls::rustls;
    let ureq::Error::Io(io) = e else {
        return false;
    };
    io.get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        .is_some_and(|tls| matches!(tls, rustls::Error::InvalidCertificate(_)))
}

/// Whether `url` names this machine.
fn is_loopback(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(name)) => name == "localhost",
        None => false,
    }
}

/// The first line of `path`, the token.
fn read_token(path: &Path) -> Result<String> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    Ok(text.lines().next().unwrap_or("").trim().to_string())
}

/// `text` without the token, should a message repeat it.
fn scrub(text: &str, token: &str) -> String {
    if token.is_empty() {
        text.to_string()
    } else {
        text.replace(token, "[token]")
    }
}

/// The certificates of the PEM file `path` (`--ca-file`).
fn ca_file(path: &Path) -> Result<ureq::tls::RootCerts> {
    let pem = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let certs: Vec<ureq::tls::Certificate<'static>> = ureq::tls::parse_pem(&pem)
        .filter_map(|item| match item {
            Ok(ureq::tls::PemItem::Certificate(cert)) => Some(cert),
            _ => None,
        })
        .collect();
    if certs.is_empty() {
        return Err(Error::bad_input(path, "holds no PEM certificate"));
    }
    Ok(ureq::tls::RootCerts::new_with_certs(&certs))
}

/// The system's CA certificates, to check `whose` certificate with:
/// `SSL_CERT_FILE`, else the first bundle of [`CA_BUNDLES`] that holds
/// any; the error says where it looked.
pub(crate) fn system_roots(whose: &str) -> std::result::Result<ureq::tls::RootCerts, String> {
    let from_env = std::env::var_os("SSL_CERT_FILE").map(PathBuf::from);
    let candidates = from_env
        .into_iter()
        .chain(CA_BUNDLES.iter().map(PathBuf::from));
    let mut looked = Vec::new();
    for path in candidates {
        let Ok(pem) = std::fs::read(&path) else {
            looked.push(path.display().to_string());
            continue;
        };
        let certs: Vec<ureq::tls::Certificate<'static>> = ureq::tls::parse_pem(&pem)
            .filter_map(|item| match item {
                Ok(ureq::tls::PemItem::Certificate(cert)) => Some(cert),
                _ => None,
            })
            .collect();
        if !certs.is_empty() {
            return Ok(ureq::tls::RootCerts::new_with_certs(&certs));
        }
        looked.push(path.display().to_string());
    }
    Err(format!(
        "no CA certificates to check {whose} with (looked in {}); set SSL_CERT_FILE",
        looked.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(to: &str) -> RemoteArgs {
        RemoteArgs {
            to: Some(url::Url::parse(to).unwrap()),
            token_file: None,
            ca_file: None,
        }
    }

    #[test]
    fn a_token_goes_over_tls_or_to_this_machine_only() {
        let token = Some("ccc_x".to_string());
        for url in [
            "http://127.0.0.1:8333",
            "http://localhost",
            "http://[::1]:1",
        ] {
            assert!(Remote::new(&args(url), token.clone()).is_ok(), "{url}");
        }
        let refused = Remote::new(&args("http://cdn.example.com"), token.clone());
        assert!(
            refused.is_err_and(|e| e.to_string().contains("in clear")),
            "plain http to another machine"
        );
        assert!(
            Remote::new(&args("http://127.0.0.1"), None)
                .is_err_and(|e| e.to_string().contains("CCC_TOKEN"))
        );
    }

    #[test]
    fn paths_go_below_the_url_given() {
        let remote = Remote::new(&args("http://127.0.0.1:1/cdn/"), Some("t".into())).unwrap();
        let url = remote
            .url("publish/@team/ui/1.0.0", &[("tag", "next".into())])
            .unwrap();
        assert_eq!(
            url.as_str(),
            "http://127.0.0.1:1/cdn/-/api/v1/publish/@team/ui/1.0.0?tag=next"
        );
        assert_eq!(scrub("bad ccc_abc here", "ccc_abc"), "bad [token] here");
    }
}
