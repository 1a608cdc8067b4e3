//! cuBLASLt's fp8 GEMM, the reference of the fp8 kernels: `D = scale_a · scale_b · (A·B)` with
//! E4M3 A and B, f32 accumulation (`CUBLAS_COMPUTE_32F`) and bf16 D, the "TN" layout fp8
//! requires, scales as device pointers (`CUBLASLT_MATMUL_DESC_{A,B}_SCALE_POINTER`). Loaded at
//! run time (cudarc's dynamic loading of `libcublasLt.so`). One file for examples/gemm and the
//! bench (`#[path]`), so both time the same call.

use core::ffi::c_void;

use cuda_core::{CudaStream, DeviceBuffer};
use cudarc::cublaslt::{result as lt, sys};

/// Workspace cuBLASLt may use (its heuristics pick among algorithms that fit).
const WORKSPACE: usize = 32 << 20;

/// One planned fp8 GEMM of a fixed shape and fixed buffers on one stream: the descriptors and
/// the algorithm are chosen once, so that [`Fp8Plan::run`] only launches.
pub struct Fp8Plan {
    handle: sys::cublasLtHandle_t,
    desc: sys::cublasLtMatmulDesc_t,
    layouts: [sys::cublasLtMatrixLayout_t; 3],
    algo: sys::cublasLtMatmulAlgo_t,
    workspace: DeviceBuffer<u8>,
    stream: sys::cudaStream_t,
    ptrs: [u64; 3],
}

/// A cuBLASLt error as text.
fn err(what: &str) -> impl Fn(lt::CublasError) -> String + '_ {
    move |e| format!("{what}: {e:?}")
}

impl Fp8Plan {
    /// Plans `c = scale_a[0] · scale_b[0] · (a·b)` for row-major `a` (`m × k` E4M3), `b` stored
    /// `n × k` (E4M3, K × N column-major) and row-major bf16 `c` (`m × n`), all device
    /// addresses, `scale_a`/`scale_b` device addresses of one f32 each. In cuBLASLt's
    /// column-major terms `cᵀ (n × m) = bᵀ · aᵀ`: its A is our `b` seen as K × N (leading
    /// dimension k) and transposed, its B our `a` seen as K × M, its D our `c` seen as N × M
    /// (leading dimension n).
    ///
    /// `fast_accum` sets `CUBLASLT_MATMUL_DESC_FAST_ACCUM`: the MMAs accumulate over all of K
    /// in the tensor cores' own accumulator, as our kernels do; without it cuBLASLt adds the
    /// partial sums into a separate f32 accumulator every few k steps (more exact, slower).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        stream: &CudaStream,
        (m, n, k): (usize, usize, usize),
        fast_accum: bool,
        a: u64,
        b: u64,
        c: u64,
        scale_a: u64,
        scale_b: u64,
    ) -> Result<Fp8Plan, String> {
        // SAFETY: only probes for the library.
        if !unsafe { sys::is_culib_present() } {
            return Err("libcublasLt.so not found (set LD_LIBRARY_PATH to a CUDA toolkit's lib64)".into());
        }
        let workspace = DeviceBuffer::<u8>::zeroed(stream, WORKSPACE).map_err(|e| format!("workspace: {e}"))?;
        let handle = lt::create_handle().map_err(err("cublasLtCreate"))?;
        let desc = lt::create_matmul_desc(sys::cublasComputeType_t::CUBLAS_COMPUTE_32F, sys::cudaDataType::CUDA_R_32F)
            .map_err(err("cublasLtMatmulDescCreate"))?;
        let e4m3 = sys::cudaDataType::CUDA_R_8F_E4M3;
        let bf16 = sys::cudaDataType::CUDA_R_16BF;
        let layouts = [
            lt::create_matrix_layout(e4m3, k as u64, n as u64, k as i64).map_err(err("layout of b"))?,
            lt::create_matrix_layout(e4m3, k as u64, m as u64, k as i64).map_err(err("layout of a"))?,
            lt::create_matrix_layout(bf16, n as u64, m as u64, n as i64).map_err(err("layout of c"))?,
        ];
        let set = |attr: sys::cublasLtMatmulDescAttributes_t, value: *const c_void, size: usize| {
            // SAFETY: a live descriptor; `value` points at `size` bytes of the attribute's type.
            unsafe { lt::set_matmul_desc_attribute(desc, attr, value, size) }
                .map_err(err("cublasLtMatmulDescSetAttribute"))
        };
        use sys::cublasLtMatmulDescAttributes_t as A;
        // cublasOperation_t as an int32: CUBLAS_OP_T is 1, CUBLAS_OP_N 0.
        let (t, nn) = (1i32, 0i32);
        set(A::CUBLASLT_MATMUL_DESC_TRANSA, (&t as *const i32).cast(), 4)?;
        set(A::CUBLASLT_MATMUL_DESC_TRANSB, (&nn as *const i32).cast(), 4)?;
        // Its A is our b: scale_b goes with it.
        set(A::CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, (&scale_b as *const u64).cast(), 8)?;
        set(A::CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, (&scale_a as *const u64).cast(), 8)?;
        let fast = i8::from(fast_accum);
        set(A::CUBLASLT_MATMUL_DESC_FAST_ACCUM, (&fast as *const i8).cast(), 1)?;
        let pref = lt::create_matmul_pref().map_err(err("cublasLtMatmulPreferenceCreate"))?;
        let bytes = WORKSPACE as u64;
        // SAFETY: a live preference; a u64 as the attribute takes.
        unsafe {
            lt::set_matmul_pref_attribute(
                pref,
                sys::cublasLtMatmulPreferenceAttributes_t::CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                (&bytes as *const u64).cast(),
                8,
            )
        }
        .map_err(err("cublasLtMatmulPreferenceSetAttribute"))?;
        // SAFETY: live descriptors and layouts.
        let heuristic = unsafe {
            lt::get_matmul_algo_heuristic(handle, desc, layouts[0], layouts[1], layouts[2], layouts[2], pref)
        };
        // SAFETY: ours, no longer used.
        let _ = unsafe { lt::destroy_matmul_pref(pref) };
        let algo = heuristic.map_err(err("cublasLtMatmulAlgoGetHeuristic (fp8 e4m3, TN, bf16 D)"))?.algo;
        Ok(Fp8Plan {
            handle,
            desc,
            layouts,
            algo,
            workspace,
            stream: stream.raw() as sys::cudaStream_t,
            ptrs: [a, b, c],
        })
    }

    /// Enqueues the planned GEMM.
    pub fn run(&self) -> Result<(), String> {
        let (alpha, beta) = (1.0f32, 0.0f32);
        let [a, b, c] = self.ptrs;
        let [lb, la, lc] = self.layouts;
        // SAFETY: the plan's descriptors are live; the buffers were given to `new` as device
        // memory of the planned shapes and outlive the stream's use; C is D (beta 0).
        unsafe {
            lt::matmul(
                self.handle,
                self.desc,
                (&alpha as *const f32).cast(),
                (&beta as *const f32).cast(),
                b as *const c_void,
                lb,
                a as *const c_void,
                la,
                c as *const c_void,
                lc,
                c as *mut c_void,
                lc,
                &self.algo,
                self.workspace.as_device_ptr() as *mut c_void,
                WORKSPACE,
                self.stream,
            )
        }
        .map_err(err("cublasLtMatmul (fp8)"))
    }
}

impl Drop for Fp8Plan {
    fn drop(&mut self) {
        // SAFETY: ours, no longer used; errors are ignored (Drop never panics).
        unsafe {
            for l in self.layouts {
                let _ = lt::destroy_matrix_layout(l);
            }
            let _ = lt::destroy_matmul_desc(self.desc);
            let _ = lt::destroy_handle(self.handle);
        }
    }
}
