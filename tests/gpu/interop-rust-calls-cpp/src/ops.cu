// CUDA C++ device functions that the Rust kernels of main.rs call (cuda-sources in Cargo.toml).
#include <stdint.h>

// Explicitly fused, so the CPU reference (f32::mul_add) is bit-exact whatever nvJitLink contracts.
extern "C" __device__ float cpp_axpb(float x, float a, float b) { return fmaf(x, a, b); }

// An integer hash; OPS_OFFSET comes from nvcc-flags.
extern "C" __device__ uint32_t cpp_mix(uint32_t x, uint32_t salt) {
    x ^= salt;
    x *= 0x9E3779B1u;
    x ^= x >> 15;
    return x + OPS_OFFSET;
}

// A pointer argument: the sum of n floats at p (read-only).
extern "C" __device__ float cpp_sum(const float* p, uint32_t n) {
    float s = 0.0f;
    for (uint32_t i = 0; i < n; ++i) s += p[i];
    return s;
}

// Warp-wide (all 32 lanes must call): the sum of x over the warp, in every lane.
extern "C" __device__ uint32_t cpp_warp_sum(uint32_t x) {
    for (int offset = 16; offset > 0; offset /= 2) x += __shfl_xor_sync(0xffffffffu, x, offset);
    return x;
}

// Warp-wide: bit l set when lane l's predicate is non-zero.
extern "C" __device__ uint32_t cpp_warp_ballot(int32_t predicate) { return __ballot_sync(0xffffffffu, predicate); }

// No result: writes through a pointer.
extern "C" __device__ void cpp_store_twice(uint32_t* p, uint32_t v) { *p = 2u * v; }
