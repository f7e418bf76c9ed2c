//! Making deltas: which earlier files each file of a version is coded
//! against ([`plan`]), and the coding of them all on every core
//! ([`make`]), inside the writing command's transaction. Publish runs both
//! for the version it writes, after its files are stored; `ccc deltas`
//! runs them for every version of a catalog ([`catch_up`]), for the
//! versions published before deltas existed or with `--no-deltas`.
//!
//! # Predecessors
//!
//! A file's predecessors are the same file ([`crate::delta::family`]: the
//! same path, else the same family) in the [`DEPTH`] newest versions of
//! the package that come before it in semver order, and in the version
//! `latest` named before the publish: what a returning visitor's browser
//! most likely holds. A family may have several files in one version
//! (Vite writes an `index-*.js` per entry): up to [`FAMILY_CANDIDATES`]
//! of them, the nearest in size, are taken. Each dictionary is coded
//! against once, however many versions hold it; a file unchanged since a
//! predecessor gets a delta against its own bytes, a few dozen bytes that
//! spare a visitor the whole file under its new URL.
//!
//! Only files of a [`crate::delta::Kind`] stored gzip, within
//! [`crate::delta::DictionarySize`], take part, as targets and as
//! dictionaries.
//!
//! # What is kept
//!
//! Both codings are made ([`crate::delta::PUBLISH_LEVELS`]) and each is
//! kept when it is at most [`MAX_SHARE`] of what a client that accepts
//! brotli is sent today (the brotli stream, else the gzip one): clearly
//! smaller, and still smaller than a quality-11 brotli stream, which is
//! smaller than the quality-5 one publish makes (bench/PUBLISH.md,
//! "Brotli after publish", measures by how much).
//!
//! # Memory and order
//!
//! This thread reads each target and dictionary (decoded from its body,
//! checked against its sha256) and hands the pair to a worker; at most
//! one pair per worker, and one waiting, are held at once. The workers
//! hand back the deltas, which this thread inserts.

use super::deltas::{self, INSERT, Stored};
use super::digest::xxh3_digest;
use super::{Catalog, Encoding, SqliteResult};
use crate::delta::{self, DictionarySize, Levels};
use crate::error::{Error, Result};
use rusqlite::params;
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, mpsc};

/// How many of the newest earlier versions are predecessors: the one
/// before. Each more costs another coding of every changed file, for the
/// visitors who skipped a release (bench/DELTAS.md).
pub(crate) const DEPTH: usize = 1;

/// The most files of one family in a predecessor a file is coded against.
pub(crate) const FAMILY_CANDIDATES: usize = 2;

/// A delta is kept when it is at most this share of the stream a brotli
/// client gets today (module doc).
pub(crate) const MAX_SHARE: f64 = 0.8;

/// One file of a version as planning sees it.
#[derive(Debug, Clone)]
struct File {
    path: String,
    blob_id: i64,
    raw_size: u64,
    /// What a brotli client is sent: the brotli stream, else the gzip one.
    baseline: u64,
}

/// One delta to make: a target blob against a dictionary blob.
#[derive(Debug, Clone)]
pub(crate) struct Task {
    pub target: i64,
    pub dictionary: i64,
    /// Whether the target blob was in the catalog before this command
    /// (its new deltas are then recorded in `recoded`).
    pub existed: bool,
    /// The target's stream a brotli client is sent today.
    pub baseline: u64,
    /// Position of the predecessor version (0: the newest), for the
    /// report: a visitor holding the previous release.
    pub rank: usize,
    /// The target's path in the version, for the report.
    pub path: String,
    /// The smallest delta of the pair the catalog holds already, with
    /// both codings: nothing to make, counted in the report.
    pub made_before: Option<u64>,
}

/// What [`make`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub(crate) struct Made {
    /// Deltas stored (a pair may have a dcb and a dcz).
    pub delta_count: u64,
    /// Their bytes.
    pub delta_bytes: u64,
    /// Files of the version with a delta against the newest predecessor.
    pub file_count: u64,
    /// What those files cost a brotli client today, and the smaller of
    /// their deltas against the newest predecessor: what a visitor holding
    /// the previous release downloads instead.
    pub brotli_bytes: u64,
    pub smallest_delta_bytes: u64,
    /// The predecessor versions, newest first.
    pub against: Vec<String>,
}

/// The predecessors of `version_id`, `version` of `package`, newest
/// first (module doc); `latest_before` is the version row `latest` named
/// before the command.
pub(crate) fn predecessors(
    catalog: &Catalog,
    package: &str,
    version_id: i64,
    version: &semver::Version,
    latest_before: Option<i64>,
) -> Result<Vec<(i64, String)>> {
    let versions = catalog.versions(package)?;
    let mut out: Vec<(i64, String)> = versions
        .iter()
        .filter(|v| v.id != version_id && v.version.cmp_precedence(version).is_lt())
        .take(DEPTH)
        .map(|v| (v.id, v.version.to_string()))
        .collect();
    if let Some(latest) = latest_before
        && latest != version_id
        && !out.iter().any(|(id, _)| *id == latest)
        && let Some(v) = versions.iter().find(|v| v.id == latest)
    {
        out.push((v.id, v.version.to_string()));
    }
    Ok(out)
}

/// One version [`catch_up`] went through, and the deltas it made.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct CaughtUp {
    pub package: String,
    pub version: String,
    pub made: Made,
}

/// Makes the deltas `package`'s versions lack, oldest first, each version
/// in a transaction of its own (an interruption keeps the versions done):
/// every version against its predecessors ([`predecessors`]; `latest`
/// counts when it precedes the version), pairs the catalog holds already
/// not made again. `progress(version, done, total)` hears of each pair.
pub(crate) fn catch_up(
    catalog: &Catalog,
    package: &str,
    jobs: usize,
    progress: &dyn Fn(&str, u64, u64),
) -> Result<Vec<CaughtUp>> {
    let latest = catalog
        .resolve(package, &crate::spec::Selector::Latest)
        .ok();
    let mut versions = catalog.versions(package)?;
    versions.sort_by(|a, b| a.version.cmp_precedence(&b.version));
    let mut out = Vec::new();
    for v in &versions {
        crate::interrupt::check()?;
        let latest = latest
            .as_ref()
            .filter(|l| l.version.cmp_precedence(&v.version).is_lt())
            .map(|l| l.id);
        let against = predecessors(catalog, package, v.id, &v.version, latest)?;
        if against.is_empty() {
            continue;
        }
        let tx = catalog.write_transaction()?;
        let tasks = plan(catalog, v.id, &against, &HashSet::new())?;
        let version = v.version.to_string();
        let progress = |done, total| progress(&version, done, total);
        let made = make(
            catalog,
            tasks,
            jobs,
            delta::PUBLISH_LEVELS,
            &against,
            &progress,
        )?;
        if made.delta_count > 0 {
            super::changed(&tx).at(catalog)?;
        }
        crate::interrupt::commit(|| tx.commit()).at(catalog)?;
        out.push(CaughtUp {
            package: package.to_string(),
            version,
            made,
        });
    }
    Ok(out)
}

/// The files of version `version_id` that take part, by path.
fn files(catalog: &Catalog, version_id: i64) -> Result<Vec<File>> {
    let brotli = if catalog.has_brotli() {
        "(SELECT length(r.body) FROM brotli r WHERE r.blob_id = b.id)"
    } else {
        "NULL"
    };
    let sql = format!(
        "SELECT a.path, b.id, b.raw_size, length(b.body), {brotli}
           FROM assets a JOIN blobs b ON b.id = a.blob_id
          WHERE a.version_id = ?1 AND b.encoding = 'gzip'"
    );
    let mut stmt = catalog.conn().prepare_cached(&sql).at(catalog)?;
    let rows = stmt
        .query_map([version_id], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, i64>(2)? as u64,
                r.get::<_, i64>(3)? as u64,
                r.get::<_, Option<i64>>(4)?.map(|n| n as u64),
            ))
        })
        .at(catalog)?
        .collect::<rusqlite::Result<Vec<_>>>()
        .at(catalog)?;
    Ok(rows
        .into_iter()
        .filter(|(path, _, raw, gzip, br)| {
            delta::kind(path).is_some() && DictionarySize::fits(*raw, br.unwrap_or(*gzip))
        })
        .map(|(path, blob_id, raw_size, gzip, br)| File {
            path,
            blob_id,
            raw_size,
            baseline: br.unwrap_or(gzip),
        })
        .collect())
}

/// The deltas to make for version `version_id` against `predecessors`
/// (newest first); a pair the catalog has both codings of already is
/// marked [`Task::made_before`].
/// `new_blobs` are the blobs this command stored.
pub(crate) fn plan(
    catalog: &Catalog,
    version_id: i64,
    predecessors: &[(i64, String)],
    new_blobs: &HashSet<i64>,
) -> Result<Vec<Task>> {
    if predecessors.is_empty() || !catalog.has_deltas() {
        return Ok(Vec::new());
    }
    let targets = files(catalog, version_id)?;
    let mut tasks = Vec::new();
    let mut seen = HashSet::new();
    for (rank, (pred_id, _)) in predecessors.iter().enumerate() {
        let old = files(catalog, *pred_id)?;
        let by_path: HashMap<&str, &File> = old.iter().map(|f| (f.path.as_str(), f)).collect();
        let mut by_family: HashMap<String, Vec<&File>> = HashMap::new();
        for f in &old {
            by_family
                .entry(delta::family::key(&f.path))
                .or_default()
                .push(f);
        }
        for target in &targets {
            let mut dictionaries: Vec<&File> = match by_path.get(target.path.as_str()) {
                Some(same) => vec![same],
                None if delta::family::is_family(&target.path) => {
                    let mut family = by_family
                        .get(&delta::family::key(&target.path))
                        .cloned()
                        .unwrap_or_default();
                    family.sort_by_key(|f| (f.raw_size.abs_diff(target.raw_size), f.blob_id));
                    family.truncate(FAMILY_CANDIDATES);
                    family
                }
                None => Vec::new(),
            };
            dictionaries.dedup_by_key(|f| f.blob_id);
            for dictionary in dictionaries {
                if seen.insert((target.blob_id, dictionary.blob_id)) {
                    tasks.push(Task {
                        target: target.blob_id,
                        dictionary: dictionary.blob_id,
                        existed: !new_blobs.contains(&target.blob_id),
                        baseline: target.baseline,
                        rank,
                        path: target.path.clone(),
                        made_before: None,
                    });
                }
            }
        }
    }
    // Pairs made before (an unchanged file, coded when an earlier
    // version was published) are not made again.
    let mut both = catalog
        .conn()
        .prepare_cached(
            "SELECT count(*), min(length(body)) FROM deltas
              WHERE blob_id = ?1 AND dictionary_id = ?2",
        )
        .at(catalog)?;
    for task in &mut tasks {
        let (have, smallest): (i64, Option<i64>) = both
            .query_row(params![task.target, task.dictionary], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .at(catalog)?;
        if have >= delta::CODINGS.len() as i64 {
            task.made_before = smallest.map(|n| n as u64);
        }
    }
    Ok(tasks)
}

/// A pair read for a worker: the task, the target as stored (shared by
/// its tasks) and the dictionary as stored (None: the target itself).
type Pair = (Task, Arc<(i64, Stored)>, Option<Stored>);

/// The blob id of the target read last.
fn stored_id(current: &Option<Arc<(i64, Stored)>>) -> Option<i64> {
    current.as_ref().map(|c| c.0)
}

/// What a worker made of a pair: the deltas kept.
type Coded = (Task, Vec<(Encoding, Vec<u8>)>);

/// Makes the deltas of `tasks` on `jobs` workers and stores them through
/// `catalog`'s connection (inside the caller's transaction), reporting
/// against `against` (the predecessors' versions, newest first).
/// `progress(done, total)` hears of each pair.
pub(crate) fn make(
    catalog: &Catalog,
    tasks: Vec<Task>,
    jobs: usize,
    levels: Levels,
    against: &[(i64, String)],
    progress: &dyn Fn(u64, u64),
) -> Result<Made> {
    let mut made = Made {
        against: against.iter().map(|(_, v)| v.clone()).collect(),
        ..Made::default()
    };
    // The smallest delta of each target against the newest predecessor.
    let mut newest: HashMap<String, (u64, u64)> = HashMap::new();
    let mut note_newest = |task: &Task, smallest: u64| {
        if task.rank == 0 {
            let entry = newest
                .entry(task.path.clone())
                .or_insert((task.baseline, smallest));
            entry.1 = entry.1.min(smallest);
        }
    };
    let (before, tasks): (Vec<Task>, Vec<Task>) =
        tasks.into_iter().partition(|t| t.made_before.is_some());
    for task in &before {
        note_newest(task, task.made_before.unwrap_or(task.baseline));
    }
    if tasks.is_empty() {
        made.file_count = newest.len() as u64;
        for (baseline, smallest) in newest.values() {
            made.brotli_bytes += baseline;
            made.smallest_delta_bytes += smallest;
        }
        return Ok(made);
    }
    let total = tasks.len() as u64;
    let jobs = jobs.max(1).min(tasks.len());
    let mut recoded = HashSet::new();
    let mut insert = catalog.conn().prepare_cached(INSERT).at(catalog)?;
    let mut store = |(task, kept): Coded, made: &mut Made| -> Result<()> {
        for (coding, body) in &kept {
            let inserted = insert
                .execute(params![
                    task.target,
                    task.dictionary,
                    coding,
                    &xxh3_digest(body)[..],
                    body
                ])
                .at(catalog)?;
            if inserted > 0 {
                made.delta_count += 1;
                made.delta_bytes += body.len() as u64;
            }
        }
        if let Some(smallest) = kept.iter().map(|(_, b)| b.len() as u64).min() {
            if task.existed && recoded.insert(task.target) {
                deltas::mark_recoded(catalog.conn(), task.target).at(catalog)?;
            }
            note_newest(&task, smallest);
        }
        Ok(())
    };
    let (to_workers, from_main) = mpsc::sync_channel::<Pair>(jobs);
    let from_main = std::sync::Mutex::new(from_main);
    std::thread::scope(|scope| -> Result<()> {
        let (to_main, results) = mpsc::channel::<std::result::Result<Coded, String>>();
        let mut workers = Vec::with_capacity(jobs);
        for worker in 0..jobs {
            let (from_main, to_main) = (&from_main, to_main.clone());
            let handle = std::thread::Builder::new()
                .name(format!("delta-{worker}"))
                .spawn_scoped(scope, move || {
                    loop {
                        let next = match from_main.lock() {
                            Ok(rx) => rx.recv(),
                            Err(_) => return,
                        };
                        let Ok((task, target, dictionary)) = next else {
                            return;
                        };
                        let coded = decode_and_code(&task, &target.1, dictionary.as_ref(), levels);
                        if to_main.send(coded.map(|kept| (task, kept))).is_err() {
                            return;
                        }
                    }
                })
                .map_err(|e| Error::system("cannot start a delta thread", e))?;
            workers.push(handle);
        }
        drop(to_main);
        let mut done = 0u64;
        let mut take = |block: bool, made: &mut Made| -> Result<bool> {
            let next = if block {
                results.recv().ok()
            } else {
                results.try_recv().ok()
            };
            match next {
                Some(Ok(coded)) => {
                    store(coded, made)?;
                    done += 1;
                    progress(done, total);
                    Ok(true)
                }
                Some(Err(why)) => Err(Error::Internal(why)),
                None => Ok(false),
            }
        };
        // Each blob is read as stored here and decoded by the worker.
        let limit = DictionarySize::MAX_RAW;
        let mut tasks = tasks;
        tasks.sort_by_key(|t| (t.target, t.dictionary));
        let mut current: Option<Arc<(i64, Stored)>> = None;
        let sending = (|| -> Result<()> {
            for task in tasks {
                crate::interrupt::check()?;
                while take(false, &mut made)? {}
                let target = match &current {
                    Some(stored) if stored_id(&current) == Some(task.target) => stored.clone(),
                    _ => {
                        let Some(stored) = catalog.blob_stored(task.target, limit)? else {
                            continue;
                        };
                        let stored = Arc::new((task.target, stored));
                        current = Some(stored.clone());
                        stored
                    }
                };
                let dictionary = match task.dictionary == task.target {
                    true => None,
                    false => match catalog.blob_stored(task.dictionary, limit)? {
                        Some(stored) => Some(stored),
                        None => continue,
                    },
                };
                if to_workers.send((task, target, dictionary)).is_err() {
                    break;
                }
            }
            Ok(())
        })();
        drop(to_workers);
        // What the workers still hold comes back, even after an error
        // (which is then returned).
        let mut drained = Ok(());
        while drained.is_ok() {
            match take(true, &mut made) {
                Ok(true) => {}
                Ok(false) => break,
                Err(e) => drained = Err(e),
            }
        }
        // A worker that panicked is a bug, reported as one; its pair was
        // never stored, and the caller's transaction rolls back.
        let panicked = workers
            .into_iter()
            .map(|w| w.join())
            .filter(Result::is_err)
            .count();
        if panicked > 0 {
            return Err(Error::Internal(format!(
                "{panicked} delta worker(s) panicked"
            )));
        }
        sending.and(drained)
    })?;
    made.file_count = newest.len() as u64;
    for (baseline, smallest) in newest.values() {
        made.brotli_bytes += baseline;
        made.smallest_delta_bytes += smallest;
    }
    Ok(made)
}

/// Decodes a pair and codes it ([`code`]).
fn decode_and_code(
    task: &Task,
    target: &Stored,
    dictionary: Option<&Stored>,
    levels: Levels,
) -> std::result::Result<Vec<(Encoding, Vec<u8>)>, String> {
    let bytes = target.decode()?;
    match dictionary {
        None => code(task, &bytes, &bytes, &target.sha256, levels),
        Some(dictionary) => {
            let dict = dictionary.decode()?;
            code(task, &bytes, &dict, &dictionary.sha256, levels)
        }
    }
}

/// Codes one pair both ways, keeping what is clearly smaller than the
/// target's brotli stream ([`MAX_SHARE`]) and decodes back to the target.
/// A delta is an optimization: one the encoder cannot make (it panicked)
/// or made wrong is left out, with a warning, and the publish goes on.
fn code(
    task: &Task,
    target: &[u8],
    dictionary: &[u8],
    sha: &[u8; 32],
    levels: Levels,
) -> std::result::Result<Vec<(Encoding, Vec<u8>)>, String> {
    let mut kept = Vec::new();
    for coding in delta::CODINGS {
        let levels = match task.target == task.dictionary {
            true => delta::UNCHANGED_LEVELS,
            false => levels,
        };
        let encoded =
            std::panic::catch_unwind(|| delta::encode(coding, target, dictionary, sha, levels));
        let body = match encoded {
            Ok(made) => {
                made.map_err(|e| format!("cannot make a {coding} delta of {}: {e}", task.path))?
            }
            Err(_) => {
                left_out(task, coding, "its encoder failed");
                continue;
            }
        };
        if (body.len() as f64) > task.baseline as f64 * MAX_SHARE {
            continue;
        }
        match delta::decode(coding, &body, dictionary, sha, target.len() as u64) {
            Ok(back) if back == target => kept.push((coding, body)),
            _ => left_out(task, coding, "it does not decode to the file"),
        }
    }
    Ok(kept)
}

/// Says that `task`'s `coding` delta is not stored, and why.
fn left_out(task: &Task, coding: Encoding, why: &str) {
    crate::log::err(format_args!(
        "warning: no {coding} delta of {} against its predecessor: {why}; it is served whole",
        task.path
    ));
}
