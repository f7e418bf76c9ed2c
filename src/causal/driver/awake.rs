//! Keeps idle cores awake while a profile runs.
//!
//! Virtual speedup pauses threads by sleeping, so a cell that selects a
//! site leaves cores idle that the baseline cell keeps busy. An idle core
//! enters a sleep state, and waking a thread on it costs more than on a
//! running core: the exit latency of a C-state on bare metal, a halted
//! vCPU that the host must schedule again in a virtual machine. That cost
//! lands on every thread, including the load's clients, which the profiler
//! does not pause and so cannot account for: the pauses themselves slow the
//! program down beyond the delay they stand for, and the prediction comes
//! out low, by more than half of a site's worth in validation scenarios V5
//! and V6 on a small virtual machine; with cores kept awake the clients'
//! sleeps take as long in every cell and the prediction comes right
//! (figures: bench/CAUSAL.md section 5a).
//!
//! The remedy is what latency benchmarks do with `idle=poll`, without
//! needing root: one spinner per CPU the process may use, pinned to it and
//! scheduled under `SCHED_IDLE`. It runs only when nothing else on that
//! core can, and any thread that wakes there preempts it at once, so it
//! takes almost no time from the program (the kernel weights a `SCHED_IDLE`
//! thread far below any ordinary one); it only keeps the core
//! out of its sleep states. The price is power: every core shows busy for
//! the length of the profile. Under a CPU quota (a container limited to
//! fewer CPUs than it may run on) the spinners would spend the quota the
//! program needs, so they are not started there.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::thread::JoinHandle;

/// What idle cores do during a profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdleCores {
    /// A lowest-priority spinner per CPU keeps each core awake.
    Spin,
    /// Cores idle as the OS decides (deep sleep states included).
    Sleep,
}

/// The running spinners; dropping it stops and joins them.
pub(crate) struct KeepAwake {
    stop: Arc<AtomicBool>,
    spinners: Vec<JoinHandle<()>>,
}

impl KeepAwake {
    /// Starts one spinner per CPU this process may run on. Returns why
    /// none was started where that is impossible or unwise; spinners that
    /// could not be pinned or lowered to `SCHED_IDLE` exit at once rather
    /// than compete with the program.
    pub(crate) fn start() -> Result<KeepAwake, String> {
        let cpus = allowed_cpus()?;
        let usable = std::thread::available_parallelism().map_or(cpus.len(), |n| n.get());
        if usable < cpus.len() {
            return Err(format!(
                "a CPU quota limits this process to {usable} of the {} CPUs it may run on, and spinners would spend it",
                cpus.len()
            ));
        }
        let stop = Arc::new(AtomicBool::new(false));
        let (ready_tx, ready_rx) = mpsc::channel();
        let mut spinners = Vec::with_capacity(cpus.len());
        for cpu in cpus {
            let stop = stop.clone();
            let ready = ready_tx.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("keep-awake-{cpu}"))
                .spawn(move || {
                    let placed = pin_and_lower(cpu);
                    let ok = placed.is_ok();
                    let _ = ready.send(placed);
                    // The starter reads until every sender is gone.
                    drop(ready);
                    while ok && !stop.load(Ordering::Relaxed) {
                        std::hint::spin_loop();
                    }
                });
            match spawned {
                Ok(handle) => spinners.push(handle),
                Err(e) => {
                    let _ = ready_tx.send(Err(format!("cannot start a spinner: {e}")));
                }
            }
        }
        drop(ready_tx);
        let keep_awake = KeepAwake { stop, spinners };
        // Dropping `keep_awake` on an error stops the spinners that did start.
        for placed in ready_rx {
            placed?;
        }
        Ok(keep_awake)
    }

    /// How many spinners run.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.spinners.len()
    }
}

impl Drop for KeepAwake {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for spinner in self.spinners.drain(..) {
            let _ = spinner.join();
        }
    }
}

#[cfg(target_os = "linux")]
fn allowed_cpus() -> Result<Vec<usize>, String> {
    use rustix::thread::{CpuSet, sched_getaffinity};
    let set = sched_getaffinity(None).map_err(|e| format!("cannot read the CPU affinity: {e}"))?;
    Ok((0..CpuSet::MAX_CPU)
        .filter(|&cpu| set.is_set(cpu))
        .collect())
}

#[cfg(not(target_os = "linux"))]
fn allowed_cpus() -> Result<Vec<usize>, String> {
    Err("keeping cores awake needs Linux's SCHED_IDLE".into())
}

/// Pins the calling thread to `cpu` and moves it to `SCHED_IDLE`.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn pin_and_lower(cpu: usize) -> Result<(), String> {
    use rustix::thread::{CpuSet, sched_setaffinity};
    let mut set = CpuSet::new();
    set.set(cpu);
    sched_setaffinity(None, &set).map_err(|e| format!("cannot pin a spinner to CPU {cpu}: {e}"))?;
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: `param` is a valid sched_param that outlives the call; pid 0
    // is the calling thread, whose scheduling policy is all this changes.
    let rc = unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) };
    if rc != 0 {
        return Err(format!(
            "cannot move a spinner to SCHED_IDLE: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

#[cfg(not(target_os = "linux"))]
fn pin_and_lower(_cpu: usize) -> Result<(), String> {
    Err("keeping cores awake needs Linux's SCHED_IDLE".into())
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// The spinner threads of this process: (policy, allowed CPUs), read
    /// from /proc, so the test checks what the kernel was told.
    fn spinners() -> Vec<(u32, String)> {
        let mut found = Vec::new();
        for task in std::fs::read_dir("/proc/self/task")
            .expect("/proc/self/task")
            .flatten()
        {
            let dir = task.path();
            let comm = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
            if !comm.starts_with("keep-awake-") {
                continue;
            }
            let sched = std::fs::read_to_string(dir.join("sched")).unwrap_or_default();
            let policy = sched
                .lines()
                .find(|l| l.starts_with("policy"))
                .and_then(|l| l.split(':').nth(1))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(u32::MAX);
            let status = std::fs::read_to_string(dir.join("status")).unwrap_or_default();
            let cpus = status
                .lines()
                .find(|l| l.starts_with("Cpus_allowed_list"))
                .and_then(|l| l.split(':').nth(1))
                .map(|v| v.trim().to_string())
                .unwrap_or_default();
            found.push((policy, cpus));
        }
        found.sort_by(|a, b| a.1.cmp(&b.1));
        found
    }

    #[test]
    fn one_idle_policy_spinner_pinned_to_each_cpu_until_dropped() {
        let cpus = allowed_cpus().expect("affinity");
        let usable = std::thread::available_parallelism()
            .expect("parallelism")
            .get();
        if usable < cpus.len() {
            // Under a quota no spinner starts, by design.
            assert!(KeepAwake::start().is_err());
            return;
        }
        let awake = KeepAwake::start().expect("spinners start");
        assert_eq!(awake.len(), cpus.len());
        let found = spinners();
        let mut expected: Vec<(u32, String)> = cpus
            .iter()
            .map(|cpu| (libc::SCHED_IDLE as u32, cpu.to_string()))
            .collect();
        expected.sort_by(|a, b| a.1.cmp(&b.1));
        assert_eq!(found, expected);
        drop(awake);
        // A joined thread's entry leaves /proc a moment after the join
        // returns (the kernel wakes the joiner before it reaps the task).
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while !spinners().is_empty() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(spinners().is_empty(), "spinners outlived their guard");
    }
}
