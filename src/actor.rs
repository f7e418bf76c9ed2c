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
//! - When every handle is dropped the loop ends and the thread exits;
//!   [`Running::join`] waits for that.
//! - Every message and reply carries a causal-profiler [`Stamp`] (zero-sized
//!   without the `causal` feature), and the loop and `call` apply the
//!   profiler's send and receive rules, so virtual delays travel with
//!   requests and replies and an idle actor never pays for time it waited.

use crate::causal::{self, Stamp};
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
}

impl<M> Clone for Handle<M> {
    fn clone(&self) -> Self {
        Handle {
            inbox: self.inbox.clone(),
            name: self.name,
        }
    }
}

impl<M: Send> Handle<M> {
    /// Sends the message `make` builds around a fresh reply slot, then waits
    /// for the reply.
    pub fn call<T>(&self, make: impl FnOnce(Reply<T>) -> M) -> Result<T, Stopped> {
        self.ask(make)?.wait()
    }

    /// Sends a request without waiting: several requests to different
    /// actors can then be in flight at once (fork), and waited for in any
    /// order (join).
    pub fn ask<T>(&self, make: impl FnOnce(Reply<T>) -> M) -> Result<Pending<T>, Stopped> {
        let (tx, rx) = mpsc::sync_channel(1);
        let stamp = causal::send();
        self.inbox
            .send((make(Reply(tx)), stamp))
            .map_err(|_| Stopped(self.name))?;
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
            run(actor, inbox_rx);
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

/// The owner loop: messages in order, housekeeping in between.
fn run<A: Actor>(mut actor: A, inbox: Receiver<(A::Msg, Stamp)>) {
    let every = actor.housekeeping_every();
    let mut next_housekeeping = every.map(|d| Instant::now() + d);
    loop {
        causal::check();
        // A message already queued was sent while this thread was busy; only
        // an empty inbox makes it idle (the profiler's receive rule differs).
        let received = match inbox.try_recv() {
            Ok(envelope) => Some(envelope),
            Err(TryRecvError::Disconnected) => return,
            Err(TryRecvError::Empty) => {
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

    #[test]
    fn init_errors_come_back_from_spawn() {
        let result =
            spawn::<Counter, TestError>("broken", 1, || Err(TestError("no such database".into())));
        let err = result.err().unwrap();
        assert_eq!(err.0, "no such database");
    }
}
