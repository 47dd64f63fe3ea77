// malloc_free: many allocations of odd sizes, frees and re-allocations (addresses are
// reused), kernels given pointers into the middle of allocations.
#include "../common/hrr_gpu.h"

#include <vector>

__global__ void fill(unsigned* p, unsigned base, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) p[i] = base + (unsigned)i * 2654435761u;
}

int main() {
    const size_t sizes[] = {4, 100, 4096, 65536 + 12, 1 << 20, 3 << 20, 7, 123456};
    std::vector<unsigned*> bufs;
    for (size_t s : sizes) {
        unsigned* p = nullptr;
        CHECK(hipMalloc((void**)&p, s * sizeof(unsigned)));
        bufs.push_back(p);
    }
    // Free every other buffer and allocate again: the runtime reuses addresses.
    for (size_t i = 0; i < bufs.size(); i += 2) CHECK(hipFree(bufs[i]));
    for (size_t i = 0; i < bufs.size(); i += 2) CHECK(hipMalloc((void**)&bufs[i], sizes[i] * sizeof(unsigned)));
    for (size_t k = 0; k < bufs.size(); ++k) {
        size_t n = sizes[k];
        size_t off = n / 3;  // a pointer inside the allocation
        fill<<<(unsigned)((n - off + 255) / 256), 256>>>(bufs[k] + off, (unsigned)k * 1000u, n - off);
        std::vector<unsigned> got(n - off), want(n - off);
        for (size_t i = 0; i < n - off; ++i) want[i] = (unsigned)k * 1000u + (unsigned)i * 2654435761u;
        CHECK(hipMemcpy(got.data(), bufs[k] + off, (n - off) * sizeof(unsigned), hipMemcpyDeviceToHost));
        expect_equal("fill", got.data(), want.data(), n - off);
    }
    for (unsigned* p : bufs) CHECK(hipFree(p));
    std::printf("malloc_free: ok\n");
    return 0;
}
