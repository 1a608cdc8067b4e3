//! Memory of another context: peer access (a kernel reading another GPU's memory over NVLink or
//! PCIe, where `cuDeviceCanAccessPeer` allows it) and copies between buffers of two contexts —
//! the driver's peer copy where the devices reach each other (or share one GPU), else staged
//! through pinned host memory.
//!
//! ```no_run
//! use cuda_core::{CudaContext, DeviceBuffer, PeerPath};
//! let (gpu0, gpu1) = (CudaContext::new(0)?, CudaContext::new(1)?);
//! let src = DeviceBuffer::from_host(&gpu0.default_stream(), &[1.0f32; 1 << 20])?;
//! let stream = gpu1.new_stream()?;
//! let mut dst = DeviceBuffer::<f32>::zeroed(&stream, 1 << 20)?;
//! gpu0.default_stream().synchronize()?; // the copy is ordered on `stream` only
//! match dst.copy_peer_async(&stream, &src)? {
//!     PeerPath::Peer => println!("direct: NVLink or PCIe peer-to-peer"),
//!     PeerPath::Staged => println!("no peer-to-peer between these GPUs: staged through host memory"),
//!     PeerPath::SameContext => unreachable!("two devices"),
//! }
//! stream.synchronize()?;
//! # Ok::<(), cuda_core::DriverError>(())
//! ```

use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::sys::{self, CUresult};

use super::{DeviceBuffer, DeviceCopy, PinnedBuffer, byte_len};
use crate::context::{CudaContext, CudaStream};
use crate::driver::check;
use crate::error::DriverError;
use crate::event::CudaEvent;

/// How [`DeviceBuffer::copy_peer_async`] moved the data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PeerPath {
    /// Both buffers belong to one context: a plain device-to-device copy.
    SameContext,
    /// `cuMemcpyPeerAsync`: between two contexts of one GPU, or between GPUs that
    /// `cuDeviceCanAccessPeer` says reach each other (NVLink or PCIe peer-to-peer; peer access
    /// from the destination to the source is enabled first).
    Peer,
    /// Through pinned host memory, in chunks: the source's GPU copies a chunk down while the
    /// destination's copies the previous one up. For GPUs without peer-to-peer.
    Staged,
}

/// Bytes per chunk of a staged copy. Two chunks are in flight (one going down, one going up),
/// and each is one DMA transfer, so chunks of a few MiB reach the bus speed while the pinned
/// memory a pair of devices keeps stays small (2 × 8 MiB).
pub const STAGING_CHUNK_BYTES: usize = 8 << 20;

impl CudaContext {
    /// Whether kernels of this context can read and write `peer`'s memory once
    /// [`enable_peer_access`](Self::enable_peer_access) has run: `cuDeviceCanAccessPeer` for two
    /// GPUs (NVLink, or PCIe peer-to-peer under one switch), `true` for one context, `false`
    /// for two contexts of one GPU (they cannot map each other's memory; copy between them).
    pub fn can_access_peer(&self, peer: &CudaContext) -> Result<bool, DriverError> {
        if self.same_context(peer) {
            return Ok(true);
        }
        if self.cu_device() == peer.cu_device() {
            return Ok(false);
        }
        let mut can = 0;
        // SAFETY: both devices are valid (their contexts exist); writes one int.
        check(
            unsafe { sys::cuDeviceCanAccessPeer(&mut can, self.cu_device(), peer.cu_device()) },
            "cuDeviceCanAccessPeer",
        )?;
        Ok(can != 0)
    }

    /// Lets kernels of this context read and write `peer`'s memory (one direction: call it on
    /// both for both). Doing it again is harmless. Kernels launched here may then take buffers of
    /// `peer` as arguments; without it such a launch is refused.
    ///
    /// Errors: [`DriverError::Placement`] when [`can_access_peer`](Self::can_access_peer) is
    /// false (copy the data over with [`DeviceBuffer::copy_peer_async`] instead).
    ///
    /// ```no_run
    /// use cuda_core::CudaContext;
    /// let (gpu0, gpu1) = (CudaContext::new(0)?, CudaContext::new(1)?);
    /// if gpu0.can_access_peer(&gpu1)? {
    ///     gpu0.enable_peer_access(&gpu1)?; // kernels on GPU 0 may now take GPU 1's buffers
    /// }
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    pub fn enable_peer_access(&self, peer: &Arc<CudaContext>) -> Result<(), DriverError> {
        if self.has_peer_access(peer) {
            return Ok(());
        }
        if !self.can_access_peer(peer)? {
            let why = if self.cu_device() == peer.cu_device() {
                "two contexts of one GPU cannot map each other's memory".to_string()
            } else {
                format!(
                    "cuDeviceCanAccessPeer says device {} cannot reach device {}'s memory (no NVLink or PCIe \
                     peer-to-peer between them)",
                    self.ordinal(),
                    peer.ordinal()
                )
            };
            return Err(DriverError::Placement {
                message: format!(
                    "enable_peer_access: {why}; copy the data with DeviceBuffer::copy_peer_async, which stages \
                     it through host memory when it must"
                ),
            });
        }
        self.bind_to_thread()?;
        // SAFETY: this context is current and `peer` is a live context of another device.
        match unsafe { sys::cuCtxEnablePeerAccess(peer.cu_ctx(), 0) } {
            CUresult::CUDA_SUCCESS | CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED => {}
            other => return Err(DriverError::from_cuda(other, "cuCtxEnablePeerAccess")),
        }
        let mut peers = self.peer_access.lock().unwrap_or_else(|p| p.into_inner());
        peers.retain(|w| w.strong_count() > 0);
        peers.push(Arc::downgrade(peer));
        Ok(())
    }

    /// Whether kernels of this context may take buffers of `peer`: the same context, or one
    /// [`enable_peer_access`](Self::enable_peer_access) opened to.
    pub fn has_peer_access(&self, peer: &CudaContext) -> bool {
        self.same_context(peer)
            || self
                .peer_access
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .iter()
                .any(|w| w.upgrade().is_some_and(|p| p.same_context(peer)))
    }
}

/// How [`DeviceBuffer::copy_peer_async`] copies from a buffer of `src` into one of `dst`.
///
/// ```no_run
/// use cuda_core::{CudaContext, PeerPath, peer_path};
/// let (ctx, private) = (CudaContext::new(0)?, CudaContext::new_private(0)?);
/// assert_eq!(peer_path(&ctx, &ctx)?, PeerPath::SameContext);
/// assert_eq!(peer_path(&ctx, &private)?, PeerPath::Peer); // two contexts of one GPU
/// # Ok::<(), cuda_core::DriverError>(())
/// ```
pub fn peer_path(src: &CudaContext, dst: &CudaContext) -> Result<PeerPath, DriverError> {
    if src.same_context(dst) {
        Ok(PeerPath::SameContext)
    } else if src.cu_device() == dst.cu_device() || dst.can_access_peer(src)? {
        Ok(PeerPath::Peer)
    } else {
        Ok(PeerPath::Staged)
    }
}

impl<T: DeviceCopy> DeviceBuffer<T> {
    /// Copies `src` (same length, a buffer of any context) into this buffer, queued on `stream`,
    /// which must belong to this buffer's context or to `src`'s: the copy starts after the work
    /// queued there before it, and work queued there after it sees the data. Work on other
    /// streams is not waited for: order it with an event first (e.g. the source's producer).
    /// Returns how the data travels ([`peer_path`]):
    ///
    /// - one context: a device-to-device copy;
    /// - two contexts of one GPU, or GPUs with peer-to-peer: `cuMemcpyPeerAsync` (peer access from
    ///   this buffer's context to `src`'s is enabled first);
    /// - GPUs without: [`copy_peer_staged_async`](Self::copy_peer_staged_async).
    pub fn copy_peer_async(&mut self, stream: &CudaStream, src: &DeviceBuffer<T>) -> Result<PeerPath, DriverError> {
        self.check_len("copy_peer_async", src.len())?;
        check_stream("copy_peer_async", stream, src.context(), self.context())?;
        let path = peer_path(src.context(), self.context())?;
        let bytes = byte_len::<T>(src.len())?;
        match path {
            PeerPath::SameContext => self.copy_from(stream, src)?,
            PeerPath::Staged => self.copy_peer_staged_async(stream, src)?,
            PeerPath::Peer => {
                if self.context().cu_device() != src.context().cu_device() {
                    self.context().enable_peer_access(src.context())?;
                }
                if bytes > 0 {
                    stream.context().bind_to_thread()?;
                    let capture = crate::graph::before(stream.raw(), false, &|| "copy_peer_async".into())?;
                    // SAFETY: both allocations hold `bytes` bytes, belong to the contexts named,
                    // and cannot overlap (`&mut self`); the stream is live.
                    check(
                        unsafe {
                            sys::cuMemcpyPeerAsync(
                                self.ptr,
                                self.context().cu_ctx(),
                                src.ptr,
                                src.context().cu_ctx(),
                                bytes,
                                stream.raw(),
                            )
                        },
                        "cuMemcpyPeerAsync",
                    )
                    .map_err(|e| {
                        e.context(format!(
                            "copying {bytes} bytes from device {} to device {}",
                            src.context().ordinal(),
                            self.context().ordinal()
                        ))
                    })?;
                    if let Some(capture) = capture {
                        let keep = [self.allocation(), src.allocation()];
                        crate::graph::after(stream.raw(), capture, crate::graph::NodeKind::Memcpy, &keep);
                    }
                }
            }
        }
        Ok(path)
    }

    /// [`copy_peer_async`](Self::copy_peer_async) staged through pinned host memory whatever
    /// the devices allow: the way between GPUs without peer-to-peer, and a way to check it on
    /// one GPU (two contexts of it). The source's GPU copies chunks of
    /// [`STAGING_CHUNK_BYTES`] down into one of two pinned buffers while the destination's copies
    /// the previous chunk up; a chunk's upload waits for its download and a download into a
    /// buffer for the upload from it (`PinnedBuffer`'s own ordering), so the two pipeline.
    /// The pinned buffers are kept per pair of devices and reused.
    ///
    /// `stream` must belong to this buffer's context or to `src`'s; the other side's copies run
    /// on a stream made for the call, ordered after `stream`'s work so far and before its work
    /// to come.
    pub fn copy_peer_staged_async(&mut self, stream: &CudaStream, src: &DeviceBuffer<T>) -> Result<(), DriverError> {
        self.check_len("copy_peer_staged_async", src.len())?;
        let near_dst = check_stream("copy_peer_staged_async", stream, src.context(), self.context())?;
        let bytes = byte_len::<T>(src.len())?;
        if bytes == 0 {
            return Ok(());
        }
        // Through pinned host memory, in chunks on two streams: not a graph's work.
        crate::graph::refuse(stream.raw(), "copy_peer_staged_async (a copy through pinned host memory)")?;
        let far = if near_dst { src.context() } else { self.context() }.new_stream()?;
        let (down, up): (&CudaStream, &CudaStream) = if near_dst { (&far, stream) } else { (stream, &far) };
        // The far stream starts after the work queued on `stream` so far.
        let start = CudaEvent::new_without_timing(stream.context())?;
        start.record(stream)?;
        far.wait_event(&start)?;
        let slots = staging(src.context().ordinal(), self.context().ordinal())?;
        let mut slots = slots.lock().unwrap_or_else(|p| p.into_inner());
        let chunk = slots[0].len();
        for (index, offset) in (0..bytes).step_by(chunk).enumerate() {
            let len = chunk.min(bytes - offset);
            let slot = &mut slots[index % 2];
            let host = slot.gpu_write(down)?;
            src.context().bind_to_thread()?;
            // SAFETY: `offset + len <= bytes`, the source's size; the slot holds `chunk >= len`
            // bytes and no copy uses it any more (`gpu_write` ordered `down` after them), and
            // `gpu_done` makes every later use of it wait for this one.
            check(
                unsafe { sys::cuMemcpyDtoHAsync_v2(host.cast(), src.ptr + offset as u64, len, down.raw()) },
                "cuMemcpyDtoHAsync",
            )?;
            slot.gpu_done(down, true)?;
            let host = slot.gpu_read(up)?;
            self.context().bind_to_thread()?;
            // SAFETY: as above; `gpu_read` ordered `up` after the download into the slot.
            check(
                unsafe { sys::cuMemcpyHtoDAsync_v2(self.ptr + offset as u64, host.cast(), len, up.raw()) },
                "cuMemcpyHtoDAsync",
            )?;
            slot.gpu_done(up, false)?;
        }
        if !near_dst {
            // The uploads ran on the far stream: the copy completes with `stream`'s work.
            let end = CudaEvent::new_without_timing(far.context())?;
            end.record(&far)?;
            stream.wait_event(&end)?;
        }
        Ok(())
    }
}

/// Checks that `stream` belongs to the source's or the destination's context; `true` for the
/// destination's.
fn check_stream(
    operation: &str,
    stream: &CudaStream,
    src: &CudaContext,
    dst: &CudaContext,
) -> Result<bool, DriverError> {
    let ctx = stream.context();
    if ctx.same_context(dst) {
        Ok(true)
    } else if ctx.same_context(src) {
        Ok(false)
    } else {
        Err(DriverError::Placement {
            message: format!(
                "{operation}: the stream belongs to a context of device {}, neither the source's (device {}) nor \
                 the destination's (device {}); queue the copy on a stream of one of them",
                ctx.ordinal(),
                src.ordinal(),
                dst.ordinal()
            ),
        })
    }
}

/// A pair of devices' staging buffers.
type StagingSlots = Arc<Mutex<[PinnedBuffer<u8>; 2]>>;

/// Every pair's staging buffers, by (source, destination) ordinal.
type StagingPool = Mutex<Vec<((usize, usize), StagingSlots)>>;

/// The two pinned buffers of [`STAGING_CHUNK_BYTES`] that staged copies from device `src` to
/// device `dst` take turns with, made on first use and kept for the process (in the primary
/// context of `dst`, which pinned memory outlives no use of: it is pinned for every context).
fn staging(src: usize, dst: usize) -> Result<StagingSlots, DriverError> {
    static POOL: OnceLock<StagingPool> = OnceLock::new();
    let mut pool = POOL.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, slots)) = pool.iter().find(|(key, _)| *key == (src, dst)) {
        return Ok(Arc::clone(slots));
    }
    let owner = CudaContext::new(dst)?;
    let slot = || PinnedBuffer::filled(&owner, STAGING_CHUNK_BYTES, 0u8);
    let slots = Arc::new(Mutex::new([slot()?, slot()?]));
    pool.push(((src, dst), Arc::clone(&slots)));
    Ok(slots)
}
