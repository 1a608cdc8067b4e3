//! `CudaContext` (a device's primary context, or one of its own) and `CudaStream`: safe handles
//! over cudarc's own, so a program that also uses cudarc shares one context and its streams
//! (events: `event.rs`; access to other contexts' memory: `peer.rs`; cudarc's slices:
//! `launch_args.rs`, `memory/interop.rs`).

use std::ffi::{CStr, c_char};
use std::sync::{Arc, Mutex, Weak};

use cudarc::driver::sys::{self, CUdevice_attribute as Attr};

use crate::bundle::LoadedBundle;
use crate::driver::{check, init};
use crate::error::DriverError;
use crate::event::CudaEvent;
use crate::resources::StackLimit;

/// One GPU, through its primary context ([`CudaContext::new`]) or a context of its own
/// ([`CudaContext::new_private`]); shared as `Arc`.
///
/// Every operation of this crate makes the context current on the calling thread first, so a
/// context (and everything made from it) may be used from any thread.
///
/// It is a layer over cudarc's [`cudarc::driver::CudaContext`], which owns the driver context:
/// [`cudarc`](Self::cudarc) gives it to code that uses cudarc, and
/// [`from_cudarc`](Self::from_cudarc) makes one of ours from cudarc's.
pub struct CudaContext {
    /// The driver context's owner: it retains the primary context and releases it on drop (or
    /// destroys a context of its own).
    cudarc: Arc<cudarc::driver::CudaContext>,
    ordinal: usize,
    device: sys::CUdevice,
    raw: sys::CUcontext,
    /// The device's primary context, else one of its own (`cudarc` releases or destroys it).
    primary: bool,
    /// The contexts whose memory kernels of this one may access (`peer.rs`). Weak: access ends
    /// with the peer, and a strong reference would keep two peers alive forever.
    pub(crate) peer_access: Mutex<Vec<Weak<CudaContext>>>,
    name: String,
    compute_capability: (u32, u32),
    sm_count: u32,
    total_memory: usize,
    max_shared_memory_per_block_optin: u32,
    /// The bundles linked into this binary that are loaded on this context, by their index in the
    /// registry (`crate::registry`). Weak: a loaded module holds its context, so a strong
    /// reference here would keep both alive forever; a bundle is loaded again after the last of
    /// its users is gone.
    embedded: Mutex<Vec<Weak<LoadedBundle>>>,
    /// The per-thread stack size (`crate::resources`).
    stack_limit: StackLimit,
}

/// Our context of each cudarc context, so that wrapping cudarc's objects again and again (a
/// candle op per call) finds the same one, with its loaded modules.
type Known = Vec<(Weak<cudarc::driver::CudaContext>, Weak<CudaContext>)>;
static KNOWN: Mutex<Known> = Mutex::new(Vec::new());

// SAFETY: a CUcontext may be used from any thread (we bind it before each use), and the
// other fields are plain data.
unsafe impl Send for CudaContext {}
unsafe impl Sync for CudaContext {}

impl CudaContext {
    /// Opens device `ordinal` (0 is the first GPU) through its primary context: the one the CUDA
    /// runtime, NCCL and other libraries of the process share, so calling it twice gives two
    /// handles of one context.
    ///
    /// Errors: [`DriverError::NoDriver`] when no NVIDIA driver can be loaded,
    /// [`DriverError::NoDevice`] when there is no such device (it says how many there are).
    pub fn new(ordinal: usize) -> Result<Arc<CudaContext>, DriverError> {
        CudaContext::open(ordinal, true)
    }

    /// A context of its own on device `ordinal`, apart from the device's primary context: its
    /// own memory, modules and streams, destroyed when the last handle goes. Memory of one
    /// context is not memory of another, even on one GPU: copy between them with
    /// [`DeviceBuffer::copy_peer_async`](crate::DeviceBuffer::copy_peer_async). Mostly for
    /// isolating libraries, and for testing code written for several GPUs on one (two contexts
    /// of one device stand for two devices). NCCL and the async runtime use primary contexts.
    ///
    /// ```no_run
    /// use cuda_core::{CudaContext, DeviceBuffer};
    /// let a = CudaContext::new(0)?;
    /// let b = CudaContext::new_private(0)?;
    /// assert!(a.is_primary() && !b.is_primary());
    /// let src = DeviceBuffer::from_host(&a.default_stream(), &[1u32, 2, 3])?;
    /// let mut dst = DeviceBuffer::<u32>::zeroed(&b.default_stream(), 3)?;
    /// dst.copy_peer_async(&b.default_stream(), &src)?;
    /// assert_eq!(dst.to_host_vec(&b.default_stream())?, [1, 2, 3]);
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    pub fn new_private(ordinal: usize) -> Result<Arc<CudaContext>, DriverError> {
        CudaContext::open(ordinal, false)
    }

    fn open(ordinal: usize, primary: bool) -> Result<Arc<CudaContext>, DriverError> {
        match init() {
            Err(DriverError::Cuda { name, .. }) if name == "CUDA_ERROR_NO_DEVICE" => {
                return Err(DriverError::NoDevice { ordinal, count: 0 });
            }
            other => other?,
        }
        let count = CudaContext::device_count()?;
        if ordinal >= count {
            return Err(DriverError::NoDevice { ordinal, count });
        }
        let cudarc = if primary {
            // cudarc retains the device's primary context (and releases it when the last user is gone).
            cudarc::driver::CudaContext::new(ordinal)
                .map_err(|e| DriverError::from(e).context(format!("opening device {ordinal}")))?
        } else {
            let mut device = 0;
            // SAFETY: the driver is initialised and `ordinal < count`.
            check(unsafe { sys::cuDeviceGet(&mut device, ordinal as i32) }, "cuDeviceGet")?;
            own_context(ordinal, device)?
        };
        CudaContext::with_cudarc(cudarc)
    }

    /// Ours for a context cudarc opened (`cudarc::driver::CudaContext::new`, or one wrapping a
    /// context of another library): the same driver context, so memory, streams and modules are
    /// shared between the two. While ours lives, asking again gives the same one (with the
    /// modules it loaded), so calling this per operation is cheap.
    ///
    /// ```no_run
    /// let theirs = cuda_core::cudarc::driver::CudaContext::new(0).unwrap();
    /// let ours = cuda_core::CudaContext::from_cudarc(&theirs)?;
    /// assert_eq!(ours.cu_ctx(), theirs.cu_ctx());
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    pub fn from_cudarc(ctx: &Arc<cudarc::driver::CudaContext>) -> Result<Arc<CudaContext>, DriverError> {
        init()?;
        let mut known = KNOWN.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        known.retain(|(_, ours)| ours.strong_count() > 0);
        let found = known.iter().find(|(theirs, _)| std::ptr::eq(theirs.as_ptr(), Arc::as_ptr(ctx)));
        if let Some(ours) = found.and_then(|(_, ours)| ours.upgrade()) {
            return Ok(ours);
        }
        drop(known);
        CudaContext::with_cudarc(Arc::clone(ctx))
    }

    /// cudarc's context under this one, for calling cudarc (or a library built on it) with it.
    ///
    /// ```no_run
    /// let ctx = cuda_core::CudaContext::new(0)?;
    /// let stream = ctx.cudarc().default_stream();
    /// let zeros = stream.alloc_zeros::<f32>(1024).unwrap(); // a cudarc CudaSlice on our device
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    pub fn cudarc(&self) -> &Arc<cudarc::driver::CudaContext> {
        &self.cudarc
    }

    fn with_cudarc(cudarc: Arc<cudarc::driver::CudaContext>) -> Result<Arc<CudaContext>, DriverError> {
        let (ordinal, device, raw) = (cudarc.ordinal(), cudarc.cu_device(), cudarc.cu_ctx());
        let mut ctx = CudaContext {
            primary: cudarc.is_primary(),
            cudarc,
            ordinal,
            device,
            raw,
            peer_access: Mutex::new(Vec::new()),
            name: String::new(),
            compute_capability: (0, 0),
            sm_count: 0,
            total_memory: 0,
            max_shared_memory_per_block_optin: 0,
            embedded: Mutex::new(Vec::new()),
            stack_limit: StackLimit::default(),
        };
        ctx.bind_to_thread()?;
        ctx.name = device_name(device)?;
        let attr = |a| device_attribute(device, a);
        ctx.compute_capability = (
            attr(Attr::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
            attr(Attr::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
        );
        ctx.sm_count = attr(Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?;
        ctx.max_shared_memory_per_block_optin = attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?;
        let mut bytes = 0usize;
        // SAFETY: `device` is valid.
        check(unsafe { sys::cuDeviceTotalMem_v2(&mut bytes, device) }, "cuDeviceTotalMem")?;
        ctx.total_memory = bytes;
        let ctx = Arc::new(ctx);
        let mut known = KNOWN.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        known.push((Arc::downgrade(&ctx.cudarc), Arc::downgrade(&ctx)));
        Ok(ctx)
    }

    /// Number of CUDA devices the driver sees (0 when it sees none).
    pub fn device_count() -> Result<usize, DriverError> {
        match init() {
            Err(DriverError::Cuda { name, .. }) if name == "CUDA_ERROR_NO_DEVICE" => return Ok(0),
            other => other?,
        }
        let mut count = 0;
        // SAFETY: the driver is initialised.
        check(unsafe { sys::cuDeviceGetCount(&mut count) }, "cuDeviceGetCount")?;
        Ok(count.max(0) as usize)
    }

    /// The device ordinal this context was opened with.
    pub fn ordinal(&self) -> usize {
        self.ordinal
    }

    /// `true` for the device's primary context ([`new`](Self::new)), `false` for one of its own
    /// ([`new_private`](Self::new_private)).
    pub fn is_primary(&self) -> bool {
        self.primary
    }

    /// `true` when `self` and `other` are handles of one driver context (two
    /// [`new`](Self::new)s of one device are; [`new_private`](Self::new_private) never is).
    pub fn same_context(&self, other: &CudaContext) -> bool {
        self.raw == other.raw
    }

    /// The device's name, e.g. `NVIDIA H200`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The device's name as a `Result`, e.g. `Ok("NVIDIA H200")` (NVIDIA's spelling of [`name`](Self::name)).
    ///
    /// ```no_run
    /// let ctx = cuda_core::CudaContext::new(0)?;
    /// println!("running on {}", ctx.device_name()?);
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    pub fn device_name(&self) -> Result<String, DriverError> {
        Ok(self.name.clone())
    }

    /// The compute capability `(major, minor)`, e.g. `(9, 0)` for an sm_90 GPU.
    ///
    /// A `Result` of signed integers, as in NVIDIA's cuda-oxide, so `?`, `.expect(..)` and
    /// `.unwrap_or((0, 0))` work; the value is read once when the context is made, so this never
    /// fails. [`capability`](Self::capability) gives the same numbers without the `Result`: it is
    /// what `compute_capability()` returned before it took NVIDIA's signature (CHANGELOG.md).
    ///
    /// ```no_run
    /// let ctx = cuda_core::CudaContext::new(0)?;
    /// let (major, minor) = ctx.compute_capability()?;
    /// if major < 9 {
    ///     println!("skipping: clusters need sm_90, this GPU is sm_{major}{minor}");
    /// }
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    pub fn compute_capability(&self) -> Result<(i32, i32), DriverError> {
        let (major, minor) = self.compute_capability;
        Ok((major as i32, minor as i32))
    }

    /// The compute capability `(major, minor)`, e.g. `(9, 0)` for an sm_90 GPU.
    ///
    /// ```no_run
    /// let ctx = cuda_core::CudaContext::new(0)?;
    /// let (major, minor) = ctx.capability();
    /// println!("sm_{major}{minor}");
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    pub fn capability(&self) -> (u32, u32) {
        self.compute_capability
    }

    /// Whether the device can launch thread block clusters (sm_90 and newer).
    ///
    /// ```no_run
    /// let ctx = cuda_core::CudaContext::new(0)?;
    /// if !ctx.supports_cluster_launch()? {
    ///     println!("skipping: no cluster launch on this GPU");
    /// }
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    pub fn supports_cluster_launch(&self) -> Result<bool, DriverError> {
        Ok(device_attribute(self.device, Attr::CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH)? != 0)
    }

    /// The raw `CUdevice`, for calling the driver directly (e.g. [`crate::vmm`]).
    ///
    /// ```no_run
    /// let ctx = cuda_core::CudaContext::new(0)?;
    /// let granularity = cuda_core::vmm::allocation_granularity(ctx.cu_device())?;
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    pub fn cu_device(&self) -> sys::CUdevice {
        self.device
    }

    /// The raw `CUcontext` (the device's primary context), for calling the driver directly.
    ///
    /// ```no_run
    /// let ctx = cuda_core::CudaContext::new(0)?;
    /// assert!(!ctx.cu_ctx().is_null());
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    pub fn cu_ctx(&self) -> sys::CUcontext {
        self.raw
    }

    /// Number of streaming multiprocessors.
    pub fn sm_count(&self) -> u32 {
        self.sm_count
    }

    /// Total device memory in bytes.
    pub fn total_memory(&self) -> usize {
        self.total_memory
    }

    /// Largest dynamic shared memory a block may opt into, in bytes.
    pub fn max_shared_memory_per_block_optin(&self) -> u32 {
        self.max_shared_memory_per_block_optin
    }

    /// Bundle `index` of this binary's device code (`crate::registry`), loaded on this context by
    /// `load` the first time it is asked for.
    pub(crate) fn embedded_bundle(
        &self,
        index: usize,
        load: impl FnOnce() -> Result<LoadedBundle, DriverError>,
    ) -> Result<Arc<LoadedBundle>, DriverError> {
        let mut loaded = self.embedded.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if loaded.len() <= index {
            loaded.resize(index + 1, Weak::new());
        }
        if let Some(bundle) = loaded[index].upgrade() {
            return Ok(bundle);
        }
        let bundle = Arc::new(load()?);
        loaded[index] = Arc::downgrade(&bundle);
        Ok(bundle)
    }

    pub(crate) fn stack_limit(&self) -> &StackLimit {
        &self.stack_limit
    }

    /// Makes this context current on the calling thread (cheap when it already is).
    pub fn bind_to_thread(&self) -> Result<(), DriverError> {
        let mut current = std::ptr::null_mut();
        // SAFETY: the driver is initialised (a context exists).
        check(unsafe { sys::cuCtxGetCurrent(&mut current) }, "cuCtxGetCurrent")?;
        if current != self.raw {
            // SAFETY: `self.raw` is a retained primary context.
            check(unsafe { sys::cuCtxSetCurrent(self.raw) }, "cuCtxSetCurrent")?;
        }
        Ok(())
    }

    /// The device's default (legacy NULL) stream.
    pub fn default_stream(self: &Arc<Self>) -> Arc<CudaStream> {
        Arc::new(CudaStream { ctx: Arc::clone(self), cudarc: self.cudarc.default_stream() })
    }

    /// Ours for a stream of cudarc on this context (candle's, say): the same driver stream,
    /// kept alive by the `Arc` it holds. Errors when the stream belongs to another context.
    ///
    /// ```no_run
    /// let ctx = cuda_core::CudaContext::new(0)?;
    /// let theirs = ctx.cudarc().new_stream().unwrap();
    /// let ours = ctx.wrap_cudarc_stream(theirs.clone())?;
    /// assert_eq!(ours.raw(), theirs.cu_stream());
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    pub fn wrap_cudarc_stream(
        self: &Arc<Self>,
        stream: Arc<cudarc::driver::CudaStream>,
    ) -> Result<Arc<CudaStream>, DriverError> {
        if stream.context().cu_ctx() != self.raw {
            return Err(DriverError::Interop {
                message: format!(
                    "the cudarc stream belongs to another CUDA context (device {}) than this one (device {}); \
                     wrap it with CudaStream::from_cudarc, or use a context made from the stream's \
                     (CudaContext::from_cudarc(stream.context()))",
                    stream.context().ordinal(),
                    self.ordinal
                ),
            });
        }
        Ok(Arc::new(CudaStream { ctx: Arc::clone(self), cudarc: stream }))
    }

    /// Ours for a stream another library owns (PyTorch's current stream, a C++ library's),
    /// by its raw handle. Dropping the result does not destroy the stream.
    ///
    /// ```no_run
    /// let ctx = cuda_core::CudaContext::new(0)?;
    /// let raw: cuda_core::sys::CUstream = std::ptr::null_mut(); // e.g. torch.cuda.current_stream().cuda_stream
    /// // SAFETY: the legacy default stream is valid for as long as the context.
    /// let stream = unsafe { ctx.wrap_borrowed_stream(raw) };
    /// stream.synchronize()?;
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    ///
    /// # Safety
    /// `raw` must be a stream of this context (or the legacy default stream, null, or the
    /// per-thread default stream, `0x2`), and its owner must keep it alive for as long as the
    /// result, or anything holding the result, is used.
    pub unsafe fn wrap_borrowed_stream(self: &Arc<Self>, raw: sys::CUstream) -> Arc<CudaStream> {
        // SAFETY: forwarded to the caller.
        let cudarc = unsafe { self.cudarc.wrap_borrowed_stream(raw) };
        Arc::new(CudaStream { ctx: Arc::clone(self), cudarc })
    }

    /// A new stream that does not synchronise with the default stream.
    ///
    /// It is made by cudarc (which destroys it once neither side uses it), so
    /// [`CudaStream::cudarc`] hands it to cudarc without a second handle.
    pub fn new_stream(self: &Arc<Self>) -> Result<Arc<CudaStream>, DriverError> {
        let cudarc = self.cudarc.new_stream().map_err(|e| DriverError::from(e).context("creating a stream"))?;
        Ok(Arc::new(CudaStream { ctx: Arc::clone(self), cudarc }))
    }

    /// Blocks until all work on the device has finished; reports errors of earlier launches.
    pub fn synchronize(&self) -> Result<(), DriverError> {
        self.bind_to_thread()?;
        // SAFETY: the context is current.
        check(unsafe { sys::cuCtxSynchronize() }, "cuCtxSynchronize")
    }

    /// A new event with `flags` (`None`: without timing), not yet recorded. See
    /// [`CudaStream::record_event`] to make and record one at once.
    ///
    /// ```no_run
    /// let ctx = cuda_core::CudaContext::new(0)?;
    /// let event = ctx.new_event(None)?;
    /// event.record(&ctx.default_stream())?;
    /// event.synchronize()?;
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    pub fn new_event(self: &Arc<Self>, flags: Option<sys::CUevent_flags>) -> Result<CudaEvent, DriverError> {
        CudaEvent::with_flags(self, flags.unwrap_or(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING))
    }
}

/// A context of its own on `device`, owned by cudarc (destroyed when the last user is gone),
/// leaving the calling thread's current context as it was.
fn own_context(ordinal: usize, device: sys::CUdevice) -> Result<Arc<cudarc::driver::CudaContext>, DriverError> {
    let raw = create_context(device)?;
    let mut previous = std::ptr::null_mut();
    // SAFETY: the driver is initialised.
    check(unsafe { sys::cuCtxGetCurrent(&mut previous) }, "cuCtxGetCurrent")?;
    // SAFETY: `raw` is a fresh context of `device`, handed over whole: cudarc destroys it.
    let wrapped = unsafe { cudarc::driver::CudaContext::from_raw_context(ordinal, device, raw) };
    // cudarc made it current; restore the caller's.
    // SAFETY: `previous` was current on this thread a moment ago (or null: none).
    let restored = check(unsafe { sys::cuCtxSetCurrent(previous) }, "cuCtxSetCurrent");
    match wrapped {
        Ok(ctx) => restored.map(|()| ctx),
        Err(e) => {
            // SAFETY: cudarc did not take the context; nothing else knows it.
            let _ = unsafe { sys::cuCtxDestroy_v2(raw) };
            Err(DriverError::from(e).context("creating a context of its own"))
        }
    }
}

/// A new context on `device`, leaving the calling thread's current context as it was:
/// `cuCtxCreate` pushes the new one, so it is popped again.
fn create_context(device: sys::CUdevice) -> Result<sys::CUcontext, DriverError> {
    let mut raw = std::ptr::null_mut();
    // cudarc panics on a symbol the driver lacks, and binds only `_v4` for CUDA 13 (drivers of
    // CUDA 12.5 and newer export it).
    if !crate::driver::has_symbol("cuCtxCreate_v4") {
        return Err(DriverError::from_cuda(sys::CUresult::CUDA_ERROR_NOT_SUPPORTED, "cuCtxCreate_v4")
            .context("creating a context of its own needs a driver for CUDA 12.5 or newer; update the NVIDIA driver"));
    }
    // SAFETY: `device` is valid; null creation parameters ask for a plain context.
    let result = unsafe { sys::cuCtxCreate_v4(&mut raw, std::ptr::null_mut(), 0, device) };
    check(result, "cuCtxCreate").map_err(|e| {
        e.context(
            "creating a context of its own (`CudaContext::new_private`); a GPU in exclusive-process \
             compute mode allows only one",
        )
    })?;
    let mut popped = std::ptr::null_mut();
    // SAFETY: the context just created is the top of this thread's stack.
    let _ = unsafe { sys::cuCtxPopCurrent_v2(&mut popped) };
    Ok(raw)
}

impl std::fmt::Debug for CudaContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaContext")
            .field("ordinal", &self.ordinal)
            .field("name", &self.name)
            .field("compute_capability", &self.compute_capability)
            .field("sm_count", &self.sm_count)
            .field("total_memory", &self.total_memory)
            .finish()
    }
}

fn device_name(device: sys::CUdevice) -> Result<String, DriverError> {
    let mut buf = [0 as c_char; 256];
    // SAFETY: the buffer is as long as we say; the driver NUL-terminates.
    check(unsafe { sys::cuDeviceGetName(buf.as_mut_ptr(), buf.len() as i32, device) }, "cuDeviceGetName")?;
    // SAFETY: NUL-terminated by the driver (and the buffer was zeroed).
    Ok(unsafe { CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned())
}

fn device_attribute(device: sys::CUdevice, attr: Attr) -> Result<u32, DriverError> {
    let mut value = 0;
    // SAFETY: `device` is valid.
    check(unsafe { sys::cuDeviceGetAttribute(&mut value, attr, device) }, "cuDeviceGetAttribute")?;
    Ok(value.max(0) as u32)
}

/// A queue of device work. Work on one stream runs in order; work on different streams may overlap.
///
/// A layer over cudarc's [`cudarc::driver::CudaStream`], which owns the driver stream:
/// [`cudarc`](Self::cudarc) hands it to cudarc code, [`CudaStream::from_cudarc`] wraps one of
/// cudarc's (candle's, say), and every launch method also takes cudarc's stream itself.
pub struct CudaStream {
    ctx: Arc<CudaContext>,
    cudarc: Arc<cudarc::driver::CudaStream>,
}

// SAFETY: a CUstream may be used from any thread once its context is bound (we bind first).
unsafe impl Send for CudaStream {}
unsafe impl Sync for CudaStream {}

impl CudaStream {
    /// Ours for a stream of cudarc (candle's `CudaDevice::cuda_stream()`, say), with a context of
    /// ours made for the stream's ([`CudaContext::from_cudarc`]). Where one program wraps many
    /// streams of one context, make the context once and use [`CudaContext::wrap_cudarc_stream`].
    ///
    /// ```no_run
    /// let theirs = cuda_core::cudarc::driver::CudaContext::new(0).unwrap().new_stream().unwrap();
    /// let ours = cuda_core::CudaStream::from_cudarc(theirs)?;
    /// ours.synchronize()?;
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    pub fn from_cudarc(stream: Arc<cudarc::driver::CudaStream>) -> Result<Arc<CudaStream>, DriverError> {
        CudaContext::from_cudarc(stream.context())?.wrap_cudarc_stream(stream)
    }

    /// The context this stream belongs to.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// `true` for [`CudaContext::default_stream`].
    pub fn is_default(&self) -> bool {
        self.raw().is_null()
    }

    /// cudarc's stream under this one, for calling cudarc (or a library built on it) on it.
    ///
    /// ```no_run
    /// let ctx = cuda_core::CudaContext::new(0)?;
    /// let stream = ctx.new_stream()?;
    /// let zeros = stream.cudarc().alloc_zeros::<f32>(1024).unwrap(); // queued on our stream
    /// let back = cuda_core::DeviceBuffer::from_cudarc(zeros); // ours now, no copy
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    pub fn cudarc(&self) -> &Arc<cudarc::driver::CudaStream> {
        &self.cudarc
    }

    /// Blocks until all work queued on this stream has finished; reports errors of its launches.
    pub fn synchronize(&self) -> Result<(), DriverError> {
        self.ctx.bind_to_thread()?;
        // SAFETY: the stream belongs to the bound context.
        check(unsafe { sys::cuStreamSynchronize(self.raw()) }, "cuStreamSynchronize")
    }

    /// Makes work queued on this stream after now wait until `event` has completed (it may
    /// belong to another stream of the same device). Does not block the host.
    pub fn wait_event(&self, event: &CudaEvent) -> Result<(), DriverError> {
        self.ctx.bind_to_thread()?;
        // SAFETY: both handles are live; waiting captures the event's current state, so it may
        // be destroyed right after.
        check(unsafe { sys::cuStreamWaitEvent(self.raw(), event.raw(), 0) }, "cuStreamWaitEvent")
    }

    /// The raw `CUstream`, for calling the driver directly.
    pub fn raw(&self) -> sys::CUstream {
        self.cudarc.cu_stream()
    }

    /// The raw `CUstream` (NVIDIA's name for [`raw`](Self::raw)); null for the default stream.
    ///
    /// ```no_run
    /// let ctx = cuda_core::CudaContext::new(0)?;
    /// let stream = ctx.new_stream()?;
    /// let buf = cuda_core::DeviceBuffer::<u32>::zeroed(&stream, 256)?;
    /// // SAFETY: the buffer holds 1024 bytes and lives until the stream is synchronised.
    /// unsafe { cuda_core::memory::memset_d8_async(buf.cu_deviceptr(), 0xff, buf.num_bytes(), stream.cu_stream())? };
    /// stream.synchronize()?;
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    pub fn cu_stream(&self) -> sys::CUstream {
        self.raw()
    }

    /// A new event with `flags` (`None`: without timing, as NVIDIA's and cudarc's), recorded at
    /// the current end of this stream. An event without timing is cheaper and enough to wait for
    /// work or order streams; to measure time, use [`record_timed_event`](Self::record_timed_event)
    /// (or pass `Some(CU_EVENT_DEFAULT)`): [`CudaEvent::elapsed_ms`] of an event made without
    /// timing is an error that says so.
    ///
    /// ```no_run
    /// use cuda_core::sys;
    /// let ctx = cuda_core::CudaContext::new(0)?;
    /// let stream = ctx.default_stream();
    /// let start = stream.record_event(Some(sys::CUevent_flags_enum_CU_EVENT_DEFAULT))?;
    /// // ... queue work on `stream` ...
    /// let end = stream.record_event(Some(sys::CUevent_flags_enum_CU_EVENT_DEFAULT))?;
    /// println!("{} ms", start.elapsed_ms(&end)?);
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    pub fn record_event(&self, flags: Option<sys::CUevent_flags>) -> Result<CudaEvent, DriverError> {
        let event = CudaEvent::with_flags(&self.ctx, flags.unwrap_or(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING))?;
        event.record(self)?;
        Ok(event)
    }

    /// A new event that records time, recorded at the current end of this stream: two of them
    /// measure the GPU time of the work queued between them ([`CudaEvent::elapsed_ms`]).
    ///
    /// ```no_run
    /// let ctx = cuda_core::CudaContext::new(0)?;
    /// let stream = ctx.new_stream()?;
    /// let start = stream.record_timed_event()?;
    /// let buf = cuda_core::DeviceBuffer::<f32>::zeroed(&stream, 1 << 20)?;
    /// let end = stream.record_timed_event()?;
    /// println!("clearing 4 MiB took {:.3} ms", start.elapsed_ms(&end)?);
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    pub fn record_timed_event(&self) -> Result<CudaEvent, DriverError> {
        let event = CudaEvent::new(&self.ctx)?;
        event.record(self)?;
        Ok(event)
    }
}

impl AsRef<CudaStream> for CudaStream {
    fn as_ref(&self) -> &CudaStream {
        self
    }
}

impl std::fmt::Debug for CudaStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaStream").field("device", &self.ctx.ordinal).field("default", &self.is_default()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_driver_new_says_so() {
        if crate::driver::is_driver_present() {
            return; // a GPU machine: covered by the GPU tests
        }
        let err = CudaContext::new(0).unwrap_err();
        assert!(matches!(err, DriverError::NoDriver { .. }), "{err}");
        let text = err.to_string();
        assert!(text.contains("no NVIDIA driver found"), "{text}");
        assert!(text.contains("cargo oxide doctor"), "{text}");
        // Asking again gives the same answer, not a panic.
        assert!(matches!(CudaContext::new(1), Err(DriverError::NoDriver { .. })));
        assert!(matches!(CudaContext::device_count(), Err(DriverError::NoDriver { .. })));
    }
}
