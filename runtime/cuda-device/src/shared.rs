//! Shared memory: per-block arrays sized at compile time ([`SharedMemory`] and [`SharedArray`]
//! statics) and dynamic shared memory sized at launch by `LaunchConfig::shared_mem_bytes`
//! ([`dynamic`], [`DynamicSharedArray`]).
//!
//! Two declarations of a static array, both one copy per block:
//! - `static TILE: SharedMemory<T, N> = SharedMemory::UNINIT;` — a plain `static` (no
//!   `static_mut_refs` in edition 2024): `unsafe { TILE.read(i) }`, `unsafe { TILE.write(i, v) }`,
//!   `TILE.as_mut_ptr()`, `TILE.element_ptr(i)`. The form to write.
//! - `static mut TILE: SharedArray<T, N> = SharedArray::UNINIT;` — CUDA C++'s `__shared__` and
//!   NVIDIA cuda-oxide's form, indexed: `unsafe { TILE[i] = v }`, `unsafe { TILE[i] }`, and
//!   `SharedArray::as_raw_mut_ptr(&raw mut TILE)` for a pointer. Its methods need a reference to
//!   the `static mut`, which edition 2024 refuses.
//!
//! ```no_run
//! # use cuda_device::{SharedArray, SharedMemory, cuda_module, kernel, launch_bounds, shared, sync_threads, thread};
//! #[cuda_module]
//! mod kernels {
//!     use super::*;
//!
//!     /// Reverses each block of 256 elements through a static tile.
//!     #[kernel]
//!     #[launch_bounds(256)]
//!     pub fn reverse(x: &[u32], out: &mut [u32]) {
//!         static TILE: SharedMemory<u32, 256> = SharedMemory::UNINIT;
//!         let (t, i) = (thread::threadIdx_x() as usize, thread::index_1d().get());
//!         // SAFETY: each thread writes its own slot before the barrier.
//!         unsafe { TILE.write(t, if i < x.len() { x[i] } else { 0 }) };
//!         sync_threads();
//!         if i < out.len() {
//!             out[i] = unsafe { TILE.read(255 - t) }; // read after the barrier
//!         }
//!     }
//!
//!     /// The same with NVIDIA cuda-oxide's indexed `static mut`.
//!     #[kernel]
//!     #[launch_bounds(256)]
//!     pub fn reverse_indexed(x: &[u32], out: &mut [u32]) {
//!         static mut TILE: SharedArray<u32, 256> = SharedArray::UNINIT;
//!         let (t, i) = (thread::threadIdx_x() as usize, thread::index_1d().get());
//!         // SAFETY: as above.
//!         unsafe { TILE[t] = if i < x.len() { x[i] } else { 0 } };
//!         sync_threads();
//!         if i < out.len() {
//!             out[i] = unsafe { TILE[255 - t] };
//!         }
//!     }
//!
//!     /// A tile sized at launch by `LaunchConfig::shared_mem_bytes`.
//!     #[kernel]
//!     pub fn stage(x: &[f32], out: &mut [f32]) {
//!         let tile = shared::dynamic::<f32>();
//!         let (t, i) = (thread::threadIdx_x() as usize, thread::index_1d().get());
//!         // SAFETY: one slot per thread, read back by the same thread.
//!         unsafe { tile.write(t, if i < x.len() { x[i] } else { 0.0 }) };
//!         if i < out.len() {
//!             out[i] = unsafe { tile.read(t) };
//!         }
//!     }
//! }
//! # fn main() {}
//! ```
//! Shared memory is shared by the threads of one block: a write by one thread and an access to
//! the same element by another without a [`crate::sync_threads`] (or an atomic) between them is
//! a data race, and its contents are undefined when a block starts. That is why every element
//! access is `unsafe`, in both forms.

use core::cell::UnsafeCell;
use core::marker::PhantomData;
use core::mem::MaybeUninit;
use core::ops::{Index, IndexMut};

use crate::intrinsics;

mod memory;

pub use memory::SharedMemory;

/// A per-block array in shared memory (`__shared__ T name[N]`), declared as a `static mut` and
/// indexed: CUDA C++'s and NVIDIA cuda-oxide's form. The compiler places every static of this type
/// in the shared state space, one copy per block, aligned to `ALIGN` bytes (0, the default: `T`'s
/// alignment; e.g. 128 for bulk copies). Its contents are undefined when a block starts.
///
/// ```ignore
/// static mut TILE: SharedArray<f32, 256> = SharedArray::UNINIT;
/// static mut STAGE: SharedArray<u8, 4096, 128> = SharedArray::UNINIT;
/// unsafe { TILE[tid] = input[i] };          // each thread its own element
/// sync_threads();
/// let left = unsafe { TILE[(tid + 255) % 256] };
/// let base: *mut f32 = SharedArray::as_raw_mut_ptr(&raw mut TILE);
/// ```
///
/// `TILE[i]` is bounds-checked (out of range traps). The methods that take `&self`
/// (`TILE.read(i)`, `TILE.as_mut_ptr()`) make a reference to the `static mut`, which edition 2024
/// refuses (`static_mut_refs`): for methods declare a plain `static` of [`SharedMemory`] instead.
///
/// It is not `Sync`: a plain `static` of it would let safe code index elements that other threads
/// are writing, or that nobody wrote. Such a `static` is an error that names both declarations.
#[repr(transparent)]
#[cfg_attr(cuda_oxide, oxide::lang = "shared_array")]
pub struct SharedArray<T, const N: usize, const ALIGN: usize = 0> {
    cells: UnsafeCell<MaybeUninit<[T; N]>>,
}

// Never `Sync` (no type satisfies the bound): a plain `static` of it fails with the bound's
// message, which shows the declarations that work, rather than with "`UnsafeCell` cannot be shared
// between threads safely".
#[doc(hidden)]
unsafe impl<T, const N: usize, const ALIGN: usize> Sync for SharedArray<T, N, ALIGN> where
    declaration::PlainStatic: declaration::AllowsSharedArray<T, N, ALIGN>
{
}

/// The unsatisfiable bound behind `SharedArray`'s `Sync`, for its error message. Unnameable
/// outside this crate, so no other crate can satisfy it.
mod declaration {
    /// A `static` without `mut`.
    pub enum PlainStatic {}

    #[diagnostic::on_unimplemented(
        message = "`SharedArray<{T}, {N}, {ALIGN}>` is declared `static mut`: a plain `static` needs a `Sync` type",
        label = "a plain `static` of `SharedArray`",
        note = "a plain `static` of shared memory is `static TILE: SharedMemory<{T}, {N}, {ALIGN}> = SharedMemory::UNINIT;` \
                (`unsafe {{ TILE.read(i) }}`, `unsafe {{ TILE.write(i, v) }}`, `TILE.as_mut_ptr()`)",
        note = "an indexed one is `static mut TILE: SharedArray<{T}, {N}, {ALIGN}> = SharedArray::UNINIT;` (`unsafe {{ TILE[i] }}`)"
    )]
    pub trait AllowsSharedArray<T, const N: usize, const ALIGN: usize> {}

    /// Only for the uninhabited `Never`: the trait has an impl (so rustc does not suggest adding
    /// one), and `do_not_recommend` keeps it out of the message.
    #[allow(dead_code)] // named only by the impl below
    pub enum Never {}
    #[diagnostic::do_not_recommend]
    impl<T, const N: usize, const ALIGN: usize> AllowsSharedArray<T, N, ALIGN> for Never {}
}

impl<T, const N: usize, const ALIGN: usize> SharedArray<T, N, ALIGN> {
    /// The initialiser of a `SharedArray` static: `= SharedArray::UNINIT` (contents undefined).
    // A const with interior mutability on purpose: it initialises statics, like `AtomicU32::new`.
    #[allow(clippy::declare_interior_mutable_const)]
    pub const UNINIT: Self = SharedArray { cells: UnsafeCell::new(MaybeUninit::uninit()) };

    /// The same as [`SharedArray::UNINIT`], as a function: `= SharedArray::new()`.
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Self {
        Self::UNINIT
    }

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
    /// `SharedArray::<u8, 256, 128>::alignment() == 128`.
    #[inline(always)]
    pub const fn alignment() -> usize {
        ALIGN
    }

    /// Generic address of element 0 (valid for this block only; see
    /// [`crate::cluster::map_shared_rank`] for another block's copy).
    #[inline(always)]
    pub fn as_mut_ptr(&self) -> *mut T {
        self.cells.get().cast()
    }

    /// [`SharedArray::as_mut_ptr`], as a `*const T`.
    #[inline(always)]
    pub fn as_ptr(&self) -> *const T {
        self.as_mut_ptr()
    }

    /// Element 0 of the array behind a raw pointer, without making a reference to the whole
    /// array (which a `static mut` discourages): `SharedArray::as_raw_mut_ptr(&raw mut TILE)`.
    #[inline(always)]
    pub const fn as_raw_mut_ptr(shared: *mut Self) -> *mut T {
        shared.cast()
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

/// `TILE[i]` (through a `static mut`, so in `unsafe`): element `i`, bounds-checked. The rules of
/// [`SharedArray::read`] apply: it was written, and no other thread writes it until the next
/// barrier.
impl<T, const N: usize, const ALIGN: usize> Index<usize> for SharedArray<T, N, ALIGN> {
    type Output = T;

    #[inline(always)]
    fn index(&self, i: usize) -> &T {
        // SAFETY: checked (a deferred trap, as `read`); the caller reached `self` through an
        // `unsafe` access to the static, taking on the rules above.
        unsafe { &*intrinsics::shared_index_checked(self.as_mut_ptr(), i, N) }
    }
}

/// `TILE[i] = x`: element `i`, bounds-checked. The rules of [`SharedArray::write`] apply: no
/// other thread reads or writes it until the next barrier.
impl<T, const N: usize, const ALIGN: usize> IndexMut<usize> for SharedArray<T, N, ALIGN> {
    #[inline(always)]
    fn index_mut(&mut self, i: usize) -> &mut T {
        // SAFETY: as for `index`.
        unsafe { &mut *intrinsics::shared_index_checked(self.as_mut_ptr(), i, N) }
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

/// [`dynamic_size_bytes`] under NVIDIA cuda-oxide's name: `shared::dynamic_smem_size()`.
#[inline(always)]
pub fn dynamic_smem_size() -> u32 {
    dynamic_size_bytes()
}

/// The block's whole shared memory in bytes, static and dynamic (`%total_smem_size`).
///
/// ```ignore
/// let static_bytes = shared::total_smem_size() - shared::dynamic_smem_size();
/// ```
#[inline(always)]
pub fn total_smem_size() -> u32 {
    intrinsics::total_smem_size()
}

/// Dynamic shared memory as raw pointers, NVIDIA cuda-oxide's form: the memory is declared
/// `ALIGN`-byte aligned (16 by default; the largest `ALIGN` any kernel of the module asks for
/// applies to all). All calls address the same memory, of the launch's `shared_mem_bytes`:
///
/// ```ignore
/// let a: *mut f32 = DynamicSharedArray::<f32>::get();           // bytes 0..1024
/// let b: *mut f32 = DynamicSharedArray::<f32>::offset(1024);    // bytes 1024..
/// let staged: *mut u8 = DynamicSharedArray::<u8, 128>::get_raw();
/// ```
/// The pointers are raw: what is read or written through them is the caller's business, with the
/// rules of [`SharedArray::read`] and [`SharedArray::write`]. [`dynamic`] gives a bounds-checked
/// view instead.
pub struct DynamicSharedArray<T, const ALIGN: usize = 16>(PhantomData<UnsafeCell<T>>);

impl<T, const ALIGN: usize> DynamicSharedArray<T, ALIGN> {
    /// The alignment asked for, `ALIGN`.
    #[inline(always)]
    pub const fn alignment() -> usize {
        ALIGN
    }

    /// Generic address of the start of dynamic shared memory, as a `*mut T`.
    #[inline(always)]
    pub fn get() -> *mut T {
        Self::get_raw().cast()
    }

    /// Generic address of the start of dynamic shared memory, as bytes.
    #[inline(always)]
    pub fn get_raw() -> *mut u8 {
        intrinsics::dynamic_shared_ptr_aligned::<ALIGN>()
    }

    /// The address `byte_offset` bytes into dynamic shared memory, as a `*mut T` (keeping it
    /// aligned for `T` is the caller's part).
    #[inline(always)]
    pub fn offset(byte_offset: usize) -> *mut T {
        Self::get_raw().wrapping_add(byte_offset).cast()
    }
}

/// The offset of a shared-memory address in the block's shared window (`cvta.to.shared`): the
/// form `ldmatrix`, `cp.async` and mbarrier addresses take.
///
/// ```ignore
/// let off = unsafe { shared::cvta_generic_to_shared_offset((&raw const TILE).cast()) };
/// ```
///
/// # Safety
/// `ptr` points into this block's shared memory (a [`SharedArray`] or dynamic shared memory);
/// for any other address the result is meaningless.
#[inline(always)]
pub unsafe fn cvta_generic_to_shared_offset(ptr: *const u8) -> u64 {
    intrinsics::cvta_to_shared(ptr)
}
