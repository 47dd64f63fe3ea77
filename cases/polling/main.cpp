// polling: work polled until it is done, then read (issue 22's shape). A kernel that
// spins for about 10 ms is bracketed by two timing events; the host polls hipEventQuery
// until the second reports completion (thousands of polls that find it running), reads
// the elapsed time, polls hipStreamQuery on a second stream the same way, and copies
// both results back. Replay must reach what each successful poll observed: a replay
// that went on after the poll without the work done reads the elapsed time too early
// (hipErrorNotReady) and fails.
#include "../common/hrr_gpu.h"

#include <vector>

// Each thread waits `cycles` clock ticks, then writes its value.
__global__ void spin_then_fill(int* out, int n, int k, long long cycles) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
    if (i < n) out[i] = i * k + 1;
}

static long poll_event(hipEvent_t e) {
    long polls = 0;
    hipError_t q;
    while ((q = hipEventQuery(e)) == hipErrorNotReady) ++polls;
    CHECK(q);
    return polls;
}

static long poll_stream(hipStream_t s) {
    long polls = 0;
    hipError_t q;
    while ((q = hipStreamQuery(s)) == hipErrorNotReady) ++polls;
    CHECK(q);
    return polls;
}

int main() {
    const int n = 1 << 16;
    const long long cycles = 20000000;  // about 10 ms at 2 GHz
    int *a = nullptr, *b = nullptr;
    CHECK(hipMalloc((void**)&a, n * sizeof(int)));
    CHECK(hipMalloc((void**)&b, n * sizeof(int)));
    hipStream_t s1, s2;
    CHECK(hipStreamCreate(&s1));
    CHECK(hipStreamCreate(&s2));
    hipEvent_t start, stop;
    CHECK(hipEventCreate(&start));
    CHECK(hipEventCreate(&stop));
    CHECK(hipEventRecord(start, s1));
    spin_then_fill<<<n / 256, 256, 0, s1>>>(a, n, 3, cycles);
    CHECK(hipEventRecord(stop, s1));
    long polls = poll_event(stop);
    float ms = -1;
    CHECK(hipEventElapsedTime(&ms, start, stop));
    spin_then_fill<<<n / 256, 256, 0, s2>>>(b, n, 5, cycles / 2);
    polls += poll_stream(s2);
    std::vector<int> got(n), want(n);
    for (int i = 0; i < n; ++i) want[i] = i * 3 + 1;
    CHECK(hipMemcpy(got.data(), a, n * sizeof(int), hipMemcpyDeviceToHost));
    expect_equal("spin_then_fill (event polled)", got.data(), want.data(), n);
    for (int i = 0; i < n; ++i) want[i] = i * 5 + 1;
    CHECK(hipMemcpy(got.data(), b, n * sizeof(int), hipMemcpyDeviceToHost));
    expect_equal("spin_then_fill (stream polled)", got.data(), want.data(), n);
    CHECK(hipEventDestroy(start));
    CHECK(hipEventDestroy(stop));
    CHECK(hipStreamDestroy(s1));
    CHECK(hipStreamDestroy(s2));
    CHECK(hipFree(a));
    CHECK(hipFree(b));
    std::fprintf(stderr, "polling: %ld polls, %.3f ms\n", polls, ms);
    std::printf("polling: ok\n");
    return 0;
}
