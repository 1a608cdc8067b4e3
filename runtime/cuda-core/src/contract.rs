//! Launch contracts on the host: the dimension-typed configs of contracted kernels
//! ([`LaunchConfig1D`] …), the contract a `#[launch_contract]` kernel declares
//! ([`KernelLaunchContract`]), its check before a launch ([`PreparedLaunch`]) and the errors of
//! both ([`LaunchContractError`]).
//!
//! ```no_run
//! # use cuda_core::*;
//! # fn f<M: KernelLaunchContract<Config = LaunchConfig1D>>(function: Function) -> Result<(), LaunchContractError> {
//! // Generated: module.prepare_scale(LaunchConfig1D::new(blocks, 256, 0))?
//! # let _ = function; Ok(())
//! # }
//! ```

use std::fmt;
use std::marker::PhantomData;

use oxide_contract::launch_contract::{Axis, ContractViolation};
use oxide_contract::limits::{MAX_BLOCK_DIM, MAX_GRID_DIM, MAX_THREADS_PER_BLOCK};

use crate::error::DriverError;
use crate::launch::LaunchConfig;
use crate::module::Function;

mod sealed {
    pub trait Sealed {}
}

/// A launch config of a fixed number of dimensions (what a kernel's launch contract domain
/// asks for): [`LaunchConfig1D`], [`LaunchConfig2D`], [`LaunchConfig3D`].
pub trait KernelLaunchConfig: sealed::Sealed + Copy {
    /// 1, 2 or 3.
    const DOMAIN: u8;

    /// The same launch as a [`LaunchConfig`].
    fn to_launch_config(self) -> LaunchConfig;
}

/// A 1D launch: `grid_x` blocks of `block_x` threads, `shared_mem_bytes` of dynamic shared memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LaunchConfig1D {
    /// Grid size on x, in blocks.
    pub grid_x: u32,
    /// Block size on x, in threads.
    pub block_x: u32,
    /// Dynamic shared memory per block, in bytes.
    pub shared_mem_bytes: u32,
}

impl LaunchConfig1D {
    /// `LaunchConfig1D::new(n.div_ceil(256), 256, 0)`.
    pub const fn new(grid_x: u32, block_x: u32, shared_mem_bytes: u32) -> Self {
        LaunchConfig1D { grid_x, block_x, shared_mem_bytes }
    }
}

/// A 2D launch: `grid` = (x, y) blocks of `block` = (x, y) threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LaunchConfig2D {
    /// Grid size `(x, y)`, in blocks.
    pub grid: (u32, u32),
    /// Block size `(x, y)`, in threads.
    pub block: (u32, u32),
    /// Dynamic shared memory per block, in bytes.
    pub shared_mem_bytes: u32,
}

impl LaunchConfig2D {
    /// `LaunchConfig2D::new((cols / 16, rows / 16), (16, 16), 0)`.
    pub const fn new(grid: (u32, u32), block: (u32, u32), shared_mem_bytes: u32) -> Self {
        LaunchConfig2D { grid, block, shared_mem_bytes }
    }
}

/// A 3D launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LaunchConfig3D {
    /// Grid size `(x, y, z)`, in blocks.
    pub grid: (u32, u32, u32),
    /// Block size `(x, y, z)`, in threads.
    pub block: (u32, u32, u32),
    /// Dynamic shared memory per block, in bytes.
    pub shared_mem_bytes: u32,
}

impl LaunchConfig3D {
    /// `LaunchConfig3D::new((gx, gy, gz), (bx, by, bz), 0)`.
    pub const fn new(grid: (u32, u32, u32), block: (u32, u32, u32), shared_mem_bytes: u32) -> Self {
        LaunchConfig3D { grid, block, shared_mem_bytes }
    }
}

impl sealed::Sealed for LaunchConfig1D {}
impl sealed::Sealed for LaunchConfig2D {}
impl sealed::Sealed for LaunchConfig3D {}

impl KernelLaunchConfig for LaunchConfig1D {
    const DOMAIN: u8 = 1;
    fn to_launch_config(self) -> LaunchConfig {
        LaunchConfig {
            grid_dim: (self.grid_x, 1, 1),
            block_dim: (self.block_x, 1, 1),
            shared_mem_bytes: self.shared_mem_bytes,
        }
    }
}

impl KernelLaunchConfig for LaunchConfig2D {
    const DOMAIN: u8 = 2;
    fn to_launch_config(self) -> LaunchConfig {
        LaunchConfig {
            grid_dim: (self.grid.0, self.grid.1, 1),
            block_dim: (self.block.0, self.block.1, 1),
            shared_mem_bytes: self.shared_mem_bytes,
        }
    }
}

impl KernelLaunchConfig for LaunchConfig3D {
    const DOMAIN: u8 = 3;
    fn to_launch_config(self) -> LaunchConfig {
        LaunchConfig { grid_dim: self.grid, block_dim: self.block, shared_mem_bytes: self.shared_mem_bytes }
    }
}

/// The block shapes a kernel accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockRequirement {
    /// Exactly this `(x, y, z)` (`#[launch_contract(block = ..)]`; also `.reqntid` in the PTX).
    Exact((u32, u32, u32)),
    /// At most this many threads in all (`#[launch_bounds(max)]`, `.maxntid`).
    MaxThreads(u32),
}

/// The dynamic shared memory a kernel accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DynamicSharedMemoryRequirement {
    /// Exactly `bytes` (`dynamic_shared = bytes`).
    Exact {
        /// Required dynamic shared memory per block, in bytes.
        bytes: u32,
        /// Alignment the kernel assumes of its dynamic shared memory, in bytes (a power of two).
        min_alignment: u32,
    },
    /// Between `min_bytes` and `max_bytes`, inclusive (`dynamic_shared_range = (min, max)`).
    Range {
        /// Least dynamic shared memory per block, in bytes.
        min_bytes: u32,
        /// Most dynamic shared memory per block, in bytes.
        max_bytes: u32,
        /// Alignment the kernel assumes of its dynamic shared memory, in bytes (a power of two).
        min_alignment: u32,
    },
}

impl DynamicSharedMemoryRequirement {
    fn bounds(self) -> (u32, u32, u32) {
        match self {
            DynamicSharedMemoryRequirement::Exact { bytes, min_alignment } => (bytes, bytes, min_alignment),
            DynamicSharedMemoryRequirement::Range { min_bytes, max_bytes, min_alignment } => {
                (min_bytes, max_bytes, min_alignment)
            }
        }
    }
}

/// Whether a kernel's thread coordinates are promised to fit in `u32`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CoordinateRequirement {
    /// No promise: coordinates are as wide as the launch makes them (the default).
    #[default]
    Native,
    /// `coordinates = u32`: `grid_dim * block_dim <= 2^32` on every axis.
    U32,
}

/// What a contracted kernel assumes about its launches (`#[launch_contract]`); generated as
/// [`KernelLaunchContract::SPEC`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchContractSpec {
    kernel_name: &'static str,
    block: BlockRequirement,
    dynamic_shared_memory: DynamicSharedMemoryRequirement,
    cluster: Option<(u32, u32, u32)>,
    min_compute_capability: Option<(u32, u32)>,
    coordinates: CoordinateRequirement,
    cooperative: bool,
}

impl LaunchContractSpec {
    /// A contract on block shape and dynamic shared memory.
    pub const fn new(
        kernel_name: &'static str,
        block: BlockRequirement,
        dynamic_shared_memory: DynamicSharedMemoryRequirement,
    ) -> Self {
        LaunchContractSpec {
            kernel_name,
            block,
            dynamic_shared_memory,
            cluster: None,
            min_compute_capability: None,
            coordinates: CoordinateRequirement::Native,
            cooperative: false,
        }
    }

    /// The kernel is launched cooperatively (`#[cooperative_launch]`): preparing checks that
    /// the whole grid can be resident at once.
    #[must_use]
    pub const fn with_cooperative(mut self) -> Self {
        self.cooperative = true;
        self
    }

    /// Whether the kernel is launched cooperatively.
    pub const fn cooperative(&self) -> bool {
        self.cooperative
    }

    /// The kernel launches with thread block clusters of this shape.
    #[must_use]
    pub const fn with_cluster(mut self, cluster: (u32, u32, u32)) -> Self {
        self.cluster = Some(cluster);
        self
    }

    /// The kernel needs at least compute capability `major.minor`.
    #[must_use]
    pub const fn with_min_compute_capability(mut self, major: u32, minor: u32) -> Self {
        self.min_compute_capability = Some((major, minor));
        self
    }

    /// Every coordinate fits in `u32`.
    #[must_use]
    pub const fn with_u32_coordinates(mut self) -> Self {
        self.coordinates = CoordinateRequirement::U32;
        self
    }

    /// The kernel's name (as used in errors).
    pub const fn kernel_name(&self) -> &'static str {
        self.kernel_name
    }

    /// The block shapes the kernel accepts.
    pub const fn block(&self) -> BlockRequirement {
        self.block
    }

    /// The dynamic shared memory the kernel accepts.
    pub const fn dynamic_shared_memory(&self) -> DynamicSharedMemoryRequirement {
        self.dynamic_shared_memory
    }

    /// The thread block cluster shape `(x, y, z)`, in blocks, if the contract names one.
    pub const fn cluster(&self) -> Option<(u32, u32, u32)> {
        self.cluster
    }

    /// The lowest compute capability `(major, minor)` the kernel runs on, if any.
    pub const fn min_compute_capability(&self) -> Option<(u32, u32)> {
        self.min_compute_capability
    }

    /// Whether thread coordinates are promised to fit in `u32`.
    pub const fn coordinates(&self) -> CoordinateRequirement {
        self.coordinates
    }
}

/// Implemented by the marker type `#[cuda_module]` generates for a `#[launch_contract]` kernel
/// (`kernels::__<kernel>_CudaKernel<..>`): its config type and contract.
pub trait KernelLaunchContract {
    /// [`LaunchConfig1D`], [`LaunchConfig2D`] or [`LaunchConfig3D`], after the contract's domain.
    type Config: KernelLaunchConfig;
    /// The contract.
    const SPEC: LaunchContractSpec;
}

/// Grid, block or cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaunchDimension {
    /// The grid (`grid_dim`, in blocks).
    Grid,
    /// The block (`block_dim`, in threads).
    Block,
    /// The thread block cluster (`cluster_dim`, in blocks).
    Cluster,
}

/// x, y or z.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaunchAxis {
    /// The x axis.
    X,
    /// The y axis.
    Y,
    /// The z axis.
    Z,
}

impl From<Axis> for LaunchAxis {
    fn from(axis: Axis) -> Self {
        match axis {
            Axis::X => LaunchAxis::X,
            Axis::Y => LaunchAxis::Y,
            Axis::Z => LaunchAxis::Z,
        }
    }
}

impl fmt::Display for LaunchAxis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LaunchAxis::X => "x",
            LaunchAxis::Y => "y",
            LaunchAxis::Z => "z",
        })
    }
}

impl fmt::Display for LaunchDimension {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LaunchDimension::Grid => "grid_dim",
            LaunchDimension::Block => "block_dim",
            LaunchDimension::Cluster => "cluster_dim",
        })
    }
}

/// Why a contracted launch was refused before it reached the GPU (or the driver error it got).
#[derive(Debug)]
#[non_exhaustive]
pub enum LaunchContractError {
    /// A grid or block dimension is 0.
    ZeroDimension {
        /// Name of the kernel.
        kernel: &'static str,
        /// Grid or block.
        dimension: LaunchDimension,
        /// The axis that is 0.
        axis: LaunchAxis,
    },
    /// A grid or block dimension is above what every CUDA GPU allows.
    DeviceDimensionExceeded {
        /// Name of the kernel.
        kernel: &'static str,
        /// Grid or block.
        dimension: LaunchDimension,
        /// The axis over the limit.
        axis: LaunchAxis,
        /// The requested size on that axis (blocks for the grid, threads for the block).
        actual: u32,
        /// The limit on that axis, in the same unit.
        max: u32,
    },
    /// More threads per block than the GPU allows.
    DeviceThreadsPerBlockExceeded {
        /// Name of the kernel.
        kernel: &'static str,
        /// Requested threads per block.
        actual: u64,
        /// Most threads per block the GPU allows.
        max: u32,
    },
    /// More threads per block than this compiled kernel can run with (its register use).
    FunctionThreadsPerBlockExceeded {
        /// Name of the kernel.
        kernel: &'static str,
        /// Requested threads per block.
        actual: u64,
        /// Most threads per block the compiled kernel can run with.
        max: u32,
    },
    /// A coordinate on `axis` does not fit in `u32` (`coordinates = u32`).
    CoordinateRangeExceedsU32 {
        /// Name of the kernel.
        kernel: &'static str,
        /// The axis whose coordinates overflow `u32`.
        axis: LaunchAxis,
        /// Grid size on that axis, in blocks.
        grid: u32,
        /// Block size on that axis, in threads.
        block: u32,
        /// `grid * block`: threads on that axis.
        positions: u64,
    },
    /// The dynamic shared memory alignment of the contract is not a power of two.
    InvalidSharedMemoryAlignment {
        /// Name of the kernel.
        kernel: &'static str,
        /// The contract's alignment, in bytes.
        alignment: u32,
    },
    /// The block is not the contract's exact shape.
    BlockShapeMismatch {
        /// Name of the kernel.
        kernel: &'static str,
        /// The contract's block shape `(x, y, z)`, in threads.
        required: (u32, u32, u32),
        /// The launch's block shape `(x, y, z)`, in threads.
        actual: (u32, u32, u32),
    },
    /// More threads per block than the contract's maximum (`#[launch_bounds]`).
    BlockThreadsExceedContract {
        /// Name of the kernel.
        kernel: &'static str,
        /// Requested threads per block.
        actual: u64,
        /// The contract's maximum threads per block.
        max: u32,
    },
    /// Dynamic shared memory is not the contract's exact size.
    DynamicSharedMemoryExactMismatch {
        /// Name of the kernel.
        kernel: &'static str,
        /// The contract's dynamic shared memory per block, in bytes.
        required: u32,
        /// The launch's dynamic shared memory per block, in bytes.
        actual: u32,
    },
    /// Dynamic shared memory is outside the contract's range.
    DynamicSharedMemoryOutsideRange {
        /// Name of the kernel.
        kernel: &'static str,
        /// The contract's least dynamic shared memory per block, in bytes.
        min: u32,
        /// The contract's most dynamic shared memory per block, in bytes.
        max: u32,
        /// The launch's dynamic shared memory per block, in bytes.
        actual: u32,
    },
    /// Static plus dynamic shared memory is more than the GPU has per block.
    DeviceSharedMemoryExceeded {
        /// Name of the kernel.
        kernel: &'static str,
        /// Static plus dynamic shared memory per block, in bytes.
        total: u64,
        /// The GPU's shared memory limit per block, in bytes.
        max: u32,
        /// Whether `max` is the opt-in maximum (above the default per-block limit).
        opt_in: bool,
    },
    /// The GPU's compute capability is below the contract's minimum.
    ComputeCapabilityTooLow {
        /// Name of the kernel.
        kernel: &'static str,
        /// The contract's minimum compute capability `(major, minor)`.
        required: (u32, u32),
        /// The GPU's compute capability `(major, minor)`.
        actual: (u32, u32),
    },
    /// A cluster dimension does not divide the grid.
    ClusterDoesNotDivideGrid {
        /// Name of the kernel.
        kernel: &'static str,
        /// The axis that does not divide.
        axis: LaunchAxis,
        /// Grid size on that axis, in blocks.
        grid: u32,
        /// Cluster size on that axis, in blocks.
        cluster: u32,
    },
    /// The stream is on another device than the prepared kernel.
    ContextMismatch {
        /// Name of the kernel.
        kernel: &'static str,
        /// Ordinal of the device the kernel was prepared on.
        function_device: usize,
        /// Ordinal of the stream's device.
        stream_device: usize,
    },
    /// A `requires` relation of the contract does not hold for the launch's arguments.
    SizeRequirementViolated {
        /// Name of the kernel.
        kernel: &'static str,
        /// The relation's source text.
        relation: &'static str,
        /// The evaluated left side.
        lhs: u64,
        /// The evaluated right side.
        rhs: u64,
    },
    /// Evaluating a `requires` relation overflowed `u64`.
    SizeRequirementOverflow {
        /// Name of the kernel.
        kernel: &'static str,
        /// The relation's source text.
        relation: &'static str,
    },
    /// The kernel is `#[cooperative_launch]` and the GPU cannot launch cooperatively.
    CooperativeLaunchUnsupported {
        /// Name of the kernel.
        kernel: &'static str,
    },
    /// The kernel is `#[cooperative_launch]` and the grid has more blocks than the GPU holds at
    /// once, so `grid::sync()` could never return.
    CooperativeGridTooLarge {
        /// Name of the kernel.
        kernel: &'static str,
        /// Blocks in the grid.
        blocks: u64,
        /// Blocks the GPU holds at once with this block size, shared memory (and clusters).
        resident_capacity: u64,
        /// The message naming how the capacity was found.
        message: String,
    },
    /// The driver refused, or a driver call failed.
    Driver(DriverError),
}

impl fmt::Display for LaunchContractError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use LaunchContractError::*;
        match self {
            ZeroDimension { kernel, dimension, axis } => {
                write!(f, "kernel `{kernel}`: {dimension}.{axis} is 0; every dimension must be at least 1")
            }
            DeviceDimensionExceeded { kernel, dimension, axis, actual, max } => {
                write!(f, "kernel `{kernel}`: {dimension}.{axis} is {actual}; the limit is {max}")
            }
            DeviceThreadsPerBlockExceeded { kernel, actual, max } => {
                write!(f, "kernel `{kernel}`: {actual} threads per block; the GPU allows at most {max}")
            }
            FunctionThreadsPerBlockExceeded { kernel, actual, max } => write!(
                f,
                "kernel `{kernel}`: {actual} threads per block; this kernel can run with at most {max} \
                 (its register use); launch smaller blocks"
            ),
            CoordinateRangeExceedsU32 { kernel, axis, grid, block, positions } => write!(
                f,
                "kernel `{kernel}`: grid_dim.{axis} * block_dim.{axis} = {grid} * {block} = {positions} \
                 threads, more than 2^32, but its launch contract has coordinates = u32"
            ),
            InvalidSharedMemoryAlignment { kernel, alignment } => {
                write!(f, "kernel `{kernel}`: dynamic_shared_alignment {alignment} is not a power of two")
            }
            BlockShapeMismatch { kernel, required, actual } => write!(
                f,
                "kernel `{kernel}`: block_dim is {actual:?}, but its launch contract requires block = {required:?}"
            ),
            BlockThreadsExceedContract { kernel, actual, max } => write!(
                f,
                "kernel `{kernel}`: {actual} threads per block, but it is declared with \
                 #[launch_bounds({max})]; use at most {max} threads per block"
            ),
            DynamicSharedMemoryExactMismatch { kernel, required, actual } => write!(
                f,
                "kernel `{kernel}`: shared_mem_bytes is {actual}, but its launch contract requires \
                 dynamic_shared = {required}"
            ),
            DynamicSharedMemoryOutsideRange { kernel, min, max, actual } => write!(
                f,
                "kernel `{kernel}`: shared_mem_bytes is {actual}, but its launch contract requires \
                 dynamic_shared_range = ({min}, {max})"
            ),
            DeviceSharedMemoryExceeded { kernel, total, max, opt_in } => write!(
                f,
                "kernel `{kernel}`: {total} bytes of shared memory per block (static and dynamic); \
                 this GPU allows {max}{}",
                if *opt_in { " (opt-in maximum)" } else { "" }
            ),
            ComputeCapabilityTooLow { kernel, required, actual } => write!(
                f,
                "kernel `{kernel}` needs compute capability {}.{} or newer; this GPU is {}.{}",
                required.0, required.1, actual.0, actual.1
            ),
            ClusterDoesNotDivideGrid { kernel, axis, grid, cluster } => write!(
                f,
                "kernel `{kernel}`: grid_dim.{axis} is {grid}, which is not a multiple of cluster_dim.{axis} = {cluster}"
            ),
            ContextMismatch { kernel, function_device, stream_device } => write!(
                f,
                "kernel `{kernel}` was prepared on device {function_device}, but the stream belongs to device {stream_device}"
            ),
            SizeRequirementViolated { kernel, relation, lhs, rhs } => write!(
                f,
                "kernel `{kernel}`: size requirement `{relation}` does not hold for these arguments \
                 (left side {lhs}, right side {rhs}); nothing was launched"
            ),
            SizeRequirementOverflow { kernel, relation } => write!(
                f,
                "kernel `{kernel}`: size requirement `{relation}` overflows 64 bits for these arguments; \
                 nothing was launched"
            ),
            CooperativeLaunchUnsupported { kernel } => write!(
                f,
                "kernel `{kernel}` is a #[cooperative_launch] kernel, and this GPU cannot launch cooperatively"
            ),
            CooperativeGridTooLarge { message, .. } => f.write_str(message),
            Driver(e) => fmt::Display::fmt(e, f),
        }
    }
}

impl std::error::Error for LaunchContractError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LaunchContractError::Driver(e) => Some(e),
            _ => None,
        }
    }
}

impl From<DriverError> for LaunchContractError {
    fn from(e: DriverError) -> Self {
        LaunchContractError::Driver(e)
    }
}

/// A launch config of kernel `C` checked against its contract and the GPU (by the generated
/// `prepare_<kernel>`): the generated `<kernel>(&stream, &prepared, args..)` launches with it.
pub struct PreparedLaunch<C: KernelLaunchContract + ?Sized> {
    function: Function,
    config: LaunchConfig,
    _kernel: PhantomData<fn() -> C>,
}

impl<C: KernelLaunchContract + ?Sized> Clone for PreparedLaunch<C> {
    fn clone(&self) -> Self {
        PreparedLaunch { function: self.function.clone(), config: self.config, _kernel: PhantomData }
    }
}

impl<C: KernelLaunchContract + ?Sized> fmt::Debug for PreparedLaunch<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PreparedLaunch").field("kernel", &C::SPEC.kernel_name()).field("config", &self.config).finish()
    }
}

impl<C: KernelLaunchContract + ?Sized> PreparedLaunch<C> {
    /// Checks `config` against `C`'s contract, the GPU and the compiled kernel `function`.
    ///
    /// # Safety
    /// `function` is the kernel `C` describes (the generated `prepare_<kernel>` passes its own).
    #[doc(hidden)]
    pub unsafe fn __prepare(function: Function, config: C::Config) -> Result<Self, LaunchContractError> {
        let spec = C::SPEC;
        let kernel = spec.kernel_name();
        let raw = config.to_launch_config();
        check_dims(kernel, &raw)?;
        let threads = raw.threads_per_block();
        let (gx, gy, gz) = raw.grid_dim;
        let (bx, by, bz) = raw.block_dim;
        match spec.block() {
            BlockRequirement::Exact(required) if required != raw.block_dim => {
                return Err(LaunchContractError::BlockShapeMismatch { kernel, required, actual: raw.block_dim });
            }
            BlockRequirement::MaxThreads(max) if threads > u64::from(max) => {
                return Err(LaunchContractError::BlockThreadsExceedContract { kernel, actual: threads, max });
            }
            _ => {}
        }
        if spec.coordinates() == CoordinateRequirement::U32 {
            for (axis, grid, block) in [(LaunchAxis::X, gx, bx), (LaunchAxis::Y, gy, by), (LaunchAxis::Z, gz, bz)] {
                let positions = u64::from(grid) * u64::from(block);
                if positions > 1 << 32 {
                    return Err(LaunchContractError::CoordinateRangeExceedsU32 {
                        kernel,
                        axis,
                        grid,
                        block,
                        positions,
                    });
                }
            }
        }
        let (min, max, alignment) = spec.dynamic_shared_memory().bounds();
        if !alignment.is_power_of_two() {
            return Err(LaunchContractError::InvalidSharedMemoryAlignment { kernel, alignment });
        }
        let actual = raw.shared_mem_bytes;
        if min == max && actual != min {
            return Err(LaunchContractError::DynamicSharedMemoryExactMismatch { kernel, required: min, actual });
        }
        if actual < min || actual > max {
            return Err(LaunchContractError::DynamicSharedMemoryOutsideRange { kernel, min, max, actual });
        }
        if let Some(cluster) =
            spec.cluster().or(function.info().and_then(|i| i.cluster_dims).map(|[x, y, z]| (x, y, z)))
        {
            for (axis, grid, c) in
                [(LaunchAxis::X, gx, cluster.0), (LaunchAxis::Y, gy, cluster.1), (LaunchAxis::Z, gz, cluster.2)]
            {
                if c == 0 || grid % c != 0 {
                    return Err(LaunchContractError::ClusterDoesNotDivideGrid { kernel, axis, grid, cluster: c });
                }
            }
        }
        // What the compiled kernel records (the same contract, read by every launch of it).
        if let Some(contract) = function.info().and_then(|i| i.launch_contract.as_ref())
            && let Err(violation) = contract.check(raw.grid_dim, raw.block_dim, actual)
        {
            return Err(from_violation(kernel, violation));
        }
        let ctx = function.context();
        if let Some(required) = spec.min_compute_capability() {
            let (major, minor) = ctx.compute_capability()?;
            let cc = (major as u32, minor as u32);
            if cc < required {
                return Err(LaunchContractError::ComputeCapabilityTooLow { kernel, required, actual: cc });
            }
        }
        let attributes = function.attributes()?;
        if threads > u64::from(attributes.max_threads_per_block) {
            return Err(LaunchContractError::FunctionThreadsPerBlockExceeded {
                kernel,
                actual: threads,
                max: attributes.max_threads_per_block,
            });
        }
        let total = u64::from(attributes.static_shared_bytes) + u64::from(max.max(actual));
        let limit = ctx.max_shared_memory_per_block_optin();
        if total > u64::from(limit) {
            return Err(LaunchContractError::DeviceSharedMemoryExceeded { kernel, total, max: limit, opt_in: true });
        }
        if spec.cooperative() || function.info().is_some_and(|i| i.cooperative) {
            check_cooperative(kernel, &function, &raw, spec.cluster())?;
        }
        Ok(PreparedLaunch { function, config: raw, _kernel: PhantomData })
    }

    /// The kernel this launch runs.
    pub fn function(&self) -> &Function {
        &self.function
    }

    /// The checked launch config.
    pub fn config(&self) -> LaunchConfig {
        self.config
    }

    /// [`config`](Self::config) under NVIDIA cuda-oxide's name.
    #[doc(hidden)]
    pub fn __raw_config(&self) -> LaunchConfig {
        self.config
    }

    /// Checks that `stream` is on the device the kernel was prepared for.
    pub fn validate_stream<S: crate::LaunchStream + ?Sized>(&self, stream: &S) -> Result<(), LaunchContractError> {
        let stream = stream.cudarc_stream();
        let (function_device, stream_device) = (self.function.context().ordinal(), stream.context().ordinal());
        if function_device != stream_device {
            return Err(LaunchContractError::ContextMismatch {
                kernel: C::SPEC.kernel_name(),
                function_device,
                stream_device,
            });
        }
        Ok(())
    }
}

/// A cooperative kernel's launch: the GPU supports it, and the whole grid is resident at once.
fn check_cooperative(
    kernel: &'static str,
    function: &Function,
    raw: &LaunchConfig,
    cluster: Option<(u32, u32, u32)>,
) -> Result<(), LaunchContractError> {
    if !function.context().supports_cooperative_launch()? {
        return Err(LaunchContractError::CooperativeLaunchUnsupported { kernel });
    }
    let cluster = cluster.or(function.info().and_then(|i| i.cluster_dims).map(|[x, y, z]| (x, y, z)));
    // Occupancy counts dynamic shared memory above the default only once the kernel may use it.
    if raw.shared_mem_bytes > oxide_contract::limits::DEFAULT_SHARED_MEMORY_PER_BLOCK {
        function.set_attribute(
            cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            raw.shared_mem_bytes as i32,
        )?;
    }
    let residency = crate::cooperative::residency(function, raw, cluster)?;
    if !residency.fits() {
        return Err(LaunchContractError::CooperativeGridTooLarge {
            kernel,
            blocks: residency.blocks,
            resident_capacity: residency.capacity,
            message: residency.too_large(kernel),
        });
    }
    Ok(())
}

/// Zero and above-limit dimensions, as contract errors.
fn check_dims(kernel: &'static str, c: &LaunchConfig) -> Result<(), LaunchContractError> {
    let axes = [LaunchAxis::X, LaunchAxis::Y, LaunchAxis::Z];
    let grid = [c.grid_dim.0, c.grid_dim.1, c.grid_dim.2];
    let block = [c.block_dim.0, c.block_dim.1, c.block_dim.2];
    let grid_max = [MAX_GRID_DIM.0, MAX_GRID_DIM.1, MAX_GRID_DIM.2];
    let block_max = [MAX_BLOCK_DIM.0, MAX_BLOCK_DIM.1, MAX_BLOCK_DIM.2];
    for (dimension, values, maxes) in
        [(LaunchDimension::Grid, grid, grid_max), (LaunchDimension::Block, block, block_max)]
    {
        for ((axis, actual), max) in axes.into_iter().zip(values).zip(maxes) {
            if actual == 0 {
                return Err(LaunchContractError::ZeroDimension { kernel, dimension, axis });
            }
            if actual > max {
                return Err(LaunchContractError::DeviceDimensionExceeded { kernel, dimension, axis, actual, max });
            }
        }
    }
    let threads = c.threads_per_block();
    if threads > u64::from(MAX_THREADS_PER_BLOCK) {
        return Err(LaunchContractError::DeviceThreadsPerBlockExceeded {
            kernel,
            actual: threads,
            max: MAX_THREADS_PER_BLOCK,
        });
    }
    Ok(())
}

fn from_violation(kernel: &'static str, v: ContractViolation) -> LaunchContractError {
    match v {
        ContractViolation::OutsideDomain { .. } => {
            LaunchContractError::Driver(DriverError::invalid_config(format!("kernel `{kernel}`: {v}")))
        }
        ContractViolation::BlockShape { required, actual } => LaunchContractError::BlockShapeMismatch {
            kernel,
            required: (required[0], required[1], required[2]),
            actual: (actual[0], actual[1], actual[2]),
        },
        ContractViolation::CoordinatesExceedU32 { axis, grid, block } => {
            LaunchContractError::CoordinateRangeExceedsU32 {
                kernel,
                axis: axis.into(),
                grid,
                block,
                positions: u64::from(grid) * u64::from(block),
            }
        }
        ContractViolation::DynamicShared { min, max, actual } if min == max => {
            LaunchContractError::DynamicSharedMemoryExactMismatch { kernel, required: min, actual }
        }
        ContractViolation::DynamicShared { min, max, actual } => {
            LaunchContractError::DynamicSharedMemoryOutsideRange { kernel, min, max, actual }
        }
    }
}

/// Evaluation of `requires` relations (`#[launch_contract(requires = (a.len() >= n * k))]`) in
/// the generated launch methods: operands widened to `u64`, arithmetic checked.
#[doc(hidden)]
pub mod requires {
    use super::LaunchContractError;

    /// An operand: a length or an unsigned scalar, widened to `u64`.
    pub trait Operand: Copy {
        fn widen(self) -> u64;
    }

    macro_rules! operand {
        ($($t:ty),*) => {$(
            impl Operand for $t {
                #[inline]
                fn widen(self) -> u64 {
                    self as u64
                }
            }
        )*};
    }
    operand!(u8, u16, u32, u64, usize);

    /// `x` widened to `u64`.
    #[inline]
    pub fn widen<T: Operand>(x: T) -> Option<u64> {
        Some(x.widen())
    }

    /// Checks one relation: `holds` compares the two evaluated sides (`None`: overflow).
    pub fn check(
        kernel: &'static str,
        relation: &'static str,
        lhs: Option<u64>,
        rhs: Option<u64>,
        holds: fn(u64, u64) -> bool,
    ) -> Result<(), LaunchContractError> {
        match (lhs, rhs) {
            (Some(lhs), Some(rhs)) if holds(lhs, rhs) => Ok(()),
            (Some(lhs), Some(rhs)) => Err(LaunchContractError::SizeRequirementViolated { kernel, relation, lhs, rhs }),
            _ => Err(LaunchContractError::SizeRequirementOverflow { kernel, relation }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_configs() {
        assert_eq!(
            LaunchConfig1D::new(7, 48, 16).to_launch_config(),
            LaunchConfig { grid_dim: (7, 1, 1), block_dim: (48, 1, 1), shared_mem_bytes: 16 }
        );
        assert_eq!(LaunchConfig2D::new((6, 8), (16, 16), 0).to_launch_config().block_dim, (16, 16, 1));
        assert_eq!(LaunchConfig3D::DOMAIN, 3);
        let e = check_dims("k", &LaunchConfig { grid_dim: (1, 0, 1), block_dim: (1, 1, 1), shared_mem_bytes: 0 });
        assert!(matches!(e, Err(LaunchContractError::ZeroDimension { axis: LaunchAxis::Y, .. })));
    }

    #[test]
    fn requires_relations() {
        let ok = requires::check("k", "a.len() >= n", Some(5), Some(4), |l, r| l >= r);
        assert!(ok.is_ok());
        let e = requires::check("k", "a.len() >= n", Some(3), Some(4), |l, r| l >= r).unwrap_err();
        assert!(matches!(e, LaunchContractError::SizeRequirementViolated { lhs: 3, rhs: 4, .. }));
        assert!(e.to_string().contains("size requirement `a.len() >= n`"), "{e}");
        let e = requires::check("k", "a.len() >= n * k", Some(3), None, |l, r| l >= r).unwrap_err();
        assert!(matches!(e, LaunchContractError::SizeRequirementOverflow { .. }));
    }
}
