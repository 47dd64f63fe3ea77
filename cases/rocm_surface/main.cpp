// rocm_surface: HIP as ROCm 6/7 ship it. A binary built against ROCm 6+ headers calls
// hipGetDevicePropertiesR0600 (a 1472-byte struct), may launch and copy through the
// per-thread default stream forms (*_spt) and may resolve functions at run time through
// hipGetProcAddress. This case reaches those names as such a binary does, through the
// dynamic linker's global lookup (dlsym(RTLD_DEFAULT): an LD_PRELOADed capture comes
// first), when hipRuntimeGetVersion reports 6.0 or later; on a HIP 5 runtime it makes the
// same calls by their HIP 5 names (hipGetDeviceProperties, hipStreamPerThread passed
// explicitly). Under CUDA: cudaGetDeviceProperties and cudaStreamPerThread.
#include "../common/hrr_gpu.h"

#include <cstdint>
#include <cstring>
#include <vector>
#if defined(__HIPCC__) || defined(__HIP_PLATFORM_AMD__)
#include <dlfcn.h>
#define PER_THREAD hipStreamPerThread
#else
#define PER_THREAD cudaStreamPerThread
#define hipRuntimeGetVersion cudaRuntimeGetVersion
#endif

__global__ void square_plus(const int* in, int* out, int add, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] * in[i] + add;
}

#if defined(__HIPCC__) || defined(__HIP_PLATFORM_AMD__)
// A ROCm 6+ function by name, as the dynamic linker binds it; absent: the case fails.
static void* rocm6(const char* name) {
    void* f = dlsym(RTLD_DEFAULT, name);
    if (!f) {
        std::fprintf(stderr, "%s not found although the runtime reports ROCm 6+\n", name);
        std::exit(2);
    }
    return f;
}
#endif

int main() {
    int version = 0;
    CHECK(hipRuntimeGetVersion(&version));
    const int n = 8192;
    int multiprocessors = 0;
#if defined(__HIPCC__) || defined(__HIP_PLATFORM_AMD__)
    const bool rocm6_names = version >= 60000000;
    typedef hipError_t (*PropsR0600)(void*, int);
    typedef hipError_t (*ProcAddress)(const char*, void**, int, uint64_t, int*);
    typedef hipError_t (*MemcpyAsync)(void*, const void*, size_t, hipMemcpyKind, hipStream_t);
    typedef hipError_t (*MemsetAsync)(void*, int, size_t, hipStream_t);
    typedef hipError_t (*LaunchKernel)(const void*, dim3, dim3, void**, size_t, hipStream_t);
    typedef hipError_t (*StreamSync)(hipStream_t);
    MemcpyAsync copy = hipMemcpyAsync;
    MemsetAsync memset_spt = nullptr;
    LaunchKernel launch_spt = nullptr;
    StreamSync sync_spt = nullptr;
    if (rocm6_names) {
        // hipDeviceProp_tR0600: multiProcessorCount at 388, gcnArchName at 1160.
        alignas(8) unsigned char props[1472];
        CHECK(((PropsR0600)rocm6("hipGetDevicePropertiesR0600"))(props, 0));
        std::memcpy(&multiprocessors, props + 388, sizeof multiprocessors);
        // The copy a library would resolve at run time.
        void* f = nullptr;
        int status = -1;
        CHECK(((ProcAddress)rocm6("hipGetProcAddress"))("hipMemcpyAsync", &f, 700, 0, &status));
        if (!f || status != 0) {
            std::fprintf(stderr, "hipGetProcAddress(hipMemcpyAsync): status %d\n", status);
            return 2;
        }
        copy = (MemcpyAsync)f;
        memset_spt = (MemsetAsync)rocm6("hipMemsetAsync_spt");
        launch_spt = (LaunchKernel)rocm6("hipLaunchKernel_spt");
        sync_spt = (StreamSync)rocm6("hipStreamSynchronize_spt");
    } else {
        hipDeviceProp_t prop;
        CHECK(hipGetDeviceProperties(&prop, 0));
        multiprocessors = prop.multiProcessorCount;
    }
#else
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    multiprocessors = prop.multiProcessorCount;
#endif
    std::printf("properties: %s\n", multiprocessors > 0 ? "read" : "empty");
    std::vector<int> in(n), got(n), want(n), zeros(n, 0), back(n, -1);
    for (int i = 0; i < n; ++i) {
        in[i] = i % 97 - 48;
        want[i] = in[i] * in[i] + 5;
    }
    int *d_in = nullptr, *d_out = nullptr;
    CHECK(hipMalloc((void**)&d_in, n * sizeof(int)));
    CHECK(hipMalloc((void**)&d_out, n * sizeof(int)));
    CHECK(hipMemcpy(d_in, in.data(), n * sizeof(int), hipMemcpyHostToDevice));
    int add = 5, count = n;
    void* args[] = {&d_in, &d_out, &add, &count};
    dim3 grid(n / 256), block(256);
#if defined(__HIPCC__) || defined(__HIP_PLATFORM_AMD__)
    if (rocm6_names) {
        // The per-thread default stream forms, their stream left null.
        CHECK(memset_spt(d_out, 0, n * sizeof(int), 0));
        CHECK(sync_spt(0));
        CHECK(copy(back.data(), d_out, n * sizeof(int), hipMemcpyDeviceToHost, PER_THREAD));
        CHECK(sync_spt(0));
        expect_copied("memset on the per-thread stream", back.data(), zeros.data(), n);
        CHECK(launch_spt((const void*)square_plus, grid, block, args, 0, 0));
    } else
#endif
    {
        CHECK(hipMemsetAsync(d_out, 0, n * sizeof(int), PER_THREAD));
        CHECK(hipStreamSynchronize(PER_THREAD));
        CHECK(hipMemcpyAsync(back.data(), d_out, n * sizeof(int), hipMemcpyDeviceToHost, PER_THREAD));
        CHECK(hipStreamSynchronize(PER_THREAD));
        expect_copied("memset on the per-thread stream", back.data(), zeros.data(), n);
        CHECK(hipLaunchKernel((const void*)square_plus, grid, block, args, 0, PER_THREAD));
    }
#if defined(__HIPCC__) || defined(__HIP_PLATFORM_AMD__)
    CHECK(copy(got.data(), d_out, n * sizeof(int), hipMemcpyDeviceToHost, PER_THREAD));
#else
    CHECK(hipMemcpyAsync(got.data(), d_out, n * sizeof(int), hipMemcpyDeviceToHost, PER_THREAD));
#endif
    CHECK(hipStreamSynchronize(PER_THREAD));
    expect_equal("square_plus", got.data(), want.data(), n);
    CHECK(hipFree(d_in));
    CHECK(hipFree(d_out));
    std::printf("rocm_surface: ok\n");
    return 0;
}
