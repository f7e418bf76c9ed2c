//! The memory responses in flight may hold beyond the cache
//! (`--in-flight-bytes`): bodies read for a response that the cache does
//! not hold, the pieces of a body being sent, a decoder's state.
//!
//! Whatever clients do, what they make serve hold is then bounded by the
//! cache's budget plus this one, plus a constant per connection. A client
//! that takes nothing holds nothing: a body in pieces reads its next piece
//! only once the connection can send it, and a piece's memory is given
//! back when the connection has written it (the piece's bytes own their
//! [`Reservation`]).
//!
//! What a response cannot reserve it does without, or waits for:
//!
//! - a miss of a file larger than one piece is read whole (and offered to
//!   the cache) only when half the budget has room for it; otherwise it is
//!   sent from the catalog a piece at a time. The other half is kept for
//!   pieces, so that slow readers of big files cannot hold the budget that
//!   every other response needs to send its pieces;
//! - a piece waits until memory is given back, as long as the send
//!   timeout allows (a stream that waits makes no progress).
//!
//! The budget's state is in `/_stats` (`in_flight`) and `/metrics`
//! (`ccc_in_flight_*`).

use serde::Serialize;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Waker};

/// Default `--in-flight-bytes`, as `--help` shows it (parsed like the
/// flag): 1,024 pieces of 64 KiB being sent at once, or a dozen bodies of
/// 5 MB read whole for responses the cache does not hold.
pub(crate) const DEFAULT_IN_FLIGHT_BYTES: &str = "64MiB";

/// Bodies read whole may bring what is held up to this share of the
/// budget (its half), never past it ([`InFlight::try_reserve_whole`]).
const WHOLE_SHARE: u64 = 2;

/// The budget and what is reserved of it.
#[derive(Debug)]
pub(crate) struct InFlight {
    budget: u64,
    held: AtomicU64,
    peak: AtomicU64,
    /// Reservations that waited for memory to be given back.
    waits: AtomicU64,
    /// Misses sent from the catalog in pieces because the budget had no
    /// room to read them whole.
    streamed: AtomicU64,
    /// Reservations waiting for room, first come first served.
    waiting: Mutex<VecDeque<Arc<Waiter>>>,
}

/// A reservation waiting for room: how much it wants and whom to wake.
#[derive(Debug)]
pub(crate) struct Waiter {
    bytes: u64,
    waker: Mutex<Waker>,
}

/// Where a body that may wait for room keeps its place in the queue
/// between polls, so that polling again does not queue it again.
pub(crate) type Place = Option<Arc<Waiter>>;

/// Bytes reserved of the budget until dropped.
#[derive(Debug)]
pub(crate) struct Reservation {
    pool: Arc<InFlight>,
    bytes: u64,
}

/// A snapshot of the budget, for `/_stats` and `/metrics`.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct InFlightStats {
    /// Bytes reserved now.
    pub bytes: u64,
    /// `--in-flight-bytes`.
    pub max_bytes: u64,
    /// The most ever reserved at once.
    pub peak_bytes: u64,
    /// Pieces that waited for memory to be given back.
    pub waits: u64,
    /// Misses sent from the catalog in pieces rather than read whole.
    pub streamed: u64,
}

impl InFlight {
    pub(crate) fn new(budget: u64) -> Arc<InFlight> {
        Arc::new(InFlight {
            budget,
            held: AtomicU64::new(0),
            peak: AtomicU64::new(0),
            waits: AtomicU64::new(0),
            streamed: AtomicU64::new(0),
            waiting: Mutex::new(VecDeque::new()),
        })
    }

    /// Reserves `bytes` if the budget has room for them now.
    pub(crate) fn try_reserve(self: &Arc<Self>, bytes: u64) -> Option<Reservation> {
        self.try_reserve_within(bytes, self.budget)
    }

    /// Reserves `bytes` to read a body whole, if what is held then stays
    /// within `WHOLE_SHARE` of the budget. The rest is kept for pieces,
    /// which any response can be sent in: a few slow readers of big
    /// files read whole would otherwise hold the whole budget, and every
    /// other response's pieces would wait for them.
    pub(crate) fn try_reserve_whole(self: &Arc<Self>, bytes: u64) -> Option<Reservation> {
        self.try_reserve_within(bytes, self.budget / WHOLE_SHARE)
    }

    fn try_reserve_within(self: &Arc<Self>, bytes: u64, limit: u64) -> Option<Reservation> {
        let mut held = self.held.load(Ordering::Relaxed);
        loop {
            let after = held.checked_add(bytes).filter(|a| *a <= limit)?;
            match self
                .held
                .compare_exchange_weak(held, after, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => {
                    self.peak.fetch_max(after, Ordering::Relaxed);
                    return Some(Reservation {
                        pool: self.clone(),
                        bytes,
                    });
                }
                Err(now) => held = now,
            }
        }
    }

    /// Reserves `bytes`, or keeps `place` in the queue of reservations
    /// waiting for room, woken (first come, first served) when memory
    /// given back makes room for it. A reservation larger than the whole
    /// budget is granted once nothing else is held, so that it is never
    /// refused for ever.
    pub(crate) fn poll_reserve(
        self: &Arc<Self>,
        bytes: u64,
        place: &mut Place,
        cx: &mut Context<'_>,
    ) -> Poll<Reservation> {
        let fit = bytes.min(self.budget);
        let queued_before = place.is_some();
        if self.first_in_line(place)
            && let Some(mut granted) = self.try_reserve(fit)
        {
            self.grow(&mut granted, bytes - fit);
            self.leave(place);
            return Poll::Ready(granted);
        }
        match place {
            Some(waiter) => *lock(&waiter.waker) = cx.waker().clone(),
            None => {
                let waiter = Arc::new(Waiter {
                    bytes: fit,
                    waker: Mutex::new(cx.waker().clone()),
                });
                self.waiting().push_back(waiter.clone());
                *place = Some(waiter);
            }
        }
        // Given back between the attempt and the registration: try again.
        if self.first_in_line(place)
            && let Some(mut granted) = self.try_reserve(fit)
        {
            self.grow(&mut granted, bytes - fit);
            self.leave(place);
            return Poll::Ready(granted);
        }
        if !queued_before {
            self.waits.fetch_add(1, Ordering::Relaxed);
        }
        Poll::Pending
    }

    /// Whether `place` is first in the queue (a newcomer: whether the
    /// queue is empty), so that no one passes those waiting.
    fn first_in_line(&self, place: &Place) -> bool {
        match place {
            None => self.waiting().is_empty(),
            Some(waiter) => self
                .waiting()
                .front()
                .is_none_or(|first| Arc::ptr_eq(first, waiter)),
        }
    }

    /// Takes `place` out of the queue.
    fn leave(&self, place: &mut Place) {
        if let Some(waiter) = place.take() {
            self.waiting().retain(|w| !Arc::ptr_eq(w, &waiter));
            // The next in line may fit in what is left.
            self.wake_what_fits();
        }
    }

    /// Wakes the first in line when the room left fits it (it stays
    /// first until it takes its reservation, and then wakes the next); a
    /// waiter whose body is gone is dropped from the queue.
    fn wake_what_fits(&self) {
        let room = self
            .budget
            .saturating_sub(self.held.load(Ordering::Relaxed));
        let mut waiting = self.waiting();
        while let Some(first) = waiting.front() {
            if Arc::strong_count(first) == 1 {
                waiting.pop_front();
                continue;
            }
            if first.bytes <= room {
                lock(&first.waker).wake_by_ref();
            }
            break;
        }
    }

    /// Reserves `bytes` whether or not the budget has room: for what
    /// cannot be had another way (a long body of a catalog without piece
    /// digests, which can only be checked whole). Later reservations wait
    /// until the budget is back under its bound.
    pub(crate) fn reserve_over(self: &Arc<Self>, bytes: u64) -> Reservation {
        let after = self.held.fetch_add(bytes, Ordering::Relaxed) + bytes;
        self.peak.fetch_max(after, Ordering::Relaxed);
        Reservation {
            pool: self.clone(),
            bytes,
        }
    }

    /// Counts a miss sent in pieces because its body did not fit.
    pub(crate) fn streamed(&self) {
        self.streamed.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn stats(&self) -> InFlightStats {
        InFlightStats {
            bytes: self.held.load(Ordering::Relaxed),
            max_bytes: self.budget,
            peak_bytes: self.peak.load(Ordering::Relaxed),
            waits: self.waits.load(Ordering::Relaxed),
            streamed: self.streamed.load(Ordering::Relaxed),
        }
    }

    fn grow(&self, reservation: &mut Reservation, more: u64) {
        if more > 0 {
            let after = self.held.fetch_add(more, Ordering::Relaxed) + more;
            self.peak.fetch_max(after, Ordering::Relaxed);
            reservation.bytes += more;
        }
    }

    fn waiting(&self) -> std::sync::MutexGuard<'_, VecDeque<Arc<Waiter>>> {
        lock(&self.waiting)
    }
}

impl Reservation {
    #[cfg(test)]
    pub(crate) fn bytes(&self) -> u64 {
        self.bytes
    }

    /// One reservation of both (of the same budget): a response that
    /// holds bodies read for it twice, its asset's and its deltas.
    pub(crate) fn join(mut self, mut other: Reservation) -> Reservation {
        self.bytes += std::mem::take(&mut other.bytes);
        self
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.pool.held.fetch_sub(self.bytes, Ordering::Relaxed);
        self.pool.wake_what_fits();
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Bytes that give their reservation back when the last view of them is
/// dropped: a piece, or a body read whole for one response.
pub(crate) fn owned_bytes<T: AsRef<[u8]> + Send + 'static>(
    bytes: T,
    reservation: Option<Reservation>,
) -> bytes::Bytes {
    struct Held<T>(T, #[allow(dead_code)] Option<Reservation>);
    impl<T: AsRef<[u8]>> AsRef<[u8]> for Held<T> {
        fn as_ref(&self) -> &[u8] {
            self.0.as_ref()
        }
    }
    bytes::Bytes::from_owner(Held(bytes, reservation))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::task::Wake;

    struct Count(AtomicUsize);
    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    #[test]
    fn reservations_fit_the_budget_and_give_back_on_drop() {
        let pool = InFlight::new(100);
        let a = pool.try_reserve(60).expect("room");
        assert!(pool.try_reserve(50).is_none(), "past the budget");
        let b = pool.try_reserve(40).expect("exactly full");
        assert_eq!(pool.stats().bytes, 100);
        drop(a);
        assert_eq!(pool.stats().bytes, 40);
        drop(b);
        let stats = pool.stats();
        assert_eq!((stats.bytes, stats.peak_bytes), (0, 100));
    }

    #[test]
    fn bodies_read_whole_leave_half_the_budget_to_pieces() {
        // Four slow readers of a 16 MiB file, with a 64 MiB budget: two
        // are read whole, the others are sent in pieces, and pieces still
        // find room.
        let pool = InFlight::new(64);
        let first = pool.try_reserve_whole(16).expect("room");
        let second = pool.try_reserve_whole(16).expect("half the budget");
        assert!(pool.try_reserve_whole(16).is_none(), "past half");
        let pieces: Vec<_> = (0..32).map(|_| pool.try_reserve(1)).collect();
        assert!(
            pieces.iter().all(Option::is_some),
            "pieces wait for nothing"
        );
        drop(pieces);
        drop(first);
        assert!(pool.try_reserve_whole(16).is_some(), "room again");
        drop(second);
    }

    #[test]
    fn a_waiting_reservation_is_woken_when_memory_comes_back() {
        let pool = InFlight::new(100);
        let held = pool.try_reserve(90).unwrap();
        let count = Arc::new(Count(AtomicUsize::new(0)));
        let waker = Waker::from(count.clone());
        let mut cx = Context::from_waker(&waker);
        let (mut first, mut second) = (None, None);
        assert!(pool.poll_reserve(20, &mut first, &mut cx).is_pending());
        assert!(pool.poll_reserve(5, &mut second, &mut cx).is_pending());
        // Polled again, each keeps its place: counted and queued once.
        assert!(pool.poll_reserve(20, &mut first, &mut cx).is_pending());
        assert_eq!(pool.stats().waits, 2);
        assert_eq!(pool.waiting().len(), 2);
        drop(held);
        assert_eq!(
            count.0.load(Ordering::Relaxed),
            1,
            "the first in line is woken"
        );
        // The second fits, but waits its turn.
        assert!(pool.poll_reserve(5, &mut second, &mut cx).is_pending());
        let Poll::Ready(got) = pool.poll_reserve(20, &mut first, &mut cx) else {
            panic!("room now");
        };
        assert_eq!(got.bytes(), 20);
        assert_eq!(count.0.load(Ordering::Relaxed), 2, "then the next");
        let Poll::Ready(small) = pool.poll_reserve(5, &mut second, &mut cx) else {
            panic!("its turn");
        };
        assert!(pool.waiting().is_empty());
        // Larger than the whole budget: granted once nothing else is.
        drop((got, small));
        let mut big_place = None;
        let Poll::Ready(big) = pool.poll_reserve(150, &mut big_place, &mut cx) else {
            panic!("granted when alone");
        };
        assert_eq!(pool.stats().bytes, 150);
        drop(big);
        assert_eq!(pool.stats().bytes, 0);
    }

    #[test]
    fn owned_bytes_give_the_reservation_back_with_their_last_view() {
        let pool = InFlight::new(100);
        let bytes = owned_bytes(vec![7u8; 10], pool.try_reserve(10));
        let part = bytes.slice(2..5);
        drop(bytes);
        assert_eq!(pool.stats().bytes, 10, "a view is still held");
        assert_eq!(&part[..], &[7, 7, 7]);
        drop(part);
        assert_eq!(pool.stats().bytes, 0);
    }
}
