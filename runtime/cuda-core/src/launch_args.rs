//! What the generated launch methods accept: a stream of ours or of cudarc ([`LaunchStream`]),
//! and for a slice parameter our `DeviceBuffer` or cudarc's `CudaSlice` / `CudaView` /
//! `CudaViewMut` ([`KernelSlice`], [`KernelSliceMut`]). So a program that holds cudarc's types
//! (candle's storage, say) launches our kernels on them with no second memory type.
//!
//! ```no_run
//! # use cuda_core::{DeviceBuffer, KernelParams, KernelSlice, KernelSliceMut, LaunchStream};
//! let ctx = cuda_core::cudarc::driver::CudaContext::new(0).unwrap();
//! let stream = ctx.new_stream().unwrap();
//! let x = stream.clone_htod(&[1.0f32, 2.0]).unwrap();
//! let mut y = stream.alloc_zeros::<f32>(2).unwrap();
//! // What a generated method does with them (`module.axpy(&stream, cfg, 2.0, &x, &mut y)`):
//! let on = stream.cudarc_stream();
//! let (px, py) = (KernelSlice::<f32>::slice_param(&x, on), KernelSliceMut::<f32>::slice_param_mut(&mut y, on));
//! let mut params = KernelParams::new();
//! params.push_slice_param(&px).push_slice_param(&py);
//! ```

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaView, CudaViewMut, DevicePtr, DevicePtrMut, SyncOnDrop};

use crate::context::CudaStream;
use crate::memory::{Allocation, DeviceBuffer};

/// A stream a kernel can be launched on: ours ([`CudaStream`]) or cudarc's
/// (`cudarc::driver::CudaStream`, e.g. candle's `CudaDevice::cuda_stream()`), or an `Arc` of
/// either. Every launch runs on cudarc's stream underneath (ours wraps one).
pub trait LaunchStream {
    /// The cudarc stream the work is queued on.
    fn cudarc_stream(&self) -> &cudarc::driver::CudaStream;
}

impl LaunchStream for CudaStream {
    fn cudarc_stream(&self) -> &cudarc::driver::CudaStream {
        self.cudarc()
    }
}

impl LaunchStream for cudarc::driver::CudaStream {
    fn cudarc_stream(&self) -> &cudarc::driver::CudaStream {
        self
    }
}

impl<S: LaunchStream + ?Sized> LaunchStream for Arc<S> {
    fn cudarc_stream(&self) -> &cudarc::driver::CudaStream {
        (**self).cudarc_stream()
    }
}

/// One slice argument as the kernel receives it (device address and length, contract §4),
/// with what must live until the launch is queued: cudarc's record of the use (so its other
/// streams wait for this one) and, for our buffers, the memory a CUDA graph keeps alive.
pub struct SliceParam<'a> {
    pub(crate) ptr: u64,
    pub(crate) len: u64,
    pub(crate) keep: Option<&'a Arc<Allocation>>,
    /// Whether a graph capturing this launch could not keep the memory alive (not ours).
    pub(crate) foreign: bool,
    _sync: Option<SyncOnDrop<'a>>,
}

impl<'a> SliceParam<'a> {
    /// A slice at device address `ptr` of `len` elements, for a [`KernelSlice`] implementation
    /// over memory of another library (a PyTorch tensor, say).
    ///
    /// # Safety
    /// `ptr` must address `len` elements of the kernel's element type in device memory of the
    /// stream's context (or be any value with `len == 0`), which stays allocated until the
    /// work queued with it has completed, and which nothing else writes meanwhile (nor reads,
    /// for a [`KernelSliceMut`] parameter).
    pub unsafe fn from_raw(ptr: u64, len: usize) -> SliceParam<'a> {
        SliceParam { ptr, len: len as u64, keep: None, foreign: true, _sync: None }
    }

    /// [`from_raw`](Self::from_raw) with a guard dropped after the launch is queued (cudarc's
    /// `SyncOnDrop`, which records the use for its stream synchronisation).
    ///
    /// # Safety
    /// As [`from_raw`](Self::from_raw).
    pub unsafe fn with_sync(ptr: u64, len: usize, sync: SyncOnDrop<'a>) -> SliceParam<'a> {
        SliceParam { ptr, len: len as u64, keep: None, foreign: true, _sync: Some(sync) }
    }

    fn ours<T>(buf: &'a DeviceBuffer<T>) -> SliceParam<'a> {
        SliceParam {
            ptr: buf.as_device_ptr(),
            len: buf.len() as u64,
            keep: Some(buf.allocation()),
            foreign: false,
            _sync: None,
        }
    }

    /// The device address (0 for an empty slice).
    pub fn device_ptr(&self) -> u64 {
        self.ptr
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// `true` for an empty slice.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// What a kernel parameter `&[T]` takes (by reference): [`DeviceBuffer<T>`], cudarc's
/// `CudaSlice<T>`, `CudaView<T>` and `CudaViewMut<T>`.
///
/// # Safety
/// The [`SliceParam`] must describe `len` elements of `T` in device memory of `stream`'s
/// context that stay allocated until the queued work completes, and `self` must be shared
/// (no one writes the memory through it while borrowed).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be passed for a kernel's `&[{T}]` parameter",
    label = "expected a `&DeviceBuffer<{T}>` or a cudarc `&CudaSlice<{T}>` / `&CudaView<{T}>`",
    note = "for a wrapper that dereferences to a buffer, pass `&*x`"
)]
pub unsafe trait KernelSlice<T> {
    /// The kernel's view of `self` for a launch on `stream`.
    fn slice_param<'a>(&'a self, stream: &'a cudarc::driver::CudaStream) -> SliceParam<'a>;

    /// The number of elements (what `#[launch_contract(requires = (a.len() >= n))]` reads).
    fn len(&self) -> usize;

    /// `true` when there are no elements.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What a kernel parameter `&mut [T]` or `DisjointSlice<T>` takes (by `&mut`):
/// [`DeviceBuffer<T>`], cudarc's `CudaSlice<T>` and `CudaViewMut<T>`.
///
/// # Safety
/// As [`KernelSlice`], and `self` must give exclusive access to the memory while borrowed.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be passed for a kernel's `&mut [{T}]` or `DisjointSlice<{T}>` parameter",
    label = "expected a `&mut DeviceBuffer<{T}>` or a cudarc `&mut CudaSlice<{T}>` / `&mut CudaViewMut<{T}>`",
    note = "for a wrapper that dereferences to a buffer, pass `&mut *x`"
)]
pub unsafe trait KernelSliceMut<T>: KernelSlice<T> {
    /// The kernel's view of `self` for a launch on `stream` that writes it.
    fn slice_param_mut<'a>(&'a mut self, stream: &'a cudarc::driver::CudaStream) -> SliceParam<'a>;
}

// SAFETY: a live allocation of `len` elements, borrowed for the launch.
unsafe impl<T> KernelSlice<T> for DeviceBuffer<T> {
    fn slice_param<'a>(&'a self, _stream: &'a cudarc::driver::CudaStream) -> SliceParam<'a> {
        SliceParam::ours(self)
    }

    fn len(&self) -> usize {
        DeviceBuffer::len(self)
    }
}

// SAFETY: as above, borrowed mutably.
unsafe impl<T> KernelSliceMut<T> for DeviceBuffer<T> {
    fn slice_param_mut<'a>(&'a mut self, _stream: &'a cudarc::driver::CudaStream) -> SliceParam<'a> {
        SliceParam::ours(self)
    }
}

/// cudarc's own protocol: `device_ptr(stream)` makes `stream` wait for the slice's earlier
/// writes (on other streams), and its guard records this use when dropped after the launch.
macro_rules! cudarc_slice {
    ($ty:ty, $read:ident) => {
        // SAFETY: cudarc's slice types hold `len` elements of live device memory; the guard
        // keeps cudarc's cross-stream ordering.
        unsafe impl<T> KernelSlice<T> for $ty {
            fn slice_param<'a>(&'a self, stream: &'a cudarc::driver::CudaStream) -> SliceParam<'a> {
                let (ptr, sync) = self.$read(stream);
                // SAFETY: see above.
                unsafe { SliceParam::with_sync(ptr, <$ty>::len(self), sync) }
            }

            fn len(&self) -> usize {
                <$ty>::len(self)
            }
        }
    };
}
cudarc_slice!(CudaSlice<T>, device_ptr);
cudarc_slice!(CudaView<'_, T>, device_ptr);
cudarc_slice!(CudaViewMut<'_, T>, device_ptr);

macro_rules! cudarc_slice_mut {
    ($ty:ty) => {
        // SAFETY: as above; `&mut` gives exclusive access.
        unsafe impl<T> KernelSliceMut<T> for $ty {
            fn slice_param_mut<'a>(&'a mut self, stream: &'a cudarc::driver::CudaStream) -> SliceParam<'a> {
                let len = <$ty>::len(self);
                let (ptr, sync) = self.device_ptr_mut(stream);
                // SAFETY: see above.
                unsafe { SliceParam::with_sync(ptr, len, sync) }
            }
        }
    };
}
cudarc_slice_mut!(CudaSlice<T>);
cudarc_slice_mut!(CudaViewMut<'_, T>);

/// Smart pointers and guards forward to what they hold, as `&x` did by deref coercion when the
/// launch methods took `&DeviceBuffer<T>` only (`&mut cell.borrow_mut()`, `&arc`, `&boxed`).
macro_rules! forward_shared {
    ($($ty:ty),* $(,)?) => {$(
        // SAFETY: forwards to the pointee's implementation, borrowed as long.
        unsafe impl<T, X: KernelSlice<T> + ?Sized> KernelSlice<T> for $ty {
            fn slice_param<'a>(&'a self, stream: &'a cudarc::driver::CudaStream) -> SliceParam<'a> {
                (**self).slice_param(stream)
            }

            fn len(&self) -> usize {
                (**self).len()
            }
        }
    )*};
}
forward_shared!(
    &X,
    &mut X,
    Box<X>,
    Arc<X>,
    std::rc::Rc<X>,
    std::cell::Ref<'_, X>,
    std::cell::RefMut<'_, X>,
    std::sync::MutexGuard<'_, X>,
    std::sync::RwLockReadGuard<'_, X>,
    std::sync::RwLockWriteGuard<'_, X>,
);

macro_rules! forward_exclusive {
    ($($ty:ty),* $(,)?) => {$(
        // SAFETY: forwards to the pointee's implementation, borrowed as long and exclusively.
        unsafe impl<T, X: KernelSliceMut<T> + ?Sized> KernelSliceMut<T> for $ty {
            fn slice_param_mut<'a>(&'a mut self, stream: &'a cudarc::driver::CudaStream) -> SliceParam<'a> {
                (**self).slice_param_mut(stream)
            }
        }
    )*};
}
forward_exclusive!(
    &mut X,
    Box<X>,
    std::cell::RefMut<'_, X>,
    std::sync::MutexGuard<'_, X>,
    std::sync::RwLockWriteGuard<'_, X>,
);
