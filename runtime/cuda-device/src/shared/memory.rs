//! [`SharedMemory`]: a block's shared array declared as a plain `static`, with every element
//! access `unsafe` and raw pointers safe to take (the shape of `core::cell::SyncUnsafeCell`).

use core::cell::UnsafeCell;
use core::mem::MaybeUninit;

use crate::intrinsics;

/// `N` elements of `T` in each block's shared memory (`__shared__ T name[N]`), declared as a
/// plain `static`, in a kernel or at module level:
///
/// ```ignore
/// static TILE: SharedMemory<f32, 256> = SharedMemory::UNINIT;
/// static STAGE: SharedMemory<u8, 4096, 128> = SharedMemory::UNINIT; // 128-byte aligned (TMA)
/// unsafe { TILE.write(t, x[i]) };              // each thread its own element
/// sync_threads();
/// let left = unsafe { TILE.read((t + 255) % 256) };
/// let dst: *mut f32 = TILE.as_mut_ptr();        // for cp.async, TMA, atomics
/// ```
///
/// Every block gets its own copy, undefined when the block starts. The compiler places every
/// static of this type in the `.shared` state space, aligned to `ALIGN` bytes (0, the default:
/// `T`'s alignment).
///
/// # Why a plain `static`, and why it is `Sync`
/// A `static mut` can only be used through references that edition 2024 rejects
/// (`static_mut_refs`) or raw pointers; a plain `static` needs a `Sync` type. `SharedMemory` is
/// `Sync` because no safe method reads or writes an element: reads and writes are `unsafe`
/// ([`read`](Self::read), [`write`](Self::write), [`as_slice`](Self::as_slice)), and the rest only
/// computes addresses. The threads of a block share the memory, so whoever accesses it states that
/// the accesses do not race (a barrier or atomics order them) — the same rule as CUDA C++'s, and
/// it is stated once per access, in its `unsafe` block. There is no `TILE[i]`: an `Index` of a
/// `Sync` static would be a safe read of memory that nobody may have written yet. Indexing is
/// [`SharedArray`](super::SharedArray)'s, through a `static mut`.
#[repr(transparent)]
#[cfg_attr(cuda_oxide, oxide::lang = "shared_memory")]
pub struct SharedMemory<T, const N: usize, const ALIGN: usize = 0> {
    cells: UnsafeCell<MaybeUninit<[T; N]>>,
}

// SAFETY: no safe method touches an element (see the type's docs): every read and write is an
// `unsafe` call whose caller rules out data races, as for `SyncUnsafeCell`. Values cross from the
// writing thread to the reading one, hence `T: Send`.
unsafe impl<T: Send, const N: usize, const ALIGN: usize> Sync for SharedMemory<T, N, ALIGN> {}

impl<T, const N: usize, const ALIGN: usize> SharedMemory<T, N, ALIGN> {
    /// The initialiser of a `SharedMemory` static: `= SharedMemory::UNINIT` (contents undefined).
    // A const with interior mutability on purpose: it initialises statics, like `AtomicU32::new`.
    #[allow(clippy::declare_interior_mutable_const)]
    pub const UNINIT: Self = SharedMemory { cells: UnsafeCell::new(MaybeUninit::uninit()) };

    /// Number of elements, `N`: `TILE.len()`.
    #[inline(always)]
    pub const fn len(&self) -> usize {
        N
    }

    /// `true` when `N == 0`.
    #[inline(always)]
    pub const fn is_empty(&self) -> bool {
        N == 0
    }

    /// The alignment asked for, `ALIGN` (0 means `T`'s own):
    /// `SharedMemory::<u8, 256, 128>::alignment() == 128`.
    #[inline(always)]
    pub const fn alignment() -> usize {
        ALIGN
    }

    /// Generic address of element 0 (valid in this block; see
    /// [`crate::cluster::map_shared_rank`] for another block's copy). Safe: what is done
    /// through it is `unsafe` and the caller's part (`cp.async`, TMA, `ldmatrix`, atomics).
    #[inline(always)]
    pub const fn as_mut_ptr(&self) -> *mut T {
        self.cells.get().cast()
    }

    /// [`as_mut_ptr`](Self::as_mut_ptr), as a `*const T`.
    #[inline(always)]
    pub const fn as_ptr(&self) -> *const T {
        self.as_mut_ptr()
    }

    /// Generic address of element `i`, bounds-checked (out of range traps): for an atomic on
    /// one element, `atomic::block::add(COUNTS.element_ptr(bin), 1)`.
    #[inline(always)]
    pub fn element_ptr(&self, i: usize) -> *mut T {
        intrinsics::shared_index_checked(self.as_mut_ptr(), i, N)
    }

    /// Element `i` (bounds-checked: out of range traps).
    ///
    /// # Safety
    /// Element `i` was written (by some thread of this block), and no other thread writes it
    /// between the last barrier and the next one.
    #[inline(always)]
    pub unsafe fn read(&self, i: usize) -> T
    where
        T: Copy,
    {
        unsafe { self.element_ptr(i).read() }
    }

    /// Writes element `i` (bounds-checked: out of range traps).
    ///
    /// # Safety
    /// No other thread reads or writes element `i` between the last barrier and the next one.
    #[inline(always)]
    pub unsafe fn write(&self, i: usize, value: T) {
        unsafe { self.element_ptr(i).write(value) }
    }

    /// The whole array as a slice, for a phase in which the block only reads it.
    ///
    /// # Safety
    /// Every element was written, and no thread writes any of them while the slice is alive.
    #[inline(always)]
    pub unsafe fn as_slice(&self) -> &[T] {
        unsafe { core::slice::from_raw_parts(self.as_ptr(), N) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // A plain `static`, as kernels declare it (this is what needs `Sync`).
    static TILE: SharedMemory<u32, 8, 16> = SharedMemory::UNINIT;

    #[test]
    fn a_plain_static_reads_what_was_written() {
        assert_eq!((TILE.len(), SharedMemory::<u32, 8, 16>::alignment()), (8, 16));
        for i in 0..8 {
            // SAFETY: one test thread uses TILE.
            unsafe { TILE.write(i, 10 * i as u32) };
        }
        // SAFETY: every element was written above.
        assert_eq!(unsafe { TILE.read(3) }, 30);
        assert_eq!(unsafe { TILE.as_slice() }[7], 70);
        assert_eq!(TILE.element_ptr(5), TILE.as_mut_ptr().wrapping_add(5));
    }

    #[test]
    #[should_panic(expected = "out of bounds")]
    fn an_index_past_the_end_is_refused() {
        let _ = TILE.element_ptr(8);
    }
}
