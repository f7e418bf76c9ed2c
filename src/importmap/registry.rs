//! The packages an import map lacks, with everything they depend on, as
//! npm would install them: asked of the npm registry, so that `ccc
//! importmap` names the whole missing tree at once, with the `npm pack`
//! line that fetches it, instead of one level per run (publish react-dom,
//! run again, find scheduler missing, publish it, run again...).
//!
//! The catalog knows nothing of a package it lacks, so only the registry
//! can say what that package depends on. For each lacking package and
//! range, [`Registry`] reads the package's document (the abbreviated form
//! npm itself installs from, `application/vnd.npm.install-v1+json`),
//! picks the version npm would (the `latest` dist-tag when the range
//! allows it, else the newest version the range allows, one that is not
//! deprecated if there is one), and follows its `dependencies` and
//! `peerDependencies` (a peer marked optional is left out, as npm leaves
//! it) the same way. A dependency the catalog already satisfies is not
//! lacking, and neither is anything below it.
//!
//! The registry is `--registry URL`, else npm's own setting
//! (`npm_config_registry`, which npm exports to its scripts and users set
//! for a private registry), else <https://registry.npmjs.org/>. `--offline`
//! asks nothing: only the packages the map itself lacks are listed, by
//! range. HTTPS is rustls with the system's CA certificates
//! (`SSL_CERT_FILE`, or the usual bundle paths), over the same ring
//! provider the server uses.

use crate::catalog::Catalog;
use crate::error::Result;
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

/// npm's public registry.
pub(crate) const DEFAULT_REGISTRY: &str = "https://registry.npmjs.org/";

/// How long one registry request may take.
const TIMEOUT: Duration = Duration::from_secs(30);

/// Most packages listed: a tree that big is a mistake to stop at.
const MOST: usize = 1000;

/// The largest package document read (typescript's abbreviated one is
/// about 10 MB).
const MAX_DOCUMENT: u64 = 256 << 20;

/// A package the catalog lacks, and why it is needed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Lacking {
    pub package: String,
    /// The version npm would install; None when the registry was not
    /// asked (`--offline`) or could not say.
    pub version: Option<String>,
    /// The ranges asked for it, each with who asks (`app@1.0.0`,
    /// `react-dom@18.3.1`).
    pub wanted_by: Vec<Wanted>,
}

/// One range a package is wanted in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Wanted {
    /// `PKG@VERSION` of the version that depends on it.
    pub by: String,
    pub range: String,
}

impl Lacking {
    /// `react-dom@18.3.1`, or `react-dom@^18.3.1` when only the range is
    /// known: what `npm pack` takes.
    pub(crate) fn spec(&self) -> String {
        match &self.version {
            Some(version) => format!("{}@{version}", self.package),
            None => format!(
                "{}@{}",
                self.package,
                self.wanted_by
                    .first()
                    .map_or("latest", |w| w.range.as_str())
            ),
        }
    }
}

/// An npm registry.
pub(crate) struct Registry {
    url: String,
    agent: ureq::Agent,
    /// Package documents read, by name.
    documents: HashMap<String, Arc<Value>>,
}

impl Registry {
    /// The registry at `url` (http or https). Fails, in words, when an
    /// https registry finds no CA certificates to check it with.
    pub(crate) fn new(url: &str) -> std::result::Result<Registry, String> {
        let url = url.trim_end_matches('/').to_string();
        let mut config = ureq::Agent::config_builder()
            .timeout_global(Some(TIMEOUT))
            .user_agent(concat!("ccc/", env!("CARGO_PKG_VERSION")));
        if url.starts_with("https://") {
            let provider = tokio_rustls::rustls::crypto::ring::default_provider();
            config = config.tls_config(
                ureq::tls::TlsConfig::builder()
                    .provider(ureq::tls::TlsProvider::Rustls)
                    .root_certs(
                        crate::remote::system_roots("the npm registry's")
                            .map_err(|why| format!("{why}, or pass --offline"))?,
                    )
                    .unversioned_rustls_crypto_provider(Arc::new(provider))
                    .build(),
            );
        }
        Ok(Registry {
            url,
            agent: config.build().new_agent(),
            documents: HashMap::new(),
        })
    }

    /// The package document of `package`: None when the registry has no
    /// such package; an error in words when it cannot be read.
    fn document(&mut self, package: &str) -> std::result::Result<Option<Arc<Value>>, String> {
        if let Some(document) = self.documents.get(package) {
            return Ok(Some(document.clone()));
        }
        // A scope's `/` is encoded, as npm writes it.
        let url = format!("{}/{}", self.url, package.replace('/', "%2f"));
        let mut response = match self
            .agent
            .get(&url)
            .header(
                "Accept",
                "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8",
            )
            .call()
        {
            Ok(response) => response,
            Err(ureq::Error::StatusCode(404)) => return Ok(None),
            Err(ureq::Error::StatusCode(status)) => {
                return Err(format!("{url} answered {status}"));
            }
            Err(e) => return Err(format!("{url}: {e}")),
        };
        let body = response
            .body_mut()
            .with_config()
            .limit(MAX_DOCUMENT)
            .read_to_vec()
            .map_err(|e| format!("{url}: {e}"))?;
        let document: Value = serde_json::from_slice(&body)
            .map_err(|e| format!("{url} is not a package document ({e})"))?;
        let document = Arc::new(document);
        self.documents.insert(package.to_string(), document.clone());
        Ok(Some(document))
    }
}

/// Parses `--registry`: an http or https URL.
pub(crate) fn parse_url(text: &str) -> std::result::Result<String, String> {
    match url::Url::parse(text) {
        Ok(url) if matches!(url.scheme(), "http" | "https") && url.host().is_some() => {
            Ok(text.to_string())
        }
        _ => Err(format!(
            "`{text}` is not an http:// or https:// URL, like {DEFAULT_REGISTRY}"
        )),
    }
}

/// The version npm would install of the package `document` describes for
/// `range`: the `latest` dist-tag when the range allows it (or the tag
/// the range names), else the newest version the range allows, not
/// deprecated if one is not.
fn pick(document: &Value, range: &str) -> Option<String> {
    let tags = &document["dist-tags"];
    let range = range.trim();
    if let Some(tagged) = tags[range].as_str() {
        return Some(tagged.to_string());
    }
    let allowed = nodejs_semver::Range::parse(if range.is_empty() { "*" } else { range }).ok()?;
    let satisfies =
        |v: &str| nodejs_semver::Version::parse(v).is_ok_and(|version| allowed.satisfies(&version));
    if let Some(latest) = tags["latest"].as_str()
        && satisfies(latest)
    {
        return Some(latest.to_string());
    }
    let versions = document["versions"].as_object()?;
    let mut fitting: Vec<(nodejs_semver::Version, bool)> = versions
        .iter()
        .filter(|(v, _)| satisfies(v))
        .filter_map(|(v, manifest)| {
            let deprecated = manifest["deprecated"]
                .as_str()
                .is_some_and(|d| !d.is_empty());
            nodejs_semver::Version::parse(v)
                .ok()
                .map(|v| (v, deprecated))
        })
        .collect();
    fitting.sort();
    let best = fitting
        .iter()
        .rev()
        .find(|(_, deprecated)| !deprecated)
        .or(fitting.last())?;
    Some(best.0.to_string())
}

/// What `package@version` (of `document`) depends on, by name: its
/// `dependencies` and the `peerDependencies` not marked optional.
fn dependencies(document: &Value, version: &str) -> Vec<(String, String)> {
    let manifest = &document["versions"][version];
    let optional_peer = |name: &str| {
        manifest["peerDependenciesMeta"][name]["optional"]
            .as_bool()
            .unwrap_or(false)
    };
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    for (field, skip_optional) in [("dependencies", false), ("peerDependencies", true)] {
        for (name, range) in manifest[field].as_object().into_iter().flatten() {
            if skip_optional && optional_peer(name) {
                continue;
            }
            if let Some(range) = range.as_str() {
                out.entry(name.clone()).or_insert_with(|| range.to_string());
            }
        }
    }
    out.into_iter().collect()
}

/// Every package lacking from `catalog`: `first` (name, range, who wants
/// it), and, asked of `registry`, everything they depend on that the
/// catalog does not satisfy. Also the registry's trouble, in words, when
/// it could not say all (the packages it could not follow are listed by
/// range).
pub(crate) fn lacking(
    catalog: &Catalog,
    first: Vec<(String, String, String)>,
    mut registry: Option<&mut Registry>,
) -> Result<(Vec<Lacking>, Vec<String>)> {
    let mut found: Vec<Lacking> = Vec::new();
    let mut trouble: Vec<String> = Vec::new();
    let say = |what: String, trouble: &mut Vec<String>| {
        if !trouble.contains(&what) {
            trouble.push(what);
        }
    };
    let mut queue: VecDeque<(String, String, String)> = first.into();
    while let Some((package, range, by)) = queue.pop_front() {
        crate::interrupt::check()?;
        let wanted = Wanted {
            by: by.clone(),
            range: range.clone(),
        };
        let mut unreachable = false;
        let picked = match registry.as_deref_mut() {
            None => None,
            Some(registry) => match registry.document(&package) {
                Ok(Some(document)) => match pick(&document, &range) {
                    Some(version) => Some((version, document)),
                    None => {
                        say(
                            format!("the registry has no version of {package} that {range} allows"),
                            &mut trouble,
                        );
                        None
                    }
                },
                Ok(None) => {
                    say(
                        format!("{package} is not in the registry either"),
                        &mut trouble,
                    );
                    None
                }
                Err(e) => {
                    say(
                        format!("{e}; the registry is not asked again"),
                        &mut trouble,
                    );
                    unreachable = true;
                    None
                }
            },
        };
        // One that does not answer would make each package wait its
        // timeout: the rest are listed by range.
        if unreachable {
            registry = None;
        }
        let version = picked.as_ref().map(|(v, _)| v.clone());
        if let Some(known) = found
            .iter_mut()
            .find(|l| l.package == package && l.version == version)
        {
            if !known.wanted_by.contains(&wanted) {
                known.wanted_by.push(wanted);
            }
            continue;
        }
        if found.len() >= MOST {
            say(
                format!("more than {MOST} packages lacking; the list stops there"),
                &mut trouble,
            );
            break;
        }
        found.push(Lacking {
            package: package.clone(),
            version: version.clone(),
            wanted_by: vec![wanted],
        });
        let Some((version, document)) = picked else {
            continue;
        };
        let by = format!("{package}@{version}");
        for (dependency, range) in dependencies(&document, &version) {
            if !satisfied(catalog, &dependency, &range)? {
                queue.push_back((dependency, range, by.clone()));
            }
        }
    }
    Ok((found, trouble))
}

/// Whether the catalog holds a version of `package` that `range` allows
/// (a range that is no range, a tag or a URL, counts as satisfied: the
/// catalog cannot tell, and the map will say).
fn satisfied(catalog: &Catalog, package: &str, range: &str) -> Result<bool> {
    let Ok(allowed) = nodejs_semver::Range::parse(range) else {
        return Ok(true);
    };
    Ok(catalog
        .versions(package)?
        .iter()
        .any(|v| crate::spec::satisfies(&allowed, &v.version)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn document() -> Value {
        json!({
            "name": "react-dom",
            "dist-tags": {"latest": "19.0.0", "next": "19.1.0-rc.1"},
            "versions": {
                "17.0.2": {"dependencies": {"scheduler": "^0.20.2"}},
                "18.2.0": {"dependencies": {"scheduler": "^0.23.0"}},
                "18.3.0": {"deprecated": "broken build"},
                "18.3.1": {
                    "dependencies": {"loose-envify": "^1.1.0", "scheduler": "^0.23.2"},
                    "peerDependencies": {"react": "^18.3.1", "@types/react": "*"},
                    "peerDependenciesMeta": {"@types/react": {"optional": true}}
                },
                "19.0.0": {"dependencies": {"scheduler": "^0.25.0"}},
                "19.1.0-rc.1": {}
            }
        })
    }

    #[test]
    fn npm_s_version_is_picked() {
        let d = document();
        assert_eq!(pick(&d, "^18.2.0").as_deref(), Some("18.3.1"));
        assert_eq!(pick(&d, "*").as_deref(), Some("19.0.0"), "latest first");
        assert_eq!(pick(&d, "").as_deref(), Some("19.0.0"));
        assert_eq!(pick(&d, ">=18").as_deref(), Some("19.0.0"));
        assert_eq!(pick(&d, "next").as_deref(), Some("19.1.0-rc.1"));
        assert_eq!(
            pick(&d, "~18.3.0 <18.3.1").as_deref(),
            Some("18.3.0"),
            "only a deprecated one"
        );
        assert_eq!(pick(&d, "^20"), None);
        assert_eq!(pick(&d, "not a range"), None);
    }

    #[test]
    fn dependencies_and_required_peers_are_followed() {
        assert_eq!(
            dependencies(&document(), "18.3.1"),
            vec![
                ("loose-envify".to_string(), "^1.1.0".to_string()),
                ("react".to_string(), "^18.3.1".to_string()),
                ("scheduler".to_string(), "^0.23.2".to_string()),
            ]
        );
        assert!(dependencies(&document(), "19.1.0-rc.1").is_empty());
        assert!(dependencies(&document(), "0.0.1").is_empty());
    }

    #[test]
    fn a_spec_names_the_version_or_else_the_range() {
        let mut lacking = Lacking {
            package: "@s/x".into(),
            version: Some("1.2.3".into()),
            wanted_by: vec![Wanted {
                by: "app@1.0.0".into(),
                range: "^1".into(),
            }],
        };
        assert_eq!(lacking.spec(), "@s/x@1.2.3");
        lacking.version = None;
        assert_eq!(lacking.spec(), "@s/x@^1");
    }
}
