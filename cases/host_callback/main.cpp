// host_callback: a host callback enqueued on a stream (hipStreamAddCallback: HIP 5.2
// has no hipLaunchHostFunc) after a kernel. No other process can run this program's
// host code: replay keeps the callback as an ordering point on its stream, running its own
// function that does nothing, and checks every result. (Had the callback written host
// memory a copy queued after it reads, capture would say so by name: capture/src/host_fns.rs.)
#include "../common/hrr_gpu.h"

#include <atomic>
#include <vector>

static std::atomic<int> called{0};
static void on_stream(hipStream_t, hipError_t, void* user) { called += *static_cast<int*>(user); }

__global__ void square(int* p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = i * i;
}

int main() {
    const int n = 2048;
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    int* d = nullptr;
    CHECK(hipMalloc((void**)&d, n * sizeof(int)));
    square<<<n / 256, 256, 0, s>>>(d, n);
    static int five = 5;
    CHECK(hipStreamAddCallback(s, on_stream, &five, 0));
    CHECK(hipStreamSynchronize(s));
    std::vector<int> got(n), want(n);
    for (int i = 0; i < n; ++i) want[i] = i * i;
    CHECK(hipMemcpy(got.data(), d, n * sizeof(int), hipMemcpyDeviceToHost));
    expect_equal("square", got.data(), want.data(), n);
    if (called != 5) { std::fprintf(stderr, "host function ran %d\n", called.load()); return 1; }
    CHECK(hipFree(d));
    CHECK(hipStreamDestroy(s));
    std::printf("host_callback: ok\n");
    return 0;
}
