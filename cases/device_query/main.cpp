// device_query: device count, select, properties, synchronize and reset; a kernel writes
// what it sees so the device's state reaches an expected output.
#include "../common/hrr_gpu.h"

#include <vector>

__global__ void stamp(int* out, int device, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = device * 1000003 + i * 7;
}

int main() {
    int count = 0, dev = -1;
    CHECK(hipGetDeviceCount(&count));
    CHECK(hipSetDevice(count - 1));
    CHECK(hipGetDevice(&dev));
    hipDeviceProp_t prop;
    CHECK(hipGetDeviceProperties(&prop, dev));
    std::printf("device %d of %d: %s, %d multiprocessors\n", dev, count, prop.name, prop.multiProcessorCount);
    const int n = 4096;
    int* d = nullptr;
    CHECK(hipMalloc((void**)&d, n * sizeof(int)));
    stamp<<<n / 256, 256>>>(d, dev, n);
    CHECK(hipDeviceSynchronize());
    std::vector<int> got(n), want(n);
    for (int i = 0; i < n; ++i) want[i] = dev * 1000003 + i * 7;
    CHECK(hipMemcpy(got.data(), d, n * sizeof(int), hipMemcpyDeviceToHost));
    expect_equal("stamp", got.data(), want.data(), n);
    CHECK(hipFree(d));
    // After a reset every allocation is gone; the program starts again.
    CHECK(hipDeviceReset());
    CHECK(hipMalloc((void**)&d, n * sizeof(int)));
    stamp<<<n / 256, 256>>>(d, dev + 1, n);
    CHECK(hipMemcpy(got.data(), d, n * sizeof(int), hipMemcpyDeviceToHost));
    for (int i = 0; i < n; ++i) want[i] = (dev + 1) * 1000003 + i * 7;
    expect_equal("stamp after reset", got.data(), want.data(), n);
    CHECK(hipFree(d));
    std::printf("device_query: ok\n");
    return 0;
}
