//! `DeviceBuffer` and cudarc's `CudaSlice` without copies: adopting a slice (`from_cudarc`),
//! giving it back (`into_cudarc`), and lending any buffer to cudarc code (`as_cudarc`,
//! `as_cudarc_mut`).
//!
//! Why both directions exist: a program that uses cudarc (or candle, which is built on it)
//! launches our kernels on its `CudaSlice`s directly (`crate::launch_args`), and hands our
//! buffers to cudarc-based libraries through the borrowed views here. Owned conversion back to
//! cudarc is offered only for memory cudarc allocated, because cudarc frees in stream order
//! (`cuMemFreeAsync`) and our buffers are `cuMemAlloc` memory freed with `cuMemFree`.

use std::any::Any;
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::ops::Deref;
use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream as CudarcStream, CudaViewMut, DevicePtr};

use super::{Allocation, DeviceBuffer, Owner};
use crate::context::CudaContext;
use crate::error::DriverError;

/// A cudarc slice owned by a [`DeviceBuffer`], its element type erased.
pub(crate) trait ForeignSlice: Send + Sync {
    /// Lets go of the memory without freeing it.
    fn leak(self: Box<Self>);
    /// The slice itself, for `into_cudarc` to take back.
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
    /// The slice, to check its type.
    fn as_any(&self) -> &dyn Any;
}

impl<T: 'static> ForeignSlice for CudaSlice<T> {
    fn leak(self: Box<Self>) {
        let _ = (*self).leak();
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl<T: 'static> DeviceBuffer<T> {
    /// A buffer over a cudarc slice's memory, without a copy (candle's `CudaStorage` holds
    /// these). The slice is kept and dropped with the buffer, so cudarc frees its memory the way
    /// it allocated it; the buffer waits for the device first, since our launches may use it
    /// on other streams than the slice's.
    ///
    /// Errors: only those of the driver, making our context for the slice's
    /// ([`CudaContext::from_cudarc`], done once per cudarc context).
    ///
    /// ```no_run
    /// let ctx = cuda_core::CudaContext::new(0)?;
    /// let stream = ctx.cudarc().default_stream();
    /// let slice = stream.clone_htod(&[1.0f32, 2.0, 3.0]).unwrap(); // cudarc's
    /// let buf = cuda_core::DeviceBuffer::from_cudarc(slice)?; // ours, the same memory
    /// assert_eq!(buf.to_host_vec(&ctx.default_stream())?, [1.0, 2.0, 3.0]);
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    pub fn from_cudarc(slice: CudaSlice<T>) -> Result<DeviceBuffer<T>, DriverError> {
        let ctx = CudaContext::from_cudarc(slice.context())?;
        let (ptr, len) = (raw_ptr(&slice), slice.len() as u64);
        let mem = Allocation::new(ptr, ctx, Owner::Cudarc(Box::new(slice)));
        Ok(DeviceBuffer { ptr, len, mem, _elem: PhantomData })
    }

    /// The cudarc slice this buffer was made from by [`from_cudarc`](Self::from_cudarc), after
    /// waiting for the device (launches of ours may still use it on other streams).
    ///
    /// Errors (with the buffer back): the memory is ours, not cudarc's (lend it with
    /// [`as_cudarc`](Self::as_cudarc) instead); a CUDA graph still uses it; or its element type
    /// was changed since ([`cast_elem`](Self::cast_elem)).
    ///
    /// ```no_run
    /// let ctx = cuda_core::CudaContext::new(0)?;
    /// let slice = ctx.cudarc().default_stream().alloc_zeros::<u32>(256).unwrap();
    /// let buf = cuda_core::DeviceBuffer::from_cudarc(slice)?;
    /// let slice = buf.into_cudarc().map_err(|e| e.to_string()).unwrap();
    /// assert_eq!(slice.len(), 256);
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    pub fn into_cudarc(self) -> Result<CudaSlice<T>, IntoCudarcError<T>> {
        let whole = match &self.mem.owner {
            Owner::Cudarc(slice) => match slice.as_any().downcast_ref::<CudaSlice<T>>() {
                Some(slice) => raw_ptr(slice) == self.ptr && slice.len() as u64 == self.len,
                None => false,
            },
            _ => return Err(IntoCudarcError { buffer: self, reason: Reason::NotCudarc }),
        };
        if !whole {
            return Err(IntoCudarcError { buffer: self, reason: Reason::Retyped });
        }
        if let Err(e) = self.context().synchronize() {
            return Err(IntoCudarcError { buffer: self, reason: Reason::Driver(e) });
        }
        let (ptr, len) = (self.ptr, self.len);
        match self.into_allocation().disown() {
            Ok(Owner::Cudarc(slice)) => match slice.into_any().downcast::<CudaSlice<T>>() {
                Ok(slice) => Ok(*slice),
                Err(_) => unreachable!("the slice's type was checked above"),
            },
            Ok(_) => unreachable!("the owner was checked above"),
            Err(mem) => Err(IntoCudarcError {
                buffer: DeviceBuffer { ptr, len, mem, _elem: PhantomData },
                reason: Reason::Graph,
            }),
        }
    }
}

impl<T> DeviceBuffer<T> {
    /// Lends the buffer to cudarc as a read-only `CudaSlice` on `stream`, without a copy: for a
    /// cudarc-based library (cuBLAS through cudarc, candle) that reads it. The memory stays
    /// ours; the loan ends when the result is dropped.
    ///
    /// Errors: `stream` belongs to another context than the buffer.
    ///
    /// ```no_run
    /// let ctx = cuda_core::CudaContext::new(0)?;
    /// let stream = ctx.new_stream()?;
    /// let buf = cuda_core::DeviceBuffer::from_host(&stream, &[1u32, 2, 3])?;
    /// let view = buf.as_cudarc(stream.cudarc())?;
    /// let back: Vec<u32> = stream.cudarc().clone_dtoh(&*view).unwrap(); // cudarc reads our memory
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    pub fn as_cudarc<'a>(&'a self, stream: &Arc<CudarcStream>) -> Result<CudarcRef<'a, T>, DriverError> {
        Ok(CudarcRef { slice: ManuallyDrop::new(self.lend(stream)?), _buffer: PhantomData })
    }

    /// Lends the buffer to cudarc for writing ([`CudarcMut::view_mut`] is the `CudaViewMut`
    /// that cudarc's writing calls take), without a copy.
    ///
    /// ```no_run
    /// let ctx = cuda_core::CudaContext::new(0)?;
    /// let stream = ctx.new_stream()?;
    /// let mut buf = cuda_core::DeviceBuffer::<f32>::zeroed(&stream, 3)?;
    /// let mut loan = buf.as_cudarc_mut(stream.cudarc())?;
    /// stream.cudarc().memcpy_htod(&[1.0f32, 2.0, 3.0], &mut loan.view_mut()).unwrap();
    /// drop(loan);
    /// assert_eq!(buf.to_host_vec(&stream)?, [1.0, 2.0, 3.0]);
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    pub fn as_cudarc_mut<'a>(&'a mut self, stream: &Arc<CudarcStream>) -> Result<CudarcMut<'a, T>, DriverError> {
        Ok(CudarcMut { slice: ManuallyDrop::new(self.lend(stream)?), _buffer: PhantomData })
    }

    /// A cudarc slice over this memory that must never be dropped, only leaked.
    fn lend(&self, stream: &Arc<CudarcStream>) -> Result<CudaSlice<T>, DriverError> {
        if stream.context().cu_ctx() != self.context().cu_ctx() {
            return Err(DriverError::Interop {
                message: format!(
                    "the cudarc stream belongs to device {} (another context), the buffer to device {}; \
                     lend the buffer on a stream of its own context (its `context().cudarc()`)",
                    stream.context().ordinal(),
                    self.context().ordinal()
                ),
            });
        }
        // SAFETY: the memory is a live allocation of this context holding `len` elements; the
        // slice is leaked, never dropped (`CudarcRef`/`CudarcMut`), so cudarc never frees it, and
        // the loan borrows the buffer, which therefore outlives it.
        Ok(unsafe { stream.upgrade_device_ptr::<T>(self.ptr, self.len()) })
    }
}

/// Our buffer lent to cudarc read-only ([`DeviceBuffer::as_cudarc`]); dereferences to the
/// `CudaSlice`.
pub struct CudarcRef<'a, T> {
    slice: ManuallyDrop<CudaSlice<T>>,
    _buffer: PhantomData<&'a DeviceBuffer<T>>,
}

/// Our buffer lent to cudarc for writing ([`DeviceBuffer::as_cudarc_mut`]); dereferences to the
/// `CudaSlice` for reading, [`view_mut`](Self::view_mut) for writing. (No `DerefMut`: a
/// `&mut CudaSlice` could be swapped with one that cudarc would then free as ours.)
pub struct CudarcMut<'a, T> {
    slice: ManuallyDrop<CudaSlice<T>>,
    _buffer: PhantomData<&'a mut DeviceBuffer<T>>,
}

impl<T> CudarcMut<'_, T> {
    /// The whole buffer as a `CudaViewMut`, what cudarc's writing calls take.
    pub fn view_mut(&mut self) -> CudaViewMut<'_, T> {
        self.slice.as_view_mut()
    }
}

impl<T> Deref for CudarcRef<'_, T> {
    type Target = CudaSlice<T>;
    fn deref(&self) -> &CudaSlice<T> {
        &self.slice
    }
}

impl<T> Deref for CudarcMut<'_, T> {
    type Target = CudaSlice<T>;
    fn deref(&self) -> &CudaSlice<T> {
        &self.slice
    }
}

impl<T> Drop for CudarcRef<'_, T> {
    fn drop(&mut self) {
        // SAFETY: taken once, here; leaking ends the loan without freeing our memory.
        let _ = unsafe { ManuallyDrop::take(&mut self.slice) }.leak();
    }
}

impl<T> Drop for CudarcMut<'_, T> {
    fn drop(&mut self) {
        // SAFETY: as for `CudarcRef`.
        let _ = unsafe { ManuallyDrop::take(&mut self.slice) }.leak();
    }
}

/// Why [`DeviceBuffer::into_cudarc`] gave the buffer back.
pub struct IntoCudarcError<T> {
    /// The buffer, unchanged.
    pub buffer: DeviceBuffer<T>,
    reason: Reason,
}

enum Reason {
    NotCudarc,
    Graph,
    Retyped,
    Driver(DriverError),
}

impl<T> IntoCudarcError<T> {
    /// The buffer, unchanged.
    pub fn into_buffer(self) -> DeviceBuffer<T> {
        self.buffer
    }
}

impl<T> std::fmt::Display for IntoCudarcError<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.reason {
            Reason::NotCudarc => f.write_str(
                "DeviceBuffer::into_cudarc: the buffer's memory was allocated by cuda-oxide, not cudarc; \
                 lend it with as_cudarc / as_cudarc_mut, or allocate through cudarc and adopt with from_cudarc",
            ),
            Reason::Graph => f.write_str(
                "DeviceBuffer::into_cudarc: a live CUDA graph still uses the buffer; drop the graph and its \
                 GraphExecs first",
            ),
            Reason::Retyped => f.write_str(
                "DeviceBuffer::into_cudarc: the buffer's element type or length changed since from_cudarc \
                 (cast_elem / cast_chunks); cast it back first",
            ),
            Reason::Driver(e) => write!(f, "DeviceBuffer::into_cudarc: waiting for the device failed: {e}"),
        }
    }
}

impl<T> std::fmt::Debug for IntoCudarcError<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

impl<T> std::error::Error for IntoCudarcError<T> {}

/// A slice's device address.
fn raw_ptr<T>(slice: &CudaSlice<T>) -> u64 {
    // `device_ptr` on the slice's own stream waits for nothing new (its own writes are ordered
    // on it) and records a read that changes nothing; it is cudarc's only way to the address.
    let (ptr, _sync) = slice.device_ptr(slice.stream());
    ptr
}
