// launch_heavy: 200,000 small kernel launches (a few microseconds each), then one result.
// Benchmark program for capture overhead (bench/gpu/run.sh), not a harness case.
#include "../../cases/common/hrr_gpu.h"

#include <chrono>
#include <vector>

__global__ void step(float* p, float a) { p[threadIdx.x] = p[threadIdx.x] * a + 1.0f; }

int main() {
    const int launches = 200000;
    float* d = nullptr;
    CHECK(hipMalloc((void**)&d, 256 * sizeof(float)));
    CHECK(hipMemset(d, 0, 256 * sizeof(float)));
    CHECK(hipDeviceSynchronize());
    auto t0 = std::chrono::steady_clock::now();
    for (int k = 0; k < launches; ++k) step<<<1, 256>>>(d, 0.5f);
    CHECK(hipDeviceSynchronize());
    auto t1 = std::chrono::steady_clock::now();
    std::vector<float> h(256);
    CHECK(hipMemcpy(h.data(), d, 256 * sizeof(float), hipMemcpyDeviceToHost));
    std::printf("launch_heavy: %d launches in %.3f s (value %f)\n", launches,
                std::chrono::duration<double>(t1 - t0).count(), h[0]);
    return h[0] > 1.99f && h[0] < 2.01f ? 0 : 1;
}
