// host_register: ordinary host memory page-locked with hipHostRegister, used for async
// copies both ways, then unregistered.
#include "../common/hrr_gpu.h"

#include <cstdlib>
#include <vector>

__global__ void negate(int* p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = -p[i] * 3;
}

int main() {
    const int n = 1 << 18;
    int* host = (int*)aligned_alloc(4096, n * sizeof(int));
    for (int i = 0; i < n; ++i) host[i] = i - 1000;
    CHECK(hipHostRegister(host, n * sizeof(int), hipHostRegisterDefault));
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    int* d = nullptr;
    CHECK(hipMalloc((void**)&d, n * sizeof(int)));
    CHECK(hipMemcpyAsync(d, host, n * sizeof(int), hipMemcpyHostToDevice, s));
    negate<<<n / 256, 256, 0, s>>>(d, n);
    CHECK(hipMemcpyAsync(host, d, n * sizeof(int), hipMemcpyDeviceToHost, s));
    CHECK(hipStreamSynchronize(s));
    for (int i = 0; i < n; ++i)
        if (hrr_kernels_ran() && host[i] != -(i - 1000) * 3) { std::fprintf(stderr, "element %d\n", i); return 1; }
    CHECK(hipHostUnregister(host));
    CHECK(hipFree(d));
    CHECK(hipStreamDestroy(s));
    free(host);
    std::printf("host_register: ok\n");
    return 0;
}
