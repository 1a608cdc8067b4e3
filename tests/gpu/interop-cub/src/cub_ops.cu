// CUB block and warp primitives behind extern "C" device functions, for the Rust kernels of
// main.rs (the CUB scenario of NVIDIA cuda-oxide's device_ffi_test). A block-wide call needs
// every thread of the block; `temp` is shared memory of CUB_TEMP_BYTES bytes (nvcc-flags), which
// the Rust kernel owns and passes by pointer.
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/warp/warp_reduce.cuh>
#include <cub/warp/warp_scan.cuh>

template <typename Storage>
__device__ Storage& storage(void* temp) {
    static_assert(sizeof(Storage) <= CUB_TEMP_BYTES, "CUB needs more shared memory than TEMP_BYTES in main.rs");
    static_assert(alignof(Storage) <= 16, "CUB's storage needs more than the 16-byte alignment of TEMP in main.rs");
    return *reinterpret_cast<Storage*>(temp);
}

using Reduce256 = cub::BlockReduce<float, 256>;
using Reduce128 = cub::BlockReduce<float, 128>;
using ReduceI256 = cub::BlockReduce<int, 256>;
using Scan256 = cub::BlockScan<float, 256>;

// Block-wide: the sum of `input` over 256 threads, valid in thread 0.
extern "C" __device__ float cub_block_reduce_sum_f32_256(float input, void* temp) {
    return Reduce256(storage<Reduce256::TempStorage>(temp)).Sum(input);
}

// Block-wide: the maximum over 256 threads, valid in thread 0.
extern "C" __device__ float cub_block_reduce_max_f32_256(float input, void* temp) {
    return Reduce256(storage<Reduce256::TempStorage>(temp)).Reduce(input, ::cuda::maximum<float>{});
}

// Block-wide: the sum over 128 threads, valid in thread 0.
extern "C" __device__ float cub_block_reduce_sum_f32_128(float input, void* temp) {
    return Reduce128(storage<Reduce128::TempStorage>(temp)).Sum(input);
}

// Block-wide: the integer sum over 256 threads, valid in thread 0.
extern "C" __device__ int cub_block_reduce_sum_i32_256(int input, void* temp) {
    return ReduceI256(storage<ReduceI256::TempStorage>(temp)).Sum(input);
}

// Block-wide exclusive prefix sum over 256 threads; the block's total into *block_sum (all threads).
extern "C" __device__ void cub_block_scan_exclusive_sum_f32_256(float input, float* output, float* block_sum,
                                                                void* temp) {
    float total;
    Scan256(storage<Scan256::TempStorage>(temp)).ExclusiveSum(input, *output, total);
    *block_sum = total;
}

// Block-wide inclusive prefix sum over 256 threads.
extern "C" __device__ void cub_block_scan_inclusive_sum_f32_256(float input, float* output, void* temp) {
    Scan256(storage<Scan256::TempStorage>(temp)).InclusiveSum(input, *output);
}

// Warp-wide (all 32 lanes): CUB's warp reductions return the result in lane 0.
extern "C" __device__ float cub_warp_reduce_sum_f32(float input) {
    __shared__ cub::WarpReduce<float>::TempStorage temp[32];
    return cub::WarpReduce<float>(temp[threadIdx.x / 32 % 32]).Sum(input);
}

extern "C" __device__ float cub_warp_reduce_max_f32(float input) {
    __shared__ cub::WarpReduce<float>::TempStorage temp[32];
    return cub::WarpReduce<float>(temp[threadIdx.x / 32 % 32]).Reduce(input, ::cuda::maximum<float>{});
}

extern "C" __device__ int cub_warp_reduce_sum_i32(int input) {
    __shared__ cub::WarpReduce<int>::TempStorage temp[32];
    return cub::WarpReduce<int>(temp[threadIdx.x / 32 % 32]).Sum(input);
}

// Warp-wide prefix sums, in every lane.
extern "C" __device__ float cub_warp_scan_exclusive_sum_f32(float input) {
    __shared__ cub::WarpScan<float>::TempStorage temp[32];
    float output;
    cub::WarpScan<float>(temp[threadIdx.x / 32 % 32]).ExclusiveSum(input, output);
    return output;
}

extern "C" __device__ float cub_warp_scan_inclusive_sum_f32(float input) {
    __shared__ cub::WarpScan<float>::TempStorage temp[32];
    float output;
    cub::WarpScan<float>(temp[threadIdx.x / 32 % 32]).InclusiveSum(input, output);
    return output;
}

// The shared memory CUB asks for, for the host to check against CUB_TEMP_BYTES.
extern "C" __device__ int cub_get_block_reduce_temp_size_256() { return sizeof(Reduce256::TempStorage); }
extern "C" __device__ int cub_get_block_scan_temp_size_256() { return sizeof(Scan256::TempStorage); }
