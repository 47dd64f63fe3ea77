// memcpy_kinds: every direction of hipMemcpy (host to device, device to host, device to
// device, host to host, default), at offsets inside allocations.
#include "../common/hrr_gpu.h"

#include <vector>

int main() {
    const size_t n = 1 << 18;
    std::vector<unsigned char> src(n), back(n), h2h(n);
    for (size_t i = 0; i < n; ++i) src[i] = (unsigned char)(i * 131 + 7);
    unsigned char *a, *b;
    CHECK(hipMalloc((void**)&a, n));
    CHECK(hipMalloc((void**)&b, n));
    CHECK(hipMemcpy(a, src.data(), n, hipMemcpyHostToDevice));
    CHECK(hipMemcpy(b, a, n, hipMemcpyDeviceToDevice));
    CHECK(hipMemcpy(back.data(), b, n, hipMemcpyDeviceToHost));
    expect_copied("h2d-d2d-d2h", back.data(), src.data(), n);
    // Offsets inside both allocations.
    CHECK(hipMemcpy(b + 1000, a + 5000, 20000, hipMemcpyDeviceToDevice));
    CHECK(hipMemcpy(back.data(), b + 1000, 20000, hipMemcpyDeviceToHost));
    expect_copied("d2d at offsets", back.data(), src.data() + 5000, 20000);
    // The runtime works out the direction.
    CHECK(hipMemcpy(a + 7, src.data() + 100, 4096, hipMemcpyDefault));
    CHECK(hipMemcpy(back.data(), a + 7, 4096, hipMemcpyDefault));
    expect_copied("default", back.data(), src.data() + 100, 4096);
    CHECK(hipMemcpy(h2h.data(), src.data(), n, hipMemcpyHostToHost));
    expect_copied("h2h", h2h.data(), src.data(), n);
    CHECK(hipFree(a));
    CHECK(hipFree(b));
    std::printf("memcpy_kinds: ok\n");
    return 0;
}
