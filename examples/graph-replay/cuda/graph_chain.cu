// The CUDA C++ twin of examples/graph-replay (src/main.rs): the same 1,000 dependent small
// kernels, launched on a stream and captured into a CUDA graph that is replayed, timed with CUDA
// events. Built by nvcc (scripts/gpu-bundle.sh, or by hand):
//   nvcc -O3 -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 -o graph_chain graph_chain.cu
// Usage: graph_chain N_ELEMS KERNELS REPS SEED. Prints one line the Rust program reads:
//   cuda_cpp stream_us=<median µs per kernel> graph_us=<median µs per kernel> check=ok|wrong
// (check: the buffer after one stream pass and one replay equals the CPU's). Exit 0 unless a
// CUDA call failed.
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>

#define CK(call)                                                                           \
    do {                                                                                   \
        cudaError_t e_ = (call);                                                           \
        if (e_ != cudaSuccess) {                                                           \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            exit(2);                                                                       \
        }                                                                                  \
    } while (0)

// x[i] = x[i] * 3 + k (wrapping), as the Rust kernel `step`.
__global__ void step(uint32_t k, uint32_t *x, unsigned long long n) {
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * 3u + k;
}

static uint32_t next(uint64_t &s) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    uint64_t x = s;
    x ^= (x >> 29) ^ (x << 17);
    return (uint32_t)(x >> 32);
}

static float median(std::vector<float> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s N_ELEMS KERNELS REPS SEED\n", argv[0]);
        return 2;
    }
    const unsigned long long n = strtoull(argv[1], 0, 10);
    const int kernels = atoi(argv[2]), reps = atoi(argv[3]);
    uint64_t seed = strtoull(argv[4], 0, 10);
    std::vector<uint32_t> ks(kernels), x0(n);
    for (auto &k : ks) k = next(seed);
    for (auto &v : x0) v = next(seed);

    uint32_t *x;
    CK(cudaMalloc(&x, n * sizeof(uint32_t)));
    CK(cudaMemcpy(x, x0.data(), n * sizeof(uint32_t), cudaMemcpyHostToDevice));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    const unsigned threads = 256, blocks = (unsigned)((n + threads - 1) / threads);
    auto chain = [&]() {
        for (int j = 0; j < kernels; j++) step<<<blocks, threads, 0, s>>>(ks[j], x, n);
    };

    // Stream launches: warm up, then time each pass of `kernels` launches.
    chain();
    CK(cudaGetLastError());
    CK(cudaStreamSynchronize(s));
    std::vector<float> stream_ms;
    for (int r = 0; r < reps; r++) {
        CK(cudaEventRecord(a, s));
        chain();
        CK(cudaEventRecord(b, s));
        CK(cudaEventSynchronize(b));
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        stream_ms.push_back(ms);
    }
    CK(cudaGetLastError());

    // One graph of the same launches, replayed.
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    chain();
    CK(cudaStreamEndCapture(s, &graph));
    CK(cudaGraphInstantiate(&exec, graph, 0));
    CK(cudaGraphUpload(exec, s));
    CK(cudaGraphLaunch(exec, s));
    CK(cudaStreamSynchronize(s));
    std::vector<float> graph_ms;
    for (int r = 0; r < reps; r++) {
        CK(cudaEventRecord(a, s));
        CK(cudaGraphLaunch(exec, s));
        CK(cudaEventRecord(b, s));
        CK(cudaEventSynchronize(b));
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        graph_ms.push_back(ms);
    }

    // Check: from x0, one stream pass and one replay = two passes on the CPU.
    CK(cudaMemcpy(x, x0.data(), n * sizeof(uint32_t), cudaMemcpyHostToDevice));
    chain();
    CK(cudaGraphLaunch(exec, s));
    CK(cudaStreamSynchronize(s));
    std::vector<uint32_t> got(n);
    CK(cudaMemcpy(got.data(), x, n * sizeof(uint32_t), cudaMemcpyDeviceToHost));
    bool ok = true;
    for (unsigned long long i = 0; i < n && ok; i++) {
        uint32_t v = x0[i];
        for (int pass = 0; pass < 2; pass++)
            for (int j = 0; j < kernels; j++) v = v * 3u + ks[j];
        ok = got[i] == v;
    }
    printf("cuda_cpp stream_us=%.4f graph_us=%.4f check=%s\n", median(stream_ms) * 1000.0f / kernels,
           median(graph_ms) * 1000.0f / kernels, ok ? "ok" : "wrong");
    CK(cudaGraphExecDestroy(exec));
    CK(cudaGraphDestroy(graph));
    CK(cudaFree(x));
    return 0;
}
