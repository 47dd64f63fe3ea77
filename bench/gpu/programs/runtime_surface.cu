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
//     cudaGraphEventRecordNodeGetEvent, cudaUserObjectCreate / cudaGraphRetainUserObject;
//   - handles of the program's own kernels and variables: cudaGetSymbolAddress (a kernel
//     then writes through the address), cudaGetKernel and cudaGetFuncBySymbol (the kernel
//     launched through each), cudaEventRecordWithFlags;
//   - the runtime's library API: PTX loaded with cudaLibraryLoadData, its kernel
//     (cudaLibraryGetKernel) launched, its global read (cudaLibraryGetGlobal), unloaded;
//   - graph introspection: a node's dependencies and dependents, a graph's edges, and a
//     node found in a clone (cudaGraphNodeFindInClone) and destroyed there.
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

__device__ int bias[256];
__global__ void add_bias(int* p, const int* b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] += b[i % 256];
}

// A kernel as PTX text, loaded through the runtime's library API: adds one to n ints,
// and counts its launches in the global `launches`.
static const char kPtx[] = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .global .align 4 .u32 launches;
.visible .entry add_one(.param .u64 p, .param .u32 n)
{
    .reg .pred %q;
    .reg .b32 %r<8>;
    .reg .b64 %d<5>;
    ld.param.u64 %d1, [p];
    ld.param.u32 %r1, [n];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.s32 %r5, %r2, %r3, %r4;
    setp.eq.s32 %q, %r5, 0;
    @%q atom.global.add.u32 %r7, [launches], 1;
    setp.ge.s32 %q, %r5, %r1;
    @%q bra DONE;
    cvta.to.global.u64 %d2, %d1;
    mul.wide.s32 %d3, %r5, 4;
    add.s64 %d4, %d2, %d3;
    ld.global.u32 %r6, [%d4];
    add.s32 %r6, %r6, 1;
    st.global.u32 [%d4], %r6;
DONE:
    ret;
}
)";

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
    int failures = bad;

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
    failures += bad;

    // Handles of the program's own kernels and variables.
    std::vector<int> hb(256);
    for (int i = 0; i < 256; ++i) hb[i] = i * 3;
    int* dbias = nullptr;
    CHECK(cudaGetSymbolAddress((void**)&dbias, bias));
    CHECK(cudaMemcpy(dbias, hb.data(), 256 * sizeof(int), cudaMemcpyHostToDevice));
    std::vector<int> expect_after(back);
    cudaKernel_t kh;
    CHECK(cudaGetKernel(&kh, (const void*)add_bias));
    cudaFunction_t fh;
    CHECK(cudaGetFuncBySymbol(&fh, (const void*)add_bias));
    void* bias_args[] = {&d, &dbias, &nn};
    // The same kernel three ways: by its stub, by its cudaKernel_t, and by its
    // cudaFunction_t through the driver's cuLaunchKernel (from the runtime's entry-point
    // lookup).
    CHECK(cudaLaunchKernel((const void*)add_bias, dim3((n + 255) / 256), dim3(256), bias_args, 0, s));
    CHECK(cudaLaunchKernel((const void*)kh, dim3((n + 255) / 256), dim3(256), bias_args, 0, s));
    typedef int (*CuLaunchKernel)(void*, unsigned, unsigned, unsigned, unsigned, unsigned,
                                  unsigned, unsigned, void*, void**, void**);
    void* entry = nullptr;
    cudaDriverEntryPointQueryResult found;
    CHECK(cudaGetDriverEntryPointByVersion("cuLaunchKernel", &entry, 12000, cudaEnableDefault, &found));
    if (!entry || ((CuLaunchKernel)entry)(fh, (n + 255) / 256, 1, 1, 256, 1, 1, 0, s, bias_args, nullptr) != 0) {
        fprintf(stderr, "cuLaunchKernel through the entry point failed\n");
        return 1;
    }
    cudaEvent_t mark;
    CHECK(cudaEventCreate(&mark));
    CHECK(cudaEventRecordWithFlags(mark, s, cudaEventRecordDefault));
    CHECK(cudaEventSynchronize(mark));
    CHECK(cudaMemcpy(back.data(), d, bytes, cudaMemcpyDeviceToHost));
    bad = 0;
    for (int i = 0; i < n; ++i) bad += back[i] != expect_after[i] + 3 * hb[i % 256];
    printf("symbol address: %d of %d elements differ; kernel handle %s, function handle %s\n",
           bad, n, kh ? "set" : "null", fh ? "set" : "null");
    failures += bad;

    // The runtime's library API.
    cudaLibrary_t lib;
    CHECK(cudaLibraryLoadData(&lib, kPtx, nullptr, nullptr, 0, nullptr, nullptr, 0));
    cudaKernel_t add_one;
    CHECK(cudaLibraryGetKernel(&add_one, lib, "add_one"));
    void* one_args[] = {&d, &nn};
    for (int r = 0; r < 3; ++r)
        CHECK(cudaLaunchKernel((const void*)add_one, dim3((n + 255) / 256), dim3(256), one_args, 0, s));
    CHECK(cudaStreamSynchronize(s));
    unsigned* dl = nullptr;
    size_t dl_size = 0;
    CHECK(cudaLibraryGetGlobal((void**)&dl, &dl_size, lib, "launches"));
    unsigned launches = 0;
    CHECK(cudaMemcpy(&launches, dl, sizeof launches, cudaMemcpyDeviceToHost));
    std::vector<int> after_lib(n);
    CHECK(cudaMemcpy(after_lib.data(), d, bytes, cudaMemcpyDeviceToHost));
    int lib_bad = 0;
    for (int i = 0; i < n; ++i) lib_bad += after_lib[i] != back[i] + 3;
    printf("library: %u launches counted, %d of %d elements differ\n", launches, lib_bad, n);
    failures += lib_bad + (launches != 3);
    CHECK(cudaLibraryUnload(lib));

    // Graph introspection: dependencies, edges, and a node found in a clone, destroyed
    // there (the clone then only scales by 3 and adds 1).
    size_t ndeps = 4, nedges = 8;
    cudaGraphNode_t deps[4], from[8], to[8];
    CHECK(cudaGraphNodeGetDependencies(n3, deps, nullptr, &ndeps));
    CHECK(cudaGraphGetEdges(g, from, to, nullptr, &nedges));
    size_t ndependents = 4;
    cudaGraphNode_t dependents[4];
    CHECK(cudaGraphNodeGetDependentNodes(n2, dependents, nullptr, &ndependents));
    cudaGraph_t copy;
    CHECK(cudaGraphClone(&copy, g));
    cudaGraphNode_t n2_copy;
    CHECK(cudaGraphNodeFindInClone(&n2_copy, n2, copy));
    CHECK(cudaGraphDestroyNode(n2_copy));
    cudaGraphExec_t xc;
    CHECK(cudaGraphInstantiate(&xc, copy, 0));
    CHECK(cudaGraphLaunch(xc, s));
    CHECK(cudaStreamSynchronize(s));
    std::vector<int> after_clone(n);
    CHECK(cudaMemcpy(after_clone.data(), d, bytes, cudaMemcpyDeviceToHost));
    int clone_bad = 0;
    for (int i = 0; i < n; ++i) clone_bad += after_clone[i] != after_lib[i] * 3 + 1;
    printf("introspection: %zu dependencies (first is n2: %s), %zu edges, %zu dependents; clone: %d of %d elements differ\n",
           ndeps, ndeps > 0 && deps[0] == n2 ? "yes" : "no", nedges, ndependents, clone_bad, n);
    failures += clone_bad + (ndeps != 1) + (nedges != 2) + (ndependents != 1);
    CHECK(cudaGraphExecDestroy(xc));
    CHECK(cudaGraphDestroy(copy));
    CHECK(cudaEventDestroy(mark));

    CHECK(cudaGraphExecDestroy(x));
    CHECK(cudaGraphDestroy(g));
    CHECK(cudaFreeArray(a));
    CHECK(cudaFreeArray(b));
    CHECK(cudaFree(d));
    CHECK(cudaEventDestroy(ev));
    CHECK(cudaStreamDestroy(s));
    return failures == 0 ? 0 : 1;
}
