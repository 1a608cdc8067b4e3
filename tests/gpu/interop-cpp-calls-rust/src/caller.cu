// A CUDA C++ kernel calling Rust device functions of main.rs. The declarations are those of the
// generated C header (<artifact dir>/gpu_interop_cpp_calls_rust.h), written out here because this
// file is compiled in the same build that generates it.
#include <stdint.h>

extern "C" __device__ float rust_axpy(float a, float x, float y);
extern "C" __device__ uint32_t rust_collatz_steps(uint64_t n);

extern "C" __global__ void cpp_axpy(const float* x, float* y, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = rust_axpy(a, x[i], y[i]);
}

extern "C" __global__ void cpp_collatz(const uint64_t* start, uint32_t* steps, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) steps[i] = rust_collatz_steps(start[i]);
}

// The functions of NVIDIA cuda-oxide's cpp_consumes_rust_device scenario: plain `pub #[device]`
// functions of a crate without kernels, exported under their Rust names.
extern "C" __device__ float fast_sqrt(float x);
extern "C" __device__ float clamp_f32(float v, float lo, float hi);
extern "C" __device__ float safe_sqrt(float x);
extern "C" __device__ float fma_f32(float a, float b, float c);
extern "C" __device__ int32_t fma_i32(int32_t a, int32_t b, int32_t c);

extern "C" __global__ void cpp_scenario(const float* x, float* sqrt_clamped, float* safe, float* f, int32_t* i, int n) {
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < n) {
        sqrt_clamped[k] = clamp_f32(fast_sqrt(x[k]), 0.0f, 10.0f);
        safe[k] = safe_sqrt(x[k]);
        f[k] = fma_f32(x[k], 2.0f, 1.0f);
        i[k] = fma_i32(k, 3, 10);
    }
}
