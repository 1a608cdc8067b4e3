//! `Communicator`: one rank's NCCL communicator on one GPU, its collectives on our buffers and
//! streams, and `group` (NCCL's group calls, for one thread driving several communicators).

use std::sync::Arc;

use cuda_core::{CudaContext, CudaStream, DeviceBuffer};
use cudarc::nccl::sys::{self, ncclComm_t};

use crate::error::NcclError;
use crate::library::{check, ensure_loaded};
use crate::shape::{Collective, check_counts};
use crate::types::{NcclType, ReduceOp};

/// One rank of a set of NCCL communicators ([`Communicators`](crate::Communicators)): its GPU,
/// its rank and the number of ranks. Its collectives are queued on a stream of its GPU and
/// return at once; every rank must make the same collectives in the same order.
///
/// A communicator may move to another thread (`Send`) but not be used by two at once (not
/// `Sync`), as NCCL requires. One thread driving several communicators must issue a
/// collective of all of them inside one [`group`] (NCCL blocks a lone rank's call until its
/// peers join); [`Communicators`](crate::Communicators)' methods do that for you.
pub struct Communicator {
    raw: ncclComm_t,
    rank: usize,
    size: usize,
    ctx: Arc<CudaContext>,
}

// SAFETY: an NCCL communicator may be used from any thread, one at a time (hence no `Sync`);
// the context handle is `Send`.
unsafe impl Send for Communicator {}

impl Communicator {
    /// Wraps a communicator NCCL made for rank `rank` of `size` on `ctx`'s device.
    pub(crate) fn new(raw: ncclComm_t, rank: usize, size: usize, ctx: Arc<CudaContext>) -> Communicator {
        Communicator { raw, rank, size, ctx }
    }

    /// The NCCL handle.
    pub(crate) fn raw(&self) -> ncclComm_t {
        self.raw
    }

    /// This communicator's rank, `0..size()`.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The number of ranks.
    pub fn size(&self) -> usize {
        self.size
    }

    /// The (primary) context of this rank's GPU.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// This rank's GPU ordinal.
    pub fn device(&self) -> usize {
        self.ctx.ordinal()
    }

    /// This rank's part of an all-reduce: every rank's `recv` gets the reduction (`op`) of all
    /// ranks' `send`, element by element. All ranks pass buffers of one length.
    pub fn all_reduce<T: NcclType>(
        &self,
        stream: &CudaStream,
        send: &DeviceBuffer<T>,
        recv: &mut DeviceBuffer<T>,
        op: ReduceOp,
    ) -> Result<(), NcclError> {
        let count = self.prepare(Collective::AllReduce, stream, send, recv)?;
        // SAFETY: checked by `prepare`: both buffers are of this rank's context and hold
        // `count` elements, `recv` is not `send` (`&mut`), the stream is of this context.
        unsafe { self.all_reduce_raw(stream, send.as_device_ptr(), recv.as_device_ptr(), count, T::DATA_TYPE, op) }
    }

    /// [`all_reduce`](Self::all_reduce) with `buf` as both input and output.
    pub fn all_reduce_in_place<T: NcclType>(
        &self,
        stream: &CudaStream,
        buf: &mut DeviceBuffer<T>,
        op: ReduceOp,
    ) -> Result<(), NcclError> {
        let count = self.prepare(Collective::InPlace, stream, buf, buf)?;
        let ptr = buf.as_device_ptr();
        // SAFETY: as in `all_reduce`; NCCL reduces in place when both pointers are equal.
        unsafe { self.all_reduce_raw(stream, ptr, ptr, count, T::DATA_TYPE, op) }
    }

    /// This rank's part of an all-gather: every rank's `recv` (`size()` times as long as
    /// `send`) gets all ranks' `send`, rank 0's first.
    pub fn all_gather<T: NcclType>(
        &self,
        stream: &CudaStream,
        send: &DeviceBuffer<T>,
        recv: &mut DeviceBuffer<T>,
    ) -> Result<(), NcclError> {
        let count = self.prepare(Collective::AllGather, stream, send, recv)?;
        if count == 0 {
            return Ok(());
        }
        self.bind()?;
        // SAFETY: `send` holds `count` elements and `recv` `count * size`, both of this rank's
        // context (`prepare`); NCCL only queues the work on the stream.
        let r = unsafe {
            sys::ncclAllGather(
                send.as_device_ptr() as *const _,
                recv.as_device_ptr() as *mut _,
                count,
                T::DATA_TYPE,
                self.raw,
                stream.raw().cast(),
            )
        };
        check(r, "ncclAllGather", Some(self.raw))
    }

    /// This rank's part of a reduce-scatter: rank `r`'s `recv` gets block `r` (of `size()`
    /// blocks of `recv.len()` elements) of the reduction of all ranks' `send`.
    pub fn reduce_scatter<T: NcclType>(
        &self,
        stream: &CudaStream,
        send: &DeviceBuffer<T>,
        recv: &mut DeviceBuffer<T>,
        op: ReduceOp,
    ) -> Result<(), NcclError> {
        let count = self.prepare(Collective::ReduceScatter, stream, send, recv)?;
        if count == 0 {
            return Ok(());
        }
        self.bind()?;
        // SAFETY: `send` holds `count * size` elements and `recv` `count`, both of this rank's
        // context (`prepare`); NCCL only queues the work on the stream.
        let r = unsafe {
            sys::ncclReduceScatter(
                send.as_device_ptr() as *const _,
                recv.as_device_ptr() as *mut _,
                count,
                T::DATA_TYPE,
                op.raw(),
                self.raw,
                stream.raw().cast(),
            )
        };
        check(r, "ncclReduceScatter", Some(self.raw))
    }

    /// This rank's part of a broadcast: every rank's `buf` gets rank `root`'s.
    pub fn broadcast<T: NcclType>(
        &self,
        stream: &CudaStream,
        buf: &mut DeviceBuffer<T>,
        root: usize,
    ) -> Result<(), NcclError> {
        let count = self.prepare(Collective::Broadcast { root }, stream, buf, buf)?;
        if count == 0 {
            return Ok(());
        }
        self.bind()?;
        let ptr = buf.as_device_ptr();
        // SAFETY: `buf` holds `count` elements of this rank's context (`prepare`); NCCL
        // broadcasts in place when both pointers are equal; `root < size`.
        let r = unsafe {
            sys::ncclBroadcast(
                ptr as *const _,
                ptr as *mut _,
                count,
                T::DATA_TYPE,
                root as i32,
                self.raw,
                stream.raw().cast(),
            )
        };
        check(r, "ncclBroadcast", Some(self.raw))
    }

    /// Checks the stream's and the buffers' device and the lengths; the element count to pass.
    pub(crate) fn prepare<T>(
        &self,
        collective: Collective,
        stream: &CudaStream,
        send: &DeviceBuffer<T>,
        recv: &DeviceBuffer<T>,
    ) -> Result<usize, NcclError> {
        let name = collective.name();
        let place = |what: &str, ctx: &CudaContext| {
            if ctx.same_context(&self.ctx) {
                Ok(())
            } else {
                Err(NcclError::invalid(format!(
                    "{name}: rank {}'s communicator is on device {}, but its {what} belongs to {}; give each rank \
                     a stream and buffers of its own device (its primary context, `CudaContext::new`)",
                    self.rank,
                    self.device(),
                    describe(ctx)
                )))
            }
        };
        place("stream", stream.context())?;
        place("send buffer", send.context())?;
        place("receive buffer", recv.context())?;
        check_counts(collective, self.size, &[(send.len(), recv.len())])
    }

    /// # Safety
    /// `send` and `recv` are device addresses of `count` elements of type `ty` in this rank's
    /// context (or equal, to reduce in place), and `stream` is a stream of that context.
    unsafe fn all_reduce_raw(
        &self,
        stream: &CudaStream,
        send: u64,
        recv: u64,
        count: usize,
        ty: sys::ncclDataType_t,
        op: ReduceOp,
    ) -> Result<(), NcclError> {
        if count == 0 {
            return Ok(());
        }
        self.bind()?;
        // SAFETY: forwarded to the caller; NCCL only queues the work on the stream.
        let r = unsafe {
            sys::ncclAllReduce(send as *const _, recv as *mut _, count, ty, op.raw(), self.raw, stream.raw().cast())
        };
        check(r, "ncclAllReduce", Some(self.raw))
    }

    /// Makes this rank's context current (NCCL finds the device through the runtime).
    fn bind(&self) -> Result<(), NcclError> {
        Ok(self.ctx.bind_to_thread()?)
    }
}

/// "device 1", or "a context of device 1 of its own" for a private context.
pub(crate) fn describe(ctx: &CudaContext) -> String {
    if ctx.is_primary() {
        format!("device {}", ctx.ordinal())
    } else {
        format!("a context of device {} of its own (`CudaContext::new_private`)", ctx.ordinal())
    }
}

impl Drop for Communicator {
    fn drop(&mut self) {
        // SAFETY: made by `ncclCommInitAll` and destroyed once; NCCL finishes the operations
        // still queued first. Errors cannot be reported from Drop.
        let _ = unsafe { sys::ncclCommDestroy(self.raw) };
    }
}

impl std::fmt::Debug for Communicator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Communicator")
            .field("rank", &self.rank)
            .field("size", &self.size)
            .field("device", &self.device())
            .finish()
    }
}

/// Runs `f` between `ncclGroupStart` and `ncclGroupEnd`: the collectives it issues on several
/// communicators are launched together when the group ends, so one thread may drive all ranks.
/// `f` must issue the same collective on every rank, or none: a rank left out waits forever.
/// (Validate first, so that `f` cannot stop half-way; [`Communicators`](crate::Communicators)
/// checks every rank's arguments before its group starts.)
///
/// ```no_run
/// use cuda_core::DeviceBuffer;
/// use cuda_nccl::{Communicators, ReduceOp, group};
/// let comms = Communicators::for_devices(0..2)?;
/// let streams: Vec<_> = comms.iter().map(|c| c.context().new_stream()).collect::<Result<_, _>>()?;
/// let mut grads: Vec<DeviceBuffer<f32>> =
///     streams.iter().map(|s| DeviceBuffer::zeroed(s, 1024)).collect::<Result<_, _>>()?;
/// group(|| {
///     for ((comm, stream), buf) in comms.iter().zip(&streams).zip(&mut grads) {
///         comm.all_reduce_in_place(stream, buf, ReduceOp::Sum)?;
///     }
///     Ok(())
/// })?;
/// # Ok::<(), cuda_nccl::NcclError>(())
/// ```
pub fn group<R>(f: impl FnOnce() -> Result<R, NcclError>) -> Result<R, NcclError> {
    ensure_loaded()?;
    // SAFETY: the library is loaded; group calls nest and keep per-thread state only.
    check(unsafe { sys::ncclGroupStart() }, "ncclGroupStart", None)?;
    let out = f();
    // SAFETY: ends the group started above, also when `f` failed.
    let end = check(unsafe { sys::ncclGroupEnd() }, "ncclGroupEnd", None);
    let out = out?;
    end?;
    Ok(out)
}
