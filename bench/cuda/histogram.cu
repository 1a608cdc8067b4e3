// 256-bin histogram of bytes read as 32-bit words: per-block counts with shared-memory atomics
// (4 per word), merged into the global bins with one global atomic per non-empty bin.
// 256 threads per block, grid-stride over the words.
extern "C" __global__ void __launch_bounds__(256) histogram(const unsigned* __restrict__ words,
                                                            unsigned* __restrict__ bins, int n_words) {
    __shared__ unsigned counts[256];
    int tid = threadIdx.x;
    counts[tid] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + tid; i < n_words; i += blockDim.x * gridDim.x) {
        unsigned w = words[i];
        atomicAdd(&counts[w & 0xff], 1u);
        atomicAdd(&counts[(w >> 8) & 0xff], 1u);
        atomicAdd(&counts[(w >> 16) & 0xff], 1u);
        atomicAdd(&counts[w >> 24], 1u);
    }
    __syncthreads();
    unsigned c = counts[tid];
    if (c != 0) atomicAdd(&bins[tid], c);
}
