// atomic_filter: a stream compaction by atomics (cuda-samples' warpAggregatedAtomicsCG
// shape): each kept element takes the next free slot with atomicAdd and is written there.
// Which element lands in which slot depends on the order of the atomics, so the output's
// positions change from run to run while its contents, as a set, do not. The case
// declares `compare: {unordered: 4}`: each result is compared as a multiset of 4-byte
// elements, reported as such, never as byte-exact.
#include "../common/hrr_gpu.h"

#include <algorithm>
#include <vector>

__global__ void filter(const int* in, int* out, int* count, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && in[i] % 4 != 0) out[atomicAdd(count, 1)] = in[i];
}

int main() {
    const int n = 1 << 20;
    const size_t bytes = n * sizeof(int);
    std::vector<int> h(n), got(n, 0);
    for (int i = 0; i < n; ++i) h[i] = int((unsigned(i) * 2654435761u) >> 7);
    int *in, *out, *count;
    CHECK(hipMalloc((void**)&in, bytes));
    CHECK(hipMalloc((void**)&out, bytes));
    CHECK(hipMalloc((void**)&count, sizeof(int)));
    CHECK(hipMemcpy(in, h.data(), bytes, hipMemcpyHostToDevice));
    CHECK(hipMemset(count, 0, sizeof(int)));
    CHECK(hipMemset(out, 0, bytes));
    filter<<<n / 256, 256>>>(in, out, count, n);
    CHECK(hipGetLastError());
    int kept = 0;
    CHECK(hipMemcpy(&kept, count, sizeof kept, hipMemcpyDeviceToHost));
    CHECK(hipMemcpy(got.data(), out, bytes, hipMemcpyDeviceToHost));
    if (hrr_kernels_ran()) {
        std::vector<int> want;
        for (int v : h)
            if (v % 4 != 0) want.push_back(v);
        if (kept != int(want.size())) {
            std::fprintf(stderr, "kept %d, expected %zu\n", kept, want.size());
            return 1;
        }
        std::sort(want.begin(), want.end());
        std::sort(got.begin(), got.begin() + kept);
        expect_all("kept elements", got.data(), want.data(), want.size());
    }
    CHECK(hipFree(in));
    CHECK(hipFree(out));
    CHECK(hipFree(count));
    std::printf("atomic_filter: kept %d of %d\n", kept, n);
    return 0;
}
