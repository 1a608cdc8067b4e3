//! `DeviceBox<[T]>`: an owned device allocation of one device, to move into owned async operations
//! (the seed's "owned typed form"). It is a [`DeviceBuffer`] that also remembers its device and,
//! when dropped, first waits for the device, since async work may still use it.

use std::mem::ManuallyDrop;
use std::ops::{Deref, DerefMut};

use cuda_core::DeviceBuffer;
use cuda_core::sys::CUdeviceptr;

use crate::device_context::device_context;

/// Owned device memory holding a `T` (only slices `[T]` for now) on one device.
///
/// It dereferences to the [`DeviceBuffer`] it wraps, so it goes wherever a buffer does: to the
/// generated `_async` / `_async_owned` methods, to `to_host_vec`, to `cu_deviceptr`.
///
/// ```no_run
/// use cuda_async::device_box::DeviceBox;
/// use cuda_async::device_context::{init_device_contexts, with_cuda_context};
/// init_device_contexts(0, 1)?;
/// let data = with_cuda_context(0, |ctx| {
///     cuda_core::DeviceBuffer::from_host(&ctx.default_stream(), &[1.0f32, 2.0, 3.0])
/// })??;
/// let boxed = DeviceBox::from_buffer(data);
/// assert_eq!((boxed.len(), boxed.device_id()), (3, 0));
/// # Ok::<(), cuda_core::DriverError>(())
/// ```
pub struct DeviceBox<T: ?Sized + Boxable> {
    /// Dropped by hand in `Drop`, after waiting for the device.
    buffer: ManuallyDrop<T::Buffer>,
    device_id: usize,
}

/// What a [`DeviceBox`] can hold; sealed (slices `[T]`).
pub trait Boxable: private::Sealed {
    /// The buffer type holding it.
    type Buffer;
}

mod private {
    pub trait Sealed {}
    impl<T> Sealed for [T] {}
}

impl<T> Boxable for [T] {
    type Buffer = DeviceBuffer<T>;
}

impl<T> DeviceBox<[T]> {
    /// Takes ownership of `buffer`.
    ///
    /// ```no_run
    /// # let ctx = cuda_core::CudaContext::new(0)?;
    /// let buf = cuda_core::DeviceBuffer::<u32>::zeroed(&ctx.default_stream(), 16)?;
    /// let boxed = cuda_async::device_box::DeviceBox::from_buffer(buf);
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    pub fn from_buffer(buffer: DeviceBuffer<T>) -> DeviceBox<[T]> {
        let device_id = buffer.context().ordinal();
        DeviceBox { buffer: ManuallyDrop::new(buffer), device_id }
    }

    /// Adopts `len` elements at `dptr` on device `device_id`, allocated with `cuMemAlloc` or
    /// `cuMemAllocAsync` (e.g. [`cuda_core::memory::malloc_async`]); freed on drop.
    ///
    /// ```no_run
    /// use cuda_async::device_box::DeviceBox;
    /// use cuda_async::device_context::with_cuda_context;
    /// let boxed = with_cuda_context(0, |ctx| -> Result<_, cuda_core::DriverError> {
    ///     let stream = ctx.default_stream();
    ///     // SAFETY: the context is current; the allocation is handed over whole, once.
    ///     let ptr = unsafe { cuda_core::memory::malloc_async(stream.cu_stream(), 1024 * 4)? };
    ///     stream.synchronize()?;
    ///     Ok(unsafe { DeviceBox::<[f32]>::from_raw_parts(ptr, 1024, 0) })
    /// })??;
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    ///
    /// # Safety
    /// `dptr` must be a live allocation of device `device_id`'s primary context holding at least
    /// `len * size_of::<T>()` bytes, owned by nobody else.
    ///
    /// # Panics
    /// When device `device_id` cannot be opened (it cannot have allocated `dptr` then).
    pub unsafe fn from_raw_parts(dptr: CUdeviceptr, len: usize, device_id: usize) -> DeviceBox<[T]> {
        let device = device_context(device_id)
            .unwrap_or_else(|e| panic!("DeviceBox::from_raw_parts: device {device_id} cannot be opened: {e}"));
        // SAFETY: forwarded to the caller; the primary context is the one `device` holds.
        let buffer = unsafe { DeviceBuffer::from_raw_parts(dptr, len, device.context().clone()) };
        DeviceBox { buffer: ManuallyDrop::new(buffer), device_id }
    }

    /// Gives the buffer back (it is then freed, or not, as any `DeviceBuffer`).
    ///
    /// ```no_run
    /// # let ctx = cuda_core::CudaContext::new(0)?;
    /// # let boxed = cuda_async::device_box::DeviceBox::from_buffer(cuda_core::DeviceBuffer::<u8>::zeroed(&ctx.default_stream(), 4)?);
    /// let buf: cuda_core::DeviceBuffer<u8> = boxed.into_buffer();
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    pub fn into_buffer(self) -> DeviceBuffer<T> {
        let mut this = ManuallyDrop::new(self);
        // SAFETY: `this` is never dropped or used again, so the buffer is taken exactly once.
        unsafe { ManuallyDrop::take(&mut this.buffer) }
    }

    /// The device the memory is on.
    ///
    /// ```no_run
    /// # let ctx = cuda_core::CudaContext::new(0)?;
    /// let boxed = cuda_async::device_box::DeviceBox::from_buffer(cuda_core::DeviceBuffer::<u8>::zeroed(&ctx.default_stream(), 4)?);
    /// assert_eq!(boxed.device_id(), 0);
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    pub fn device_id(&self) -> usize {
        self.device_id
    }
}

impl<T> Deref for DeviceBox<[T]> {
    type Target = DeviceBuffer<T>;

    fn deref(&self) -> &DeviceBuffer<T> {
        &self.buffer
    }
}

impl<T> DerefMut for DeviceBox<[T]> {
    fn deref_mut(&mut self) -> &mut DeviceBuffer<T> {
        &mut self.buffer
    }
}

impl<T> From<DeviceBuffer<T>> for DeviceBox<[T]> {
    fn from(buffer: DeviceBuffer<T>) -> DeviceBox<[T]> {
        DeviceBox::from_buffer(buffer)
    }
}

impl<T: ?Sized + Boxable> Drop for DeviceBox<T> {
    fn drop(&mut self) {
        // Async work on any stream of the device may still use the memory, and `cuMemFree` does
        // not wait for it when the memory came from `cuMemAllocAsync`: wait for the device first.
        if let Ok(device) = device_context(self.device_id) {
            let _ = device.context().synchronize();
        }
        // SAFETY: dropped once, here; the field is not used afterwards.
        unsafe { ManuallyDrop::drop(&mut self.buffer) };
    }
}

impl<T> std::fmt::Debug for DeviceBox<[T]> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceBox").field("device", &self.device_id).field("buffer", &*self.buffer).finish()
    }
}
