//! Where a follower reads a replica's LTX files from, laid out as
//! Litestream lays them out:
//! - a directory (its `file` replica): `DIR/ltx/LEVEL/MIN-MAX.ltx`, the
//!   level in decimal; read in place;
//! - an S3 bucket or an S3-compatible store (its `s3` replica):
//!   `PATH/LLLL/MIN-MAX.ltx`, the level in four hex digits; listed with
//!   ListObjectsV2 and each file a round needs downloaded beside the
//!   served catalog, then removed.
//!
//! S3 requests are signed by `rusty-s3` (a signer with no I/O of its own)
//! and sent by `ureq`, a blocking client over rustls with ring, as the
//! server's TLS is: a follower makes a few requests a second, one at a
//! time, and needs no async runtime or second TLS stack for that.
//! Credentials come from `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and
//! `AWS_SESSION_TOKEN` (or Litestream's `LITESTREAM_ACCESS_KEY_ID` and
//! `LITESTREAM_SECRET_ACCESS_KEY`, so one environment file serves both);
//! the region from `?region=`, `AWS_REGION` or `AWS_DEFAULT_REGION`
//! (default `us-east-1`); another endpoint (MinIO, R2, a test server) from
//! `?endpoint=`, `AWS_ENDPOINT_URL_S3` or `AWS_ENDPOINT_URL`, addressed
//! path-style.

use super::plan::LtxFile;
use crate::error::{Error, Result};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a signed request stays valid.
const SIGNED_FOR: Duration = Duration::from_secs(300);
/// The most a listing page (1,000 keys) may weigh.
const LISTING_LIMIT: u64 = 16 << 20;

/// A replica to read.
pub(crate) enum Source {
    Dir(PathBuf),
    S3(Box<S3>),
}

/// An S3 replica: its bucket, the key prefix Litestream writes under, and
/// how to ask.
pub(crate) struct S3 {
    url: String,
    bucket: rusty_s3::Bucket,
    credentials: Option<rusty_s3::Credentials>,
    /// `PATH/`, or empty for a replica at the bucket's root.
    prefix: String,
    agent: ureq::Agent,
}

/// An LTX file on this machine, removed when dropped if it was downloaded.
pub(crate) struct Local {
    pub path: PathBuf,
    _downloaded: Option<tempfile::TempPath>,
}

impl Source {
    /// The replica named by `replica`: a path, a file:// URL, or an s3://
    /// URL. A path is not checked here.
    pub(crate) fn parse(replica: &str) -> Result<Source> {
        match replica.split_once("://") {
            None => Ok(Source::Dir(PathBuf::from(replica))),
            Some(("file", rest)) => Ok(Source::Dir(PathBuf::from(rest))),
            Some(("s3", _)) => Ok(Source::S3(Box::new(S3::parse(replica)?))),
            Some((scheme, _)) => Err(Error::Usage(format!(
                "ccc follow reads a replica in a directory (a path or file:// URL) or in S3 (s3://BUCKET/PATH), not {scheme}://; \
                 for other replicas use examples/deploy/ccc-follow, which restores through litestream"
            ))),
        }
    }

    /// What to call the replica in messages.
    pub(crate) fn describe(&self) -> String {
        match self {
            Source::Dir(path) => path.display().to_string(),
            Source::S3(s3) => s3.url.clone(),
        }
    }

    /// Every LTX file of the replica; none while Litestream has not
    /// written any.
    pub(crate) fn list(&self) -> Result<Vec<LtxFile>> {
        let mut files = match self {
            Source::Dir(root) => list_dir(root).map_err(|e| Error::Io {
                path: root.clone(),
                source: e,
            })?,
            Source::S3(s3) => s3.list()?,
        };
        files.sort_by_key(|f| (f.level, f.min_txid, f.max_txid));
        Ok(files)
    }

    /// `file` on this machine: when the replica is remote, downloaded
    /// beside `served` under the name [`download_prefix`] gives.
    pub(crate) fn fetch(&self, file: &LtxFile, served: &Path) -> Result<Local> {
        match self {
            Source::Dir(_) => Ok(Local {
                path: PathBuf::from(&file.key),
                _downloaded: None,
            }),
            Source::S3(s3) => s3.download(file, served),
        }
    }
}

/// The start of the names of files downloaded for the catalog at `served`
/// (`.cdn.db.download-`): hidden, and named after the catalog, so that a
/// follower left by a kill can find its own.
pub(crate) fn download_prefix(served: &Path) -> String {
    let name = served
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!(".{name}.download-")
}

/// The folder of `path` (`.` for a bare file name).
pub(crate) fn folder_of(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

/// `ROOT/ltx/LEVEL/MIN-MAX.ltx`.
fn list_dir(root: &Path) -> std::io::Result<Vec<LtxFile>> {
    let levels = match std::fs::read_dir(root.join("ltx")) {
        Ok(levels) => levels,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut files = Vec::new();
    for level in levels {
        let level = level?;
        let Some(number) = level
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u8>().ok())
        else {
            continue;
        };
        for entry in std::fs::read_dir(level.path())? {
            let path = entry?.path();
            let name = path.file_name().and_then(|n| n.to_str());
            if let (Some(range), Some(key)) =
                (name.and_then(super::plan::parse_name), path.to_str())
            {
                files.push(LtxFile::new(number, range, key.to_string()));
            }
        }
    }
    Ok(files)
}

impl S3 {
    fn parse(replica: &str) -> Result<S3> {
        let bad = |what: &str| Error::Usage(format!("{replica}: {what}"));
        let url = url::Url::parse(replica).map_err(|e| bad(&e.to_string()))?;
        let name = url
            .host_str()
            .filter(|h| !h.is_empty())
            .ok_or_else(|| bad("no bucket"))?;
        let query = |key: &str| {
            url.query_pairs()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.into_owned())
        };
        let env = |keys: &[&str]| {
            keys.iter()
                .find_map(|k| std::env::var(k).ok().filter(|v| !v.trim().is_empty()))
        };
        let region = query("region")
            .or_else(|| env(&["AWS_REGION", "AWS_DEFAULT_REGION"]))
            .unwrap_or_else(|| "us-east-1".into());
        let endpoint =
            query("endpoint").or_else(|| env(&["AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"]));
        let (endpoint, style) = match endpoint {
            Some(endpoint) if endpoint.contains("://") => (endpoint, rusty_s3::UrlStyle::Path),
            // Litestream's `?endpoint=host:port` form.
            Some(endpoint) => (format!("https://{endpoint}"), rusty_s3::UrlStyle::Path),
            None => (
                format!("https://s3.{region}.amazonaws.com"),
                rusty_s3::UrlStyle::VirtualHost,
            ),
        };
        let endpoint =
            url::Url::parse(&endpoint).map_err(|e| bad(&format!("endpoint {endpoint}: {e}")))?;
        let bucket = rusty_s3::Bucket::new(endpoint, style, name.to_string(), region)
            .map_err(|e| bad(&format!("bucket {name}: {e}")))?;
        let credentials = match (
            env(&["AWS_ACCESS_KEY_ID", "LITESTREAM_ACCESS_KEY_ID"]),
            env(&["AWS_SECRET_ACCESS_KEY", "LITESTREAM_SECRET_ACCESS_KEY"]),
        ) {
            (Some(key), Some(secret)) => Some(match env(&["AWS_SESSION_TOKEN"]) {
                Some(token) => rusty_s3::Credentials::new_with_token(key, secret, token),
                None => rusty_s3::Credentials::new(key, secret),
            }),
            _ => None,
        };
        let path = url.path().trim_matches('/');
        let prefix = if path.is_empty() {
            String::new()
        } else {
            format!("{path}/")
        };
        let agent = ureq::Agent::new_with_config(
            ureq::Agent::config_builder()
                .timeout_connect(Some(Duration::from_secs(10)))
                .timeout_recv_response(Some(Duration::from_secs(30)))
                .timeout_per_read(Some(Duration::from_secs(30)))
                .http_status_as_error(false)
                .build(),
        );
        let mut shown = url.clone();
        shown.set_query(None);
        Ok(S3 {
            url: shown.to_string(),
            bucket,
            credentials,
            prefix,
            agent,
        })
    }

    fn failed(&self, doing: &str, e: impl std::fmt::Display) -> Error {
        Error::BadInput {
            path: PathBuf::from(&self.url),
            what: format!("{doing}: {e}"),
        }
    }

    /// GETs `url`; an answer other than 2xx is an error that carries S3's
    /// own code and message (`404 NoSuchBucket: ...`).
    fn get(&self, url: &url::Url) -> std::result::Result<ureq::Body, String> {
        let response = self
            .agent
            .get(url.as_str())
            .call()
            .map_err(|e| e.to_string())?;
        let status = response.status();
        let mut body = response.into_body();
        if status.is_success() {
            return Ok(body);
        }
        let text = body
            .with_config()
            .limit(64 * 1024)
            .read_to_string()
            .unwrap_or_default();
        let field = |name: &str| {
            let open = format!("<{name}>");
            let start = text.find(&open)? + open.len();
            let end = start + text[start..].find("</")?;
            Some(text[start..end].to_string())
        };
        Err(match (field("Code"), field("Message")) {
            (Some(code), Some(message)) => format!("S3 answered {status} {code}: {message}"),
            (Some(code), None) => format!("S3 answered {status} {code}"),
            _ => format!("S3 answered {status}"),
        })
    }

    /// `PREFIX/LLLL/MIN-MAX.ltx`, page after page.
    fn list(&self) -> Result<Vec<LtxFile>> {
        use rusty_s3::S3Action;
        let mut files = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let mut action = self.bucket.list_objects_v2(self.credentials.as_ref());
            if !self.prefix.is_empty() {
                action.with_prefix(self.prefix.as_str());
            }
            if let Some(token) = &token {
                action.with_continuation_token(token.as_str());
            }
            let url = action.sign(SIGNED_FOR);
            let text = self
                .get(&url)
                .and_then(|mut body| {
                    body.with_config()
                        .limit(LISTING_LIMIT)
                        .read_to_string()
                        .map_err(|e| e.to_string())
                })
                .map_err(|e| self.failed("cannot list the replica", e))?;
            let page = rusty_s3::actions::ListObjectsV2::parse_response(&text)
                .map_err(|e| self.failed("cannot read the replica's listing", e))?;
            for object in page.contents {
                if let Some(file) = self.file_of(object.key) {
                    files.push(file);
                }
            }
            match page.next_continuation_token {
                Some(next) => token = Some(next),
                None => return Ok(files),
            }
        }
    }

    /// The LTX file that `key` names, if it is one: `PREFIX/LLLL/MIN-MAX.ltx`.
    fn file_of(&self, key: String) -> Option<LtxFile> {
        let (level, name) = key.strip_prefix(self.prefix.as_str())?.split_once('/')?;
        if level.len() != 4 {
            return None;
        }
        let level = u8::try_from(u16::from_str_radix(level, 16).ok()?).ok()?;
        let range = super::plan::parse_name(name)?;
        Some(LtxFile::new(level, range, key))
    }

    fn download(&self, file: &LtxFile, served: &Path) -> Result<Local> {
        use rusty_s3::S3Action;
        let url = self
            .bucket
            .get_object(self.credentials.as_ref(), &file.key)
            .sign(SIGNED_FOR);
        let fetching =
            |e: &dyn std::fmt::Display| self.failed(&format!("cannot download {}", file.key), e);
        let mut body = self.get(&url).map_err(|e| fetching(&e))?;
        let beside = folder_of(served);
        let mut local = tempfile::Builder::new()
            .prefix(&download_prefix(served))
            .suffix(".ltx")
            .tempfile_in(beside)
            .map_err(|e| Error::io(beside, e))?;
        let mut reader = body.with_config().limit(u64::MAX).reader();
        std::io::copy(&mut reader, local.as_file_mut()).map_err(|e| fetching(&e))?;
        local
            .as_file_mut()
            .flush()
            .map_err(|e| Error::io(local.path(), e))?;
        let path = local.into_temp_path();
        Ok(Local {
            path: path.to_path_buf(),
            _downloaded: Some(path),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s3(url: &str) -> S3 {
        match Source::parse(url).expect("parses") {
            Source::S3(s3) => *s3,
            Source::Dir(_) => panic!("{url} is S3"),
        }
    }

    #[test]
    fn keys_are_a_four_hex_digit_level_then_the_range() {
        let replica = s3("s3://bucket/apps/cdn?endpoint=http://127.0.0.1:9000");
        assert_eq!(replica.prefix, "apps/cdn/");
        let key = "apps/cdn/0009/0000000000000001-00000000000000ff.ltx".to_string();
        let file = replica.file_of(key.clone()).expect("an LTX file");
        assert_eq!(
            (file.level, file.min_txid, file.max_txid, file.key),
            (9, 1, 255, key)
        );
        for other in [
            "apps/cdn/9/0000000000000001-0000000000000001.ltx",
            "apps/cdn/0000/0000000000000001-0000000000000001.ltx.tmp",
            "apps/other/0000/0000000000000001-0000000000000001.ltx",
            "apps/cdn/00000/0000000000000001-0000000000000001.ltx",
        ] {
            assert!(replica.file_of(other.to_string()).is_none(), "{other}");
        }
        let root = s3("s3://bucket?endpoint=http://127.0.0.1:9000");
        assert_eq!(root.prefix, "");
        assert!(
            root.file_of("0000/0000000000000002-0000000000000002.ltx".into())
                .is_some()
        );
    }

    #[test]
    fn an_endpoint_is_addressed_path_style_and_aws_by_host() {
        let local = s3("s3://bucket/cdn?endpoint=http://127.0.0.1:9000&region=eu-west-1");
        assert_eq!(local.url, "s3://bucket/cdn");
        assert_eq!(
            local.bucket.base_url().as_str(),
            "http://127.0.0.1:9000/bucket/"
        );
        assert_eq!(local.bucket.region(), "eu-west-1");
        // Litestream's form: host and port only, HTTPS.
        let minio = s3("s3://bucket/cdn?endpoint=minio.internal:9000&region=x");
        assert_eq!(
            minio.bucket.base_url().as_str(),
            "https://minio.internal:9000/bucket/"
        );
        let aws = s3("s3://bucket/cdn?region=eu-west-1");
        assert_eq!(
            aws.bucket.base_url().as_str(),
            "https://bucket.s3.eu-west-1.amazonaws.com/"
        );
    }

    #[test]
    fn other_schemes_are_refused_naming_the_script() {
        let err = Source::parse("gs://bucket/cdn").err().expect("refused");
        assert!(
            err.to_string().contains("examples/deploy/ccc-follow"),
            "{err}"
        );
        assert!(
            matches!(Source::parse("file:///srv/replica"), Ok(Source::Dir(p)) if p == Path::new("/srv/replica"))
        );
    }
}
