//! A writing server brings brotli streams up to quality 11 in the
//! background (`catalog::recompress`), so a release published at
//! publish's fast quality is sent at the smallest within minutes, and
//! publish is never slower for it.
//!
//! One thread, at the scheduler's idle priority (`SCHED_IDLE`): it runs
//! only on CPU time that serving leaves over, so it never delays a
//! response, and it holds no lock while it compresses (each batch is
//! written in one short transaction). It looks at the catalog's
//! generation every second and runs a pass when it has changed: at start,
//! after a publish, after a `ccc recompress` elsewhere. The store drops
//! the blobs a pass changed from its cache, as it does for new deltas.
//!
//! It stays off where the server must not write: a replica (`--writer`,
//! `--max-lag`, or a follower's heartbeat beside the catalog), a catalog
//! whose schema predates `brotli_made` (a server never migrates one), a
//! catalog this user does not own or may not write (its side files must
//! stay the owner's), and `--no-recompress`. Stopping
//! the server does not wait for a file being compressed: nothing is
//! written until a batch is done, so leaving one undone loses nothing.

use crate::catalog::recompress::{self, Options};
use crate::catalog::{Access, BROTLI_MADE_SCHEMA, Catalog, read_only};
use crate::error::Error;
use crate::log;
use crate::units::human_size;
use std::path::PathBuf;
use std::sync::mpsc::{self, RecvTimeoutError, TryRecvError};
use std::time::Duration;

/// How often the thread looks at the catalog's generation.
const LOOK_EVERY: Duration = Duration::from_secs(1);

/// How long the thread waits after a pass that failed.
const AFTER_FAILURE: Duration = Duration::from_secs(60);

/// Files compressed and written together by the background pass.
const BATCH: usize = 8;

/// The running background pass.
pub(super) struct Recompressor {
    /// Dropped to ask the thread to stop.
    stop: Option<mpsc::Sender<()>>,
    /// Disconnected once the thread has closed the catalog.
    finished: mpsc::Receiver<()>,
}

impl Recompressor {
    /// Asks the thread to stop: at once when it waits, after the file in
    /// hand when it compresses.
    pub(super) fn ask_to_stop(&mut self) {
        self.stop = None;
    }

    /// Stops the thread and waits up to `at_most` for it to close the
    /// catalog (folding the write-ahead log in, when it is the last
    /// connection); a file still being compressed is left undone.
    pub(super) fn stop(mut self, at_most: Duration) {
        self.ask_to_stop();
        let _ = self.finished.recv_timeout(at_most);
    }
}

/// The thread's end of the channel [`Recompressor`] drops to stop it.
struct Stop(mpsc::Receiver<()>);

impl Stop {
    fn asked(&self) -> bool {
        matches!(self.0.try_recv(), Err(TryRecvError::Disconnected))
    }

    /// Waits `how_long`, or less when stopped: whether it was.
    fn wait(&self, how_long: Duration) -> bool {
        matches!(
            self.0.recv_timeout(how_long),
            Err(RecvTimeoutError::Disconnected)
        )
    }
}

/// Starts the thread for the catalog at `db`.
pub(super) fn start(db: PathBuf) -> std::io::Result<Recompressor> {
    let (stop, asked) = mpsc::channel();
    let (finishing, finished) = mpsc::channel::<()>();
    std::thread::Builder::new()
        .name("recompress".into())
        .spawn(move || {
            run(&db, &Stop(asked));
            drop(finishing);
        })?;
    Ok(Recompressor {
        stop: Some(stop),
        finished,
    })
}

fn run(db: &std::path::Path, stop: &Stop) {
    idle_priority();
    let Some(catalog) = open(db) else { return };
    let generation = || catalog.generation().ok().flatten().map(|g| g.number);
    // The generation the last pass ended at; None before the first.
    let mut seen = None;
    loop {
        if seen != Some(generation()) {
            let options = Options {
                batch: BATCH,
                ..Options::best(1)
            };
            let go_on = || !stop.asked();
            match recompress::run(&catalog, options, &go_on, &|_, _| {}) {
                Ok(done) if done.streams > 0 => log::err(format_args!(
                    "brotli 11: {} new streams, brotli clients now get {} instead of {} for those files",
                    done.streams,
                    human_size(done.bytes_after),
                    human_size(done.bytes_before)
                )),
                Ok(_) => {}
                // The server is stopping: the batch in hand is left undone.
                Err(Error::Interrupted(_)) => return,
                Err(e) => {
                    log::err(format_args!("warning: brotli recompression: {e}"));
                    if stop.wait(AFTER_FAILURE) {
                        return;
                    }
                }
            }
            // Its own writes raised the generation: seen after them.
            seen = Some(generation());
        }
        if stop.wait(LOOK_EVERY) {
            return;
        }
    }
}

/// The catalog, open for writing, when this server may write it (module
/// doc); None after saying why not.
fn open(db: &std::path::Path) -> Option<Catalog> {
    let schema = Catalog::open(db, Access::ReadOnly).map(|c| c.schema());
    match schema {
        Ok(schema) if schema >= BROTLI_MADE_SCHEMA => {}
        Ok(schema) => {
            log::err(format_args!(
                "note: brotli recompression is off: the catalog's schema ({schema}) predates it; \
                 `ccc recompress` upgrades the catalog and recompresses it"
            ));
            return None;
        }
        Err(_) => return None,
    }
    // Only its owner (or root) writes a catalog: another user's writer
    // would leave side files the owner cannot write.
    match read_only::Beside::look(db) {
        Ok((beside, _)) if beside.may_write && beside.owner => {}
        _ => {
            log::err(format_args!(
                "note: brotli recompression is off: this user may not write the catalog; \
                 `--no-recompress` says so quietly"
            ));
            return None;
        }
    }
    match Catalog::open(db, Access::ReadWrite) {
        Ok(catalog) => Some(catalog),
        Err(e) => {
            log::err(format_args!(
                "note: brotli recompression is off: {e}; `--no-recompress` says so quietly"
            ));
            None
        }
    }
}

/// Puts the calling thread at the scheduler's idle priority, where it
/// runs only when nothing else wants the CPU.
fn idle_priority() {
    #[cfg(target_os = "linux")]
    #[allow(unsafe_code)]
    // SAFETY: sched_setscheduler with pid 0 changes only the calling
    // thread's policy; the parameter is a valid, initialized struct.
    unsafe {
        let param = libc::sched_param { sched_priority: 0 };
        libc::sched_setscheduler(0, libc::SCHED_IDLE, &param);
    }
}
