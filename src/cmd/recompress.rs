//! `ccc recompress`: brings every blob's brotli stream up to the best
//! quality now, on every core (`catalog::recompress`), and says what
//! brotli clients are sent before and after. `ccc serve` does the same in
//! the background; this is for a catalog no server writes, or to finish
//! at once.
use crate::catalog::compression::BrotliQuality;
use crate::catalog::recompress::{self, Options, Recompressed};
use crate::catalog::{Access, Catalog};
use crate::cmd::args::*;
use crate::error::Result;
use crate::output::{self, count};
use crate::units::human_size;
use clap::Args;
use indicatif::ProgressBar;
use std::path::Path;
use std::process::ExitCode;

/// Recompress brotli streams at quality 11, as `ccc serve` does in the
/// background.
///
/// Publish keeps its brotli streams at a fast quality (5 by default), so
/// that a release commits in seconds; quality 11 makes them smaller still,
/// at many times the CPU. Every gzip-stored file below 11 is decoded,
/// checked against its sha256, compressed again and checked once more; the
/// new stream replaces the old where smaller, and is stored where it beats
/// gzip by 5%. Files published at brotli quality 0 are left alone.
/// Each batch is one short transaction, so publishing and serving go on
/// meanwhile, and a running `ccc serve` sends the new streams within a
/// second. A second run has nothing to do.
#[derive(Debug, Args)]
pub struct RecompressArgs {
    /// Compressing threads, at least 1 [default: one per core].
    #[arg(long, short = 'j', value_name = "N", value_parser = at_least_one)]
    pub(crate) jobs: Option<usize>,

    /// Print no progress.
    #[arg(long, short)]
    pub(crate) quiet: bool,

    /// Print what was done as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

pub(crate) fn run(db: &Path, args: RecompressArgs) -> Result<ExitCode> {
    let catalog = Catalog::open(db, Access::ReadWrite)?;
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()));
    let bar = ProgressBar::with_draw_target(None, output::progress_target(args.quiet || args.json));
    bar.set_style(output::spinner_style());
    bar.set_prefix("Brotli 11");
    bar.enable_steady_tick(std::time::Duration::from_millis(120));
    let progress = |done: u64, total: u64| bar.set_message(format!("{done}/{total} files"));
    let done = recompress::run(&catalog, Options::best(jobs), &|| true, &progress)?;
    bar.finish_and_clear();
    if args.json {
        output::print_json(&done)?;
    } else {
        output::print(summary(&done))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `12 files at brotli 11: 3 new streams, brotli clients get 1.0 MiB
/// instead of 1.2 MiB (-15.6%)`.
fn summary(done: &Recompressed) -> String {
    if done.blobs == 0 {
        return format!(
            "every file is at brotli {} already: nothing to do",
            BrotliQuality::BEST
        );
    }
    let saved = done.bytes_before.saturating_sub(done.bytes_after);
    format!(
        "{} at brotli {}: {}, brotli clients get {} instead of {} (-{:.1}%)",
        count(done.blobs, "file"),
        BrotliQuality::BEST,
        count(done.streams, "new stream"),
        human_size(done.bytes_after),
        human_size(done.bytes_before),
        saved as f64 * 100.0 / done.bytes_before.max(1) as f64
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_says_what_brotli_clients_get() {
        let done = Recompressed {
            blobs: 12,
            streams: 3,
            raw_bytes: 4 << 20,
            bytes_before: 1000,
            bytes_after: 844,
        };
        assert_eq!(
            summary(&done),
            "12 files at brotli 11: 3 new streams, brotli clients get 844 B instead of \
             1000 B (-15.6%)"
        );
        assert_eq!(
            summary(&Recompressed::default()),
            "every file is at brotli 11 already: nothing to do"
        );
    }
}
