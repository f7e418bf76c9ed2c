//! The plain-HTTP front door of an HTTPS server (`--redirect-http PORT`):
//! every request is answered with a 308 to the same host and target over
//! HTTPS, as a front door's port 80 is, except ACME's HTTP-01 challenges
//! (`/.well-known/acme-challenge/TOKEN`), answered from the webroot
//! `--acme-dir` names, so that an ACME client (`certbot certonly
//! --webroot -w DIR`, `lego --http.webroot DIR`) can have the certificate
//! issued and renewed that serve then loads (SIGHUP reloads it).
//!
//! It runs on the same threads and the same transport as the HTTPS
//! listener, with the same limits. Strict-Transport-Security is never sent
//! here: a browser ignores it over plain HTTP (RFC 6797 7.2); the sites
//! send it over HTTPS.

use crate::http::host;
use crate::serve::response::Answer;
use crate::transport::{Delivery, Handler, Payload, Peer};
use bytes::Bytes;
use http::Response;
use http::request::Parts;
use std::path::PathBuf;

/// Where ACME clients put their challenge tokens, under the webroot.
pub(super) const ACME_CHALLENGES: &str = "/.well-known/acme-challenge/";

/// A key authorization is a token, a dot and a key thumbprint: far
/// smaller than this. A longer file is not an answer to a challenge.
const MAX_CHALLENGE_FILE: u64 = 4096;

/// The handler of the redirecting listener.
pub(super) struct Redirector {
    /// The HTTPS port redirects name (omitted when 443).
    pub(super) https_port: u16,
    /// The ACME webroot, if any.
    pub(super) acme_dir: Option<PathBuf>,
}

impl Redirector {
    fn answer(&self, head: &Parts) -> Answer {
        let target = head.uri.path_and_query().map_or("/", |p| p.as_str());
        if let Some(token) = target.strip_prefix(ACME_CHALLENGES)
            && let Some(dir) = &self.acme_dir
        {
            return challenge(dir, token);
        }
        let host = match head.headers.get(http::header::HOST) {
            Some(value) => value.to_str().ok(),
            None => head.uri.authority().map(|a| a.as_str()),
        };
        let Some(host) = host.filter(|h| !h.is_empty() && host::valid(h.as_bytes())) else {
            return Answer::error(400, "a redirect to HTTPS needs the request's Host");
        };
        if !target.starts_with('/') {
            return Answer::error(400, "the target `*` names no resource to redirect to");
        }
        let name = host::without_port(host);
        let location = match self.https_port {
            443 => format!("https://{name}{target}"),
            port => format!("https://{name}:{port}{target}"),
        };
        let mut answer = Answer::redirect(&location, "public, max-age=3600", None);
        answer.status = 308;
        answer
    }
}

/// The file of challenge `token` under the webroot, as text: 404 when
/// there is none, or when the token is not base64url (RFC 8555 8.3),
/// which also keeps every other path out of the webroot.
fn challenge(dir: &std::path::Path, token: &str) -> Answer {
    let valid = !token.is_empty()
        && token.len() <= 256
        && token
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    let missing = || Answer::error(404, "no such ACME challenge");
    if !valid {
        return missing();
    }
    let path = dir.join(".well-known/acme-challenge").join(token);
    let read = std::fs::metadata(&path).and_then(|m| match m.len() <= MAX_CHALLENGE_FILE {
        true => std::fs::read(&path),
        false => Err(std::io::Error::other("longer than a key authorization")),
    });
    match read {
        Ok(body) => {
            let mut answer = Answer::text("text/plain", body);
            answer.headers.set("Cache-Control", "no-store");
            answer
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => missing(),
        Err(e) => {
            crate::log::err(format_args!(
                "warning: ACME challenge {}: {e}",
                path.display()
            ));
            missing()
        }
    }
}

impl Handler for Redirector {
    type Ticket = ();

    fn handle(&self, head: Parts, _peer: Peer) -> (Response<Payload>, ()) {
        (self.answer(&head).into_response(), ())
    }

    fn finished(&self, _ticket: (), _delivery: Delivery) {}

    fn over_capacity(&self) -> Response<Bytes> {
        let mut refused = Answer::error(503, "too many connections; retry later").closing();
        refused.headers.push("Retry-After", "1");
        refused.into_response().map(|body| match body {
            Payload::Whole(bytes) => bytes,
            Payload::Pieces(_) => Bytes::new(),
        })
    }

    fn record_refused(&self, _status: u16, _peer: &Peer) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(target: &str, host: Option<&str>) -> Parts {
        let mut request = http::Request::builder().uri(target);
        if let Some(host) = host {
            request = request.header("Host", host);
        }
        request.body(()).unwrap().into_parts().0
    }

    fn redirector(https_port: u16, acme_dir: Option<PathBuf>) -> Redirector {
        Redirector {
            https_port,
            acme_dir,
        }
    }

    #[test]
    fn every_request_goes_to_https_with_its_host_and_target() {
        let r = redirector(443, None);
        let answer = r.answer(&head("/a/b?c=1", Some("Example.com:80")));
        assert_eq!(answer.status, 308);
        assert_eq!(
            answer.headers.get("location"),
            Some("https://Example.com/a/b?c=1")
        );
        let other = redirector(8443, None).answer(&head("/", Some("[::1]:8080")));
        assert_eq!(other.headers.get("location"), Some("https://[::1]:8443/"));
        assert_eq!(r.answer(&head("/", None)).status, 400);
        assert_eq!(r.answer(&head("/", Some("a b"))).status, 400);
    }

    #[test]
    fn acme_challenges_come_from_the_webroot_and_nothing_else_does() {
        let dir = tempfile::tempdir().unwrap();
        let challenges = dir.path().join(".well-known/acme-challenge");
        std::fs::create_dir_all(&challenges).unwrap();
        std::fs::write(challenges.join("tok-EN_1"), "tok-EN_1.thumb").unwrap();
        std::fs::write(dir.path().join("secret"), "no").unwrap();
        let r = redirector(443, Some(dir.path().to_path_buf()));
        let host = Some("example.com");
        let found = r.answer(&head("/.well-known/acme-challenge/tok-EN_1", host));
        assert_eq!(found.status, 200);
        assert_eq!(found.body.as_ref(), b"tok-EN_1.thumb");
        for target in [
            "/.well-known/acme-challenge/missing",
            "/.well-known/acme-challenge/..%2Fsecret",
            "/.well-known/acme-challenge/../../secret",
            "/.well-known/acme-challenge/",
        ] {
            assert_eq!(r.answer(&head(target, host)).status, 404, "{target}");
        }
        // Without a webroot a challenge is redirected as any path is.
        let plain = redirector(443, None).answer(&head("/.well-known/acme-challenge/x", host));
        assert_eq!(plain.status, 308);
    }
}
