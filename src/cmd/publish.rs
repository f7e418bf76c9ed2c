//! `ccc publish [PKG@VERSION] SOURCE`: read the directory or archive,
//! publish it, print a summary.

use crate::catalog::archive::{self, Rules};
use crate::catalog::compression::{BrotliQuality, GzipLevel};
use crate::catalog::publish::{self, CatalogFiles, Options, Progress};
use crate::catalog::rows::{Identity, VersionRow};
use crate::catalog::{Access, Catalog, SqliteResult};
use crate::catalog::{chunks, manifest};
use crate::cmd::args::*;
use crate::error::{Error, Result};
use crate::importmap::page;
use crate::outcome;
use crate::output::{self, count};
use crate::remote::RemoteArgs;
use crate::spec::PackageVersion;
use crate::units::{flag_size, human_size};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Publish a directory or a tar archive as PKG@VERSION, in one atomic
/// transaction.
///
/// SOURCE is a directory, a .tar or .tgz/.tar.gz file (told by its first
/// bytes, whatever its name), or `-` for either kind of archive on stdin.
/// As npm reads a tarball, an archive's top folder (`package/`, `react/`,
/// whatever its name) is stripped from every entry. Without
/// PKG@VERSION, the `name` and `version` of the package.json at SOURCE's
/// root are used. Every file is hashed (sha256); content the catalog
/// already holds is reused, new content is gzipped on all cores and kept
/// raw when gzip saves under 5%. Links are never followed (each is
/// reported); `.git/` and `.DS_Store` are always left out, and so are
/// catalogs: the one written to (with its -wal, -shm and -journal files,
/// under any name) and any other ccc catalog, each reported. An archive
/// entry named with `..`, an absolute path, a NUL byte or non-UTF-8 fails
/// the publish. A published version is immutable: publishing it again
/// fails unless --force.
///
/// Without --tag, `latest` moves to the version only when it is a release
/// newer than every other release of the package; --tag TAG points TAG at
/// it instead and leaves `latest` where it was (--tag latest moves
/// `latest` to it, whatever the version).
#[derive(Debug, Args)]
pub struct PublishArgs {
    /// Package and version, like `app@1.4.0` or `@scope/app@2.0.0-rc.1`
    /// (optional: package.json names them), then the directory or archive
    /// to publish (`-`: an archive on stdin).
    #[arg(value_name = "[PKG@VERSION] SOURCE", num_args = 1..=2, required = true)]
    pub(crate) args: Vec<PathBuf>,

    /// Leave out paths matching GLOB (relative to SOURCE's root; `*` crosses `/`).
    /// May be repeated. A matching directory is left out whole.
    #[arg(long, value_name = "GLOB", value_parser = parse_glob)]
    pub(crate) exclude: Vec<String>,

    /// Gzip level, 1 (fastest) to 9 (smallest).
    #[arg(long, default_value_t = GzipLevel::DEFAULT, value_parser = parse_level)]
    pub(crate) level: GzipLevel,

    /// Brotli quality, 1 (fastest) to 11 (smallest); 0 stores no brotli.
    /// A brotli stream is kept beside the gzip one when it is at least 5%
    /// smaller, and sent to clients that accept `br`. `ccc serve` (in the
    /// background) and `ccc recompress` bring streams up to 11 afterwards;
    /// files published at 0 are left without.
    #[arg(long, value_name = "N", default_value_t = BrotliQuality::DEFAULT, value_parser = parse_brotli_quality)]
    pub(crate) brotli_quality: BrotliQuality,

    /// Replace the version if it exists, atomically (its dist-tags stay
    /// on it).
    #[arg(long)]
    pub(crate) force: bool,

    /// Point the dist-tag TAG (`next`, `beta`, or `latest`) at the version.
    #[arg(long, value_name = "TAG", value_parser = parse_tag)]
    pub(crate) tag: Option<String>,
    #[command(flatten)]
    pub(crate) purge: PurgeArgs,

    /// Do everything except commit, and report what would be stored.
    #[arg(long)]
    pub(crate) dry_run: bool,

    /// Refuse files larger than SIZE.
    #[arg(long, value_name = "SIZE", default_value = flag_size(publish::DEFAULT_MAX_FILE_SIZE), value_parser = parse_size)]
    pub(crate) max_file_size: u64,

    /// Store files of SIZE or more as they are, in 64 KiB chunks that
    /// publish, serve, cat and export read one at a time, instead of
    /// compressed whole: memory never holds such a file.
    #[arg(long, value_name = "SIZE", default_value = flag_size(chunks::CHUNKED_FROM), value_parser = parse_chunked_from)]
    pub(crate) chunked_from: u64,

    /// Refuse the version, publishing nothing, when a reference of its
    /// files is missing, matches a file only under another case, or
    /// leaves it (what `ccc check` reports).
    #[arg(long, conflicts_with = "no_check")]
    pub(crate) strict: bool,

    /// Do not read the references of scripts, stylesheets and pages.
    #[arg(long)]
    pub(crate) no_check: bool,

    /// Write the version's import map (the one `ccc importmap` prints)
    /// into each of its HTML pages that load modules, inline before the
    /// first `<script type="module">` or `<link rel="modulepreload">`,
    /// inside the publish: the version is never served with another map.
    /// A page with an import map of its own refuses the version; a
    /// specifier the map cannot resolve is a warning, and with --strict
    /// refuses it too.
    #[arg(long)]
    pub(crate) importmap: bool,

    /// With --importmap: pin every module the map can reach to its bytes
    /// (`integrity`, as `ccc importmap --integrity`).
    #[arg(long, requires = "importmap")]
    pub(crate) integrity: bool,

    /// With --importmap: where the map's URLs start, like
    /// https://cdn.example.com [default: none, so URLs are root-relative
    /// (/assets/...) for pages served by the same ccc].
    #[arg(long, value_name = "URL", value_parser = parse_base, requires = "importmap")]
    pub(crate) base: Option<crate::importmap::Base>,

    /// Make no deltas. By default each script, stylesheet, JSON and wasm
    /// file is also coded against the same file (or hashed-name family) in
    /// the newest earlier version and the one `latest` named (dcb and
    /// dcz, RFC 9842), kept where clearly smaller than its brotli stream:
    /// a browser holding that version downloads only the change.
    #[arg(long)]
    pub(crate) no_deltas: bool,

    /// Refuse an archive whose tar stream, decompressed, is larger than
    /// SIZE.
    #[arg(long, value_name = "SIZE", default_value = flag_size(archive::DEFAULT_MAX_UNPACKED_SIZE), value_parser = parse_size)]
    pub(crate) max_unpacked_size: u64,

    /// Compression threads, at least 1 [default: one per core].
    #[arg(long, short = 'j', value_name = "N", value_parser = at_least_one)]
    pub(crate) jobs: Option<usize>,

    /// Give up after waiting DURATION for another ccc's lock on the
    /// catalog [default: wait as long as it takes, saying so after a
    /// second].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub(crate) wait: Option<std::time::Duration>,

    /// Refuse to create the catalog when --db names none (or an empty
    /// file), instead of creating it: for scripts and servers, where a
    /// missing catalog is a mistake to stop at, not a first publish.
    #[arg(
        long,
        env = "CCC_NO_CREATE",
        value_parser = clap::builder::BoolishValueParser::new(),
        action = clap::ArgAction::SetTrue
    )]
    pub(crate) no_create: bool,

    /// Print no progress and no summary.
    #[arg(long, short)]
    pub(crate) quiet: bool,

    /// Print the summary as JSON.
    #[arg(long)]
    pub(crate) json: bool,

    /// With --to, the archive is sent to the server, which publishes it
    /// with its own settings (--level, --brotli-quality and the size
    /// limits are the server's); --force, --tag, --strict, --no-check and
    /// --dry-run are sent with it.
    #[command(flatten)]
    pub(crate) remote: RemoteArgs,
}

impl PublishArgs {
    /// The `PKG@VERSION` given before SOURCE, if any.
    pub(crate) fn target(&self) -> Result<Option<PackageVersion>, String> {
        let [target, _] = self.args.as_slice() else {
            return Ok(None);
        };
        let input = target.to_string_lossy();
        PackageVersion::parse(&input).map(Some).map_err(|e| {
            format!(
                "invalid value '{input}' for '[PKG@VERSION]': {}",
                spec_error(e)
            )
        })
    }

    /// What to publish: a directory, an archive, or `-` for stdin.
    pub(crate) fn source(&self) -> &std::path::Path {
        self.args
            .last()
            .map_or(std::path::Path::new("-"), |p| p.as_path())
    }
}

impl CheckArgs for PublishArgs {
    const COMMAND: &str = "publish";

    fn check(&self) -> Result<(), String> {
        // `ccc publish app@1.0.0` forgot the source.
        if let [only] = self.args.as_slice()
            && !only.exists()
            && PackageVersion::parse(&only.to_string_lossy()).is_ok()
        {
            return Err(format!(
                "the SOURCE to publish is missing after '{}': a directory, a .tgz or .tar, \
                 or `-` for stdin",
                only.display()
            ));
        }
        // `ccc publish dist app@1.0.0`: the source came first.
        if let [first, second] = self.args.as_slice()
            && first.exists()
            && !second.exists()
            && PackageVersion::parse(&first.to_string_lossy()).is_err()
            && PackageVersion::parse(&second.to_string_lossy()).is_ok()
        {
            return Err(format!(
                "'{}' is a package version and '{}' a source: arguments swapped? \
                 usage: ccc publish PKG@VERSION SOURCE",
                second.display(),
                first.display()
            ));
        }
        if self.remote.to.is_some() && self.importmap {
            return Err(
                "--importmap writes the map during a publish into this machine's catalog; \
                 with --to, the server publishes, so publish there without it, or write the \
                 map into the pages before sending them (`ccc importmap`)"
                    .into(),
            );
        }
        if self.remote.to.is_some() && !self.purge.caches.is_empty() {
            return Err(
                "--purge purges from this machine after a local publish; with --to, purge \
                 from the server's side"
                    .into(),
            );
        }
        if !self.purge.caches.is_empty() && !self.force {
            return Err(
                "--purge purges the files --force replaces; a version published for the \
                 first time has nothing in any cache"
                    .into(),
            );
        }
        self.target().map(|_| ())
    }
}

/// What a publish reads.
enum Source {
    Dir(PathBuf),
    /// A file, or anything else that is not a directory (a pipe from
    /// `<(...)`), opened: its first bytes say whether it is an archive.
    Archive(PathBuf, std::fs::File),
    Stdin,
}

impl Source {
    fn of(arg: &Path) -> Result<Source> {
        if arg == Path::new("-") {
            return Ok(Source::Stdin);
        }
        match std::fs::metadata(arg) {
            Ok(meta) if meta.is_dir() => Ok(Source::Dir(arg.to_path_buf())),
            Ok(_) => {
                let file = std::fs::File::open(arg).map_err(|e| Error::io(arg, e))?;
                Ok(Source::Archive(arg.to_path_buf(), file))
            }
            // Worded as `ccc check` words it.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Err(Error::bad_input(arg, "no such folder or archive"))
            }
            Err(e) => Err(Error::io(arg, e)),
        }
    }
}

pub(crate) fn run(db: &Path, Checked(args): Checked<PublishArgs>) -> Result<ExitCode> {
    // Checked while parsing: an error here is a bug.
    let identity: Option<Identity> = args
        .target()
        .map_err(Error::Internal)?
        .map(|t| (t.package, t.version));
    let source = Source::of(args.source())?;
    let quiet = args.quiet || args.json;
    if matches!(source, Source::Stdin) && std::io::stdin().is_terminal() {
        return Err(Error::Usage(
            "`-` reads an archive from stdin, which is a terminal; pipe one in, \
             like `tar -cz -C dist . | ccc publish app@1.0.0 -`"
                .into(),
        ));
    }
    if args.remote.to.is_some() {
        return to_server(db, &args, identity, source);
    }
    // Before any work: a script's missing catalog is a mistake, not a
    // first publish.
    if args.no_create && crate::catalog::is_missing_or_empty(db) {
        return Err(Error::WontCreate(absolute(db)));
    }
    let bar = Bar::new(output::progress_target(quiet));
    // A directory's walk comes first, so that bad input fails before the
    // catalog is opened; an archive is checked as it is read. The catalog's
    // files are known before the walk, so that it is never part of the tree.
    let plan = match &source {
        Source::Dir(dir) => {
            let identity = match &identity {
                Some(identity) => identity.clone(),
                None => manifest::of_dir(dir).inspect_err(|_| bar.clear())?,
            };
            let catalog_files = CatalogFiles::of(db);
            let plan =
                publish::plan_dir(dir, &args.exclude, args.max_file_size, catalog_files, &bar);
            let plan = plan.inspect_err(|_| bar.clear())?;
            bar.scan_done(plan.files.len() as u64);
            Some((identity, plan))
        }
        _ => None,
    };

    // The version --purge purges, known before anything is written.
    let purged_identity = match (&args.purge.caches[..], &plan, &identity) {
        ([], ..) => None,
        (_, Some((identity, _)), _) | (_, None, Some(identity)) => Some(identity.clone()),
        (_, None, None) => {
            bar.clear();
            return Err(Error::Usage(
                "--purge needs PKG@VERSION before an archive: the version to purge must be \
                 known before the archive is read"
                    .into(),
            ));
        }
    };
    // An empty file is no catalog yet (see `Catalog::open`): made as where
    // there is none, and removed again if the publish fails.
    // Another ccc's lock is waited out, however long, unless --wait says:
    // giving up would throw the work away.
    crate::catalog::wait_for_locks(args.wait);
    let creating = crate::catalog::is_missing_or_empty(db);
    // A second Ctrl-C exits at once: it removes the catalog being created.
    let _discard = (creating && !args.dry_run).then(|| crate::interrupt::discard_on_exit(db));
    let opened = if args.dry_run && creating {
        Catalog::in_memory()
    } else {
        Catalog::open(db, Access::Create)
    };
    let mut catalog = match opened.and_then(|mut c| c.stop_on_interrupt().map(|()| c)) {
        Ok(catalog) => catalog,
        Err(e) => {
            bar.clear();
            // Creating the catalog failed or was interrupted: leave no file.
            if creating && !args.dry_run {
                remove_catalog_files(db);
            }
            return Err(e);
        }
    };
    let options = Options {
        level: args.level,
        brotli_quality: args.brotli_quality,
        force: args.force,
        dry_run: args.dry_run,
        jobs: args.jobs.unwrap_or(0),
        max_file_size: args.max_file_size,
        chunked_from: args.chunked_from,
        check: !args.no_check,
        strict: args.strict,
        tag: args.tag.clone(),
        manifest_must_agree: false,
        audit: None,
        deltas: !args.no_deltas,
        rewrite: None,
    };
    // --importmap: the map goes into the pages inside the publish; what
    // was written is kept here for the summary.
    let map_written: Arc<Mutex<Option<page::Written>>> = Arc::default();
    let options = match args.importmap {
        false => options,
        true => {
            let map_options = crate::importmap::Options {
                base: args.base.clone().unwrap_or_default(),
                integrity: args.integrity,
            };
            let (strict, kept) = (args.strict, Arc::clone(&map_written));
            let rewrite = move |catalog: &Catalog, version: &VersionRow| {
                let (pages, written) =
                    page::write_into_pages(catalog, version, &map_options, strict)?;
                if let Ok(mut kept) = kept.lock() {
                    *kept = Some(written);
                }
                Ok(pages)
            };
            Options {
                rewrite: Some(publish::Rewrite(Arc::new(rewrite))),
                ..options
            }
        }
    };
    let warn = |skipped: &[crate::catalog::rows::Skipped]| {
        for skipped in skipped.iter().filter(|_| !quiet) {
            bar.bar
                .suspend(|| eprintln!("warning: skipped {}: {}", skipped.path, skipped.reason));
        }
    };
    // --purge: the files of the version about to be replaced, listed
    // while they are still in the catalog.
    let replaced = match purged_identity {
        Some(identity) => {
            let files = version_files(&catalog, &identity)?;
            Some((identity, files))
        }
        None => None,
    };
    let rules = Rules {
        excludes: args.exclude.clone(),
        max_file_size: args.max_file_size,
        chunked_from: args.chunked_from,
        max_unpacked_size: args.max_unpacked_size,
        want_identity: identity.is_none(),
    };
    let result = match (plan, source) {
        (Some(((package, version), plan)), _) => {
            warn(&plan.skipped);
            publish::publish(
                &mut catalog,
                &package,
                &version,
                plan.files,
                plan.skipped,
                &options,
                &bar,
            )
        }
        (None, source) => {
            let (name, input): (PathBuf, Box<dyn std::io::Read + Send>) = match source {
                Source::Archive(path, file) => (path, Box::new(file)),
                // Named as it was given, so that an error reads `- (stdin): ...`.
                _ => (PathBuf::from("- (stdin)"), Box::new(std::io::stdin())),
            };
            let stream =
                Box::new(move |sink: &publish::Sink<'_>| archive::read(&name, input, &rules, sink));
            let result = publish::publish_stream(&mut catalog, identity, stream, &options, &bar);
            if let Ok(report) = &result {
                warn(&report.skipped);
            }
            result
        }
    };
    bar.clear();
    let mut report = match result {
        Ok(report) => report,
        Err(e) => {
            // A first publish that failed leaves no empty catalog behind.
            if creating && catalog.is_file() {
                drop(catalog);
                remove_catalog_files(db);
            }
            return Err(e);
        }
    };
    if let Some(checked) = &mut report.references {
        crate::importmap::commonjs::note_commonjs_entry(&report.package, checked);
    }
    // Committed: the version is published whatever comes next, so Ctrl-C
    // no longer cuts the reads that follow short (it still ends the
    // closing checkpoint, see `catalog`).
    catalog
        .conn_mut()
        .progress_handler(0, None::<fn() -> bool>)
        .at(db)?;
    // A replaced version's files, old and new, leave the caches.
    let (purged, outcome) = match replaced {
        Some(((package, version), mut files)) if report.replaced => {
            files.extend(version_files(
                &catalog,
                &(package.clone(), version.clone()),
            )?);
            files.sort_unstable();
            files.dedup();
            super::purge_caches(
                &args.purge,
                report.dry_run,
                [(package.as_str(), version.to_string(), files.as_slice())],
            )
        }
        _ => (None, Ok(())),
    };
    let map_written = map_written.lock().ok().and_then(|mut kept| kept.take());
    // Said even with --quiet: each is a likely mistake (--json has them).
    if !args.json {
        for warning in &report.warnings {
            eprintln!("warning: {}", warning_text(warning, &report, args.source()));
        }
        for unresolved in map_written.iter().flat_map(|w| &w.generated.unresolved) {
            eprintln!("warning: unresolved: {unresolved} (left out of the import map)");
        }
    }
    // Never silently: a catalog deleted by mistake is not replaced by a
    // new one without a word (`--no-create` refuses instead).
    if creating && !report.dry_run && !args.quiet {
        eprintln!("created the catalog {}", absolute(db).display());
    }
    if args.json {
        output::print_json(&Published {
            report: &report,
            purged: purged.as_ref(),
            importmap: map_written.as_ref(),
        })?;
    } else if !args.quiet {
        output::print(outcome::published(&report))?;
        if let Some(written) = &map_written {
            output::print(map_summary(written))?;
        }
        if let Some(purged) = &purged {
            super::print_purged(purged)?;
        }
    }
    outcome.map(|()| ExitCode::SUCCESS)
}

/// `path` made absolute (as it is when it cannot be), for messages that
/// must say which file they mean whatever the working directory.
fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// `publish --json`: the report, and what --purge purged.
#[derive(serde::Serialize)]
struct Published<'a> {
    #[serde(flatten)]
    report: &'a publish::Report,
    #[serde(skip_serializing_if = "Option::is_none")]
    purged: Option<&'a crate::purge::Purged>,
    /// With --importmap: the pages the map went into, and the map.
    #[serde(skip_serializing_if = "Option::is_none")]
    importmap: Option<&'a page::Written>,
}

/// The line a summary gives `--importmap`: which pages got the map.
fn map_summary(written: &page::Written) -> String {
    let pinned = count(written.generated.dependencies.len() as u64, "other version");
    match written.pages.as_slice() {
        [] => {
            format!("import map: no page loads modules, none written ({pinned} pinned by the map)")
        }
        pages => format!(
            "import map: written into {} ({pinned} pinned)",
            pages.join(", ")
        ),
    }
}

/// The paths of `package@version`'s files; none when it does not exist.
fn version_files(catalog: &Catalog, (package, version): &Identity) -> Result<Vec<String>> {
    let Some(row) = catalog
        .versions(package)?
        .into_iter()
        .find(|v| v.version == *version)
    else {
        return Ok(Vec::new());
    };
    Ok(catalog
        .files(row.id, crate::catalog::query::Page::ALL)?
        .into_iter()
        .map(|f| f.path)
        .collect())
}

/// A [`publish::Warning`] in words, for the version `report` describes,
/// published from `source`.
fn warning_text(warning: &publish::Warning, report: &publish::Report, source: &Path) -> String {
    warning_words(warning, &report.package, &report.version, source)
}

/// [`warning_text`] for `package@version`.
fn warning_words(
    warning: &publish::Warning,
    package: &str,
    published: &str,
    source: &Path,
) -> String {
    let spec = format!("{package}@{published}");
    match warning {
        publish::Warning::NodeModules {
            node_modules_file_count,
            file_count,
        } => {
            // A build folder beside node_modules/ is what was meant.
            let build = ["dist", "build", "out"]
                .iter()
                .map(|name| source.join(name))
                .find(|dir| source.is_dir() && dir.is_dir());
            let meant = match build {
                Some(dir) => format!("was `ccc publish {spec} {}` meant?", dir.display()),
                None => "was the build output (dist/) meant?".to_string(),
            };
            format!(
                "{node_modules_file_count} of {} published as {spec} are under node_modules/: \
                 {meant} (--exclude node_modules leaves them out)",
                count(*file_count, "file"),
            )
        }
        publish::Warning::CaseClash { existing } => format!(
            "{} is a new package beside the catalog's {existing}, whose name differs only in \
             case: names and URLs are case-sensitive, so these are two packages (`ccc rm {} \
             --all` removes the new one; publish as {existing}@{} if that was meant)",
            package, package, published
        ),
        publish::Warning::ManifestDisagrees { name, version } => {
            let said = format!(
                "{}@{}",
                name.as_deref().unwrap_or(package),
                version.as_deref().unwrap_or(published)
            );
            format!(
                "published as {spec}, but the package.json in {} says {said}: is the \
                 PKG@VERSION given right? (without it, publish takes package.json's)",
                source.display()
            )
        }
    }
}

fn remove_catalog_files(db: &Path) {
    for suffix in ["", "-wal", "-shm"] {
        let mut path = db.as_os_str().to_owned();
        path.push(suffix);
        let _ = std::fs::remove_file(path);
    }
}

/// `publish --to URL`: the version goes to a server's write API
/// (`crate::remote`) as a gzipped tar: an archive as it is, stdin spooled
/// to a temporary file first (for its length and its package.json), a
/// folder packed on the fly by a thread (the walk and its rules as a
/// local publish's; gzip level 1, as the server compresses each file
/// anew). The bar counts the bytes sent, or a folder's files packed. The
/// server's summary is printed as a local publish prints its own, and its
/// refusals exit 1 as a local publish's errors do.
fn to_server(
    db: &Path,
    args: &PublishArgs,
    identity: Option<Identity>,
    source: Source,
) -> Result<ExitCode> {
    use crate::remote::{Remote, TOKEN_ENV, Upload};
    let remote = Remote::new(&args.remote, std::env::var(TOKEN_ENV).ok())?;
    let quiet = args.quiet || args.json;
    let mut query: Vec<(&str, String)> = Vec::new();
    for (set, key) in [
        (args.force, "force"),
        (args.strict, "strict"),
        (args.no_check, "no_check"),
        (args.dry_run, "dry_run"),
    ] {
        if set {
            query.push((key, "1".into()));
        }
    }
    if let Some(tag) = &args.tag {
        query.push(("tag", tag.clone()));
    }
    let reply = match source {
        Source::Dir(dir) => {
            let (package, version) = match identity {
                Some(identity) => identity,
                None => manifest::of_dir(&dir)?,
            };
            let scan = Bar::new(output::progress_target(quiet));
            let plan = publish::plan_dir(
                &dir,
                &args.exclude,
                args.max_file_size,
                CatalogFiles::of(db),
                &scan,
            );
            scan.clear();
            let plan = plan?;
            for skipped in plan.skipped.iter().filter(|_| !quiet) {
                eprintln!("warning: skipped {}: {}", skipped.path, skipped.reason);
            }
            let total = plan.files.iter().map(|f| f.size).sum();
            let bar = output::byte_bar(total, "Uploading", quiet);
            let (reader, writer) = std::io::pipe().map_err(|e| Error::io(&dir, e))?;
            let reply = std::thread::scope(|scope| {
                let packer = scope.spawn(|| pack(&plan.files, writer, &bar));
                let reply = remote.publish(
                    &package,
                    &version,
                    &query,
                    Upload {
                        reader: Box::new(reader),
                        length: None,
                    },
                );
                let packed = packer.join().unwrap_or_else(|_| {
                    Err(Error::Internal(
                        "the thread packing the folder failed".into(),
                    ))
                });
                // A refusal cuts the packing short: the refusal is the news.
                match (reply, packed) {
                    (Ok(reply), Ok(())) => Ok(reply),
                    (Err(e), _) | (Ok(_), Err(e)) => Err(e),
                }
            });
            show_sent(&bar);
            reply?
        }
        Source::Archive(path, file) => {
            let bar_name = path.clone();
            send_archive(&remote, &query, identity, &path, file, quiet, &bar_name)?
        }
        Source::Stdin => {
            let name = PathBuf::from("- (stdin)");
            let mut spool = tempfile::tempfile().map_err(|e| Error::io(&name, e))?;
            std::io::copy(&mut std::io::stdin().lock(), &mut spool)
                .map_err(|e| Error::io(&name, e))?;
            send_archive(&remote, &query, identity, &name, spool, quiet, &name)?
        }
    };
    print_reply(args, &reply)
}

/// Sends the archive `file` (called `name`), naming it `identity` or what
/// its package.json says.
fn send_archive(
    remote: &crate::remote::Remote,
    query: &[(&str, String)],
    identity: Option<Identity>,
    name: &Path,
    mut file: std::fs::File,
    quiet: bool,
    shown: &Path,
) -> Result<crate::remote::Reply> {
    use std::io::{Seek, SeekFrom};
    let rewind = |file: &mut std::fs::File| {
        file.seek(SeekFrom::Start(0))
            .map(|_| ())
            .map_err(|e| Error::io(shown, e))
    };
    rewind(&mut file)?;
    let (package, version) = match identity {
        Some(identity) => identity,
        None => {
            let named = archive::identity(name, &mut file)?;
            rewind(&mut file)?;
            named
        }
    };
    let length = file.metadata().map_err(|e| Error::io(shown, e))?.len();
    let bar = output::byte_bar(length, "Uploading", quiet);
    let reply = remote.publish(
        &package,
        &version,
        query,
        crate::remote::Upload {
            reader: Box::new(Counted {
                inner: file,
                bar: &bar,
            }),
            length: Some(length),
        },
    );
    show_sent(&bar);
    reply
}

/// Draws an upload's bar where it ended, then takes it away for the
/// summary: a fast upload would otherwise never be drawn past the first
/// of its draws, which the terminal gets at most twenty times a second.
fn show_sent(bar: &indicatif::ProgressBar) {
    bar.finish();
    bar.finish_and_clear();
}

/// Prints a server's answer to a publish as a local publish prints its
/// report: the summary, or `--json`'s report, and the warnings.
fn print_reply(args: &PublishArgs, reply: &crate::remote::Reply) -> Result<ExitCode> {
    let result = reply.result.clone().unwrap_or_default();
    if args.json {
        output::print_json(&result)?;
        return Ok(ExitCode::SUCCESS);
    }
    let warnings: Vec<publish::Warning> =
        serde_json::from_value(result["warnings"].clone()).unwrap_or_default();
    let package = result["package"].as_str().unwrap_or_default();
    let version = result["version"].as_str().unwrap_or_default();
    for warning in &warnings {
        eprintln!(
            "warning: {}",
            warning_words(warning, package, version, args.source())
        );
    }
    if !args.quiet
        && let Some(summary) = &reply.summary
    {
        output::print(summary)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes `files` as a gzipped tar into `out`, each under `./`, so that
/// the server strips nothing and names no folder.
fn pack(files: &[publish::FileEntry], out: impl std::io::Write, bar: &ProgressBar) -> Result<()> {
    let gz = flate2::write::GzEncoder::new(out, flate2::Compression::new(1));
    let mut tar = tar::Builder::new(gz);
    let failed = |path: &Path, e: std::io::Error| match crate::interrupt::check() {
        Err(stop) => stop,
        Ok(()) => Error::io(path, e),
    };
    for file in files {
        let publish::Source::Disk(path) = &file.source else {
            return Err(Error::Internal("a folder's file not on disk".into()));
        };
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(tar::EntryType::Regular);
        header.set_size(file.size);
        header.set_mode(0o644);
        header.set_mtime(0);
        let opened = std::fs::File::open(path).map_err(|e| failed(path, e))?;
        let reader = Exact {
            inner: Counted { inner: opened, bar },
            left: file.size,
        };
        tar.append_data(&mut header, format!("./{}", file.path), reader)
            .map_err(|e| failed(path, e))?;
    }
    let gz = tar.into_inner().map_err(|e| failed(Path::new("-"), e))?;
    gz.finish().map_err(|e| failed(Path::new("-"), e))?;
    Ok(())
}

/// A reader that moves a bar by what it reads, and stops on Ctrl-C.
struct Counted<'a, R> {
    inner: R,
    bar: &'a ProgressBar,
}

impl<R: std::io::Read> std::io::Read for Counted<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if crate::interrupt::requested().is_some() {
            return Err(std::io::Error::other("interrupted"));
        }
        let n = self.inner.read(buf)?;
        self.bar.inc(n as u64);
        Ok(n)
    }
}

/// Exactly `left` bytes of `inner`: a file that shrank since the walk is
/// an error, not a short tar entry, and one that grew is cut where the
/// walk saw its end.
struct Exact<R> {
    inner: R,
    left: u64,
}

impl<R: std::io::Read> std::io::Read for Exact<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            return Ok(0);
        }
        let want = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        if n == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "the file shrank while it was sent",
            ));
        }
        self.left -= n as u64;
        Ok(n)
    }
}

/// The publish progress drawn with indicatif: a spinner counting files
/// while the tree is walked, then, once the total is known, a bar of bytes
/// (and their rate) with files done out of the total in the message.
struct Bar {
    bar: ProgressBar,
    files_done: AtomicU64,
    files_total: AtomicU64,
}

impl Bar {
    fn new(target: ProgressDrawTarget) -> Bar {
        let bar = ProgressBar::with_draw_target(None, target);
        bar.set_style(output::spinner_style());
        bar.set_prefix("Scanning");
        if !bar.is_hidden() {
            bar.enable_steady_tick(Duration::from_millis(120));
        }
        Bar {
            bar,
            files_done: AtomicU64::new(0),
            files_total: AtomicU64::new(0),
        }
    }

    /// The walk is over; the catalog's write lock may take a while.
    fn scan_done(&self, files: u64) {
        self.bar.set_message(format!(
            "{} found, opening the catalog",
            count(files, "file")
        ));
    }

    /// Takes the spinner or bar off the terminal.
    fn clear(&self) {
        self.bar.finish_and_clear();
    }
}

impl Progress for Bar {
    fn scanned(&self, files: u64, bytes: u64) {
        self.bar
            .set_message(format!("{}, {}", count(files, "file"), human_size(bytes)));
    }
    fn start(&self, files: u64, bytes: u64) {
        self.files_total.store(files, Ordering::Relaxed);
        self.bar.set_prefix("Publishing");
        // Rate and elapsed time count from here, not from the walk.
        self.bar.reset_elapsed();
        // An archive's totals are known only at its end (0 here): the
        // spinner stays, counting files and bytes.
        if files == 0 {
            self.bar
                .set_message(format!("{}, {}", count(0, "file"), human_size(0)));
            return;
        }
        self.bar.set_length(bytes);
        self.bar.set_position(0);
        self.bar.set_style(output::byte_bar_style());
        self.bar.set_message(format!("0/{}", count(files, "file")));
        self.bar.reset_eta();
    }
    fn advance(&self, bytes: u64) {
        let done = self.files_done.fetch_add(1, Ordering::Relaxed) + 1;
        let total = self.files_total.load(Ordering::Relaxed);
        self.bar.inc(bytes);
        self.bar.set_message(match total {
            0 => format!(
                "{}, {}",
                count(done, "file"),
                human_size(self.bar.position())
            ),
            _ => format!("{done}/{}", count(total, "file")),
        });
    }
    fn finish(&self) {
        self.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A one-line terminal: what was drawn since the line was last
    /// cleared.
    #[derive(Debug, Default, Clone)]
    struct Screen(Arc<Mutex<String>>);

    impl Screen {
        fn text(&self) -> String {
            self.0.lock().unwrap().trim_end().to_string()
        }
    }

    impl indicatif::TermLike for Screen {
        fn width(&self) -> u16 {
            100
        }
        fn move_cursor_up(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_down(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_right(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_left(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn write_line(&self, s: &str) -> std::io::Result<()> {
            self.write_str(s)
        }
        fn write_str(&self, s: &str) -> std::io::Result<()> {
            self.0.lock().unwrap().push_str(s);
            Ok(())
        }
        fn clear_line(&self) -> std::io::Result<()> {
            self.0.lock().unwrap().clear();
            Ok(())
        }
        fn flush(&self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn the_bar_appears_once_the_total_is_known() {
        let screen = Screen::default();
        let bar = Bar::new(ProgressDrawTarget::term_like(Box::new(screen.clone())));
        let walk = |files: u64, bytes: u64| {
            bar.scanned(files, bytes);
            bar.bar.force_draw();
            screen.text()
        };
        for (files, bytes) in [(1, 10), (2, 2048)] {
            let seen = walk(files, bytes);
            assert!(seen.contains("Scanning"), "{seen}");
            assert!(!seen.contains('['), "a bar while walking: {seen}");
            assert!(!seen.contains("0 B/0 B") && !seen.contains("0/0"), "{seen}");
        }
        assert!(
            screen.text().contains("2 files, 2.0 KiB"),
            "{}",
            screen.text()
        );
        assert!(walk(1, 10).contains("1 file, 10 B"), "{}", screen.text());

        bar.start(2, 2048);
        bar.bar.force_draw();
        let seen = screen.text();
        assert!(seen.contains("Publishing ["), "{seen}");
        assert!(
            seen.contains("0 B/2.00 KiB") && seen.contains("0/2 files"),
            "{seen}"
        );
        bar.advance(1024);
        bar.bar.force_draw();
        let seen = screen.text();
        assert!(
            seen.contains("1.00 KiB/2.00 KiB") && seen.contains("1/2 files"),
            "{seen}"
        );
    }
}
