//! The sites a server answers, as read from the catalog once per change:
//! each host's site, the version its tag names, that version's paths, its
//! `_redirects` and `_headers` rules, and the versions skew protection
//! answers from. A request to a site then reads no catalog row to decide
//! which file answers it; only the file itself is a cache hit or a miss.
//!
//! The store keeps the map it read last with the count of catalog changes
//! it was read under (`store::Handle::sites`), so a tag moved by a publish,
//! a `ccc tag add` or a `ccc site set` moves the site within the store's
//! change check (a quarter of a second), on every server of the catalog.

use crate::catalog::Catalog;
use crate::catalog::sites::{Site, SiteState};
use crate::error::{Error, Result};
use crate::http::dictionary::use_as_dictionary_on_site;
use crate::site::fingerprint::is_fingerprinted;
use crate::site::rules::{HEADERS, HeaderRules, MAX_FILE_LEN, REDIRECTS, Redirects};
use http::HeaderValue;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// Every site, by host.
#[derive(Debug, Default)]
pub(crate) struct SiteMap {
    hosts: HashMap<Box<str>, Arc<ServedSite>>,
    default: Option<Arc<ServedSite>>,
}

/// One site as a server answers it.
#[derive(Debug)]
pub(crate) struct ServedSite {
    pub site: Site,
    /// The version the tag names; None while there is none.
    pub version: Option<String>,
    /// The current version's paths.
    files: HashSet<Box<str>>,
    /// Its folders with an `index.html` ("" for the root's).
    indexes: HashSet<Box<str>>,
    /// Its `.html` files without the extension, for clean URLs.
    pages: HashSet<Box<str>>,
    /// Its files whose names carry a content hash.
    hashed: HashSet<Box<str>>,
    /// `Use-As-Dictionary` for the site's URLs of each script, stylesheet,
    /// JSON or wasm file of the current and recent versions, made once
    /// here rather than per answer (sent when the asset offers one).
    dictionaries: HashMap<Box<str>, Arc<HeaderValue>>,
    /// The versions a page may still load fingerprinted files from,
    /// newest first, each with its fingerprinted paths.
    recent: Vec<(String, HashSet<Box<str>>)>,
    pub redirects: Redirects,
    pub headers: HeaderRules,
    /// Why the version's rules cannot be applied (a file that does not
    /// parse, or damaged): the site answers 500 with it rather than serve
    /// without them.
    pub problem: Option<String>,
}

impl SiteMap {
    /// Reads every site of `catalog`.
    pub(crate) fn read(catalog: &Catalog) -> Result<SiteMap> {
        let mut map = SiteMap::default();
        for state in catalog.sites()? {
            let served = Arc::new(ServedSite::read(catalog, state)?);
            match served.site.host.clone() {
                Some(host) => {
                    map.hosts.insert(host.into_boxed_str(), served);
                }
                None => map.default = Some(served),
            }
        }
        Ok(map)
    }

    /// The site of a request's host (`Host` or `:authority`, any case,
    /// with or without a port or a final dot), else the default site.
    pub(crate) fn for_host(&self, host: Option<&str>) -> Option<&Arc<ServedSite>> {
        if self.hosts.is_empty() {
            return self.default.as_ref();
        }
        let named = host.and_then(|host| {
            let name = host_name(host);
            match name.bytes().any(|b| b.is_ascii_uppercase()) {
                false => self.hosts.get(name),
                true => self.hosts.get(name.to_ascii_lowercase().as_str()),
            }
        });
        named.or(self.default.as_ref())
    }
}

/// The name of a `Host` value: without its port and a final dot.
fn host_name(host: &str) -> &str {
    let name = crate::http::host::without_port(host);
    name.strip_suffix('.').unwrap_or(name)
}

impl ServedSite {
    fn read(catalog: &Catalog, state: SiteState) -> Result<ServedSite> {
        let SiteState {
            site,
            current,
            recent,
        } = state;
        let mut served = ServedSite {
            version: current.as_ref().map(|v| v.version.clone()),
            files: HashSet::new(),
            indexes: HashSet::new(),
            pages: HashSet::new(),
            hashed: HashSet::new(),
            dictionaries: HashMap::new(),
            recent: Vec::with_capacity(recent.len()),
            redirects: Redirects::default(),
            headers: HeaderRules::default(),
            problem: None,
            site,
        };
        for version in recent {
            let fingerprinted: HashSet<Box<str>> = catalog
                .version_paths(version.id)?
                .into_iter()
                .filter(|path| is_fingerprinted(path))
                .map(String::into_boxed_str)
                .collect();
            served.offer_as_dictionaries(fingerprinted.iter());
            served.recent.push((version.version, fingerprinted));
        }
        let Some(current) = current else {
            return Ok(served);
        };
        served.files = catalog
            .version_paths(current.id)?
            .into_iter()
            .map(String::into_boxed_str)
            .collect();
        served.hashed = served
            .files
            .iter()
            .filter(|path| is_fingerprinted(path))
            .cloned()
            .collect();
        let files = std::mem::take(&mut served.files);
        served.offer_as_dictionaries(files.iter());
        served.files = files;
        for path in &served.files {
            if let Some(page) = path.strip_suffix(".html") {
                if let Some(dir) = page.strip_suffix("index")
                    && (dir.is_empty() || dir.ends_with('/'))
                {
                    served.indexes.insert(dir.trim_end_matches('/').into());
                }
                if served.site.clean_urls {
                    served.pages.insert(page.into());
                }
            }
        }
        let package = served.site.package.clone();
        // A file too long, not text or damaged is the version's problem,
        // kept with the site; an error reading the catalog is the read's.
        let rules = |file: &str| match served.files.contains(file) {
            true => match catalog.small_file(&package, &current.version, file, MAX_FILE_LEN as u64)
            {
                Ok(text) => Ok(Ok(text)),
                Err(e @ (Error::Usage(_) | Error::Corrupt { .. })) => Ok(Err(e.to_string())),
                Err(e) => Err(e),
            },
            false => Ok(Ok(None)),
        };
        let (redirects, headers) = (rules(REDIRECTS)?, rules(HEADERS)?);
        let read = (|| -> std::result::Result<(Redirects, HeaderRules), String> {
            let redirects = match redirects? {
                Some(bytes) => Redirects::from_bytes(&bytes).map_err(|e| e.to_string())?,
                None => Redirects::default(),
            };
            let headers = match headers? {
                Some(bytes) => HeaderRules::from_bytes(&bytes).map_err(|e| e.to_string())?,
                None => HeaderRules::default(),
            };
            Ok((redirects, headers))
        })();
        match read {
            Ok((redirects, headers)) => {
                served.redirects = redirects;
                served.headers = headers;
            }
            Err(why) => {
                served.problem = Some(format!(
                    "the site {} cannot apply {package}@{}'s rules: {why}",
                    served.site.host_label(),
                    current.version
                ))
            }
        }
        Ok(served)
    }

    /// Whether the current version has a file at `path` (relative, no
    /// leading slash).
    pub(crate) fn has(&self, path: &str) -> bool {
        self.files.contains(path)
    }

    /// Whether the folder `dir` ("" for the root, no trailing slash) has an
    /// `index.html`.
    pub(crate) fn has_index(&self, dir: &str) -> bool {
        self.indexes.contains(dir)
    }

    /// Whether `PAGE.html` is a file (with clean URLs on; never else).
    pub(crate) fn has_page(&self, page: &str) -> bool {
        self.pages.contains(page)
    }

    /// Whether the file at `path`, of the current version or a recent
    /// one, carries a content hash in its name.
    pub(crate) fn is_hashed(&self, path: &str) -> bool {
        self.hashed.contains(path) || self.recent_with(path).is_some()
    }

    /// The `Use-As-Dictionary` of the file at `path` for the site's URLs.
    pub(crate) fn dictionary(&self, path: &str) -> Option<&Arc<HeaderValue>> {
        self.dictionaries.get(path)
    }

    fn offer_as_dictionaries<'p>(&mut self, paths: impl Iterator<Item = &'p Box<str>>) {
        for path in paths {
            if self.dictionaries.contains_key(path) {
                continue;
            }
            let Some(kind) = crate::delta::kind(path) else {
                continue;
            };
            let value = use_as_dictionary_on_site(path, kind);
            if let Ok(value) = HeaderValue::from_str(&value) {
                self.dictionaries.insert(path.clone(), Arc::new(value));
            }
        }
    }

    /// The newest recent version with the fingerprinted file at `path`.
    pub(crate) fn recent_with(&self, path: &str) -> Option<&str> {
        self.recent
            .iter()
            .find(|(_, paths)| paths.contains(path))
            .map(|(version, _)| version.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_is_named_without_port_case_or_final_dot() {
        assert_eq!(host_name("example.com:8080"), "example.com");
        assert_eq!(host_name("example.com."), "example.com");
        assert_eq!(host_name("[::1]:443"), "[::1]");
        assert_eq!(host_name("[::1]"), "[::1]");
    }
}
