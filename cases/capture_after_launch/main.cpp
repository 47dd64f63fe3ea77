// capture_after_launch: a kernel writes mapped page-locked memory on a stream, and before
// any synchronisation the program begins capturing that stream into a graph whose kernel
// reaches the same memory. Capture records an event of its own after the first launch, to
// tell later whether it finished; that event must not be asked or waited for while the
// stream captures (HIP invalidates a capture at a query of an event last recorded on the
// capturing stream, clr's hip_event.cpp). The graph is launched three times, the host
// changing its mapped input in between, and the memory is checked after each.
// Then the same through a fork: a second stream runs a kernel on other mapped memory,
// and joins a capture of the first by waiting for an event recorded in it (it captures
// from then on, without a BeginCapture of its own); its captured kernel reaches that
// memory; the first stream waits for it back and ends the capture.
#include "../common/hrr_gpu.h"

#include <vector>

__global__ void fill(int* m, int n, int k) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) m[i] = i * k;
}

__global__ void add(const int* in, int* m, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) m[i] += in[i];
}

int main() {
    const int n = 4096, rounds = 3;
    int *m = nullptr, *dm = nullptr, *in = nullptr, *din = nullptr;
    CHECK(hipHostMalloc((void**)&m, n * sizeof(int), hipHostMallocMapped));
    CHECK(hipHostMalloc((void**)&in, n * sizeof(int), hipHostMallocMapped));
    CHECK(hipHostGetDevicePointer((void**)&dm, m, 0));
    CHECK(hipHostGetDevicePointer((void**)&din, in, 0));
    hipStream_t s;
    CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));

    // Not synchronised: still running (for all capture knows) when the capture begins.
    fill<<<n / 256, 256, 0, s>>>(dm, n, 3);
    CHECK(hipGetLastError());
    hipGraph_t graph;
    hipGraphExec_t exec;
    CHECK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
    add<<<n / 256, 256, 0, s>>>(din, dm, n);
    CHECK(hipGetLastError());
    CHECK(hipStreamEndCapture(s, &graph));
    CHECK(hipGraphInstantiateWithFlags(&exec, graph, 0));

    std::vector<int> want(n);
    for (int i = 0; i < n; ++i) want[i] = i * 3;
    for (int r = 0; r < rounds; ++r) {
        for (int i = 0; i < n; ++i) in[i] = i + r * 7;
        CHECK(hipGraphLaunch(exec, s));
        CHECK(hipStreamSynchronize(s));
        for (int i = 0; i < n; ++i) want[i] += i + r * 7;
        expect_equal("mapped memory after a graph launch", m, want.data(), n);
    }
    CHECK(hipGraphExecDestroy(exec));
    CHECK(hipGraphDestroy(graph));

    int *f = nullptr, *df = nullptr;
    CHECK(hipHostMalloc((void**)&f, n * sizeof(int), hipHostMallocMapped));
    CHECK(hipHostGetDevicePointer((void**)&df, f, 0));
    hipStream_t s2;
    hipEvent_t fork, join;
    CHECK(hipStreamCreateWithFlags(&s2, hipStreamNonBlocking));
    CHECK(hipEventCreateWithFlags(&fork, hipEventDisableTiming));
    CHECK(hipEventCreateWithFlags(&join, hipEventDisableTiming));
    fill<<<n / 256, 256, 0, s2>>>(df, n, 5);
    CHECK(hipGetLastError());
    CHECK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
    CHECK(hipEventRecord(fork, s));
    CHECK(hipStreamWaitEvent(s2, fork, 0));
    add<<<n / 256, 256, 0, s2>>>(din, df, n);
    CHECK(hipGetLastError());
    CHECK(hipEventRecord(join, s2));
    CHECK(hipStreamWaitEvent(s, join, 0));
    CHECK(hipStreamEndCapture(s, &graph));
    CHECK(hipGraphInstantiateWithFlags(&exec, graph, 0));
    for (int i = 0; i < n; ++i) want[i] = i * 5;
    for (int r = 0; r < rounds; ++r) {
        for (int i = 0; i < n; ++i) in[i] = i * 2 + r;
        CHECK(hipGraphLaunch(exec, s));
        CHECK(hipStreamSynchronize(s));
        for (int i = 0; i < n; ++i) want[i] += i * 2 + r;
        expect_equal("mapped memory after a forked graph's launch", f, want.data(), n);
    }
    CHECK(hipGraphExecDestroy(exec));
    CHECK(hipGraphDestroy(graph));
    CHECK(hipEventDestroy(fork));
    CHECK(hipEventDestroy(join));
    CHECK(hipStreamDestroy(s2));
    CHECK(hipHostFree(f));
    CHECK(hipStreamDestroy(s));
    CHECK(hipHostFree(in));
    CHECK(hipHostFree(m));
    std::printf("capture_after_launch: ok\n");
    return 0;
}
