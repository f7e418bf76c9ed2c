//! Shared pieces of the command line: the flags several commands take,
//! the check a command's flags pass before any work ([`CheckArgs`]), and
//! the value parsers that turn each flag's text into its type, with an
//! error in words that clap prints with the usage.

use crate::catalog::chunks;
use crate::catalog::compression::{BrotliQuality, GzipLevel};
use crate::spec::{PackageVersion, Part, Target};
use clap::Args;
use std::time::Duration;

/// `--purge` and `--purge-delay`: HTTP caches to purge of what `rm` and
/// `gc` remove and `publish --force` replaces (see `crate::purge`).
#[derive(Debug, Args)]
pub(crate) struct PurgeArgs {
    /// Once the catalog has changed, send PURGE for every file removed or
    /// replaced (and its version's listing) to the HTTP cache at URL, like
    /// http://127.0.0.1:6081 (repeatable, one per cache); see README
    /// "Running ccc in production".
    #[arg(long = "purge", value_name = "URL", value_parser = parse_purge_url)]
    pub caches: Vec<crate::purge::CacheUrl>,

    /// With --purge, wait DURATION first: the time every origin behind the
    /// caches takes to serve the change, or a cache would fetch the old
    /// files again (`ccc serve` on this catalog: 250 ms; on a replica: its
    /// follower's interval plus a restore).
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = parse_duration, requires = "caches")]
    pub purge_delay: std::time::Duration,
}

/// Rules between several flags of one command, checked while clap parses.
pub(crate) trait CheckArgs {
    /// The subcommand these flags belong to, whose usage an error shows.
    const COMMAND: &str;

    /// Why the flags cannot go together, if they cannot.
    fn check(&self) -> Result<(), String>;
}

/// A command's flags, parsed by clap's derive and then checked by
/// [`CheckArgs`], so that a broken rule is a usage error like clap's own:
/// `error:` with the usage, exit 2, before any work starts.
#[derive(Debug)]
pub struct Checked<T>(pub(crate) T);

impl<T: Args + CheckArgs> Args for Checked<T> {
    fn group_id() -> Option<clap::Id> {
        T::group_id()
    }

    fn augment_args(cmd: clap::Command) -> clap::Command {
        T::augment_args(cmd)
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        T::augment_args_for_update(cmd)
    }
}

/// A number of threads: at least 1, since 0 would leave the work undone.
pub(crate) fn at_least_one(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(0) => Err("must be at least 1 (leave the flag out for the default)".into()),
        Ok(n) => Ok(n),
        Err(_) => Err("expected a whole number of threads, like 4".into()),
    }
}

pub(crate) fn parse_size(s: &str) -> Result<u64, String> {
    crate::units::parse_size(s)
}

/// A `--chunked-from` size: at least one chunk.
pub(crate) fn parse_chunked_from(s: &str) -> Result<u64, String> {
    let size = parse_size(s)?;
    let least = chunks::CHUNK_SIZE as u64;
    if size < least {
        return Err(format!("at least one chunk, {least} bytes (64KiB)"));
    }
    Ok(size)
}

pub(crate) fn parse_duration(s: &str) -> Result<Duration, String> {
    crate::units::parse_duration(s)
}

/// A duration that is not zero: a window or warm-up of nothing measures
/// nothing.
pub(crate) fn parse_positive_duration(s: &str) -> Result<Duration, String> {
    match parse_duration(s)? {
        d if d.is_zero() => Err("must be longer than zero, like 500ms or 2s".into()),
        d => Ok(d),
    }
}

/// A whole number that fits `T`; the error says which way it is wrong
/// (Rust's own says "number too large to fit in target type").
pub(crate) fn whole<T: std::str::FromStr>(s: &str) -> Result<T, String> {
    let digits = s.trim();
    digits.parse::<T>().map_err(|_| {
        if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            format!("`{digits}` is too large")
        } else {
            format!("`{s}` is not a whole number")
        }
    })
}

pub(crate) fn parse_purge_url(s: &str) -> Result<crate::purge::CacheUrl, String> {
    crate::purge::CacheUrl::parse(s)
}

/// A count (of versions, entries, ...): any whole number from 0.
pub(crate) fn parse_count(s: &str) -> Result<usize, String> {
    whole(s)
}

pub(crate) fn parse_seed(s: &str) -> Result<u64, String> {
    whole(s)
}

/// `--trust-proxy`: a CIDR block, or one address (a block of one).
pub(crate) fn parse_proxy(text: &str) -> Result<ipnet::IpNet, String> {
    text.parse::<ipnet::IpNet>()
        .or_else(|_| text.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
        .map_err(|_| format!("`{text}` is neither an address nor a CIDR block like 10.0.0.0/8"))
}

pub(crate) fn parse_port(s: &str) -> Result<u16, String> {
    between(s, 0, u16::MAX, "a port")
}

/// A whole number of at least `min`; the error says so in words.
pub(crate) fn at_least<T>(s: &str, min: T, why: &str) -> Result<T, String>
where
    T: std::str::FromStr + PartialOrd + std::fmt::Display,
{
    match whole::<T>(s)? {
        n if n >= min => Ok(n),
        _ => Err(format!("must be at least {min}{why}")),
    }
}

/// A whole number from `lo` to `hi`; the error says so in words.
pub(crate) fn between<T>(s: &str, lo: T, hi: T, what: &str) -> Result<T, String>
where
    T: std::str::FromStr + PartialOrd + std::fmt::Display,
{
    match s.trim().parse::<T>() {
        Ok(n) if n >= lo && n <= hi => Ok(n),
        _ => Err(format!("{what} is a whole number from {lo} to {hi}")),
    }
}

pub(crate) fn parse_level(s: &str) -> Result<GzipLevel, String> {
    s.parse()
}

pub(crate) fn parse_brotli_quality(s: &str) -> Result<BrotliQuality, String> {
    s.parse()
}

pub(crate) fn parse_speedup(s: &str) -> Result<u8, String> {
    between(s, 0, 100, "a speedup").map_err(|e| format!("{e} (a percentage)"))
}

pub(crate) fn parse_max_connections(s: &str) -> Result<usize, String> {
    at_least(s, 1, " (leave the flag out for the default)")
}

pub(crate) fn parse_rounds(s: &str) -> Result<usize, String> {
    at_least(s, 1, "")
}

pub(crate) fn parse_min_delta(s: &str) -> Result<u64, String> {
    at_least(s, 5, " (Coz's viewer plots no experiment with fewer)")
}

/// The sites of `ccc causal`, by name; the value is the site's id.
pub(crate) fn site_parser() -> impl clap::builder::TypedValueParser<Value = u16> {
    use crate::causal::points::SITES;
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(SITES.iter().map(|s| s.name))
        .map(|name| SITES.iter().find(|s| s.name == name).map_or(0, |s| s.id))
}

/// A package name or a glob of them: a glob that parses, made of what
/// names hold (no `/` but a scope's, nothing a name cannot have besides
/// the glob's own `*?[]{},!`).
pub(crate) fn parse_package_glob(s: &str) -> Result<String, String> {
    if s.is_empty() {
        return Err("a package name or glob, like app or '@acme/*'".into());
    }
    if s.contains('@') && !s.starts_with('@') {
        return Err(format!(
            "gc judges whole packages: give `{}`, not a version (`ccc rm PKG@VERSION` removes one)",
            s.split('@').next().unwrap_or(s)
        ));
    }
    parse_glob(s)
}

pub(crate) fn parse_glob(s: &str) -> Result<String, String> {
    globset::Glob::new(s)
        .map(|_| s.to_string())
        .map_err(|e| e.kind().to_string())
}

/// A spec error as a value parser reports it: clap already quotes the
/// input, so an `InvalidSpec` says only what was expected; a hint follows.
pub(crate) fn spec_error(e: crate::Error) -> String {
    let text = match &e {
        crate::Error::InvalidSpec { why, .. } | crate::Error::InvalidTag { why, .. } => why.clone(),
        other => other.to_string(),
    };
    match e.hint() {
        Some(hint) => format!("{text}\n  hint: {hint}"),
        None => text,
    }
}

/// An IP address, or a host name resolved when the server starts. `[::1]`
/// is taken for `::1`, as in a URL.
pub(crate) fn parse_bind(s: &str) -> Result<String, String> {
    let host = s
        .strip_prefix('[')
        .and_then(|s| s.strip_suffix(']'))
        .unwrap_or(s);
    if host.parse::<std::net::IpAddr>().is_ok() {
        return Ok(host.to_string());
    }
    let label = |l: &str| {
        !l.is_empty()
            && l.len() <= 63
            && !l.starts_with('-')
            && !l.ends_with('-')
            && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
    };
    let name = host.strip_suffix('.').unwrap_or(host);
    if name.len() <= 253 && name.split('.').all(label) {
        return Ok(host.to_string());
    }
    Err(
        "expected an IP address (127.0.0.1, ::) or a host name (localhost); \
         the port goes in --port"
            .into(),
    )
}

pub(crate) fn parse_tag(s: &str) -> Result<String, String> {
    crate::spec::tag_name(s)
        .map(str::to_string)
        .map_err(spec_error)
}

pub(crate) fn parse_package(s: &str) -> Result<String, String> {
    let form = "PKG, like app or @scope/app";
    Target::parse_as(s, Part::Refused, Part::Refused, form)
        .map(|t| t.package)
        .map_err(spec_error)
}

pub(crate) fn parse_version_to_tag(s: &str) -> Result<PackageVersion, String> {
    PackageVersion::parse_for(s, "tag").map_err(spec_error)
}

pub(crate) fn parse_package_or_version(s: &str) -> Result<Target, String> {
    Target::parse_as(
        s,
        Part::Optional,
        Part::Refused,
        "PKG or PKG@VERSION, like app@1.4.0",
    )
    .map_err(spec_error)
}

pub(crate) fn parse_version(s: &str) -> Result<Target, String> {
    let form = "PKG@VERSION, like app@1.4.0 or app@latest";
    Target::parse_as(s, Part::Required, Part::Refused, form).map_err(spec_error)
}

pub(crate) fn parse_registry(s: &str) -> Result<String, String> {
    crate::importmap::registry::parse_url(s)
}

pub(crate) fn parse_base(s: &str) -> Result<crate::importmap::Base, String> {
    crate::importmap::Base::parse(s)
}

pub(crate) fn parse_version_or_file(s: &str) -> Result<Target, String> {
    let form = "PKG@VERSION or PKG@VERSION/PATH, like app@1.4.0 or app@1.4.0/index.html";
    Target::parse_as(s, Part::Required, Part::Optional, form).map_err(spec_error)
}

pub(crate) fn parse_file(s: &str) -> Result<Target, String> {
    let form = "PKG@VERSION/PATH, like app@1.4.0/index.html";
    Target::parse_as(s, Part::Required, Part::Required, form).map_err(spec_error)
}
