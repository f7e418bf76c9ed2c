//! `ccc site set HOST PKG[@TAG]`, `ccc site rm HOST`, `ccc site ls`: the
//! sites `ccc serve` answers at the root, by `Host` (see
//! [`crate::catalog::sites`] for the model).

use crate::catalog::sites::{DEFAULT_SKEW_SECONDS, DEFAULT_SKEW_VERSIONS, Site, SiteState};
use crate::catalog::{Access, Catalog};
use crate::cmd::args::*;
use crate::error::Result;
use crate::output::{self, Column, Table};
use crate::units;
use clap::{Args, Subcommand};
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

/// Serve a package's dist-tag at the root of a host: an app's front door.
///
/// A site maps a host (the request's `Host`, or `:authority` over HTTP/2)
/// to a package at a dist-tag: `/` and every path under it are that
/// version's files. `default` is the site of every host no other site
/// names. Moving the tag (`ccc publish`, `ccc tag add`) moves the site: a
/// deploy or a rollback is one commit, and every server of the catalog,
/// replicas too, follows it within a quarter of a second. /assets/... and
/// the other paths of the server keep working beside a site, unless the
/// site has a file at that path.
///
/// Pages and files without a hash in their name are sent `no-cache` with
/// their ETag, so a returning browser revalidates them (a 304 for what a
/// release did not change); fingerprinted names (`index-B1x9aZq2.js`) are
/// immutable. The build's `_headers` and `_redirects` files (Netlify's and
/// Cloudflare Pages' syntax) apply, as do `404.html` and directory indexes.
#[derive(Debug, Args)]
pub struct SiteArgs {
    #[command(subcommand)]
    pub(crate) action: SiteAction,
}

#[derive(Debug, Subcommand)]
pub(crate) enum SiteAction {
    /// Serve PKG at TAG (`latest` when not given) at the root of HOST,
    /// replacing the site HOST had.
    Set(SetArgs),
    /// Stop serving a site at HOST (its package and versions stay).
    Rm {
        /// The host, like `www.example.com`, or `default`.
        #[arg(value_name = "HOST", value_parser = parse_site_host)]
        host: SiteHost,
    },
    /// List the sites, the version each serves now, and the versions skew
    /// protection still answers from (`recent`).
    Ls {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Args)]
pub(crate) struct SetArgs {
    /// The host, like `www.example.com` (no port; any case), or `default`
    /// for every host no other site names.
    #[arg(value_name = "HOST", value_parser = parse_site_host)]
    host: SiteHost,
    /// The package and the dist-tag to serve, like `app` (its `latest`),
    /// `app@next` or `@acme/app@beta`.
    #[arg(value_name = "PKG[@TAG]", value_parser = parse_package_at_tag)]
    target: (String, String),
    /// Answer a path that has no file and no extension (`/settings/profile`)
    /// with `/index.html`, for single-page apps that route in the browser.
    #[arg(long)]
    spa: bool,
    /// Answer `/about` with `/about.html` when there is no file `about`.
    #[arg(long)]
    clean_urls: bool,
    /// Send `Strict-Transport-Security: max-age=...` for this long on every
    /// answer over HTTPS, like 365days.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    hsts: Option<Duration>,
    /// How many versions the site served before the current one still
    /// answer their fingerprinted files, so that a page open during a
    /// deploy can load its own chunks (0: none).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_SKEW_VERSIONS)]
    skew_versions: u32,
    /// For how long after the site stopped serving a version (default: a
    /// day).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    skew_age: Option<Duration>,
}

/// A site's host as typed: a host name, or the default site.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SiteHost(Option<String>);

fn parse_site_host(s: &str) -> std::result::Result<SiteHost, String> {
    if s == "default" {
        return Ok(SiteHost(None));
    }
    let host = s.to_ascii_lowercase();
    let fits = |label: &str| {
        !label.is_empty()
            && label.len() <= 63
            && !label.starts_with('-')
            && !label.ends_with('-')
            && label
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    };
    if host.contains(':') {
        return Err(format!(
            "a site's host has no port: `{}` (a site answers on every port serve listens on)",
            s.split(':').next().unwrap_or(s)
        ));
    }
    if host.len() > 253 || !host.split('.').all(fits) {
        return Err(format!(
            "`{s}` is not a host name: letters, digits and `-` in dot-separated labels, \
             like www.example.com (names in other scripts in their xn-- form), or `default`"
        ));
    }
    Ok(SiteHost(Some(host)))
}

/// `PKG` or `PKG@TAG`: a package and a dist-tag (`latest` when not given).
fn parse_package_at_tag(s: &str) -> std::result::Result<(String, String), String> {
    let at = s.get(1..).and_then(|rest| rest.rfind('@')).map(|i| i + 1);
    let (package, tag) = match at {
        Some(i) => (&s[..i], &s[i + 1..]),
        None => (s, "latest"),
    };
    let package = parse_package(package)?;
    if semver::Version::parse(tag).is_ok() {
        return Err(format!(
            "a site follows a dist-tag, not a version: tag the version \
             (`ccc tag add {package}@{tag} live`) and give `{package}@live`"
        ));
    }
    Ok((package, parse_tag(tag)?))
}

pub(crate) fn run(db: &Path, args: SiteArgs) -> Result<ExitCode> {
    match args.action {
        SiteAction::Set(set) => {
            let site = Site {
                host: set.host.0,
                package: set.target.0,
                tag: set.target.1,
                spa: set.spa,
                clean_urls: set.clean_urls,
                hsts_max_age: set.hsts.map(|d| d.as_secs()),
                skew_versions: set.skew_versions,
                skew_seconds: set.skew_age.map_or(DEFAULT_SKEW_SECONDS, |d| d.as_secs()),
            };
            // A site may be set up before anything is published to it.
            let mut catalog = Catalog::open(db, Access::Create)?;
            let change = catalog.set_site(&site)?;
            let verb = if change.replaced { "replaced" } else { "set" };
            let serves = match &change.state.current {
                Some(v) => format!("serves {}@{}", site.package, v.version),
                None => format!(
                    "serves nothing yet: {} has no version at `{}` (until one is \
                     published, the site answers 503)",
                    site.package, site.tag
                ),
            };
            output::print(format!(
                "site {} {verb}: {}@{} {serves}",
                site.host_label(),
                site.package,
                site.tag
            ))?;
            Ok(ExitCode::SUCCESS)
        }
        SiteAction::Rm { host } => {
            let mut catalog = Catalog::open(db, Access::ReadWrite)?;
            let site = catalog.remove_site(host.0.as_deref())?;
            output::print(format!(
                "site {} removed ({} and its versions stay)",
                site.host_label(),
                site.package
            ))?;
            Ok(ExitCode::SUCCESS)
        }
        SiteAction::Ls { json } => {
            let catalog = Catalog::open(db, Access::ReadOnly)?;
            let sites = catalog.sites()?;
            if json {
                output::print_json(&sites)?;
            } else {
                output::print(table(&sites))?;
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Whole days, hours or minutes when the seconds are, as people set them.
fn human_seconds(secs: u64) -> String {
    match secs {
        s if s >= 86_400 && s % 86_400 == 0 => units::count(s / 86_400, "day"),
        s if s >= 3_600 && s % 3_600 == 0 => units::count(s / 3_600, "hour"),
        s if s >= 60 && s % 60 == 0 => units::count(s / 60, "minute"),
        s => units::count(s, "second"),
    }
}

fn table(sites: &[SiteState]) -> Table {
    let mut table = Table::new(vec![
        Column::path("host"),
        Column::path("serves"),
        Column::text("version"),
        Column::prose("settings"),
        Column::prose("recent").optional(),
    ]);
    for state in sites {
        let site = &state.site;
        let mut settings = Vec::new();
        if site.spa {
            settings.push("spa".to_string());
        }
        if site.clean_urls {
            settings.push("clean URLs".to_string());
        }
        if let Some(age) = site.hsts_max_age {
            settings.push(format!("HSTS {}", human_seconds(age)));
        }
        let recent: Vec<&str> = state.recent.iter().map(|r| r.version.as_str()).collect();
        // The versions skew protection answers from ("off" when it is).
        let skew = match (site.skew_versions, recent.is_empty()) {
            (0, _) => "off".to_string(),
            (_, true) => "-".to_string(),
            (_, false) => recent.join(", "),
        };
        table.add_row([
            site.host_label().to_string(),
            format!("{}@{}", site.package, site.tag),
            state
                .current
                .as_ref()
                .map_or("(none)".to_string(), |v| v.version.clone()),
            if settings.is_empty() {
                "-".to_string()
            } else {
                settings.join(", ")
            },
            skew,
        ]);
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_names_without_ports() {
        assert_eq!(
            parse_site_host("WWW.Example.com"),
            Ok(SiteHost(Some("www.example.com".into())))
        );
        assert_eq!(parse_site_host("default"), Ok(SiteHost(None)));
        assert!(
            parse_site_host("example.com:8443")
                .unwrap_err()
                .contains("no port")
        );
        assert!(parse_site_host("exa mple.com").is_err());
        assert!(parse_site_host("-a.com").is_err());
        assert!(parse_site_host("a..com").is_err());
    }

    #[test]
    fn a_site_follows_a_tag_not_a_version() {
        assert_eq!(
            parse_package_at_tag("app"),
            Ok(("app".into(), "latest".into()))
        );
        assert_eq!(
            parse_package_at_tag("@acme/app@beta"),
            Ok(("@acme/app".into(), "beta".into()))
        );
        assert_eq!(
            parse_package_at_tag("@acme/app"),
            Ok(("@acme/app".into(), "latest".into()))
        );
        assert!(
            parse_package_at_tag("app@1.0.0")
                .unwrap_err()
                .contains("dist-tag")
        );
    }
}
