// memset_patterns: hipMemset and hipMemsetAsync with several values and extents,
// including partial ranges inside an allocation.
#include "../common/hrr_gpu.h"

#include <vector>

int main() {
    const size_t n = 1 << 20;
    unsigned char* d = nullptr;
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    CHECK(hipMalloc((void**)&d, n));
    CHECK(hipMemset(d, 0xA5, n));
    CHECK(hipMemset(d + 4096, 0x00, 8192));
    CHECK(hipMemsetAsync(d + 65536, 0x3C, 1000, s));
    CHECK(hipMemsetAsync(d + n - 17, 0xFF, 17, s));
    CHECK(hipStreamSynchronize(s));
    std::vector<unsigned char> got(n), want(n, 0xA5);
    for (size_t i = 4096; i < 4096 + 8192; ++i) want[i] = 0;
    for (size_t i = 65536; i < 65536 + 1000; ++i) want[i] = 0x3C;
    for (size_t i = n - 17; i < n; ++i) want[i] = 0xFF;
    CHECK(hipMemcpy(got.data(), d, n, hipMemcpyDeviceToHost));
    expect_copied("memset", got.data(), want.data(), n);
    CHECK(hipFree(d));
    CHECK(hipStreamDestroy(s));
    std::printf("memset_patterns: ok\n");
    return 0;
}
