//! The hooks when ccc is built without the `causal` feature: every one is
//! an empty inline function or a zero-sized type, so sites, progress and
//! latency points and message stamps compile to nothing.

use std::net::SocketAddr;

/// Zero-sized: messages carry nothing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stamp;

pub struct Progress {
    pub name: &'static str,
}

impl Progress {
    pub const fn new(name: &'static str) -> Progress {
        Progress { name }
    }
}

pub struct Latency {
    pub name: &'static str,
}

impl Latency {
    pub const fn new(name: &'static str) -> Latency {
        Latency { name }
    }
}

/// Zero-sized: a request at a latency point costs nothing.
pub struct LatencyGuard;

impl LatencyGuard {
    #[inline(always)]
    pub fn end(self) {}
}

#[inline(always)]
pub fn latency_begin(_point: &Latency) {}
#[inline(always)]
pub fn latency_end(_point: &Latency) {}
#[inline(always)]
pub fn check() {}
#[inline(always)]
pub fn send() -> Stamp {
    Stamp
}
#[inline(always)]
pub fn idle_begin() {}
#[inline(always)]
pub fn receive(_stamp: Stamp) {}
#[inline(always)]
pub fn wake_without_message() {}
#[inline(always)]
pub fn receive_external(_peer: Option<&SocketAddr>) {}
#[inline(always)]
pub fn before_respond() {}
#[inline(always)]
pub fn after_respond(_peer: Option<&SocketAddr>) {}
#[inline(always)]
pub fn register_thread(_name: &str) {}
