//! Shared memory: per-block arrays sized at compile time ([`SharedArray`] statics) and dynamic
//! shared memory sized at launch by `LaunchConfig::shared_mem_bytes` ([`dynamic`]).
//!
//! ```ignore
//! static TILE: SharedArray<f32, 256> = SharedArray::new();
//! unsafe { TILE.write(tid, x) };
//! sync_threads();
//! let y = unsafe { TILE.read(255 - tid) };
//! ```
//! Shared memory is shared by the threads of one block: a write by one thread and an access to
//! the same element by another without a [`crate::sync_threads`] (or an atomic) between them is
//! a data race, which is why element access is `unsafe`.

use core::cell::UnsafeCell;
use core::mem::MaybeUninit;

use crate::intrinsics;

/// A per-block array in shared memory (`__shared__ T name[N]`). Declare it as a `static`; the
/// compiler places every `static` of this type in the shared state space, one copy per block.
/// Its contents are undefined when a block starts.
#[repr(transparent)]
#[cfg_attr(cuda_oxide, oxide::lang = "shared_array")]
pub struct SharedArray<T, const N: usize> {
    cells: UnsafeCell<MaybeUninit<[T; N]>>,
}

// SAFETY: each element access is `unsafe` with the data-race rule documented on the methods.
unsafe impl<T: Send, const N: usize> Sync for SharedArray<T, N> {}

impl<T, const N: usize> SharedArray<T, N> {
    /// The (uninitialised) array; use it as the initialiser of the `static`.
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Self {
        SharedArray { cells: UnsafeCell::new(MaybeUninit::uninit()) }
    }

    /// Number of elements, `N`.
    #[inline(always)]
    pub const fn len(&self) -> usize {
        N
    }

    /// `true` when `N == 0`.
    #[inline(always)]
    pub const fn is_empty(&self) -> bool {
        N == 0
    }

    /// Generic address of element 0 (valid for this block only; see
    /// [`crate::cluster::map_shared_rank`] for another block's copy).
    #[inline(always)]
    pub fn as_mut_ptr(&self) -> *mut T {
        self.cells.get().cast()
    }

    /// Element `i` (bounds-checked: out of range traps).
    ///
    /// # Safety
    /// No other thread writes element `i` between the last barrier and the next one, and it was
    /// written before (by some thread of this block).
    #[inline(always)]
    pub unsafe fn read(&self, i: usize) -> T
    where
        T: Copy,
    {
        unsafe { intrinsics::shared_index_checked(self.as_mut_ptr(), i, N).read() }
    }

    /// Writes element `i` (bounds-checked: out of range traps).
    ///
    /// # Safety
    /// No other thread reads or writes element `i` between the last barrier and the next one.
    #[inline(always)]
    pub unsafe fn write(&self, i: usize, value: T) {
        unsafe { intrinsics::shared_index_checked(self.as_mut_ptr(), i, N).write(value) }
    }

    /// The whole array as a slice.
    ///
    /// # Safety
    /// Every element was written, and no thread writes any of them while the slice is alive.
    #[inline(always)]
    pub unsafe fn as_slice(&self) -> &[T] {
        unsafe { core::slice::from_raw_parts(self.as_mut_ptr(), N) }
    }
}

/// A view of this block's dynamic shared memory as `len` elements of `T`
/// (`extern __shared__ T name[]`); `len` is `shared_mem_bytes / size_of::<T>()`.
#[derive(Clone, Copy)]
pub struct DynamicShared<T> {
    ptr: *mut T,
    len: usize,
}

impl<T> DynamicShared<T> {
    /// Number of whole `T` elements that fit in the launch's `shared_mem_bytes`.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// `true` when the launch gave no dynamic shared memory.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Generic address of element 0.
    #[inline(always)]
    pub fn as_mut_ptr(&self) -> *mut T {
        self.ptr
    }

    /// Element `i` (bounds-checked: out of range traps).
    ///
    /// # Safety
    /// As for [`SharedArray::read`].
    #[inline(always)]
    pub unsafe fn read(&self, i: usize) -> T
    where
        T: Copy,
    {
        unsafe { intrinsics::shared_index_checked(self.ptr, i, self.len).read() }
    }

    /// Writes element `i` (bounds-checked: out of range traps).
    ///
    /// # Safety
    /// As for [`SharedArray::write`].
    #[inline(always)]
    pub unsafe fn write(&self, i: usize, value: T) {
        unsafe { intrinsics::shared_index_checked(self.ptr, i, self.len).write(value) }
    }
}

/// This block's dynamic shared memory (16-byte aligned) as elements of `T`.
#[inline(always)]
pub fn dynamic<T>() -> DynamicShared<T> {
    let bytes = dynamic_size_bytes() as usize;
    let size = core::mem::size_of::<T>();
    let len = bytes.checked_div(size).unwrap_or(0);
    DynamicShared { ptr: intrinsics::dynamic_shared_ptr().cast(), len }
}

/// The launch's `shared_mem_bytes` (`%dynamic_smem_size`).
#[inline(always)]
pub fn dynamic_size_bytes() -> u32 {
    intrinsics::dynamic_smem_size()
}
