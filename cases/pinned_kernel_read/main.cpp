// pinned_kernel_read: a kernel reads pinned host memory directly (mapped, zero-copy), and
// the host changes that memory between launches. No copy call carries those bytes, so
// replay reproduces them only if capture snapshots pinned memory at each launch (HRR's
// seed 001). Until it does, the matrix expects this case to fail.
#include "../common/hrr_gpu.h"

#include <vector>

__global__ void gather(const int* pinned, int* out, int n, int round) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[round * n + i] = pinned[i] * 2 + round;
}

int main() {
    const int n = 4096, rounds = 3;
    int* pinned = nullptr;
    int* dpinned = nullptr;
    int* out = nullptr;
    CHECK(hipHostMalloc((void**)&pinned, n * sizeof(int), hipHostMallocMapped));
    CHECK(hipHostGetDevicePointer((void**)&dpinned, pinned, 0));
    CHECK(hipMalloc((void**)&out, rounds * n * sizeof(int)));
    for (int r = 0; r < rounds; ++r) {
        for (int i = 0; i < n; ++i) pinned[i] = i * (r + 1);
        gather<<<n / 256, 256>>>(dpinned, out, n, r);
        CHECK(hipDeviceSynchronize());
    }
    std::vector<int> got(rounds * n), want(rounds * n);
    for (int r = 0; r < rounds; ++r)
        for (int i = 0; i < n; ++i) want[r * n + i] = i * (r + 1) * 2 + r;
    CHECK(hipMemcpy(got.data(), out, rounds * n * sizeof(int), hipMemcpyDeviceToHost));
    expect_equal("gather", got.data(), want.data(), rounds * n);
    CHECK(hipFree(out));
    CHECK(hipHostFree(pinned));
    std::printf("pinned_kernel_read: ok\n");
    return 0;
}
