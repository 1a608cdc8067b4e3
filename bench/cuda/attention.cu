// Scaled dot-product attention, forward, f32: FlashAttention-2's recurrence without tensor
// cores. A block of 16 x 16 threads takes 32 query rows of one (batch, head); key and value tiles
// of 32 rows pass through shared memory; each thread computes 2 x 2 scores, the rows' running
// maximum and sum go through the 16 threads of a row (shuffles), probabilities through shared
// memory into the 2 x 4 outputs each thread keeps, rescaled when the maximum grows. lse gets each
// row's log-sum-exp. q, k, v, out: [bh][seq][64]; grid (seq / 32, bh). Every loop but the one over
// key tiles is unrolled, in both versions (#[unroll] in Rust).
#define D 64
#define T 32
#define PITCH (D + 1)

extern "C" __global__ void __launch_bounds__(256) attention(const float* __restrict__ q, const float* __restrict__ k,
                                                            const float* __restrict__ v, float* __restrict__ out,
                                                            float* __restrict__ lse, int seq, float scale,
                                                            int causal) {
    __shared__ float qs[T * PITCH];
    __shared__ float ks[T * PITCH];
    __shared__ float4 vs[T * D / 4];
    __shared__ float ps[T * (T + 1)];
    int tx = threadIdx.x, ty = threadIdx.y, tid = ty * 16 + tx;
    int q_tile = blockIdx.x;
    size_t head = (size_t)blockIdx.y * seq * D;
    #pragma unroll
    for (int i = 0; i < 8; ++i) {
        int e = i * 256 + tid, r = e / D, d = e % D;
        qs[r * PITCH + d] = q[head + (size_t)(q_tile * T + r) * D + d] * scale;
    }
    float o[2][4] = {};
    float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};
    int tiles = causal ? q_tile + 1 : seq / T;
    for (int kt = 0; kt < tiles; ++kt) {
        #pragma unroll
        for (int i = 0; i < 8; ++i) {
            int e = i * 256 + tid, r = e / D, d = e % D;
            ks[r * PITCH + d] = k[head + (size_t)(kt * T + r) * D + d];
        }
        #pragma unroll
        for (int i = 0; i < 2; ++i) {
            int e = i * 256 + tid, r = e / (D / 4), c = e % (D / 4);
            const float* p = v + head + (size_t)(kt * T + r) * D + 4 * c;
            vs[r * (D / 4) + c] = make_float4(p[0], p[1], p[2], p[3]);
        }
        __syncthreads();
        float s[2][2] = {};
        #pragma unroll
        for (int d = 0; d < D; ++d) {
            float q0 = qs[2 * ty * PITCH + d], q1 = qs[(2 * ty + 1) * PITCH + d];
            float k0 = ks[2 * tx * PITCH + d], k1 = ks[(2 * tx + 1) * PITCH + d];
            s[0][0] += q0 * k0;
            s[0][1] += q0 * k1;
            s[1][0] += q1 * k0;
            s[1][1] += q1 * k1;
        }
        #pragma unroll
        for (int r = 0; r < 2; ++r) {
            if (causal && kt == q_tile)
                #pragma unroll
                for (int c = 0; c < 2; ++c)
                    if (2 * tx + c > 2 * ty + r) s[r][c] = -INFINITY;
            float tile_max = fmaxf(s[r][0], s[r][1]);
            #pragma unroll
            for (int lane = 8; lane > 0; lane /= 2) tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, lane));
            float m_new = fmaxf(m[r], tile_max);
            float p0 = expf(s[r][0] - m_new), p1 = expf(s[r][1] - m_new);
            float sum = p0 + p1;
            #pragma unroll
            for (int lane = 8; lane > 0; lane /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, lane);
            float correction = expf(m[r] - m_new);
            l[r] = l[r] * correction + sum;
            m[r] = m_new;
            #pragma unroll
            for (int c = 0; c < 4; ++c) o[r][c] *= correction;
            ps[(2 * ty + r) * (T + 1) + 2 * tx] = p0;
            ps[(2 * ty + r) * (T + 1) + 2 * tx + 1] = p1;
        }
        __syncthreads();
        #pragma unroll
        for (int j = 0; j < T; ++j) {
            float p0 = ps[2 * ty * (T + 1) + j], p1 = ps[(2 * ty + 1) * (T + 1) + j];
            float4 w = vs[j * (D / 4) + tx];
            float wv[4] = {w.x, w.y, w.z, w.w};
            #pragma unroll
            for (int c = 0; c < 4; ++c) {
                o[0][c] += p0 * wv[c];
                o[1][c] += p1 * wv[c];
            }
        }
        __syncthreads();
    }
    #pragma unroll
    for (int r = 0; r < 2; ++r) {
        int row = q_tile * T + 2 * ty + r;
        #pragma unroll
        for (int c = 0; c < 4; ++c) out[head + (size_t)row * D + 4 * tx + c] = o[r][c] / l[r];
        if (tx == 0) lse[(size_t)blockIdx.y * seq + row] = m[r] + logf(l[r]);
    }
}
