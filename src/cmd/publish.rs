//! `ccc publish PKG@VERSION DIR`: plan the tree, publish it, print a summary.

use crate::catalog::publish::{self, CatalogFiles, Options, Progress};
use crate::catalog::{Access, Catalog};
use crate::cli::PublishArgs;
use crate::error::Result;
use crate::output;
use crate::units::{human_size, ratio};
use indicatif::ProgressBar;
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};

pub fn run(db: &Path, args: PublishArgs) -> Result<ExitCode> {
    let target = &args.target;
    // Known before the walk, so that the catalog is never part of the tree.
    let catalog_files = CatalogFiles::of(db);
    let plan = publish::plan_dir(&args.dir, &args.exclude, args.max_file_size, catalog_files)?;

    let creating = !db.exists();
    let opened = if args.dry_run && creating {
        Catalog::in_memory()
    } else {
        Catalog::open(db, Access::Create)
    };
    let mut catalog = match opened.and_then(|mut c| c.stop_on_interrupt().map(|()| c)) {
        Ok(catalog) => catalog,
        Err(e) => {
            // Creating the catalog failed or was interrupted: leave no file.
            if creating && !args.dry_run {
                remove_catalog_files(db);
            }
            return Err(e);
        }
    };
    let options = Options {
        level: args.level,
        force: args.force,
        dry_run: args.dry_run,
        jobs: args.jobs.unwrap_or(0),
        max_file_size: args.max_file_size,
    };
    let quiet = args.quiet || args.json;
    for skipped in &plan.skipped {
        if !quiet {
            eprintln!("warning: skipped {}: {}", skipped.path, skipped.reason);
        }
    }
    let bar = Bar {
        bar: output::byte_bar(0, "Publishing", quiet),
        files_done: AtomicU64::new(0),
        files_total: AtomicU64::new(0),
    };
    let result = publish::publish(
        &mut catalog,
        &target.package,
        &target.version,
        plan.files,
        plan.skipped,
        &options,
        &bar,
    );
    let report = match result {
        Ok(report) => report,
        Err(e) => {
            bar.bar.finish_and_clear();
            // A first publish that failed leaves no empty catalog behind.
            if creating && catalog.is_file() {
                drop(catalog);
                remove_catalog_files(db);
            }
            return Err(e);
        }
    };
    if args.json {
        output::print_json(&report)?;
    } else if !args.quiet {
        let verb = match (report.dry_run, report.replaced) {
            (true, _) => "Would publish",
            (false, true) => "Replaced",
            (false, false) => "Published",
        };
        output::print(format_args!(
            "{verb} {}@{}: {} files, {} raw -> {} stored ({}), {} new in the catalog\n  {} files ({}) were already stored; {} skipped; {:.2}s",
            report.package,
            report.version,
            report.files,
            human_size(report.raw_bytes),
            human_size(report.stored_bytes),
            ratio(report.stored_bytes, report.raw_bytes),
            human_size(report.new_bytes),
            report.dedup_files,
            human_size(report.dedup_bytes),
            report.skipped.len(),
            report.elapsed_ms as f64 / 1000.0,
        ))?;
    }
    Ok(ExitCode::SUCCESS)
}

fn remove_catalog_files(db: &Path) {
    for suffix in ["", "-wal", "-shm"] {
        let mut path = db.as_os_str().to_owned();
        path.push(suffix);
        let _ = std::fs::remove_file(path);
    }
}

/// The publish progress drawn with indicatif: bytes (and their rate) on
/// the bar, files done out of the total in the message.
struct Bar {
    bar: ProgressBar,
    files_done: AtomicU64,
    files_total: AtomicU64,
}

impl Progress for Bar {
    fn start(&self, files: u64, bytes: u64) {
        self.bar.set_length(bytes);
        self.files_total.store(files, Ordering::Relaxed);
        self.bar.set_message(format!("0/{files} files"));
    }
    fn advance(&self, bytes: u64) {
        let done = self.files_done.fetch_add(1, Ordering::Relaxed) + 1;
        let total = self.files_total.load(Ordering::Relaxed);
        self.bar.inc(bytes);
        self.bar.set_message(format!("{done}/{total} files"));
    }
    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
