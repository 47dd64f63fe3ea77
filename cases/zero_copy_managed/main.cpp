// zero_copy_managed: kernels write their results straight into host-visible memory, and
// the host reads them after a synchronisation; no device-to-host copy anywhere (the
// shapes of cuda-samples' simpleZeroCopy and of a managed-memory sample):
// - mapped page-locked memory from hipHostMalloc(Mapped), read by a kernel through
//   hipHostGetDevicePointer, result written into another mapped buffer, then
//   hipDeviceSynchronize;
// - registered host memory (hipHostRegister Mapped) written on a stream, then
//   hipStreamSynchronize;
// - managed memory (hipMallocManaged) with advice, a prefetch and a stream attachment,
//   written on a stream and read after hipEventSynchronize; the host changes the input
//   and a second launch is read after hipDeviceSynchronize;
// - a graph captured from a stream whose kernel writes mapped memory, launched twice
//   (the host changes the mapped input in between), each read after hipStreamSynchronize;
// - a kernel that rewrites mapped memory in place: the launch's snapshot must hold the
//   bytes from before the kernel ran, or replay would start from the kernel's result.
// Capture records each of those allocations' bytes after the synchronisation that
// completed the kernels reaching them (MappedOutput); replay compares them there.
#include "../common/hrr_gpu.h"

#include <stdlib.h>
#include <vector>

#if !defined(__HIPCC__) && !defined(__HIP_PLATFORM_AMD__)
#define hipSetDeviceFlags cudaSetDeviceFlags
#define hipDeviceMapHost cudaDeviceMapHost
#define hipHostRegisterMapped cudaHostRegisterMapped
#define hipMallocManaged cudaMallocManaged
#define hipMemAttachGlobal cudaMemAttachGlobal
#define hipMemAttachSingle cudaMemAttachSingle
#define hipStreamAttachMemAsync cudaStreamAttachMemAsync
#define hipMemAdviseSetReadMostly cudaMemAdviseSetReadMostly
#endif

// The advice and prefetch calls changed shape in CUDA 13 (a cudaMemLocation in place of
// a device ordinal); HIP keeps the ordinal.
static hipError_t advise_read_mostly(const void* p, size_t n, int dev) {
#if defined(__HIPCC__) || defined(__HIP_PLATFORM_AMD__)
    return hipMemAdvise(p, n, hipMemAdviseSetReadMostly, dev);
#else
    cudaMemLocation loc = {};
    loc.type = cudaMemLocationTypeDevice;
    loc.id = dev;
    return cudaMemAdvise(p, n, cudaMemAdviseSetReadMostly, loc);
#endif
}

static hipError_t prefetch(const void* p, size_t n, int dev, hipStream_t s) {
#if defined(__HIPCC__) || defined(__HIP_PLATFORM_AMD__)
    return hipMemPrefetchAsync(p, n, dev, s);
#else
    cudaMemLocation loc = {};
    loc.type = cudaMemLocationTypeDevice;
    loc.id = dev;
    return cudaMemPrefetchAsync(p, n, loc, 0, s);
#endif
}

__global__ void scale(const float* in, float* out, int n, float k) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] * k + 1.0f;
}

__global__ void bump(int* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * 3 + 1;
}

__global__ void square(const int* in, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] * in[i] - i;
}

int main() {
    const int n = 1 << 14;
    CHECK(hipSetDeviceFlags(hipDeviceMapHost));
    int dev = 0;
    CHECK(hipGetDevice(&dev));

    // Zero copy: mapped input and output, read back after a device synchronize.
    float *a = nullptr, *c = nullptr, *da = nullptr, *dc = nullptr;
    CHECK(hipHostMalloc((void**)&a, n * sizeof(float), hipHostMallocMapped));
    CHECK(hipHostMalloc((void**)&c, n * sizeof(float), hipHostMallocMapped));
    for (int i = 0; i < n; ++i) a[i] = 0.5f * i;
    CHECK(hipHostGetDevicePointer((void**)&da, a, 0));
    CHECK(hipHostGetDevicePointer((void**)&dc, c, 0));
    scale<<<n / 256, 256>>>(da, dc, n, 3.0f);
    CHECK(hipDeviceSynchronize());
    std::vector<float> want(n);
    for (int i = 0; i < n; ++i) want[i] = a[i] * 3.0f + 1.0f;
    expect_equal("mapped scale", c, want.data(), n);

    // Registered host memory, mapped, written on a stream.
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    const size_t page = 4096, bytes = ((n * sizeof(float) + page - 1) / page) * page;
    float* reg = static_cast<float*>(aligned_alloc(page, bytes));
    if (!reg) return 1;
    for (int i = 0; i < n; ++i) reg[i] = -1.0f;
    CHECK(hipHostRegister(reg, bytes, hipHostRegisterMapped));
    float* dreg = nullptr;
    CHECK(hipHostGetDevicePointer((void**)&dreg, reg, 0));
    scale<<<n / 256, 256, 0, s>>>(da, dreg, n, -2.0f);
    CHECK(hipStreamSynchronize(s));
    for (int i = 0; i < n; ++i) want[i] = a[i] * -2.0f + 1.0f;
    expect_equal("registered scale", reg, want.data(), n);
    CHECK(hipHostUnregister(reg));
    free(reg);

    // A graph whose kernel writes mapped memory: each launch's result is read after the
    // stream completes it, and the second sees the host's new input.
    hipGraph_t graph;
    hipGraphExec_t exec;
    CHECK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
    scale<<<n / 256, 256, 0, s>>>(da, dc, n, 5.0f);
    CHECK(hipStreamEndCapture(s, &graph));
    CHECK(hipGraphInstantiateWithFlags(&exec, graph, 0));
    for (int round = 0; round < 2; ++round) {
        for (int i = 0; i < n; ++i) a[i] = 0.25f * i + round;
        CHECK(hipGraphLaunch(exec, s));
        CHECK(hipStreamSynchronize(s));
        for (int i = 0; i < n; ++i) want[i] = a[i] * 5.0f + 1.0f;
        expect_equal(round == 0 ? "graph mapped scale" : "graph mapped scale again", c,
                     want.data(), n);
    }
    CHECK(hipGraphExecDestroy(exec));
    CHECK(hipGraphDestroy(graph));

    // Managed memory: advice, prefetch, a stream attachment, an event.
    int *min = nullptr, *mout = nullptr;
    CHECK(hipMallocManaged((void**)&min, n * sizeof(int), hipMemAttachGlobal));
    CHECK(hipMallocManaged((void**)&mout, n * sizeof(int), hipMemAttachGlobal));
    for (int i = 0; i < n; ++i) min[i] = i % 1000;
    CHECK(advise_read_mostly(min, n * sizeof(int), dev));
    CHECK(hipStreamAttachMemAsync(s, mout, 0, hipMemAttachSingle));
    CHECK(prefetch(min, n * sizeof(int), dev, s));
    hipEvent_t done;
    CHECK(hipEventCreate(&done));
    square<<<n / 256, 256, 0, s>>>(min, mout, n);
    CHECK(hipEventRecord(done, s));
    CHECK(hipEventSynchronize(done));
    std::vector<int> iwant(n);
    for (int i = 0; i < n; ++i) iwant[i] = (i % 1000) * (i % 1000) - i;
    expect_equal("managed square", mout, iwant.data(), n);
    // The host changes the input; the second launch must see the change.
    for (int i = 0; i < n; ++i) min[i] = 7 - i % 13;
    square<<<n / 256, 256, 0, s>>>(min, mout, n);
    CHECK(hipDeviceSynchronize());
    for (int i = 0; i < n; ++i) iwant[i] = (7 - i % 13) * (7 - i % 13) - i;
    expect_equal("managed square again", mout, iwant.data(), n);

    // In place: a kernel reads and rewrites 4 MiB of mapped memory.
    const int m = 1 << 20;
    int *inplace = nullptr, *dinplace = nullptr;
    CHECK(hipHostMalloc((void**)&inplace, m * sizeof(int), hipHostMallocMapped));
    for (int i = 0; i < m; ++i) inplace[i] = i % 977;
    CHECK(hipHostGetDevicePointer((void**)&dinplace, inplace, 0));
    bump<<<m / 256, 256, 0, s>>>(dinplace, m);
    CHECK(hipStreamSynchronize(s));
    std::vector<int> bwant(m);
    for (int i = 0; i < m; ++i) bwant[i] = (i % 977) * 3 + 1;
    expect_equal("mapped bump in place", inplace, bwant.data(), m);
    CHECK(hipHostFree(inplace));

    CHECK(hipEventDestroy(done));
    CHECK(hipStreamDestroy(s));
    CHECK(hipFree(min));
    CHECK(hipFree(mout));
    CHECK(hipHostFree(a));
    CHECK(hipHostFree(c));
    std::printf("zero_copy_managed: ok\n");
    return 0;
}
