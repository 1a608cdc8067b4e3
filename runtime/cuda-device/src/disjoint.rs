//! `DisjointSlice<T>`: an output slice in which each thread may write only its own element.

use crate::thread::ThreadIndex;

mod raw;

/// A device buffer shared by all threads of a launch, each of which gets at most the element at
/// its own [`ThreadIndex`]. The kernel ABI passes it as pointer + length.
#[repr(C)]
#[cfg_attr(cuda_oxide, oxide::lang = "disjoint_slice")]
pub struct DisjointSlice<T> {
    ptr: *mut T,
    len: usize,
}

impl<T> DisjointSlice<T> {
    /// Number of elements.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// `true` when the slice has no elements.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// This thread's element, or `None` when its index is past the end (the usual tail guard).
    #[inline(always)]
    pub fn get_mut(&mut self, idx: ThreadIndex) -> Option<&mut T> {
        let i = idx.get();
        if i < self.len {
            // SAFETY: `i` is in bounds, and no other thread of the launch holds the same
            // `ThreadIndex`, so this `&mut` is unique.
            Some(unsafe { &mut *self.ptr.add(i) })
        } else {
            None
        }
    }
}
