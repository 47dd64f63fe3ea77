// events: events with and without timing, recorded, synchronised, queried, timed and
// destroyed around a kernel whose output is checked.
#include "../common/hrr_gpu.h"

#include <vector>

__global__ void iota(long long* p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = (long long)i * i - 5;
}

int main() {
    const int n = 1 << 15;
    hipEvent_t start, stop, marker;
    CHECK(hipEventCreate(&start));
    CHECK(hipEventCreateWithFlags(&stop, hipEventDefault));
    CHECK(hipEventCreateWithFlags(&marker, hipEventDisableTiming));
    long long* d = nullptr;
    CHECK(hipMalloc((void**)&d, n * sizeof(long long)));
    CHECK(hipEventRecord(start, 0));
    iota<<<n / 128, 128>>>(d, n);
    CHECK(hipEventRecord(marker, 0));
    CHECK(hipEventRecord(stop, 0));
    CHECK(hipEventSynchronize(stop));
    if (hipEventQuery(marker) != hipSuccess) {
        std::fprintf(stderr, "marker not complete after a later event\n");
        return 1;
    }
    float ms = -1;
    CHECK(hipEventElapsedTime(&ms, start, stop));
    std::vector<long long> got(n), want(n);
    for (int i = 0; i < n; ++i) want[i] = (long long)i * i - 5;
    CHECK(hipMemcpy(got.data(), d, n * sizeof(long long), hipMemcpyDeviceToHost));
    expect_equal("iota", got.data(), want.data(), n);
    CHECK(hipEventDestroy(start));
    CHECK(hipEventDestroy(stop));
    CHECK(hipEventDestroy(marker));
    CHECK(hipFree(d));
    std::printf("events: ok (%.3f ms)\n", ms);
    return 0;
}
