// multi_thread: eight host threads, each with its own stream, launch kernels and copy
// results at the same time; capture records them all into one total order.
#include "../common/hrr_gpu.h"

#include <thread>
#include <vector>

__global__ void bump(int* p, int v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] += v;
}

int main() {
    const int threads = 8, n = 1 << 14, launches = 200;
    std::vector<int> failures(threads, 0);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
        pool.emplace_back([t, &failures] {
            hipStream_t s;
            CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
            int* d = nullptr;
            CHECK(hipMalloc((void**)&d, n * sizeof(int)));
            CHECK(hipMemsetAsync(d, 0, n * sizeof(int), s));
            for (int k = 0; k < launches; ++k) bump<<<n / 256, 256, 0, s>>>(d, t + 1, n);
            std::vector<int> got(n);
            CHECK(hipMemcpyAsync(got.data(), d, n * sizeof(int), hipMemcpyDeviceToHost, s));
            CHECK(hipStreamSynchronize(s));
            for (int i = 0; i < n; ++i)
                if (hrr_kernels_ran() && got[i] != launches * (t + 1)) { failures[t] = 1; break; }
            CHECK(hipFree(d));
            CHECK(hipStreamDestroy(s));
        });
    }
    for (auto& th : pool) th.join();
    for (int t = 0; t < threads; ++t)
        if (failures[t]) { std::fprintf(stderr, "thread %d: wrong result\n", t); return 1; }
    std::printf("multi_thread: ok (%d threads x %d launches)\n", threads, launches);
    return 0;
}
