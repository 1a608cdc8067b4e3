//! Device memory: the `DeviceCopy` marker trait, `DeviceBuffer<T>` (an owned device allocation),
//! `PinnedBuffer<T>` (page-locked host memory for copies that overlap kernels), copies between
//! contexts and GPUs (`copy_peer_async`, `peer.rs`), and the raw driver memory calls
//! (`memset_d8_async`, `memcpy_htod_async`, …).
//!
//! ```no_run
//! use cuda_core::{CudaContext, DeviceBuffer};
//! let ctx = CudaContext::new(0)?;
//! let stream = ctx.default_stream();
//! let buf = DeviceBuffer::from_host(&stream, &[1u32, 2, 3])?;
//! assert_eq!(buf.to_host_vec(&stream)?, [1, 2, 3]);
//! # Ok::<(), cuda_core::DriverError>(())
//! ```

mod cast;
pub(crate) mod interop;
mod peer;
mod pinned;
mod raw;

pub use interop::{CudarcMut, CudarcRef, IntoCudarcError};
pub use peer::{PeerPath, STAGING_CHUNK_BYTES, peer_path};
pub use pinned::PinnedBuffer;

pub use raw::{
    free_async, free_host, free_sync, malloc_async, malloc_host, malloc_sync, memcpy_dtod_async, memcpy_dtoh_async,
    memcpy_dtoh_sync, memcpy_htod_async, memcpy_htod_sync, memset_d8_async, memset_d32_async,
};

use std::marker::PhantomData;
use std::mem::size_of;
use std::sync::Arc;

use cudarc::driver::sys;

use crate::context::{CudaContext, CudaStream};
use crate::driver::check;
use crate::error::DriverError;
use crate::graph;

/// Plain data that may be copied to and from device memory byte for byte.
///
/// `#[derive(DeviceCopy)]` implements it for structs whose fields all are:
///
/// ```
/// #[derive(Clone, Copy, cuda_core::DeviceCopy)]
/// #[repr(C)]
/// struct Particle { pos: [f32; 3], mass: f32 }
/// ```
///
/// The trait has no `'static` bound: a type may carry a lifetime or a marker type parameter
/// (`PhantomData<&'a T>`, a tag type), since what crosses to the device is only its bytes. What
/// makes a type unfit is a *host reference the kernel would dereference*: `&T` and `Box<T>` are
/// not `DeviceCopy`, and a raw pointer (which is) is taken to hold a device address. A generic
/// kernel's type parameters must still be `'static`, for the entry name (contract §5).
///
/// # Safety
/// The type must hold no references or pointers to host memory that device code will read
/// (raw pointers must be device addresses), have no `Drop`, and no padding whose contents
/// matter; every bit pattern the device writes for it must be a valid value.
pub unsafe trait DeviceCopy: Copy {}

macro_rules! device_copy {
    ($($t:ty),* $(,)?) => { $(unsafe impl DeviceCopy for $t {})* };
}
device_copy!(u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize, f16, f32, f64, bool, char, ());

unsafe impl<T: DeviceCopy, const N: usize> DeviceCopy for [T; N] {}
unsafe impl<T: ?Sized> DeviceCopy for *const T {}
unsafe impl<T: ?Sized> DeviceCopy for *mut T {}
unsafe impl<T: ?Sized> DeviceCopy for PhantomData<T> {}
unsafe impl<T: DeviceCopy> DeviceCopy for std::mem::MaybeUninit<T> {}
unsafe impl<T: DeviceCopy> DeviceCopy for std::num::Wrapping<T> {}

macro_rules! device_copy_tuple {
    ($($name:ident),+) => { unsafe impl<$($name: DeviceCopy),+> DeviceCopy for ($($name,)+) {} };
}
device_copy_tuple!(A);
device_copy_tuple!(A, B);
device_copy_tuple!(A, B, C);
device_copy_tuple!(A, B, C, D);
device_copy_tuple!(A, B, C, D, E);
device_copy_tuple!(A, B, C, D, E, F);
device_copy_tuple!(A, B, C, D, E, F, G);
device_copy_tuple!(A, B, C, D, E, F, G, H);

/// `len` elements of `T` in device memory, freed on drop.
///
/// A kernel parameter `&[T]` takes `&DeviceBuffer<T>`; `&mut [T]` and `DisjointSlice<T>` take
/// `&mut DeviceBuffer<T>` (or cudarc's slices: `crate::interop`).
///
/// The memory is freed when the buffer is dropped, or, when a CUDA graph still uses it
/// ([`crate::graph`]), when the last such graph is dropped.
pub struct DeviceBuffer<T> {
    // `ptr` and `len` are u64 fields so a launch can pass their addresses as kernel parameters.
    ptr: u64,
    len: u64,
    mem: Arc<Allocation>,
    _elem: PhantomData<T>,
}

/// The memory of a [`DeviceBuffer`], shared with the CUDA graphs whose work uses it, so that it
/// outlives them (`crate::graph`); freed when the last holder is gone.
pub(crate) struct Allocation {
    ptr: u64,
    ctx: Arc<CudaContext>,
    owner: Owner,
}

/// Who frees an [`Allocation`].
pub(crate) enum Owner {
    /// `cuMemAlloc` memory of ours: `cuMemFree`.
    Driver,
    /// A cudarc `CudaSlice` adopted without a copy (`DeviceBuffer::from_cudarc`): dropped.
    Cudarc(Box<dyn interop::ForeignSlice>),
    /// Nothing: an empty buffer, or memory given away (`into_raw_parts`, `into_cudarc`).
    Nobody,
}

impl Allocation {
    pub(crate) fn new(ptr: u64, ctx: Arc<CudaContext>, owner: Owner) -> Arc<Allocation> {
        let owner = if ptr == 0 { Owner::Nobody } else { owner };
        Arc::new(Allocation { ptr, ctx, owner })
    }

    /// Takes the memory out of a sole holder's hands: nobody frees it afterwards.
    pub(crate) fn disown(mut self: Arc<Allocation>) -> Result<Owner, Arc<Allocation>> {
        match Arc::get_mut(&mut self) {
            Some(alloc) => Ok(std::mem::replace(&mut alloc.owner, Owner::Nobody)),
            None => Err(self),
        }
    }

    pub(crate) fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }
}

impl Drop for Allocation {
    fn drop(&mut self) {
        match std::mem::replace(&mut self.owner, Owner::Nobody) {
            Owner::Nobody => {}
            Owner::Driver => {
                if self.ctx.bind_to_thread().is_ok() {
                    // SAFETY: we allocated this memory; cuMemFree waits for work that still uses it.
                    let _ = unsafe { sys::cuMemFree_v2(self.ptr) };
                }
            }
            Owner::Cudarc(slice) => {
                // cudarc frees in the order of the slice's own stream, which knows nothing of
                // launches of ours on other streams: wait for the device first, as cuMemFree does.
                let _ = self.ctx.synchronize();
                drop(slice);
            }
        }
    }
}

// SAFETY: device memory is reachable from any thread; `T: DeviceCopy` holds no host state.
unsafe impl<T: Send> Send for DeviceBuffer<T> {}
unsafe impl<T: Sync> Sync for DeviceBuffer<T> {}

fn byte_len<T>(len: usize) -> Result<usize, DriverError> {
    len.checked_mul(size_of::<T>()).ok_or_else(|| DriverError::InvalidConfig {
        message: format!("a buffer of {len} elements of {} bytes overflows usize", size_of::<T>()),
    })
}

impl<T: DeviceCopy> DeviceBuffer<T> {
    /// Allocates `len` elements, uninitialised.
    fn alloc(ctx: &Arc<CudaContext>, len: usize) -> Result<DeviceBuffer<T>, DriverError> {
        let bytes = byte_len::<T>(len)?;
        let mut ptr = 0;
        if bytes > 0 {
            ctx.bind_to_thread()?;
            // SAFETY: the context is current; freed in Drop.
            check(unsafe { sys::cuMemAlloc_v2(&mut ptr, bytes) }, "cuMemAlloc")
                .map_err(|e| e.context(format!("allocating {bytes} bytes of device memory")))?;
        }
        Ok(DeviceBuffer {
            ptr,
            len: len as u64,
            mem: Allocation::new(ptr, Arc::clone(ctx), Owner::Driver),
            _elem: PhantomData,
        })
    }

    /// A buffer holding a copy of `data`. The copy is queued on `stream`; `data` may be reused
    /// as soon as this returns (the driver stages pageable memory).
    pub fn from_host(stream: &CudaStream, data: &[T]) -> Result<DeviceBuffer<T>, DriverError> {
        let mut buf = DeviceBuffer::alloc(stream.context(), data.len())?;
        buf.copy_from_host(stream, data)?;
        Ok(buf)
    }

    /// A buffer of `len` zero bytes, cleared on `stream`.
    pub fn zeroed(stream: &CudaStream, len: usize) -> Result<DeviceBuffer<T>, DriverError> {
        let mut buf = DeviceBuffer::alloc(stream.context(), len)?;
        buf.set_zero(stream)?;
        Ok(buf)
    }

    /// Sets every byte of the buffer to zero, queued on `stream` (a memset; in a CUDA graph
    /// capture, a memset node, e.g. to clear an accumulator before each replay).
    ///
    /// ```no_run
    /// # let ctx = cuda_core::CudaContext::new(0)?; let stream = ctx.default_stream();
    /// let mut counts = cuda_core::DeviceBuffer::from_host(&stream, &[5u32; 64])?;
    /// counts.set_zero(&stream)?;
    /// assert_eq!(counts.to_host_vec(&stream)?, [0; 64]);
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    pub fn set_zero(&mut self, stream: &CudaStream) -> Result<(), DriverError> {
        let bytes = byte_len::<T>(self.len())?;
        if bytes == 0 {
            return Ok(());
        }
        self.mem.ctx.bind_to_thread()?;
        let capture = graph::before(stream.raw(), false, &|| "DeviceBuffer::set_zero".into())?;
        // SAFETY: the allocation holds `bytes` bytes; `&mut self` excludes other host use.
        check(unsafe { sys::cuMemsetD8Async(self.ptr, 0, bytes, stream.raw()) }, "cuMemsetD8Async")?;
        if let Some(capture) = capture {
            graph::after(stream.raw(), capture, graph::NodeKind::Memset, &[&self.mem]);
        }
        Ok(())
    }

    /// Copies `data` (exactly [`len`](Self::len) elements) into the buffer, queued on `stream`.
    pub fn copy_from_host(&mut self, stream: &CudaStream, data: &[T]) -> Result<(), DriverError> {
        self.check_len("copy_from_host", data.len())?;
        let bytes = byte_len::<T>(data.len())?;
        graph::refuse(stream.raw(), "DeviceBuffer::copy_from_host (a copy from host memory)")?;
        if bytes > 0 {
            self.mem.ctx.bind_to_thread()?;
            // SAFETY: lengths agree; pageable source memory is staged before the call returns.
            check(
                unsafe { sys::cuMemcpyHtoDAsync_v2(self.ptr, data.as_ptr().cast(), bytes, stream.raw()) },
                "cuMemcpyHtoDAsync",
            )?;
        }
        Ok(())
    }

    /// Copies the buffer into `out` (exactly [`len`](Self::len) elements); waits for `stream`.
    pub fn copy_to_host(&self, stream: &CudaStream, out: &mut [T]) -> Result<(), DriverError> {
        self.check_len("copy_to_host", out.len())?;
        let bytes = byte_len::<T>(out.len())?;
        graph::refuse(stream.raw(), "DeviceBuffer::copy_to_host (a copy to host memory)")?;
        if bytes > 0 {
            self.mem.ctx.bind_to_thread()?;
            // SAFETY: lengths agree; we synchronise before `out` can be touched again.
            check(
                unsafe { sys::cuMemcpyDtoHAsync_v2(out.as_mut_ptr().cast(), self.ptr, bytes, stream.raw()) },
                "cuMemcpyDtoHAsync",
            )?;
        }
        stream.synchronize()
    }

    /// The buffer's contents as a `Vec`; waits for `stream` (so it also reports kernel errors).
    pub fn to_host_vec(&self, stream: &CudaStream) -> Result<Vec<T>, DriverError> {
        let len = self.len();
        let mut out: Vec<T> = Vec::with_capacity(len);
        let bytes = byte_len::<T>(len)?;
        graph::refuse(stream.raw(), "DeviceBuffer::to_host_vec (a copy to host memory)")?;
        if bytes > 0 {
            self.mem.ctx.bind_to_thread()?;
            // SAFETY: the Vec has room for `len` elements; the stream is synchronised below
            // before the length is set.
            check(
                unsafe { sys::cuMemcpyDtoHAsync_v2(out.as_mut_ptr().cast(), self.ptr, bytes, stream.raw()) },
                "cuMemcpyDtoHAsync",
            )?;
        }
        stream.synchronize()?;
        // SAFETY: the copy filled all `len` elements, and T: DeviceCopy accepts any bytes.
        unsafe { out.set_len(len) };
        Ok(out)
    }

    /// Copies `other` (same length) into this buffer, device to device, queued on `stream`.
    pub fn copy_from(&mut self, stream: &CudaStream, other: &DeviceBuffer<T>) -> Result<(), DriverError> {
        self.check_len("copy_from", other.len())?;
        let bytes = byte_len::<T>(other.len())?;
        if bytes > 0 {
            self.mem.ctx.bind_to_thread()?;
            let capture = graph::before(stream.raw(), false, &|| "DeviceBuffer::copy_from".into())?;
            // SAFETY: both allocations hold `bytes` bytes and cannot overlap (`&mut self`).
            check(unsafe { sys::cuMemcpyDtoDAsync_v2(self.ptr, other.ptr, bytes, stream.raw()) }, "cuMemcpyDtoDAsync")?;
            if let Some(capture) = capture {
                graph::after(stream.raw(), capture, graph::NodeKind::Memcpy, &[&self.mem, &other.mem]);
            }
        }
        Ok(())
    }

    fn check_len(&self, operation: &'static str, found: usize) -> Result<(), DriverError> {
        if found == self.len() {
            Ok(())
        } else {
            Err(DriverError::LengthMismatch { operation, expected: self.len(), found })
        }
    }
}

impl<T> DeviceBuffer<T> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// `true` when the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The device address (`CUdeviceptr`); 0 for an empty buffer. NVIDIA's name for it is
    /// [`cu_deviceptr`](Self::cu_deviceptr).
    pub fn as_device_ptr(&self) -> u64 {
        self.ptr
    }

    /// The context the memory belongs to.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.mem.ctx
    }

    /// The memory's holder, for CUDA graphs that keep it alive (`crate::graph`).
    pub(crate) fn allocation(&self) -> &Arc<Allocation> {
        &self.mem
    }

    /// Addresses of the device pointer and the u64 length: the two launch parameters of a slice.
    /// An empty buffer passes a dangling non-null pointer instead of 0 (the kernel's slice
    /// pointers are `nonnull`).
    pub(crate) fn param_slots(&self) -> [*mut std::ffi::c_void; 2] {
        static EMPTY: u64 = oxide_contract::abi::EMPTY_SLICE_ADDRESS;
        let ptr = if self.ptr == 0 { &EMPTY } else { &self.ptr };
        [(ptr as *const u64).cast_mut().cast(), (&self.len as *const u64).cast_mut().cast()]
    }
}

impl<T> std::fmt::Debug for DeviceBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceBuffer")
            .field("elem", &std::any::type_name::<T>())
            .field("len", &self.len)
            .field("ptr", &format_args!("{:#x}", self.ptr))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_device_copy<T: DeviceCopy>() {}

    /// A value tagged with a marker type that is never stored (NVIDIA's `const_bool_dead_branch`).
    struct Tagged<T, M> {
        _value: T,
        _tag: PhantomData<M>,
    }

    // By hand: a derive would ask `M: Copy`.
    impl<T: Copy, M> Clone for Tagged<T, M> {
        fn clone(&self) -> Self {
            *self
        }
    }
    impl<T: Copy, M> Copy for Tagged<T, M> {}

    // SAFETY: only `T`'s bytes are stored, and `T` is DeviceCopy.
    unsafe impl<T: DeviceCopy, M> DeviceCopy for Tagged<T, M> {}

    #[test]
    fn device_copy_needs_no_static_lifetime() {
        fn with_lifetime<'a>(_borrowed: &'a str) {
            // A marker that borrows: fine, nothing of it crosses to the device.
            is_device_copy::<Tagged<u32, &'a str>>();
            is_device_copy::<PhantomData<&'a mut [u8]>>();
            is_device_copy::<*const &'a str>();
        }
        with_lifetime(&String::from("not 'static"));
        is_device_copy::<(u8, [f32; 3], std::num::Wrapping<i64>, std::mem::MaybeUninit<u16>)>();
        is_device_copy::<*mut [u8]>();
    }
}
