//! Each registered thread's time on a core and waiting for one, per cell.
//!
//! A virtual speedup pauses threads; a real one also changes who gets a
//! core. To tell the two apart when a prediction and a real speedup
//! disagree, the ledger records, for every registered thread and cell, the
//! time it ran and the time it sat ready in a run queue, from the kernel's
//! schedstats (`/proc/self/task/TID/schedstat`), read by the controller at
//! the start and the end of the window. They are in `--json-out` and
//! `--ledger full`.
//!
//! What they showed in validation scenario V5 (figures: bench/CAUSAL.md
//! section 5): the threads waited for a core the same share of their ready
//! time whether V5 was predicted right or not, so that wait is the cost of
//! waking a thread on a virtual machine, not cores taken by others.

/// A thread's time on a core and ready but waiting for one, in ns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct CoreTime {
    pub on_core: u64,
    pub waiting: u64,
}

impl CoreTime {
    /// What happened between `self` and the later reading `later`.
    pub(crate) fn until(self, later: CoreTime) -> CoreTime {
        CoreTime {
            on_core: later.on_core.saturating_sub(self.on_core),
            waiting: later.waiting.saturating_sub(self.waiting),
        }
    }
}

/// Reads the kernel's counters of the thread `tid` of this process; `None`
/// when it has exited or the kernel keeps no schedstats.
pub(crate) fn of_thread(tid: i32) -> Option<CoreTime> {
    let text = std::fs::read_to_string(format!("/proc/self/task/{tid}/schedstat")).ok()?;
    parse(&text)
}

/// `schedstat` holds three numbers: ns on a core, ns waiting in a run
/// queue, and how many times the thread was run.
fn parse(text: &str) -> Option<CoreTime> {
    let mut fields = text.split_ascii_whitespace().map(str::parse::<u64>);
    Some(CoreTime {
        on_core: fields.next()?.ok()?,
        waiting: fields.next()?.ok()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedstat_is_read_as_time_on_a_core_then_time_waiting() {
        assert_eq!(
            parse("1234 567 89\n"),
            Some(CoreTime {
                on_core: 1234,
                waiting: 567
            })
        );
        assert_eq!(parse(""), None);
        assert_eq!(parse("12 x 3"), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_spinning_thread_is_seen_on_a_core() {
        let tid = rustix::thread::gettid().as_raw_nonzero().get();
        let Some(before) = of_thread(tid) else {
            // A kernel built without schedstats: nothing to check.
            return;
        };
        let start = std::time::Instant::now();
        while start.elapsed() < std::time::Duration::from_millis(30) {
            std::hint::black_box(0u64);
        }
        let after = of_thread(tid).expect("schedstat read once, so it reads again");
        let spent = before.until(after);
        assert!(
            spent.on_core + spent.waiting >= 25_000_000,
            "30 ms of spinning shows as {spent:?}"
        );
    }
}
