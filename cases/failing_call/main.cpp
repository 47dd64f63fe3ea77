// failing_call: calls that fail on purpose (an impossible allocation, a device that does
// not exist, an invalid stream query). Capture records their error codes; replay must see
// the same errors, and the program's real work must still check out.
#include "../common/hrr_gpu.h"

#include <vector>

__global__ void twice(int* p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = 2 * i;
}

int main() {
    void* huge = nullptr;
    hipError_t e1 = hipMalloc(&huge, (size_t)1 << 52);
    hipError_t e2 = hipSetDevice(9999);
    if (e1 == hipSuccess || e2 == hipSuccess) {
        std::fprintf(stderr, "expected failures succeeded (%d, %d)\n", (int)e1, (int)e2);
        return 1;
    }
    const int n = 4096;
    int* d = nullptr;
    CHECK(hipSetDevice(0));
    CHECK(hipMalloc((void**)&d, n * sizeof(int)));
    twice<<<n / 256, 256>>>(d, n);
    std::vector<int> got(n), want(n);
    for (int i = 0; i < n; ++i) want[i] = 2 * i;
    CHECK(hipMemcpy(got.data(), d, n * sizeof(int), hipMemcpyDeviceToHost));
    expect_equal("twice", got.data(), want.data(), n);
    CHECK(hipFree(d));
    std::printf("failing_call: ok (malloc %d, set device %d)\n", (int)e1, (int)e2);
    return 0;
}
