//! What serve frees goes back to the system.
//!
//! glibc's malloc keeps the memory a thread frees in that thread's arena
//! for its next allocations, and returns it to the system only from the
//! top of an arena. So a burst that ends (thousands of connections that
//! each held a request's buffers, many bodies in flight) leaves its peak
//! resident. Three settings make serve's anonymous memory follow what it
//! holds without making it pay again for memory it reuses at once:
//!
//! - the mmap threshold is fixed ([`MMAP_FROM`]), so a block that large
//!   (a large body loaded whole) is a mapping of its own, unmapped when
//!   freed. Left to itself, glibc raises the threshold to the largest
//!   mapped block ever freed (up to 32 MiB), after which such blocks come
//!   from the arenas and stay there;
//! - free() gives back the top of an arena only past [`KEEP_ON_TOP`].
//!   Fixing the mmap threshold also fixes this one at glibc's 128 KiB,
//!   and the encoders' state of each file the write API publishes (the
//!   brotli encoder's hash table alone is 1 MiB) would be returned and
//!   then faulted in and zeroed again for the next file. Both thresholds
//!   sit above that state;
//! - [`Releaser`] calls `malloc_trim`, which gives the arenas' free pages
//!   back (`madvise`). It walks every free block under the arenas' locks,
//!   a few milliseconds with tens of megabytes in small free blocks, so
//!   it runs at once when the process has grown by [`WORTH_RELEASING`]
//!   (looked at several times a second: a burst of connections, each
//!   with a request's buffers, leaves its free blocks between the blocks
//!   the connections keep), every second while it finds memory to give
//!   back or the process is above its resting size (the least it has
//!   held after a release: a burst that has just ended leaves its free
//!   blocks resident, with no growth to signal it), and every
//!   [`RELEASE_AT_MOST_EVERY`] once it is back at rest.
//!
//! Other C libraries (musl) return memory on their own: there none of
//! this does anything.

use std::time::{Duration, Instant};

/// Blocks of this size or more are mapped on their own.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MMAP_FROM: libc::c_int = 2 * 1024 * 1024;

/// Free memory at the top of an arena that free() leaves in place.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const KEEP_ON_TOP: libc::c_int = 8 * 1024 * 1024;

/// The longest wait between two releases.
pub(super) const RELEASE_AT_MOST_EVERY: Duration = Duration::from_secs(8);

/// Growth of anonymous memory since the last release that calls for the
/// next one at once, and the least a release must give back to keep the
/// pace at a second.
const WORTH_RELEASING: u64 = 4 << 20;

/// Sets the allocator up for a long-running server: see the module doc.
pub(super) fn tune() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[allow(unsafe_code)]
    // SAFETY: mallopt only changes malloc's parameters; it is called once,
    // before the server's threads allocate, and any value is valid.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_FROM);
        libc::mallopt(libc::M_TRIM_THRESHOLD, KEEP_ON_TOP);
    }
}

/// Decides when to give free memory back; [`Releaser::tick`] is called
/// several times a second.
pub(super) struct Releaser {
    /// Anonymous memory after the last release.
    after: u64,
    /// The least anonymous memory after any release: the size at rest.
    resting: u64,
    wait: Duration,
    next: Instant,
}

impl Default for Releaser {
    fn default() -> Releaser {
        Releaser {
            after: 0,
            resting: u64::MAX,
            wait: Duration::from_secs(1),
            next: Instant::now(),
        }
    }
}

impl Releaser {
    /// Releases free memory when it is time to: see the module doc.
    pub(super) fn tick(&mut self) {
        let Some(before) = anonymous_bytes() else {
            return;
        };
        let grew = before > self.after + WORTH_RELEASING;
        if !grew && Instant::now() < self.next {
            return;
        }
        trim();
        let after = anonymous_bytes().unwrap_or(before);
        self.released(before, after, grew);
        self.next = Instant::now() + self.wait;
    }

    /// Paces the next release after one that took anonymous memory from
    /// `before` to `after` bytes.
    fn released(&mut self, before: u64, after: u64, grew: bool) {
        self.resting = self.resting.min(after);
        let gave_back = before.saturating_sub(after) >= WORTH_RELEASING;
        let above_rest = after > self.resting + WORTH_RELEASING;
        self.wait = if gave_back || grew || above_rest {
            Duration::from_secs(1)
        } else {
            (self.wait * 2).min(RELEASE_AT_MOST_EVERY)
        };
        self.after = after;
    }
}

/// The process's anonymous resident memory (`RssAnon` of
/// `/proc/self/status`).
fn anonymous_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kib = status
        .lines()
        .find_map(|l| l.strip_prefix("RssAnon:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse::<u64>()
        .ok()?;
    Some(kib * 1024)
}

fn trim() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[allow(unsafe_code)]
    // SAFETY: malloc_trim takes malloc's locks itself and only releases
    // pages no allocation uses.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    #[test]
    fn a_burst_that_ended_is_looked_at_each_second_until_back_at_rest() {
        let mut releaser = Releaser::default();
        releaser.released(3 * MIB, 3 * MIB, false);
        // A long attack holds its memory: releases give nothing back, but
        // the process is above its resting size, so the pace stays at a
        // second and the end of the attack is noticed within it.
        releaser.released(40 * MIB, 40 * MIB, true);
        for _ in 0..10 {
            releaser.released(40 * MIB, 40 * MIB, false);
            assert_eq!(releaser.wait, Duration::from_secs(1));
        }
        releaser.released(40 * MIB, 3 * MIB, false);
        assert_eq!(releaser.wait, Duration::from_secs(1));
        // At rest with nothing to give back, the pace slows.
        let waits: Vec<u64> = (0..5)
            .map(|_| {
                releaser.released(3 * MIB, 3 * MIB, false);
                releaser.wait.as_secs()
            })
            .collect();
        assert_eq!(waits, [2, 4, 8, 8, 8]);
    }
}
