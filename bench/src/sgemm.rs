//! cuBLAS SGEMM as the reference point of the register-blocked SGEMM, on the handle of
//! examples/gemm's `Cublas` (the bench's `cublas` module is that file; `run.sh` adds the CUDA
//! toolkit's and the Python wheels' library folders to `LD_LIBRARY_PATH`). A machine without
//! cuBLAS just skips it.

use cudarc::cublas::sys;

use crate::cublas::Cublas;

impl Cublas {
    /// `c = a * b` for row-major `m × k` and `k × n` device matrices: column-major cuBLAS
    /// computes `cᵀ = bᵀ aᵀ`, which is the same memory.
    pub fn sgemm_row_major(&self, m: usize, n: usize, k: usize, a: u64, b: u64, c: u64) -> Result<(), String> {
        let (alpha, beta) = (1.0f32, 0.0f32);
        let op = sys::cublasOperation_t::CUBLAS_OP_N;
        // SAFETY: the pointers are device buffers of the stated shapes, alive until the stream
        // is synchronised.
        unsafe {
            cudarc::cublas::result::sgemm(
                self.handle,
                op,
                op,
                n as i32,
                m as i32,
                k as i32,
                &alpha,
                b as *const f32,
                n as i32,
                a as *const f32,
                k as i32,
                &beta,
                c as *mut f32,
                n as i32,
            )
        }
        .map_err(|e| format!("cublasSgemm: {e:?}"))
    }
}
