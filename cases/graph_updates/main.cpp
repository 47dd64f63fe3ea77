// graph_updates: a graph of three copies (H2D into a, D2D a to b, D2H from b) whose
// dependencies are edges added afterwards (hipGraphAddDependencies; one extra edge added
// and removed again), then the memcpy nodes' parameters updated: in the graph (the H2D
// node reads another host buffer: executable graphs made before keep the old source,
// those made after see the new one) and in one executable graph (its D2H node writes
// another host buffer). Each launch's outputs are checked, with new input each time:
// replay must give every updated node its own host side and rebuild the edges. Under
// CUDA a stream is then captured into a graph of the program's own after its explicit
// node (cudaStreamBeginCaptureToGraph).
#include "../common/hrr_gpu.h"

#include <cstring>
#include <vector>

#if !defined(__HIPCC__) && !defined(__HIP_PLATFORM_AMD__)
#define hipGraphMemcpyNodeSetParams1D cudaGraphMemcpyNodeSetParams1D
#define hipGraphExecMemcpyNodeSetParams1D cudaGraphExecMemcpyNodeSetParams1D
// CUDA 13's edge forms: the default edges (no edge data).
static inline cudaError_t hipGraphAddDependencies(cudaGraph_t g, const cudaGraphNode_t* from,
                                                  const cudaGraphNode_t* to, size_t n) {
    return cudaGraphAddDependencies(g, from, to, nullptr, n);
}
static inline cudaError_t hipGraphRemoveDependencies(cudaGraph_t g, const cudaGraphNode_t* from,
                                                     const cudaGraphNode_t* to, size_t n) {
    return cudaGraphRemoveDependencies(g, from, to, nullptr, n);
}
#endif

static const size_t N = 64 * 1024;

static void fill(std::vector<unsigned char>& v, unsigned seed) {
    for (size_t i = 0; i < v.size(); ++i) v[i] = (unsigned char)((i * 131 + seed * 17 + (i >> 9)) & 0xff);
}

// Launches x on s, waits, and checks that `out` holds `want`.
static void run(hipGraphExec_t x, hipStream_t s, const char* what, std::vector<unsigned char>& out,
                const std::vector<unsigned char>& want) {
    std::memset(out.data(), 0, N);
    CHECK(hipGraphLaunch(x, s));
    CHECK(hipStreamSynchronize(s));
    expect_copied(what, out.data(), want.data(), N);
}

int main() {
    std::vector<unsigned char> in_a(N), in_b(N), out_a(N), out_b(N);
    unsigned char *da = nullptr, *db = nullptr;
    CHECK(hipMalloc((void**)&da, N));
    CHECK(hipMalloc((void**)&db, N));
    hipStream_t s;
    CHECK(hipStreamCreate(&s));

    hipGraph_t g;
    CHECK(hipGraphCreate(&g, 0));
    hipGraphNode_t h2d, d2d, d2h;
    CHECK(hipGraphAddMemcpyNode1D(&h2d, g, nullptr, 0, da, in_a.data(), N, hipMemcpyHostToDevice));
    CHECK(hipGraphAddMemcpyNode1D(&d2d, g, nullptr, 0, db, da, N, hipMemcpyDeviceToDevice));
    CHECK(hipGraphAddMemcpyNode1D(&d2h, g, nullptr, 0, out_a.data(), db, N, hipMemcpyDeviceToHost));
    // The chain as edges, plus one edge (h2d -> d2h) added and removed again.
    hipGraphNode_t from[3] = {h2d, d2d, h2d}, to[3] = {d2d, d2h, d2h};
    CHECK(hipGraphAddDependencies(g, from, to, 3));
    CHECK(hipGraphRemoveDependencies(g, from + 2, to + 2, 1));

    hipGraphExec_t before;
    CHECK(hipGraphInstantiateWithFlags(&before, g, 0));
    fill(in_a, 1);
    run(before, s, "launch 1 (a to a)", out_a, in_a);

    // The graph's H2D node now reads in_b: a new executable graph sees it, `before` not.
    CHECK(hipGraphMemcpyNodeSetParams1D(h2d, da, in_b.data(), N, hipMemcpyHostToDevice));
    hipGraphExec_t after;
    CHECK(hipGraphInstantiateWithFlags(&after, g, 0));
    fill(in_a, 2);
    fill(in_b, 3);
    run(before, s, "launch 2 (before the update: a to a)", out_a, in_a);
    run(after, s, "launch 3 (after the update: b to a)", out_a, in_b);

    // `before`'s D2H node now writes out_b; `after` still writes out_a.
    CHECK(hipGraphExecMemcpyNodeSetParams1D(before, d2h, out_b.data(), db, N, hipMemcpyDeviceToHost));
    fill(in_a, 4);
    fill(in_b, 5);
    run(before, s, "launch 4 (a to b)", out_b, in_a);
    run(after, s, "launch 5 (b to a)", out_a, in_b);

#if !defined(__HIPCC__) && !defined(__HIP_PLATFORM_AMD__)
    // Stream capture into the program's own graph (CUDA 12.3+), after its H2D node: the
    // captured D2D and D2H copies join the explicit node.
    {
        cudaGraph_t mixed;
        CHECK(cudaGraphCreate(&mixed, 0));
        cudaGraphNode_t up;
        CHECK(cudaGraphAddMemcpyNode1D(&up, mixed, nullptr, 0, da, in_a.data(), N, cudaMemcpyHostToDevice));
        hipStream_t cs;
        CHECK(hipStreamCreate(&cs));
        CHECK(cudaStreamBeginCaptureToGraph(cs, mixed, &up, nullptr, 1, cudaStreamCaptureModeGlobal));
        CHECK(hipMemcpyAsync(db, da, N, hipMemcpyDeviceToDevice, cs));
        CHECK(hipMemcpyAsync(out_b.data(), db, N, hipMemcpyDeviceToHost, cs));
        cudaGraph_t ended = nullptr;
        CHECK(cudaStreamEndCapture(cs, &ended));
        if (ended != mixed) {
            std::fprintf(stderr, "capture into a graph ended with another graph\n");
            return 1;
        }
        hipGraphExec_t mx;
        CHECK(hipGraphInstantiateWithFlags(&mx, mixed, 0));
        fill(in_a, 6);
        run(mx, s, "launch 6 (captured into the program's graph)", out_b, in_a);
        CHECK(hipGraphExecDestroy(mx));
        CHECK(hipGraphDestroy(mixed));
        CHECK(hipStreamDestroy(cs));
    }
#endif
    CHECK(hipGraphExecDestroy(before));
    CHECK(hipGraphExecDestroy(after));
    CHECK(hipGraphDestroy(g));
    CHECK(hipStreamDestroy(s));
    CHECK(hipFree(da));
    CHECK(hipFree(db));
    std::printf("graph_updates: ok\n");
    return 0;
}
