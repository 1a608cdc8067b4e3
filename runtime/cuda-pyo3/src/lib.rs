//! Python extensions with cuda-oxide kernels: PyTorch tensors (and CuPy, Numba, JAX arrays) as
//! kernel arguments, launched on PyTorch's current stream, errors as Python exceptions.
//!
//! A function of an extension module made by `cargo oxide new NAME --template python`:
//!
//! ```ignore
//! use cuda_core::LaunchConfig;
//! use cuda_pyo3::{CudaArray, Kernels, current_stream, same_device, same_shape, to_py_err};
//! use pyo3::prelude::*;
//!
//! static KERNELS: Kernels<kernels::Module> = Kernels::new();
//!
//! /// `out = x + alpha * y`, element by element, on float32 CUDA tensors of one shape.
//! #[pyfunction]
//! fn scaled_add(py: Python<'_>, x: &Bound<'_, PyAny>, y: &Bound<'_, PyAny>, alpha: f32, out: &Bound<'_, PyAny>) -> PyResult<()> {
//!     let x = CudaArray::<f32>::input(x, "x")?;
//!     let y = CudaArray::<f32>::input(y, "y")?;
//!     let mut out = CudaArray::<f32>::output(out, "out")?;
//!     same_shape(&[&x, &y, &out])?;
//!     let Some(device) = same_device(&[&x, &y, &out])? else { return Ok(()) }; // all empty
//!     let (ctx, module) = KERNELS.get(device, kernels::load)?;
//!     let stream = current_stream(py, &ctx)?;
//!     out.wait_for_producers(&stream)?;
//!     let cfg = LaunchConfig::for_num_elems(out.len() as u32);
//!     module.scaled_add(&stream, cfg, alpha, &x, &y, &mut out).map_err(to_py_err)
//! }
//! ```
//!
//! What is checked, and raised as a Python exception that names the argument: the object is a
//! CUDA array (`TypeError`, saying `x.cuda()` for a CPU tensor), its dtype (`TypeError`), that
//! it is C-contiguous (`ValueError`, saying `x.contiguous()`), that an output is writable and
//! does not require grad (`ValueError`), and, with [`same_shape`] and [`same_device`], shapes
//! and devices across arguments (`ValueError`). Kernels see the arrays flat (`&[T]`, length the
//! product of the shape).
//!
//! Lifetimes: the arrays are borrowed from the Python objects for the call, and the launch is
//! queued on the stream PyTorch's operations use, so PyTorch's caching allocator orders the
//! memory's reuse after it, as for its own operations (on another stream, call
//! `tensor.record_stream(stream)` as for any PyTorch operation on a side stream).

#![warn(missing_docs)]
#![feature(f16)]

mod array;
mod device;
mod dtype;

pub use array::{CudaArray, same_device, same_shape};
pub use device::{Kernels, current_stream, device_context};
pub use dtype::Element;

use cuda_core::DriverError;
use pyo3::PyErr;
use pyo3::exceptions::{PyRuntimeError, PyValueError};

/// A runtime error as a Python exception: `ValueError` for launch shapes and lengths the
/// arguments made wrong, `RuntimeError` for the rest (the driver's errors, with their cause and
/// fix).
pub fn to_py_err(e: DriverError) -> PyErr {
    match e {
        DriverError::InvalidConfig { .. }
        | DriverError::LengthMismatch { .. }
        | DriverError::ArgumentMismatch { .. } => PyValueError::new_err(e.to_string()),
        other => PyRuntimeError::new_err(other.to_string()),
    }
}
