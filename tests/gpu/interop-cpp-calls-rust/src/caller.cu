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
