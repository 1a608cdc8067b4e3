//! What a kernel needs from the GPU (registers, local memory, shared memory, threads per block),
//! the per-thread stack the launch raises for it, and what a failed launch was short of.
//!
//! A kernel whose per-thread arrays or spills need more local memory than the context's stack
//! limit (1 KB by default) fails to launch with `CUDA_ERROR_INVALID_VALUE`, which says nothing
//! about why: the launch raises the limit first when the GPU allows it, and a launch the GPU
//! cannot run gets an error that names the resource, the amount and the fix.

use std::sync::atomic::{AtomicUsize, Ordering};

use cudarc::driver::sys::{self, CUfunction_attribute as FuncAttr, CUresult};

use crate::context::CudaContext;
use crate::driver::check;
use crate::error::DriverError;
use crate::launch::LaunchConfig;
use crate::module::Function;

/// Most local memory one thread may have (every architecture from sm_20 on).
pub const MAX_LOCAL_BYTES_PER_THREAD: u32 = 512 * 1024;

/// A kernel's resource needs, as the driver reports them for the loaded code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FunctionAttributes {
    /// Registers per thread.
    pub registers: u32,
    /// Local memory per thread in bytes (per-thread arrays, spills, the call stack's frames).
    pub local_bytes: u32,
    /// Static shared memory per block in bytes (`SharedArray` statics).
    pub static_shared_bytes: u32,
    /// The most threads per block this kernel can be launched with (its register use can make
    /// it fewer than 1024).
    pub max_threads_per_block: u32,
}

impl Function {
    /// The kernel's resource needs (registers, local and shared memory, threads per block).
    pub fn attributes(&self) -> Result<FunctionAttributes, DriverError> {
        self.context().bind_to_thread()?;
        let get = |attr: FuncAttr| -> Result<u32, DriverError> {
            let mut value = 0i32;
            // SAFETY: the function is live and its context bound.
            check(unsafe { sys::cuFuncGetAttribute(&mut value, attr, self.raw()) }, "cuFuncGetAttribute")
                .map_err(|e| e.context(format!("reading the attributes of kernel `{}`", self.entry())))?;
            Ok(value.max(0) as u32)
        };
        Ok(FunctionAttributes {
            registers: get(FuncAttr::CU_FUNC_ATTRIBUTE_NUM_REGS)?,
            local_bytes: get(FuncAttr::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)?,
            static_shared_bytes: get(FuncAttr::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)?,
            max_threads_per_block: get(FuncAttr::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
        })
    }
}

/// The context's per-thread stack size, as last read or set (0: not read yet).
#[derive(Default)]
pub(crate) struct StackLimit(AtomicUsize);

impl CudaContext {
    /// The per-thread stack size of this context (`CU_LIMIT_STACK_SIZE`), in bytes.
    pub fn stack_size(&self) -> Result<usize, DriverError> {
        let known = self.stack_limit().0.load(Ordering::Relaxed);
        if known != 0 {
            return Ok(known);
        }
        self.bind_to_thread()?;
        let mut bytes = 0usize;
        // SAFETY: the context is bound.
        check(unsafe { sys::cuCtxGetLimit(&mut bytes, sys::CUlimit::CU_LIMIT_STACK_SIZE) }, "cuCtxGetLimit")?;
        self.stack_limit().0.store(bytes, Ordering::Relaxed);
        Ok(bytes)
    }

    /// Raises the per-thread stack to at least `bytes` (never lowers it).
    pub fn ensure_stack_size(&self, bytes: usize) -> Result<(), DriverError> {
        if self.stack_size()? >= bytes {
            return Ok(());
        }
        self.bind_to_thread()?;
        // SAFETY: the context is bound.
        check(unsafe { sys::cuCtxSetLimit(sys::CUlimit::CU_LIMIT_STACK_SIZE, bytes) }, "cuCtxSetLimit")
            .map_err(|e| e.context(format!("raising the per-thread stack to {bytes} bytes")))?;
        self.stack_limit().0.store(bytes, Ordering::Relaxed);
        Ok(())
    }
}

/// Before a launch: makes the stack large enough for the kernel's local memory.
pub(crate) fn prepare(f: &Function) -> Result<(), DriverError> {
    let local = f.local_bytes()?;
    if local as usize <= f.context().stack_size()? {
        return Ok(());
    }
    if local > MAX_LOCAL_BYTES_PER_THREAD {
        return Err(local_too_large(f, local));
    }
    // Round up, so kernels of similar size do not raise the limit one after the other.
    f.context().ensure_stack_size((local as usize).next_multiple_of(4096)).map_err(|cuda| {
        DriverError::LaunchResources {
            entry: f.entry().to_string(),
            cuda: Box::new(cuda),
            cause: format!(
                "the kernel needs {local} bytes of local memory per thread (per-thread arrays, spills), more than \
             the stack the GPU could give every resident thread"
            ),
            fix: "make the per-thread arrays smaller, or keep large data in a device buffer or shared memory".into(),
        }
    })
}

fn local_too_large(f: &Function, local: u32) -> DriverError {
    DriverError::LaunchResources {
        entry: f.entry().to_string(),
        cuda: Box::new(DriverError::from_cuda(CUresult::CUDA_ERROR_INVALID_VALUE, "cuLaunchKernel")),
        cause: format!(
            "the kernel needs {local} bytes of local memory per thread (per-thread arrays, spills); a thread \
             may have at most {MAX_LOCAL_BYTES_PER_THREAD}"
        ),
        fix: "make the per-thread arrays smaller, or keep large data in a device buffer or shared memory".into(),
    }
}

/// After a failed launch: names the resource the kernel was short of, when the failure is one
/// of those; otherwise `error` unchanged.
pub(crate) fn explain(f: &Function, config: &LaunchConfig, error: DriverError) -> DriverError {
    let resource_error = matches!(
        error.name(),
        "CUDA_ERROR_INVALID_VALUE" | "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES" | "CUDA_ERROR_OUT_OF_MEMORY"
    );
    if !resource_error {
        return error;
    }
    let Ok(attrs) = f.attributes() else { return error };
    let threads = config.threads_per_block();
    let ctx = f.context();
    let shared = u64::from(attrs.static_shared_bytes) + u64::from(config.shared_mem_bytes);
    let (cause, fix) = if attrs.local_bytes > MAX_LOCAL_BYTES_PER_THREAD {
        return local_too_large(f, attrs.local_bytes);
    } else if threads > u64::from(attrs.max_threads_per_block) {
        (
            format!(
                "the kernel uses {} registers per thread, so a block may have at most {} threads; the launch asks for {threads}",
                attrs.registers, attrs.max_threads_per_block
            ),
            format!(
                "launch with at most {} threads per block, or give the kernel #[launch_bounds({threads})] so the \
                 compiler keeps its register use within that block size",
                attrs.max_threads_per_block
            ),
        )
    } else if shared > u64::from(ctx.max_shared_memory_per_block_optin()) {
        (
            format!(
                "the kernel needs {shared} bytes of shared memory per block ({} static, {} dynamic); this GPU allows {}",
                attrs.static_shared_bytes,
                config.shared_mem_bytes,
                ctx.max_shared_memory_per_block_optin()
            ),
            "use less shared memory per block (smaller tiles, or fewer threads per block)".to_string(),
        )
    } else if attrs.local_bytes as usize > ctx.stack_size().unwrap_or(usize::MAX) {
        (
            format!(
                "the kernel needs {} bytes of local memory per thread, more than the stack of {} bytes",
                attrs.local_bytes,
                ctx.stack_size().unwrap_or(0)
            ),
            "make the per-thread arrays smaller, or raise the limit with `CudaContext::ensure_stack_size`".to_string(),
        )
    } else {
        return error;
    };
    DriverError::LaunchResources { entry: f.entry().to_string(), cuda: Box::new(error), cause, fix }
}
