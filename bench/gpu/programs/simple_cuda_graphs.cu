// cuda-samples shape: simpleCudaGraphs. One reduction built twice, as an explicit graph
// (memcpy, memset, kernel nodes with dependencies) and by stream capture across two
// streams joined by events, each instantiated once and launched several times.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

__global__ void reduce(const float* in, double* out, size_t n) {
    __shared__ double s[256];
    double v = 0;
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) v += in[i];
    s[threadIdx.x] = v; __syncthreads();
    for (int k = 128; k > 0; k >>= 1) { if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k]; __syncthreads(); }
    if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}
__global__ void reduce_final(const double* in, double* out, int n) {
    if (threadIdx.x == 0 && blockIdx.x == 0) { double t = 0; for (int i = 0; i < n; ++i) t += in[i]; *out = t; }
}

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); return 1; } } while (0)

int main() {
    const size_t n = 1 << 20; const int blocks = 64;
    float* h_in; double* h_out;
    CHECK(cudaMallocHost(&h_in, n * sizeof(float)));
    CHECK(cudaMallocHost(&h_out, sizeof(double)));
    float* d_in; double *d_part, *d_out;
    CHECK(cudaMalloc(&d_in, n * sizeof(float))); CHECK(cudaMalloc(&d_part, blocks * sizeof(double)));
    CHECK(cudaMalloc(&d_out, sizeof(double)));
    cudaStream_t s1, s2; CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking)); CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));

    // Explicit graph.
    cudaGraph_t g; CHECK(cudaGraphCreate(&g, 0));
    cudaGraphNode_t cpy_in, set, k1, k2, cpy_out;
    cudaMemcpy3DParms p = {};
    p.srcPtr = make_cudaPitchedPtr(h_in, n * sizeof(float), n, 1); p.dstPtr = make_cudaPitchedPtr(d_in, n * sizeof(float), n, 1);
    p.extent = make_cudaExtent(n * sizeof(float), 1, 1); p.kind = cudaMemcpyHostToDevice;
    CHECK(cudaGraphAddMemcpyNode(&cpy_in, g, nullptr, 0, &p));
    cudaMemsetParams m = {}; m.dst = d_part; m.value = 0; m.elementSize = 4; m.width = blocks * 2; m.height = 1;
    CHECK(cudaGraphAddMemsetNode(&set, g, nullptr, 0, &m));
    cudaKernelNodeParams kp = {}; size_t nn = n; void* a1[] = {&d_in, &d_part, &nn};
    kp.func = (void*)reduce; kp.gridDim = dim3(blocks); kp.blockDim = dim3(256); kp.kernelParams = a1;
    cudaGraphNode_t deps[] = {cpy_in, set};
    CHECK(cudaGraphAddKernelNode(&k1, g, deps, 2, &kp));
    int nb = blocks; void* a2[] = {&d_part, &d_out, &nb};
    kp.func = (void*)reduce_final; kp.gridDim = dim3(1); kp.blockDim = dim3(32); kp.kernelParams = a2;
    CHECK(cudaGraphAddKernelNode(&k2, g, &k1, 1, &kp));
    CHECK(cudaGraphAddMemcpyNode1D(&cpy_out, g, &k2, 1, h_out, d_out, sizeof(double), cudaMemcpyDeviceToHost));
    cudaGraphExec_t ge; CHECK(cudaGraphInstantiate(&ge, g, 0));
    for (int it = 0; it < 3; ++it) {
        for (size_t i = 0; i < n; ++i) h_in[i] = (float)((i + it) % 16);
        CHECK(cudaGraphLaunch(ge, s1)); CHECK(cudaStreamSynchronize(s1));
        double ref = 0; for (size_t i = 0; i < n; ++i) ref += h_in[i];
        printf("[explicit graph] launch %d: sum %.1f (expected %.1f)\n", it, *h_out, ref);
        if (*h_out != ref) return 1;
    }

    // Stream capture over two streams joined by events.
    cudaEvent_t fork, join; CHECK(cudaEventCreate(&fork)); CHECK(cudaEventCreate(&join));
    cudaGraph_t g2; cudaGraphExec_t ge2;
    CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
    CHECK(cudaEventRecord(fork, s1)); CHECK(cudaStreamWaitEvent(s2, fork, 0));
    CHECK(cudaMemcpyAsync(d_in, h_in, n * sizeof(float), cudaMemcpyHostToDevice, s1));
    CHECK(cudaMemsetAsync(d_part, 0, blocks * sizeof(double), s2));
    CHECK(cudaEventRecord(join, s2)); CHECK(cudaStreamWaitEvent(s1, join, 0));
    reduce<<<blocks, 256, 0, s1>>>(d_in, d_part, n);
    reduce_final<<<1, 32, 0, s1>>>(d_part, d_out, blocks);
    CHECK(cudaMemcpyAsync(h_out, d_out, sizeof(double), cudaMemcpyDeviceToHost, s1));
    CHECK(cudaStreamEndCapture(s1, &g2));
    CHECK(cudaGraphInstantiate(&ge2, g2, 0));
    for (int it = 0; it < 3; ++it) {
        for (size_t i = 0; i < n; ++i) h_in[i] = (float)((i * 3 + it) % 8);
        CHECK(cudaGraphLaunch(ge2, s1)); CHECK(cudaStreamSynchronize(s1));
        double ref = 0; for (size_t i = 0; i < n; ++i) ref += h_in[i];
        printf("[stream capture] launch %d: sum %.1f (expected %.1f)\n", it, *h_out, ref);
        if (*h_out != ref) return 1;
    }
    CHECK(cudaGraphExecDestroy(ge)); CHECK(cudaGraphExecDestroy(ge2));
    CHECK(cudaGraphDestroy(g)); CHECK(cudaGraphDestroy(g2));
    printf("Test PASSED\n");
    return 0;
}
