//! Reads on every core: the catalog connections that HTTP workers read
//! with, so that cache misses, version resolutions and listings are
//! answered on the worker that needs them instead of queueing behind the
//! store actor's one thread.
//!
//! The pool holds one read-only connection per worker thread, on the
//! catalog file the actor has open, each in a slot of its own. WAL readers
//! do not block each other, nor a writer in another process. A worker
//! holds a slot (its own, first) for one read; when every slot is busy, or
//! the pool cannot answer, it asks the actor, which reads on its own
//! connection as before.
//!
//! What stays single: the cache's admission and eviction (one lock, the
//! cache's owner side), and, with the actor, the staleness watch and the
//! file the path names.
//!
//! - **The file.** When a connection begins a read transaction, the worker
//!   compares the file the path names with the connection's (one `stat`).
//!   When they differ, or the pool is closed, it asks the actor, which
//!   follows the path (`watch`). So a pooled read sees the file the path
//!   named when its snapshot began, at most a span ago, as it sees the
//!   commits made by then. The actor closes every pooled
//!   connection, after the reads in flight, before it lets go of the old
//!   file (the two share `cdn.db-shm` by name), and opens the pool again on
//!   the new one. A catalog read `immutable` (`catalog::read_only`) has no
//!   pool: such a connection must be reopened when a writer appears, which
//!   the actor alone watches for.
//! - **Staleness.** A worker's miss goes to the cache as an offer carrying
//!   the count of catalog changes ([`Readers::changes`]) read before the
//!   snapshot it was read in began. The actor adds one to the count
//!   whenever it finds the catalog changed, before it drops the entries of
//!   deleted versions (under the owner side's lock), and whoever admits
//!   refuses an offer made under an older count, under that lock. So an
//!   entry read before a version was removed is either cached before the
//!   drop (and dropped by it) or refused: the bound of
//!   [`STALENESS_CHECK`](super::watch::STALENESS_CHECK) holds as with one reader.
//! - **Admission.** A worker does not wait for the actor: it answers
//!   with the asset it loaded, and offers it to the cache's owner side
//!   (admission, recency, eviction: one lock). When no one holds that, the
//!   worker admits its offer itself, with any left waiting in its slot, so
//!   an asset is cached from its first miss and a miss wakes no other
//!   thread. When another thread holds it, the offer waits in the slot for
//!   the worker's next miss or the actor's next tick; a worker wakes the
//!   actor once its slot holds [`OFFER_BATCH`], and sends an offer heavier
//!   than [`HELD_WEIGHT`] at once, so what waits stays small. When the
//!   actor's inbox is full such a message is dropped, and the next miss for
//!   the key offers it again.
//! - **Shared read transactions.** Each connection shares a read
//!   transaction among the reads close together, bounded as the actor's
//!   are (`shared_read`). The actor ends, at each housekeeping tick, the
//!   transactions of idle connections whose span is over, so a snapshot
//!   outlives its last read by at most one tick; a writer's closing
//!   checkpoint waits longer than that for readers.

use super::shared_read::{SharedRead, SharingBound, share};
use super::watch::open_file;
use super::{Asset, AssetKey};
use crate::catalog::Catalog;
use crate::error::Result;
use crate::file_id::FileId;
use crate::log;
use crate::serve::cache::Cache;
use crate::serve::prepared::Prepared;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError, TryLockError};

/// The connections workers read with, and the count of catalog changes.
pub(super) struct Readers {
    path: PathBuf,
    bound: SharingBound,
    /// One connection each (or none while the pool is closed). A worker
    /// holds a slot's lock for one read; the actor takes every lock to
    /// close or open the pool.
    slots: Box<[Slot]>,
    changes: AtomicU64,
}

/// Offers a slot holds before its worker wakes the actor to take them.
pub(super) const OFFER_BATCH: usize = 32;
/// The heaviest offer a slot holds (its cache weight); a heavier one is
/// sent to the actor at once.
pub(super) const HELD_WEIGHT: u64 = 64 << 10;

/// A worker's miss, offered to the cache, and the count of changes it was
/// read under.
pub(super) struct Offer {
    pub(super) asset: Asset,
    pub(super) seen: u64,
    /// The miss's access was counted when the cache was asked whether it
    /// would refuse it (`Cache::refuses`).
    pub(super) counted: bool,
}

/// What became of a slot's offers once a worker left one.
pub(super) enum Kept {
    /// Admitted, with the others waiting there (or refused).
    Admitted,
    /// Held in the slot.
    Held,
    /// Held, and the slot is full: the actor should take its offers now.
    Full,
    /// Not held (too heavy, or the slot was full): send it to the actor.
    Send(Offer),
}

/// Where a read leaves its offers: its connection's slot.
pub(super) struct Outbox<'a> {
    offers: &'a mut Vec<Offer>,
    seen: u64,
    /// The offer just left is heavier than [`HELD_WEIGHT`].
    heavy: bool,
}

impl Outbox<'_> {
    /// The count of catalog changes the read began under.
    pub(super) fn seen(&self) -> u64 {
        self.seen
    }

    /// Leaves `asset`, of cache weight `weight`, in the slot; `counted`
    /// says its access was counted already.
    pub(super) fn offer(&mut self, asset: Asset, weight: u64, counted: bool) {
        self.heavy = weight > HELD_WEIGHT;
        self.offers.push(Offer {
            asset,
            seen: self.seen,
            counted,
        });
    }

    /// Admits the slot's offers into `cache`, refusing those read before
    /// the catalog last changed (`changes` now) and those for keys cached
    /// already.
    pub(super) fn admit(&mut self, cache: &mut Cache<AssetKey, Prepared>, changes: u64) {
        for offer in self.offers.drain(..) {
            admit(cache, offer, changes);
        }
        self.heavy = false;
    }

    /// What to do with the slot's offers when the cache could not be had:
    /// keep them, wake the actor, or send the last one (too heavy, or the
    /// slot over full) by message.
    pub(super) fn kept(&mut self) -> Kept {
        if self.heavy || self.offers.len() > OFFER_BATCH {
            self.heavy = false;
            return self.offers.pop().map_or(Kept::Held, Kept::Send);
        }
        if self.offers.len() == OFFER_BATCH {
            Kept::Full
        } else {
            Kept::Held
        }
    }
}

/// Admits one offer into `cache` (see [`Outbox::admit`]): one read
/// before the catalog last changed is refused, and so is one for a key
/// cached already, unless the offer holds in memory a body the cached
/// entry left in the catalog.
pub(super) fn admit(cache: &mut Cache<AssetKey, Prepared>, offer: Offer, changes: u64) {
    if offer.seen != changes {
        return;
    }
    let fuller =
        |cached: &Prepared| !cached.stored.in_memory() && offer.asset.value().stored.in_memory();
    if cache
        .peek(offer.asset.key())
        .is_none_or(|cached| fuller(cached.value()))
    {
        cache.admit_miss(offer.asset, offer.counted);
    }
}

/// A slot, padded to its own cache lines: each worker usually takes its
/// own, so workers on different cores touch no common lock word.
#[repr(align(128))]
struct Slot(Mutex<Option<Connection>>);

/// A pooled connection and its shared read transaction.
struct Connection {
    catalog: Catalog,
    /// The file it reads.
    file: FileId,
    shared: Option<SharedRead>,
    /// [`Readers::changes`] as it was before `shared` began.
    seen: u64,
    /// Misses read on it, waiting to be admitted (module doc).
    offers: Vec<Offer>,
}

impl Connection {
    fn read<T>(&mut self, read: impl FnOnce(&Catalog, &mut Outbox<'_>) -> Result<T>) -> Result<T> {
        let mut outbox = Outbox {
            offers: &mut self.offers,
            seen: self.seen,
            heavy: false,
        };
        read(&self.catalog, &mut outbox)
    }

    fn end_shared(&mut self) {
        self.shared = None;
        if let Err(e) = self.catalog.end_read() {
            log::err(format_args!(
                "warning: ending a read transaction on the catalog failed: {e}"
            ));
        }
    }
}

/// What a read on a pooled connection gave, and the count of changes it
/// was read under.
pub(super) struct Read<T> {
    pub(super) result: Result<T>,
    pub(super) seen: u64,
}

/// The slot this thread tries first: assigned round robin on first use,
/// so that each worker of a pool sized to the workers has its own.
fn slot_of_this_thread(slots: usize) -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static SLOT: usize = NEXT.fetch_add(1, Ordering::Relaxed);
    }
    SLOT.with(|s| *s) % slots.max(1)
}

impl Readers {
    /// A closed pool of `count` connections for the catalog at `path`.
    pub(super) fn new(path: PathBuf, count: usize, bound: SharingBound) -> Readers {
        Readers {
            path,
            bound,
            slots: (0..count).map(|_| Slot(Mutex::new(None))).collect(),
            changes: AtomicU64::new(0),
        }
    }

    /// Runs `read` on a pooled connection, in its shared read transaction.
    /// None when the pool cannot: it is closed, every connection is in use,
    /// or the path names another file than the connection's. The caller
    /// then asks the actor.
    pub(super) fn read<T>(
        &self,
        read: impl FnOnce(&Catalog, &mut Outbox<'_>) -> Result<T>,
    ) -> Option<Read<T>> {
        let first = slot_of_this_thread(self.slots.len());
        let (before, after) = self.slots.split_at(first);
        for slot in after.iter().chain(before) {
            let mut held = match slot.0.try_lock() {
                Ok(held) => held,
                Err(TryLockError::Poisoned(p)) => p.into_inner(),
                Err(TryLockError::WouldBlock) => continue,
            };
            if let Some(connection) = held.as_mut() {
                return self.read_on(connection, read);
            }
        }
        None
    }

    fn read_on<T>(
        &self,
        connection: &mut Connection,
        read: impl FnOnce(&Catalog, &mut Outbox<'_>) -> Result<T>,
    ) -> Option<Read<T>> {
        // Read before the transaction can begin (module doc, staleness).
        let changes = self.changes();
        let result = match share(&connection.catalog, &mut connection.shared, self.bound) {
            Ok(true) => {
                // Each snapshot is of the file the path names when it
                // begins (module doc, the file).
                if FileId::at(&self.path).ok() != Some(connection.file) {
                    connection.end_shared();
                    return None;
                }
                connection.seen = changes;
                connection.read(read)
            }
            Ok(false) => connection.read(read),
            Err(e) => Err(e),
        };
        if result.is_err() {
            // Whatever went wrong stays out of the next reads.
            connection.end_shared();
        }
        Some(Read {
            result,
            seen: connection.seen,
        })
    }

    /// How many times the actor found the catalog changed.
    pub(super) fn changes(&self) -> u64 {
        self.changes.load(Ordering::Acquire)
    }

    /// The actor found the catalog changed: offers read before now are
    /// refused from here on.
    pub(super) fn changed(&self) {
        self.changes.fetch_add(1, Ordering::AcqRel);
    }

    /// Opens the pool's connections on the file the actor has open
    /// (`file`). One that fails to open, or finds the path naming another
    /// file by then, leaves its slot empty until the actor opens a catalog
    /// again (a replaced one, when the path names another file).
    pub(super) fn open(&self, file: FileId) {
        for slot in self.slots.iter() {
            let connection = match open_file(&self.path) {
                Ok((catalog, opened, _, _)) if opened == file => Connection {
                    catalog,
                    file,
                    shared: None,
                    seen: 0,
                    offers: Vec::with_capacity(OFFER_BATCH),
                },
                Ok(_) => return,
                Err(e) => {
                    log::err(format_args!(
                        "warning: a worker's catalog connection did not open, its reads go through the store thread: {e}"
                    ));
                    return;
                }
            };
            *slot.lock() = Some(connection);
        }
    }

    /// Closes every connection, each once its read in flight is done.
    pub(super) fn close(&self) {
        for slot in self.slots.iter() {
            let taken = slot.lock().take();
            if let Some(mut connection) = taken {
                connection.end_shared();
            }
        }
    }

    /// Moves every slot's offers into `taken`, waiting for reads in flight.
    pub(super) fn take_offers(&self, taken: &mut Vec<Offer>) {
        for slot in self.slots.iter() {
            if let Some(connection) = slot.lock().as_mut() {
                taken.append(&mut connection.offers);
            }
        }
    }

    /// Ends the read transactions of idle connections whose span is over.
    pub(super) fn end_idle(&self) {
        for slot in self.slots.iter() {
            let Ok(mut held) = slot.0.try_lock() else {
                continue; // in use: its reader goes on
            };
            if let Some(connection) = held.as_mut()
                && connection
                    .shared
                    .as_ref()
                    .is_some_and(|open| open.begun.elapsed() >= self.bound.span)
            {
                connection.end_shared();
            }
        }
    }
}

impl Slot {
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Connection>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serve::store::SHARED_SPAN;
    use crate::serve::store::testing::{catalog_with, key, mv, noise, publish_at};
    use std::path::Path;

    fn opened(db: &Path, count: usize) -> Readers {
        let readers = Readers::new(
            db.to_path_buf(),
            count,
            SharingBound {
                reads: 64,
                span: SHARED_SPAN,
            },
        );
        readers.open(FileId::at(db).unwrap());
        readers
    }

    fn size(readers: &Readers, path: &str) -> Option<Option<usize>> {
        readers
            .read(|c, _| {
                Ok(c.lookup("app", "1.0.0", path)?
                    .map(|row| row.stored_len as usize))
            })
            .map(|read| read.result.unwrap())
    }

    #[test]
    fn a_pool_reads_until_its_file_is_replaced_or_it_is_closed() {
        let dir = tempfile::tempdir().unwrap();
        let db = catalog_with(dir.path(), &[("a", 100)]);
        let readers = opened(&db, 1);
        assert_eq!(size(&readers, "a"), Some(Some(100)));
        assert_eq!(size(&readers, "b"), Some(None), "no such file");

        let new = dir.path().join("new.db");
        publish_at(&new, "1.0.0", &[("b", noise(50))]);
        mv(&new, &db);
        // A snapshot begun before the rename may be read to its span's end.
        std::thread::sleep(SHARED_SPAN);
        assert_eq!(size(&readers, "b"), None, "another file: the actor's");
        readers.close();
        readers.open(FileId::at(&db).unwrap());
        assert_eq!(size(&readers, "b"), Some(Some(50)));
        readers.close();
        assert_eq!(size(&readers, "b"), None, "closed");
    }

    #[test]
    fn a_read_with_every_connection_in_use_goes_to_the_actor() {
        let dir = tempfile::tempdir().unwrap();
        let db = catalog_with(dir.path(), &[("a", 100)]);
        let one = opened(&db, 1);
        let inner = one
            .read(|_, _| Ok(size(&one, "a")))
            .unwrap()
            .result
            .unwrap();
        assert_eq!(inner, None);
        let two = opened(&db, 2);
        let inner = two
            .read(|_, _| Ok(size(&two, "a")))
            .unwrap()
            .result
            .unwrap();
        assert_eq!(inner, Some(Some(100)));
        assert!(opened(&db, 0).read(|_, _| Ok(())).is_none(), "no pool");
    }

    #[test]
    fn a_read_carries_the_count_of_changes_from_before_its_snapshot() {
        let dir = tempfile::tempdir().unwrap();
        let db = catalog_with(dir.path(), &[("a", 100)]);
        let readers = opened(&db, 1);
        let seen = |r: &Readers| r.read(|_, _| Ok(())).unwrap().seen;
        assert_eq!(seen(&readers), 0);
        readers.changed();
        // The transaction begun before the change is still shared: what it
        // reads may be older than the change.
        assert_eq!(seen(&readers), 0);
        std::thread::sleep(SHARED_SPAN);
        assert_eq!(seen(&readers), 1, "a snapshot begun after the change");
    }

    #[test]
    fn idle_connections_end_their_transactions_once_the_span_is_over() {
        let dir = tempfile::tempdir().unwrap();
        let db = catalog_with(dir.path(), &[("a", 100)]);
        let readers = opened(&db, 1);
        let open = |r: &Readers| {
            let held = r.slots[0].lock();
            let connection = held.as_ref().unwrap();
            assert_eq!(
                connection.shared.is_some(),
                connection.catalog.in_transaction()
            );
            connection.catalog.in_transaction()
        };
        let before_read = std::time::Instant::now();
        size(&readers, "a");
        assert!(
            open(&readers),
            "the read's transaction is kept for the next"
        );
        readers.end_idle();
        // The span is 2 ms: a test thread the machine parks for longer
        // than that has nothing to say about it.
        if before_read.elapsed() < SHARED_SPAN {
            assert!(open(&readers), "within its span: kept");
        }
        std::thread::sleep(SHARED_SPAN);
        readers.end_idle();
        assert!(!open(&readers), "past its span: ended");
    }

    #[test]
    fn offers_wait_in_the_slot_until_admitted_and_heavy_ones_go_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let db = catalog_with(dir.path(), &[("a", 100)]);
        let readers = opened(&db, 1);
        let mut cache = Cache::new(10, 1 << 20);
        let asset = |cache: &Cache<AssetKey, Prepared>, weight| {
            let catalog = Catalog::open(&db, crate::catalog::Access::ReadOnly).unwrap();
            let row = catalog.lookup("app", "1.0.0", "a").unwrap().unwrap();
            let prepared =
                Prepared::new(crate::serve::stored::StoredAsset::from_row(row, |_| None).unwrap());
            cache.reader().wrap(key("a"), prepared, weight)
        };
        // The cache's owner side is held elsewhere: offers wait.
        let busy = |weight| {
            let asset = asset(&cache, weight);
            readers
                .read(|_, outbox| {
                    outbox.offer(asset, weight, false);
                    Ok(outbox.kept())
                })
                .unwrap()
                .result
                .unwrap()
        };
        assert!(
            matches!(busy(HELD_WEIGHT + 1), Kept::Send(_)),
            "heavy: at once"
        );
        for _ in 1..OFFER_BATCH {
            assert!(matches!(busy(100), Kept::Held));
        }
        assert!(matches!(busy(100), Kept::Full), "a batch: wake the actor");
        assert!(matches!(busy(100), Kept::Send(_)), "the slot is full");
        // The next worker to get the owner side admits them all (one key
        // here: the first, the others are cached already).
        readers
            .read(|_, outbox| {
                outbox.admit(&mut cache, 0);
                Ok(())
            })
            .unwrap();
        assert_eq!(cache.stats().entries, 1);
        let mut taken = Vec::new();
        readers.take_offers(&mut taken);
        assert!(taken.is_empty(), "nothing left waiting");
        // Read under an older count of changes: refused.
        readers.changed();
        let stale = asset(&cache, 100);
        cache.retain(|_| false);
        admit(
            &mut cache,
            Offer {
                asset: stale,
                seen: 0,
                counted: false,
            },
            readers.changes(),
        );
        assert_eq!(cache.stats().entries, 0);
    }
}
