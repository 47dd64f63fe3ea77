// cuda-samples shape: vectorAddDrv. The driver API only: cuInit, a context, the module
// from a fat binary file (argv[1]), driver allocations and copies, cuLaunchKernel.
#include <cstdio>
#include <cstdlib>
#include <cuda.h>

#define CHECK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char* s_ = "?"; cuGetErrorName(r_, &s_); fprintf(stderr, "%s: %s\n", #x, s_); return 1; } } while (0)

int main(int argc, char** argv) {
    if (argc < 2) { fprintf(stderr, "usage: vector_add_drv KERNEL.fatbin\n"); return 2; }
    CHECK(cuInit(0));
    CUdevice dev; CHECK(cuDeviceGet(&dev, 0));
    char name[256]; CHECK(cuDeviceGetName(name, sizeof name, dev));
    printf("> Using CUDA Device [0]: %s\n", name);
    CUcontext ctx; CHECK(cuDevicePrimaryCtxRetain(&ctx, dev)); CHECK(cuCtxSetCurrent(ctx));
    CUmodule mod; CHECK(cuModuleLoad(&mod, argv[1]));
    CUfunction f; CHECK(cuModuleGetFunction(&f, mod, "VecAdd_kernel"));
    const int N = 50000; size_t bytes = N * sizeof(float);
    float *hA = (float*)malloc(bytes), *hB = (float*)malloc(bytes), *hC = (float*)malloc(bytes);
    for (int i = 0; i < N; ++i) { hA[i] = rand() / (float)RAND_MAX; hB[i] = rand() / (float)RAND_MAX; }
    CUdeviceptr dA, dB, dC;
    CHECK(cuMemAlloc(&dA, bytes)); CHECK(cuMemAlloc(&dB, bytes)); CHECK(cuMemAlloc(&dC, bytes));
    CHECK(cuMemcpyHtoD(dA, hA, bytes)); CHECK(cuMemcpyHtoD(dB, hB, bytes));
    int n = N; void* args[] = {&dA, &dB, &dC, &n};
    CHECK(cuLaunchKernel(f, (N + 255) / 256, 1, 1, 256, 1, 1, 0, 0, args, nullptr));
    CHECK(cuCtxSynchronize());
    CHECK(cuMemcpyDtoH(hC, dC, bytes));
    for (int i = 0; i < N; ++i) if (hC[i] != hA[i] + hB[i]) { fprintf(stderr, "mismatch at %d\n", i); return 1; }
    CHECK(cuMemFree(dA)); CHECK(cuMemFree(dB)); CHECK(cuMemFree(dC));
    CHECK(cuModuleUnload(mod)); CHECK(cuDevicePrimaryCtxRelease(dev));
    printf("Result = PASS\n");
    return 0;
}
