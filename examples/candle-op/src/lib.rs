//! A candle custom op written as a cuda-oxide kernel: fused RMSNorm over the last dimension,
//! `out[r, c] = x[r, c] / sqrt(mean_c(x[r, c]^2) + eps) * w[c]`, one block of 256 threads per row.
//!
//! The op's CUDA path launches the kernel on candle's own storage (`CudaStorage` holds cudarc
//! `CudaSlice`s) and candle's stream (`CudaDevice::cuda_stream()`, a cudarc `CudaStream`): the
//! launch method takes cudarc's types directly, so there is no copy and no second memory type.
//! The output is a cudarc slice allocated on candle's stream and handed back to candle.
//!
//! ```no_run
//! use candle_core::{Device, Tensor};
//! let dev = Device::new_cuda(0)?;
//! let x = Tensor::randn(0f32, 1.0, (8, 4096), &dev)?;
//! let w = Tensor::ones(4096, candle_core::DType::F32, &dev)?;
//! let y = candle_op::rms_norm(&x, &w, 1e-6)?;
//! # Ok::<(), candle_core::Error>(())
//! ```
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use candle_core::backend::BackendStorage;
use candle_core::{CpuStorage, CudaStorage, CustomOp2, Layout, Result, Shape, Tensor};
use cuda_core::{CudaContext, LaunchConfig};
use cuda_device::{SharedMemory, cuda_module, kernel, launch_bounds, sync_threads, thread, warp};

/// Threads per block (one block per row).
const BLOCK: u32 = 256;

#[cuda_module]
pub mod kernels {
    use super::*;

    /// The sum of `v` over the block's 256 threads, in every thread.
    #[inline(always)]
    fn block_sum(v: f32) -> f32 {
        static PARTS: SharedMemory<f32, 8> = SharedMemory::UNINIT;
        let t = thread::threadIdx_x() as usize;
        let v = warp::reduce_sum(v);
        if t.is_multiple_of(32) {
            // SAFETY: one writer per slot; read after the barrier below.
            unsafe { PARTS.write(t / 32, v) };
        }
        sync_threads();
        let mut total = 0.0;
        for w in 0..8 {
            // SAFETY: written before the barrier.
            total += unsafe { PARTS.read(w) };
        }
        total
    }

    /// RMSNorm of row `blockIdx.x` of a `rows × cols` matrix, scaled by `w` (`cols` long).
    #[kernel]
    #[launch_bounds(256)]
    pub fn rms_norm(x: &[f32], w: &[f32], out: &mut [f32], cols: u32, eps: f32) {
        let t = thread::threadIdx_x() as usize;
        let cols = cols as usize;
        let base = thread::blockIdx_x() as usize * cols;
        let mut sum = 0.0f32;
        let mut c = t;
        while c < cols {
            let v = x[base + c];
            sum += v * v;
            c += BLOCK as usize;
        }
        let scale = 1.0 / (block_sum(sum) / cols as f32 + eps).sqrt();
        let mut c = t;
        while c < cols {
            out[base + c] = x[base + c] * scale * w[c];
            c += BLOCK as usize;
        }
    }
}

/// Fused RMSNorm as a candle op: `x.apply_op2_no_bwd(&w, &RmsNorm { eps })`, or [`rms_norm`].
/// f32, `x` contiguous with its last dimension the size of `w`.
#[derive(Clone, Copy, Debug)]
pub struct RmsNorm {
    /// Added to the mean square before the square root.
    pub eps: f32,
    /// Fill the output with NaN before the kernel writes it (for checking that it writes every
    /// element; costs an upload).
    pub poison_output: bool,
}

/// `x` RMS-normalised over its last dimension and scaled by `w` (candle's `rms_norm` op, fused).
pub fn rms_norm(x: &Tensor, w: &Tensor, eps: f32) -> Result<Tensor> {
    x.apply_op2_no_bwd(w, &RmsNorm { eps, poison_output: false })
}

/// candle's own composition of ops for the same (what the fused op replaces).
pub fn rms_norm_composed(x: &Tensor, w: &Tensor, eps: f32) -> Result<Tensor> {
    let mean_square = x.sqr()?.mean_keepdim(candle_core::D::Minus1)?;
    let scale = (mean_square + f64::from(eps))?.sqrt()?.recip()?;
    x.broadcast_mul(&scale)?.broadcast_mul(w)
}

/// `(rows, cols)` of `x` and the element range of `x` and `w`, after the op's checks.
fn shapes(name: &str, l1: &Layout, l2: &Layout) -> Result<(usize, usize, (usize, usize), (usize, usize))> {
    let dims = l1.dims();
    let Some(&cols) = dims.last() else {
        candle_core::bail!("{name}: x is a scalar; it needs a last dimension to normalise over")
    };
    if l2.dims() != [cols] {
        candle_core::bail!("{name}: w has shape {:?}; it must be ({cols},), the last dimension of x", l2.dims())
    }
    let (Some(xr), Some(wr)) = (l1.contiguous_offsets(), l2.contiguous_offsets()) else {
        candle_core::bail!("{name}: x and w must be contiguous; call .contiguous() first")
    };
    let rows = l1.shape().elem_count() / cols.max(1);
    Ok((rows, cols, xr, wr))
}

impl CustomOp2 for RmsNorm {
    fn name(&self) -> &'static str {
        "cuda-oxide-rms-norm"
    }

    /// The CPU path: the same computation, for tensors on the CPU.
    fn cpu_fwd(&self, s1: &CpuStorage, l1: &Layout, s2: &CpuStorage, l2: &Layout) -> Result<(CpuStorage, Shape)> {
        let (rows, cols, xr, wr) = shapes(self.name(), l1, l2)?;
        let (CpuStorage::F32(x), CpuStorage::F32(w)) = (s1, s2) else {
            candle_core::bail!("{}: f32 tensors only", self.name())
        };
        let (x, w) = (&x[xr.0..xr.1], &w[wr.0..wr.1]);
        let mut out = vec![0f32; rows * cols];
        for (row, o) in x.chunks(cols.max(1)).zip(out.chunks_mut(cols.max(1))) {
            let scale = 1.0 / (row.iter().map(|v| v * v).sum::<f32>() / cols as f32 + self.eps).sqrt();
            for ((o, &v), &wc) in o.iter_mut().zip(row).zip(w) {
                *o = v * scale * wc;
            }
        }
        Ok((CpuStorage::F32(out), l1.shape().clone()))
    }

    /// The CUDA path: our kernel on candle's slices and stream.
    fn cuda_fwd(&self, s1: &CudaStorage, l1: &Layout, s2: &CudaStorage, l2: &Layout) -> Result<(CudaStorage, Shape)> {
        let (rows, cols, xr, wr) = shapes(self.name(), l1, l2)?;
        let x = s1.as_cuda_slice::<f32>()?.slice(xr.0..xr.1);
        let w = s2.as_cuda_slice::<f32>()?.slice(wr.0..wr.1);
        let dev = s1.device();
        let stream = dev.cuda_stream();
        let mut out = dev.alloc_zeros::<f32>(rows * cols)?;
        if self.poison_output {
            dev.memcpy_htod(&vec![f32::NAN; rows * cols], &mut out)?;
        }
        if rows > 0 && cols > 0 {
            let module = module_for(&stream).map_err(cuda_error)?;
            let Ok(grid) = u32::try_from(rows) else {
                candle_core::bail!("{}: {rows} rows are more than one launch takes", self.name())
            };
            let cfg = LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (BLOCK, 1, 1), shared_mem_bytes: 0 };
            module.rms_norm(&stream, cfg, &x, &w, &mut out, cols as u32, self.eps).map_err(cuda_error)?;
        }
        Ok((CudaStorage::wrap_cuda_slice(out, dev.clone()), l1.shape().clone()))
    }
}

/// Our module on the context of candle's stream, loaded once per context.
fn module_for(
    stream: &Arc<cuda_core::cudarc::driver::CudaStream>,
) -> std::result::Result<Arc<kernels::Module>, cuda_core::DriverError> {
    static MODULES: Mutex<Option<HashMap<usize, Arc<kernels::Module>>>> = Mutex::new(None);
    let key = stream.context().cu_ctx() as usize;
    let mut modules = MODULES.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let modules = modules.get_or_insert_with(HashMap::new);
    if let Some(module) = modules.get(&key) {
        return Ok(Arc::clone(module));
    }
    let ctx: Arc<CudaContext> = CudaContext::from_cudarc(stream.context())?;
    let module = Arc::new(kernels::load(&ctx)?);
    modules.insert(key, Arc::clone(&module));
    Ok(module)
}

/// Our error as candle's.
fn cuda_error(e: cuda_core::DriverError) -> candle_core::Error {
    candle_core::Error::Cuda(Box::new(e))
}
