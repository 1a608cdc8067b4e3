//! `CudaArray<T>`: a Python CUDA array (a torch tensor, or anything with
//! `__cuda_array_interface__`) checked and viewed as a kernel's slice argument.

use std::marker::PhantomData;

use cuda_core::{CudaStream, DriverError, KernelSlice, KernelSliceMut, SliceParam, sys};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyType};

use crate::dtype::{Element, typestr_matches, typestr_name};

/// A contiguous CUDA array of `T` from Python, borrowed for the call: a kernel's `&[T]`
/// argument ([`input`](Self::input)) or `&mut [T]` / `DisjointSlice<T>` one
/// ([`output`](Self::output)), seen flat.
pub struct CudaArray<'py, T> {
    name: &'static str,
    ptr: u64,
    shape: Vec<usize>,
    /// The device that holds the memory; `None` for an empty array (no memory).
    device: Option<usize>,
    /// The producer's stream from `__cuda_array_interface__` v3, which work must wait for.
    producer_stream: Option<u64>,
    _object: Bound<'py, PyAny>,
    _elem: PhantomData<T>,
}

impl<'py, T: Element> CudaArray<'py, T> {
    /// A read-only argument: `obj` must be a contiguous CUDA array of `T`. `name` is the
    /// argument's name in the Python signature, for the messages.
    pub fn input(obj: &Bound<'py, PyAny>, name: &'static str) -> PyResult<CudaArray<'py, T>> {
        CudaArray::new(obj, name, false)
    }

    /// An argument the kernel writes: as [`input`](Self::input), and writable (not read-only,
    /// and for a torch tensor not requiring grad: autograd would not see the write).
    pub fn output(obj: &Bound<'py, PyAny>, name: &'static str) -> PyResult<CudaArray<'py, T>> {
        CudaArray::new(obj, name, true)
    }

    fn new(obj: &Bound<'py, PyAny>, name: &'static str, write: bool) -> PyResult<CudaArray<'py, T>> {
        if let Some(tensor) = torch_tensor(obj)? {
            return CudaArray::from_torch(tensor, name, write);
        }
        CudaArray::from_interface(obj, name, write)
    }

    /// A torch tensor, through its own attributes (each a C call, where its
    /// `__cuda_array_interface__` is Python code that builds a dict).
    fn from_torch(t: &Bound<'py, PyAny>, name: &'static str, write: bool) -> PyResult<CudaArray<'py, T>> {
        let py = t.py();
        if !t.getattr("is_cuda")?.extract::<bool>()? {
            let device = t.getattr("device")?.str()?.to_string();
            return Err(PyTypeError::new_err(format!(
                "argument `{name}` is a tensor on {device}; this function takes CUDA tensors: pass `{name}.cuda()`"
            )));
        }
        let dtype = t.getattr("dtype")?;
        if !dtype.is(torch(py)?.getattr(T::TORCH)?) {
            return Err(PyTypeError::new_err(format!(
                "argument `{name}` has dtype {}; this function takes torch.{}: pass `{name}.to(torch.{})`",
                dtype.str()?,
                T::TORCH,
                T::TORCH
            )));
        }
        if !t.call_method0("is_contiguous")?.extract::<bool>()? {
            let strides: Vec<isize> = t.call_method0("stride")?.extract()?;
            return Err(not_contiguous(name, &strides));
        }
        if write && t.getattr("requires_grad")?.extract::<bool>()? {
            return Err(PyValueError::new_err(format!(
                "argument `{name}` requires grad, and this function writes it without autograd seeing it: \
                 pass a tensor that does not (made under torch.no_grad(), or `{name}.detach()`)"
            )));
        }
        let shape: Vec<usize> = t.getattr("shape")?.extract()?;
        let ptr: u64 = t.call_method0("data_ptr")?.extract()?;
        let device = if shape.contains(&0) { None } else { Some(t.call_method0("get_device")?.extract::<usize>()?) };
        Ok(CudaArray { name, ptr, shape, device, producer_stream: None, _object: t.clone(), _elem: PhantomData })
    }

    /// Any array with `__cuda_array_interface__` (CuPy, Numba, JAX, ...): versions 2 and 3.
    fn from_interface(obj: &Bound<'py, PyAny>, name: &'static str, write: bool) -> PyResult<CudaArray<'py, T>> {
        let interface = match obj.getattr("__cuda_array_interface__") {
            Ok(i) => i,
            Err(e) if e.is_instance_of::<pyo3::exceptions::PyAttributeError>(obj.py()) => {
                return Err(PyTypeError::new_err(format!(
                    "argument `{name}` is a {}, not a CUDA array: pass a torch tensor on a CUDA device, or an \
                     array with __cuda_array_interface__ (CuPy, Numba, JAX)",
                    obj.get_type().name()?
                )));
            }
            Err(e) => return Err(prefixed(obj.py(), name, e)),
        };
        let dict = interface.cast::<PyDict>().map_err(|_| {
            PyTypeError::new_err(format!("argument `{name}`: its __cuda_array_interface__ is not a dict"))
        })?;
        let item =
            |key: &str| -> PyResult<Option<Bound<'py, PyAny>>> { Ok(dict.get_item(key)?.filter(|v| !v.is_none())) };
        let missing =
            |key: &str| PyValueError::new_err(format!("argument `{name}`: __cuda_array_interface__ has no `{key}`"));
        let typestr: String = item("typestr")?.ok_or_else(|| missing("typestr"))?.extract()?;
        if !typestr_matches::<T>(&typestr) {
            return Err(PyTypeError::new_err(format!(
                "argument `{name}` has dtype {}; this function takes {}",
                typestr_name(&typestr),
                typestr_name(T::TYPESTR)
            )));
        }
        let shape: Vec<usize> = item("shape")?.ok_or_else(|| missing("shape"))?.extract()?;
        if let Some(strides) = item("strides")? {
            let strides: Vec<isize> = strides.extract()?;
            if !is_c_contiguous(&shape, &strides, std::mem::size_of::<T>()) {
                return Err(not_contiguous(name, &strides));
            }
        }
        if item("mask")?.is_some() {
            return Err(PyValueError::new_err(format!("argument `{name}` is a masked array; pass one without a mask")));
        }
        let (ptr, readonly): (u64, bool) = item("data")?.ok_or_else(|| missing("data"))?.extract()?;
        if write && readonly {
            return Err(PyValueError::new_err(format!(
                "argument `{name}` is read-only, and this function writes it: pass a writable array"
            )));
        }
        // v3: the stream the producer's work on the array was queued on (1: legacy default, 2:
        // per-thread default), which our work must wait for.
        let producer_stream = item("stream")?.map(|s| s.extract::<u64>()).transpose()?;
        let device = if shape.contains(&0) || ptr == 0 { None } else { Some(device_of(name, ptr)?) };
        Ok(CudaArray { name, ptr, shape, device, producer_stream, _object: obj.clone(), _elem: PhantomData })
    }
}

impl<T> CudaArray<'_, T> {
    /// The argument's name, as given.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The array's shape.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The number of elements (the product of the shape).
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// `true` when the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The CUDA device the memory is on (`None` for an empty array).
    pub fn device(&self) -> Option<usize> {
        self.device
    }

    /// The device address of the first element.
    pub fn device_ptr(&self) -> u64 {
        self.ptr
    }

    /// Makes `stream` wait for the work the array's producer queued on its own stream, when it
    /// named one (`__cuda_array_interface__` v3, e.g. CuPy's current stream); torch tensors name
    /// none, and their work is on PyTorch's current stream, which [`crate::current_stream`] gives.
    pub fn wait_for_producers(&self, stream: &CudaStream) -> Result<(), DriverError> {
        let Some(raw) = self.producer_stream else { return Ok(()) };
        if raw == 0 || raw as usize == stream.raw() as usize {
            return Ok(());
        }
        let event = cuda_core::CudaEvent::new_without_timing(stream.context())?;
        stream.context().bind_to_thread()?;
        // SAFETY: the event is live; the producer's stream is one of this context's (or a
        // special handle, 1 or 2), alive while the array is (the protocol's promise).
        let r = unsafe { sys::cuEventRecord(event.raw(), raw as usize as sys::CUstream) };
        cuda_core::IntoResult::result(r)?;
        stream.wait_event(&event)
    }
}

// SAFETY: the array is C-contiguous device memory of `len()` elements of `T` (checked on
// construction), kept alive by the Python object borrowed for `'py`, which outlives the call
// that launches on it; the launch is ordered on the stream PyTorch's allocator orders reuse on.
unsafe impl<T> KernelSlice<T> for CudaArray<'_, T> {
    fn slice_param<'a>(&'a self, _stream: &'a cuda_core::cudarc::driver::CudaStream) -> SliceParam<'a> {
        // SAFETY: see the impl.
        unsafe { SliceParam::from_raw(self.ptr, self.len()) }
    }

    fn len(&self) -> usize {
        CudaArray::len(self)
    }
}

// SAFETY: as above; `&mut` and `output`'s checks make it the call's one writer.
unsafe impl<T> KernelSliceMut<T> for CudaArray<'_, T> {
    fn slice_param_mut<'a>(&'a mut self, _stream: &'a cuda_core::cudarc::driver::CudaStream) -> SliceParam<'a> {
        // SAFETY: see the impl.
        unsafe { SliceParam::from_raw(self.ptr, self.len()) }
    }
}

/// Checks that every array has the shape of the first, naming the first that differs.
pub fn same_shape<T>(arrays: &[&CudaArray<'_, T>]) -> PyResult<()> {
    let Some(first) = arrays.first() else { return Ok(()) };
    for a in &arrays[1..] {
        if a.shape != first.shape {
            return Err(PyValueError::new_err(format!(
                "arguments `{}` and `{}` must have the same shape; they have {} and {}",
                first.name,
                a.name,
                shape_text(&first.shape),
                shape_text(&a.shape)
            )));
        }
    }
    Ok(())
}

/// The device of the arrays, checking they share it; `None` when all are empty.
pub fn same_device<T>(arrays: &[&CudaArray<'_, T>]) -> PyResult<Option<usize>> {
    let mut found: Option<(usize, &str)> = None;
    for a in arrays {
        match (a.device, found) {
            (Some(d), Some((f, name))) if d != f => {
                return Err(PyValueError::new_err(format!(
                    "argument `{name}` is on cuda:{f} and `{}` on cuda:{d}; move them to one device",
                    a.name
                )));
            }
            (Some(d), None) => found = Some((d, a.name)),
            _ => {}
        }
    }
    Ok(found.map(|(d, _)| d))
}

/// `(2, 3)` as Python prints a shape.
fn shape_text(shape: &[usize]) -> String {
    match shape {
        [one] => format!("({one},)"),
        _ => format!("({})", shape.iter().map(usize::to_string).collect::<Vec<_>>().join(", ")),
    }
}

fn not_contiguous(name: &str, strides: &[isize]) -> PyErr {
    PyValueError::new_err(format!(
        "argument `{name}` is not contiguous (strides {strides:?}); pass `{name}.contiguous()` (cupy.ascontiguousarray for CuPy)"
    ))
}

/// Whether byte strides `strides` are those of a C-contiguous array of `shape` (dimensions of
/// extent 1 may have any stride, as NumPy allows).
fn is_c_contiguous(shape: &[usize], strides: &[isize], elem: usize) -> bool {
    if shape.len() != strides.len() {
        return false;
    }
    if shape.contains(&0) {
        return true;
    }
    let mut expected = elem as isize;
    for (&extent, &stride) in shape.iter().zip(strides).rev() {
        if extent != 1 && stride != expected {
            return false;
        }
        expected *= extent as isize;
    }
    true
}

/// The device holding device address `ptr`; a `TypeError` when it is not CUDA device memory.
fn device_of(name: &str, ptr: u64) -> PyResult<usize> {
    cuda_core::init(0).map_err(crate::to_py_err)?;
    let mut ordinal: i32 = -1;
    // SAFETY: the driver is initialised; the attribute is one i32, written to `ordinal`.
    let r = unsafe {
        sys::cuPointerGetAttribute(
            (&raw mut ordinal).cast(),
            sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
            ptr,
        )
    };
    if r != sys::CUresult::CUDA_SUCCESS || ordinal < 0 {
        return Err(PyTypeError::new_err(format!(
            "argument `{name}`: its data ({ptr:#x}) is not CUDA device memory; pass an array on a CUDA device"
        )));
    }
    Ok(ordinal as usize)
}

/// `obj` itself when it is a `torch.Tensor` of an imported torch (never imports torch).
fn torch_tensor<'a, 'py>(obj: &'a Bound<'py, PyAny>) -> PyResult<Option<&'a Bound<'py, PyAny>>> {
    static TENSOR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    let py = obj.py();
    let tensor = match TENSOR.get(py) {
        Some(t) => t.bind(py),
        None => match crate::device::torch_if_imported(py)? {
            Some(torch) => TENSOR
                .get_or_try_init(py, || -> PyResult<_> {
                    Ok(torch.getattr("Tensor")?.cast_into::<PyType>()?.unbind())
                })?
                .bind(py),
            None => return Ok(None),
        },
    };
    Ok(obj.is_instance(tensor)?.then_some(obj))
}

/// The imported `torch` module (a tensor was seen, so it is imported).
fn torch(py: Python<'_>) -> PyResult<Bound<'_, PyModule>> {
    match crate::device::torch_if_imported(py)? {
        Some(torch) => Ok(torch),
        None => py.import("torch"),
    }
}

/// `e` with the argument's name in front (e.g. torch's own refusal of a tensor that requires grad).
fn prefixed(py: Python<'_>, name: &str, e: PyErr) -> PyErr {
    let text = e.value(py).str().map(|s| s.to_string()).unwrap_or_default();
    PyErr::from_type(e.get_type(py), format!("argument `{name}`: {text}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contiguity() {
        assert!(is_c_contiguous(&[2, 3], &[12, 4], 4));
        assert!(!is_c_contiguous(&[2, 3], &[4, 8], 4), "a transpose");
        assert!(is_c_contiguous(&[1, 3], &[999, 4], 4), "extent 1: any stride");
        assert!(!is_c_contiguous(&[6], &[8], 4), "every other element");
        assert!(is_c_contiguous(&[0, 5], &[0, 0], 4), "empty");
        assert!(!is_c_contiguous(&[2], &[4, 4], 4), "rank mismatch");
    }

    #[test]
    fn shapes_print_as_python_does() {
        assert_eq!(shape_text(&[3]), "(3,)");
        assert_eq!(shape_text(&[2, 3]), "(2, 3)");
        assert_eq!(shape_text(&[]), "()");
    }
}
