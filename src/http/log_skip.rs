//! Which requests the access log leaves out (`--log-exclude GLOB`), as
//! nginx's `access_log off` in a `location` does: load balancers' health
//! probes (`/healthz` every second) and Prometheus's scrapes
//! (`/metrics`) would otherwise be most of a replica's log.
//!
//! A glob is matched against the request's path as sent, without its
//! query (`/healthz?full=1` is `/healthz`); `*` crosses `/`, as in
//! `publish --exclude`, so `/assets/*/healthcheck.txt` names that file
//! in every version. Left-out requests are still counted in `/_stats`
//! and `/metrics`.

use globset::{Glob, GlobSet, GlobSetBuilder};

/// The paths left out of the access log.
#[derive(Debug, Clone, Default)]
pub(crate) struct LogSkip(Option<GlobSet>);

impl LogSkip {
    /// Leaves out the paths any of `globs` matches; none: every request
    /// is logged. The error names a glob that does not parse.
    pub(crate) fn new(globs: &[String]) -> Result<LogSkip, String> {
        if globs.is_empty() {
            return Ok(LogSkip(None));
        }
        let mut set = GlobSetBuilder::new();
        for glob in globs {
            set.add(Glob::new(glob).map_err(|e| format!("`{glob}`: {}", e.kind()))?);
        }
        set.build()
            .map(|s| LogSkip(Some(s)))
            .map_err(|e| e.to_string())
    }

    /// Whether the request for `target` (path and query, or an absolute
    /// URL) is left out.
    pub(crate) fn skips(&self, target: &str) -> bool {
        let Some(set) = &self.0 else {
            return false;
        };
        let path = target.split(['?', '#']).next().unwrap_or("");
        // The absolute form (`GET http://host/healthz`) names the same path.
        let path = match path
            .strip_prefix("http://")
            .or_else(|| path.strip_prefix("https://"))
        {
            Some(rest) => rest.find('/').map_or("/", |i| &rest[i..]),
            None => path,
        };
        set.is_match(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_matched_without_their_query() {
        let skip =
            LogSkip::new(&["/healthz".into(), "/assets/*/healthcheck.txt".into()]).expect("globs");
        assert!(skip.skips("/healthz"));
        assert!(skip.skips("/healthz?verbose=1"));
        assert!(skip.skips("http://replica:8333/healthz"));
        assert!(skip.skips("/assets/app/1.0.0/healthcheck.txt"));
        assert!(!skip.skips("/healthzz"));
        assert!(!skip.skips("/assets/app/1.0.0/index.js"));
        assert!(!LogSkip::default().skips("/healthz"));
        assert!(LogSkip::new(&["[".into()]).unwrap_err().starts_with("`[`"));
    }
}
