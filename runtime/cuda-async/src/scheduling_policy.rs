//! Scheduling policies: which stream of a device's pool an operation runs on, chosen when it runs.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Chooses the stream for an operation at execution time, as an index into the device's stream
/// pool (`0..pool_len`). Implementations must be cheap and thread-safe.
pub trait SchedulingPolicy: Send + Sync + std::fmt::Debug {
    /// The index of the stream the next operation runs on.
    fn select(&self, pool_len: usize) -> usize;
}

/// The default: each operation gets the next stream of the pool, wrapping around, so
/// independent operations overlap and `zip!`'s branches land on different streams.
#[derive(Debug, Default)]
pub struct RoundRobin {
    next: AtomicUsize,
}

impl RoundRobin {
    /// Starts at the pool's first stream.
    pub fn new() -> RoundRobin {
        RoundRobin::default()
    }
}

impl SchedulingPolicy for RoundRobin {
    fn select(&self, pool_len: usize) -> usize {
        self.next.fetch_add(1, Ordering::Relaxed) % pool_len.max(1)
    }
}

/// Every operation on the pool's first stream: operations run one after another, in the order
/// they are executed.
#[derive(Debug, Default, Clone, Copy)]
pub struct SingleStream;

impl SchedulingPolicy for SingleStream {
    fn select(&self, _pool_len: usize) -> usize {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_robin_cycles() {
        let p = RoundRobin::new();
        let picks: Vec<usize> = (0..6).map(|_| p.select(4)).collect();
        assert_eq!(picks, [0, 1, 2, 3, 0, 1]);
        assert_eq!(p.select(0), 0);
        assert_eq!(SingleStream.select(4), 0);
    }
}
