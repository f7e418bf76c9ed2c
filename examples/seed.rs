//! Synthetic catalog for benchmarks: N packages x M versions of JS-like
//! assets, published through the real publish pipeline, plus URL lists for
//! load generators.
//!
//! ```text
//! cargo run --release --example seed -- --out bench/data            # 500 x 5
//! cargo run --release --example seed -- --out /tmp/s --packages 20 --versions 3
//! cargo run --release --example seed -- --out /tmp/scale/1m --million --level 1
//! ```
//!
//! `--million` is the scale preset (bench/SCALE.md): 5,000 packages x 10
//! versions x 20 files, 1,000,000 assets, where each release changes 10% of
//! a package's files (`--churn 10`), so that versions share most of their
//! blobs as the releases of a real app do. Its history is semver-shaped
//! (`1.0.0`, `1.0.1`, `1.0.2`, `1.1.0`, ...), and a changed chunk gets a new
//! content hash in its name as a bundler's output does.
//!
//! Writes `<out>/cdn.db`, `<out>/urls.txt` (every asset URL once, in
//! catalog order) and `<out>/urls_hot.txt` (80% of lines drawn from the 50
//! first assets of urls.txt, 20% uniform over all of them). Everything comes
//! from one fixed seed, so two runs give the same catalog and the same lists.
//!
//! Assets look like minified JavaScript (and a little CSS and JSON): tokens
//! drawn with a skewed distribution from a per-package vocabulary, so that
//! gzip shrinks them to about a third, as it does real bundles. Their gzipped
//! sizes spread log-uniformly over 512 B to 8 KiB. Each new version of a
//! package changes about a third of its files and keeps the rest, so
//! versions share blobs as real releases do. `--churn PCT` (which
//! `--million` sets) changes PCT% of the files per release instead, with the
//! semver-shaped history and renamed chunks described above; without it the
//! catalog is the one earlier benchmarks measured, byte for byte.
//!
//! The seed's connection commits with `synchronous = OFF`: a benchmark
//! catalog that a crash would damage is simply seeded again, and 50,000
//! fsyncs would dominate the time of a big seed.

use ccc::testing::SplitMix64;
use ccc::testing::catalog::publish::{self, FileEntry, NoProgress, Options, Source};
use ccc::testing::catalog::{Access, Catalog, GzipLevel, SqliteResult};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

/// An index in 0..n from ccc's seeded generator, skewed towards small
/// values (roughly Zipfian).
fn skewed(rng: &mut SplitMix64, n: usize) -> usize {
    let u = rng.unit();
    ((n as f64).powf(u) - 1.0) as usize % n
}

struct Args {
    out: PathBuf,
    packages: usize,
    versions: usize,
    files: usize,
    seed: u64,
    level: GzipLevel,
    hot_lines: usize,
    /// Percent of a package's files each new version changes, with the
    /// realistic history; None for the original 500 x 5 shape.
    churn: Option<usize>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        out: PathBuf::from("bench/data"),
        packages: 500,
        versions: 5,
        files: 16,
        seed: 0x00cc_c5ee_d000_0001,
        level: GzipLevel::DEFAULT,
        hot_lines: 100_000,
        churn: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        let number = |v: String| v.parse::<usize>().map_err(|e| format!("{flag}: {e}"));
        match flag.as_str() {
            "--out" => args.out = PathBuf::from(value()?),
            "--packages" => args.packages = number(value()?)?,
            "--versions" => args.versions = number(value()?)?,
            "--files" => args.files = number(value()?)?,
            "--seed" => args.seed = number(value()?)? as u64,
            "--level" => args.level = value()?.parse()?,
            "--hot-lines" => args.hot_lines = number(value()?)?,
            "--churn" => args.churn = Some(number(value()?)?),
            "--million" => {
                args.packages = 5_000;
                args.versions = 10;
                args.files = 20;
                args.churn = Some(10);
            }
            "-h" | "--help" => {
                println!(
                    "usage: seed [--out DIR] [--million] [--packages N] [--versions M] [--files F] [--churn PCT] [--seed S] [--level L] [--hot-lines K]"
                );
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if args.packages == 0 || args.versions == 0 || args.files == 0 {
        return Err("--packages, --versions and --files must be at least 1".into());
    }
    if args.churn.is_some_and(|c| c > 100) {
        return Err("--churn is a percentage, 0 to 100".into());
    }
    Ok(args)
}

/// Gzipped size over raw size of what these generators produce.
const GZIP_RATIO: f64 = 0.27;

const KEYWORDS: &[&str] = &[
    "function", "return", "var ", "let ", "const ", "if(", "else", "for(", "new ", "this.",
    "typeof ", "null", "void 0", "!0", "!1", "=>", "===", "!==", "&&", "||",
];
const PUNCT: &[&str] = &[
    "(", ")", "{", "}", ";", ",", ".", "=", "+", "?", ":", "[", "]",
];

/// Identifiers a package's code keeps reusing.
fn vocabulary(rng: &mut SplitMix64) -> Vec<String> {
    const SYLLABLES: &[&str] = &[
        "get", "set", "on", "use", "state", "props", "node", "el", "cb", "fn", "key", "val",
        "item", "list", "map", "ctx", "ref", "init", "render", "update", "emit", "data", "opts",
        "res", "req", "err", "idx", "len", "src", "dst", "tmp", "cfg",
    ];
    (0..160)
        .map(|i| {
            if i < 40 {
                // Minifier-style short names.
                let letter = (b'a' + (i % 26) as u8) as char;
                if i < 26 {
                    letter.to_string()
                } else {
                    format!("{letter}{}", i - 26)
                }
            } else {
                let a = SYLLABLES[rng.below(SYLLABLES.len())];
                let b = SYLLABLES[rng.below(SYLLABLES.len())];
                format!("{a}{}{}", b[..1].to_ascii_uppercase(), &b[1..])
            }
        })
        .collect()
}

/// Short token runs a package's code keeps repeating, as real bundles
/// repeat `function(e,t){return e.` and friends.
fn phrases(rng: &mut SplitMix64, vocab: &[String]) -> Vec<String> {
    (0..48)
        .map(|_| {
            let mut p = String::new();
            while p.len() < 12 + rng.below(40) {
                push_token(rng, vocab, &mut p);
            }
            p
        })
        .collect()
}

fn push_token(rng: &mut SplitMix64, vocab: &[String], out: &mut String) {
    match rng.below(10) {
        0..=3 => out.push_str(&vocab[skewed(rng, vocab.len())]),
        4..=5 => out.push_str(KEYWORDS[skewed(rng, KEYWORDS.len())]),
        6..=8 => out.push_str(PUNCT[rng.below(PUNCT.len())]),
        _ => {
            if rng.below(3) == 0 {
                out.push_str(&format!("\"{}\"", vocab[skewed(rng, vocab.len())]));
            } else {
                out.push_str(&skewed(rng, 256).to_string());
            }
        }
    }
}

/// About `len` bytes of minified-looking JavaScript.
fn js(rng: &mut SplitMix64, vocab: &[String], phrases: &[String], len: usize) -> Vec<u8> {
    let mut out = String::with_capacity(len + 64);
    out.push_str("\"use strict\";");
    while out.len() < len {
        if rng.below(5) == 0 {
            out.push_str(&phrases[skewed(rng, phrases.len())]);
        } else {
            push_token(rng, vocab, &mut out);
        }
    }
    out.into_bytes()
}

/// About `len` bytes of CSS.
fn css(rng: &mut SplitMix64, vocab: &[String], len: usize) -> Vec<u8> {
    const PROPS: &[&str] = &[
        "color",
        "margin",
        "padding",
        "display",
        "border",
        "font-size",
        "width",
        "height",
        "background",
        "flex",
    ];
    let mut out = String::with_capacity(len + 64);
    while out.len() < len {
        out.push_str(&format!(
            ".{}-{}{{",
            vocab[skewed(rng, vocab.len())],
            rng.below(50)
        ));
        for _ in 0..1 + rng.below(4) {
            out.push_str(&format!(
                "{}:{}px;",
                PROPS[skewed(rng, PROPS.len())],
                rng.below(64)
            ));
        }
        out.push('}');
    }
    out.into_bytes()
}

/// About `len` bytes of JSON.
fn json(rng: &mut SplitMix64, vocab: &[String], len: usize) -> Vec<u8> {
    let mut out = String::from("{");
    while out.len() < len {
        out.push_str(&format!(
            "\"{}{}\":{{\"id\":{},\"name\":\"{}\",\"on\":{}}},",
            vocab[skewed(rng, vocab.len())],
            rng.below(1000),
            rng.below(100_000),
            vocab[rng.below(vocab.len())],
            rng.below(2) == 1
        ));
    }
    out.push_str("\"end\":true}");
    out.into_bytes()
}

/// One file's content, sized so that it gzips to 512 B .. 8 KiB.
fn content(rng: &mut SplitMix64, vocab: &[String], phrases: &[String], path: &str) -> Vec<u8> {
    // Log-uniform gzipped target; these generators gzip to about 27%.
    let gz_target = 512.0 * 16f64.powf(rng.unit());
    let raw_len = (gz_target / GZIP_RATIO) as usize;
    if path.ends_with(".css") {
        css(rng, vocab, raw_len)
    } else if path.ends_with(".json") {
        json(rng, vocab, raw_len)
    } else {
        js(rng, vocab, phrases, raw_len)
    }
}

fn package_name(i: usize) -> String {
    const WORDS: &[&str] = &[
        "ui", "kit", "charts", "forms", "grid", "icons", "router", "store", "query", "motion",
    ];
    let word = WORDS[i % WORDS.len()];
    if i % 10 == 3 {
        format!("@org{}/{word}-{i}", i % 7)
    } else {
        format!("{word}-{i}")
    }
}

fn file_path(i: usize, rng: &mut SplitMix64) -> String {
    match i {
        0 => "index.js".into(),
        1 => "package.json".into(),
        2 => "dist/styles.css".into(),
        _ => format!("dist/chunks/chunk-{i}.{:08x}.js", rng.next_u64() as u32),
    }
}

/// The `v`th release of a package: three patch releases per minor
/// (`1.0.0`, `1.0.1`, `1.0.2`, `1.1.0`, ...), as most packages' histories
/// run.
fn release(v: usize) -> semver::Version {
    semver::Version::new(1, (v / 3) as u64, (v % 3) as u64)
}

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    if let Err(e) = seed(&args) {
        eprintln!("error: {e}");
        if let Some(hint) = e.hint() {
            eprintln!("  hint: {hint}");
        }
        std::process::exit(1);
    }
}

fn seed(args: &Args) -> ccc::Result<()> {
    std::fs::create_dir_all(&args.out).map_err(|e| ccc::Error::Io {
        path: args.out.clone(),
        source: e,
    })?;
    let db = args.out.join("cdn.db");
    for suffix in ["", "-wal", "-shm"] {
        let mut p = db.clone().into_os_string();
        p.push(suffix);
        let _ = std::fs::remove_file(p);
    }
    let mut catalog = Catalog::open(&db, Access::Create)?;
    catalog
        .conn()
        .pragma_update(None, "synchronous", "OFF")
        .at(&catalog)?;
    let mut rng = SplitMix64::new(args.seed);
    let options = Options {
        level: args.level,
        ..Options::default()
    };
    let mut urls = Vec::new();
    let started = std::time::Instant::now();
    let (mut raw, mut stored) = (0u64, 0u64);
    for p in 0..args.packages {
        let name = package_name(p);
        let vocab = vocabulary(&mut rng);
        let phrases = phrases(&mut rng, &vocab);
        let mut files: Vec<(String, Arc<[u8]>)> = (0..args.files)
            .map(|i| {
                let path = file_path(i, &mut rng);
                let body = content(&mut rng, &vocab, &phrases, &path);
                (path, Arc::from(body))
            })
            .collect();
        for v in 0..args.versions {
            if let (true, Some(churn)) = (v > 0, args.churn) {
                // A release touches `churn`% of the files; a bundler names
                // a changed chunk after its new content.
                for (i, (path, body)) in files.iter_mut().enumerate() {
                    if rng.below(100) < churn {
                        if i >= 3 {
                            *path = file_path(i, &mut rng);
                        }
                        *body = Arc::from(content(&mut rng, &vocab, &phrases, path));
                    }
                }
            } else if v > 0 {
                // A release touches about a third of the files.
                for (path, body) in files.iter_mut() {
                    if rng.below(3) == 0 {
                        *body = Arc::from(content(&mut rng, &vocab, &phrases, path));
                    }
                }
            }
            let version = match args.churn {
                Some(_) => release(v),
                None => semver::Version::new(1, v as u64, 0),
            };
            let entries = files
                .iter()
                .map(|(path, body)| FileEntry {
                    path: path.clone(),
                    size: body.len() as u64,
                    source: Source::Memory(body.clone()),
                })
                .collect();
            let report = publish::publish(
                &mut catalog,
                &name,
                &version,
                entries,
                Vec::new(),
                &options,
                &NoProgress,
            )?;
            raw += report.raw_bytes;
            stored += report.new_content.stored_bytes;
            for (path, _) in &files {
                urls.push(format!("/assets/{name}/{version}/{path}"));
            }
        }
        if (p + 1) % 50 == 0 {
            eprintln!(
                "seeded {}/{} packages in {:.0}s",
                p + 1,
                args.packages,
                started.elapsed().as_secs_f64()
            );
        }
    }
    write_lines(&args.out.join("urls.txt"), urls.iter())?;
    let hot: Vec<&String> = (0..args.hot_lines)
        .map(|_| {
            if rng.below(10) < 8 {
                &urls[rng.below(urls.len().min(50))]
            } else {
                &urls[rng.below(urls.len())]
            }
        })
        .collect();
    write_lines(&args.out.join("urls_hot.txt"), hot.into_iter())?;
    eprintln!(
        "wrote {} ({} assets, {} MiB raw, {} MiB stored) in {:.1}s, urls.txt and urls_hot.txt",
        db.display(),
        urls.len(),
        raw >> 20,
        stored >> 20,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn write_lines<'a>(
    path: &std::path::Path,
    lines: impl Iterator<Item = &'a String>,
) -> ccc::Result<()> {
    let io = |e| ccc::Error::Io {
        path: path.to_path_buf(),
        source: e,
    };
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).map_err(io)?);
    for line in lines {
        writeln!(out, "{line}").map_err(io)?;
    }
    out.flush().map_err(io)
}
