// copy_heavy: 4 GiB host-to-device and 4 GiB device-to-host (four rounds of 1 GiB, each
// round's content different), a kernel between. Benchmark program for capture overhead.
#include "../../cases/common/hrr_gpu.h"

#include <chrono>
#include <cstdint>
#include <vector>

__global__ void bump(uint64_t* p, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) p[i] += 1;
}

int main() {
    const size_t bytes = (size_t)1 << 30, n = bytes / 8;
    std::vector<uint64_t> h(n);
    for (size_t i = 0; i < n; ++i) h[i] = i * 0x9E3779B97F4A7C15ull;
    uint64_t* d = nullptr;
    CHECK(hipMalloc((void**)&d, bytes));
    auto t0 = std::chrono::steady_clock::now();
    for (int round = 0; round < 4; ++round) {
        CHECK(hipMemcpy(d, h.data(), bytes, hipMemcpyHostToDevice));
        bump<<<(unsigned)((n + 255) / 256), 256>>>(d, n);
        CHECK(hipMemcpy(h.data(), d, bytes, hipMemcpyDeviceToHost));
    }
    auto t1 = std::chrono::steady_clock::now();
    std::printf("copy_heavy: 4 GiB each way in %.3f s (h[1] = %llu)\n",
                std::chrono::duration<double>(t1 - t0).count(), (unsigned long long)h[1]);
    return h[1] == 0x9E3779B97F4A7C15ull + 4 ? 0 : 1;
}
