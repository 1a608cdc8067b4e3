//! Atomic cells with the scope in the type and an ordering per operation, as NVIDIA's cuda-oxide
//! names them: `DeviceAtomicU32` (`.gpu`), `BlockAtomicU32` (`.cta`), `SystemAtomicU32` (`.sys`),
//! for `u32 i32 u64 i64 f16 f32 f64`, with [`AtomicOrdering`]. They have the layout of the plain value
//! (as `core::sync::atomic::AtomicU32` has), so a buffer of `u32` can be used as one of them.
//!
//! An ordering an operation cannot have (a `Release` load, an `Acquire` store, an `AcqRel` or
//! `Release` failure ordering of `compare_exchange`) panics, as `core::sync::atomic` does; in a
//! kernel a panic traps.

use core::cell::UnsafeCell;

use oxide_contract::atomic::{AtomicOp, AtomicOrdering as Code, AtomicScope};

use crate::intrinsics;

/// The memory ordering of an atomic operation (the meanings of `core::sync::atomic::Ordering`;
/// named apart from it so both can be imported).
///
/// ```ignore
/// flag.store(1, AtomicOrdering::Release);            // publish
/// while flag.load(AtomicOrdering::Acquire) == 0 {}  // observe
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum AtomicOrdering {
    /// Atomicity only: no ordering of other memory accesses.
    Relaxed = Code::Relaxed as u8,
    /// A load (or the load of a read-modify-write) after which this thread sees everything the
    /// releasing thread wrote before its release.
    Acquire = Code::Acquire as u8,
    /// A store (or the store of a read-modify-write) that publishes this thread's earlier writes
    /// to threads that acquire it.
    Release = Code::Release as u8,
    /// Acquire and release, for read-modify-writes.
    AcqRel = Code::AcqRel as u8,
    /// Acquire/release plus one total order of all `SeqCst` operations (a `fence.sc` first).
    SeqCst = Code::SeqCst as u8,
}

/// Calls `$f::<ORDER>` with the const ordering code of the runtime `$order` (a constant after
/// inlining, so one arm remains); `$bad` lists the orderings the operation cannot have.
macro_rules! with_order {
    ($order:expr, |$o:ident| $call:expr, $($bad:ident => $msg:literal),*) => {
        match $order {
            $(AtomicOrdering::$bad => panic!($msg),)*
            #[allow(unreachable_patterns)]
            AtomicOrdering::Relaxed => { const $o: u8 = Code::Relaxed as u8; $call }
            #[allow(unreachable_patterns)]
            AtomicOrdering::Acquire => { const $o: u8 = Code::Acquire as u8; $call }
            #[allow(unreachable_patterns)]
            AtomicOrdering::Release => { const $o: u8 = Code::Release as u8; $call }
            #[allow(unreachable_patterns)]
            AtomicOrdering::AcqRel => { const $o: u8 = Code::AcqRel as u8; $call }
            #[allow(unreachable_patterns)]
            AtomicOrdering::SeqCst => { const $o: u8 = Code::SeqCst as u8; $call }
        }
    };
}

#[inline(always)]
fn load<T, const SCOPE: u8>(ptr: *const T, order: AtomicOrdering) -> T {
    with_order!(order, |O| intrinsics::atomic_load::<T, SCOPE, O>(ptr),
        Release => "there is no such thing as a release atomic load",
        AcqRel => "there is no such thing as an acquire-release atomic load")
}

#[inline(always)]
fn store<T, const SCOPE: u8>(ptr: *mut T, val: T, order: AtomicOrdering) {
    with_order!(order, |O| intrinsics::atomic_store::<T, SCOPE, O>(ptr, val),
        Acquire => "there is no such thing as an acquire atomic store",
        AcqRel => "there is no such thing as an acquire-release atomic store")
}

#[inline(always)]
fn rmw<T, const OP: u8, const SCOPE: u8>(ptr: *mut T, val: T, order: AtomicOrdering) -> T {
    with_order!(order, |O| intrinsics::atomic_rmw_ordered::<T, OP, SCOPE, O>(ptr, val),)
}

/// `cmpxchg`: the old value, whatever happened.
#[inline(always)]
fn cas<T, const SCOPE: u8>(ptr: *mut T, current: T, new: T, success: AtomicOrdering, failure: AtomicOrdering) -> T {
    with_order!(success, |S| {
        with_order!(failure, |F| intrinsics::atomic_cas_ordered::<T, SCOPE, S, F>(ptr, current, new),
            Release => "there is no such thing as a release failure ordering",
            AcqRel => "there is no such thing as an acquire-release failure ordering")
    },)
}

/// Methods of every cell type: construction, views of existing memory, load, store, swap, add.
macro_rules! common_methods {
    ($name:ident, $t:ty, $scope:expr) => {
        /// A cell holding `v` (for a `static` or a local; kernels usually view buffer memory with
        /// [`from_ptr`](Self::from_ptr)).
        #[inline(always)]
        pub const fn new(v: $t) -> Self {
            $name { v: UnsafeCell::new(v) }
        }

        #[doc = concat!("The `", stringify!($t), "` at `ptr` as a cell: `let hits = unsafe { ", stringify!($name), "::from_ptr(counts.as_mut_ptr().add(bin)) };`")]
        ///
        /// # Safety
        /// `ptr` is valid and aligned for the lifetime `'a`, every access to it during `'a` is
        /// atomic, and (for the block scope) only threads of one block access it, (for the
        /// system scope) the memory is visible to the host and peers.
        #[inline(always)]
        pub const unsafe fn from_ptr<'a>(ptr: *mut $t) -> &'a Self {
            unsafe { &*ptr.cast::<Self>() }
        }

        /// The address of the value, for other atomic operations or the host.
        #[inline(always)]
        pub const fn as_ptr(&self) -> *mut $t {
            self.v.get()
        }

        /// The value, when no other thread can access the cell.
        #[inline(always)]
        pub fn get_mut(&mut self) -> &mut $t {
            self.v.get_mut()
        }

        /// The value, consuming the cell.
        #[inline(always)]
        pub fn into_inner(self) -> $t {
            self.v.into_inner()
        }

        /// Atomic load (`ld.relaxed/.acquire`); `order` is `Relaxed`, `Acquire` or `SeqCst`.
        #[inline(always)]
        pub fn load(&self, order: AtomicOrdering) -> $t {
            load::<$t, { $scope }>(self.v.get(), order)
        }

        /// Atomic store (`st.relaxed/.release`); `order` is `Relaxed`, `Release` or `SeqCst`.
        #[inline(always)]
        pub fn store(&self, val: $t, order: AtomicOrdering) {
            store::<$t, { $scope }>(self.v.get(), val, order)
        }

        /// Stores `val`; returns the previous value (`atom.exch`).
        #[inline(always)]
        pub fn swap(&self, val: $t, order: AtomicOrdering) -> $t {
            rmw::<$t, { AtomicOp::Exch as u8 }, { $scope }>(self.v.get(), val, order)
        }

        /// Adds `val` (wrapping for integers); returns the previous value (`atom.add`).
        #[inline(always)]
        pub fn fetch_add(&self, val: $t, order: AtomicOrdering) -> $t {
            rmw::<$t, { AtomicOp::Add as u8 }, { $scope }>(self.v.get(), val, order)
        }
    };
}

macro_rules! int_cells {
    ($($name:ident($t:ty, $scope:expr, $scope_doc:literal);)*) => {$(
        #[doc = concat!("A `", stringify!($t), "` with atomic operations at ", $scope_doc, " scope.")]
        ///
        /// ```ignore
        #[doc = concat!("let cell = unsafe { ", stringify!($name), "::from_ptr(buf.as_mut_ptr()) };")]
        /// let before = cell.fetch_add(1, AtomicOrdering::Relaxed);
        /// if cell.compare_exchange(0, 7, AtomicOrdering::AcqRel, AtomicOrdering::Acquire).is_ok() { … }
        /// ```
        #[repr(transparent)]
        pub struct $name {
            v: UnsafeCell<$t>,
        }

        // SAFETY: every access through a shared reference is atomic.
        unsafe impl Sync for $name {}

        impl $name {
            common_methods!($name, $t, $scope);

            /// Subtracts `val` (wrapping); returns the previous value.
            #[inline(always)]
            pub fn fetch_sub(&self, val: $t, order: AtomicOrdering) -> $t {
                rmw::<$t, { AtomicOp::Sub as u8 }, { $scope }>(self.v.get(), val, order)
            }

            /// Bitwise AND with `val`; returns the previous value.
            #[inline(always)]
            pub fn fetch_and(&self, val: $t, order: AtomicOrdering) -> $t {
                rmw::<$t, { AtomicOp::And as u8 }, { $scope }>(self.v.get(), val, order)
            }

            /// Bitwise OR with `val`; returns the previous value.
            #[inline(always)]
            pub fn fetch_or(&self, val: $t, order: AtomicOrdering) -> $t {
                rmw::<$t, { AtomicOp::Or as u8 }, { $scope }>(self.v.get(), val, order)
            }

            /// Bitwise XOR with `val`; returns the previous value.
            #[inline(always)]
            pub fn fetch_xor(&self, val: $t, order: AtomicOrdering) -> $t {
                rmw::<$t, { AtomicOp::Xor as u8 }, { $scope }>(self.v.get(), val, order)
            }

            /// Minimum with `val`; returns the previous value.
            #[inline(always)]
            pub fn fetch_min(&self, val: $t, order: AtomicOrdering) -> $t {
                rmw::<$t, { AtomicOp::Min as u8 }, { $scope }>(self.v.get(), val, order)
            }

            /// Maximum with `val`; returns the previous value.
            #[inline(always)]
            pub fn fetch_max(&self, val: $t, order: AtomicOrdering) -> $t {
                rmw::<$t, { AtomicOp::Max as u8 }, { $scope }>(self.v.get(), val, order)
            }

            /// Stores `new` if the value is `current`: `Ok(current)` if it did, else
            /// `Err(actual value)`. `failure` (the ordering of the load when it did not) is
            /// `Relaxed`, `Acquire` or `SeqCst`.
            #[inline(always)]
            pub fn compare_exchange(
                &self,
                current: $t,
                new: $t,
                success: AtomicOrdering,
                failure: AtomicOrdering,
            ) -> Result<$t, $t> {
                let old = cas::<$t, { $scope }>(self.v.get(), current, new, success, failure);
                if old == current { Ok(old) } else { Err(old) }
            }

            /// [`compare_exchange`](Self::compare_exchange) (the hardware's never fails
            /// spuriously).
            #[inline(always)]
            pub fn compare_exchange_weak(
                &self,
                current: $t,
                new: $t,
                success: AtomicOrdering,
                failure: AtomicOrdering,
            ) -> Result<$t, $t> {
                self.compare_exchange(current, new, success, failure)
            }
        }
    )*};
}

macro_rules! float_cells {
    ($($name:ident($t:ty, $scope:expr, $scope_doc:literal);)*) => {$(
        #[doc = concat!("An `", stringify!($t), "` with atomic load, store, swap, add and sub at ", $scope_doc, " scope.")]
        ///
        /// ```ignore
        #[doc = concat!("let sum = unsafe { ", stringify!($name), "::from_ptr(total.as_mut_ptr()) };")]
        /// sum.fetch_add(x, AtomicOrdering::Relaxed);
        /// ```
        #[repr(transparent)]
        pub struct $name {
            v: UnsafeCell<$t>,
        }

        // SAFETY: every access through a shared reference is atomic.
        unsafe impl Sync for $name {}

        impl $name {
            common_methods!($name, $t, $scope);

            /// Subtracts `val` (an atomic add of `-val`, which rounds the same); returns the
            /// previous value.
            #[inline(always)]
            pub fn fetch_sub(&self, val: $t, order: AtomicOrdering) -> $t {
                self.fetch_add(-val, order)
            }
        }
    )*};
}

const DEVICE: u8 = AtomicScope::Device as u8;
const BLOCK: u8 = AtomicScope::Block as u8;
const SYSTEM: u8 = AtomicScope::System as u8;

int_cells! {
    DeviceAtomicU32(u32, DEVICE, "device (`.gpu`)");
    DeviceAtomicI32(i32, DEVICE, "device (`.gpu`)");
    DeviceAtomicU64(u64, DEVICE, "device (`.gpu`)");
    DeviceAtomicI64(i64, DEVICE, "device (`.gpu`)");
    BlockAtomicU32(u32, BLOCK, "block (`.cta`)");
    BlockAtomicI32(i32, BLOCK, "block (`.cta`)");
    BlockAtomicU64(u64, BLOCK, "block (`.cta`)");
    BlockAtomicI64(i64, BLOCK, "block (`.cta`)");
    SystemAtomicU32(u32, SYSTEM, "system (`.sys`)");
    SystemAtomicI32(i32, SYSTEM, "system (`.sys`)");
    SystemAtomicU64(u64, SYSTEM, "system (`.sys`)");
    SystemAtomicI64(i64, SYSTEM, "system (`.sys`)");
}

float_cells! {
    DeviceAtomicF16(f16, DEVICE, "device (`.gpu`)");
    BlockAtomicF16(f16, BLOCK, "block (`.cta`)");
    SystemAtomicF16(f16, SYSTEM, "system (`.sys`)");
    DeviceAtomicF32(f32, DEVICE, "device (`.gpu`)");
    DeviceAtomicF64(f64, DEVICE, "device (`.gpu`)");
    BlockAtomicF32(f32, BLOCK, "block (`.cta`)");
    BlockAtomicF64(f64, BLOCK, "block (`.cta`)");
    SystemAtomicF32(f32, SYSTEM, "system (`.sys`)");
    SystemAtomicF64(f64, SYSTEM, "system (`.sys`)");
}
