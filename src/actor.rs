//! A small actor runtime on std threads: one thread owns some state and
//! handles typed messages from a bounded inbox; any number of cheap, cloneable
//! [`Handle`]s send it requests and wait for replies.
//!
//! ```text
//! worker --Handle::call(|reply| Msg::Get { .., reply })--> [bounded inbox] --> actor thread
//!        <------------------ reply slot (one per call) -------------------   (owns the state)
//! ```
//!
//! - The state is built *inside* the actor thread by an `init` closure, and
//!   its result comes back before [`spawn`] returns: a bad database path fails
//!   at startup, and state that is not `Send` (a SQLite connection with its
//!   statement cache) never crosses threads.
//! - The inbox is bounded, so a flood of callers queues in their own threads
//!   instead of growing memory without limit.
//! - [`Actor::housekeeping`] runs at most every [`Actor::housekeeping_every`]
//!   between messages (and while idle), for periodic work such as noticing
//!   that another process changed the database.
//! - A *busy run* is the messages the actor handles back to back, each taken
//!   while it was still busy with the one before. [`Actor::more_queued`]
//!   tells the actor, before a message, that others wait behind it (the
//!   handles count what they have sent and the loop what it has taken), and
//!   [`Actor::inbox_empty`] that the run is over: the loop found the inbox
//!   empty and is about to wait. Work worth sharing across a run (the
//!   store's SQLite read transaction) starts at the one and ends at the
//!   other; it runs while the actor is still busy, before the profiler's
//!   idle period begins. An actor may let a run linger
//!   ([`Actor::lingering`]): the loop then waits, idle, up to that instant
//!   for one more message before the run ends.
//! - When every handle is dropped the loop ends and the thread exits;
//!   [`Running::join`] waits for that.
//! - Every message and reply carries a causal-profiler [`Stamp`] (zero-sized
//!   without the `causal` feature), and the loop and `call` apply the
//!   profiler's send and receive rules, so virtual delays travel with
//!   requests and replies and an idle actor never pays for time it waited.

use crate::causal::{self, Stamp};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TryRecvError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// State owned by an actor thread.
pub trait Actor: 'static {
    type Msg: Send + 'static;

    /// Handles one message; replies go through the reply slot it carries.
    fn handle(&mut self, msg: Self::Msg);

    /// How often [`Actor::housekeeping`] should run; None for never.
    fn housekeeping_every(&self) -> Option<Duration> {
        None
    }

    /// Periodic work between messages.
    fn housekeeping(&mut self) {}

    /// Called just before [`Actor::handle`] when other messages wait behind
    /// the one it is given: the actor is in a busy run, which lasts until
    /// [`Actor::inbox_empty`].
    fn more_queued(&mut self) {}

    /// Called when the loop finds the inbox empty, just before it waits for
    /// the next message or for housekeeping (and so again after each idle
    /// housekeeping tick): the end of a busy run.
    fn inbox_empty(&mut self) {}

    /// Until when a run may go on after the inbox emptied: the loop waits
    /// (idle) that long for one more message before it calls
    /// [`Actor::inbox_empty`]. None (the default): the run ends at once.
    fn lingering(&self) -> Option<Instant> {
        None
    }
}

/// The sending side of a one-shot reply.
pub struct Reply<T>(SyncSender<(T, Stamp)>);

impl<T> Reply<T> {
    /// Sends the reply; a caller that gave up waiting is not an error.
    pub fn send(self, value: T) {
        let stamp = causal::send();
        let _ = self.0.send((value, stamp));
    }
}

/// The actor stopped (its thread ended or panicked) before replying.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the {0} actor has stopped")]
pub struct Stopped(pub &'static str);

/// The actor's thread could not be started, or panicked while starting.
#[derive(Debug, thiserror::Error)]
#[error("cannot start the {name} actor: {why}")]
pub struct StartError {
    pub name: &'static str,
    pub why: String,
}

/// A cloneable way to reach an actor.
pub struct Handle<M> {
    inbox: SyncSender<(M, Stamp)>,
    name: &'static str,
    /// Messages sent (or being sent) and not yet taken by the loop: how the
    /// loop knows that more wait behind the one it took (a std channel has
    /// no length). Counted before the send, so a sender blocked on a full
    /// inbox counts too.
    queued: Arc<AtomicUsize>,
}

impl<M> Clone for Handle<M> {
    fn clone(&self) -> Self {
        Handle {
            inbox: self.inbox.clone(),
            name: self.name,
            queued: self.queued.clone(),
        }
    }
}

impl<M: Send> Handle<M> {
    /// Sends the message `make` builds around a fresh reply slot, then waits
    /// for the reply.
    pub fn call<T>(&self, make: impl FnOnce(Reply<T>) -> M) -> Result<T, Stopped> {
        self.ask(make)?.wait()
    }

    /// Sends a message that wants no reply, when the inbox has room: a
    /// full inbox, or a stopped actor, drops it. Says whether it was sent.
    pub(crate) fn try_tell(&self, msg: M) -> bool {
        let stamp = causal::send();
        self.queued.fetch_add(1, Ordering::Relaxed);
        let sent = self.inbox.try_send((msg, stamp)).is_ok();
        if !sent {
            self.queued.fetch_sub(1, Ordering::Relaxed);
        }
        sent
    }

    /// Sends a request without waiting: several requests to different
    /// actors can then be in flight at once (fork), and waited for in any
    /// order (join).
    pub fn ask<T>(&self, make: impl FnOnce(Reply<T>) -> M) -> Result<Pending<T>, Stopped> {
        let (tx, rx) = mpsc::sync_channel(1);
        let stamp = causal::send();
        // A hint, read by the loop alone: no ordering with other memory.
        self.queued.fetch_add(1, Ordering::Relaxed);
        if self.inbox.send((make(Reply(tx)), stamp)).is_err() {
            self.queued.fetch_sub(1, Ordering::Relaxed);
            return Err(Stopped(self.name));
        }
        Ok(Pending {
            reply: rx,
            name: self.name,
        })
    }
}

/// A reply on its way (see [`Handle::ask`]).
pub struct Pending<T> {
    reply: Receiver<(T, Stamp)>,
    name: &'static str,
}

impl<T> Pending<T> {
    /// Waits for the reply.
    pub fn wait(self) -> Result<T, Stopped> {
        // A reply that is already here arrived while this thread was busy
        // (say, waiting on another reply of a fork): it is queued, not a
        // wake-up, and the profiler's receive rule differs.
        let (value, stamp) = match self.reply.try_recv() {
            Ok(reply) => reply,
            Err(TryRecvError::Disconnected) => return Err(Stopped(self.name)),
            Err(TryRecvError::Empty) => {
                causal::idle_begin();
                self.reply.recv().map_err(|_| Stopped(self.name))?
            }
        };
        causal::receive(stamp);
        Ok(value)
    }
}

/// A running actor: its handle and its thread.
pub struct Running<M> {
    // Field order matters: the handle must drop before the thread is joined,
    // or the loop would wait for a message forever.
    pub handle: Handle<M>,
    thread: JoinHandle<()>,
}

impl<M> Running<M> {
    /// Drops this handle and waits for the actor to finish; other clones of
    /// the handle must be gone too for it to stop.
    pub fn join(self) {
        drop(self.handle);
        let _ = self.thread.join();
    }
}

/// Starts an actor on a thread called `name`, with an inbox of `capacity`
/// messages. `init` runs on the new thread; its error is returned here and
/// no loop starts.
pub fn spawn<A, E>(
    name: &'static str,
    capacity: usize,
    init: impl FnOnce() -> Result<A, E> + Send + 'static,
) -> Result<Running<A::Msg>, E>
where
    A: Actor,
    E: Send + 'static + From<StartError>,
{
    let (inbox_tx, inbox_rx) = mpsc::sync_channel::<(A::Msg, Stamp)>(capacity);
    let queued = Arc::new(AtomicUsize::new(0));
    let taken = queued.clone();
    let (ready_tx, ready_rx) = mpsc::sync_channel::<Result<(), E>>(1);
    let thread = std::thread::Builder::new()
        .name(name.to_string())
        .spawn(move || {
            causal::thread_started();
            causal::register_thread(name);
            let actor = match init() {
                Ok(actor) => {
                    let _ = ready_tx.send(Ok(()));
                    actor
                }
                Err(e) => {
                    let _ = ready_tx.send(Err(e));
                    return;
                }
            };
            run(actor, inbox_rx, &taken);
        })
        .map_err(|e| StartError {
            name,
            why: e.to_string(),
        })?;
    match ready_rx.recv() {
        Ok(Ok(())) => Ok(Running {
            handle: Handle {
                inbox: inbox_tx,
                name,
                queued,
            },
            thread,
        }),
        Ok(Err(e)) => {
            let _ = thread.join();
            Err(e)
        }
        Err(_) => {
            let _ = thread.join();
            Err(StartError {
                name,
                why: "it panicked".into(),
            }
            .into())
        }
    }
}

/// The owner loop: messages in order, housekeeping in between; `queued`
/// is the handles' count of messages sent and not yet taken.
fn run<A: Actor>(mut actor: A, inbox: Receiver<(A::Msg, Stamp)>, queued: &AtomicUsize) {
    let every = actor.housekeeping_every();
    let mut next_housekeeping = every.map(|d| Instant::now() + d);
    loop {
        causal::check();
        // A message already queued was sent while this thread was busy; only
        // an empty inbox makes it idle (the profiler's receive rule differs).
        let received = match inbox.try_recv() {
            Ok(envelope) => Some(envelope),
            Err(TryRecvError::Disconnected) => return,
            Err(TryRecvError::Empty) => 'empty: {
                if let Some(until) = actor.lingering() {
                    causal::idle_begin();
                    match inbox.recv_timeout(until.saturating_duration_since(Instant::now())) {
                        Ok(envelope) => break 'empty Some(envelope),
                        Err(RecvTimeoutError::Timeout) => causal::wake_without_message(),
                        Err(RecvTimeoutError::Disconnected) => return,
                    }
                }
                // Still busy: what ends a run is work, not waiting.
                actor.inbox_empty();
                causal::idle_begin();
                match next_housekeeping {
                    None => match inbox.recv() {
                        Ok(envelope) => Some(envelope),
                        Err(_) => return,
                    },
                    Some(due) => {
                        match inbox.recv_timeout(due.saturating_duration_since(Instant::now())) {
                            Ok(envelope) => Some(envelope),
                            Err(RecvTimeoutError::Timeout) => None,
                            Err(RecvTimeoutError::Disconnected) => return,
                        }
                    }
                }
            }
        };
        if let Some((_, stamp)) = &received {
            causal::receive(*stamp);
        }
        if let (Some(due), Some(every)) = (next_housekeeping, every)
            && Instant::now() >= due
        {
            // Housekeeping is off the request path: a poll timeout that
            // leads to work ends the idle period without a stamp.
            causal::wake_without_message();
            actor.housekeeping();
            next_housekeeping = Some(Instant::now() + every);
        }
        if let Some((msg, _)) = received {
            let before = queued.fetch_sub(1, Ordering::Relaxed);
            if before > 1 {
                actor.more_queued();
            }
            actor.handle(msg);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU32, Ordering};

    struct Counter {
        total: u64,
        ticks: Arc<AtomicU32>,
    }

    enum Msg {
        Add(u64, Reply<u64>),
        Fail(Reply<()>),
    }

    impl Actor for Counter {
        type Msg = Msg;
        fn handle(&mut self, msg: Msg) {
            match msg {
                Msg::Add(n, reply) => {
                    self.total += n;
                    reply.send(self.total);
                }
                Msg::Fail(_reply) => {} // dropped without a reply
            }
        }
        fn housekeeping_every(&self) -> Option<Duration> {
            Some(Duration::from_millis(5))
        }
        fn housekeeping(&mut self) {
            self.ticks.fetch_add(1, Ordering::Relaxed);
        }
    }

    #[derive(Debug)]
    struct TestError(String);
    impl From<StartError> for TestError {
        fn from(e: StartError) -> Self {
            TestError(e.to_string())
        }
    }

    #[test]
    fn calls_are_answered_in_order_from_many_threads() {
        let ticks = Arc::new(AtomicU32::new(0));
        let t = ticks.clone();
        let actor = spawn::<_, TestError>("counter", 4, move || Ok(Counter { total: 0, ticks: t }))
            .unwrap();
        std::thread::scope(|s| {
            for _ in 0..8 {
                let h = actor.handle.clone();
                s.spawn(move || {
                    for _ in 0..100 {
                        h.call(|r| Msg::Add(1, r)).unwrap();
                    }
                });
            }
        });
        assert_eq!(actor.handle.call(|r| Msg::Add(0, r)).unwrap(), 800);
        std::thread::sleep(Duration::from_millis(30));
        assert!(
            ticks.load(Ordering::Relaxed) >= 2,
            "housekeeping ran while idle"
        );
        let dropped = actor.handle.call(Msg::Fail);
        assert_eq!(dropped, Err(Stopped("counter")));
        actor.join();
    }

    /// What the loop told a [`Runs`] actor, in order.
    #[derive(Debug, PartialEq, Eq)]
    enum Told {
        Handle(u32),
        MoreQueued,
        InboxEmpty,
    }

    /// Records the hooks the loop calls; `Hold` blocks the loop until told.
    struct Runs {
        told: SyncSender<Told>,
    }

    enum RunMsg {
        Hold(SyncSender<()>, Receiver<()>, Reply<()>),
        Note(u32, Reply<()>),
    }

    impl Actor for Runs {
        type Msg = RunMsg;
        fn handle(&mut self, msg: RunMsg) {
            match msg {
                RunMsg::Hold(entered, release, reply) => {
                    let _ = self.told.send(Told::Handle(0));
                    let _ = entered.send(());
                    let _ = release.recv();
                    reply.send(());
                }
                RunMsg::Note(n, reply) => {
                    let _ = self.told.send(Told::Handle(n));
                    reply.send(());
                }
            }
        }
        fn more_queued(&mut self) {
            let _ = self.told.send(Told::MoreQueued);
        }
        fn inbox_empty(&mut self) {
            let _ = self.told.send(Told::InboxEmpty);
        }
    }

    #[test]
    fn a_busy_run_is_told_to_the_actor_from_its_first_message_to_its_end() {
        let (told_tx, told) = mpsc::sync_channel(100);
        let actor = spawn::<_, TestError>("runs", 8, move || Ok(Runs { told: told_tx })).unwrap();
        let (entered_tx, entered) = mpsc::sync_channel(1);
        let (release_tx, release) = mpsc::sync_channel(1);
        let held = actor
            .handle
            .ask(|r| RunMsg::Hold(entered_tx, release, r))
            .unwrap();
        entered.recv().unwrap();
        // The loop is busy with `Hold`: these three queue behind it.
        let pending: Vec<_> = (1..=3)
            .map(|n| actor.handle.ask(|r| RunMsg::Note(n, r)).unwrap())
            .collect();
        release_tx.send(()).unwrap();
        held.wait().unwrap();
        for p in pending {
            p.wait().unwrap();
        }
        let mut seen = Vec::new();
        loop {
            let next = told.recv_timeout(Duration::from_secs(10)).unwrap();
            if seen.is_empty() && next == Told::InboxEmpty {
                continue; // the loop may or may not have waited for `Hold`
            }
            let done = next == Told::InboxEmpty;
            seen.push(next);
            if done {
                break;
            }
        }
        assert_eq!(
            seen,
            [
                Told::Handle(0),
                Told::MoreQueued,
                Told::Handle(1),
                Told::MoreQueued,
                Told::Handle(2),
                Told::Handle(3),
                Told::InboxEmpty,
            ]
        );
        actor.join();
    }

    #[test]
    fn init_errors_come_back_from_spawn() {
        let result =
            spawn::<Counter, TestError>("broken", 1, || Err(TestError("no such database".into())));
        let err = result.err().unwrap();
        assert_eq!(err.0, "no such database");
    }
}
