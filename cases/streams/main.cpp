// streams: streams created with flags and priorities, work chained across them with
// events, queried, synchronised and destroyed.
#include "../common/hrr_gpu.h"

#include <vector>

__global__ void add(int* p, int v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = p[i] * 2 + v;
}

int main() {
    const int n = 1 << 16;
    hipStream_t a, b, c;
    CHECK(hipStreamCreate(&a));
    CHECK(hipStreamCreateWithFlags(&b, hipStreamNonBlocking));
    CHECK(hipStreamCreateWithPriority(&c, hipStreamDefault, 0));
    hipEvent_t ab, bc;
    CHECK(hipEventCreate(&ab));
    CHECK(hipEventCreate(&bc));
    int* d = nullptr;
    CHECK(hipMalloc((void**)&d, n * sizeof(int)));
    CHECK(hipMemsetAsync(d, 0, n * sizeof(int), a));
    add<<<n / 256, 256, 0, a>>>(d, 1, n);
    CHECK(hipEventRecord(ab, a));
    CHECK(hipStreamWaitEvent(b, ab, 0));
    add<<<n / 256, 256, 0, b>>>(d, 2, n);
    CHECK(hipEventRecord(bc, b));
    CHECK(hipStreamWaitEvent(c, bc, 0));
    add<<<n / 256, 256, 0, c>>>(d, 3, n);
    (void)hipStreamQuery(c);
    CHECK(hipStreamSynchronize(c));
    std::vector<int> got(n), want(n, ((0 * 2 + 1) * 2 + 2) * 2 + 3);
    CHECK(hipMemcpy(got.data(), d, n * sizeof(int), hipMemcpyDeviceToHost));
    expect_equal("chained", got.data(), want.data(), n);
    CHECK(hipEventDestroy(ab));
    CHECK(hipEventDestroy(bc));
    CHECK(hipStreamDestroy(a));
    CHECK(hipStreamDestroy(b));
    CHECK(hipStreamDestroy(c));
    CHECK(hipFree(d));
    std::printf("streams: ok\n");
    return 0;
}
