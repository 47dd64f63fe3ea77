// stream_ordered: stream-ordered memory. Allocations from the device's default pool
// (hipMallocAsync) and from a pool the program creates (hipMemPoolCreate,
// hipMallocFromPoolAsync), used by kernels and async copies on two streams ordered by an
// event, freed asynchronously; pool attributes set and read, the pool trimmed, made the
// device's current pool and back, destroyed; under CUDA 13 the same pools asked for by
// location (cudaMemGetDefaultMemPool, cudaMemGetMemPool, cudaMemSetMemPool) and the
// device's own access to a pool set (cudaMemPoolSetAccess). Every result is copied back
// and checked here.
#include "../common/hrr_gpu.h"

#include <cstdint>
#include <cstring>
#include <vector>

__global__ void fill(int* p, int n, int k) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = i * k + 7;
}

__global__ void combine(const int* a, const int* b, int* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] * 2 - b[n - 1 - i];
}

int main() {
    const int n = 1 << 16;
    const size_t bytes = n * sizeof(int);
    const int blocks = (n + 255) / 256;
    int device = 0;
    CHECK(hipGetDevice(&device));
    hipStream_t s0, s1;
    CHECK(hipStreamCreateWithFlags(&s0, hipStreamNonBlocking));
    CHECK(hipStreamCreateWithFlags(&s1, hipStreamNonBlocking));
    hipEvent_t ready;
    CHECK(hipEventCreateWithFlags(&ready, hipEventDisableTiming));

    // The default pool keeps what is freed (release threshold: everything).
    hipMemPool_t def;
    CHECK(hipDeviceGetDefaultMemPool(&def, device));
    uint64_t keep = UINT64_MAX;
    CHECK(hipMemPoolSetAttribute(def, hipMemPoolAttrReleaseThreshold, &keep));

    // A pool of the program's own.
    hipMemPoolProps props;
    std::memset(&props, 0, sizeof(props));
    props.allocType = hipMemAllocationTypePinned;
    props.location.type = hipMemLocationTypeDevice;
    props.location.id = device;
    hipMemPool_t pool;
    CHECK(hipMemPoolCreate(&pool, &props));
    int opportunistic = 1;
    CHECK(hipMemPoolSetAttribute(pool, hipMemPoolReuseAllowOpportunistic, &opportunistic));

    std::vector<int> host_b(n);
    for (int i = 0; i < n; ++i) host_b[i] = (i % 97) - 40;

    int *a, *b, *c;
    CHECK(hipMallocAsync((void**)&a, bytes, s0));
    fill<<<blocks, 256, 0, s0>>>(a, n, 3);
    CHECK(hipMallocFromPoolAsync((void**)&b, bytes, pool, s1));
    CHECK(hipMemcpyAsync(b, host_b.data(), bytes, hipMemcpyHostToDevice, s1));
    CHECK(hipEventRecord(ready, s1));
    CHECK(hipStreamWaitEvent(s0, ready, 0));
    CHECK(hipMallocAsync((void**)&c, bytes, s0));
    combine<<<blocks, 256, 0, s0>>>(a, b, c, n);
    std::vector<int> got(n), want(n);
    CHECK(hipMemcpyAsync(got.data(), c, bytes, hipMemcpyDeviceToHost, s0));
    CHECK(hipFreeAsync(a, s0));
    CHECK(hipFreeAsync(b, s0));
    CHECK(hipFreeAsync(c, s0));
    CHECK(hipStreamSynchronize(s0));
    for (int i = 0; i < n; ++i) want[i] = (i * 3 + 7) * 2 - host_b[n - 1 - i];
    expect_equal("combine (default pool and created pool)", got.data(), want.data(), n);

    uint64_t used = 0;
    CHECK(hipMemPoolGetAttribute(pool, hipMemPoolAttrUsedMemCurrent, &used));
    CHECK(hipMemPoolTrimTo(pool, 0));

    // The created pool as the device's current pool: hipMallocAsync now draws from it.
    CHECK(hipDeviceSetMemPool(device, pool));
    hipMemPool_t current;
    CHECK(hipDeviceGetMemPool(&current, device));
    if (current != pool) {
        std::fprintf(stderr, "the device's current pool is not the one set\n");
        return 1;
    }
    int* d;
    CHECK(hipMallocAsync((void**)&d, bytes, s1));
    fill<<<blocks, 256, 0, s1>>>(d, n, 5);
    CHECK(hipMemcpyAsync(got.data(), d, bytes, hipMemcpyDeviceToHost, s1));
    CHECK(hipFreeAsync(d, s1));
    CHECK(hipStreamSynchronize(s1));
    for (int i = 0; i < n; ++i) want[i] = i * 5 + 7;
    expect_equal("fill (current pool)", got.data(), want.data(), n);
    CHECK(hipDeviceSetMemPool(device, def));
#if !defined(__HIPCC__) && !defined(__HIP_PLATFORM_AMD__)
    {
        cudaMemLocation loc = {};
        loc.type = cudaMemLocationTypeDevice;
        loc.id = device;
        cudaMemPool_t by_loc = nullptr, cur_by_loc = nullptr;
        CHECK(cudaMemGetDefaultMemPool(&by_loc, &loc, cudaMemAllocationTypePinned));
        CHECK(cudaMemSetMemPool(&loc, cudaMemAllocationTypePinned, pool));
        CHECK(cudaMemGetMemPool(&cur_by_loc, &loc, cudaMemAllocationTypePinned));
        if (by_loc != def || cur_by_loc != pool) {
            std::fprintf(stderr, "pools by location: default %d, current %d\n", by_loc == def, cur_by_loc == pool);
            return 1;
        }
        cudaMemAccessDesc access = {};
        access.location = loc;
        access.flags = cudaMemAccessFlagsProtReadWrite;
        CHECK(cudaMemPoolSetAccess(pool, &access, 1));
        int* e;
        CHECK(cudaMallocAsync((void**)&e, bytes, s0));
        fill<<<blocks, 256, 0, s0>>>(e, n, 9);
        CHECK(cudaMemcpyAsync(got.data(), e, bytes, cudaMemcpyDeviceToHost, s0));
        CHECK(cudaFreeAsync(e, s0));
        CHECK(cudaStreamSynchronize(s0));
        for (int i = 0; i < n; ++i) want[i] = i * 9 + 7;
        expect_equal("fill (current pool by location)", got.data(), want.data(), n);
        CHECK(cudaMemSetMemPool(&loc, cudaMemAllocationTypePinned, def));
    }
#endif
    CHECK(hipMemPoolTrimTo(pool, 0));
    uint64_t release_all = 0;
    CHECK(hipMemPoolSetAttribute(def, hipMemPoolAttrReleaseThreshold, &release_all));
    CHECK(hipMemPoolTrimTo(def, 0));
    CHECK(hipMemPoolDestroy(pool));

    CHECK(hipEventDestroy(ready));
    CHECK(hipStreamDestroy(s0));
    CHECK(hipStreamDestroy(s1));
    std::printf("stream_ordered: ok\n");
    return 0;
}
