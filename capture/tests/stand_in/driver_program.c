// A driver-API program for capture's GPU-free test (against the stand-in of standin/, as
// libcuda.so.1): each call once, its return code printed as name=code, and the handles the
// test looks for in the archive as "handle name=0x...". argv[1] is a module file (PTX
// text defining a kernel `k` of two 8-byte parameters and a 16-byte global `var`).
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef unsigned long long CUdeviceptr;
int cudaMalloc(void** p, size_t n);
int cuInit(unsigned);
int cuDeviceGet(int*, int);
int cuCtxCreate_v4(void**, void*, unsigned, int);
int cuCtxGetCurrent(void**);
int cuCtxDestroy_v2(void*);
int cuMemAlloc_v2(CUdeviceptr*, size_t);
int cuMemFree_v2(CUdeviceptr);
int cuMemHostAlloc(void**, size_t, unsigned);
int cuMemHostGetDevicePointer_v2(CUdeviceptr*, void*, unsigned);
int cuMemFreeHost(void*);
int cuMemcpyHtoD_v2(CUdeviceptr, const void*, size_t);
int cuMemcpyDtoH_v2(void*, CUdeviceptr, size_t);
int cuMemcpyDtoHAsync_v2(void*, CUdeviceptr, size_t, void*);
int cuMemsetD32_v2(CUdeviceptr, unsigned, size_t);
int cuMemcpy2D_v2(const size_t*);
int cuStreamCreate(void**, unsigned);
int cuStreamSynchronize(void*);
int cuStreamDestroy_v2(void*);
int cuModuleLoad(void**, const char*);
int cuModuleGetFunction(void**, void*, const char*);
int cuModuleGetGlobal_v2(CUdeviceptr*, size_t*, void*, const char*);
int cuModuleUnload(void*);
int cuLibraryLoadData(void**, const void*, void*, void**, unsigned, void*, void**, unsigned);
int cuLibraryGetKernel(void**, void*, const char*);
int cuKernelGetFunction(void**, void*);
int cuLibraryUnload(void*);
int cuLaunchKernel(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*, void**, void**);
int cuLaunchKernelEx(const void*, void*, void**, void**);
int cuStreamBeginCapture_v2(void*, int);
int cuMemsetD32_v2_ptds(CUdeviceptr, unsigned, size_t);
int cuLaunchKernel_ptsz(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*, void**, void**);
int cuStreamEndCapture(void*, void**);
int cuStreamIsCapturing(void*, int*);
int cuGraphInstantiateWithFlags(void**, void*, unsigned long long);
int cuGraphLaunch(void*, void*);
int cuGraphExecDestroy(void*);
int cuGraphDestroy(void*);
int cuMemcpy2DUnaligned_v2(const size_t*);
int cuMemcpyPeer(CUdeviceptr, void*, CUdeviceptr, void*, size_t);
int cuGraphCreate(void**, unsigned);
int cuGraphAddMemcpyNode(void**, void*, void* const*, size_t, const void*, void*);
int cuGraphAddMemsetNode(void**, void*, void* const*, size_t, const void*, void*);
int cuGraphAddKernelNode_v2(void**, void*, void* const*, size_t, const void*);
int cuGraphExecMemcpyNodeSetParams(void*, void*, const void*, void*);
int cuLaunchCooperativeKernel(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*, void**);
int cuKernelSetCacheConfig(void*, int, int);
int cuFuncSetCacheConfig(void*, int);
int cuEventCreate(void**, unsigned);
int cuEventRecord(void*, void*);
int cuEventQuery(void*);
int cuEventDestroy_v2(void*);

#define CALL(name, call) printf("%s=%d\n", name, (call))

int main(int argc, char** argv) {
    if (argc < 2) return 2;
    int dev = -1;
    void *ctx = 0, *cur = 0, *stream = 0, *module = 0, *fn = 0, *lib = 0, *kernel = 0, *kfn = 0, *rt = 0;
    CALL("init", cuInit(0));
    CALL("device", cuDeviceGet(&dev, 0));
    // A zero-filled CUctxCreateParams (no affinity, no CIG): it means what NULL means.
    // (memset: the padding after the count too, which an initialiser leaves undefined.)
    struct { void* affinity; int affinity_count; void* cig; } params;
    memset(&params, 0, sizeof params);
    CALL("ctx", cuCtxCreate_v4(&ctx, &params, 0, dev));
    CALL("runtime_malloc", cudaMalloc(&rt, 64));
    CUdeviceptr d = 0;
    CALL("alloc", cuMemAlloc_v2(&d, 256));
    unsigned char src[256], host[256], again[256], rows[48];
    for (int i = 0; i < 256; i++) src[i] = (unsigned char)(i * 7);
    CALL("htod", cuMemcpyHtoD_v2(d, src, 256));
    CALL("memset", cuMemsetD32_v2(d + 16, 0xdeadbeefu, 4));
    CALL("stream", cuStreamCreate(&stream, 0));
    memset(host, 0, sizeof host);
    CALL("dtoh_async", cuMemcpyDtoHAsync_v2(host, d, 256, stream));
    CALL("sync", cuStreamSynchronize(stream));
    CALL("dtoh", cuMemcpyDtoH_v2(again, d, 256));
    // 3 rows of 16 bytes from (8, 1) of the buffer seen with a pitch of 64.
    size_t m2[16] = {8, 1, 2, 0, (size_t)d, 0, 64, 0, 0, 1, (size_t)rows, 0, 0, 16, 16, 3};
    CALL("copy2d", cuMemcpy2D_v2(m2));
    CALL("copy2d_unaligned", cuMemcpy2DUnaligned_v2(m2));
    CALL("peer", cuMemcpyPeer(d + 192, ctx, d, ctx, 64));
    CALL("module", cuModuleLoad(&module, argv[1]));
    CALL("function", cuModuleGetFunction(&fn, module, "k"));
    CUdeviceptr global = 0;
    size_t global_size = 0;
    CALL("global", cuModuleGetGlobal_v2(&global, &global_size, module, "var"));
    void* mapped = 0;
    CUdeviceptr mapped_dev = 0;
    CALL("host_alloc", cuMemHostAlloc(&mapped, 32, 1));
    memset(mapped, 0x5a, 32);
    CALL("mapped", cuMemHostGetDevicePointer_v2(&mapped_dev, mapped, 0));
    // The arguments in `extra`'s buffer: the device buffer and the mapped host memory.
    struct { CUdeviceptr a, b; } packed = {d, mapped_dev};
    size_t packed_size = sizeof packed;
    void* extra[] = {(void*)1, &packed, (void*)2, &packed_size, (void*)0};
    CALL("launch_extra", cuLaunchKernel(fn, 2, 1, 1, 64, 1, 1, 0, stream, NULL, extra));
    static const char ptx[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
                              ".visible .entry k(.param .u64 k_a, .param .u64 k_b)\n{\n ret;\n}\n";
    CALL("library", cuLibraryLoadData(&lib, ptx, NULL, NULL, 0, NULL, NULL, 0));
    CALL("kernel", cuLibraryGetKernel(&kernel, lib, "k"));
    CALL("kernel_launch", cuLaunchKernel(kernel, 1, 1, 1, 32, 1, 1, 0, NULL, (void*[]){&d, &global}, NULL));
    CALL("kernel_function", cuKernelGetFunction(&kfn, kernel));
    struct { unsigned g[3], b[3], shmem; void* stream; void* attrs; unsigned nattrs; } cfg = {{3, 1, 1}, {128, 1, 1}, 32, stream, NULL, 0};
    CALL("launch_ex", cuLaunchKernelEx(&cfg, kfn, (void*[]){&d, &d}, NULL));
    CALL("current", cuCtxGetCurrent(&cur));
    // With launch attributes (CUlaunchAttribute: id, padding, a 64-byte value): a cluster
    // dimension (4) of 1x1x1 and a priority (8) of 3.
    struct { unsigned id, pad; unsigned v[16]; } attrs[2] = {{4, 0, {1, 1, 1}}, {8, 0, {3}}};
    struct { unsigned g[3], b[3], shmem; void* stream; void* attrs; unsigned nattrs; } cfg2 = {{1, 1, 1}, {64, 1, 1}, 0, stream, attrs, 2};
    CALL("launch_ex_attrs", cuLaunchKernelEx(&cfg2, kfn, (void*[]){&d, &d}, NULL));
    // Stream capture through the driver, as nvcc's static runtime does it (relaxed mode).
    void *graph = 0, *exec = 0;
    int capturing = 0;
    CALL("begin_capture", cuStreamBeginCapture_v2(stream, 2));
    CALL("is_capturing", cuStreamIsCapturing(stream, &capturing));
    CALL("end_capture", cuStreamEndCapture(stream, &graph));
    CALL("instantiate", cuGraphInstantiateWithFlags(&exec, graph, 0));
    CALL("graph_launch", cuGraphLaunch(exec, stream));
    CALL("exec_destroy", cuGraphExecDestroy(exec));
    CALL("graph_destroy", cuGraphDestroy(graph));
    // An explicit graph through the driver, as nvcc's static runtime builds one: an H2D
    // copy node (CUDA_MEMCPY3D, 25 words: host 1, device 2), a kernel node naming its
    // CUkernel in the v2 struct, a memset node, a D2H copy node; then an update of the
    // first node in the executable graph.
    size_t up[25] = {0}, down[25] = {0};
    static char node_src[64], node_dst[64];
    memset(node_src, 0x5a, sizeof node_src);
    up[4] = 1; up[5] = (size_t)node_src; up[15] = 2; up[17] = (size_t)d; up[22] = 64; up[23] = 1; up[24] = 1;
    down[4] = 2; down[6] = (size_t)d; down[15] = 1; down[16] = (size_t)node_dst; down[22] = 64; down[23] = 1; down[24] = 1;
    struct { void* func; unsigned g[3], b[3], shmem; void** params; void** extra; void* kern; void* ctx; } kn =
        {0, {2, 1, 1}, {64, 1, 1}, 0, (void*[]){&d, &d}, 0, kernel, ctx};
    struct { CUdeviceptr dst; size_t pitch; unsigned value, elem; size_t width, height; } ms = {d + 32, 0, 7, 4, 4, 1};
    void *g2 = 0, *e2 = 0, *n1 = 0, *n2 = 0, *n3 = 0, *n4 = 0;
    CALL("graph_create", cuGraphCreate(&g2, 0));
    CALL("add_copy_node", cuGraphAddMemcpyNode(&n1, g2, NULL, 0, up, ctx));
    CALL("add_kernel_node", cuGraphAddKernelNode_v2(&n2, g2, (void* const[]){n1}, 1, &kn));
    CALL("add_memset_node", cuGraphAddMemsetNode(&n3, g2, (void* const[]){n2}, 1, &ms, ctx));
    CALL("add_copy_back_node", cuGraphAddMemcpyNode(&n4, g2, (void* const[]){n3}, 1, down, ctx));
    CALL("instantiate2", cuGraphInstantiateWithFlags(&e2, g2, 0));
    CALL("graph_launch2", cuGraphLaunch(e2, stream));
    CALL("exec_copy_update", cuGraphExecMemcpyNodeSetParams(e2, n1, up, ctx));
    CALL("exec_destroy2", cuGraphExecDestroy(e2));
    CALL("graph_destroy2", cuGraphDestroy(g2));
    // Launch configuration as nvcc's static runtime makes it: a cooperative launch, cache
    // preferences of a CUkernel and of a CUfunction.
    CALL("cooperative", cuLaunchCooperativeKernel(kfn, 2, 1, 1, 32, 1, 1, 0, stream, (void*[]){&d, &d}));
    CALL("kernel_cache", cuKernelSetCacheConfig(kernel, 1, dev));
    CALL("func_cache", cuFuncSetCacheConfig(kfn, 2));
    // Polling an event recorded after the stream's queued work until the work is done: one
    // record for the run, one for the result.
    void* event = 0;
    CALL("event", cuEventCreate(&event, 0));
    CALL("record", cuEventRecord(event, stream));
    int polls = 0, q;
    while ((q = cuEventQuery(event)) == 600) ++polls;
    printf("polls=%d\n", polls);
    CALL("poll_done", q);
    // The per-thread default stream forms a per-thread program's static runtime calls.
    CALL("memset_ptds", cuMemsetD32_v2_ptds(d + 16, 0xdeadbeefu, 4));
    CALL("launch_ptsz", cuLaunchKernel_ptsz(kfn, 1, 1, 1, 32, 1, 1, 0, NULL, (void*[]){&d, &d}, NULL));
    CALL("unload", cuModuleUnload(module));
    CALL("library_unload", cuLibraryUnload(lib));
    CALL("free_host", cuMemFreeHost(mapped));
    CALL("free", cuMemFree_v2(d));
    CALL("stream_destroy", cuStreamDestroy_v2(stream));
    CALL("event_destroy", cuEventDestroy_v2(event));
    CALL("ctx_destroy", cuCtxDestroy_v2(ctx));
    printf("handle ctx=%p\nhandle stream=%p\nhandle module=%p\nhandle kernel=%p\nhandle function=%p\n", ctx,
           stream, module, kernel, kfn);
    // The program's own checks: the copies saw what the stand-in device holds.
    if (memcmp(host, again, 256) != 0 || cur != ctx || global_size != 16) return 1;
    return 0;
}
