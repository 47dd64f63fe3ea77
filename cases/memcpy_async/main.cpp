// memcpy_async: asynchronous copies on several streams with pinned buffers; the D2H
// results are only final once their stream is synchronised, which capture must wait for
// before it records them.
#include "../common/hrr_gpu.h"

#include <vector>

__global__ void slow_square(float* p, int n, int spin) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = p[i];
        for (int k = 0; k < spin; ++k) v = v * 0.999999f + 0.000001f * p[i];
        p[i] = v * v;
    }
}

int main() {
    const int streams = 4, n = 1 << 20;
    hipStream_t s[streams];
    float *host[streams], *dev[streams];
    for (int k = 0; k < streams; ++k) {
        CHECK(hipStreamCreate(&s[k]));
        CHECK(hipHostMalloc((void**)&host[k], n * sizeof(float), hipHostMallocDefault));
        CHECK(hipMalloc((void**)&dev[k], n * sizeof(float)));
        for (int i = 0; i < n; ++i) host[k][i] = (float)((i + k) % 1024) / 32.0f;
    }
    for (int k = 0; k < streams; ++k) {
        CHECK(hipMemcpyAsync(dev[k], host[k], n * sizeof(float), hipMemcpyHostToDevice, s[k]));
        slow_square<<<n / 256, 256, 0, s[k]>>>(dev[k], n, 2000);
        CHECK(hipMemcpyAsync(host[k], dev[k], n * sizeof(float), hipMemcpyDeviceToHost, s[k]));
    }
    for (int k = 0; k < streams; ++k) CHECK(hipStreamSynchronize(s[k]));
    for (int k = 0; k < streams; ++k) {
        for (int i = 0; i < n; i += 4099) {
            float x = (float)((i + k) % 1024) / 32.0f;
            if (hrr_kernels_ran() && (host[k][i] < x * x * 0.99f - 0.01f || host[k][i] > x * x * 1.01f + 0.01f)) {
                std::fprintf(stderr, "stream %d element %d: %f, expected about %f\n", k, i, host[k][i], x * x);
                return 1;
            }
        }
        CHECK(hipFree(dev[k]));
        CHECK(hipHostFree(host[k]));
        CHECK(hipStreamDestroy(s[k]));
    }
    std::printf("memcpy_async: ok\n");
    return 0;
}
