//! Atomic read-modify-write operations on global and shared memory, as CUDA's `atomicAdd` & co.
//!
//! The functions at the top level have device scope (`atomicAdd`); [`block`], [`cluster`] and
//! [`system`] hold the same functions with block (`atomicAdd_block`), cluster (sm_90) and system
//! (`atomicAdd_system`) scope. All are relaxed (no ordering of other accesses: use
//! [`crate::sync`]'s fences or barriers for that) and return the value before the operation.
//! The pointer may point to global or shared memory; the compiler emits `atom.global` /
//! `atom.shared` where it can tell which, and a generic `atom` otherwise.
//!
//! For orderings other than relaxed, and for atomic loads and stores, use the cell types
//! (`DeviceAtomicU32`, `BlockAtomicI64`, `SystemAtomicF32`, … with [`AtomicOrdering`]):
//!
//! ```no_run
//! # use cuda_device::{atomic, cuda_module, kernel, thread};
//! #[cuda_module]
//! mod kernels {
//!     use super::*;
//!
//!     /// Counts the positive elements: one device-scoped atomic add per positive element.
//!     #[kernel]
//!     pub fn count_positive(x: &[f32], count: &mut [u32]) {
//!         let i = thread::index_1d().get();
//!         if i < x.len() && x[i] > 0.0 && !count.is_empty() {
//!             // SAFETY: `count[0]` exists and is only updated atomically while the kernel runs.
//!             unsafe { atomic::add(count.as_mut_ptr(), 1u32) };
//!         }
//!     }
//!
//!     /// The same publication pattern with a typed cell and acquire/release ordering.
//!     #[kernel]
//!     pub fn publish(flags: &mut [u32]) {
//!         if flags.is_empty() {
//!             return;
//!         }
//!         // SAFETY: `flags[0]` is accessed only through this cell while the kernel runs.
//!         let flag = unsafe { atomic::DeviceAtomicU32::from_ptr(flags.as_mut_ptr()) };
//!         flag.store(1, atomic::AtomicOrdering::Release);
//!     }
//! }
//! # fn main() {}
//! ```
//! `core::sync::atomic` types work in kernels too, with system scope.

use crate::intrinsics;

mod cells;

pub use cells::*;

// The operation and scope codes the backend understands (the contract owns them).
use oxide_contract::atomic::{AtomicOp, AtomicScope};

mod sealed {
    pub trait Sealed {}
}

/// Types with atomic exchange and compare-and-swap: `u32`, `i32`, `u64`, `i64`, `f32`, `f64`.
pub trait AtomicValue: Copy + sealed::Sealed {}
/// Types with atomic add: `u32`, `i32`, `u64`, `i64`, `f32`, `f64`.
pub trait AtomicAdd: AtomicValue {}
/// Types with atomic sub/min/max/and/or/xor: `u32`, `i32`, `u64`, `i64`.
pub trait AtomicInt: AtomicAdd {}

macro_rules! impl_atomic {
    ($($t:ty: $($tr:ident)*;)*) => {$(
        impl sealed::Sealed for $t {}
        $(impl $tr for $t {})*
    )*};
}
impl_atomic! {
    u32: AtomicValue AtomicAdd AtomicInt;
    i32: AtomicValue AtomicAdd AtomicInt;
    u64: AtomicValue AtomicAdd AtomicInt;
    i64: AtomicValue AtomicAdd AtomicInt;
    f32: AtomicValue AtomicAdd;
    f64: AtomicValue AtomicAdd;
}

macro_rules! scoped_atomics {
    ($scope:expr, $suffix:literal) => {
        use super::*;

        #[doc = concat!("`atomicAdd", $suffix, "`: `*ptr += val`; returns the old value.")]
        ///
        /// # Safety
        /// `ptr` is valid, aligned, and every concurrent access to `*ptr` is atomic.
        #[inline(always)]
        pub unsafe fn add<T: AtomicAdd>(ptr: *mut T, val: T) -> T {
            intrinsics::atomic_rmw::<T, { AtomicOp::Add as u8 }, { $scope }>(ptr, val)
        }

        #[doc = concat!("`atomicSub", $suffix, "`: `*ptr -= val` (wrapping); returns the old value.")]
        ///
        /// # Safety
        /// As for [`add`].
        #[inline(always)]
        pub unsafe fn sub<T: AtomicInt>(ptr: *mut T, val: T) -> T {
            intrinsics::atomic_rmw::<T, { AtomicOp::Sub as u8 }, { $scope }>(ptr, val)
        }

        #[doc = concat!("`atomicMin", $suffix, "`: `*ptr = min(*ptr, val)`; returns the old value.")]
        ///
        /// # Safety
        /// As for [`add`].
        #[inline(always)]
        pub unsafe fn min<T: AtomicInt>(ptr: *mut T, val: T) -> T {
            intrinsics::atomic_rmw::<T, { AtomicOp::Min as u8 }, { $scope }>(ptr, val)
        }

        #[doc = concat!("`atomicMax", $suffix, "`: `*ptr = max(*ptr, val)`; returns the old value.")]
        ///
        /// # Safety
        /// As for [`add`].
        #[inline(always)]
        pub unsafe fn max<T: AtomicInt>(ptr: *mut T, val: T) -> T {
            intrinsics::atomic_rmw::<T, { AtomicOp::Max as u8 }, { $scope }>(ptr, val)
        }

        #[doc = concat!("`atomicAnd", $suffix, "`: `*ptr &= val`; returns the old value.")]
        ///
        /// # Safety
        /// As for [`add`].
        #[inline(always)]
        pub unsafe fn and<T: AtomicInt>(ptr: *mut T, val: T) -> T {
            intrinsics::atomic_rmw::<T, { AtomicOp::And as u8 }, { $scope }>(ptr, val)
        }

        #[doc = concat!("`atomicOr", $suffix, "`: `*ptr |= val`; returns the old value.")]
        ///
        /// # Safety
        /// As for [`add`].
        #[inline(always)]
        pub unsafe fn or<T: AtomicInt>(ptr: *mut T, val: T) -> T {
            intrinsics::atomic_rmw::<T, { AtomicOp::Or as u8 }, { $scope }>(ptr, val)
        }

        #[doc = concat!("`atomicXor", $suffix, "`: `*ptr ^= val`; returns the old value.")]
        ///
        /// # Safety
        /// As for [`add`].
        #[inline(always)]
        pub unsafe fn xor<T: AtomicInt>(ptr: *mut T, val: T) -> T {
            intrinsics::atomic_rmw::<T, { AtomicOp::Xor as u8 }, { $scope }>(ptr, val)
        }

        #[doc = concat!("`atomicExch", $suffix, "`: `*ptr = val`; returns the old value.")]
        ///
        /// # Safety
        /// As for [`add`].
        #[inline(always)]
        pub unsafe fn exchange<T: AtomicValue>(ptr: *mut T, val: T) -> T {
            intrinsics::atomic_rmw::<T, { AtomicOp::Exch as u8 }, { $scope }>(ptr, val)
        }

        #[doc = concat!("`atomicCAS", $suffix, "`: if `*ptr == current` (bitwise) then `*ptr = new`; returns the old value")]
        /// (the swap happened when it equals `current`).
        ///
        /// # Safety
        /// As for [`add`].
        #[inline(always)]
        pub unsafe fn compare_exchange<T: AtomicValue>(ptr: *mut T, current: T, new: T) -> T {
            intrinsics::atomic_cas::<T, { $scope }>(ptr, current, new)
        }

        #[doc = concat!("`atomicInc", $suffix, "`: `*ptr = if *ptr >= limit { 0 } else { *ptr + 1 }`; returns the old value.")]
        ///
        /// # Safety
        /// As for [`add`].
        #[inline(always)]
        pub unsafe fn inc_wrap(ptr: *mut u32, limit: u32) -> u32 {
            intrinsics::atomic_rmw::<u32, { AtomicOp::Inc as u8 }, { $scope }>(ptr, limit)
        }

        #[doc = concat!("`atomicDec", $suffix, "`: `*ptr = if *ptr == 0 || *ptr > limit { limit } else { *ptr - 1 }`; returns the old value.")]
        ///
        /// # Safety
        /// As for [`add`].
        #[inline(always)]
        pub unsafe fn dec_wrap(ptr: *mut u32, limit: u32) -> u32 {
            intrinsics::atomic_rmw::<u32, { AtomicOp::Dec as u8 }, { $scope }>(ptr, limit)
        }
    };
}

mod device_scope {
    scoped_atomics!(AtomicScope::Device as u8, "");
}
pub use device_scope::*;

/// `atom.add.noftz.f16x2` (NVIDIA cuda-oxide's name): adds the f16 pair `val` to the pair at
/// `addr`, each half atomically on its own (the old pair returned need not be one snapshot),
/// device scope, relaxed, rounding to nearest and keeping subnormals. Both pairs hold element 0
/// in the low 16 bits.
///
/// # Safety
/// `addr` points to a 4-byte aligned pair in global memory whose concurrent accesses are all
/// atomic.
#[inline(always)]
pub unsafe fn atom_add_f16x2(addr: *mut u32, val: u32) -> u32 {
    intrinsics::atom_add_noftz_f16x2(addr, val)
}

/// `atom.add.noftz.bf16x2` (sm_90; NVIDIA cuda-oxide's name): [`atom_add_f16x2`] on bf16 pairs.
/// A build for an older `--arch` is refused.
///
/// # Safety
/// As for [`atom_add_f16x2`].
#[inline(always)]
pub unsafe fn atom_add_bf16x2(addr: *mut u32, val: u32) -> u32 {
    intrinsics::atom_add_noftz_bf16x2(addr, val)
}

/// The same operations with block scope (`atomicAdd_block` & co.): atomic only with respect to
/// the threads of this block; cheaper, right for shared memory.
pub mod block {
    scoped_atomics!(AtomicScope::Block as u8, "_block");
}

/// The same operations with cluster scope (sm_90): atomic with respect to the threads of this
/// thread block cluster.
pub mod cluster {
    scoped_atomics!(AtomicScope::Cluster as u8, "_cluster");
}

/// The same operations with system scope (`atomicAdd_system` & co.): atomic with respect to the
/// host and peer devices too (for mapped or managed memory).
pub mod system {
    scoped_atomics!(AtomicScope::System as u8, "_system");
}
