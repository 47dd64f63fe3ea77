// kernel_trap: a kernel that stops itself with a trap instruction when it finds a bad
// input (issue 26): an unspecified launch failure (719), sticky. The host synchronises,
// copies and frees without checks, says what each returned and exits 1. Its archive must
// replay to the same fault at the same call.
//
// The kernel's name carries `hrr_fault_719`: the stand-in runtime, which runs no kernel,
// faults a launch of a kernel so marked, so the case runs end to end without a GPU too.
#include "../common/hrr_gpu.h"

#include <cstdio>

__global__ void guarded_scale_hrr_fault_719(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    if (in[i] != in[i]) {  // a NaN: the kernel gives up
#if defined(__HIP_PLATFORM_AMD__)
        __builtin_trap();
#else
        __trap();
#endif
    }
    out[i] = in[i] * 2.0f;
}

int main() {
    const int n = 1 << 16;
    float *in = nullptr, *out = nullptr;
    CHECK(hipMalloc((void**)&in, n * sizeof(float)));
    CHECK(hipMalloc((void**)&out, n * sizeof(float)));
    static float host[n];
    for (int i = 0; i < n; ++i) host[i] = i == 4321 ? __builtin_nanf("") : (float)i;
    CHECK(hipMemcpy(in, host, n * sizeof(float), hipMemcpyHostToDevice));
    guarded_scale_hrr_fault_719<<<n / 256, 256>>>(out, in, n);
    hipError_t sync = hipDeviceSynchronize();
    float result[64];
    hipError_t copy = hipMemcpy(result, out, sizeof result, hipMemcpyDeviceToHost);
    hipError_t freed = hipFree(in);
    std::printf("kernel_trap: synchronize %d, copy %d, free %d\n", (int)sync, (int)copy, (int)freed);
    return sync == hipSuccess ? 0 : 1;
}
