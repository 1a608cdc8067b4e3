//! `PinnedBuffer<T>`: page-locked host memory, and the copies between it and a `DeviceBuffer` that
//! return as soon as they are queued, so that they overlap kernels and other copies.
//!
//! Why pinned memory: the GPU's copy engines move data by DMA, which needs host pages that the
//! operating system cannot page out or move. A copy from ordinary (pageable) memory is staged by
//! the driver through a pinned bounce buffer, in pieces, and `cuMemcpyHtoDAsync` from pageable
//! memory returns only once the source has been staged, so it cannot overlap the host or, in
//! practice, other work. From pinned memory the copy is one DMA transfer at the full bus speed,
//! queued in the stream like a kernel.
//!
//! Soundness: a queued copy reads or writes the buffer after the call that queued it has
//! returned, so the buffer remembers the GPU work that still uses it (an event per copy).
//! [`PinnedBuffer::as_slice`] waits for queued copies *into* the buffer, [`as_mut_slice`]
//! and `Drop` wait for every queued copy, and a copy queued on another stream is ordered after
//! the copies it conflicts with. Host code can therefore never see the memory while the GPU
//! writes it, change it while the GPU reads it, or free it under a copy.
//!
//! [`as_mut_slice`]: PinnedBuffer::as_mut_slice

use std::mem::MaybeUninit;
use std::ptr::NonNull;
use std::sync::{Arc, Mutex, MutexGuard};

use cudarc::driver::{result, sys};

use super::{DeviceBuffer, DeviceCopy, byte_len};
use crate::context::{CudaContext, CudaStream};
use crate::driver::check;
use crate::error::DriverError;
use crate::event::CudaEvent;

/// `len` elements of `T` in page-locked (pinned) host memory, freed on drop.
///
/// Copies between a `PinnedBuffer` and a [`DeviceBuffer`] are queued on a stream and return at
/// once ([`DeviceBuffer::copy_from_pinned`], [`DeviceBuffer::copy_to_pinned`], and the
/// operations of `cuda_async::transfer`), so they run while the host and other streams work.
/// Host access goes through [`as_slice`](Self::as_slice) and [`as_mut_slice`](Self::as_mut_slice),
/// which first wait for the queued copies that conflict with it.
///
/// ```no_run
/// use cuda_core::{CudaContext, DeviceBuffer, PinnedBuffer};
/// let ctx = CudaContext::new(0)?;
/// let stream = ctx.new_stream()?;
/// let input = PinnedBuffer::from_slice(&ctx, &[1.0f32, 2.0, 3.0])?;
/// let mut output = PinnedBuffer::filled(&ctx, 3, 0.0f32)?;
/// let dev = DeviceBuffer::from_pinned(&stream, &input)?; // queued, returns at once
/// dev.copy_to_pinned(&stream, &mut output)?; // queued too: the host is free meanwhile
/// assert_eq!(output.as_slice()?, [1.0, 2.0, 3.0]); // waits for the download
/// # Ok::<(), cuda_core::DriverError>(())
/// ```
///
/// Pinned memory is a limited resource (it cannot be swapped out): allocate it once, for the
/// buffers that stream data, and reuse it; allocating it is much slower than `Vec`'s.
pub struct PinnedBuffer<T> {
    /// `cuMemHostAlloc` memory (dangling for an empty buffer).
    ptr: NonNull<T>,
    len: usize,
    ctx: Arc<CudaContext>,
    in_flight: Mutex<InFlight>,
}

// SAFETY: the memory is owned like a `Box<[T]>`'s; host access is through `&self`/`&mut self`
// only, and the GPU's access is tracked in `in_flight` (behind a mutex).
unsafe impl<T: Send> Send for PinnedBuffer<T> {}
unsafe impl<T: Sync> Sync for PinnedBuffer<T> {}

/// The queued copies that may still use a buffer: an event after each (pruned as they complete).
#[derive(Default)]
struct InFlight {
    /// Copies that read the buffer (uploads).
    reads: Vec<CudaEvent>,
    /// Copies that write the buffer (downloads).
    writes: Vec<CudaEvent>,
    /// A copy was queued but could not be followed by an event nor waited for: only waiting for
    /// the whole context clears it; until then the memory is never freed.
    untracked: bool,
}

impl InFlight {
    /// Drops the events whose work has completed.
    fn prune(&mut self) -> Result<(), DriverError> {
        for list in [&mut self.reads, &mut self.writes] {
            let mut kept = Vec::with_capacity(list.len());
            for event in list.drain(..) {
                if !event.query()? {
                    kept.push(event);
                }
            }
            *list = kept;
        }
        Ok(())
    }
}

/// Waits for every event of `list`, emptying it; on an error the events not yet waited for stay.
fn wait_all(list: &mut Vec<CudaEvent>) -> Result<(), DriverError> {
    while let Some(event) = list.last() {
        event.synchronize()?;
        list.pop();
    }
    Ok(())
}

impl<T: DeviceCopy> PinnedBuffer<T> {
    /// Pinned memory holding a copy of `data`.
    ///
    /// Errors: `CUDA_ERROR_OUT_OF_MEMORY` when the system cannot pin that much memory.
    pub fn from_slice(ctx: &Arc<CudaContext>, data: &[T]) -> Result<PinnedBuffer<T>, DriverError> {
        let buffer = PinnedBuffer::alloc(ctx, data.len())?;
        // SAFETY: the allocation holds `len` elements and is not aliased; `T: Copy`.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), buffer.ptr.as_ptr(), data.len()) };
        Ok(buffer)
    }

    /// Pinned memory holding `len` copies of `value` (e.g. a poison value for an output that a
    /// download overwrites).
    ///
    /// ```no_run
    /// let ctx = cuda_core::CudaContext::new(0)?;
    /// let out = cuda_core::PinnedBuffer::filled(&ctx, 1 << 20, f32::NAN)?;
    /// assert_eq!(out.len(), 1 << 20);
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    pub fn filled(ctx: &Arc<CudaContext>, len: usize, value: T) -> Result<PinnedBuffer<T>, DriverError> {
        let buffer: PinnedBuffer<T> = PinnedBuffer::alloc(ctx, len)?;
        // SAFETY: the allocation holds `len` elements, not yet initialised, and is not aliased.
        let slots = unsafe { std::slice::from_raw_parts_mut(buffer.ptr.as_ptr().cast::<MaybeUninit<T>>(), len) };
        slots.fill(MaybeUninit::new(value));
        Ok(buffer)
    }

    /// `len` elements of pinned memory, not initialised (the constructors fill them).
    fn alloc(ctx: &Arc<CudaContext>, len: usize) -> Result<PinnedBuffer<T>, DriverError> {
        let bytes = byte_len::<T>(len)?;
        let mut ptr = NonNull::dangling();
        if bytes > 0 {
            ctx.bind_to_thread()?;
            // PORTABLE: pinned for every context (a buffer may feed several GPUs). Not
            // WRITECOMBINED (cudarc's default for its own pinned slices): the host reads
            // downloads from it, and reading write-combined memory is uncached and slow.
            // SAFETY: a context is current; the memory is freed in Drop with `free_host`.
            let raw = unsafe { result::malloc_host(bytes, sys::CU_MEMHOSTALLOC_PORTABLE) }.map_err(|e| {
                DriverError::from_cuda(e.0, "cuMemHostAlloc")
                    .context(format!("allocating {bytes} bytes of pinned host memory"))
            })?;
            ptr = NonNull::new(raw.cast::<T>()).ok_or_else(|| {
                DriverError::from_cuda(sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY, "cuMemHostAlloc")
                    .context(format!("allocating {bytes} bytes of pinned host memory returned null"))
            })?;
        }
        Ok(PinnedBuffer { ptr, len, ctx: Arc::clone(ctx), in_flight: Mutex::new(InFlight::default()) })
    }
}

impl<T> PinnedBuffer<T> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// `true` when the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The context the memory was allocated in (it is pinned for every context).
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    fn in_flight(&self) -> MutexGuard<'_, InFlight> {
        self.in_flight.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The contents, once the queued copies into the buffer have completed (copies that only
    /// read it may still run: they do not change it). Errors of that GPU work surface here.
    pub fn as_slice(&self) -> Result<&[T], DriverError> {
        let mut in_flight = self.in_flight();
        self.wait_untracked(&mut in_flight)?;
        wait_all(&mut in_flight.writes)?;
        // SAFETY: `len` initialised elements (the constructors fill them, copies write whole
        // elements of a `DeviceCopy` type); no copy writes them any more, and a new one needs
        // `&mut self`, which cannot be had while the returned borrow lives.
        Ok(unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) })
    }

    /// The contents, writable, once every queued copy that reads or writes the buffer has
    /// completed. Errors of that GPU work surface here.
    pub fn as_mut_slice(&mut self) -> Result<&mut [T], DriverError> {
        let in_flight = self.in_flight.get_mut().unwrap_or_else(|poisoned| poisoned.into_inner());
        if in_flight.untracked {
            self.ctx.synchronize()?;
            in_flight.untracked = false;
        }
        wait_all(&mut in_flight.writes)?;
        wait_all(&mut in_flight.reads)?;
        // SAFETY: as in `as_slice`, and no copy reads the memory either: `&mut self` is exclusive.
        Ok(unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) })
    }

    fn wait_untracked(&self, in_flight: &mut InFlight) -> Result<(), DriverError> {
        if in_flight.untracked {
            self.ctx.synchronize()?;
            in_flight.untracked = false;
        }
        Ok(())
    }

    /// Orders `stream` after the queued copies that write the buffer and returns the address
    /// for a copy that reads it; [`gpu_done`](Self::gpu_done) must follow once it is queued.
    pub(super) fn gpu_read(&self, stream: &CudaStream) -> Result<*const T, DriverError> {
        let mut in_flight = self.in_flight();
        in_flight.prune()?;
        for event in &in_flight.writes {
            stream.wait_event(event)?;
        }
        Ok(self.ptr.as_ptr())
    }

    /// Orders `stream` after every queued copy of the buffer and returns the address for a copy
    /// that writes it; [`gpu_done`](Self::gpu_done) must follow once it is queued.
    pub(super) fn gpu_write(&mut self, stream: &CudaStream) -> Result<*mut T, DriverError> {
        let in_flight = self.in_flight.get_mut().unwrap_or_else(|poisoned| poisoned.into_inner());
        in_flight.prune()?;
        for event in in_flight.reads.iter().chain(&in_flight.writes) {
            stream.wait_event(event)?;
        }
        Ok(self.ptr.as_ptr())
    }

    /// Remembers the copy just queued on `stream` (a write when `write`), so that host access
    /// and `Drop` wait for it. When no event can be recorded, waits for the stream instead, and
    /// when that fails too, marks the buffer as used by work it cannot wait for.
    pub(super) fn gpu_done(&self, stream: &CudaStream, write: bool) -> Result<(), DriverError> {
        let recorded = CudaEvent::new_without_timing(stream.context()).and_then(|event| {
            event.record(stream)?;
            Ok(event)
        });
        let mut in_flight = self.in_flight();
        match recorded {
            Ok(event) if write => in_flight.writes.push(event),
            Ok(event) => in_flight.reads.push(event),
            Err(e) => {
                if stream.synchronize().is_err() {
                    in_flight.untracked = true;
                }
                return Err(e);
            }
        }
        Ok(())
    }
}

impl<T> Drop for PinnedBuffer<T> {
    fn drop(&mut self) {
        if self.len == 0 || std::mem::size_of::<T>() == 0 {
            return; // nothing was allocated
        }
        let in_flight = self.in_flight.get_mut().unwrap_or_else(|poisoned| poisoned.into_inner());
        // A copy may still use the memory: wait for every one before freeing it. When a copy
        // cannot be waited for, leaking the memory is the only safe choice.
        let reads_done = wait_all(&mut in_flight.reads).is_ok();
        let writes_done = wait_all(&mut in_flight.writes).is_ok();
        let untracked_done = !in_flight.untracked || self.ctx.synchronize().is_ok();
        let waited = reads_done && writes_done && untracked_done;
        if waited && self.ctx.bind_to_thread().is_ok() {
            // SAFETY: allocated by `malloc_host` in `alloc`, freed once, no copy uses it any more.
            let _ = unsafe { result::free_host(self.ptr.as_ptr().cast()) };
        }
    }
}

impl<T> std::fmt::Debug for PinnedBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PinnedBuffer")
            .field("elem", &std::any::type_name::<T>())
            .field("len", &self.len)
            .field("ptr", &self.ptr)
            .finish()
    }
}

/// Copies between device memory and pinned host memory, queued on a stream.
impl<T: DeviceCopy> DeviceBuffer<T> {
    /// A buffer holding a copy of `src`, queued on `stream`: returns once the copy is queued.
    /// Changing `src` afterwards ([`PinnedBuffer::as_mut_slice`]) waits for the copy.
    pub fn from_pinned(stream: &CudaStream, src: &PinnedBuffer<T>) -> Result<DeviceBuffer<T>, DriverError> {
        let mut buf = DeviceBuffer::alloc(stream.context(), src.len())?;
        buf.copy_from_pinned(stream, src)?;
        Ok(buf)
    }

    /// Copies `src` (exactly [`len`](Self::len) elements) into this buffer, queued on `stream`:
    /// returns once the copy is queued, so it overlaps work on other streams. It runs after the
    /// copies into `src` queued earlier (on any stream).
    ///
    /// ```no_run
    /// use cuda_core::{CudaContext, DeviceBuffer, PinnedBuffer};
    /// let ctx = CudaContext::new(0)?;
    /// let stream = ctx.new_stream()?;
    /// let host = PinnedBuffer::from_slice(&ctx, &[7u32; 1024])?;
    /// let mut dev = DeviceBuffer::<u32>::zeroed(&stream, 1024)?;
    /// dev.copy_from_pinned(&stream, &host)?;
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    pub fn copy_from_pinned(&mut self, stream: &CudaStream, src: &PinnedBuffer<T>) -> Result<(), DriverError> {
        self.check_len("copy_from_pinned", src.len())?;
        let bytes = byte_len::<T>(src.len())?;
        if bytes == 0 {
            return Ok(());
        }
        crate::graph::refuse(stream.raw(), "DeviceBuffer::copy_from_pinned (a copy from pinned host memory)")?;
        let host = src.gpu_read(stream)?;
        // After the ordering, which may touch events of another context (another device's copies).
        self.context().bind_to_thread()?;
        // SAFETY: both sides hold `bytes` bytes; the pinned memory stays allocated and unchanged
        // until the copy has run (`gpu_done` makes every host access and `Drop` wait for it).
        check(unsafe { sys::cuMemcpyHtoDAsync_v2(self.ptr, host.cast(), bytes, stream.raw()) }, "cuMemcpyHtoDAsync")?;
        src.gpu_done(stream, false)
    }

    /// Copies this buffer into `dst` (exactly [`len`](Self::len) elements), queued on `stream`:
    /// returns once the copy is queued, without waiting for it (a non-blocking download).
    /// [`PinnedBuffer::as_slice`] waits for it; so does dropping `dst`. It runs after the copies
    /// from and into `dst` queued earlier (on any stream).
    ///
    /// ```no_run
    /// use cuda_core::{CudaContext, DeviceBuffer, PinnedBuffer};
    /// let ctx = CudaContext::new(0)?;
    /// let stream = ctx.new_stream()?;
    /// let dev = DeviceBuffer::from_host(&stream, &[3u8; 64])?;
    /// let mut host = PinnedBuffer::filled(&ctx, 64, 0u8)?;
    /// dev.copy_to_pinned(&stream, &mut host)?;
    /// // ... other host work while the copy runs ...
    /// assert!(host.as_slice()?.iter().all(|&b| b == 3));
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    pub fn copy_to_pinned(&self, stream: &CudaStream, dst: &mut PinnedBuffer<T>) -> Result<(), DriverError> {
        self.check_len("copy_to_pinned", dst.len())?;
        let bytes = byte_len::<T>(dst.len())?;
        if bytes == 0 {
            return Ok(());
        }
        crate::graph::refuse(stream.raw(), "DeviceBuffer::copy_to_pinned (a copy to pinned host memory)")?;
        let host = dst.gpu_write(stream)?;
        // After the ordering, which may touch events of another context (another device's copies).
        self.context().bind_to_thread()?;
        // SAFETY: both sides hold `bytes` bytes; nothing reads or frees the pinned memory until
        // the copy has run (`gpu_done` makes every host access and `Drop` wait for it), and the
        // bytes a device buffer of `T: DeviceCopy` holds are valid `T`s.
        check(unsafe { sys::cuMemcpyDtoHAsync_v2(host.cast(), self.ptr, bytes, stream.raw()) }, "cuMemcpyDtoHAsync")?;
        dst.gpu_done(stream, true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn pinned_buffers_cross_threads() {
        assert_send_sync::<PinnedBuffer<f32>>();
        assert_send_sync::<PinnedBuffer<(u8, [u64; 3])>>();
    }
}
