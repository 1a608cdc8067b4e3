// 5-point stencil on an n x n double grid: interior points get
// c0 * centre + c1 * (north + south + west + east), the border is copied. 32 x 8 blocks.
extern "C" __global__ void stencil5(const double* __restrict__ in, double* __restrict__ out, int n, double c0,
                                    double c1) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= n || y >= n) return;
    size_t c = (size_t)y * n + x;
    if (x == 0 || y == 0 || x == n - 1 || y == n - 1)
        out[c] = in[c];
    else
        out[c] = c0 * in[c] + c1 * (in[c - n] + in[c + n] + in[c - 1] + in[c + 1]);
}
