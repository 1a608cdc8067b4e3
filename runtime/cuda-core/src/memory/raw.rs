//! Raw driver memory calls on `CUdeviceptr`s: allocate, free, copy, set. `DeviceBuffer` is the
//! safe way; these are for code that manages device memory itself (and for NVIDIA-style code
//! that calls `cuda_core::memory::memset_d8_async(buf.cu_deviceptr(), ..)`).
//!
//! Every function is `unsafe`: the driver cannot check that a pointer is live, large enough, or
//! belongs to the current context, nor that host memory outlives an asynchronous copy. Each
//! returns the driver's error as a [`DriverError`] naming the call, and reports a missing driver
//! as [`DriverError::NoDriver`] instead of panicking.

use std::ffi::c_void;

use cudarc::driver::sys::{self, CUdeviceptr, CUstream};

use crate::driver::{check, init};
use crate::error::DriverError;

/// Allocates `num_bytes` of device memory in stream order (`cuMemAllocAsync`): usable by work
/// queued on `stream` after this call.
///
/// ```no_run
/// use cuda_core::{CudaContext, memory};
/// let ctx = CudaContext::new(0)?;
/// let stream = ctx.new_stream()?;
/// ctx.bind_to_thread()?;
/// // SAFETY: the stream's context is current; the memory is freed on the same stream.
/// unsafe {
///     let ptr = memory::malloc_async(stream.cu_stream(), 4096)?;
///     memory::memset_d8_async(ptr, 0, 4096, stream.cu_stream())?;
///     memory::free_async(ptr, stream.cu_stream())?;
/// }
/// stream.synchronize()?;
/// # Ok::<(), cuda_core::DriverError>(())
/// ```
///
/// # Safety
/// `stream` must be a live stream of the context current on this thread (null: the default
/// stream). The memory must be freed (with [`free_async`] or [`free_sync`]) exactly once, after
/// the work that uses it.
pub unsafe fn malloc_async(stream: CUstream, num_bytes: usize) -> Result<CUdeviceptr, DriverError> {
    init()?;
    let mut ptr = 0;
    // SAFETY: forwarded to the caller (stream and current context).
    check(unsafe { sys::cuMemAllocAsync(&mut ptr, num_bytes, stream) }, "cuMemAllocAsync")?;
    Ok(ptr)
}

/// Frees memory from [`malloc_async`] in stream order (`cuMemFreeAsync`).
///
/// ```no_run
/// # use cuda_core::{CudaContext, memory};
/// # let ctx = CudaContext::new(0)?; let stream = ctx.new_stream()?; ctx.bind_to_thread()?;
/// // SAFETY: allocated here, freed once on the same stream.
/// unsafe { memory::free_async(memory::malloc_async(stream.cu_stream(), 64)?, stream.cu_stream())? };
/// # Ok::<(), cuda_core::DriverError>(())
/// ```
///
/// # Safety
/// `dptr` must be a live allocation of the current context, freed only here; work queued
/// before on other streams that uses it must be ordered before `stream`.
pub unsafe fn free_async(dptr: CUdeviceptr, stream: CUstream) -> Result<(), DriverError> {
    init()?;
    // SAFETY: forwarded to the caller.
    check(unsafe { sys::cuMemFreeAsync(dptr, stream) }, "cuMemFreeAsync")
}

/// Allocates `num_bytes` of device memory in the current context (`cuMemAlloc`).
///
/// ```no_run
/// # use cuda_core::{CudaContext, memory};
/// let ctx = CudaContext::new(0)?;
/// ctx.bind_to_thread()?;
/// // SAFETY: the context is current; freed once below.
/// unsafe { memory::free_sync(memory::malloc_sync(1 << 20)?)? };
/// # Ok::<(), cuda_core::DriverError>(())
/// ```
///
/// # Safety
/// A context must be current on this thread; the memory must be freed exactly once.
pub unsafe fn malloc_sync(num_bytes: usize) -> Result<CUdeviceptr, DriverError> {
    init()?;
    let mut ptr = 0;
    // SAFETY: forwarded to the caller.
    check(unsafe { sys::cuMemAlloc_v2(&mut ptr, num_bytes) }, "cuMemAlloc")?;
    Ok(ptr)
}

/// Frees device memory (`cuMemFree`); waits for work that still uses it.
///
/// ```no_run
/// # use cuda_core::{CudaContext, memory};
/// # let ctx = CudaContext::new(0)?; ctx.bind_to_thread()?;
/// // SAFETY: allocated here, freed once.
/// unsafe { memory::free_sync(memory::malloc_sync(64)?)? };
/// # Ok::<(), cuda_core::DriverError>(())
/// ```
///
/// # Safety
/// `dptr` must be a live allocation of the current context, freed only here.
pub unsafe fn free_sync(dptr: CUdeviceptr) -> Result<(), DriverError> {
    init()?;
    // SAFETY: forwarded to the caller.
    check(unsafe { sys::cuMemFree_v2(dptr) }, "cuMemFree")
}

/// Queues a copy of `num_bytes` from host `src` to device `dst` on `stream` (`cuMemcpyHtoDAsync`).
///
/// ```no_run
/// use cuda_core::{CudaContext, DeviceBuffer, memory};
/// let ctx = CudaContext::new(0)?;
/// let stream = ctx.default_stream();
/// let buf = DeviceBuffer::<f32>::zeroed(&stream, 4)?;
/// let host = [1.0f32, 2.0, 3.0, 4.0];
/// // SAFETY: the buffer holds 16 bytes; `host` lives until the stream is synchronised.
/// unsafe { memory::memcpy_htod_async(buf.cu_deviceptr(), host.as_ptr(), buf.num_bytes(), stream.cu_stream())? };
/// stream.synchronize()?;
/// # Ok::<(), cuda_core::DriverError>(())
/// ```
///
/// # Safety
/// `dst` must hold `num_bytes` in the current context; `src` must be readable for `num_bytes`
/// and stay unchanged until the copy has run (pageable memory is staged before the call returns,
/// page-locked memory is read later); `stream` must belong to the current context.
pub unsafe fn memcpy_htod_async<T>(
    dst: CUdeviceptr,
    src: *const T,
    num_bytes: usize,
    stream: CUstream,
) -> Result<(), DriverError> {
    init()?;
    // SAFETY: forwarded to the caller.
    check(unsafe { sys::cuMemcpyHtoDAsync_v2(dst, src.cast(), num_bytes, stream) }, "cuMemcpyHtoDAsync")
}

/// Copies `num_bytes` from host `src` to device `dst` and waits for it (`cuMemcpyHtoD`).
///
/// ```no_run
/// # use cuda_core::{CudaContext, DeviceBuffer, memory};
/// # let ctx = CudaContext::new(0)?; let stream = ctx.default_stream();
/// let buf = DeviceBuffer::<u8>::zeroed(&stream, 3)?;
/// // SAFETY: 3 bytes each side; the context is current (zeroed bound it).
/// unsafe { memory::memcpy_htod_sync(buf.cu_deviceptr(), [1u8, 2, 3].as_ptr(), 3)? };
/// # Ok::<(), cuda_core::DriverError>(())
/// ```
///
/// # Safety
/// `dst` must hold `num_bytes` in the current context; `src` must be readable for `num_bytes`.
pub unsafe fn memcpy_htod_sync<T>(dst: CUdeviceptr, src: *const T, num_bytes: usize) -> Result<(), DriverError> {
    init()?;
    // SAFETY: forwarded to the caller.
    check(unsafe { sys::cuMemcpyHtoD_v2(dst, src.cast(), num_bytes) }, "cuMemcpyHtoD")
}

/// Queues a copy of `num_bytes` from device `src` to host `dst` on `stream` (`cuMemcpyDtoHAsync`).
///
/// ```no_run
/// # use cuda_core::{CudaContext, DeviceBuffer, memory};
/// # let ctx = CudaContext::new(0)?; let stream = ctx.default_stream();
/// let buf = DeviceBuffer::from_host(&stream, &[5u32; 8])?;
/// let mut out = [0u32; 8];
/// // SAFETY: 32 bytes each side; `out` is not touched until the stream is synchronised.
/// unsafe { memory::memcpy_dtoh_async(out.as_mut_ptr(), buf.cu_deviceptr(), buf.num_bytes(), stream.cu_stream())? };
/// stream.synchronize()?;
/// assert_eq!(out, [5; 8]);
/// # Ok::<(), cuda_core::DriverError>(())
/// ```
///
/// # Safety
/// `src` must hold `num_bytes` in the current context; `dst` must be writable for `num_bytes`
/// and neither read nor written until the stream has been synchronised; the bytes written must
/// be valid values of `T`.
pub unsafe fn memcpy_dtoh_async<T>(
    dst: *mut T,
    src: CUdeviceptr,
    num_bytes: usize,
    stream: CUstream,
) -> Result<(), DriverError> {
    init()?;
    // SAFETY: forwarded to the caller.
    check(unsafe { sys::cuMemcpyDtoHAsync_v2(dst.cast(), src, num_bytes, stream) }, "cuMemcpyDtoHAsync")
}

/// Copies `num_bytes` from device `src` to host `dst` and waits for it (`cuMemcpyDtoH`).
///
/// ```no_run
/// # use cuda_core::{CudaContext, DeviceBuffer, memory};
/// # let ctx = CudaContext::new(0)?; let stream = ctx.default_stream();
/// let buf = DeviceBuffer::from_host(&stream, &[7u8; 4])?;
/// let mut out = [0u8; 4];
/// // SAFETY: 4 bytes each side; the context is current.
/// unsafe { memory::memcpy_dtoh_sync(out.as_mut_ptr(), buf.cu_deviceptr(), 4)? };
/// # Ok::<(), cuda_core::DriverError>(())
/// ```
///
/// # Safety
/// As for [`memcpy_dtoh_async`], except that the copy has finished when this returns.
pub unsafe fn memcpy_dtoh_sync<T>(dst: *mut T, src: CUdeviceptr, num_bytes: usize) -> Result<(), DriverError> {
    init()?;
    // SAFETY: forwarded to the caller.
    check(unsafe { sys::cuMemcpyDtoH_v2(dst.cast(), src, num_bytes) }, "cuMemcpyDtoH")
}

/// Queues a device-to-device copy of `num_bytes` on `stream` (`cuMemcpyDtoDAsync`).
///
/// ```no_run
/// # use cuda_core::{CudaContext, DeviceBuffer, memory};
/// # let ctx = CudaContext::new(0)?; let stream = ctx.default_stream();
/// let a = DeviceBuffer::from_host(&stream, &[1u64, 2])?;
/// let b = DeviceBuffer::<u64>::zeroed(&stream, 2)?;
/// // SAFETY: both hold 16 bytes and do not overlap.
/// unsafe { memory::memcpy_dtod_async(b.cu_deviceptr(), a.cu_deviceptr(), 16, stream.cu_stream())? };
/// # Ok::<(), cuda_core::DriverError>(())
/// ```
///
/// # Safety
/// Both ranges must hold `num_bytes` in the current context and must not overlap.
pub unsafe fn memcpy_dtod_async(
    dst: CUdeviceptr,
    src: CUdeviceptr,
    num_bytes: usize,
    stream: CUstream,
) -> Result<(), DriverError> {
    init()?;
    // SAFETY: forwarded to the caller.
    check(unsafe { sys::cuMemcpyDtoDAsync_v2(dst, src, num_bytes, stream) }, "cuMemcpyDtoDAsync")
}

/// Queues setting `num_bytes` bytes at `dptr` to `value` on `stream` (`cuMemsetD8Async`).
///
/// ```no_run
/// # use cuda_core::{CudaContext, DeviceBuffer, memory};
/// # let ctx = CudaContext::new(0)?; let stream = ctx.default_stream();
/// let table = DeviceBuffer::<u32>::zeroed(&stream, 1024)?;
/// // SAFETY: the buffer holds `num_bytes()` bytes. 0xff bytes make every slot u32::MAX ("empty").
/// unsafe { memory::memset_d8_async(table.cu_deviceptr(), 0xff, table.num_bytes(), stream.cu_stream())? };
/// # Ok::<(), cuda_core::DriverError>(())
/// ```
///
/// # Safety
/// `dptr` must hold `num_bytes` in the current context; `stream` must belong to it.
pub unsafe fn memset_d8_async(
    dptr: CUdeviceptr,
    value: u8,
    num_bytes: usize,
    stream: CUstream,
) -> Result<(), DriverError> {
    init()?;
    // SAFETY: forwarded to the caller.
    check(unsafe { sys::cuMemsetD8Async(dptr, value, num_bytes, stream) }, "cuMemsetD8Async")
}

/// Queues setting `count` 32-bit words at `dptr` to `value` on `stream` (`cuMemsetD32Async`).
///
/// ```no_run
/// # use cuda_core::{CudaContext, DeviceBuffer, memory};
/// # let ctx = CudaContext::new(0)?; let stream = ctx.default_stream();
/// let ones = DeviceBuffer::<f32>::zeroed(&stream, 256)?;
/// // SAFETY: 256 words; 1.0f32's bits in each.
/// unsafe { memory::memset_d32_async(ones.cu_deviceptr(), 1.0f32.to_bits(), 256, stream.cu_stream())? };
/// # Ok::<(), cuda_core::DriverError>(())
/// ```
///
/// # Safety
/// `dptr` must be 4-byte aligned and hold `count * 4` bytes in the current context.
pub unsafe fn memset_d32_async(
    dptr: CUdeviceptr,
    value: u32,
    count: usize,
    stream: CUstream,
) -> Result<(), DriverError> {
    init()?;
    // SAFETY: forwarded to the caller.
    check(unsafe { sys::cuMemsetD32Async(dptr, value, count, stream) }, "cuMemsetD32Async")
}

/// Allocates `num_bytes` of page-locked host memory (`cuMemAllocHost`): copies from and to it
/// can overlap kernels, and asynchronous copies read it when they run.
///
/// ```no_run
/// # use cuda_core::{CudaContext, memory};
/// let ctx = CudaContext::new(0)?;
/// ctx.bind_to_thread()?;
/// // SAFETY: the context is current; freed once.
/// unsafe { memory::free_host(memory::malloc_host(4096)?)? };
/// # Ok::<(), cuda_core::DriverError>(())
/// ```
///
/// # Safety
/// A context must be current; the memory must be freed with [`free_host`] exactly once.
pub unsafe fn malloc_host(num_bytes: usize) -> Result<*mut c_void, DriverError> {
    init()?;
    let mut ptr = std::ptr::null_mut();
    // SAFETY: forwarded to the caller.
    check(unsafe { sys::cuMemAllocHost_v2(&mut ptr, num_bytes) }, "cuMemAllocHost")?;
    Ok(ptr)
}

/// Frees memory from [`malloc_host`] (`cuMemFreeHost`).
///
/// ```no_run
/// # use cuda_core::{CudaContext, memory};
/// # let ctx = CudaContext::new(0)?; ctx.bind_to_thread()?;
/// // SAFETY: allocated here, freed once.
/// unsafe { memory::free_host(memory::malloc_host(64)?)? };
/// # Ok::<(), cuda_core::DriverError>(())
/// ```
///
/// # Safety
/// `ptr` must come from [`malloc_host`], not be freed before, and no queued copy may still use it.
pub unsafe fn free_host(ptr: *mut c_void) -> Result<(), DriverError> {
    init()?;
    // SAFETY: forwarded to the caller.
    check(unsafe { sys::cuMemFreeHost(ptr) }, "cuMemFreeHost")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_driver_raw_calls_report_it() {
        if crate::driver::is_driver_present() {
            return; // a GPU machine: covered by the GPU tests
        }
        // SAFETY: without a driver nothing reaches it; the calls fail before any pointer is used.
        let e = unsafe { memset_d8_async(0, 0, 16, std::ptr::null_mut()) }.unwrap_err();
        assert!(matches!(e, DriverError::NoDriver { .. }), "{e}");
        let e = unsafe { malloc_sync(16) }.unwrap_err();
        assert!(e.to_string().contains("no NVIDIA driver found"), "{e}");
    }
}
