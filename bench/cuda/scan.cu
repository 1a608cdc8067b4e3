// Inclusive scan of unsigned ints (wrapping), three passes like the Rust kernels: the sum of each
// block's 1024 elements (256 threads x one uint4), one block turning those sums into exclusive
// prefixes, and each block's scan plus its offset. Block scans: warp shuffles, then the eight
// warp totals through shared memory.

// Exclusive prefix of v over the block; *total gets the block's sum.
__device__ __forceinline__ unsigned block_exclusive_scan_256(unsigned v, unsigned* total) {
    __shared__ unsigned parts[8];
    int t = threadIdx.x, lane = t & 31;
    unsigned inclusive = v;
    for (int offset = 1; offset < 32; offset <<= 1) {
        unsigned o = __shfl_up_sync(0xffffffffu, inclusive, offset);
        if (lane >= offset) inclusive += o;
    }
    __syncthreads();
    if (lane == 31) parts[t >> 5] = inclusive;
    __syncthreads();
    unsigned before = 0, sum = 0;
    for (int w = 0; w < 8; ++w) {
        unsigned p = parts[w];
        if (w < (t >> 5)) before += p;
        sum += p;
    }
    *total = sum;
    return before + inclusive - v;
}

extern "C" __global__ void __launch_bounds__(256) scan_reduce(const uint4* __restrict__ x, unsigned* __restrict__ sums) {
    uint4 v = x[blockIdx.x * 256 + threadIdx.x];
    unsigned total;
    block_exclusive_scan_256(v.x + v.y + v.z + v.w, &total);
    if (threadIdx.x == 0) sums[blockIdx.x] = total;
}

extern "C" __global__ void __launch_bounds__(256) scan_offsets(unsigned* __restrict__ sums, int len, int per) {
    int t = threadIdx.x;
    unsigned carry = 0;
    for (int chunk = 0; chunk < len; chunk += 256 * per) {
        int start = chunk + t * per;
        unsigned mine = 0;
#pragma unroll 16
        for (int k = 0; k < per; ++k)
            if (start + k < len) mine += sums[start + k];
        unsigned total;
        unsigned run = carry + block_exclusive_scan_256(mine, &total);
#pragma unroll 16
        for (int k = 0; k < per; ++k)
            if (start + k < len) {
                unsigned s = sums[start + k];
                sums[start + k] = run;
                run += s;
            }
        carry += total;
    }
}

extern "C" __global__ void __launch_bounds__(256) scan_tile(const uint4* __restrict__ x,
                                                            const unsigned* __restrict__ offsets,
                                                            uint4* __restrict__ y, int n4) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    uint4 v = x[i];
    unsigned s1 = v.x + v.y, s2 = s1 + v.z, s3 = s2 + v.w;
    unsigned total;
    unsigned off = offsets[blockIdx.x] + block_exclusive_scan_256(s3, &total);
    if (i < n4) y[i] = make_uint4(off + v.x, off + s1, off + s2, off + s3);
}
