//! Constant memory (`__constant__`): a `static` of type [`ConstantMemory<T>`] lives in the PTX
//! `.const` state space, read by every thread of a launch through the constant cache and written
//! by the host between launches.
//!
//! The PTX symbol is the static's own name, so the host finds it with `cuModuleGetGlobal`:
//! `bundle.write_global(&stream, "COEFFS", &value)` on a `cuda_core::LoadedBundle` (generated
//! `set_<name>` methods on `#[cuda_module]`'s `Module` are planned). Until written, it holds
//! the static's initial value.
//!
//! ```
//! use cuda_device::ConstantMemory;
//!
//! static COEFFS: ConstantMemory<[f32; 4]> = ConstantMemory::new([0.5, 0.25, 0.125, 0.0625]);
//! // In a kernel: a whole-value read, or an element read in place.
//! assert_eq!(COEFFS.get()[1], 0.25);
//! assert_eq!(COEFFS.get_ref()[3], 0.0625);
//! ```

use core::cell::UnsafeCell;

/// What may live in constant memory: plain data, the same rule as device buffers. NVIDIA's
/// cuda-oxide calls it `ConstantMemoryValue`.
pub use cuda_core::DeviceCopy as ConstantMemoryValue;

/// A value in constant memory; declare it as a `static` (see the module docs).
#[repr(transparent)]
#[cfg_attr(cuda_oxide, oxide::lang = "constant_memory")]
pub struct ConstantMemory<T: ConstantMemoryValue> {
    // `UnsafeCell`: the host rewrites it between launches, so the compiler must not fold reads
    // of the initial value.
    value: UnsafeCell<T>,
}

// SAFETY: kernels only read it; the host writes it between launches, never during one.
unsafe impl<T: ConstantMemoryValue + Send> Sync for ConstantMemory<T> {}

impl<T: ConstantMemoryValue> ConstantMemory<T> {
    /// Constant memory holding `value` until the host writes it.
    pub const fn new(value: T) -> Self {
        ConstantMemory { value: UnsafeCell::new(value) }
    }

    /// All-zero bytes (NVIDIA's spelling; every `DeviceCopy` type accepts them). Meant as a
    /// `static`'s initial value, which is why a `const` with interior mutability is fine here.
    // SAFETY: `ConstantMemoryValue` types are plain data for which zero bytes are a value.
    #[allow(clippy::declare_interior_mutable_const)]
    pub const UNINIT: Self = ConstantMemory { value: UnsafeCell::new(unsafe { core::mem::zeroed() }) };

    /// The current value (`ld.const`).
    #[inline(always)]
    pub fn get(&self) -> T {
        // SAFETY: nothing writes it while a kernel runs.
        unsafe { self.value.get().read() }
    }

    /// A reference to the value in constant memory, to read parts of it (one table entry).
    #[inline(always)]
    pub fn get_ref(&self) -> &T {
        // SAFETY: as in `get`.
        unsafe { &*self.value.get() }
    }
}
