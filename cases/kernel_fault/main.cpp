// kernel_fault: a program whose kernel faults (issue 26). A scan-like kernel over a
// large grid reads its input, then one thread writes through an address no allocation
// holds: cudaErrorIllegalAddress / hipErrorIllegalAddress (700), a sticky error. The host
// synchronises, copies a result into a stack array, frees and allocates again, as a
// program without error checks would; every call after the fault returns 700 and does
// nothing. The program says what each returned and exits 1. Its archive must replay to
// the same fault at the same call (the `reproduces` check).
//
// The kernel's name carries `hrr_fault_700`: the stand-in runtime, which runs no kernel,
// faults a launch of a kernel so marked (standin/core.h), so the capture and replay of a
// fault are tested end to end without a GPU too.
#include "../common/hrr_gpu.h"

#include <cstdio>

__global__ void oob_write_hrr_fault_700(int* out, const int* in, int n, int* wild) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int v = in[i] + (i > 0 ? in[i - 1] : 0);
    out[i] = v;
    if (i == n / 2) *wild = v;
}

int main() {
    const int n = 60480 * 32;
    int *in = nullptr, *out = nullptr;
    CHECK(hipMalloc((void**)&in, n * sizeof(int)));
    CHECK(hipMalloc((void**)&out, n * sizeof(int)));
    static int host[n];
    for (int i = 0; i < n; ++i) host[i] = i;
    CHECK(hipMemcpy(in, host, n * sizeof(int), hipMemcpyHostToDevice));
    oob_write_hrr_fault_700<<<n / 32, 32>>>(out, in, n, (int*)0x10);
    hipError_t sync = hipDeviceSynchronize();
    int result[32];
    hipError_t copy = hipMemcpy(result, out, sizeof result, hipMemcpyDeviceToHost);
    hipError_t freed = hipFree(in);
    int* again = nullptr;
    hipError_t alloc = hipMalloc((void**)&again, 64);
    std::printf("kernel_fault: synchronize %d, copy %d, free %d, malloc %d\n", (int)sync, (int)copy,
                (int)freed, (int)alloc);
    return sync == hipSuccess ? 0 : 1;
}
