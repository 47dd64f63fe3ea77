// many_launches: 100,000 small kernel launches, then one result: the launch path's cost
// and correctness at volume.
#include "../common/hrr_gpu.h"

#include <vector>

__global__ void inc(unsigned* p) { p[threadIdx.x] += threadIdx.x + 1; }

int main() {
    const int launches = 100000;
    unsigned* d = nullptr;
    CHECK(hipMalloc((void**)&d, 64 * sizeof(unsigned)));
    CHECK(hipMemset(d, 0, 64 * sizeof(unsigned)));
    for (int k = 0; k < launches; ++k) inc<<<1, 64>>>(d);
    std::vector<unsigned> got(64), want(64);
    for (unsigned i = 0; i < 64; ++i) want[i] = (unsigned)launches * (i + 1);
    CHECK(hipMemcpy(got.data(), d, 64 * sizeof(unsigned), hipMemcpyDeviceToHost));
    expect_equal("inc", got.data(), want.data(), 64);
    CHECK(hipFree(d));
    std::printf("many_launches: ok (%d launches)\n", launches);
    return 0;
}
