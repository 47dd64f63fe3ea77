// graph_memory: memory a graph allocates, captured from a stream. A graph allocates with
// hipMallocAsync, runs two kernels over it, copies it to pinned host memory and frees it,
// all inside the capture; a second graph allocates and leaves its memory to the program,
// which reads it with a kernel and a copy outside the graph and frees it with hipFreeAsync
// before the next launch. Each graph is launched several times with new inputs, and each
// launch allocates its memory again at the same address, so replay must keep a graph
// allocation's translation across a free made outside the graph.
#include "../common/hrr_gpu.h"

#include <vector>

__global__ void fill(int* p, int n, int k) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = i * k + 1;
}

__global__ void add_from(const int* src, int* p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] += src[n - 1 - i];
}

static void expect_graph(const char* what, const int* got, const std::vector<int>& src, int k, int n) {
    if (!hrr_kernels_ran()) return;
    std::vector<int> want(n);
    for (int i = 0; i < n; ++i) want[i] = i * k + 1 + src[n - 1 - i];
    expect_all(what, got, want.data(), n);
}

int main() {
    const int n = 1 << 16, launches = 3, blocks = (n + 255) / 256;
    const size_t bytes = n * sizeof(int);
    hipStream_t s;
    CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    int *src_d = nullptr, *host = nullptr;
    CHECK(hipMalloc((void**)&src_d, bytes));
    CHECK(hipHostMalloc((void**)&host, bytes, hipHostMallocDefault));
    std::vector<int> src(n), got(n);

    // 1. Allocated, used, copied out and freed inside the graph.
    hipGraph_t g1;
    CHECK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
    int* buf = nullptr;
    CHECK(hipMallocAsync((void**)&buf, bytes, s));
    fill<<<blocks, 256, 0, s>>>(buf, n, 5);
    add_from<<<blocks, 256, 0, s>>>(src_d, buf, n);
    CHECK(hipMemcpyAsync(host, buf, bytes, hipMemcpyDeviceToHost, s));
    CHECK(hipFreeAsync(buf, s));
    CHECK(hipStreamEndCapture(s, &g1));
    hipGraphExec_t x1;
    CHECK(hipGraphInstantiateWithFlags(&x1, g1, 0));
    for (int l = 0; l < launches; ++l) {
        for (int i = 0; i < n; ++i) src[i] = (i % 509) - 7 * l;
        CHECK(hipMemcpyAsync(src_d, src.data(), bytes, hipMemcpyHostToDevice, s));
        CHECK(hipGraphLaunch(x1, s));
        CHECK(hipStreamSynchronize(s));
        expect_graph("freed inside the graph", host, src, 5, n);
    }

    // 2. Allocated by the graph and left to the program, freed outside it.
    hipGraph_t g2;
    CHECK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
    int* kept = nullptr;
    CHECK(hipMallocAsync((void**)&kept, bytes, s));
    fill<<<blocks, 256, 0, s>>>(kept, n, 7);
    CHECK(hipStreamEndCapture(s, &g2));
    hipGraphExec_t x2;
    CHECK(hipGraphInstantiateWithFlags(&x2, g2, 0));
    for (int l = 0; l < launches; ++l) {
        for (int i = 0; i < n; ++i) src[i] = (i * 13 + l) % 1000;
        CHECK(hipMemcpyAsync(src_d, src.data(), bytes, hipMemcpyHostToDevice, s));
        CHECK(hipGraphLaunch(x2, s));
        add_from<<<blocks, 256, 0, s>>>(src_d, kept, n);
        CHECK(hipMemcpyAsync(got.data(), kept, bytes, hipMemcpyDeviceToHost, s));
        CHECK(hipFreeAsync(kept, s));
        CHECK(hipStreamSynchronize(s));
        expect_graph("left to the program", got.data(), src, 7, n);
    }

    CHECK(hipDeviceSynchronize());
    CHECK(hipGraphExecDestroy(x1));
    CHECK(hipGraphExecDestroy(x2));
    CHECK(hipGraphDestroy(g1));
    CHECK(hipGraphDestroy(g2));
    CHECK(hipStreamDestroy(s));
    CHECK(hipFree(src_d));
    CHECK(hipHostFree(host));
    std::printf("graph_memory: 2 graphs x %d launches\n", launches);
    return 0;
}
