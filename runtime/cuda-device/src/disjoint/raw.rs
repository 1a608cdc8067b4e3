//! The unsafe side of [`DisjointSlice`]: building one from a raw pointer, its base pointer, and an
//! element at an index no `ThreadIndex` vouches for (a destination computed from data, a write
//! by one lane of each warp). Each of them gives up the one-thread-one-element guarantee, so
//! keeping accesses disjoint is the caller's part.

use super::DisjointSlice;

impl<T> DisjointSlice<T> {
    /// A slice over `len` elements at `ptr`, built in device code.
    ///
    /// ```ignore
    /// let out = unsafe { DisjointSlice::from_raw_parts(buf.as_mut_ptr(), n) };
    /// ```
    ///
    /// # Safety
    /// `ptr` is valid and aligned for `len` elements for as long as the slice is used, nothing
    /// else accesses them meanwhile, and the launch gives every thread a different
    /// [`ThreadIndex`](crate::thread::ThreadIndex) (as `get_mut` assumes).
    #[inline(always)]
    pub unsafe fn from_raw_parts(ptr: *mut T, len: usize) -> Self {
        DisjointSlice { ptr, len }
    }

    /// The base pointer: `core::ptr::copy_nonoverlapping(src, out.as_mut_ptr(), n)`. Writing
    /// through it is `unsafe`, and keeping the threads' writes apart is the caller's part.
    #[inline(always)]
    pub fn as_mut_ptr(&mut self) -> *mut T {
        self.ptr
    }

    /// Element `idx` without the bounds check or the one-thread-one-element guarantee of
    /// [`DisjointSlice::get_mut`] (debug builds still check the bounds).
    ///
    /// ```ignore
    /// if warp::lane_id() == 0 {
    ///     // SAFETY: one lane per warp writes, at its warp's own index, below out.len().
    ///     unsafe { *out.get_unchecked_mut(warp_index) = sum };
    /// }
    /// ```
    ///
    /// # Safety
    /// `idx < self.len()`, and no other thread accesses element `idx` while the reference lives.
    #[inline(always)]
    pub unsafe fn get_unchecked_mut(&mut self, idx: usize) -> &mut T {
        debug_assert!(idx < self.len, "DisjointSlice::get_unchecked_mut: index out of bounds");
        unsafe { &mut *self.ptr.add(idx) }
    }
}
