// memset_patterns: hipMemset and hipMemsetAsync with several values and extents,
// including partial ranges inside an allocation; under CUDA also cudaMemset3D and
// cudaMemset3DAsync into a pitched allocation (each slice's rows set to the extent's
// width, the rest of each pitch kept).
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
#if !defined(__HIPCC__) && !defined(__HIP_PLATFORM_AMD__)
    {
        const size_t w = 100, h = 6, depth = 3;
        void* p = nullptr;
        size_t pitch = 0;
        CHECK(cudaMallocPitch(&p, &pitch, w, h * depth));
        const size_t total = pitch * h * depth;
        CHECK(cudaMemset(p, 0x11, total));
        cudaPitchedPtr pp = make_cudaPitchedPtr(p, pitch, w, h);
        CHECK(cudaMemset3D(pp, 0x5A, make_cudaExtent(w - 10, h, depth)));
        CHECK(cudaMemset3DAsync(pp, 0x3C, make_cudaExtent(20, h - 2, depth - 1), s));
        CHECK(cudaStreamSynchronize(s));
        std::vector<unsigned char> got3(total), want3(total, 0x11);
        for (size_t z = 0; z < depth; ++z)
            for (size_t y = 0; y < h; ++y)
                for (size_t x = 0; x < w - 10; ++x)
                    want3[(z * h + y) * pitch + x] = (z < depth - 1 && y < h - 2 && x < 20) ? 0x3C : 0x5A;
        CHECK(cudaMemcpy(got3.data(), p, total, cudaMemcpyDeviceToHost));
        expect_copied("memset3d", got3.data(), want3.data(), total);
        CHECK(cudaFree(p));
    }
#endif
    CHECK(hipFree(d));
    CHECK(hipStreamDestroy(s));
    std::printf("memset_patterns: ok\n");
    return 0;
}
