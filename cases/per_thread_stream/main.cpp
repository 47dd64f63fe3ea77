// per_thread_stream: a program built for the per-thread default stream (under CUDA,
// CUDA_API_PER_THREAD_DEFAULT_STREAM, as `nvcc --default-stream per-thread` defines it):
// its copies, memsets, launches and synchronisations on stream 0 go to the runtime's
// `_ptsz`/`_ptds` entry points and mean the calling thread's default stream. Capture
// records each as its base call on cudaStreamPerThread; replay runs them there. Under HIP
// the same calls take the ordinary entry points.
#include "../common/hrr_gpu.h"

#include <vector>

__global__ void scale_add(int* p, int n, int by, int plus) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = p[i] * by + plus;
}

int main() {
    const int n = 1 << 16;
    const size_t bytes = n * sizeof(int);
    std::vector<int> host(n), got(n), want(n);
    for (int i = 0; i < n; ++i) host[i] = (i * 37) ^ (i >> 3);
    int *d = nullptr, *e = nullptr;
    CHECK(hipMalloc((void**)&d, bytes));
    CHECK(hipMalloc((void**)&e, bytes));
    // Synchronous forms (_ptds): a memset, an upload and a download.
    CHECK(hipMemset(e, 0x11, bytes));
    CHECK(hipMemcpy(d, host.data(), bytes, hipMemcpyHostToDevice));
    CHECK(hipMemcpy(got.data(), d, bytes, hipMemcpyDeviceToHost));
    expect_copied("upload", got.data(), host.data(), n);
    // Stream-0 forms (_ptsz): a launch, a device-to-device copy, an async download.
    scale_add<<<n / 256, 256>>>(d, n, 3, 7);
    CHECK(hipMemcpyAsync(e, d, bytes, hipMemcpyDeviceToDevice, 0));
    CHECK(hipMemsetAsync(d, 0, bytes / 2, 0));
    CHECK(hipMemcpyAsync(got.data(), e, bytes, hipMemcpyDeviceToHost, 0));
    CHECK(hipStreamSynchronize(0));
    for (int i = 0; i < n; ++i) want[i] = host[i] * 3 + 7;
    expect_equal("scaled", got.data(), want.data(), n);
    CHECK(hipMemcpy(got.data(), d, bytes, hipMemcpyDeviceToHost));
    for (int i = 0; i < n; ++i) want[i] = i < n / 2 ? 0 : host[i] * 3 + 7;
    expect_equal("half cleared", got.data(), want.data(), n);
    CHECK(hipFree(d));
    CHECK(hipFree(e));
    std::printf("per_thread_stream: ok\n");
    return 0;
}
