// All-pairs gravitational accelerations: bodies as float4 (x, y, z, mass), tiles of 128 bodies
// through shared memory, rsqrtf for 1 / sqrt(d2).
#define TILE 128

extern "C" __global__ void __launch_bounds__(128) nbody(const float4* __restrict__ pos, float4* __restrict__ acc,
                                                        int n, float eps2) {
    __shared__ float4 tile[TILE];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float4 me = pos[i];
    float ax = 0.0f, ay = 0.0f, az = 0.0f;
    for (int t0 = 0; t0 < n; t0 += TILE) {
        tile[threadIdx.x] = pos[t0 + threadIdx.x];
        __syncthreads();
#pragma unroll 8
        for (int j = 0; j < TILE; ++j) {
            float4 q = tile[j];
            float dx = q.x - me.x, dy = q.y - me.y, dz = q.z - me.z;
            float d2 = dx * dx + dy * dy + dz * dz + eps2;
            float inv = rsqrtf(d2);
            float s = q.w * inv * inv * inv;
            ax += dx * s;
            ay += dy * s;
            az += dz * s;
        }
        __syncthreads();
    }
    acc[i] = make_float4(ax, ay, az, 0.0f);
}
