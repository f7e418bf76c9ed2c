//! How the store actor's catalog reads share read transactions: reads that
//! come close together share one, within a bound, so that each does not
//! begin and end its own.
//!
//! # One read transaction for reads close together
//!
//! In WAL mode every statement outside a transaction begins and ends its
//! own read transaction: shared locks on `cdn.db-shm` (fcntl calls) and a
//! look at the log's index to begin, the same undone to end. Measured on a
//! mostly-miss load that was about a quarter of the time SQLite spent on a
//! lookup (`bench/RPS.md`). So the store's reads share one deferred
//! transaction: `BEGIN` before a read when none is open, `COMMIT` once the
//! inbox has stayed empty until the transaction's span is over (the actor
//! loop lingers, see [`crate::actor::Actor::lingering`]). Reads close
//! together share it whether they queued behind each other (a busy run)
//! or came one at a time from a worker that waits for each answer before
//! it reads the next request; an idle server holds no transaction.

//! A transaction sees the catalog as it was when its first read began, so
//! a shared one is also ended, and the next read begins another:
//!
//! - after [`SHARED_READS`] reads or [`SHARED_SPAN`], whichever comes
//!   first, so that a server kept busy for minutes still sees other
//!   processes' commits within a couple of milliseconds (plus the one
//!   message being handled). Shared by 64 reads, the begin/end pair is a
//!   negligible share of each read's SQLite time, so a longer run buys
//!   nothing, and 64 misses take about as long as the span, so under load
//!   the two bounds agree (figures: bench/RPS.md). A short bound matters
//!   for writers too: a checkpoint
//!   cannot restart the write-ahead log while a reader's snapshot still
//!   needs its frames.
//! - before the staleness check, which reads `data_version` (it only moves
//!   between transactions) and asks whether cached versions still exist;
//! - before the connection is let go of (a replaced catalog file, or the
//!   store stopping);
//! - after any failed request (`SQLITE_BUSY`, a damaged page, an I/O
//!   error, a body that fails its check): ROLLBACK if COMMIT fails; the
//!   request gets today's error and the next read starts afresh.
//!
//! The store never writes: its connection is `query_only`, and a read-only
//! open migrates nothing, so no write can meet a read transaction.

use crate::catalog::Catalog;
use crate::error::Result;
use crate::log;
use std::time::{Duration, Instant};

/// Most catalog reads that share one read transaction (module doc).
pub(crate) const SHARED_READS: u32 = 64;
/// Longest a read transaction is shared, from its first read (module doc).
pub(crate) const SHARED_SPAN: Duration = Duration::from_millis(2);

/// When a shared read transaction must end (module doc).
#[derive(Debug, Clone, Copy)]
pub(super) struct SharingBound {
    pub(super) reads: u32,
    pub(super) span: Duration,
}

/// The read transaction that reads close together share.
pub(super) struct SharedRead {
    pub(super) begun: Instant,
    reads: u32,
}

/// Makes the next read part of the shared transaction:
/// begins one when there is none or the one open has reached its bound
/// (it is ended first). Says whether it began one.
pub(super) fn share(
    catalog: &Catalog,
    shared: &mut Option<SharedRead>,
    bound: SharingBound,
) -> Result<bool> {
    if let Some(open) = shared {
        // SQLite may have rolled it back by itself after an error.
        if open.reads < bound.reads && open.begun.elapsed() < bound.span && catalog.in_transaction()
        {
            open.reads += 1;
            return Ok(false);
        }
        *shared = None;
        catalog.end_read()?;
    }
    catalog.begin_read()?;
    *shared = Some(SharedRead {
        begun: Instant::now(),
        reads: 1,
    });
    Ok(true)
}

/// Ends the shared read transaction on `catalog`, if one is open: the
/// next read sees the catalog as it is now.
pub(super) fn end(catalog: Option<&Catalog>, shared: &mut Option<SharedRead>) {
    *shared = None;
    if let Some(catalog) = catalog
        && let Err(e) = catalog.end_read()
    {
        log::err(format_args!(
            "warning: ending a read transaction on the catalog failed: {e}"
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::actor::{self, Actor};
    use crate::catalog::Access;
    use crate::error::Error;
    use crate::serve::store::owner::Store;
    use crate::serve::store::testing::{body, catalog_with, key, mv, noise, publish_at, store};
    use crate::serve::store::{Found, Msg, Resolved, Want};
    use crate::spec::Selector;
    use std::path::PathBuf;

    fn in_transaction(s: &Store) -> bool {
        s.served.catalog.as_ref().unwrap().in_transaction()
    }

    fn resolve_v11(s: &mut Store) -> Option<Resolved> {
        s.resolve("app", &Selector::parse("app", "1.1.0").unwrap())
            .unwrap()
    }

    #[test]
    fn the_reads_of_a_busy_run_share_one_snapshot_until_the_inbox_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        let db = catalog_with(dir.path(), &[("a", 100), ("b", 100)]);
        let mut s = store(db.clone(), 10, 1 << 20);
        s.bound.span = Duration::from_secs(3600);
        s.get(key("a")).unwrap().unwrap();
        assert!(in_transaction(&s), "a lone message begins one too");
        assert!(s.lingering().is_some(), "and the run lingers for more");

        s.more_queued();
        assert!(s.get(key("b")).unwrap().is_some());
        assert!(in_transaction(&s));
        publish_at(&db, "1.1.0", &[("c", noise(10))]);
        assert_eq!(resolve_v11(&mut s), None, "the run's snapshot");
        s.inbox_empty();
        assert!(!in_transaction(&s));
        assert_eq!(s.lingering(), None);
        assert!(resolve_v11(&mut s).is_some(), "idle: the catalog as it is");
    }

    #[test]
    fn a_shared_read_transaction_ends_at_its_bound_while_the_run_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        let db = catalog_with(dir.path(), &[("a", 100)]);
        let mut s = store(db.clone(), 10, 1 << 20);
        s.bound.span = Duration::from_secs(3600);
        s.more_queued();
        s.get(key("a")).unwrap().unwrap();
        publish_at(&db, "1.1.0", &[("c", noise(10))]);
        // The read that found the transaction at its bound begins the next.
        let seen = (1..=SHARED_READS).find(|_| resolve_v11(&mut s).is_some());
        assert_eq!(seen, Some(SHARED_READS), "after {SHARED_READS} reads");
        assert!(in_transaction(&s), "the run goes on in a new transaction");

        s.bound = SharingBound {
            reads: u32::MAX,
            span: SHARED_SPAN,
        };
        publish_at(&db, "1.2.0", &[("d", noise(10))]);
        std::thread::sleep(SHARED_SPAN * 2);
        let v12 = s
            .resolve("app", &Selector::parse("app", "1.2.0").unwrap())
            .unwrap();
        assert!(v12.is_some(), "after {SHARED_SPAN:?}");
    }

    #[test]
    fn the_staleness_check_ends_the_shared_read_transaction() {
        let dir = tempfile::tempdir().unwrap();
        let db = catalog_with(dir.path(), &[("a", 100)]);
        let mut s = store(db.clone(), 10, 1 << 20);
        s.bound.span = Duration::from_secs(3600);
        s.more_queued();
        s.get(key("a")).unwrap().unwrap();
        let mut writer = Catalog::open(&db, Access::ReadWrite).unwrap();
        let id = writer.versions("app").unwrap()[0].id;
        writer.remove_versions(&[id], false).unwrap();
        s.housekeeping();
        assert_eq!(s.stats().invalidations, 1, "data_version moved");
        assert!(s.get(key("a")).unwrap().is_none());
    }

    #[test]
    fn a_catalog_renamed_over_the_path_mid_run_is_read_in_a_transaction_of_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("cdn.db");
        publish_at(&db, "1.0.0", &[("a", noise(100))]);
        let mut s = store(db.clone(), 10, 1 << 20);
        s.bound.span = Duration::from_secs(3600);
        s.more_queued();
        assert_eq!(body(&mut s, "a"), noise(100));
        let new = dir.path().join("new.db");
        publish_at(&new, "1.0.0", &[("z", noise(50))]);
        mv(&new, &db);
        assert_eq!(body(&mut s, "z"), noise(50));
        assert!(in_transaction(&s), "the run reads the new file in one");
        assert_eq!(s.health().reloads, 1);
    }

    /// A store behind the actor loop, which a test can hold busy while it
    /// queues messages behind `Hold`.
    struct Held {
        store: Store,
        /// Told at each end of a busy run.
        idle: std::sync::mpsc::Sender<()>,
    }

    enum HeldMsg {
        /// Says it has begun, then waits to be released.
        Hold(
            std::sync::mpsc::SyncSender<()>,
            std::sync::mpsc::Receiver<()>,
        ),
        Store(Msg),
    }

    impl Actor for Held {
        type Msg = HeldMsg;
        fn handle(&mut self, msg: HeldMsg) {
            match msg {
                HeldMsg::Hold(begun, release) => {
                    let _ = begun.send(());
                    let _ = release.recv();
                }
                HeldMsg::Store(msg) => self.store.handle(msg),
            }
        }
        fn more_queued(&mut self) {
            self.store.more_queued();
        }
        fn inbox_empty(&mut self) {
            self.store.inbox_empty();
            let _ = self.idle.send(());
        }
    }

    type HeldActor = (actor::Running<HeldMsg>, std::sync::mpsc::Receiver<()>);

    fn held(db: PathBuf, bound: SharingBound) -> HeldActor {
        let (idle, idled) = std::sync::mpsc::channel();
        let running = actor::spawn("held store", 256, move || {
            let mut store = store(db, 10, 1 << 20);
            store.bound = bound;
            Ok::<_, Error>(Held { store, idle })
        })
        .unwrap();
        (running, idled)
    }

    /// Holds the actor busy; the sender releases it.
    fn hold(actor: &actor::Handle<HeldMsg>) -> std::sync::mpsc::SyncSender<()> {
        let (begun, release) = queue_hold(actor);
        begun.recv().unwrap();
        release
    }

    /// Queues a hold behind what is already queued: `begun` says when the
    /// actor reached it, `release` lets it go on.
    fn queue_hold(
        actor: &actor::Handle<HeldMsg>,
    ) -> (
        std::sync::mpsc::Receiver<()>,
        std::sync::mpsc::SyncSender<()>,
    ) {
        let (begun_tx, begun) = std::sync::mpsc::sync_channel(1);
        let (release, release_rx) = std::sync::mpsc::sync_channel(1);
        actor
            .ask::<()>(|_| HeldMsg::Hold(begun_tx, release_rx))
            .unwrap();
        (begun, release)
    }

    fn ask_get(
        actor: &actor::Handle<HeldMsg>,
        path: &str,
    ) -> actor::Pending<Result<Option<Found>>> {
        actor
            .ask(|r| HeldMsg::Store(Msg::Get(key(path), Want::Whole, r)))
            .unwrap()
    }

    fn ask_version(
        actor: &actor::Handle<HeldMsg>,
        version: &str,
    ) -> actor::Pending<Result<Option<Resolved>>> {
        let selector = Selector::parse("app", version).unwrap();
        actor
            .ask(|r| HeldMsg::Store(Msg::Resolve("app".into(), selector, r)))
            .unwrap()
    }

    #[test]
    fn queued_lookups_share_one_read_transaction_through_the_actor_loop() {
        let dir = tempfile::tempdir().unwrap();
        let db = catalog_with(dir.path(), &[("a", 100), ("b", 100), ("c", 100)]);
        let long = SharingBound {
            reads: SHARED_READS,
            span: Duration::from_secs(3600),
        };
        let (running, idled) = held(db.clone(), long);
        let actor = &running.handle;
        let first = hold(actor);
        while idled.try_recv().is_ok() {}
        let a = ask_get(actor, "a");
        let b = ask_get(actor, "b");
        let (begun, second) = queue_hold(actor);
        let v11 = ask_version(actor, "1.1.0");
        let c = ask_get(actor, "c");
        first.send(()).unwrap();
        // `a` and `b` have been read; another process commits mid-run.
        begun.recv().unwrap();
        publish_at(&db, "1.1.0", &[("d", noise(10))]);
        second.send(()).unwrap();
        for found in [a, b, c] {
            assert!(found.wait().unwrap().unwrap().is_some());
        }
        assert_eq!(
            v11.wait().unwrap().unwrap(),
            None,
            "read in the transaction `a` began"
        );
        idled
            .recv_timeout(Duration::from_secs(30))
            .expect("the run ends");
        let after = ask_version(actor, "1.1.0").wait().unwrap().unwrap();
        assert!(after.is_some(), "the run over, the next read is fresh");
        running.join();
    }

    #[test]
    fn a_continuously_busy_actor_sees_a_commit_within_the_bound() {
        let dir = tempfile::tempdir().unwrap();
        let db = catalog_with(dir.path(), &[("a", 100)]);
        let bound = SharingBound {
            reads: SHARED_READS,
            span: SHARED_SPAN,
        };
        let (running, _idled) = held(db.clone(), bound);
        let actor = &running.handle;
        let first = hold(actor);
        let a = ask_get(actor, "a");
        let (begun, second) = queue_hold(actor);
        // Never an empty inbox from here to the last: only the bound can
        // end the transaction `a` began.
        let reads = 3 * SHARED_READS as usize;
        let resolved: Vec<_> = (0..reads).map(|_| ask_version(actor, "1.1.0")).collect();
        first.send(()).unwrap();
        begun.recv().unwrap();
        publish_at(&db, "1.1.0", &[("d", noise(10))]);
        second.send(()).unwrap();
        assert!(a.wait().unwrap().unwrap().is_some());
        let seen: Vec<bool> = resolved
            .into_iter()
            .map(|r| r.wait().unwrap().unwrap().is_some())
            .collect();
        let first_seen = seen.iter().position(|s| *s).expect("never seen");
        assert!(
            first_seen < SHARED_READS as usize,
            "seen at read {first_seen}"
        );
        assert!(seen[first_seen..].iter().all(|s| *s));
        running.join();
    }

    #[test]
    fn a_failed_read_ends_the_shared_transaction_and_the_run_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        let db = catalog_with(dir.path(), &[("a", 100), ("b", 100)]);
        let long = SharingBound {
            reads: SHARED_READS,
            span: Duration::from_secs(3600),
        };
        let (running, _idled) = held(db.clone(), long);
        let actor = &running.handle;
        let first = hold(actor);
        // A real SQLite error in the middle of a run: the lookup's table
        // is gone ("no such table").
        let writer = rusqlite::Connection::open(&db).unwrap();
        writer
            .execute_batch("ALTER TABLE brotli RENAME TO brotli_away")
            .unwrap();
        let a = ask_get(actor, "a");
        let (begun, second) = queue_hold(actor);
        let v11 = ask_version(actor, "1.1.0");
        let b = ask_get(actor, "b");
        first.send(()).unwrap();
        begun.recv().unwrap();
        writer
            .execute_batch("ALTER TABLE brotli_away RENAME TO brotli")
            .unwrap();
        drop(writer);
        publish_at(&db, "1.1.0", &[("d", noise(10))]);
        second.send(()).unwrap();
        let err = a.wait().unwrap().unwrap_err().to_string();
        assert!(err.contains("brotli"), "{err}");
        assert!(
            v11.wait().unwrap().unwrap().is_some(),
            "the failed transaction was ended; the next read is fresh"
        );
        assert!(b.wait().unwrap().unwrap().is_some(), "not wedged");
        running.join();
    }
}
