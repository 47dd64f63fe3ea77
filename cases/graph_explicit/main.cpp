// graph_explicit: a graph built node by node, with dependencies: an H2D copy of the input,
// D2D copies after it through a scratch buffer (under CUDA graph memory: an allocation
// node before the copies and a free node after them; HIP 5.2 has no memory nodes, so a
// plain buffer there), a memset of a tail region beside them, an empty node joining both,
// an event record node, then a child graph holding the D2H copy of the result. Launched
// four times with new input; each launch's output is checked. Replay must rebuild every
// node with its dependencies: without them the copies run unordered and the D2H node reads
// a buffer the launch has not written yet.
#include "../common/hrr_gpu.h"

#include <cstring>

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
    hipGraphNode_t both[2] = {d2d, fill};
    CHECK(hipGraphAddEmptyNode(&join, graph, both, 2));
    CHECK(hipGraphAddEventRecordNode(&record, graph, &join, 1, done));
    CHECK(hipGraphAddChildGraphNode(&sub, graph, &record, 1, child));

    hipGraphExec_t exec;
    CHECK(hipGraphInstantiateWithFlags(&exec, graph, 0));
    for (int l = 0; l < 4; ++l) {
        for (size_t i = 0; i < n; ++i) h_in[i] = (unsigned char)(i * 13 + l * 71 + (i >> 12));
        std::memset(h_out, 0, n + tail);
        CHECK(hipGraphLaunch(exec, s));
        CHECK(hipStreamSynchronize(s));
        for (size_t i = 0; i < n + tail; ++i) {
            unsigned char want = i < n ? h_in[i] : 0x5a;
            if (h_out[i] != want) {
                std::fprintf(stderr, "launch %d: byte %zu is %d, not %d\n", l, i, h_out[i], want);
                return 1;
            }
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
    std::printf("graph_explicit: ok (4 launches of an explicit graph with a child graph)\n");
    return 0;
}
