//! Atomic read-modify-write operations on global and shared memory, as CUDA's `atomicAdd` & co.
//!
//! The functions at the top level have device scope (`atomicAdd`); [`block`], [`cluster`] and
//! [`system`] hold the same functions with block (`atomicAdd_block`), cluster (sm_90) and system
//! (`atomicAdd_system`) scope. All are relaxed (no ordering of other accesses: use
//! [`crate::sync`]'s fences or barriers for that) and return the value before the operation.
//! The pointer may point to global or shared memory; the compiler emits `atom.global` /
//! `atom.shared` where it can tell which, and a generic `atom` otherwise.

use crate::intrinsics;

/// Operation codes understood by the backend (`codegen-driver/src/device/intrinsic/atomic.rs`).
#[doc(hidden)]
pub mod op {
    pub const ADD: u8 = 0;
    pub const SUB: u8 = 1;
    pub const AND: u8 = 2;
    pub const OR: u8 = 3;
    pub const XOR: u8 = 4;
    pub const MIN: u8 = 5;
    pub const MAX: u8 = 6;
    pub const EXCH: u8 = 7;
    pub const INC: u8 = 8;
    pub const DEC: u8 = 9;
}

/// Scope codes understood by the backend.
#[doc(hidden)]
pub mod scope {
    pub const BLOCK: u8 = 0;
    pub const CLUSTER: u8 = 1;
    pub const DEVICE: u8 = 2;
    pub const SYSTEM: u8 = 3;
}

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
            intrinsics::atomic_rmw::<T, { op::ADD }, { $scope }>(ptr, val)
        }

        #[doc = concat!("`atomicSub", $suffix, "`: `*ptr -= val` (wrapping); returns the old value.")]
        ///
        /// # Safety
        /// As for [`add`].
        #[inline(always)]
        pub unsafe fn sub<T: AtomicInt>(ptr: *mut T, val: T) -> T {
            intrinsics::atomic_rmw::<T, { op::SUB }, { $scope }>(ptr, val)
        }

        #[doc = concat!("`atomicMin", $suffix, "`: `*ptr = min(*ptr, val)`; returns the old value.")]
        ///
        /// # Safety
        /// As for [`add`].
        #[inline(always)]
        pub unsafe fn min<T: AtomicInt>(ptr: *mut T, val: T) -> T {
            intrinsics::atomic_rmw::<T, { op::MIN }, { $scope }>(ptr, val)
        }

        #[doc = concat!("`atomicMax", $suffix, "`: `*ptr = max(*ptr, val)`; returns the old value.")]
        ///
        /// # Safety
        /// As for [`add`].
        #[inline(always)]
        pub unsafe fn max<T: AtomicInt>(ptr: *mut T, val: T) -> T {
            intrinsics::atomic_rmw::<T, { op::MAX }, { $scope }>(ptr, val)
        }

        #[doc = concat!("`atomicAnd", $suffix, "`: `*ptr &= val`; returns the old value.")]
        ///
        /// # Safety
        /// As for [`add`].
        #[inline(always)]
        pub unsafe fn and<T: AtomicInt>(ptr: *mut T, val: T) -> T {
            intrinsics::atomic_rmw::<T, { op::AND }, { $scope }>(ptr, val)
        }

        #[doc = concat!("`atomicOr", $suffix, "`: `*ptr |= val`; returns the old value.")]
        ///
        /// # Safety
        /// As for [`add`].
        #[inline(always)]
        pub unsafe fn or<T: AtomicInt>(ptr: *mut T, val: T) -> T {
            intrinsics::atomic_rmw::<T, { op::OR }, { $scope }>(ptr, val)
        }

        #[doc = concat!("`atomicXor", $suffix, "`: `*ptr ^= val`; returns the old value.")]
        ///
        /// # Safety
        /// As for [`add`].
        #[inline(always)]
        pub unsafe fn xor<T: AtomicInt>(ptr: *mut T, val: T) -> T {
            intrinsics::atomic_rmw::<T, { op::XOR }, { $scope }>(ptr, val)
        }

        #[doc = concat!("`atomicExch", $suffix, "`: `*ptr = val`; returns the old value.")]
        ///
        /// # Safety
        /// As for [`add`].
        #[inline(always)]
        pub unsafe fn exchange<T: AtomicValue>(ptr: *mut T, val: T) -> T {
            intrinsics::atomic_rmw::<T, { op::EXCH }, { $scope }>(ptr, val)
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
            intrinsics::atomic_rmw::<u32, { op::INC }, { $scope }>(ptr, limit)
        }

        #[doc = concat!("`atomicDec", $suffix, "`: `*ptr = if *ptr == 0 || *ptr > limit { limit } else { *ptr - 1 }`; returns the old value.")]
        ///
        /// # Safety
        /// As for [`add`].
        #[inline(always)]
        pub unsafe fn dec_wrap(ptr: *mut u32, limit: u32) -> u32 {
            intrinsics::atomic_rmw::<u32, { op::DEC }, { $scope }>(ptr, limit)
        }
    };
}

mod device_scope {
    scoped_atomics!(scope::DEVICE, "");
}
pub use device_scope::*;

/// The same operations with block scope (`atomicAdd_block` & co.): atomic only with respect to
/// the threads of this block; cheaper, right for shared memory.
pub mod block {
    scoped_atomics!(scope::BLOCK, "_block");
}

/// The same operations with cluster scope (sm_90): atomic with respect to the threads of this
/// thread block cluster.
pub mod cluster {
    scoped_atomics!(scope::CLUSTER, "_cluster");
}

/// The same operations with system scope (`atomicAdd_system` & co.): atomic with respect to the
/// host and peer devices too (for mapped or managed memory).
pub mod system {
    scoped_atomics!(scope::SYSTEM, "_system");
}
