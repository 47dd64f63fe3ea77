// graph_explicit: a graph built node by node, with dependencies: an H2D copy of the input,
// D2D copies after it through a scratch buffer (under CUDA graph memory: an allocation
// node before the copies and a free node after them; HIP 5.2 has no memory nodes, so a
// plain buffer there), a memset of a tail region beside them, an empty node joining both,
// two kernel nodes in a chain after the copies (add one to each byte, then xor it with a
// key), an event record node, then a child graph holding the D2H copy of the result.
// Launched four times with new input, the xor node's key changed in the executable graph
// before each launch after the first (hipGraphExecKernelNodeSetParams); each launch's
// output is checked. Replay must rebuild every node with its dependencies: without them
// the copies and kernels run unordered and the D2H node reads a buffer the launch has not
// written yet.
#include "../common/hrr_gpu.h"

#include <cstring>
#include <vector>

__global__ void add_one(unsigned char* p, size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = (unsigned char)(p[i] + 1);
}

__global__ void mix(unsigned char* p, size_t n, unsigned int key) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = (unsigned char)(p[i] ^ (key & 0xff));
}

// A kernel node's parameters: the kernel by its host stub, a 1D grid over n bytes.
static hipKernelNodeParams kernel_node(void* func, size_t n, void** args) {
    hipKernelNodeParams k;
    std::memset(&k, 0, sizeof k);
    k.func = func;
    k.gridDim = dim3((unsigned)((n + 255) / 256));
    k.blockDim = dim3(256);
    k.sharedMemBytes = 0;
    k.kernelParams = args;
    k.extra = nullptr;
    return k;
}

int main() {
    const size_t n = 4u << 20, tail = 4096;
    unsigned char *h_in = nullptr, *h_out = nullptr, *d_in = nullptr, *d_mid = nullptr;
    CHECK(hipHostMalloc((void**)&h_in, n, hipHostMallocDefault));
    CHECK(hipHostMalloc((void**)&h_out, n + tail, hipHostMallocDefault));
    CHECK(hipMalloc((void**)&d_in, n));
    CHECK(hipMalloc((void**)&d_mid, n + tail));
    CHECK(hipMemset(d_mid, 0, n + tail));
    hipStream_t s;
    CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    hipEvent_t done;
    CHECK(hipEventCreateWithFlags(&done, hipEventDisableTiming));

    hipGraph_t graph, child;
    hipGraphNode_t d2h, h2d, d2d, fill, join, record, sub, to_tmp, scratch;
    CHECK(hipGraphCreate(&child, 0));
    CHECK(hipGraphAddMemcpyNode1D(&d2h, child, nullptr, 0, h_out, d_mid, n + tail,
                                  hipMemcpyDeviceToHost));
    CHECK(hipGraphCreate(&graph, 0));
    CHECK(hipGraphAddMemcpyNode1D(&h2d, graph, nullptr, 0, d_in, h_in, n, hipMemcpyHostToDevice));
#if defined(__HIP_PLATFORM_AMD__)
    unsigned char* d_tmp = nullptr;
    CHECK(hipMalloc((void**)&d_tmp, n));
    CHECK(hipGraphAddEmptyNode(&scratch, graph, nullptr, 0));
#else
    cudaMemAllocNodeParams ap;
    std::memset(&ap, 0, sizeof ap);
    ap.poolProps.allocType = cudaMemAllocationTypePinned;
    ap.poolProps.location.type = cudaMemLocationTypeDevice;
    ap.poolProps.location.id = 0;
    ap.bytesize = n;
    CHECK(cudaGraphAddMemAllocNode(&scratch, graph, nullptr, 0, &ap));
    unsigned char* d_tmp = (unsigned char*)ap.dptr;
#endif
    hipGraphNode_t first[2] = {h2d, scratch};
    CHECK(hipGraphAddMemcpyNode1D(&to_tmp, graph, first, 2, d_tmp, d_in, n,
                                  hipMemcpyDeviceToDevice));
    CHECK(hipGraphAddMemcpyNode1D(&d2d, graph, &to_tmp, 1, d_mid, d_tmp, n,
                                  hipMemcpyDeviceToDevice));
#if !defined(__HIP_PLATFORM_AMD__)
    hipGraphNode_t release;
    CHECK(cudaGraphAddMemFreeNode(&release, graph, &d2d, 1, ap.dptr));
#endif
    hipMemsetParams mp;
    std::memset(&mp, 0, sizeof mp);
    mp.dst = d_mid + n;
    mp.value = 0x5a;
    mp.elementSize = 1;
    mp.width = tail;
    mp.height = 1;
    mp.pitch = tail;
    CHECK(hipGraphAddMemsetNode(&fill, graph, nullptr, 0, &mp));
    hipGraphNode_t inc, xr;
    void* inc_args[] = {&d_mid, (void*)&n};
    hipKernelNodeParams kp = kernel_node((void*)add_one, n, inc_args);
    CHECK(hipGraphAddKernelNode(&inc, graph, &d2d, 1, &kp));
    unsigned int key = 0x3c;
    void* mix_args[] = {&d_mid, (void*)&n, &key};
    hipKernelNodeParams mk = kernel_node((void*)mix, n, mix_args);
    CHECK(hipGraphAddKernelNode(&xr, graph, &inc, 1, &mk));
    hipGraphNode_t both[2] = {xr, fill};
    CHECK(hipGraphAddEmptyNode(&join, graph, both, 2));
    CHECK(hipGraphAddEventRecordNode(&record, graph, &join, 1, done));
    CHECK(hipGraphAddChildGraphNode(&sub, graph, &record, 1, child));

    hipGraphExec_t exec;
    CHECK(hipGraphInstantiateWithFlags(&exec, graph, 0));
    std::vector<unsigned char> want(n + tail), copied(n + tail);
    for (int l = 0; l < 4; ++l) {
        if (l > 0) {
            // The xor node's key changes in the executable graph only.
            key = 0x11u * (unsigned)(l + 1) + 0x100u * (unsigned)l;
            CHECK(hipGraphExecKernelNodeSetParams(exec, xr, &mk));
        }
        for (size_t i = 0; i < n; ++i) h_in[i] = (unsigned char)(i * 13 + l * 71 + (i >> 12));
        std::memset(h_out, 0, n + tail);
        CHECK(hipGraphLaunch(exec, s));
        CHECK(hipStreamSynchronize(s));
        for (size_t i = 0; i < n + tail; ++i) {
            want[i] = i < n ? (unsigned char)((h_in[i] + 1) ^ (key & 0xff)) : 0x5a;
            copied[i] = i < n ? h_in[i] : 0x5a;
        }
        // The kernels' result; without kernels (a stand-in runtime) the copies' alone.
        if (hrr_kernels_ran()) {
            expect_equal("kernel nodes' result", h_out, want.data(), n + tail);
        } else {
            expect_copied("copy nodes' result", h_out, copied.data(), n + tail);
        }
    }
    CHECK(hipGraphExecDestroy(exec));
    CHECK(hipGraphDestroy(graph));
    CHECK(hipGraphDestroy(child));
    CHECK(hipEventDestroy(done));
    CHECK(hipStreamDestroy(s));
    CHECK(hipFree(d_in));
    CHECK(hipFree(d_mid));
#if defined(__HIP_PLATFORM_AMD__)
    CHECK(hipFree(d_tmp));
#endif
    CHECK(hipHostFree(h_in));
    CHECK(hipHostFree(h_out));
    std::printf("graph_explicit: ok (4 launches of an explicit graph with two kernel nodes, a key update and a child graph)\n");
    return 0;
}
