// device_assert: a kernel whose device-side assert fails (issue 26): cudaErrorAssert (710),
// sticky; the assertion's message is the device's printf output. The host synchronises,
// copies, frees and allocates again without checks, says what each returned and exits 1.
// Its archive must replay to the same fault at the same call, the assertion's message in
// replay's own output.
//
// The kernel's name carries `hrr_fault_710`: the stand-in runtime, which runs no kernel,
// faults a launch of a kernel so marked, so the case runs end to end without a GPU too.
#include "../common/hrr_gpu.h"

#include <cassert>
#include <cstdio>

__global__ void checked_sum_hrr_fault_710(int* out, const int* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    // Every input is non-negative but one.
#if defined(__HIP_PLATFORM_AMD__)
    // HIP's device assert prints through the device libraries' fprintf, which targets
    // without device libraries here (the stand-in's) lack; ROCm GPUs skip fault cases.
    if (in[i] < 0) __builtin_trap();
#else
    assert(in[i] >= 0);
#endif
    out[i] = in[i] + (i > 0 ? in[i - 1] : 0);
}

int main() {
    const int n = 1 << 16;
    int *in = nullptr, *out = nullptr;
    CHECK(hipMalloc((void**)&in, n * sizeof(int)));
    CHECK(hipMalloc((void**)&out, n * sizeof(int)));
    static int host[n];
    for (int i = 0; i < n; ++i) host[i] = i == n / 3 ? -1 : i;
    CHECK(hipMemcpy(in, host, n * sizeof(int), hipMemcpyHostToDevice));
    checked_sum_hrr_fault_710<<<n / 256, 256>>>(out, in, n);
    hipError_t sync = hipDeviceSynchronize();
    int result[64];
    hipError_t copy = hipMemcpy(result, out, sizeof result, hipMemcpyDeviceToHost);
    hipError_t freed = hipFree(in);
    std::printf("device_assert: synchronize %d, copy %d, free %d\n", (int)sync, (int)copy, (int)freed);
    return sync == hipSuccess ? 0 : 1;
}
