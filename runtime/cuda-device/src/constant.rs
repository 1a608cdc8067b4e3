//! Constant memory (`__constant__`): a `static` of type [`ConstantMemory<T>`] lives in the PTX
//! `.const` state space, read by every thread of a launch through the constant cache and written
//! by the host between launches.
//!
//! The PTX symbol is the static's own name, so the host finds it with `cuModuleGetGlobal`:
//! `module.write_global(&stream, "COEFFS", &value)` on a loaded `cuda_core::Module`. A static
//! of a `#[cuda_module]` marked `#[constant]` (NVIDIA cuda-oxide's spelling) also gets
//! `set_coeffs(&stream, &value)` and `set_coeffs_blocking(&value)` on the generated `Module`
//! (the name lower-cased), which write it wherever the module's device code has it. Until
//! written, it holds the static's initial value.
//!
//! ```
//! use cuda_device::ConstantMemory;
//!
//! static COEFFS: ConstantMemory<[f32; 4]> = ConstantMemory::new([0.5, 0.25, 0.125, 0.0625]);
//! // In a kernel: a whole-value read, or an element read in place.
//! assert_eq!(COEFFS.get()[1], 0.25);
//! assert_eq!(COEFFS.get_ref()[3], 0.0625);
//! ```
//!
//! ```no_run
//! # use cuda_device::{ConstantMemory, DisjointSlice, cuda_module, kernel, thread};
//! static WEIGHTS: ConstantMemory<[f32; 4]> = ConstantMemory::new([0.1, 0.2, 0.3, 0.4]);
//!
//! #[cuda_module]
//! mod kernels {
//!     use super::*;
//!
//!     #[kernel]
//!     pub fn weigh(x: &[f32], mut out: DisjointSlice<f32>) {
//!         let idx = thread::index_1d();
//!         let i = idx.get();
//!         if let Some(o) = out.get_mut(idx) {
//!             *o = x[i] * WEIGHTS.get_ref()[i % 4];
//!         }
//!     }
//! }
//! # fn main() {}
//! ```

//! ```no_run
//! use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
//! use cuda_device::{ConstantMemory, DisjointSlice, constant, cuda_module, kernel, thread};
//!
//! #[cuda_module]
//! mod kernels {
//!     use super::*;
//!
//!     #[constant]
//!     static SCALE: ConstantMemory<f32> = ConstantMemory::UNINIT;
//!
//!     #[kernel]
//!     pub fn scale(mut out: DisjointSlice<f32>) {
//!         let idx = thread::index_1d();
//!         let i = idx.get();
//!         if let Some(o) = out.get_mut(idx) {
//!             *o = i as f32 * SCALE.get();
//!         }
//!     }
//! }
//!
//! fn main() -> Result<(), cuda_core::DriverError> {
//!     let ctx = CudaContext::new(0)?;
//!     let stream = ctx.default_stream();
//!     let module = kernels::load(&ctx)?;
//!     module.set_scale(&stream, &3.0)?; // ordered before the launch on `stream`
//!     let mut out = DeviceBuffer::<f32>::zeroed(&stream, 8)?;
//!     module.scale(&stream, LaunchConfig::for_num_elems(8), &mut out)?;
//!     assert_eq!(out.to_host_vec(&stream)?[2], 6.0);
//!     Ok(())
//! }
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

/// The types a `#[constant]` static may have: [`ConstantMemory<T>`], whose host-side value is
/// `T` (the generated `set_<name>` methods take `&Value`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not constant memory: a #[constant] static has the type `ConstantMemory<T>`",
    label = "not `ConstantMemory<T>`",
    note = "declare it as `static NAME: ConstantMemory<{Self}> = ConstantMemory::UNINIT;` and read it with `NAME.get()`"
)]
pub trait ConstantStatic {
    /// What the host writes.
    type Value: ConstantMemoryValue;
}

impl<T: ConstantMemoryValue> ConstantStatic for ConstantMemory<T> {
    type Value = T;
}
