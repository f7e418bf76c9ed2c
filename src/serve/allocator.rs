//! What serve frees goes back to the system.
//!
//! glibc's malloc keeps the memory a thread frees in that thread's arena
//! for its next allocations, and returns it to the system only from the
//! top of an arena. So a burst that ends (thousands of connections that
//! each held a request's buffers, many bodies in flight) leaves its peak
//! resident. Two settings make serve's anonymous memory follow what it
//! holds:
//!
//! - the mmap threshold is fixed ([`MMAP_FROM`]), so a block that large
//!   (a body loaded whole, a piece buffer) is a mapping of its own,
//!   unmapped when freed. Left to itself, glibc raises the threshold to
//!   the largest mapped block ever freed (up to 32 MiB), after which such
//!   blocks come from the arenas and stay there;
//! - [`Releaser`] calls `malloc_trim`, which gives the arenas' free pages
//!   back (`madvise`). It walks every free block under the arenas' locks,
//!   a few milliseconds with tens of megabytes in small free blocks, so
//!   it runs at once when the process has grown by [`WORTH_RELEASING`]
//!   (looked at several times a second: a burst of connections, each
//!   with a request's buffers, leaves its free blocks between the blocks
//!   the connections keep), every second while it finds memory to give
//!   back, and every [`RELEASE_AT_MOST_EVERY`] otherwise.
//!
//! Other C libraries (musl) return memory on their own: there both do
//! nothing.

use std::time::{Duration, Instant};

/// Blocks of this size or more are mapped on their own.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MMAP_FROM: libc::c_int = 128 * 1024;

/// The longest wait between two releases.
pub const RELEASE_AT_MOST_EVERY: Duration = Duration::from_secs(8);

/// Growth of anonymous memory since the last release that calls for the
/// next one at once, and the least a release must give back to keep the
/// pace at a second.
const WORTH_RELEASING: u64 = 4 << 20;

/// Sets the allocator up for a long-running server: see the module doc.
pub fn tune() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[allow(unsafe_code)]
    // SAFETY: mallopt only changes malloc's parameters; it is called once,
    // before the server's threads allocate, and any value is valid.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_FROM);
    }
}

/// Decides when to give free memory back; [`Releaser::tick`] is called
/// several times a second.
pub struct Releaser {
    /// Anonymous memory after the last release.
    after: u64,
    wait: Duration,
    next: Instant,
}

impl Default for Releaser {
    fn default() -> Releaser {
        Releaser {
            after: 0,
            wait: Duration::from_secs(1),
            next: Instant::now(),
        }
    }
}

impl Releaser {
    /// Releases free memory when it is time to: see the module doc.
    pub fn tick(&mut self) {
        let Some(before) = anonymous_bytes() else {
            return;
        };
        let grew = before > self.after + WORTH_RELEASING;
        if !grew && Instant::now() < self.next {
            return;
        }
        trim();
        let after = anonymous_bytes().unwrap_or(before);
        self.wait = if before.saturating_sub(after) >= WORTH_RELEASING || grew {
            Duration::from_secs(1)
        } else {
            (self.wait * 2).min(RELEASE_AT_MOST_EVERY)
        };
        self.after = after;
        self.next = Instant::now() + self.wait;
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
