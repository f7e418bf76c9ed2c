//! Ctrl-C and SIGTERM: how long-running commands stop cleanly.
//!
//! `publish`, `verify`, `gc`, `export`, `causal` and `serve` call [`watch`]
//! before any work. From then on the first SIGINT or SIGTERM only records
//! the signal; the work looks at it at safe points ([`check`]: between files,
//! blobs and experiments, and in SQLite's busy and progress handlers, see
//! `catalog`) and returns [`Error::Interrupted`]. The binary turns that into
//! exit code 128 + the signal's number, 130 for Ctrl-C and 143 for SIGTERM:
//! what a shell reports for a program the signal killed, and what cargo
//! exits with when a build is interrupted. Stopping at a safe point is what
//! keeps the catalog whole: a publish or gc rolls its transaction back, and
//! a first publish removes the catalog file it created.
//!
//! A second signal exits at once with the same code and the same message,
//! for a user who will not wait for the safe point. Its handler does what
//! the safe point would have left undone: a publish that is creating the
//! catalog registers its files ([`discard_on_exit`]), and the handler
//! removes them before it exits, so no empty catalog is left. A commit in
//! progress is waited for ([`commit`]): a second signal during it is only
//! recorded, and the commit ends the registration. A commit is one append
//! to the write-ahead log and its fsync: the catalog's automatic
//! checkpoints are off, so copying the log into the file is left to the
//! closing checkpoint, after the commit (see `catalog`). Once the commit is
//! done, what it committed stays: a signal during the closing checkpoint
//! abandons it (a second one exits at once) with code 0, and the second
//! signal's message says the commit is kept.
//!
//! A signal that was ignored when ccc started stays ignored: a shell
//! ignores SIGINT for the background jobs of a script, so that Ctrl-C
//! stops the script and not them.
//!
//! `serve` treats the signal as its normal end: it finishes the requests in
//! flight and exits 0, as a server stopped by its supervisor should. It
//! waits for the signal as a future ([`stopped`]): the handlers also write
//! a byte to a socket pair, whose reading end the runtime watches, so the
//! stop is seen at once and nothing polls the flag. The
//! quick commands (`ls`, `inspect`, `cat`, `rm`) do not watch: the signal
//! ends them as it ends any program, and a shell shows 130 for those too.

use crate::error::{Error, Result, signal_exit_code, signal_name};
use std::ffi::CString;
use std::io::IsTerminal;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

/// Set by the handlers: whether a stop was asked for, and by which signal.
static STOP: AtomicBool = AtomicBool::new(false);
static SIGNAL: AtomicUsize = AtomicUsize::new(0);
/// Whether the handlers are installed.
static WATCHING: Mutex<bool> = Mutex::new(false);
/// The reading end of the socket pair the handlers write a byte to after
/// setting STOP ([`stopped`] waits on it).
static WAKE: OnceLock<UnixStream> = OnceLock::new();
/// The files a second signal removes (a catalog being created), as paths
/// the handler can pass to `unlink` as they are; null when there are none.
static DISCARD: AtomicPtr<Vec<CString>> = AtomicPtr::new(std::ptr::null_mut());
/// Set while a commit is in progress: a second signal waits for it.
static COMMITTING: AtomicBool = AtomicBool::new(false);
/// Set once a commit succeeded: the work is done, and a second signal
/// exits 0 saying so.
static COMMITTED: AtomicBool = AtomicBool::new(false);
/// Whether stderr was a terminal when the handlers were installed: the
/// second signal's message then first clears the progress line.
static TERMINAL: AtomicBool = AtomicBool::new(false);

/// Installs the SIGINT and SIGTERM handlers (once per process) and returns
/// the flag they set, which `serve` uses as its stop signal.
pub(crate) fn watch() -> Result<&'static AtomicBool> {
    let mut watching = WATCHING.lock().unwrap_or_else(|e| e.into_inner());
    if !*watching {
        TERMINAL.store(std::io::stderr().is_terminal(), Ordering::SeqCst);
        let cannot = |what: &str, e| Error::system(format!("cannot {what}"), e);
        let (wake, woken) =
            UnixStream::pair().map_err(|e| cannot("make the stop signal's socket pair", e))?;
        wake.set_nonblocking(true)
            .map_err(|e| cannot("make the stop signal's socket non-blocking", e))?;
        for signal in [libc::SIGINT, libc::SIGTERM] {
            if ignored(signal) {
                continue;
            }
            // Handlers run in the order they were registered: the first
            // sees the flag as it was before this signal, so only a second
            // signal exits at once; the byte comes after the flag is set.
            let install = register_exit_on_second(signal)
                .and_then(|_| signal_hook::flag::register_usize(signal, &SIGNAL, signal as usize))
                .and_then(|_| signal_hook::flag::register(signal, &STOP))
                .and_then(|_| woken.try_clone())
                .and_then(|end| signal_hook::low_level::pipe::register(signal, end));
            install.map_err(|e| {
                Error::system(
                    format!("cannot install the {} handler", signal_name(signal)),
                    e,
                )
            })?;
        }
        // Set once: `watching` is true from here on.
        let _ = WAKE.set(wake);
        *watching = true;
    }
    Ok(&STOP)
}

/// Ready once SIGINT or SIGTERM asked for a stop; never, before [`watch`]
/// installed the handlers. Must be awaited on a tokio runtime with I/O.
pub(crate) async fn stopped() {
    let wake = WAKE
        .get()
        .and_then(|end| end.try_clone().ok())
        .and_then(|end| tokio::net::UnixStream::from_std(end).ok());
    let Some(wake) = wake else {
        return std::future::pending().await;
    };
    while !STOP.load(Ordering::SeqCst) {
        // Readable when a handler wrote; the bytes are only a wake-up.
        if wake.readable().await.is_err() {
            // The socket cannot be watched (it never fails in practice):
            // the flag is looked at instead, so a stop is never missed.
            while !STOP.load(Ordering::SeqCst) {
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
            return;
        }
        let _ = wake.try_read(&mut [0u8; 16]);
    }
}

/// Installs the handler that ends the process on a second signal.
#[allow(unsafe_code)]
fn register_exit_on_second(signal: i32) -> std::io::Result<signal_hook::SigId> {
    // SAFETY: `exit_on_second` only loads atomics, reads paths that are
    // never freed, and calls write, unlink and _exit, which are
    // async-signal-safe.
    unsafe { signal_hook::low_level::register(signal, move || exit_on_second(signal)) }
}

/// A signal's handler: after an earlier one, and unless a commit is in
/// progress, says what the safe point would have said, removes the files
/// registered with [`discard_on_exit`] and exits with the signal's code.
#[allow(unsafe_code)]
fn exit_on_second(signal: i32) {
    if !STOP.load(Ordering::SeqCst) || COMMITTING.load(Ordering::SeqCst) {
        return;
    }
    let committed = COMMITTED.load(Ordering::SeqCst);
    let (message, code) = match committed {
        true => (AFTER_COMMIT_MESSAGE, 0),
        false => (stop_message(signal), i32::from(signal_exit_code(signal))),
    };
    // SAFETY: write, unlink and _exit are async-signal-safe; the buffers
    // are static or leaked, so they outlive the calls.
    unsafe {
        if TERMINAL.load(Ordering::SeqCst) {
            let clear = b"\r\x1b[2K";
            libc::write(libc::STDERR_FILENO, clear.as_ptr().cast(), clear.len());
        }
        libc::write(libc::STDERR_FILENO, message.as_ptr().cast(), message.len());
        if let Some(files) = DISCARD.load(Ordering::SeqCst).as_ref() {
            for file in files {
                libc::unlink(file.as_ptr());
            }
        }
        libc::_exit(code);
    }
}

/// What a second signal after a commit (only publish commits through
/// [`commit`]) says: the process ends at once, before the log is folded
/// into the catalog, and the version stays published.
const AFTER_COMMIT_MESSAGE: &[u8] = b"stopped after the commit: the version is published; the catalog's write-ahead log\n  holds it until the next command folds it in\n";

/// The line ccc prints when `signal` stopped it, as `main` prints
/// [`Error::Interrupted`] (a test checks they agree); the handler cannot
/// format.
fn stop_message(signal: i32) -> &'static [u8] {
    match signal {
        libc::SIGINT => b"error: interrupted by SIGINT (Ctrl-C)\n",
        libc::SIGTERM => b"error: interrupted by SIGTERM\n",
        _ => b"error: interrupted by a signal\n",
    }
}

/// Until the next [`commit`] succeeds or the returned guard is dropped, a
/// second signal removes the catalog `db` and its side files before it
/// exits: a publish creating the catalog calls this before it opens it.
pub(crate) fn discard_on_exit(db: &Path) -> Discard {
    let files: Vec<CString> = ["", "-wal", "-shm"]
        .into_iter()
        .filter_map(|suffix| {
            let mut path = db.as_os_str().as_bytes().to_vec();
            path.extend_from_slice(suffix.as_bytes());
            CString::new(path).ok()
        })
        .collect();
    // Leaked: a handler may be reading it at any moment, and a process
    // registers once per publish.
    let files = Box::leak(Box::new(files));
    DISCARD.store(files, Ordering::SeqCst);
    Discard
}

/// Ends [`discard_on_exit`]'s registration when dropped.
pub(crate) struct Discard;

impl Drop for Discard {
    fn drop(&mut self) {
        DISCARD.store(std::ptr::null_mut(), Ordering::SeqCst);
    }
}

/// Runs a commit with second signals held off: one that arrives meanwhile
/// is recorded, and exits at the next signal. A commit that succeeds ends
/// [`discard_on_exit`]'s registration: the catalog now holds what was
/// committed, and a second signal from then on exits 0.
pub(crate) fn commit<T, E>(
    commit: impl FnOnce() -> std::result::Result<T, E>,
) -> std::result::Result<T, E> {
    COMMITTING.store(true, Ordering::SeqCst);
    let committed = commit();
    if committed.is_ok() {
        DISCARD.store(std::ptr::null_mut(), Ordering::SeqCst);
        COMMITTED.store(true, Ordering::SeqCst);
    }
    COMMITTING.store(false, Ordering::SeqCst);
    committed
}

/// Whether `signal` is ignored: the disposition ccc inherited.
#[allow(unsafe_code)]
fn ignored(signal: i32) -> bool {
    // SAFETY: with a null new action, sigaction only writes the current one
    // into `current`, a plain C struct for which all zeroes is valid.
    unsafe {
        let mut current: libc::sigaction = std::mem::zeroed();
        libc::sigaction(signal, std::ptr::null(), &mut current) == 0
            && current.sa_sigaction == libc::SIG_IGN
    }
}

/// The signal that asked this process to stop, if one did.
pub(crate) fn requested() -> Option<i32> {
    if !STOP.load(Ordering::SeqCst) {
        return None;
    }
    // The handler stores the signal's number before it sets STOP.
    match SIGNAL.load(Ordering::SeqCst) {
        0 => Some(libc::SIGINT),
        n => Some(n as i32),
    }
}

/// `Err(Interrupted)` once a stop was asked for.
pub(crate) fn check() -> Result<()> {
    match requested() {
        Some(signal) => Err(Error::Interrupted(signal)),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_second_signal_says_what_main_says() {
        for signal in [libc::SIGINT, libc::SIGTERM] {
            let main = format!("error: {}\n", Error::Interrupted(signal));
            assert_eq!(stop_message(signal), main.as_bytes());
        }
    }

    #[test]
    fn a_commit_ends_the_discard_and_a_failed_one_does_not() {
        let guard = discard_on_exit(Path::new("/nonexistent/cdn.db"));
        assert!(!DISCARD.load(Ordering::SeqCst).is_null());
        assert_eq!(commit(|| Err::<(), ()>(())), Err(()));
        assert!(
            !DISCARD.load(Ordering::SeqCst).is_null(),
            "still registered"
        );
        assert_eq!(commit(|| Ok::<u8, ()>(1)), Ok(1));
        assert!(
            DISCARD.load(Ordering::SeqCst).is_null(),
            "the commit ended it"
        );
        assert!(!COMMITTING.load(Ordering::SeqCst));
        drop(guard);
    }

    #[test]
    fn nothing_is_requested_without_a_signal() {
        // Not watching here: the handlers would outlive the test and keep
        // Ctrl-C from stopping this test binary.
        assert_eq!(requested(), None);
        assert!(check().is_ok());
    }
}
