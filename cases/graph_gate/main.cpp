// graph_gate: a stream gated by a host callback that waits for the program to open the
// gate, which it does only once hipGraphLaunch returned (a pipeline whose host stage
// releases work queued ahead of it). The graph, made by stream capture (a kernel, a copy
// out into page-locked memory), runs behind the gate in four rounds, each with new input
// copied in before the gate. Capture reads the graph's output on a reader thread once the
// launch completed (capture/src/graph_launch.rs): a capture that waited for the stream
// inside the launch would keep the gate shut, and the callback gives up after 5 s (under
// the 20 s a control's guard case gets at least, so a shut gate is a named failure, not a
// timeout), the program failing with the round named. The control `graph_launch_wait`
// makes capture wait there.
#include "../common/hrr_gpu.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

constexpr int ROUNDS = 4, N = 1 << 16;

static std::atomic<int> gate_open{0}, gave_up{0};

static void gate(hipStream_t, hipError_t, void*) {
    for (int i = 0; i < 5000 && !gate_open.load(); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (!gate_open.load()) gave_up = 1;
}

__global__ void mix(const int* in, int* out, int k, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = (in[i] * 31 + k) ^ (i << 3);
}

int main() {
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    int *d_in = nullptr, *d_out = nullptr, *in = nullptr, *out = nullptr;
    CHECK(hipMalloc((void**)&d_in, N * sizeof(int)));
    CHECK(hipMalloc((void**)&d_out, N * sizeof(int)));
    CHECK(hipHostMalloc((void**)&in, N * sizeof(int), hipHostMallocDefault));
    CHECK(hipHostMalloc((void**)&out, N * sizeof(int), hipHostMallocDefault));
    hipGraph_t g;
    hipGraphExec_t x;
    CHECK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
    mix<<<(N + 255) / 256, 256, 0, s>>>(d_in, d_out, 17, N);
    CHECK(hipMemcpyAsync(out, d_out, N * sizeof(int), hipMemcpyDeviceToHost, s));
    CHECK(hipStreamEndCapture(s, &g));
    CHECK(hipGraphInstantiateWithFlags(&x, g, 0));
    long long sum = 0;
    for (int r = 0; r < ROUNDS; ++r) {
        for (int i = 0; i < N; ++i) in[i] = i * (r + 2) + r;
        CHECK(hipMemcpyAsync(d_in, in, N * sizeof(int), hipMemcpyHostToDevice, s));
        gate_open = 0;
        CHECK(hipStreamAddCallback(s, gate, nullptr, 0));
        CHECK(hipGraphLaunch(x, s));
        gate_open = 1;
        CHECK(hipStreamSynchronize(s));
        if (gave_up) {
            std::fprintf(stderr, "round %d: the gate was never opened (the launch waited for the stream)\n", r);
            return 1;
        }
        // Printed, not checked here: the stand-in runtime runs no kernel of a case (its
        // output is the same natively and under capture, which the harness compares).
        for (int i = 0; i < N; ++i) sum += out[i] * (long long)(i % 7 + 1);
    }
    CHECK(hipGraphExecDestroy(x));
    CHECK(hipGraphDestroy(g));
    std::printf("graph_gate: %d rounds, sum %lld\n", ROUNDS, sum);
    return 0;
}
