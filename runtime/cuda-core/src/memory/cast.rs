//! `DeviceBuffer` as raw parts and under another element type: `cu_deviceptr`, `num_bytes`,
//! `cast_elem`, `cast_chunks`, `from_raw_parts`, `into_raw_parts`.

use std::marker::PhantomData;
use std::mem::{ManuallyDrop, align_of, size_of};
use std::sync::Arc;

use cudarc::driver::sys::CUdeviceptr;

use super::{Allocation, DeviceBuffer, Owner};
use crate::context::CudaContext;

impl<T> DeviceBuffer<T> {
    /// The device address of element 0 (`CUdeviceptr`; 0 for an empty buffer), for raw driver
    /// calls and for passing the buffer to a kernel as a raw pointer. Same as
    /// [`as_device_ptr`](Self::as_device_ptr).
    ///
    /// ```no_run
    /// # let ctx = cuda_core::CudaContext::new(0)?; let stream = ctx.default_stream();
    /// let counters = cuda_core::DeviceBuffer::<u32>::zeroed(&stream, 64)?;
    /// let ptr = counters.cu_deviceptr() as *mut u32; // a kernel parameter `*mut u32`
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    pub fn cu_deviceptr(&self) -> CUdeviceptr {
        self.ptr
    }

    /// Size in bytes: `len() * size_of::<T>()`.
    ///
    /// ```no_run
    /// # let ctx = cuda_core::CudaContext::new(0)?; let stream = ctx.default_stream();
    /// let buf = cuda_core::DeviceBuffer::<f64>::zeroed(&stream, 10)?;
    /// assert_eq!(buf.num_bytes(), 80);
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    pub fn num_bytes(&self) -> usize {
        // Cannot overflow: the allocation was made (or adopted) with this many bytes.
        self.len() * size_of::<T>()
    }

    /// Adopts device memory as a buffer of `len` elements; it is freed with `cuMemFree` on drop.
    ///
    /// ```no_run
    /// # use cuda_core::{CudaContext, DeviceBuffer, memory};
    /// let ctx = CudaContext::new(0)?;
    /// ctx.bind_to_thread()?;
    /// // SAFETY: a fresh 4 KiB cuMemAlloc allocation of this context, handed over whole.
    /// let buf = unsafe { DeviceBuffer::<f32>::from_raw_parts(memory::malloc_sync(4096)?, 1024, ctx.clone()) };
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    ///
    /// # Safety
    /// `ptr` must be a `cuMemAlloc` allocation (not a stream-ordered `cuMemAllocAsync` one) of
    /// `ctx` holding at least `len * size_of::<T>()` bytes, owned by nobody else (the buffer frees
    /// it), or 0 with `len == 0`.
    ///
    /// # Panics
    /// When `len * size_of::<T>()` overflows `usize` (no allocation can be that large).
    pub unsafe fn from_raw_parts(ptr: CUdeviceptr, len: usize, ctx: Arc<CudaContext>) -> DeviceBuffer<T> {
        assert!(
            len.checked_mul(size_of::<T>()).is_some(),
            "DeviceBuffer::from_raw_parts: {len} elements of {} bytes overflow usize",
            size_of::<T>()
        );
        DeviceBuffer { ptr, len: len as u64, mem: Allocation::new(ptr, ctx, Owner::Driver), _elem: PhantomData }
    }

    /// Gives up ownership: the device address, the length, and the context. The memory is no
    /// longer freed on drop; free it with [`crate::memory::free_sync`] or adopt it again with
    /// [`from_raw_parts`](Self::from_raw_parts).
    ///
    /// ```no_run
    /// # let ctx = cuda_core::CudaContext::new(0)?; let stream = ctx.default_stream();
    /// let buf = cuda_core::DeviceBuffer::<u8>::zeroed(&stream, 16)?;
    /// let (ptr, len, ctx) = buf.into_raw_parts();
    /// // SAFETY: the parts of a buffer, adopted once.
    /// let again = unsafe { cuda_core::DeviceBuffer::<u8>::from_raw_parts(ptr, len, ctx) };
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    ///
    /// # Panics
    /// When a live CUDA graph still uses the buffer ([`crate::graph`]): the graph keeps the
    /// memory, so it cannot be given away; drop the graph (and its instances) first.
    pub fn into_raw_parts(self) -> (CUdeviceptr, usize, Arc<CudaContext>) {
        let (ptr, len) = (self.ptr, self.len());
        let mem = self.into_allocation();
        let ctx = Arc::clone(mem.context());
        match mem.disown() {
            // cudarc's slice lets go of its memory without freeing it (`leak`).
            Ok(Owner::Cudarc(slice)) => {
                slice.leak();
            }
            Ok(Owner::Driver | Owner::Nobody) => {}
            Err(_) => panic!(
                "DeviceBuffer::into_raw_parts: a live CUDA graph still uses this buffer, so its memory \
                 cannot be given away; drop the graph and its GraphExecs first"
            ),
        }
        (ptr, len, ctx)
    }

    /// The buffer's memory holder, the buffer itself forgotten.
    pub(crate) fn into_allocation(self) -> Arc<Allocation> {
        let this = ManuallyDrop::new(self);
        // SAFETY: `this` is never dropped or used again, so moving the Arc out does not
        // duplicate it.
        unsafe { std::ptr::read(&this.mem) }
    }

    /// The same memory as elements of `A`, which must have the same size and alignment as `T`
    /// (e.g. a `#[repr(transparent)]` wrapper such as an atomic cell over `u64`). Length,
    /// address and bytes are unchanged.
    ///
    /// A different size or alignment does not compile (NVIDIA's version panics at run time):
    ///
    /// ```no_run
    /// # let ctx = cuda_core::CudaContext::new(0)?; let stream = ctx.default_stream();
    /// #[repr(transparent)]
    /// struct Counter(u64);
    /// let raw = cuda_core::DeviceBuffer::<u64>::zeroed(&stream, 1024)?;
    /// let counters = raw.cast_elem::<Counter>(); // a kernel parameter `&[Counter]`
    /// assert_eq!(counters.len(), 1024);
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    pub fn cast_elem<A>(self) -> DeviceBuffer<A> {
        const {
            assert!(size_of::<A>() == size_of::<T>(), "cast_elem needs an element type of the same size");
            assert!(align_of::<A>() == align_of::<T>(), "cast_elem needs an element type of the same alignment");
        }
        let (ptr, len) = (self.ptr, self.len);
        DeviceBuffer { ptr, len, mem: self.into_allocation(), _elem: PhantomData }
    }

    /// The same bytes as elements of `A`, with the length recomputed (e.g. `4n` floats as `n`
    /// 16-byte vectors). Gives the buffer back unchanged when that is not exact: the byte size
    /// is not a multiple of `size_of::<A>()`, the address is not aligned for `A`, or `A` is
    /// zero-sized.
    ///
    /// ```no_run
    /// # let ctx = cuda_core::CudaContext::new(0)?; let stream = ctx.default_stream();
    /// #[derive(Clone, Copy)]
    /// #[repr(C, align(16))]
    /// struct F32x4([f32; 4]);
    /// let floats = cuda_core::DeviceBuffer::<f32>::zeroed(&stream, 4096)?;
    /// let quads = floats.cast_chunks::<F32x4>().expect("4096 floats are 1024 aligned quads");
    /// assert_eq!(quads.len(), 1024);
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    pub fn cast_chunks<A>(self) -> Result<DeviceBuffer<A>, DeviceBuffer<T>> {
        let Some(len) = chunk_len::<A>(self.num_bytes(), self.ptr) else {
            return Err(self);
        };
        let ptr = self.ptr;
        Ok(DeviceBuffer { ptr, len: len as u64, mem: self.into_allocation(), _elem: PhantomData })
    }

    /// Whether [`cast_chunks`](Self::cast_chunks) to `A` would succeed (without giving up the buffer).
    ///
    /// ```no_run
    /// # let ctx = cuda_core::CudaContext::new(0)?; let stream = ctx.default_stream();
    /// let odd = cuda_core::DeviceBuffer::<f32>::zeroed(&stream, 3)?;
    /// assert!(!odd.can_cast_chunks::<[f32; 2]>());
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    #[must_use]
    pub fn can_cast_chunks<A>(&self) -> bool {
        chunk_len::<A>(self.num_bytes(), self.ptr).is_some()
    }
}

/// How many `A` fill `bytes` at address `ptr` exactly, if they do.
fn chunk_len<A>(bytes: usize, ptr: CUdeviceptr) -> Option<usize> {
    let size = size_of::<A>();
    if size == 0 || !bytes.is_multiple_of(size) || !ptr.is_multiple_of(align_of::<A>() as u64) {
        return None;
    }
    Some(bytes / size)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_lengths() {
        assert_eq!(chunk_len::<[f32; 4]>(64, 256), Some(4));
        assert_eq!(chunk_len::<u64>(12, 256), None, "not a whole number of elements");
        assert_eq!(chunk_len::<u64>(16, 260), None, "misaligned address");
        assert_eq!(chunk_len::<()>(16, 256), None, "zero-sized element");
        assert_eq!(chunk_len::<u32>(0, 0), Some(0), "an empty buffer casts to an empty buffer");
    }
}
