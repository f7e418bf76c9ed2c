//! The ledger audit: per cell and registered thread, where the delay went,
//! and checks that the books balance.
//!
//! From seqlock snapshots of each thread's slot at t0 (window start), t1
//! (window end) and after the drain, with `G` read at the same moments:
//!
//! | check | level | rule |
//! |---|---|---|
//! | BALANCE | error | `Δl = credited + paid + absorbed − inherited + resynced`, exactly |
//! | NO-FEEDBACK | error | `ΔG ≤ Σ credited + largest single credit`: `G` grew only from credits |
//! | ABSORB≤IDLE | error | `absorbed ≤ blocked + 1 µs`: idle time pays at most 1 ns per ns |
//! | OUTSTANDING | warning | a thread not idle at the end still owes `> max(100 µs, 2%·ΔG)` after the drain |
//! | OVERSHOOT | warning | a thread's bank after the drain `> max(200 µs, 5%·ΔG)` |
//! | IDLE-PAYER | warning | `blocked ≥ 80%` of the window and `paid ≥ 50%·ΔG`: an unwrapped blocking wait |
//!
//! What it proves: during the window every running thread accounted for all
//! of `ΔG` (less its own credits) through pauses, its own speedup or real
//! idle time; nothing escaped beyond what is listed as outstanding; pauses
//! did not feed back into `G`; sleep imprecision stayed bounded.
//!
//! [`advice`] says, for each check, what a failure means for the results and
//! what the user can do; `ccc causal` prints it once per failed check.

use super::cores::CoreTime;
use crate::causal::engine::{Field, Snapshot};
use serde::Serialize;

/// One thread's accounts for one cell.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub thread: String,
    pub credited: u64,
    pub paid: u64,
    pub absorbed: u64,
    pub inherited: u64,
    /// Signed: a resync may lower `l`.
    pub resynced: i64,
    pub blocked: u64,
    pub overshoot: u64,
    pub debt0: u64,
    pub debt1: u64,
    pub debt_drain: u64,
    pub bank_end: u64,
    pub idle_end: bool,
    /// `Δl` over the window, signed.
    pub delta_l: i64,
    pub max_credit: u64,
    /// ns on a core over the window (0 where the kernel does not say).
    pub on_core: u64,
    /// ns ready to run but waiting for a core over the window.
    pub waiting_for_core: u64,
}

/// The snapshots of one thread around one cell.
pub(crate) struct Snapshots {
    pub t0: Snapshot,
    pub t1: Snapshot,
    pub drained: Snapshot,
}

/// `G` at the same three moments.
#[derive(Debug, Clone, Copy)]
pub(crate) struct GlobalDelay {
    pub g0: u64,
    pub g1: u64,
    pub g_drained: u64,
}

impl Row {
    pub(crate) fn new(thread: &str, s: &Snapshots, g: GlobalDelay) -> Row {
        let d = |f: Field| s.t1.get(f).wrapping_sub(s.t0.get(f));
        Row {
            thread: thread.to_string(),
            credited: d(Field::Credited),
            paid: d(Field::PaidSleep) + d(Field::PaidBank),
            absorbed: d(Field::Absorbed),
            inherited: d(Field::Inherited),
            resynced: d(Field::Resynced) as i64,
            blocked: d(Field::BlockedNs),
            overshoot: d(Field::Overshoot),
            debt0: g.g0.saturating_sub(s.t0.get(Field::L)),
            debt1: g.g1.saturating_sub(s.t1.get(Field::L)),
            debt_drain: g.g_drained.saturating_sub(s.drained.get(Field::L)),
            bank_end: s.drained.get(Field::Bank),
            idle_end: s.drained.get(Field::IdleNow) == 1,
            delta_l: d(Field::L) as i64,
            max_credit: s.t1.get(Field::MaxCredit),
            on_core: 0,
            waiting_for_core: 0,
        }
    }

    /// The same row with the thread's core time over the window.
    pub(crate) fn with_core_time(self, t: CoreTime) -> Row {
        Row {
            on_core: t.on_core,
            waiting_for_core: t.waiting,
            ..self
        }
    }

    /// The right-hand side of BALANCE.
    fn accounted(&self) -> i64 {
        (self.credited as i64)
            .wrapping_add(self.paid as i64)
            .wrapping_add(self.absorbed as i64)
            .wrapping_sub(self.inherited as i64)
            .wrapping_add(self.resynced)
    }
}

/// A failed check.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Finding {
    pub check: &'static str,
    /// `error` or `warning`.
    pub level: &'static str,
    /// The thread concerned, or `*` for the whole cell.
    pub thread: String,
    pub detail: String,
}

impl Finding {
    pub fn is_error(&self) -> bool {
        self.level == "error"
    }
}

/// What a failed check means for the results, and what to do about it, in
/// words for someone who has not read this module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Advice {
    pub meaning: &'static str,
    pub action: &'static str,
}

/// Reports on the profiler itself: its results cannot be trusted.
const PROFILER_BUG: &str = "the cells are left out of the results; this is a bug in ccc's profiler: please report it with the --json-out file";

/// The advice for one check (by its name, as in [`Finding::check`]).
pub(crate) fn advice(check: &str) -> Advice {
    let (meaning, action) = match check {
        "BALANCE" => (
            "a thread's delay books do not add up: its virtual clock moved by a different amount than its credits, pauses and waits explain",
            PROFILER_BUG,
        ),
        "NO-FEEDBACK" => (
            "the global delay grew by more than the sped-up site's visits explain, so pauses fed back into the delay",
            PROFILER_BUG,
        ),
        "ABSORB<=IDLE" => (
            "a thread was excused more delay for waiting than it spent waiting",
            PROFILER_BUG,
        ),
        "OUTSTANDING" => (
            "a thread still owed delay when the experiment ended, so it ran ahead of the virtual speedup and the cell predicts slightly too much",
            "harmless when rare; when many cells show it, the thread ran long stretches without reaching a check point (a long computation or a wait ccc does not know), so lengthen --window to make the end of each window weigh less",
        ),
        "OVERSHOOT" => (
            "a thread slept longer than the delay it owed (the system woke it late), so the cell slowed the program more than intended and predicts slightly too little",
            "common on a busy machine: stop other work on it, or run more --rounds so the medians discount these cells",
        ),
        "IDLE-PAYER" => (
            "a thread that was idle most of the window still paid delay, as if one of its waits were work; the program was slowed more than a real speedup would slow it, so the cell predicts too little",
            "expected for the HTTP workers with --external-wake owe (idle workers absorb no delay by design); otherwise a wait of that thread is not marked as idle: please report it with the --json-out file",
        ),
        _ => (
            "an audit check failed",
            "run with --ledger full for the per-thread accounts",
        ),
    };
    Advice { meaning, action }
}

/// Runs every check over one cell's rows; `elapsed` is the window's length.
pub(crate) fn audit(rows: &[Row], g: GlobalDelay, elapsed: u64) -> Vec<Finding> {
    let mut findings = Vec::new();
    let delta_g = g.g1.saturating_sub(g.g0);
    let mut push = |check, level, thread: &str, detail: String| {
        findings.push(Finding {
            check,
            level,
            thread: thread.to_string(),
            detail,
        })
    };
    for r in rows {
        if r.delta_l != r.accounted() {
            push(
                "BALANCE",
                "error",
                &r.thread,
                format!(
                    "l moved {} ns, the categories account for {} ns",
                    r.delta_l,
                    r.accounted()
                ),
            );
        }
        if r.absorbed > r.blocked + 1_000 {
            push(
                "ABSORB<=IDLE",
                "error",
                &r.thread,
                format!("absorbed {} ns while idle for {} ns", r.absorbed, r.blocked),
            );
        }
        let outstanding_limit = 100_000u64.max(delta_g / 50);
        if !r.idle_end && r.debt_drain > outstanding_limit {
            push(
                "OUTSTANDING",
                "warning",
                &r.thread,
                format!("still owed {} ns after the drain", r.debt_drain),
            );
        }
        let bank_limit = 200_000u64.max(delta_g / 20);
        if r.bank_end > bank_limit {
            push(
                "OVERSHOOT",
                "warning",
                &r.thread,
                format!("{} ns slept beyond what was owed", r.bank_end),
            );
        }
        if elapsed > 0 && r.blocked * 10 >= elapsed * 8 && delta_g > 0 && r.paid * 2 >= delta_g {
            push(
                "IDLE-PAYER",
                "warning",
                &r.thread,
                format!(
                    "idle {}% of the window, yet paid {} of the {} ns of delay inserted",
                    r.blocked * 100 / elapsed,
                    r.paid,
                    delta_g
                ),
            );
        }
    }
    let credited: u64 = rows.iter().map(|r| r.credited).sum();
    let largest = rows.iter().map(|r| r.max_credit).max().unwrap_or(0);
    if delta_g > credited + largest {
        push(
            "NO-FEEDBACK",
            "error",
            "*",
            format!("G grew {delta_g} ns, credits explain {credited} ns (+{largest})"),
        );
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::causal::engine::FIELDS;

    fn snap(pairs: &[(Field, u64)]) -> Snapshot {
        let mut v = [0u64; FIELDS];
        for (f, x) in pairs {
            v[*f as usize] = *x;
        }
        Snapshot(v)
    }

    fn g(g0: u64, g1: u64) -> GlobalDelay {
        GlobalDelay {
            g0,
            g1,
            g_drained: g1,
        }
    }

    #[test]
    fn balanced_books_pass() {
        let s = Snapshots {
            t0: snap(&[(Field::L, 100)]),
            t1: snap(&[
                (Field::L, 400),
                (Field::Credited, 100),
                (Field::PaidSleep, 250),
                (Field::Inherited, 50),
                (Field::MaxCredit, 100),
            ]),
            drained: snap(&[(Field::L, 400)]),
        };
        let row = Row::new("w", &s, g(100, 200));
        let found = audit(&[row], g(100, 200), 1_000_000);
        assert!(found.is_empty(), "{found:?}");
    }

    #[test]
    fn each_violation_is_named() {
        let s = Snapshots {
            t0: snap(&[]),
            t1: snap(&[
                (Field::L, 999),
                (Field::Absorbed, 5_000),
                (Field::BlockedNs, 100),
            ]),
            drained: snap(&[(Field::L, 0), (Field::Bank, 10_000_000)]),
        };
        let row = Row::new(
            "w",
            &s,
            GlobalDelay {
                g0: 0,
                g1: 2_000_000,
                g_drained: 2_000_000,
            },
        );
        let found: Vec<&str> = audit(&[row], g(0, 2_000_000), 10_000_000)
            .iter()
            .map(|f| f.check)
            .collect();
        for check in [
            "BALANCE",
            "ABSORB<=IDLE",
            "OUTSTANDING",
            "OVERSHOOT",
            "NO-FEEDBACK",
        ] {
            assert!(found.contains(&check), "{check} missing from {found:?}");
        }
    }

    #[test]
    fn idle_payers_are_flagged() {
        let s = Snapshots {
            t0: snap(&[]),
            t1: snap(&[
                (Field::L, 900),
                (Field::PaidSleep, 900),
                (Field::BlockedNs, 9_000),
                (Field::Credited, 0),
            ]),
            drained: snap(&[(Field::L, 1_000), (Field::IdleNow, 1)]),
        };
        let row = Row::new("w", &s, g(0, 1_000));
        let other = Row {
            credited: 1_000,
            max_credit: 1_000,
            delta_l: 1_000,
            ..row.clone()
        };
        let found = audit(
            &[
                row,
                Row {
                    thread: "a".into(),
                    paid: 0,
                    blocked: 0,
                    ..other
                },
            ],
            g(0, 1_000),
            10_000,
        );
        assert!(found.iter().any(|f| f.check == "IDLE-PAYER"), "{found:?}");
    }

    #[test]
    fn every_check_has_its_own_advice() {
        let generic = advice("NO-SUCH-CHECK");
        for check in [
            "BALANCE",
            "NO-FEEDBACK",
            "ABSORB<=IDLE",
            "OUTSTANDING",
            "OVERSHOOT",
            "IDLE-PAYER",
        ] {
            let a = advice(check);
            assert_ne!(a, generic, "{check} has no advice of its own");
            assert!(!a.meaning.is_empty() && !a.action.is_empty());
        }
        assert!(advice("IDLE-PAYER").action.contains("--external-wake owe"));
    }
}
