// Tiled transpose through shared memory: 32 x 32 tiles padded to 33 columns (no bank
// conflicts), blocks of 32 x 8 threads, each thread moves 4 elements. `in` is height x width,
// `out` is width x height, both row-major.
#define TILE 32
#define BLOCK_ROWS 8

extern "C" __global__ void __launch_bounds__(256) transpose(const float* __restrict__ in,
                                                            float* __restrict__ out, int width, int height) {
    __shared__ float tile[TILE * (TILE + 1)];
    int tx = threadIdx.x, ty = threadIdx.y;
    int x = blockIdx.x * TILE + tx;
    int y = blockIdx.y * TILE + ty;
    for (int j = 0; j < TILE; j += BLOCK_ROWS)
        if (x < width && y + j < height) tile[(ty + j) * (TILE + 1) + tx] = in[(y + j) * width + x];
    __syncthreads();
    x = blockIdx.y * TILE + tx;
    y = blockIdx.x * TILE + ty;
    for (int j = 0; j < TILE; j += BLOCK_ROWS)
        if (x < height && y + j < width) out[(y + j) * height + x] = tile[tx * (TILE + 1) + ty + j];
}
