// Block-level sum: a grid-stride loop accumulates in a register, warp shuffles (xor butterfly)
// reduce each warp, the 8 warp sums meet in shared memory, warp 0 reduces them and thread 0
// writes the block's partial sum. 256 threads per block.
extern "C" __global__ void __launch_bounds__(256) block_sum(const float* __restrict__ x,
                                                            float* __restrict__ partial, int n) {
    __shared__ float warp_sums[8];
    float acc = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) acc += x[i];
    for (int offset = 16; offset > 0; offset >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, offset);
    int lane = threadIdx.x & 31;
    int warp = threadIdx.x >> 5;
    if (lane == 0) warp_sums[warp] = acc;
    __syncthreads();
    if (warp == 0) {
        float v = lane < 8 ? warp_sums[lane] : 0.0f;
        for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
        if (lane == 0) partial[blockIdx.x] = v;
    }
}
