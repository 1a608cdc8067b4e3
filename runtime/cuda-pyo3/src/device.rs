//! Per-device state of an extension: contexts (the device's primary context, which PyTorch uses
//! too), each `#[cuda_module]` loaded once per device, and PyTorch's current stream.

use std::sync::{Arc, Mutex};

use cuda_core::{CudaContext, CudaStream, DriverError, sys};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

use crate::to_py_err;

/// Our context of CUDA device `ordinal` (its primary context, the one PyTorch, CuPy and the
/// CUDA runtime use), made once per process.
pub fn device_context(ordinal: usize) -> PyResult<Arc<CudaContext>> {
    static CONTEXTS: Mutex<Vec<Option<Arc<CudaContext>>>> = Mutex::new(Vec::new());
    let mut contexts = CONTEXTS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if contexts.len() <= ordinal {
        contexts.resize(ordinal + 1, None);
    }
    if let Some(ctx) = &contexts[ordinal] {
        return Ok(Arc::clone(ctx));
    }
    let ctx = CudaContext::new(ordinal).map_err(to_py_err)?;
    contexts[ordinal] = Some(Arc::clone(&ctx));
    Ok(ctx)
}

/// A `#[cuda_module]`'s module loaded on each device the first time a call needs it:
/// `static KERNELS: Kernels<kernels::Module> = Kernels::new();`, then
/// `KERNELS.get(device, kernels::load)`.
pub struct Kernels<M> {
    loaded: Mutex<Vec<Option<Loaded<M>>>>,
}

/// One device's context and module.
type Loaded<M> = (Arc<CudaContext>, Arc<M>);

impl<M> Default for Kernels<M> {
    fn default() -> Self {
        Kernels::new()
    }
}

impl<M> Kernels<M> {
    /// None loaded yet.
    pub const fn new() -> Kernels<M> {
        Kernels { loaded: Mutex::new(Vec::new()) }
    }

    /// Device `ordinal`'s context and module, loading the module with `load` (the module's
    /// `kernels::load`) the first time.
    pub fn get(
        &self,
        ordinal: usize,
        load: impl FnOnce(&Arc<CudaContext>) -> Result<M, DriverError>,
    ) -> PyResult<(Arc<CudaContext>, Arc<M>)> {
        let mut loaded = self.loaded.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if loaded.len() <= ordinal {
            loaded.resize_with(ordinal + 1, || None);
        }
        if let Some((ctx, module)) = &loaded[ordinal] {
            return Ok((Arc::clone(ctx), Arc::clone(module)));
        }
        let ctx = device_context(ordinal)?;
        let module = Arc::new(load(&ctx).map_err(to_py_err)?);
        loaded[ordinal] = Some((Arc::clone(&ctx), Arc::clone(&module)));
        Ok((ctx, module))
    }
}

/// PyTorch's current stream on `ctx`'s device (what `torch.cuda.current_stream()` is, so work
/// queued there is ordered with PyTorch's own), or the legacy default stream when torch is not
/// imported.
pub fn current_stream(py: Python<'_>, ctx: &Arc<CudaContext>) -> PyResult<Arc<CudaStream>> {
    let raw = torch_raw_stream(py, ctx.ordinal())?.unwrap_or(0);
    // SAFETY: PyTorch's current stream belongs to the device's primary context (ours) and
    // stays alive while it is current, at least for the call that launches on it; 0 is the
    // legacy default stream.
    Ok(unsafe { ctx.wrap_borrowed_stream(raw as usize as sys::CUstream) })
}

/// The raw handle of PyTorch's current stream of `device`, when torch is imported.
fn torch_raw_stream(py: Python<'_>, device: usize) -> PyResult<Option<u64>> {
    // `torch._C._cuda_getCurrentRawStream(device)`: one C call (Triton uses it too); else the
    // public, slower `torch.cuda.current_stream(device).cuda_stream`.
    static RAW: PyOnceLock<Option<Py<PyAny>>> = PyOnceLock::new();
    let Some(torch) = torch_if_imported(py)? else { return Ok(None) };
    let raw = RAW.get_or_try_init(py, || -> PyResult<_> {
        Ok(torch.getattr("_C")?.getattr("_cuda_getCurrentRawStream").ok().map(Bound::unbind))
    })?;
    let handle = match raw {
        Some(f) => f.bind(py).call1((device,))?,
        None => torch.getattr("cuda")?.call_method1("current_stream", (device,))?.getattr("cuda_stream")?,
    };
    Ok(Some(handle.extract()?))
}

/// The `torch` module when the program has imported it (never imports it: an extension used
/// with CuPy alone does not pay for loading PyTorch). Remembered once seen.
pub(crate) fn torch_if_imported(py: Python<'_>) -> PyResult<Option<Bound<'_, PyModule>>> {
    static TORCH: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
    if let Some(torch) = TORCH.get(py) {
        return Ok(Some(torch.bind(py).clone()));
    }
    let modules = py.import("sys")?.getattr("modules")?;
    match modules.get_item("torch") {
        Ok(torch) => {
            let torch = torch.cast_into::<PyModule>()?;
            Ok(Some(TORCH.get_or_init(py, || torch.clone().unbind()).bind(py).clone()))
        }
        Err(_) => Ok(None),
    }
}
