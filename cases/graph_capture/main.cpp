// graph_capture: a stream captured into a graph in global capture mode, over two streams
// joined by events, with an H2D copy, kernels and a D2H copy inside; instantiated once and
// launched several times with the host input changed between launches, each launch's
// result checked. A second thread does unrelated work on its own stream while the capture
// is open: under global mode its calls (and capture's on its behalf) must not disturb it.
// Capture must never wait for the capturing streams (that invalidates the capture, and
// EndCapture then fails), yet must check the D2H node after every launch.
#include "../common/hrr_gpu.h"

#include <atomic>
#include <thread>

__global__ void scale(int* out, const int* in, int k, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] * k;
}

__global__ void offset(int* out, const int* in, int k, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] + k;
}

__global__ void combine(int* out, const int* a, const int* b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}

__global__ void fill(int* out, int v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = v + i;
}

int main() {
    const int n = 1 << 12, launches = 4;
    const size_t bytes = n * sizeof(int);
    int *h_in = nullptr, *h_out = nullptr, *h_side = nullptr;
    CHECK(hipHostMalloc((void**)&h_in, bytes, hipHostMallocDefault));
    CHECK(hipHostMalloc((void**)&h_out, bytes, hipHostMallocDefault));
    CHECK(hipHostMalloc((void**)&h_side, bytes, hipHostMallocDefault));
    int *d_in, *d_a, *d_b, *d_out, *d_side;
    CHECK(hipMalloc((void**)&d_in, bytes));
    CHECK(hipMalloc((void**)&d_a, bytes));
    CHECK(hipMalloc((void**)&d_b, bytes));
    CHECK(hipMalloc((void**)&d_out, bytes));
    CHECK(hipMalloc((void**)&d_side, bytes));
    hipStream_t s1, s2, side;
    CHECK(hipStreamCreateWithFlags(&s1, hipStreamNonBlocking));
    CHECK(hipStreamCreateWithFlags(&s2, hipStreamNonBlocking));
    CHECK(hipStreamCreateWithFlags(&side, hipStreamNonBlocking));
    hipEvent_t fork, join;
    CHECK(hipEventCreateWithFlags(&fork, hipEventDisableTiming));
    CHECK(hipEventCreateWithFlags(&join, hipEventDisableTiming));

    // The second thread: unrelated work enqueued while the capture is open (everything it
    // needs was allocated before), waited for once the capture has ended.
    std::atomic<int> phase{0};
    int side_failed = 0;
    std::thread other([&] {
        while (phase.load() < 1) std::this_thread::yield();
        fill<<<n / 256, 256, 0, side>>>(d_side, 7, n);
        CHECK(hipMemcpyAsync(h_side, d_side, bytes, hipMemcpyDeviceToHost, side));
        phase.store(2);
        while (phase.load() < 3) std::this_thread::yield();
        CHECK(hipStreamSynchronize(side));
        for (int i = 0; i < n && hrr_kernels_ran(); ++i)  // fill's result
            if (h_side[i] != 7 + i) { side_failed = 1; break; }
    });

    for (int i = 0; i < n; ++i) h_in[i] = i;
    hipGraph_t graph;
    CHECK(hipStreamBeginCapture(s1, hipStreamCaptureModeGlobal));
    CHECK(hipMemcpyAsync(d_in, h_in, bytes, hipMemcpyHostToDevice, s1));
    CHECK(hipEventRecord(fork, s1));
    CHECK(hipStreamWaitEvent(s2, fork, 0));
    hipStreamCaptureStatus st = hipStreamCaptureStatusNone;
    CHECK(hipStreamIsCapturing(s2, &st));
    if (st != hipStreamCaptureStatusActive) {
        std::fprintf(stderr, "the forked stream is not capturing (%d)\n", (int)st);
        return 1;
    }
    scale<<<n / 256, 256, 0, s1>>>(d_a, d_in, 2, n);
    offset<<<n / 256, 256, 0, s2>>>(d_b, d_in, 3, n);
    CHECK(hipEventRecord(join, s2));
    CHECK(hipStreamWaitEvent(s1, join, 0));
    combine<<<n / 256, 256, 0, s1>>>(d_out, d_a, d_b, n);
    CHECK(hipMemcpyAsync(h_out, d_out, bytes, hipMemcpyDeviceToHost, s1));
    phase.store(1);
    while (phase.load() < 2) std::this_thread::yield();
    CHECK(hipStreamEndCapture(s1, &graph));
    phase.store(3);
    other.join();
    if (side_failed) {
        std::fprintf(stderr, "the second thread's work went wrong\n");
        return 1;
    }

    hipGraphExec_t exec;
    CHECK(hipGraphInstantiateWithFlags(&exec, graph, 0));
    for (int l = 0; l < launches; ++l) {
        for (int i = 0; i < n; ++i) h_in[i] = (i * 31 + l * 1000) % 65536;
        for (int i = 0; i < n; ++i) h_out[i] = -1;
        CHECK(hipGraphLaunch(exec, s1));
        CHECK(hipStreamSynchronize(s1));
        for (int i = 0; i < n && hrr_kernels_ran(); ++i) {  // the kernels' result
            if (h_out[i] != 3 * h_in[i] + 3) {
                std::fprintf(stderr, "launch %d: element %d is %d, not %d\n", l, i, h_out[i],
                             3 * h_in[i] + 3);
                return 1;
            }
        }
    }
    CHECK(hipGraphExecDestroy(exec));
    CHECK(hipGraphDestroy(graph));
    CHECK(hipEventDestroy(fork));
    CHECK(hipEventDestroy(join));
    CHECK(hipStreamDestroy(s1));
    CHECK(hipStreamDestroy(s2));
    CHECK(hipStreamDestroy(side));
    CHECK(hipFree(d_in));
    CHECK(hipFree(d_a));
    CHECK(hipFree(d_b));
    CHECK(hipFree(d_out));
    CHECK(hipFree(d_side));
    CHECK(hipHostFree(h_in));
    CHECK(hipHostFree(h_out));
    CHECK(hipHostFree(h_side));
    std::printf("graph_capture: ok (%d launches of a captured graph, global mode, 2 threads)\n",
                launches);
    return 0;
}
