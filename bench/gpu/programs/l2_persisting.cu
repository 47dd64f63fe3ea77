// cuda-samples shape: the persisting-L2 access-policy window. A part of the L2 cache set
// aside (cudaDeviceSetLimit), a stream given an access-policy window over a lookup table
// (cudaStreamSetAttribute), copied to a second stream (cudaStreamCopyAttributes) and read
// back; a graph whose kernel node gets the same window and a priority
// (cudaGraphKernelNodeSetAttribute), uploaded ahead of its launches (cudaGraphUpload);
// the persisting lines reset (cudaCtxResetPersistingL2Cache). Every result checked.
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

__global__ void gather(const int* table, int tn, const int* idx, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = table[idx[i] % tn] * 3 + i;
}
#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); return 1; } } while (0)

int main() {
    const int tn = 1 << 20, n = 1 << 22;
    int *table, *idx, *out;
    CHECK(cudaMalloc(&table, tn * sizeof(int))); CHECK(cudaMalloc(&idx, n * sizeof(int))); CHECK(cudaMalloc(&out, n * sizeof(int)));
    std::vector<int> ht(tn), hi(n), got(n);
    for (int i = 0; i < tn; ++i) ht[i] = i * 7 - 3;
    for (int i = 0; i < n; ++i) hi[i] = (i * 2654435761u) >> 7;
    CHECK(cudaMemcpy(table, ht.data(), tn * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(idx, hi.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    int dev = 0; CHECK(cudaGetDevice(&dev));
    int maxPersist = 0; CHECK(cudaDeviceGetAttribute(&maxPersist, cudaDevAttrMaxPersistingL2CacheSize, dev));
    CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, maxPersist));
    cudaStream_t s1, s2; CHECK(cudaStreamCreate(&s1)); CHECK(cudaStreamCreate(&s2));
    cudaStreamAttrValue v = {};
    v.accessPolicyWindow.base_ptr = table;
    v.accessPolicyWindow.num_bytes = tn * sizeof(int);
    v.accessPolicyWindow.hitRatio = 0.8f;
    v.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
    v.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
    CHECK(cudaStreamSetAttribute(s1, cudaStreamAttributeAccessPolicyWindow, &v));
    CHECK(cudaStreamCopyAttributes(s2, s1));
    cudaStreamAttrValue back = {};
    CHECK(cudaStreamGetAttribute(s2, cudaStreamAttributeAccessPolicyWindow, &back));
    if (back.accessPolicyWindow.base_ptr != table) { fprintf(stderr, "window not copied\n"); return 1; }
    long long sum = 0;
    for (int pass = 0; pass < 2; ++pass) {
        cudaStream_t s = pass ? s2 : s1;
        gather<<<n / 256, 256, 0, s>>>(table, tn, idx, out, n);
        CHECK(cudaMemcpyAsync(got.data(), out, n * sizeof(int), cudaMemcpyDeviceToHost, s));
        CHECK(cudaStreamSynchronize(s));
        for (int i = 0; i < n; ++i) if (got[i] != ht[hi[i] % tn] * 3 + i) { fprintf(stderr, "[%d]\n", i); return 1; }
        sum += got[n / 3];
    }
    // A graph with the same window and a priority on its kernel node.
    cudaGraph_t g; CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
    gather<<<n / 256, 256, 0, s1>>>(table, tn, idx, out, n);
    CHECK(cudaStreamEndCapture(s1, &g));
    size_t count = 0; CHECK(cudaGraphGetNodes(g, nullptr, &count));
    std::vector<cudaGraphNode_t> nodes(count); CHECK(cudaGraphGetNodes(g, nodes.data(), &count));
    cudaKernelNodeAttrValue kv = {};
    kv.accessPolicyWindow = v.accessPolicyWindow;
    CHECK(cudaGraphKernelNodeSetAttribute(nodes[0], cudaKernelNodeAttributeAccessPolicyWindow, &kv));
    cudaKernelNodeAttrValue prio = {}; prio.priority = 1;
    CHECK(cudaGraphKernelNodeSetAttribute(nodes[0], cudaLaunchAttributePriority, &prio));
    cudaGraphExec_t x; CHECK(cudaGraphInstantiate(&x, g, 0));
    CHECK(cudaGraphUpload(x, s2));
    for (int l = 0; l < 2; ++l) {
        CHECK(cudaMemset(out, 0, n * sizeof(int)));
        CHECK(cudaGraphLaunch(x, s2));
        CHECK(cudaMemcpyAsync(got.data(), out, n * sizeof(int), cudaMemcpyDeviceToHost, s2));
        CHECK(cudaStreamSynchronize(s2));
        for (int i = 0; i < n; ++i) if (got[i] != ht[hi[i] % tn] * 3 + i) { fprintf(stderr, "graph [%d]\n", i); return 1; }
    }
    v.accessPolicyWindow.num_bytes = 0;
    CHECK(cudaStreamSetAttribute(s1, cudaStreamAttributeAccessPolicyWindow, &v));
    CHECK(cudaCtxResetPersistingL2Cache());
    CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0));
    printf("persisting L2: 2 streams, a graph of %zu node(s), sum %lld: Test PASSED\n", count, sum);
    return 0;
}
