//! What a connection is doing and when it must have done it: the
//! [`Watch`] each connection's task and its socket share, and the
//! [`Registry`] of every open connection's watch.
//!
//! ```text
//!   accept --> HEAD --head complete--> ANSWERING --last response left--> IDLE
//!               ^   (header timeout)     (no deadline)   (keep-alive timeout)
//!               '-----------------------first byte of the next request----'
//! ```
//!
//! A write the client does not take starts the send timeout, whatever the
//! phase. Deadlines are nginx's: a whole head within `--header-timeout`
//! of its first byte (so a head or a body sent a byte at a time is cut
//! off), an idle keep-alive connection for `--keepalive-timeout`, a
//! response that the client stops reading for `--send-timeout`. An idle
//! HTTP/1 connection is parked after [`PARK_AFTER`]: hyper's buffers are
//! freed until the client sends again (nginx frees an idle keep-alive
//! connection's buffers the same way).
//!
//! Closing is asked from outside: shutdown drains (a request in flight
//! finishes; an HTTP/1 connection answers what comes within
//! [`DRAIN_LINGER`] with `Connection: close`, so a client that sends just
//! as the server stops still gets its answer; HTTP/2 gets GOAWAY), and the
//! accept loop reclaims idle connections at the cap (closed at once).

use super::limits::Limits;
use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::task::{Context, Poll, ready};
use std::time::{Duration, Instant};
use tokio::sync::Notify;
use tokio::sync::futures::Notified;
use tokio::time::Sleep;

/// An HTTP/1 connection idle this long gives hyper's buffers back; a
/// client that keeps sending never waits for a new connection state.
pub(super) const PARK_AFTER: Duration = Duration::from_millis(100);

/// How long a connection asked to close (reclaimed, idle, or past the
/// drain's linger) with no request in flight may take to finish writing
/// before it is cut off.
pub(super) const CLOSING_GRACE: Duration = Duration::from_secs(1);
/// How long a draining HTTP/1 connection with nothing in flight waits for
/// one more request (answered with `Connection: close`) before it is
/// closed: a client that sends as the server closes would otherwise see
/// its request go unanswered.
pub(super) const DRAIN_LINGER: Duration = Duration::from_secs(1);
/// The most connections without a request closed at once when the cap is
/// reached (nginx drains up to 32 of its reusable connections).
const RECLAIM_BATCH: usize = 32;

const HEAD: u8 = 0;
const ANSWERING: u8 = 1;
const IDLE: u8 = 2;
const CLOSING: u8 = 3;

pub(super) const KEEP: u8 = 0;
/// Shutdown: finish what is in flight; HTTP/1 answers requests until its
/// linger with `Connection: close`, HTTP/2 gets GOAWAY.
pub(super) const DRAIN: u8 = 1;
/// Make room at the cap: a connection without a request to answer closes
/// now (HTTP/2: GOAWAY first).
pub(super) const RECLAIM: u8 = 2;
/// Close now.
pub(super) const ABORT: u8 = 3;

/// What a deadline is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Reason {
    Header,
    Idle,
    /// An idle HTTP/1 connection gives its buffers back.
    Park,
    Send,
    Closing,
}

/// Milliseconds since the first call (0 is never returned: it means
/// "none" in the watch's fields).
pub(super) fn now_ms() -> u64 {
    static BASE: OnceLock<Instant> = OnceLock::new();
    let base = *BASE.get_or_init(Instant::now);
    base.elapsed().as_millis() as u64 + 1
}

pub(super) fn instant_of(ms: u64) -> tokio::time::Instant {
    static BASE: OnceLock<(u64, tokio::time::Instant)> = OnceLock::new();
    let (at, base) = *BASE.get_or_init(|| (now_ms(), tokio::time::Instant::now()));
    if ms >= at {
        base + Duration::from_millis(ms - at)
    } else {
        base - Duration::from_millis(at - ms)
    }
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX / 4)
}

/// What a connection is doing, and when it must have done it.
pub(super) struct Watch {
    limits: Limits,
    phase: AtomicU8,
    in_flight: AtomicU32,
    /// The phase's deadline (ms, see [`now_ms`]).
    due: AtomicU64,
    /// When a write found the socket full (ms), 0 while writes go through.
    blocked_since: AtomicU64,
    /// KEEP, DRAIN, RECLAIM or ABORT: asked by the accept loop or shutdown.
    pub(super) close: AtomicU8,
    /// The connection speaks HTTP/2.
    pub(super) h2: AtomicBool,
    pub(super) notify: Notify,
}

impl Watch {
    pub(super) fn new(limits: Limits) -> Watch {
        Watch {
            limits,
            phase: AtomicU8::new(HEAD),
            in_flight: AtomicU32::new(0),
            due: AtomicU64::new(now_ms() + ms(limits.header_timeout)),
            blocked_since: AtomicU64::new(0),
            close: AtomicU8::new(KEEP),
            h2: AtomicBool::new(false),
            notify: Notify::new(),
        }
    }

    /// Bytes arrived: an idle connection starts its next head's clock.
    pub(super) fn bytes_read(&self) {
        if self.phase.load(Ordering::Relaxed) == IDLE {
            self.due
                .store(now_ms() + ms(self.limits.header_timeout), Ordering::Relaxed);
            let _ = self
                .phase
                .compare_exchange(IDLE, HEAD, Ordering::Relaxed, Ordering::Relaxed);
        }
    }

    pub(super) fn request_began(&self) {
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        let _ = self
            .phase
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |p| {
                (p != CLOSING).then_some(ANSWERING)
            });
    }

    pub(super) fn request_ended(&self) {
        if self.in_flight.fetch_sub(1, Ordering::Relaxed) == 1 {
            let wait = if self.phase.load(Ordering::Relaxed) == CLOSING {
                CLOSING_GRACE
            } else {
                self.limits.keepalive_timeout
            };
            self.due.store(now_ms() + ms(wait), Ordering::Relaxed);
            let _ =
                self.phase
                    .compare_exchange(ANSWERING, IDLE, Ordering::Relaxed, Ordering::Relaxed);
        }
    }

    pub(super) fn wrote<T>(&self, result: &Poll<io::Result<T>>) {
        let blocked = self.blocked_since.load(Ordering::Relaxed);
        match result {
            Poll::Pending if blocked == 0 => self.blocked_since.store(now_ms(), Ordering::Relaxed),
            Poll::Ready(_) if blocked != 0 => self.blocked_since.store(0, Ordering::Relaxed),
            _ => {}
        }
    }

    /// The earliest deadline and what it is for; None while a request is
    /// being answered and the client takes what is sent. With `park`, an
    /// idle connection's first deadline is [`PARK_AFTER`].
    pub(super) fn due(&self, park: bool) -> Option<(u64, Reason)> {
        let blocked = self.blocked_since.load(Ordering::Relaxed);
        if blocked != 0 {
            return Some((blocked + ms(self.limits.send_timeout), Reason::Send));
        }
        let due = self.due.load(Ordering::Relaxed);
        let reason = match self.phase.load(Ordering::Relaxed) {
            HEAD => Reason::Header,
            IDLE if park => {
                let idle_since = due.saturating_sub(ms(self.limits.keepalive_timeout));
                return Some((idle_since + ms(PARK_AFTER), Reason::Park).min((due, Reason::Idle)));
            }
            IDLE => Reason::Idle,
            // A response still being made or sent is bounded by the
            // send timeout and by shutdown's patience, not by this grace.
            CLOSING if self.in_flight.load(Ordering::Relaxed) == 0 => Reason::Closing,
            _ => return None,
        };
        Some((due, reason))
    }

    /// Since when the connection has been without a request to answer
    /// (nginx's "reusable" connections): idle between requests, or still
    /// sending its first or next head (silent, a partial head, preface or
    /// TLS handshake). None while a request is answered or once asked to
    /// close.
    fn reclaimable_since(&self) -> Option<u64> {
        if self.close.load(Ordering::Relaxed) != KEEP || self.in_flight.load(Ordering::Relaxed) != 0
        {
            return None;
        }
        let wait = match self.phase.load(Ordering::Relaxed) {
            IDLE => self.limits.keepalive_timeout,
            HEAD => self.limits.header_timeout,
            _ => return None,
        };
        Some(self.due.load(Ordering::Relaxed).saturating_sub(ms(wait)))
    }

    /// Whether a request is being answered (a close asked now would cut it
    /// short).
    pub(super) fn answering(&self) -> bool {
        self.in_flight.load(Ordering::Relaxed) != 0
    }

    pub(super) fn ask(&self, how: u8) {
        if self.close.fetch_max(how, Ordering::Relaxed) < how {
            self.notify.notify_one();
        }
    }

    /// Enters the closing phase: what is in flight may finish, within
    /// `grace` when nothing is in flight.
    pub(super) fn closing(&self, grace: Duration) {
        self.due.store(now_ms() + ms(grace), Ordering::Relaxed);
        self.phase.store(CLOSING, Ordering::Relaxed);
    }
}

/// What a connection's task waits on besides its socket: a close request
/// on its [`Watch`], and the next deadline. The timer and the wait last
/// across requests, so a request that neither waits nor blocks arms
/// neither. The sleep and the wait are the caller's, pinned on its
/// stack.
pub(super) struct Waits<'a, 'w> {
    watch: &'w Watch,
    sleep: Pin<&'a mut Sleep>,
    /// The deadline the sleep is set for (ms).
    armed: u64,
    asked: Pin<&'a mut Notified<'w>>,
}

impl<'a, 'w> Waits<'a, 'w> {
    pub(super) fn new(
        watch: &'w Watch,
        sleep: Pin<&'a mut Sleep>,
        asked: Pin<&'a mut Notified<'w>>,
    ) -> Self {
        Waits {
            watch,
            sleep,
            armed: u64::MAX,
            asked,
        }
    }

    /// Ready with the watch's close request (KEEP, DRAIN, RECLAIM or
    /// ABORT) each time one is made.
    pub(super) fn poll_asked(&mut self, cx: &mut Context<'_>) -> Poll<u8> {
        ready!(self.asked.as_mut().poll(cx));
        self.asked.set(self.watch.notify.notified());
        Poll::Ready(self.watch.close.load(Ordering::Relaxed))
    }

    /// Ready once `due` (ms, see [`now_ms`]) has passed.
    pub(super) fn poll_until(&mut self, cx: &mut Context<'_>, due: u64) -> Poll<()> {
        loop {
            if due < self.armed || self.sleep.is_elapsed() {
                self.armed = due;
                self.sleep.as_mut().reset(instant_of(due));
            }
            ready!(self.sleep.as_mut().poll(cx));
            if now_ms() >= due {
                return Poll::Ready(());
            }
        }
    }
}

/// Every open connection's watch, for reclaiming idle ones at the cap and
/// for shutdown.
#[derive(Default)]
pub(super) struct Registry {
    watches: Mutex<Slots>,
    emptied: Notify,
}

#[derive(Default)]
struct Slots {
    next: u64,
    open: HashMap<u64, Arc<Watch>>,
}

impl Registry {
    fn lock(&self) -> MutexGuard<'_, Slots> {
        self.watches.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(super) fn insert(&self, watch: Arc<Watch>) -> u64 {
        let mut slots = self.lock();
        slots.next += 1;
        let key = slots.next;
        slots.open.insert(key, watch);
        key
    }

    pub(super) fn remove(&self, key: u64) {
        let mut slots = self.lock();
        slots.open.remove(&key);
        if slots.open.is_empty() {
            self.emptied.notify_waiters();
        }
    }

    /// At the cap: asks the connections that have gone longest without a
    /// request to answer to close (idle ones, and ones still sending a
    /// head, a preface or a TLS handshake), at least `wanted`, and a batch
    /// of up to an eighth of them (at most [`RECLAIM_BATCH`]) so that the
    /// next newcomers find room without another search, as nginx drains
    /// its reusable connections. Returns how many were asked.
    pub(super) fn reclaim(&self, wanted: usize) -> usize {
        let slots = self.lock();
        let mut candidates: Vec<(u64, &Arc<Watch>)> = slots
            .open
            .values()
            .filter_map(|w| w.reclaimable_since().map(|since| (since, w)))
            .collect();
        let batch = (candidates.len() / 8).clamp(1, RECLAIM_BATCH);
        let take = wanted.max(batch).min(candidates.len());
        if take == 0 {
            return 0;
        }
        candidates.select_nth_unstable_by_key(take - 1, |(since, _)| *since);
        for (_, watch) in &candidates[..take] {
            watch.ask(RECLAIM);
        }
        take
    }

    /// Asks every connection to finish what it is doing and close.
    pub(super) fn close_all(&self, how: u8) {
        for watch in self.lock().open.values() {
            watch.ask(how);
        }
    }

    pub(super) fn open(&self) -> usize {
        self.lock().open.len()
    }

    /// Waits until no connection is open, or `deadline`; true if none is.
    pub(super) async fn wait_empty(&self, deadline: tokio::time::Instant) -> bool {
        loop {
            let emptied = self.emptied.notified();
            if self.open() == 0 {
                return true;
            }
            if tokio::time::timeout_at(deadline, emptied).await.is_err() {
                return self.open() == 0;
            }
        }
    }
}
