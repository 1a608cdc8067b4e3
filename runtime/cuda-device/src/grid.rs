//! The grid barrier of cooperative launches: [`sync`] waits for every thread of every block.
//!
//! The kernel must be launched cooperatively (all blocks resident at once; the driver then gives
//! it a barrier counter, whose address it passes in `%envreg1`/`%envreg2`). In a launch that is
//! not cooperative there is no counter, and [`sync`] traps rather than hang or write at random.
//!
//! ```ignore
//! phase_one(&data);
//! grid::sync();        // every block has finished phase one
//! phase_two(&data);
//! ```

use crate::atomic::{AtomicOrdering, DeviceAtomicU32};
use crate::{debug, intrinsics, sync, thread};

/// The grid's barrier counter: the second word of the workspace the driver sets up for a
/// cooperative launch (the layout CUDA's own `grid_group::sync` uses). Null outside one.
#[inline(always)]
fn barrier_counter() -> *mut u32 {
    let workspace = ((intrinsics::envreg1() as u64) << 32) | intrinsics::envreg2() as u64;
    if workspace == 0 { core::ptr::null_mut() } else { (workspace as usize as *mut u32).wrapping_add(1) }
}

/// Waits until every thread of every block of the (cooperative) launch has called it; memory
/// writes before it are visible to all threads after it. Every thread of the grid must call it.
///
/// The first thread of each block adds to the counter with release ordering (block 0 adds a
/// value that, with one from each other block, flips the counter's top bit), then waits with
/// acquire loads for the top bit to change; the counter is never reset, so consecutive barriers
/// (and launches) alternate the bit.
///
/// ```ignore
/// grid::sync();
/// ```
#[inline(always)]
pub fn sync() {
    let counter = barrier_counter();
    if counter.is_null() {
        // Not a cooperative launch: nothing to count with.
        debug::trap();
    }
    sync::sync_threads();
    let first = thread::threadIdx_x() == 0 && thread::threadIdx_y() == 0 && thread::threadIdx_z() == 0;
    if first {
        let blocks = thread::gridDim_x() * thread::gridDim_y() * thread::gridDim_z();
        let block0 = thread::blockIdx_x() == 0 && thread::blockIdx_y() == 0 && thread::blockIdx_z() == 0;
        // Block 0 contributes 2^31 - (blocks - 1), the others 1 each: the sum of one round is
        // exactly 2^31, which flips the top bit and leaves the low bits as they were.
        let add = if block0 { 0x8000_0000u32.wrapping_sub(blocks - 1) } else { 1 };
        // SAFETY: the driver's counter is valid for the whole launch and only accessed atomically.
        let cell = unsafe { DeviceAtomicU32::from_ptr(counter) };
        let before = cell.fetch_add(add, AtomicOrdering::Release);
        while (cell.load(AtomicOrdering::Acquire) ^ before) & 0x8000_0000 == 0 {}
    }
    sync::sync_threads();
}
