//! Quantities as people type and read them: sizes (`256MiB`, `1.5 GB`),
//! durations (`30days`, `2 weeks`, `12h`), ratios, and counted nouns
//! (`1 file`, `3 entries`). A leaf: the error type words its messages
//! with it without depending on anything that prints.
//!
//! Parsing is strict and errors name the expected form, in the tone of
//! cargo's gc options. Tables show IEC units; JSON always carries exact
//! integers instead, and times as RFC 3339 strings (docs/JSON.md).

use std::time::Duration;

/// Parses a size such as `256MiB`, `1.5GB`, `4096` (bytes) or `64 KiB`.
pub(crate) fn parse_size(input: &str) -> Result<u64, String> {
    let trimmed = input.trim();
    if trimmed.is_empty() {
        return Err("expected a size like 256MiB, 1GB or 4096".into());
    }
    trimmed
        .parse::<bytesize::ByteSize>()
        .map(|b| b.as_u64())
        .map_err(|_| {
            format!("invalid size `{input}`: expected a number with an optional unit (B, KB, KiB, MB, MiB, GB, GiB), like 256MiB")
        })
}

/// Parses a duration such as `30days`, `2 weeks`, `12h` or `90min`.
pub(crate) fn parse_duration(input: &str) -> Result<Duration, String> {
    humantime::parse_duration(input.trim()).map_err(|_| {
        format!(
            "invalid duration `{input}`: expected a number and a unit (s, min, h, days, weeks, months, years), like 30days or 12h"
        )
    })
}

/// A size as a flag takes it and its help shows it, exactly: `4GiB`,
/// `64MiB`, `4096` (bytes), the largest binary unit that divides it.
/// [`parse_size`] reads it back to the same number.
pub(crate) fn flag_size(bytes: u64) -> String {
    for (unit, shift) in [("GiB", 30), ("MiB", 20), ("KiB", 10)] {
        if bytes != 0 && bytes.is_multiple_of(1 << shift) {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    bytes.to_string()
}

/// A duration as a flag takes it and its help shows it: whole seconds
/// (`60s`), or milliseconds (`1500ms`) for a duration that is not a whole
/// second. [`parse_duration`] reads it back to the same duration, to the
/// millisecond.
pub(crate) fn flag_duration(d: Duration) -> String {
    match d.subsec_nanos() {
        0 => format!("{}s", d.as_secs()),
        _ => format!("{}ms", d.as_millis()),
    }
}

/// A size for tables: `1.2 MiB`, `512 B`.
pub fn human_size(bytes: u64) -> String {
    bytesize::ByteSize::b(bytes).display().iec().to_string()
}

/// `stored / raw` as a percentage for tables (`23.4%`), `-` when raw is 0.
pub(crate) fn ratio(stored: u64, raw: u64) -> String {
    if raw == 0 {
        "-".into()
    } else {
        format!("{:.1}%", stored as f64 * 100.0 / raw as f64)
    }
}

/// A Unix time in seconds for tables, as `2026-11-30 03:40 UTC`.
pub(crate) fn human_time(unix_secs: i64) -> String {
    let t = std::time::UNIX_EPOCH + Duration::from_secs(unix_secs.max(0) as u64);
    let s = humantime::format_rfc3339_seconds(t).to_string();
    // 2026-11-30T03:40:12Z -> 2026-11-30 03:40 UTC
    format!("{} {} UTC", &s[..10], &s[11..16])
}

/// A Unix time in seconds as RFC 3339 in UTC, to the second
/// (`2026-11-30T03:40:12Z`): the one time format of ccc's JSON.
pub(crate) fn rfc3339(unix_secs: i64) -> String {
    let t = std::time::UNIX_EPOCH + Duration::from_secs(unix_secs.max(0) as u64);
    humantime::format_rfc3339_seconds(t).to_string()
}

/// Serializes a Unix time in seconds with [`rfc3339`]; use it as
/// `#[serde(serialize_with = "crate::units::serialize_rfc3339")]` on every
/// time a JSON object carries, so no command prints epoch integers.
pub(crate) fn serialize_rfc3339<S: serde::Serializer>(
    unix_secs: &i64,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    s.collect_str(&rfc3339(*unix_secs))
}

/// Now, in Unix seconds.
pub(crate) fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// `n` and a noun, singular for exactly one: `1 file`, `0 files`,
/// `2 matches`, `3 entries`. Regular English plurals, which are all ccc's
/// nouns need.
pub(crate) fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        return format!("1 {noun}");
    }
    format!("{n} {}", plural(noun))
}

/// `n` and `noun` with the verb that agrees with it: `1 reference does
/// not resolve`, `3 references do not resolve`.
pub(crate) fn count_verb(n: u64, noun: &str, singular: &str, plural: &str) -> String {
    let verb = if n == 1 { singular } else { plural };
    format!("{} {verb}", count(n, noun))
}

fn plural(noun: &str) -> String {
    let before_last = noun.chars().rev().nth(1);
    if ["s", "x", "z", "ch", "sh"]
        .iter()
        .any(|end| noun.ends_with(end))
    {
        format!("{noun}es")
    } else if noun.ends_with('y') && before_last.is_some_and(|c| !"aeiou".contains(c)) {
        format!("{}ies", &noun[..noun.len() - 1])
    } else {
        format!("{noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_durations_read_back() {
        for (d, shown) in [
            (Duration::from_secs(60), "60s"),
            (Duration::from_secs(75), "75s"),
            (Duration::ZERO, "0s"),
            (Duration::from_millis(1500), "1500ms"),
        ] {
            assert_eq!(flag_duration(d), shown);
            assert_eq!(parse_duration(shown), Ok(d));
        }
    }

    #[test]
    fn flag_sizes_are_exact_and_read_back() {
        assert_eq!(flag_size(4 << 30), "4GiB");
        assert_eq!(flag_size(64 << 20), "64MiB");
        assert_eq!(flag_size(1536 << 20), "1536MiB");
        assert_eq!(flag_size(4097), "4097");
        assert_eq!(flag_size(0), "0");
        for n in [0, 1, 1023, 1024, 3 << 19, 4 << 30, (5 << 30) + 1] {
            assert_eq!(parse_size(&flag_size(n)), Ok(n), "{n}");
        }
    }

    #[test]
    fn counted_nouns() {
        assert_eq!(count(1, "file"), "1 file");
        assert_eq!(count(0, "file"), "0 files");
        assert_eq!(count(2, "version"), "2 versions");
        assert_eq!(count(1, "worker"), "1 worker");
        assert_eq!(count(3, "match"), "3 matches");
        assert_eq!(count(2, "entry"), "2 entries");
        assert_eq!(count(2, "day"), "2 days");
        assert_eq!(count(4, "blob"), "4 blobs");
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("256MiB").unwrap(), 256 << 20);
        assert_eq!(parse_size("1 KB").unwrap(), 1000);
        assert_eq!(parse_size("4096").unwrap(), 4096);
        let err = parse_size("lots").unwrap_err();
        assert!(err.contains("256MiB"), "{err}");
        assert_eq!(human_size(1536), "1.5 KiB");
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30days").unwrap().as_secs(), 30 * 86400);
        assert_eq!(parse_duration("2 weeks").unwrap().as_secs(), 14 * 86400);
        assert_eq!(parse_duration("12h").unwrap().as_secs(), 12 * 3600);
        let err = parse_duration("30").unwrap_err();
        assert!(err.contains("30days"), "{err}");
    }

    #[test]
    fn times_and_ratios() {
        assert_eq!(human_time(0), "1970-01-01 00:00 UTC");
        assert_eq!(rfc3339(86400), "1970-01-02T00:00:00Z");
        assert_eq!(ratio(25, 100), "25.0%");
        assert_eq!(ratio(0, 0), "-");
    }
}
