// The runtime calls issue 22's coverage work models or exempts, in one program, each
// result checked on the host:
//   - device set-up: cudaInitDevice, peer access asked of the device itself (an error the
//     runtime names, the same at capture and at replay), the GPUDirect RDMA write flush;
//   - arrays: cudaMemcpyToArrayAsync, cudaMemcpyArrayToArray, cudaMemcpyFromArrayAsync;
//   - an explicit graph: a kernel node's attributes copied to another
//     (cudaGraphKernelNodeCopyAttributes), a node added and destroyed before
//     instantiation (cudaGraphDestroyNode), a node disabled and enabled again in the
//     executable graph (cudaGraphNodeSetEnabled) between launches;
//   - exempt queries and user objects: cudaGraphKernelNodeGetParams,
//     cudaGraphEventRecordNodeGetEvent, cudaUserObjectCreate / cudaGraphRetainUserObject.
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

// The 1D array copies are deprecated, and programs still call them.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); return 1; } } while (0)

__global__ void scale(int* p, int n, int k) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = p[i] * k + 1;
}

static void destroy_note(void* p) { ++*static_cast<int*>(p); }

int main() {
    const int n = 4096;
    CHECK(cudaInitDevice(0, 0, 0));
    CHECK(cudaSetDevice(0));
    cudaError_t peer = cudaDeviceEnablePeerAccess(0, 0);
    cudaError_t unpeer = cudaDeviceDisablePeerAccess(0);
    (void)cudaGetLastError();
    cudaError_t flush = cudaDeviceFlushGPUDirectRDMAWrites(
        cudaFlushGPUDirectRDMAWritesTargetCurrentDevice, cudaFlushGPUDirectRDMAWritesToOwner);
    (void)cudaGetLastError();
    printf("peer access to itself: %d, disable: %d; RDMA flush: %d\n", (int)peer, (int)unpeer, (int)flush);

    // Arrays: host -> array a -> array b -> host, asynchronously on a stream.
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    cudaChannelFormatDesc fmt = cudaCreateChannelDesc<int>();
    cudaArray_t a, b;
    CHECK(cudaMallocArray(&a, &fmt, n, 1));
    CHECK(cudaMallocArray(&b, &fmt, n, 1));
    std::vector<int> src(n), back(n, -1);
    for (int i = 0; i < n; ++i) src[i] = i * 7 - 3;
    const size_t bytes = n * sizeof(int);
    CHECK(cudaMemcpyToArrayAsync(a, 0, 0, src.data(), bytes, cudaMemcpyHostToDevice, s));
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaMemcpyArrayToArray(b, 0, 0, a, 0, 0, bytes, cudaMemcpyDeviceToDevice));
    CHECK(cudaMemcpyFromArrayAsync(back.data(), b, 0, 0, bytes, cudaMemcpyDeviceToHost, s));
    CHECK(cudaStreamSynchronize(s));
    int bad = 0;
    for (int i = 0; i < n; ++i) bad += back[i] != src[i];
    printf("arrays: %d of %d elements differ\n", bad, n);

    // An explicit graph: scale by 2, then by 3 (its attributes copied from the first).
    int* d;
    CHECK(cudaMalloc(&d, bytes));
    CHECK(cudaMemcpy(d, src.data(), bytes, cudaMemcpyHostToDevice));
    cudaGraph_t g;
    CHECK(cudaGraphCreate(&g, 0));
    int nn = n, k2 = 2, k3 = 3;
    void* args2[] = {&d, &nn, &k2};
    void* args3[] = {&d, &nn, &k3};
    cudaKernelNodeParams p{};
    p.func = (void*)scale;
    p.gridDim = dim3((n + 255) / 256);
    p.blockDim = dim3(256);
    p.kernelParams = args2;
    cudaGraphNode_t n2, n3, extra, rec;
    CHECK(cudaGraphAddKernelNode(&n2, g, nullptr, 0, &p));
    p.kernelParams = args3;
    CHECK(cudaGraphAddKernelNode(&n3, g, &n2, 1, &p));
    CHECK(cudaGraphKernelNodeCopyAttributes(n3, n2));
    CHECK(cudaGraphAddKernelNode(&extra, g, &n3, 1, &p));
    CHECK(cudaGraphDestroyNode(extra));
    cudaEvent_t ev;
    CHECK(cudaEventCreate(&ev));
    CHECK(cudaGraphAddEventRecordNode(&rec, g, &n3, 1, ev));
    cudaEvent_t got_ev = nullptr;
    CHECK(cudaGraphEventRecordNodeGetEvent(rec, &got_ev));
    cudaKernelNodeParams q{};
    CHECK(cudaGraphKernelNodeGetParams(n3, &q));
    printf("graph: node event is the program's: %s; node params: grid %u block %u\n",
           got_ev == ev ? "yes" : "no", q.gridDim.x, q.blockDim.x);
    static int destroyed = 0;
    cudaUserObject_t obj;
    CHECK(cudaUserObjectCreate(&obj, &destroyed, destroy_note, 1, cudaUserObjectNoDestructorSync));
    CHECK(cudaGraphRetainUserObject(g, obj, 1, cudaGraphUserObjectMove));
    cudaGraphExec_t x;
    CHECK(cudaGraphInstantiate(&x, g, 0));
    // Launch 1: both nodes (x*2+1, then *3+1). Launch 2: the second node disabled.
    // Launch 3: enabled again.
    CHECK(cudaGraphLaunch(x, s));
    CHECK(cudaGraphNodeSetEnabled(x, n3, 0));
    CHECK(cudaGraphLaunch(x, s));
    CHECK(cudaGraphNodeSetEnabled(x, n3, 1));
    CHECK(cudaGraphLaunch(x, s));
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaMemcpy(back.data(), d, bytes, cudaMemcpyDeviceToHost));
    bad = 0;
    for (int i = 0; i < n; ++i) {
        long long v = src[i];
        v = (v * 2 + 1) * 3 + 1;
        v = v * 2 + 1;
        v = (v * 2 + 1) * 3 + 1;
        bad += back[i] != (int)v;
    }
    printf("graph: %d of %d elements differ\n", bad, n);
    CHECK(cudaGraphExecDestroy(x));
    CHECK(cudaGraphDestroy(g));
    CHECK(cudaFreeArray(a));
    CHECK(cudaFreeArray(b));
    CHECK(cudaFree(d));
    CHECK(cudaEventDestroy(ev));
    CHECK(cudaStreamDestroy(s));
    return bad == 0 ? 0 : 1;
}
