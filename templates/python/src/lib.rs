//! A Python extension module whose functions launch Rust kernels on PyTorch tensors (or CuPy,
//! Numba, JAX arrays), on PyTorch's current stream, without copies.
//!
//! ```python
//! import torch, {{crate_name}}
//! x, y = torch.randn(1 << 20, device="cuda"), torch.randn(1 << 20, device="cuda")
//! out = torch.empty_like(x)
//! {{crate_name}}.scaled_add(x, y, 0.5, out)   # out = x + 0.5 * y
//! ```
//! Build with `cargo oxide build --release`; the module is then
//! `target/oxide/release/python/{{crate_name}}.abi3.so` (put that folder on `PYTHONPATH`, or copy
//! the file next to your Python code). Wrong arguments raise Python exceptions that say what to
//! do (a CPU tensor, another dtype, a non-contiguous view, shapes or devices that differ).
use cuda_core::LaunchConfig;
use cuda_device::{DisjointSlice, cuda_module, kernel, thread};
use cuda_pyo3::{CudaArray, Kernels, current_stream, same_device, same_shape, to_py_err};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

#[cuda_module]
mod kernels {
    use super::*;

    /// `out[i] = x[i] + alpha * y[i]`, one thread per element.
    #[kernel]
    pub fn scaled_add(alpha: f32, x: &[f32], y: &[f32], mut out: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = out.get_mut(idx) {
            *o = x[i] + alpha * y[i];
        }
    }
}

/// The kernels, loaded on each GPU the first time a call uses it.
static KERNELS: Kernels<kernels::Module> = Kernels::new();

/// `out = x + alpha * y` element by element, for float32 CUDA tensors of one shape on one
/// device; queued on PyTorch's current stream (returns before the GPU has finished, as PyTorch's
/// own operations do).
#[pyfunction]
fn scaled_add(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    y: &Bound<'_, PyAny>,
    alpha: f32,
    out: &Bound<'_, PyAny>,
) -> PyResult<()> {
    let x = CudaArray::<f32>::input(x, "x")?;
    let y = CudaArray::<f32>::input(y, "y")?;
    let mut out = CudaArray::<f32>::output(out, "out")?;
    same_shape(&[&x, &y, &out])?;
    let Some(device) = same_device(&[&x, &y, &out])? else {
        return Ok(()); // empty tensors: nothing to do
    };
    let n = u32::try_from(out.len())
        .map_err(|_| PyValueError::new_err(format!("{} elements are more than one launch of this kernel takes", out.len())))?;
    let (ctx, module) = KERNELS.get(device, kernels::load)?;
    let stream = current_stream(py, &ctx)?;
    for array in [&x, &y, &out] {
        array.wait_for_producers(&stream).map_err(to_py_err)?;
    }
    module.scaled_add(&stream, LaunchConfig::for_num_elems(n), alpha, &x, &y, &mut out).map_err(to_py_err)
}

/// The module Python imports (`import {{crate_name}}`): its name is the library's.
#[pymodule]
fn {{crate_name}}(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(scaled_add, m)?)?;
    Ok(())
}
