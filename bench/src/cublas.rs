//! cuBLAS SGEMM as the reference point of the register-blocked SGEMM, loaded at run time
//! (cudarc's dynamic loading of `libcublas.so`; `run.sh` adds the CUDA toolkit's and the Python
//! wheels' library folders to `LD_LIBRARY_PATH`). A machine without cuBLAS just skips it.

use cuda_core::CudaStream;
use cudarc::cublas::sys;

/// A cuBLAS handle bound to one stream.
pub struct Cublas {
    handle: sys::cublasHandle_t,
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

impl Drop for Cublas {
    fn drop(&mut self) {
        // SAFETY: the handle is ours and no longer used.
        let _ = unsafe { cudarc::cublas::result::destroy_handle(self.handle) };
    }
}
