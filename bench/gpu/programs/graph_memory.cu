// cuda-samples shape: graphMemoryNodes / graphMemoryFootprint. Graph-owned memory three
// ways, each graph launched several times with new inputs:
//   1. explicit allocation and free nodes around two kernels and a D2H copy node;
//   2. the same built by stream capture (cudaMallocAsync, kernels, cudaMemcpyAsync,
//      cudaFreeAsync inside the capture);
//   3. an allocation the graph does not free: read after the launch by a kernel and a copy
//      outside the graph, freed with cudaFreeAsync, then the graph relaunched;
// then the device's graph memory trimmed (cudaDeviceGraphMemTrim) and its footprint read.
#include <cstdio>
#include <cstdint>
#include <vector>
#include <cuda_runtime.h>

__global__ void fill(int* p, int n, int k) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = i * k + 1;
}
__global__ void add_from(const int* src, int* p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] += src[n - 1 - i];
}
#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); return 1; } } while (0)

static bool expect(const char* what, const std::vector<int>& got, const std::vector<int>& src, int k, int n) {
    for (int i = 0; i < n; ++i)
        if (got[i] != i * k + 1 + src[n - 1 - i]) { fprintf(stderr, "%s: [%d] = %d\n", what, i, got[i]); return false; }
    return true;
}

int main() {
    const int n = 1 << 18, launches = 3, blocks = (n + 255) / 256;
    const size_t bytes = n * sizeof(int);
    cudaStream_t s; CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    int *src_d; CHECK(cudaMalloc(&src_d, bytes));
    int *host; CHECK(cudaMallocHost(&host, bytes));
    std::vector<int> src(n), got(n);

    // 1. Explicit nodes: alloc -> fill -> add_from -> copy out -> free.
    cudaGraph_t g1; CHECK(cudaGraphCreate(&g1, 0));
    cudaMemAllocNodeParams ap = {};
    ap.poolProps.allocType = cudaMemAllocationTypePinned;
    ap.poolProps.location.type = cudaMemLocationTypeDevice;
    ap.poolProps.location.id = 0;
    ap.bytesize = bytes;
    cudaGraphNode_t alloc, k1, k2, out, fre;
    CHECK(cudaGraphAddMemAllocNode(&alloc, g1, nullptr, 0, &ap));
    int* buf = (int*)ap.dptr;
    int k = 3;
    void* a1[] = {&buf, (void*)&n, &k};
    cudaKernelNodeParams kp = {}; kp.func = (void*)fill; kp.gridDim = blocks; kp.blockDim = 256; kp.kernelParams = a1;
    CHECK(cudaGraphAddKernelNode(&k1, g1, &alloc, 1, &kp));
    void* a2[] = {&src_d, &buf, (void*)&n};
    kp.func = (void*)add_from; kp.kernelParams = a2;
    CHECK(cudaGraphAddKernelNode(&k2, g1, &k1, 1, &kp));
    CHECK(cudaGraphAddMemcpyNode1D(&out, g1, &k2, 1, host, buf, bytes, cudaMemcpyDeviceToHost));
    CHECK(cudaGraphAddMemFreeNode(&fre, g1, &out, 1, buf));
    cudaGraphExec_t x1; CHECK(cudaGraphInstantiate(&x1, g1, 0));
    for (int l = 0; l < launches; ++l) {
        for (int i = 0; i < n; ++i) src[i] = (i % 251) * (l + 1);
        CHECK(cudaMemcpyAsync(src_d, src.data(), bytes, cudaMemcpyHostToDevice, s));
        CHECK(cudaGraphLaunch(x1, s));
        CHECK(cudaStreamSynchronize(s));
        std::copy(host, host + n, got.begin());
        if (!expect("explicit nodes", got, src, 3, n)) return 1;
    }

    // 2. Stream capture of the same shape.
    cudaGraph_t g2;
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    int* cbuf; CHECK(cudaMallocAsync((void**)&cbuf, bytes, s));
    fill<<<blocks, 256, 0, s>>>(cbuf, n, 5);
    add_from<<<blocks, 256, 0, s>>>(src_d, cbuf, n);
    CHECK(cudaMemcpyAsync(host, cbuf, bytes, cudaMemcpyDeviceToHost, s));
    CHECK(cudaFreeAsync(cbuf, s));
    CHECK(cudaStreamEndCapture(s, &g2));
    cudaGraphExec_t x2; CHECK(cudaGraphInstantiate(&x2, g2, 0));
    for (int l = 0; l < launches; ++l) {
        for (int i = 0; i < n; ++i) src[i] = (i % 509) - 7 * l;
        CHECK(cudaMemcpyAsync(src_d, src.data(), bytes, cudaMemcpyHostToDevice, s));
        CHECK(cudaGraphLaunch(x2, s));
        CHECK(cudaStreamSynchronize(s));
        std::copy(host, host + n, got.begin());
        if (!expect("stream capture", got, src, 5, n)) return 1;
    }

    // 3. Memory the graph allocates and leaves to the program.
    cudaGraph_t g3;
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    int* kept; CHECK(cudaMallocAsync((void**)&kept, bytes, s));
    fill<<<blocks, 256, 0, s>>>(kept, n, 7);
    CHECK(cudaStreamEndCapture(s, &g3));
    cudaGraphExec_t x3; CHECK(cudaGraphInstantiate(&x3, g3, 0));
    for (int l = 0; l < launches; ++l) {
        for (int i = 0; i < n; ++i) src[i] = (i * 13 + l) % 1000;
        CHECK(cudaMemcpyAsync(src_d, src.data(), bytes, cudaMemcpyHostToDevice, s));
        CHECK(cudaGraphLaunch(x3, s));
        add_from<<<blocks, 256, 0, s>>>(src_d, kept, n);
        CHECK(cudaMemcpyAsync(got.data(), kept, bytes, cudaMemcpyDeviceToHost, s));
        CHECK(cudaFreeAsync(kept, s));
        CHECK(cudaStreamSynchronize(s));
        if (!expect("memory left to the program", got, src, 7, n)) return 1;
    }

    CHECK(cudaDeviceSynchronize());
    CHECK(cudaDeviceGraphMemTrim(0));
    size_t used = 0; CHECK(cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrUsedMemCurrent, &used));
    CHECK(cudaGraphExecDestroy(x1)); CHECK(cudaGraphExecDestroy(x2)); CHECK(cudaGraphExecDestroy(x3));
    CHECK(cudaGraphDestroy(g1)); CHECK(cudaGraphDestroy(g2)); CHECK(cudaGraphDestroy(g3));
    printf("graph memory: 3 graphs x %d launches: Test PASSED\n", launches);
    return 0;
}
