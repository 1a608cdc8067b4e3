//! cuBLAS's bf16 GEMM (`cublasGemmEx`), the reference the example checks and times against,
//! loaded at run time (cudarc's dynamic loading of `libcublas.so`: put a CUDA toolkit's or the
//! `nvidia-cublas` wheel's library folder on `LD_LIBRARY_PATH`). Without it the example skips
//! the comparison. One file for examples/gemm and the bench (`#[path]`), so both time the same
//! call.

use cuda_core::CudaStream;
use cudarc::cublas::sys;
use gemm::Layout;

/// A cuBLAS handle bound to one stream.
pub struct Cublas {
    pub(crate) handle: sys::cublasHandle_t,
}

impl Cublas {
    /// A handle on `stream` (the primary context, which cuda_core also uses), or why not.
    pub fn new(stream: &CudaStream) -> Result<Cublas, String> {
        // SAFETY: only probes for the library.
        if !unsafe { sys::is_culib_present() } {
            return Err("libcublas.so not found (set LD_LIBRARY_PATH to a CUDA toolkit's lib64)".into());
        }
        let handle = cudarc::cublas::result::create_handle().map_err(|e| format!("cublasCreate: {e:?}"))?;
        // SAFETY: a fresh handle; the stream outlives the handle's use in this process.
        unsafe { cudarc::cublas::result::set_stream(handle, stream.raw() as sys::cudaStream_t) }
            .map_err(|e| format!("cublasSetStream: {e:?}"))?;
        Ok(Cublas { handle })
    }

    /// `c = a · b` in bf16 with f32 accumulation (`CUBLAS_COMPUTE_32F`): `a` (`m × k`) and `b`
    /// (`k × n`) stored as their layouts say, `c` row-major `m × n`. In cuBLAS's column-major
    /// terms `cᵀ (n × m) = op(b) op(a)`: a row-major matrix is its transpose, column-major, so a
    /// K-contiguous operand (A row-major, B column-major) is `CUBLAS_OP_T`'s for B and
    /// `CUBLAS_OP_N`'s for A, and the other way round otherwise.
    pub fn gemm_bf16(
        &self,
        (m, n, k): (usize, usize, usize),
        (a, a_layout): (u64, Layout),
        (b, b_layout): (u64, Layout),
        c: u64,
    ) -> Result<(), String> {
        use sys::cublasOperation_t::{CUBLAS_OP_N, CUBLAS_OP_T};
        let (alpha, beta) = (1.0f32, 0.0f32);
        let bf16 = sys::cudaDataType::CUDA_R_16BF;
        let (op_b, ld_b) = if b_layout == Layout::ColMajor { (CUBLAS_OP_T, k) } else { (CUBLAS_OP_N, n) };
        let (op_a, ld_a) = if a_layout == Layout::RowMajor { (CUBLAS_OP_N, k) } else { (CUBLAS_OP_T, m) };
        // SAFETY: the pointers are device buffers of the stated shapes, alive until the stream
        // is synchronised; alpha/beta are f32 as COMPUTE_32F requires.
        unsafe {
            cudarc::cublas::result::gemm_ex(
                self.handle,
                op_b,
                op_a,
                n as i32,
                m as i32,
                k as i32,
                (&alpha as *const f32).cast(),
                b as *const core::ffi::c_void,
                bf16,
                ld_b as i32,
                a as *const core::ffi::c_void,
                bf16,
                ld_a as i32,
                (&beta as *const f32).cast(),
                c as *mut core::ffi::c_void,
                bf16,
                n as i32,
                sys::cublasComputeType_t::CUBLAS_COMPUTE_32F,
                sys::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
            )
        }
        .map_err(|e| format!("cublasGemmEx (bf16): {e:?}"))
    }
}

impl Drop for Cublas {
    fn drop(&mut self) {
        // SAFETY: the handle is ours and no longer used.
        let _ = unsafe { cudarc::cublas::result::destroy_handle(self.handle) };
    }
}
