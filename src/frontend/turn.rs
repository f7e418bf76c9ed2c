//! A connection's response turn: whether the response to its last queued
//! request is still being written, and how its thread waits for that.
//!
//! Responses leave in request order, so a connection's thread waits for
//! the response in flight before it queues the next request of a pipeline,
//! answers a refused head, or closes. That wait is rare: a keep-alive
//! client sends its next request only once it has read the response, so
//! the thread is normally blocked reading the socket, not waiting here.
//! Completing a response is on every request's path, in the worker (or
//! send thread) that wrote it, and it is made to cost one atomic swap:
//! the mutex and condvar are touched only when the connection's thread
//! said it is waiting. (A condvar notified on every response costs a
//! `futex` wake syscall each time, waiter or not.)
//!
//! States: [`IDLE`] -> [`WRITING`] (a response is due) -> [`WAITED`]
//! (due, and a thread waits for it) -> [`IDLE`]. Only [`Turn::done`]
//! leaves `WRITING` or `WAITED` for `IDLE`; a waiter moves `WRITING` to
//! `WAITED` while it holds the mutex and re-checks the state in a loop
//! around the condvar, so a wake-up is never lost and a spurious one only
//! costs another check.

use super::lock;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Condvar, Mutex, PoisonError};

/// No response due: the connection's thread may queue a request.
const IDLE: u8 = 0;
/// A response is being written; nobody waits for it.
const WRITING: u8 = 1;
/// A response is being written and a thread waits (or is about to) on the
/// condvar: whoever completes it must wake it.
const WAITED: u8 = 2;

/// One connection's response turn, shared by its thread (which begins and
/// waits) and the worker or send thread that completes the response.
pub(super) struct Turn {
    state: AtomicU8,
    /// Held by a waiter from announcing itself until it sleeps on
    /// `written`, and taken by `done` before it notifies: a notify cannot
    /// fall between a waiter's check and its sleep.
    parked: Mutex<()>,
    written: Condvar,
}

impl Turn {
    pub(super) fn new() -> Turn {
        Turn {
            state: AtomicU8::new(IDLE),
            parked: Mutex::new(()),
            written: Condvar::new(),
        }
    }

    /// Waits for the response in flight, if any, then marks the next one as
    /// being written.
    pub(super) fn begin(&self) {
        loop {
            self.wait();
            if self
                .state
                .compare_exchange(IDLE, WRITING, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                return;
            }
        }
    }

    /// Returns once no response is being written: at once when none is.
    pub(super) fn wait(&self) {
        if self.state.load(Ordering::Acquire) == IDLE {
            return;
        }
        let mut parked = lock(&self.parked);
        loop {
            // Announce the wait, or see that the response is done.
            match self
                .state
                .compare_exchange(WRITING, WAITED, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) | Err(WAITED) => {}
                Err(_) => return,
            }
            parked = self
                .written
                .wait(parked)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// The response is written (or given up on). Wakes the waiting thread
    /// if there is one; returns whether there was.
    pub(super) fn done(&self) -> bool {
        if self.state.swap(IDLE, Ordering::AcqRel) != WAITED {
            return false;
        }
        // The waiter holds the lock until it sleeps on the condvar, so
        // taking it here means the notify reaches a sleeping waiter (or one
        // that will see `IDLE` first).
        drop(lock(&self.parked));
        self.written.notify_all();
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::mpsc;
    use std::thread;
    use std::time::{Duration, Instant};

    /// Generous: a lost wake-up blocks forever, a loaded machine only slows.
    const PATIENCE: Duration = Duration::from_secs(60);

    #[test]
    fn nothing_in_flight_returns_at_once_and_wakes_nobody() {
        let turn = Turn::new();
        let started = Instant::now();
        turn.wait();
        turn.begin();
        assert!(!turn.done(), "nobody waited, so nobody is woken");
        turn.wait();
        turn.wait();
        assert!(started.elapsed() < PATIENCE);
    }

    #[test]
    fn a_waiter_is_woken_when_the_response_is_done() {
        let turn = Arc::new(Turn::new());
        turn.begin();
        let (tx, rx) = mpsc::channel();
        let waiter = {
            let turn = turn.clone();
            thread::spawn(move || {
                turn.wait();
                tx.send(()).unwrap();
            })
        };
        // Let the waiter park (it must not return before `done`).
        assert!(rx.recv_timeout(Duration::from_millis(200)).is_err());
        assert_eq!(turn.state.load(Ordering::Acquire), WAITED);
        assert!(turn.done(), "the parked waiter is woken");
        rx.recv_timeout(PATIENCE)
            .expect("the waiter returns after done()");
        waiter.join().unwrap();
    }

    #[test]
    fn begin_waits_for_the_response_in_flight() {
        let turn = Arc::new(Turn::new());
        turn.begin();
        let (tx, rx) = mpsc::channel();
        let next = {
            let turn = turn.clone();
            thread::spawn(move || {
                turn.begin();
                tx.send(()).unwrap();
            })
        };
        assert!(rx.recv_timeout(Duration::from_millis(200)).is_err());
        turn.done();
        rx.recv_timeout(PATIENCE)
            .expect("begin returns after done()");
        next.join().unwrap();
        assert_eq!(turn.state.load(Ordering::Acquire), WRITING);
    }

    /// A connection's thread and a worker, alternating as fast as they can
    /// so that `done` races the waiter's announcement: no wake-up is lost.
    #[test]
    fn no_lost_wake_up_over_many_alternations() {
        const ROUNDS: u32 = 10_000;
        let turn = Arc::new(Turn::new());
        let (to_worker, requests) = mpsc::channel::<()>();
        let (progress, finished) = mpsc::channel::<u32>();
        let worker = {
            let turn = turn.clone();
            thread::spawn(move || {
                let mut woken = 0u32;
                for () in requests {
                    woken += u32::from(turn.done());
                }
                woken
            })
        };
        let conn = {
            let turn = turn.clone();
            thread::spawn(move || {
                for round in 0..ROUNDS {
                    turn.begin();
                    to_worker.send(()).unwrap();
                    // Half the rounds wait at once, half give the worker a
                    // head start, so both orders are taken.
                    if round % 2 == 1 {
                        thread::yield_now();
                    }
                    turn.wait();
                    progress.send(round).unwrap();
                }
            })
        };
        let mut seen = 0;
        while seen < ROUNDS {
            match finished.recv_timeout(PATIENCE) {
                Ok(_) => seen += 1,
                Err(_) => panic!("the waiter was not woken after {seen} rounds"),
            }
        }
        conn.join().unwrap();
        let woken = worker.join().unwrap();
        assert!(woken <= ROUNDS);
        assert_eq!(turn.state.load(Ordering::Acquire), IDLE);
    }
}
