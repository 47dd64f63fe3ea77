// api_tour: one pass over every API family capture supports. Each device-to-host copy
// is an expected output that replay must reproduce byte for byte.
#include "../common/hrr_gpu.h"

#include <cstring>
#include <vector>

struct Pair {  // passed by value: the device pointers inside must be translated
    float* in;
    float* out;
    int n;
    float scale;
};

__global__ void axpy(float a, const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

__global__ void scale_pair(Pair p) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < p.n) p.out[i] = p.in[i] * p.scale;
}

__global__ void read_pinned(const int* host_pinned, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = host_pinned[i] * 3 + 1;
}

int main() {
    int count = 0;
    CHECK(hipGetDeviceCount(&count));
    CHECK(hipSetDevice(0));
    const int n = 1 << 16;
    const size_t bytes = n * sizeof(float);
    std::vector<float> hx(n), hy(n), out(n);
    for (int i = 0; i < n; ++i) {
        hx[i] = (float)(i % 97) * 0.5f;
        hy[i] = (float)(i % 13);
    }
    float *dx, *dy, *dz;
    CHECK(hipMalloc((void**)&dx, bytes));
    CHECK(hipMalloc((void**)&dy, bytes));
    CHECK(hipMalloc((void**)&dz, bytes));
    CHECK(hipMemcpy(dx, hx.data(), bytes, hipMemcpyHostToDevice));
    CHECK(hipMemcpy(dy, hy.data(), bytes, hipMemcpyHostToDevice));

    // Triple-chevron launch, then a sync D2H.
    axpy<<<(n + 255) / 256, 256>>>(2.0f, dx, dy, n);
    CHECK(hipMemcpy(out.data(), dy, bytes, hipMemcpyDeviceToHost));

    // Explicit launch through the runtime's launch function.
    float a = 0.25f;
    int nn = n;
    void* args[] = {&a, &dx, &dy, &nn};
    CHECK(hipLaunchKernel((const void*)axpy, dim3((n + 255) / 256), dim3(256), args, 0, 0));
    CHECK(hipMemcpy(out.data(), dy, bytes, hipMemcpyDefault));

    // Struct with device pointers passed by value.
    Pair p{dx, dz, n, 1.5f};
    scale_pair<<<(n + 127) / 128, 128>>>(p);
    CHECK(hipMemcpy(out.data(), dz, bytes, hipMemcpyDeviceToHost));

    // Streams, events, async copies and memsets.
    hipStream_t s1, s2, s3;
    CHECK(hipStreamCreate(&s1));
    CHECK(hipStreamCreateWithFlags(&s2, hipStreamNonBlocking));
    CHECK(hipStreamCreateWithPriority(&s3, hipStreamNonBlocking, 0));
    hipEvent_t e0, e1;
    CHECK(hipEventCreate(&e0));
    CHECK(hipEventCreateWithFlags(&e1, hipEventDefault));
    CHECK(hipEventRecord(e0, s1));
    CHECK(hipMemsetAsync(dz, 0x5a, bytes / 2, s1));
    axpy<<<(n + 255) / 256, 256, 0, s1>>>(-1.0f, dx, dz, n);
    CHECK(hipEventRecord(e1, s1));
    CHECK(hipStreamWaitEvent(s2, e1, 0));
    CHECK(hipMemcpyAsync(out.data(), dz, bytes, hipMemcpyDeviceToHost, s2));
    (void)hipStreamQuery(s2);  // timing-dependent result: replay accepts any
    CHECK(hipStreamSynchronize(s2));
    CHECK(hipEventSynchronize(e1));
    (void)hipEventQuery(e1);
    float ms = 0;
    CHECK(hipEventElapsedTime(&ms, e0, e1));
    CHECK(hipMemset(dz, 0x11, 4096));
    CHECK(hipMemcpy(dy, dz, bytes, hipMemcpyDeviceToDevice));
    CHECK(hipMemcpyAsync(out.data(), dy, 8192, hipMemcpyDeviceToHost, s3));
    CHECK(hipStreamSynchronize(s3));

    // Pinned host memory written by the host and read by a kernel.
    int* pinned = nullptr;
    int* dout = nullptr;
    CHECK(hipHostMalloc((void**)&pinned, 1024 * sizeof(int), hipHostMallocDefault));
    for (int i = 0; i < 1024; ++i) pinned[i] = i;
    CHECK(hipMalloc((void**)&dout, 1024 * sizeof(int)));
    CHECK(hipMemcpy(dout, pinned, 1024 * sizeof(int), hipMemcpyHostToDevice));
    read_pinned<<<4, 256>>>(dout, dout, 1024);
    std::vector<int> iout(1024);
    CHECK(hipMemcpy(iout.data(), dout, 1024 * sizeof(int), hipMemcpyDeviceToHost));

    // A call that fails: replay must see the same error.
    void* huge = nullptr;
    hipError_t oom = hipMalloc(&huge, (size_t)1 << 50);
    std::printf("huge allocation returned %d (expected failure)\n", (int)oom);

    CHECK(hipStreamDestroy(s1));
    CHECK(hipStreamDestroy(s2));
    CHECK(hipStreamDestroy(s3));
    CHECK(hipEventDestroy(e0));
    CHECK(hipEventDestroy(e1));
    CHECK(hipHostFree(pinned));
    CHECK(hipFree(dout));
    CHECK(hipFree(dx));
    CHECK(hipFree(dy));
    CHECK(hipFree(dz));
    CHECK(hipDeviceSynchronize());
    std::printf("api_tour: ok (%d devices, last 8 KiB of results copied, %.3f ms)\n", count, ms);
    return 0;
}
