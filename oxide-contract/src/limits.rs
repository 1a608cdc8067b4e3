//! Launch limits every CUDA GPU of the supported architectures has, checked before a launch by
//! the host runtime and at compile time by the macros (`#[launch_bounds]`, `#[cluster_launch]`).

/// Most threads in one block.
pub const MAX_THREADS_PER_BLOCK: u32 = 1024;
/// Largest `block_dim` per axis `(x, y, z)`.
pub const MAX_BLOCK_DIM: (u32, u32, u32) = (1024, 1024, 64);
/// Largest `grid_dim` per axis `(x, y, z)`.
pub const MAX_GRID_DIM: (u32, u32, u32) = ((1 << 31) - 1, 65_535, 65_535);
/// Most blocks in one cluster (sm_90); above [`MAX_PORTABLE_CLUSTER_SIZE`] it is opted into per kernel.
pub const MAX_CLUSTER_SIZE: u32 = 16;
/// Most blocks in one cluster that every cluster-capable GPU supports.
pub const MAX_PORTABLE_CLUSTER_SIZE: u32 = 8;
/// Bytes of kernel parameters PTX ISA before 8.1 allows.
pub const CLASSIC_KERNEL_PARAM_BYTES: u64 = 4096;
/// Bytes of kernel parameters PTX ISA 8.1 and later allow (sm_70 and newer, CUDA 12.1 drivers).
pub const MAX_KERNEL_PARAM_BYTES: u64 = 32764;
/// The PTX ISA that allows [`MAX_KERNEL_PARAM_BYTES`].
pub const LARGE_PARAMS_PTX_ISA: (u32, u32) = (8, 1);
/// The PTX ISA at least of a module with hand-written PTX (`ptx_asm!`): the statements may use any
/// instruction of the arch, and the lowest ISA of sm_90 (7.8) lacks some (`multimem.*` needs 8.1).
/// 8.6 (CUDA 12.8) has every sm_90 instruction; drivers since 12.8 JIT it.
pub const INLINE_PTX_ISA: (u32, u32) = (8, 6);

/// Shared memory (static plus dynamic) a block gets without opting in; more needs the kernel's
/// `MAX_DYNAMIC_SHARED_SIZE_BYTES` attribute, which the launch sets.
pub const DEFAULT_SHARED_MEMORY_PER_BLOCK: u32 = 48 * 1024;

const _: () = assert!(MAX_BLOCK_DIM.0 <= MAX_THREADS_PER_BLOCK && MAX_BLOCK_DIM.2 < MAX_THREADS_PER_BLOCK);
const _: () = assert!(MAX_PORTABLE_CLUSTER_SIZE < MAX_CLUSTER_SIZE);
