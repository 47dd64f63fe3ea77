// launch_paths: the same work launched by triple chevrons, by hipLaunchKernel, through a
// template instantiation and with arguments of every width (1, 2, 4, 8 bytes); under CUDA
// also by cudaLaunchKernelEx (HIP 5.2 has no equivalent).
#include "../common/hrr_gpu.h"

#include <vector>

template <typename T>
__global__ void mix(T* out, char c, short s, int i32, long long i64, double d, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = (T)(c + s + i32 + (i64 % 1000) + d) + (T)i;
}

int main() {
    const int n = 10000;
    int* di;
    double* dd;
    CHECK(hipMalloc((void**)&di, n * sizeof(int)));
    CHECK(hipMalloc((void**)&dd, n * sizeof(double)));
    mix<int><<<(n + 127) / 128, 128>>>(di, 3, 300, 30000, 3000000000LL, 0.5, n);
    char c = 4;
    short s = 400;
    int i32 = 40000;
    long long i64 = 4000000001LL;
    double d = 0.25;
    int nn = n;
    void* args[] = {&dd, &c, &s, &i32, &i64, &d, &nn};
    CHECK(hipLaunchKernel((const void*)mix<double>, dim3((n + 127) / 128), dim3(128), args, 0, 0));
    std::vector<int> gi(n), wi(n);
    std::vector<double> gd(n), wd(n);
    for (int k = 0; k < n; ++k) {
        wi[k] = (int)(3 + 300 + 30000 + (3000000000LL % 1000) + 0.5) + k;
        wd[k] = (double)(4 + 400 + 40000 + (4000000001LL % 1000) + 0.25) + k;
    }
    CHECK(hipMemcpy(gi.data(), di, n * sizeof(int), hipMemcpyDeviceToHost));
    CHECK(hipMemcpy(gd.data(), dd, n * sizeof(double), hipMemcpyDeviceToHost));
    expect_equal("mix<int>", gi.data(), wi.data(), n);
    expect_equal("mix<double>", gd.data(), wd.data(), n);
#if !defined(__HIPCC__) && !defined(__HIP_PLATFORM_AMD__)
    int* de = nullptr;
    CHECK(cudaMalloc((void**)&de, n * sizeof(int)));
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3((n + 127) / 128);
    cfg.blockDim = dim3(128);
    CHECK(cudaLaunchKernelEx(&cfg, mix<int>, de, (char)5, (short)500, 50000, 5000000002LL, 0.75, n));
    std::vector<int> ge(n), we(n);
    for (int k = 0; k < n; ++k) we[k] = (int)(5 + 500 + 50000 + (5000000002LL % 1000) + 0.75) + k;
    CHECK(cudaMemcpy(ge.data(), de, n * sizeof(int), cudaMemcpyDeviceToHost));
    expect_equal("mix<int> by cudaLaunchKernelEx", ge.data(), we.data(), n);
    CHECK(cudaFree(de));
#endif
    CHECK(hipFree(di));
    CHECK(hipFree(dd));
    std::printf("launch_paths: ok\n");
    return 0;
}
