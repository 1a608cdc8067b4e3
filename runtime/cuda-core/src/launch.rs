//! Launching kernels: `LaunchConfig` and its checks, kernel parameter packets, `cuLaunchKernel(Ex)`.

use std::ffi::c_void;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use cudarc::driver::sys;
use oxide_contract::fast_launch::{Condition, LaunchValues, TWINS_ENV};
use oxide_contract::manifest::{LaunchBounds, ParamKind};

use crate::context::{CudaContext, CudaStream};
use crate::driver::check;
use crate::error::DriverError;
use crate::graph::{self, NodeKind};
use crate::launch_args::{LaunchStream, SliceParam};
use crate::memory::{Allocation, DeviceBuffer};
use crate::module::Function;
use crate::resources;

use oxide_contract::arch::{CLUSTER_MIN_SM, device_has_clusters};
use oxide_contract::limits::{DEFAULT_SHARED_MEMORY_PER_BLOCK, MAX_BLOCK_DIM, MAX_GRID_DIM};
pub use oxide_contract::limits::{MAX_CLUSTER_SIZE, MAX_PORTABLE_CLUSTER_SIZE, MAX_THREADS_PER_BLOCK};

/// The shape of a launch: blocks in the grid, threads per block, dynamic shared memory per block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LaunchConfig {
    /// Blocks in x, y, z (`gridDim`).
    pub grid_dim: (u32, u32, u32),
    /// Threads per block in x, y, z (`blockDim`); at most 1024 in all.
    pub block_dim: (u32, u32, u32),
    /// Dynamic shared memory per block in bytes (`cuda_device::shared::dynamic`); over 48 KiB
    /// the launch opts the kernel in, up to the GPU's limit.
    pub shared_mem_bytes: u32,
}

impl LaunchConfig {
    /// One thread per element: 256 threads per block, `grid_x = (n + 255) / 256`.
    pub fn for_num_elems(n: u32) -> LaunchConfig {
        LaunchConfig { grid_dim: (n.div_ceil(256), 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 }
    }

    /// Threads per block (`x * y * z`).
    pub fn threads_per_block(&self) -> u64 {
        let (x, y, z) = self.block_dim;
        u64::from(x) * u64::from(y) * u64::from(z)
    }

    /// Checks the limits every CUDA GPU has, naming the field and the limit that is broken.
    pub fn validate(&self) -> Result<(), DriverError> {
        let limits = [
            ("grid_dim.x", self.grid_dim.0, MAX_GRID_DIM.0),
            ("grid_dim.y", self.grid_dim.1, MAX_GRID_DIM.1),
            ("grid_dim.z", self.grid_dim.2, MAX_GRID_DIM.2),
            ("block_dim.x", self.block_dim.0, MAX_BLOCK_DIM.0),
            ("block_dim.y", self.block_dim.1, MAX_BLOCK_DIM.1),
            ("block_dim.z", self.block_dim.2, MAX_BLOCK_DIM.2),
        ];
        for (field, value, max) in limits {
            if value == 0 {
                return Err(DriverError::invalid_config(format!("{field} is 0; every dimension must be at least 1")));
            }
            if value > max {
                return Err(DriverError::invalid_config(format!("{field} is {value}; the limit is {max}")));
            }
        }
        let threads = self.threads_per_block();
        if threads > u64::from(MAX_THREADS_PER_BLOCK) {
            let (x, y, z) = self.block_dim;
            return Err(DriverError::invalid_config(format!(
                "block_dim ({x}, {y}, {z}) is {threads} threads per block; the limit is {MAX_THREADS_PER_BLOCK}"
            )));
        }
        Ok(())
    }

    /// Checks the config against `#[launch_bounds(max_threads, ..)]` of kernel `entry`.
    pub fn check_launch_bounds(&self, entry: &str, bounds: &LaunchBounds) -> Result<(), DriverError> {
        let threads = self.threads_per_block();
        if threads > u64::from(bounds.max_threads) {
            return Err(DriverError::invalid_config(format!(
                "block_dim has {threads} threads per block, but kernel `{entry}` is declared with \
                 #[launch_bounds({})]; use at most {} threads per block",
                bounds.max_threads, bounds.max_threads
            )));
        }
        Ok(())
    }

    /// Checks cluster dimensions: each at least 1, at most [`MAX_CLUSTER_SIZE`] blocks in all,
    /// and dividing the grid evenly.
    pub fn check_cluster(&self, cluster: (u32, u32, u32)) -> Result<(), DriverError> {
        let (cx, cy, cz) = cluster;
        let size = u64::from(cx) * u64::from(cy) * u64::from(cz);
        if size == 0 {
            return Err(DriverError::invalid_config(format!(
                "cluster_dim ({cx}, {cy}, {cz}) has a zero dimension; every dimension must be at least 1"
            )));
        }
        if size > u64::from(MAX_CLUSTER_SIZE) {
            return Err(DriverError::invalid_config(format!(
                "cluster_dim ({cx}, {cy}, {cz}) is {size} blocks; the limit is {MAX_CLUSTER_SIZE} \
                 ({MAX_PORTABLE_CLUSTER_SIZE} is the portable maximum)"
            )));
        }
        for (field, grid, c) in [("x", self.grid_dim.0, cx), ("y", self.grid_dim.1, cy), ("z", self.grid_dim.2, cz)] {
            if grid % c != 0 {
                return Err(DriverError::invalid_config(format!(
                    "grid_dim.{field} is {grid}, which is not a multiple of cluster_dim.{field} = {c}"
                )));
            }
        }
        Ok(())
    }
}

/// The shape of one pushed kernel argument, for checking a packet against the manifest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ArgShape {
    Slice,
    /// A slice with its row width (`DisjointSlice<T, Runtime2DIndex>`).
    RowWidthSlice,
    Value {
        size: usize,
    },
}

/// The `kernelParams` array of a launch, built argument by argument (contract §4). It borrows
/// everything it points to, so the values stay alive and unmoved until the launch.
pub struct KernelParams<'a> {
    ptrs: Vec<*mut c_void>,
    shapes: Vec<ArgShape>,
    /// The memory of our buffers among the arguments, which a graph capturing the launch keeps.
    keep: Vec<&'a Arc<Allocation>>,
    /// How many slice arguments are memory a graph cannot keep alive (cudarc's, other libraries').
    foreign: usize,
    /// The first buffer argument (its index and context), and the later ones of other contexts:
    /// checked against the stream's context at launch (`check_placement`), so a buffer of
    /// another GPU is refused with the fix rather than faulting in the kernel. Empty in the
    /// usual launch, so it allocates nothing.
    home: Option<(usize, &'a CudaContext)>,
    strangers: Vec<(usize, &'a CudaContext)>,
    _borrows: PhantomData<&'a ()>,
}

/// Where an empty slice points: a dangling non-null address (the kernel's slice pointers are
/// `nonnull`).
static EMPTY_SLICE: u64 = oxide_contract::abi::EMPTY_SLICE_ADDRESS;

impl Default for KernelParams<'_> {
    fn default() -> Self {
        KernelParams::new()
    }
}

impl<'a> KernelParams<'a> {
    /// No parameters yet: push them in the kernel's parameter order.
    pub fn new() -> KernelParams<'a> {
        KernelParams {
            ptrs: Vec::with_capacity(8),
            shapes: Vec::with_capacity(8),
            keep: Vec::new(),
            foreign: 0,
            home: None,
            strangers: Vec::new(),
            _borrows: PhantomData,
        }
    }

    /// Remembers the context of the buffer about to be pushed as the next argument.
    fn note_buffer(&mut self, ctx: &'a CudaContext) {
        let index = self.shapes.len();
        match self.home {
            None => self.home = Some((index, ctx)),
            Some((_, home)) if home.same_context(ctx) => {}
            Some(_) => self.strangers.push((index, ctx)),
        }
    }

    /// Refuses buffers that kernels on context `ctx` (the launch's) cannot reach: another
    /// context's, unless peer access to it is enabled.
    fn check_placement(&self, f: &Function, ctx: &CudaContext) -> Result<(), DriverError> {
        for &(index, owner) in self.home.iter().chain(&self.strangers) {
            if ctx.has_peer_access(owner) {
                continue;
            }
            let argument = f
                .info()
                .and_then(|i| i.params.iter().filter(|p| p.kind != ParamKind::Zst).nth(index))
                .map_or_else(|| format!("argument {index}"), |p| format!("argument {index} (`{}`)", p.name));
            let (theirs, ours) = (owner.ordinal(), ctx.ordinal());
            let fix = if theirs == ours {
                "another context of the same GPU (`CudaContext::new_private`): copy it into a buffer of the \
                 launch's context with `copy_peer_async`"
                    .to_string()
            } else {
                format!(
                    "device {theirs}: copy it to device {ours} with `copy_peer_async`, or, where \
                     `can_access_peer` allows, call `enable_peer_access` on device {ours}'s context first"
                )
            };
            return Err(DriverError::Placement {
                message: format!("kernel `{}` runs on device {ours}, but {argument} is a buffer of {fix}", f.name()),
            });
        }
        Ok(())
    }

    /// A `&[T]` parameter: pushes the buffer's pointer and u64 length.
    pub fn push_slice<T>(&mut self, buf: &'a DeviceBuffer<T>) -> &mut Self {
        self.note_buffer(buf.context());
        self.ptrs.extend(buf.param_slots());
        self.keep.push(buf.allocation());
        self.shapes.push(ArgShape::Slice);
        self
    }

    /// A `&mut [T]` or `DisjointSlice<T>` parameter: pushes pointer and u64 length.
    pub fn push_slice_mut<T>(&mut self, buf: &'a mut DeviceBuffer<T>) -> &mut Self {
        self.note_buffer(buf.context());
        self.ptrs.extend(buf.param_slots());
        self.keep.push(buf.allocation());
        self.shapes.push(ArgShape::Slice);
        self
    }

    /// A slice parameter given as a [`SliceParam`] (what [`crate::KernelSlice`] and
    /// [`crate::KernelSliceMut`] make of our buffers and cudarc's slices): pointer and u64 length.
    pub fn push_slice_param(&mut self, param: &'a SliceParam<'_>) -> &mut Self {
        let ptr = if param.ptr == 0 { &EMPTY_SLICE } else { &param.ptr };
        self.ptrs.extend([(ptr as *const u64).cast_mut().cast(), (&param.len as *const u64).cast_mut().cast()]);
        match param.keep {
            Some(mem) => {
                self.note_buffer(mem.context());
                self.keep.push(mem);
            }
            None if param.foreign => self.foreign += 1,
            None => {}
        }
        self.shapes.push(ArgShape::Slice);
        self
    }

    /// A `DisjointSlice<T, Runtime2DIndex>` parameter (an index space with a runtime row width):
    /// pushes pointer, u64 length and the u32 row width.
    pub fn push_slice_row_width<T>(&mut self, buf: &'a mut DeviceBuffer<T>, row_width: &'a u32) -> &mut Self {
        self.note_buffer(buf.context());
        self.ptrs.extend(buf.param_slots());
        self.keep.push(buf.allocation());
        self.ptrs.push((row_width as *const u32).cast_mut().cast());
        self.shapes.push(ArgShape::RowWidthSlice);
        self
    }

    /// A scalar, raw pointer, closure or by-value struct: one parameter holding `value`'s bytes.
    /// Zero-sized values push nothing (the kernel has no parameter for them).
    pub fn push_value<T>(&mut self, value: &'a T) -> &mut Self {
        if size_of::<T>() != 0 {
            self.ptrs.push((value as *const T).cast_mut().cast());
            self.shapes.push(ArgShape::Value { size: size_of::<T>() });
        }
        self
    }

    /// Number of `kernelParams` entries so far.
    pub fn len(&self) -> usize {
        self.ptrs.len()
    }

    /// `true` when nothing has been pushed.
    pub fn is_empty(&self) -> bool {
        self.ptrs.is_empty()
    }

    /// Compares the packet with the kernel's parameters from the manifest, when the function has them.
    fn check_against(&self, f: &Function) -> Result<(), DriverError> {
        let Some(info) = f.info() else { return Ok(()) };
        let mismatch = |message: String| Err(DriverError::ArgumentMismatch { kernel: f.name().to_string(), message });
        let params: Vec<_> = info.params.iter().filter(|p| p.kind != ParamKind::Zst).collect();
        if params.len() != self.shapes.len() {
            let names: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
            return mismatch(format!(
                "the kernel takes {} arguments ({}), the launch passes {}",
                params.len(),
                names.join(", "),
                self.shapes.len()
            ));
        }
        for (i, (p, shape)) in params.iter().zip(&self.shapes).enumerate() {
            let row_width = p.kind == ParamKind::RowWidthSlice;
            match (p.kind.is_slice(), shape) {
                (true, ArgShape::Slice) if !row_width => {}
                (true, ArgShape::RowWidthSlice) if row_width => {}
                (true, ArgShape::Slice | ArgShape::RowWidthSlice) => {
                    return mismatch(format!(
                        "argument {i} (`{}: {}`) {}",
                        p.name,
                        p.ty,
                        if row_width {
                            "carries a row width; pass cuda_host::RowWidth::new(&mut buf, width)"
                        } else {
                            "has no row width; pass the buffer alone"
                        }
                    ));
                }
                (true, ArgShape::Value { .. }) => {
                    return mismatch(format!(
                        "argument {i} (`{}: {}`) is a slice; pass it as slice(buf) or slice_mut(buf)",
                        p.name, p.ty
                    ));
                }
                (false, ArgShape::Slice | ArgShape::RowWidthSlice) => {
                    return mismatch(format!(
                        "argument {i} (`{}: {}`) is not a slice; pass the value itself",
                        p.name, p.ty
                    ));
                }
                (false, ArgShape::Value { size }) if *size as u64 != p.size => {
                    return mismatch(format!(
                        "argument {i} (`{}: {}`) is {} bytes on the device, the value passed is {size} bytes",
                        p.name, p.ty, p.size
                    ));
                }
                (false, ArgShape::Value { .. }) => {}
            }
        }
        Ok(())
    }
}

/// How a kernel is launched beyond its config: with thread block clusters, cooperatively.
/// A kernel's manifest entry adds its own (`#[cluster_launch]`, `#[cooperative_launch]`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LaunchOptions {
    /// Thread block cluster shape `(x, y, z)`, in blocks.
    pub cluster: Option<(u32, u32, u32)>,
    /// A cooperative launch: every block resident at once (needed by `grid::sync()`); a grid
    /// larger than the GPU holds at once is refused before launching.
    pub cooperative: bool,
}

/// Launches `f` with a packet built by [`KernelParams`], after checking it against the
/// kernel's manifest entry when there is one.
///
/// # Safety
/// When `f` has no manifest entry ([`Function::info`] is `None`), the packet must match the
/// kernel's parameters in count, order and type; the kernel must not access buffers beyond
/// what it is given.
pub unsafe fn launch_with(
    f: &Function,
    stream: &CudaStream,
    config: &LaunchConfig,
    cluster_dims: Option<(u32, u32, u32)>,
    params: &mut KernelParams<'_>,
) -> Result<(), DriverError> {
    // SAFETY: forwarded to the caller.
    unsafe {
        launch_with_options(f, stream, config, LaunchOptions { cluster: cluster_dims, cooperative: false }, params)
    }
}

/// [`launch_with`] with [`LaunchOptions`] (what the generated launch methods call).
///
/// # Safety
/// As [`launch_with`].
pub unsafe fn launch_with_options(
    f: &Function,
    stream: &CudaStream,
    config: &LaunchConfig,
    options: LaunchOptions,
    params: &mut KernelParams<'_>,
) -> Result<(), DriverError> {
    // SAFETY: forwarded to the caller.
    unsafe { launch_packet(f, stream.cudarc(), config, options, params) }
}

/// [`launch_with_options`] on any [`LaunchStream`]: ours or cudarc's (what the generated launch
/// methods call).
///
/// # Safety
/// As [`launch_with`].
pub unsafe fn launch_on<S: LaunchStream + ?Sized>(
    f: &Function,
    stream: &S,
    config: &LaunchConfig,
    options: LaunchOptions,
    params: &mut KernelParams<'_>,
) -> Result<(), DriverError> {
    // SAFETY: forwarded to the caller.
    unsafe { launch_packet(f, stream.cudarc_stream(), config, options, params) }
}

/// Checks the packet, launches, and records the launch in a graph capturing the stream.
///
/// # Safety
/// As [`launch_with`].
unsafe fn launch_packet(
    f: &Function,
    stream: &cudarc::driver::CudaStream,
    config: &LaunchConfig,
    options: LaunchOptions,
    params: &mut KernelParams<'_>,
) -> Result<(), DriverError> {
    params.check_against(f)?;
    check_stream(f, stream)?;
    params.check_placement(f, f.context())?;
    f.context().bind_to_thread()?;
    let raw = stream.cu_stream();
    let capture = graph::before(raw, params.foreign > 0, &|| format!("launching kernel `{}`", f.name()))?;
    // SAFETY: forwarded to the caller; the packet's pointers are borrowed for its lifetime.
    unsafe { launch_raw(f, raw, config, options, &mut params.ptrs)? };
    if let Some(capture) = capture {
        graph::after(raw, capture, NodeKind::Kernel { name: f.name().to_string() }, &params.keep);
    }
    Ok(())
}

/// The kernel and the stream must be of one context.
fn check_stream(f: &Function, stream: &cudarc::driver::CudaStream) -> Result<(), DriverError> {
    let theirs = stream.context();
    if theirs.cu_ctx() != f.context().cu_ctx() {
        return Err(DriverError::invalid_config(format!(
            "kernel `{}` was loaded on device {}, but the stream belongs to {}; launch it on a stream of the \
             context it was loaded on",
            f.name(),
            f.context().ordinal(),
            if theirs.ordinal() == f.context().ordinal() {
                format!("another context of device {}", theirs.ordinal())
            } else {
                format!("device {}", theirs.ordinal())
            }
        )));
    }
    Ok(())
}

/// Enqueues kernel `f` on `stream`: `cuLaunchKernel`, or `cuLaunchKernelEx` with a cluster
/// dimension attribute when `cluster_dims` is given. Checks the config (and launch bounds and
/// cluster dims from the manifest) first. `Ok` means queued, not finished.
///
/// # Safety
/// `params` must hold one pointer per PTX parameter of the kernel, in order, each pointing to a
/// live value of that parameter's type (contract §4), and the kernel must only access memory
/// it is given. When the stream is being captured into a graph ([`crate::graph`]), that memory
/// must stay allocated while the graph or an instance of it may run (this raw launch does not
/// tell the graph which memory it uses; the generated methods and [`launch_with`] do).
pub unsafe fn launch(
    f: &Function,
    stream: &CudaStream,
    config: &LaunchConfig,
    cluster_dims: Option<(u32, u32, u32)>,
    params: &mut [*mut c_void],
) -> Result<(), DriverError> {
    // SAFETY: forwarded to the caller.
    unsafe { launch_options(f, stream, config, LaunchOptions { cluster: cluster_dims, cooperative: false }, params) }
}

/// [`launch`] with [`LaunchOptions`]: `cuLaunchKernelEx` with a cluster dimension and / or the
/// cooperative attribute when either is asked for (here or by the kernel's manifest entry).
///
/// # Safety
/// As [`launch`].
pub unsafe fn launch_options(
    f: &Function,
    stream: &CudaStream,
    config: &LaunchConfig,
    options: LaunchOptions,
    params: &mut [*mut c_void],
) -> Result<(), DriverError> {
    check_stream(f, stream.cudarc())?;
    // SAFETY: forwarded to the caller.
    unsafe { launch_raw(f, stream.raw(), config, options, params) }
}

/// The launch itself, on a stream of `f`'s context.
///
/// # Safety
/// As [`launch`].
unsafe fn launch_raw(
    f: &Function,
    stream: sys::CUstream,
    config: &LaunchConfig,
    options: LaunchOptions,
    params: &mut [*mut c_void],
) -> Result<(), DriverError> {
    config.validate()?;
    let entry = f.name();
    let ctx = f.context();
    let info = f.info();
    if let Some(bounds) = info.and_then(|i| i.launch_bounds.as_ref()) {
        config.check_launch_bounds(entry, bounds)?;
    }
    if let Some(contract) = info.and_then(|i| i.launch_contract.as_ref()) {
        contract
            .check(config.grid_dim, config.block_dim, config.shared_mem_bytes)
            .map_err(|v| DriverError::invalid_config(format!("kernel `{entry}`: {v}")))?;
    }
    if let Some(info) = info {
        let slots = info.launch_slots();
        if slots != params.len() {
            return Err(DriverError::ArgumentMismatch {
                kernel: entry.to_string(),
                message: format!("the kernel has {slots} PTX parameters, the launch passes {}", params.len()),
            });
        }
    }
    let cluster_dims = options.cluster.or_else(|| info.and_then(|i| i.cluster_dims).map(|[x, y, z]| (x, y, z)));
    let cooperative = options.cooperative || info.is_some_and(|i| i.cooperative);
    // The unchecked twin where the kernel's entry test would pass for this launch: the same
    // code without the test (`oxide_contract::fast_launch`). Not for cooperative launches, whose
    // residency check is the kernel's own.
    let twin = match info.and_then(|i| i.fast.as_ref()) {
        Some(fast) if !cooperative && twins_enabled() && fast_condition_holds(&fast.condition, config, params) => {
            f.twin()
        }
        _ => None,
    };
    let f = twin.unwrap_or(f);
    ctx.bind_to_thread()?;
    if config.shared_mem_bytes > DEFAULT_SHARED_MEMORY_PER_BLOCK {
        let limit = ctx.max_shared_memory_per_block_optin();
        if config.shared_mem_bytes > limit {
            return Err(DriverError::invalid_config(format!(
                "shared_mem_bytes is {}; this GPU allows at most {limit} bytes per block",
                config.shared_mem_bytes
            )));
        }
        f.set_attribute(
            sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            config.shared_mem_bytes as i32,
        )?;
    }
    resources::prepare(f)?;
    let what = || format!("launching kernel `{entry}`");
    let (gx, gy, gz) = config.grid_dim;
    let (bx, by, bz) = config.block_dim;
    let params_ptr = if params.is_empty() { std::ptr::null_mut() } else { params.as_mut_ptr() };
    // SAFETY: all-zero attributes are valid plain data; we set the fields we use.
    let mut attrs: [sys::CUlaunchAttribute; 2] = unsafe { std::mem::zeroed() };
    let mut num_attrs = 0;
    if let Some((cx, cy, cz)) = cluster_dims {
        config.check_cluster((cx, cy, cz))?;
        let cc = ctx.capability();
        if !device_has_clusters(cc) {
            return Err(DriverError::invalid_config(format!(
                "kernel `{entry}` uses cluster launch, which needs an sm_{CLUSTER_MIN_SM} or newer GPU; this one is sm_{}{}",
                cc.0, cc.1
            )));
        }
        if cx * cy * cz > MAX_PORTABLE_CLUSTER_SIZE {
            f.set_attribute(sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1)?;
        }
        attrs[num_attrs] = cluster_attribute((cx, cy, cz));
        num_attrs += 1;
    }
    if cooperative {
        crate::cooperative::check_launch(f, config, cluster_dims)?;
        let attr = &mut attrs[num_attrs];
        attr.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
        attr.value.cooperative = 1;
        num_attrs += 1;
    }
    if num_attrs == 0 {
        // SAFETY: the caller vouches for `params`; handles are live and the context bound.
        let r = unsafe {
            sys::cuLaunchKernel(
                f.raw(),
                gx,
                gy,
                gz,
                bx,
                by,
                bz,
                config.shared_mem_bytes,
                stream,
                params_ptr,
                std::ptr::null_mut(),
            )
        };
        return check(r, "cuLaunchKernel")
            .map(|()| count_twin(twin.is_some()))
            .map_err(|e| resources::explain(f, config, e.context(what())));
    }
    let launch_config = launch_config_ex(config, stream, &mut attrs[..num_attrs]);
    // SAFETY: as above; `attrs` outlives the call.
    let r = unsafe { sys::cuLaunchKernelEx(&launch_config, f.raw(), params_ptr, std::ptr::null_mut()) };
    check(r, "cuLaunchKernelEx")
        .map(|()| count_twin(twin.is_some()))
        .map_err(|e| resources::explain(f, config, e.context(what())))
}

/// Launches in this process that ran a kernel's unchecked twin ([`twin_launches`]).
static TWIN_LAUNCHES: AtomicU64 = AtomicU64::new(0);

fn count_twin(twin: bool) {
    if twin {
        TWIN_LAUNCHES.fetch_add(1, Ordering::Relaxed);
    }
}

/// How many launches in this process ran a kernel's unchecked twin instead of the kernel
/// (`oxide_contract::fast_launch`: the same code without its entry test, chosen where that test
/// passes). For tests and profiling: Nsight shows a twin as `<entry>__oxide_fast_<hash>`.
pub fn twin_launches() -> u64 {
    TWIN_LAUNCHES.load(Ordering::Relaxed)
}

/// Whether twins may run: not when `CUDA_OXIDE_TWINS=0` (read once).
fn twins_enabled() -> bool {
    static ENABLED: OnceLock<bool> = OnceLock::new();
    *ENABLED.get_or_init(|| std::env::var_os(TWINS_ENV).is_none_or(|v| v != "0"))
}

/// Whether a twin's condition holds for this launch: the kernel's parameters are read from the
/// packet (`params[i]` points to a live value of PTX parameter `i`'s type, as `launch` requires;
/// the condition reads only integer parameters, at their width).
fn fast_condition_holds(condition: &Condition, config: &LaunchConfig, params: &[*mut c_void]) -> bool {
    let param = |index: u32, bits: u32| -> Option<u64> {
        let p = *params.get(index as usize)?;
        // SAFETY: `p` points to a live value of at least `bits / 8` bytes (the parameter's type).
        unsafe {
            Some(match bits {
                8 => u64::from(p.cast::<u8>().read_unaligned()),
                16 => u64::from(p.cast::<u16>().read_unaligned()),
                32 => u64::from(p.cast::<u32>().read_unaligned()),
                64 => p.cast::<u64>().read_unaligned(),
                _ => return None,
            })
        }
    };
    let launch = LaunchValues { block: config.block_dim, grid: config.grid_dim, param: &param };
    condition.holds(&launch) == Some(true)
}

/// The launch attribute that asks for clusters of `dims` blocks.
pub(crate) fn cluster_attribute((x, y, z): (u32, u32, u32)) -> sys::CUlaunchAttribute {
    // SAFETY: an all-zero attribute is valid plain data; we set the fields we use.
    let mut attr: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
    attr.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr.value.clusterDim.x = x;
    attr.value.clusterDim.y = y;
    attr.value.clusterDim.z = z;
    attr
}

/// `cuLaunchKernelEx`'s configuration: `config`'s shape on `stream` with `attrs`, which must
/// outlive every use of the result.
pub(crate) fn launch_config_ex(
    config: &LaunchConfig,
    stream: sys::CUstream,
    attrs: &mut [sys::CUlaunchAttribute],
) -> sys::CUlaunchConfig {
    let ((gx, gy, gz), (bx, by, bz)) = (config.grid_dim, config.block_dim);
    sys::CUlaunchConfig {
        gridDimX: gx,
        gridDimY: gy,
        gridDimZ: gz,
        blockDimX: bx,
        blockDimY: by,
        blockDimZ: bz,
        sharedMemBytes: config.shared_mem_bytes,
        hStream: stream,
        attrs: attrs.as_mut_ptr(),
        numAttrs: attrs.len() as u32,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(grid: (u32, u32, u32), block: (u32, u32, u32)) -> LaunchConfig {
        LaunchConfig { grid_dim: grid, block_dim: block, shared_mem_bytes: 0 }
    }

    #[test]
    fn a_twin_condition_reads_the_packet_at_each_parameter_width() {
        // `n: u32` (PTX parameter 2) and a slice length (parameter 1): `len <= n * ntid.x`.
        use oxide_contract::fast_launch::{BinOp, CastOp, Extent, Operand, Pred, Step};
        let steps = vec![
            Step::Cast { op: CastOp::ZExt, from: 32, to: 64, a: Operand::Param { index: 2, bits: 32 } },
            Step::Extent(Extent::BlockX),
            Step::Cast { op: CastOp::ZExt, from: 32, to: 64, a: Operand::Step(1) },
            Step::Binary { op: BinOp::Mul, bits: 64, a: Operand::Step(0), b: Operand::Step(2) },
            Step::Compare { pred: Pred::Ule, bits: 64, a: Operand::Param { index: 1, bits: 64 }, b: Operand::Step(3) },
        ];
        let condition = Condition { steps };
        let (mut ptr, mut len, mut n) = (0u64, 1000u64, 4u32);
        let mut packet: Vec<*mut c_void> = vec![(&raw mut ptr).cast(), (&raw mut len).cast(), (&raw mut n).cast()];
        assert!(fast_condition_holds(&condition, &cfg((1, 1, 1), (256, 1, 1)), &packet));
        assert!(!fast_condition_holds(&condition, &cfg((1, 1, 1), (128, 1, 1)), &packet));
        // A packet without the parameter never takes the twin.
        packet.truncate(2);
        assert!(!fast_condition_holds(&condition, &cfg((1, 1, 1), (256, 1, 1)), &packet));
    }

    #[test]
    fn for_num_elems_rounds_up() {
        assert_eq!(LaunchConfig::for_num_elems(1024), cfg((4, 1, 1), (256, 1, 1)));
        assert_eq!(LaunchConfig::for_num_elems(1025).grid_dim, (5, 1, 1));
        assert_eq!(LaunchConfig::for_num_elems(1).grid_dim, (1, 1, 1));
        assert_eq!(LaunchConfig::for_num_elems(u32::MAX).grid_dim, (16_777_216, 1, 1));
        assert!(LaunchConfig::for_num_elems(1000).validate().is_ok());
    }

    fn message(c: LaunchConfig) -> String {
        let e = c.validate().unwrap_err();
        assert!(matches!(e, DriverError::InvalidConfig { .. }));
        e.to_string()
    }

    #[test]
    fn validate_names_field_and_limit() {
        assert!(message(cfg((0, 1, 1), (256, 1, 1))).contains("grid_dim.x is 0"));
        assert!(message(cfg((1, 1, 1), (256, 0, 1))).contains("block_dim.y is 0"));
        assert!(message(cfg((1, 65_536, 1), (1, 1, 1))).contains("grid_dim.y is 65536; the limit is 65535"));
        assert!(message(cfg((1, 1, 70_000), (1, 1, 1))).contains("grid_dim.z is 70000; the limit is 65535"));
        assert!(message(cfg((1, 1, 1), (2048, 1, 1))).contains("block_dim.x is 2048; the limit is 1024"));
        assert!(message(cfg((1, 1, 1), (1, 1, 65))).contains("block_dim.z is 65; the limit is 64"));
        let m = message(cfg((1, 1, 1), (64, 32, 1)));
        assert!(m.contains("2048 threads per block; the limit is 1024"), "{m}");
        assert!(m.contains("likely cause") && m.contains("at most 1024 threads"), "{m}");
        assert!(cfg((1, 1, 1), (1024, 1, 1)).validate().is_ok());
        assert!(cfg(((1 << 31) - 1, 65_535, 65_535), (16, 16, 4)).validate().is_ok());
        assert!(message(cfg((1 << 31, 1, 1), (1, 1, 1))).contains("grid_dim.x"));
    }

    #[test]
    fn launch_bounds_and_clusters() {
        let c = cfg((8, 2, 1), (512, 1, 1));
        let b = LaunchBounds { max_threads: 256, min_blocks: None };
        let m = c.check_launch_bounds("k", &b).unwrap_err().to_string();
        assert!(m.contains("#[launch_bounds(256)]") && m.contains("`k`"), "{m}");
        assert!(cfg((1, 1, 1), (256, 1, 1)).check_launch_bounds("k", &b).is_ok());
        assert!(c.check_cluster((4, 1, 1)).is_ok());
        assert!(c.check_cluster((8, 2, 1)).is_ok());
        assert!(c.check_cluster((3, 1, 1)).unwrap_err().to_string().contains("not a multiple of cluster_dim.x = 3"));
        assert!(c.check_cluster((0, 1, 1)).unwrap_err().to_string().contains("zero dimension"));
        let m = cfg((32, 1, 1), (1, 1, 1)).check_cluster((32, 1, 1)).unwrap_err().to_string();
        assert!(m.contains("the limit is 16") && m.contains("portable"), "{m}");
    }

    #[test]
    fn params_packets() {
        let scalar = 7u32;
        let unit = ();
        let pair = (1u8, 2.0f64);
        let mut p = KernelParams::new();
        assert!(p.is_empty());
        p.push_value(&scalar).push_value(&unit).push_value(&pair);
        assert_eq!(p.len(), 2);
        assert_eq!(p.shapes, [ArgShape::Value { size: 4 }, ArgShape::Value { size: 16 }]);
        assert_eq!(p.ptrs[0] as *const u32, &scalar as *const u32);
    }
}
