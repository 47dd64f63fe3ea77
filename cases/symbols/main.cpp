// symbols: a __device__ table written with hipMemcpyToSymbol, read by a kernel and read
// back with hipMemcpyFromSymbol.
#include "../common/hrr_gpu.h"

#include <vector>

__device__ int table[256];
__constant__ float coeffs[4];

__global__ void apply(float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = table[i % 256] * coeffs[i % 4];
}

int main() {
    std::vector<int> t(256);
    for (int i = 0; i < 256; ++i) t[i] = 3 * i - 100;
    float c[4] = {0.5f, 1.0f, 2.0f, -1.0f};
    CHECK(hipMemcpyToSymbol(HIP_SYMBOL(table), t.data(), sizeof(int) * 256));
    CHECK(hipMemcpyToSymbol(HIP_SYMBOL(coeffs), c, sizeof(c)));
    const int n = 4096;
    float* d = nullptr;
    CHECK(hipMalloc((void**)&d, n * sizeof(float)));
    apply<<<n / 256, 256>>>(d, n);
    std::vector<float> got(n), want(n);
    for (int i = 0; i < n; ++i) want[i] = t[i % 256] * c[i % 4];
    CHECK(hipMemcpy(got.data(), d, n * sizeof(float), hipMemcpyDeviceToHost));
    expect_equal("apply", got.data(), want.data(), n);
    std::vector<int> back(256);
    CHECK(hipMemcpyFromSymbol(back.data(), HIP_SYMBOL(table), sizeof(int) * 256));
    expect_equal("table", back.data(), t.data(), 256);
    CHECK(hipFree(d));
    std::printf("symbols: ok\n");
    return 0;
}
