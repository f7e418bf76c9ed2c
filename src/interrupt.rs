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
//! A second signal exits at once with the same code, for a user who will
//! not wait for the safe point. A signal that was ignored when ccc started
//! stays ignored: a shell ignores SIGINT for the background jobs of a
//! script, so that Ctrl-C stops the script and not them.
//!
//! `serve` treats the signal as its normal end: it finishes the requests in
//! flight and exits 0, as a server stopped by its supervisor should. The
//! quick commands (`ls`, `inspect`, `cat`, `rm`) do not watch: the signal
//! ends them as it ends any program, and a shell shows 130 for those too.

use crate::error::{Error, Result};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Set by the handlers: whether a stop was asked for, and by which signal.
static STOP: AtomicBool = AtomicBool::new(false);
static SIGNAL: AtomicUsize = AtomicUsize::new(0);
/// Whether the handlers are installed.
static WATCHING: Mutex<bool> = Mutex::new(false);

/// Installs the SIGINT and SIGTERM handlers (once per process) and returns
/// the flag they set, which `serve` uses as its stop signal.
pub fn watch() -> Result<&'static AtomicBool> {
    let mut watching = WATCHING.lock().unwrap_or_else(|e| e.into_inner());
    if !*watching {
        for signal in [libc::SIGINT, libc::SIGTERM] {
            if ignored(signal) {
                continue;
            }
            // Handlers run in the order they were registered: the shutdown
            // sees the flag as it was before this signal, so only a second
            // signal exits at once.
            let install = signal_hook::flag::register_conditional_shutdown(
                signal,
                i32::from(exit_code(signal)),
                &STOP,
            )
            .and_then(|_| signal_hook::flag::register_usize(signal, &SIGNAL, signal as usize))
            .and_then(|_| signal_hook::flag::register(signal, &STOP));
            install.map_err(|e| {
                Error::system(
                    format!("cannot install the {} handler", signal_name(signal)),
                    e,
                )
            })?;
        }
        *watching = true;
    }
    Ok(&STOP)
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
pub fn requested() -> Option<i32> {
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
pub fn check() -> Result<()> {
    match requested() {
        Some(signal) => Err(Error::Interrupted(signal)),
        None => Ok(()),
    }
}

/// The exit code of a process stopped by `signal`: 128 + its number.
pub fn exit_code(signal: i32) -> u8 {
    u8::try_from(128 + signal).unwrap_or(u8::MAX)
}

/// `SIGINT (Ctrl-C)`, `SIGTERM`: how error messages name a signal.
pub fn signal_name(signal: i32) -> &'static str {
    match signal {
        libc::SIGINT => "SIGINT (Ctrl-C)",
        libc::SIGTERM => "SIGTERM",
        _ => "a signal",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_follow_the_shell() {
        assert_eq!(exit_code(libc::SIGINT), 130);
        assert_eq!(exit_code(libc::SIGTERM), 143);
        assert_eq!(signal_name(libc::SIGINT), "SIGINT (Ctrl-C)");
    }

    #[test]
    fn nothing_is_requested_without_a_signal() {
        // Not watching here: the handlers would outlive the test and keep
        // Ctrl-C from stopping this test binary.
        assert_eq!(requested(), None);
        assert!(check().is_ok());
    }
}
