//! `ccc follow REPLICA`: runs [`crate::follow::Follower`] rounds every
//! interval until SIGINT or SIGTERM, which end it with 0 as they end a
//! server. A failed round prints its error to stderr and the next try
//! waits twice as long, up to 64 intervals; a good round goes back to the
//! interval. A replica that cannot be read at the start (a directory in a
//! directory that does not exist, a bucket that answers with an error, no
//! credentials) ends it at once with exit 1, so a service manager shows
//! the mistake instead of a follower that retries forever; a replica
//! Litestream has not written to yet is waited for, and said so once.
//! What a follower killed mid-round left beside the catalog (a catalog
//! being made, downloads) is removed at the start, and said so.
use crate::cmd::args::*;
use crate::error::{Error, Result};
use crate::follow::source::{Source, folder_of};
use crate::follow::{Applied, Follower, Round};
use crate::output::{self, count};
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Keep the catalog a copy of a writer's, from its Litestream replica.
///
/// For a replica server: run `ccc serve` on --db and `ccc follow REPLICA`
/// beside it. Each round (every --interval) reads the replica's LTX files
/// newer than the copy and writes their pages into the catalog in one
/// SQLite transaction, so the server moves to the new state at once, and a
/// round costs the pages a change touched, not the catalog's size. Without
/// a catalog, or when the files after it are gone, the copy is taken from
/// Litestream's newest snapshot. After each round that leaves the copy at
/// the replica's newest, the transaction id is written to DB.follow,
/// whose age `ccc serve --max-lag` reports. A failed round changes
/// nothing; the next try waits twice as long (at most 64 intervals).
///
/// REPLICA is where Litestream replicates to: the directory of a `file`
/// replica (a path or file:// URL), or an `s3` replica, s3://BUCKET/PATH
/// (credentials from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or
/// Litestream's LITESTREAM_ACCESS_KEY_ID and LITESTREAM_SECRET_ACCESS_KEY;
/// the region from ?region= or AWS_REGION; another S3 service from
/// ?endpoint=URL or AWS_ENDPOINT_URL). A replica that cannot be read at
/// the start ends the command with exit 1.
#[derive(Debug, Args)]
pub struct FollowArgs {
    /// The replica: a directory (path or file:// URL) or s3://BUCKET/PATH.
    #[arg(value_name = "REPLICA")]
    pub(crate) replica: String,

    /// How often to look for new transactions.
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = parse_positive_duration)]
    pub(crate) interval: Duration,

    /// Bring the catalog up to date once and exit (0 when it is the
    /// replica's newest).
    #[arg(long)]
    pub(crate) once: bool,

    /// Print nothing but errors.
    #[arg(long, short)]
    pub(crate) quiet: bool,
}

/// The longest wait after failures, in intervals.
const MAX_BACKOFF: u32 = 64;

pub(crate) fn run(db: &Path, args: FollowArgs) -> Result<ExitCode> {
    let (replica, missing) = open_replica(&args.replica)?;
    let follower = Follower {
        replica,
        served: db.to_path_buf(),
    };
    // Said at once, naming it: a typo in the path would otherwise look
    // like a Litestream that has not written yet.
    if let (Some(path), false) = (&missing, args.quiet || args.once) {
        eprintln!(
            "ccc follow: {} does not exist yet; waiting for Litestream to create it \
             (is `litestream replicate` writing there?)",
            path.display()
        );
    }
    for leftover in follower.remove_leftovers()? {
        eprintln!(
            "ccc follow: removed {}, left by a follower that was stopped",
            leftover.display()
        );
    }
    let mut delay = args.interval;
    let mut said_waiting = missing.is_some();
    let mut first = true;
    loop {
        let started = Instant::now();
        let round = follower.round();
        let first_round = std::mem::replace(&mut first, false);
        match round {
            Ok(Round::Waiting) => {
                if args.once {
                    return Err(no_snapshot(&follower.replica));
                }
                if !said_waiting && !args.quiet {
                    eprintln!("ccc follow: {}; waiting", no_snapshot(&follower.replica));
                }
                said_waiting = true;
                delay = args.interval;
            }
            Ok(Round::Current { .. }) => delay = args.interval,
            Ok(Round::Applied(applied)) => {
                if !args.quiet {
                    output::print(describe(&follower, &applied, started.elapsed()))?;
                }
                delay = args.interval;
            }
            Err(e) if args.once || first_round => return Err(e),
            Err(e) => {
                delay = (delay * 2).min(args.interval * MAX_BACKOFF);
                eprintln!(
                    "ccc follow: {e}; next try in {}",
                    seconds(delay.as_secs_f64())
                );
            }
        }
        if args.once || !sleep_unless_stopped(delay) {
            return Ok(ExitCode::SUCCESS);
        }
    }
}

/// The replica `replica` names; a directory must be in one that exists.
/// With the path of a directory that does not exist yet.
fn open_replica(replica: &str) -> Result<(Source, Option<PathBuf>)> {
    let source = Source::parse(replica)?;
    let Source::Dir(path) = &source else {
        return Ok((source, None));
    };
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => Ok((source, None)),
        Ok(_) => Err(Error::BadInput {
            path: path.clone(),
            what: "not a directory: REPLICA is the directory of a Litestream file replica".into(),
        }),
        // Litestream makes the directory at its first sync: one that is
        // not there yet, in a directory that is, is waited for.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && folder_of(path).is_dir() => {
            let missing = path.clone();
            Ok((source, Some(missing)))
        }
        Err(source) => Err(Error::Io {
            path: path.clone(),
            source,
        }),
    }
}

fn no_snapshot(replica: &Source) -> Error {
    Error::BadInput {
        path: PathBuf::from(replica.describe()),
        what: "no snapshot to start from yet (is Litestream replicating to it?)".into(),
    }
}

/// One line per round that changed the catalog.
fn describe(follower: &Follower, applied: &Applied, took: Duration) -> String {
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let behind = now_ms.saturating_sub(applied.shipped_ms) as f64 / 1000.0;
    let how = if applied.created {
        format!("made {} from a snapshot", follower.served.display())
    } else if applied.from_snapshot {
        "started over from a snapshot".to_string()
    } else {
        format!("from transaction {:016x}", applied.from.unwrap_or_default())
    };
    format!(
        "transaction {:016x}: {how}, {} and {} in {}, {} after Litestream shipped it",
        applied.txid,
        count(applied.files as u64, "file"),
        count(applied.pages, "page"),
        seconds(took.as_secs_f64()),
        seconds(behind),
    )
}

fn seconds(s: f64) -> String {
    if s < 1.0 {
        format!("{:.0} ms", s * 1000.0)
    } else {
        format!("{s:.1} s")
    }
}

/// Sleeps `delay`, waking early on SIGINT or SIGTERM: false when one came.
fn sleep_unless_stopped(delay: Duration) -> bool {
    let until = Instant::now() + delay;
    loop {
        if crate::interrupt::requested().is_some() {
            return false;
        }
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return true;
        }
        std::thread::sleep(left.min(Duration::from_millis(100)));
    }
}
