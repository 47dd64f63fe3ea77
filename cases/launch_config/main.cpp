// launch_config: launch configuration that changes what a kernel may do.
// - a kernel using 56 KiB of dynamic shared memory, allowed by
//   hipFuncSetAttribute(MaxDynamicSharedMemorySize) (without it the launch fails: more
//   than the default 48 KiB);
// - a per-kernel and a device cache preference, and a device limit read back;
// - a cooperative launch whose blocks wait for each other (grid-wide sync);
// - under CUDA (sm_90): cudaDeviceSetLimit, and cudaLaunchKernelEx with a cluster
//   dimension and a priority attribute (each block writes its rank in its cluster, which
//   only a replayed cluster dimension reproduces), and with the cooperative attribute.
// Every result is copied back and checked here.
#include "../common/hrr_gpu.h"

#if defined(__HIPCC__) || defined(__HIP_PLATFORM_AMD__)
#include <hip/hip_cooperative_groups.h>
#else
#include <cooperative_groups.h>
#endif

#include <vector>

namespace cg = cooperative_groups;

constexpr int kSmemFloats = 56 * 1024 / sizeof(float);

// Each block stages its slice of `in` in dynamic shared memory and writes it reversed.
__global__ void reverse_in_smem(const float* in, float* out) {
    extern __shared__ float stage[];
    const float* src = in + (size_t)blockIdx.x * kSmemFloats;
    float* dst = out + (size_t)blockIdx.x * kSmemFloats;
    for (int i = threadIdx.x; i < kSmemFloats; i += blockDim.x) stage[i] = src[i];
    __syncthreads();
    for (int i = threadIdx.x; i < kSmemFloats; i += blockDim.x) dst[i] = stage[kSmemFloats - 1 - i] * 2.0f;
}

// Phase 1 writes a[i]; after the grid-wide sync every thread reads an element another
// block wrote.
__global__ void grid_sync_mirror(int* a, int* b, int n) {
    cg::grid_group grid = cg::this_grid();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = i * 3 + 1;
    grid.sync();
    if (i < n) b[i] = a[n - 1 - i] + a[(i + blockDim.x) % n];
}

#if !defined(__HIPCC__) && !defined(__HIP_PLATFORM_AMD__)
// Each block writes its rank within its cluster and the cluster's size.
__global__ void cluster_rank(int* out) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    cg::cluster_group cluster = cg::this_cluster();
    if (threadIdx.x == 0) {
        out[2 * blockIdx.x] = (int)cluster.block_rank();
        out[2 * blockIdx.x + 1] = (int)cluster.num_blocks();
    }
#else
    if (threadIdx.x == 0) out[2 * blockIdx.x] = out[2 * blockIdx.x + 1] = -1;
#endif
}
#endif

static void smem_kernel() {
    const int blocks = 4;
    const size_t n = (size_t)blocks * kSmemFloats;
    const size_t smem = kSmemFloats * sizeof(float);
    std::vector<float> in(n), got(n), want(n);
    for (size_t i = 0; i < n; ++i) in[i] = (float)(i % 1000) + 0.5f;
    for (int b = 0; b < blocks; ++b)
        for (int i = 0; i < kSmemFloats; ++i)
            want[(size_t)b * kSmemFloats + i] = in[(size_t)b * kSmemFloats + kSmemFloats - 1 - i] * 2.0f;
    float *din, *dout;
    CHECK(hipMalloc((void**)&din, n * sizeof(float)));
    CHECK(hipMalloc((void**)&dout, n * sizeof(float)));
    CHECK(hipMemcpy(din, in.data(), n * sizeof(float), hipMemcpyHostToDevice));
    CHECK(hipFuncSetAttribute((const void*)reverse_in_smem, hipFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    CHECK(hipFuncSetCacheConfig((const void*)reverse_in_smem, hipFuncCachePreferShared));
    reverse_in_smem<<<blocks, 256, smem>>>(din, dout);
    CHECK(hipMemcpy(got.data(), dout, n * sizeof(float), hipMemcpyDeviceToHost));
    expect_equal("reverse_in_smem", got.data(), want.data(), n);
    CHECK(hipFree(din));
    CHECK(hipFree(dout));
}

static void cache_and_limits() {
    CHECK(hipDeviceSetCacheConfig(hipFuncCachePreferL1));
    hipFuncCache_t cache;
    CHECK(hipDeviceGetCacheConfig(&cache));
    size_t heap = 0;
    CHECK(hipDeviceGetLimit(&heap, hipLimitMallocHeapSize));
#if !defined(__HIPCC__) && !defined(__HIP_PLATFORM_AMD__)
    CHECK(cudaDeviceSetLimit(cudaLimitStackSize, 4096));
    size_t stack = 0;
    CHECK(cudaDeviceGetLimit(&stack, cudaLimitStackSize));
    if (stack < 4096) {
        std::fprintf(stderr, "stack limit %zu after setting 4096\n", stack);
        std::exit(1);
    }
    CHECK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 16u << 20));
#endif
    CHECK(hipDeviceSetCacheConfig(hipFuncCachePreferNone));
}

static void expect_mirror(const char* what, int* db, int n) {
    std::vector<int> got(n), want(n);
    for (int i = 0; i < n; ++i) want[i] = ((n - 1 - i) * 3 + 1) + (((i + 128) % n) * 3 + 1);
    CHECK(hipMemcpy(got.data(), db, n * sizeof(int), hipMemcpyDeviceToHost));
    expect_equal(what, got.data(), want.data(), n);
}

static void cooperative(hipStream_t stream) {
    const int blocks = 4, threads = 128, n = blocks * threads;
    int *da, *db;
    CHECK(hipMalloc((void**)&da, n * sizeof(int)));
    CHECK(hipMalloc((void**)&db, n * sizeof(int)));
    int nn = n;
    void* args[] = {&da, &db, &nn};
    CHECK(hipLaunchCooperativeKernel((const void*)grid_sync_mirror, dim3(blocks), dim3(threads), args, 0, stream));
    CHECK(hipStreamSynchronize(stream));
    expect_mirror("grid_sync_mirror (cooperative launch)", db, n);
#if !defined(__HIPCC__) && !defined(__HIP_PLATFORM_AMD__)
    // The same through cudaLaunchKernelEx and the cooperative attribute.
    CHECK(cudaMemset(db, 0, n * sizeof(int)));
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeCooperative;
    attr[0].val.cooperative = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(blocks);
    cfg.blockDim = dim3(threads);
    cfg.stream = stream;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    CHECK(cudaLaunchKernelEx(&cfg, grid_sync_mirror, da, db, nn));
    CHECK(cudaStreamSynchronize(stream));
    expect_mirror("grid_sync_mirror (cooperative attribute)", db, n);
#endif
    CHECK(hipFree(da));
    CHECK(hipFree(db));
}

#if !defined(__HIPCC__) && !defined(__HIP_PLATFORM_AMD__)
static void clusters(hipStream_t stream) {
    const int blocks = 8, cluster = 2;
    int* d;
    CHECK(cudaMalloc((void**)&d, 2 * blocks * sizeof(int)));
    CHECK(cudaMemset(d, 0xff, 2 * blocks * sizeof(int)));
    cudaLaunchAttribute attr[2];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = cluster;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    attr[1].id = cudaLaunchAttributePriority;
    attr[1].val.priority = 0;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(blocks);
    cfg.blockDim = dim3(64);
    cfg.stream = stream;
    cfg.attrs = attr;
    cfg.numAttrs = 2;
    CHECK(cudaLaunchKernelEx(&cfg, cluster_rank, d));
    std::vector<int> got(2 * blocks), want(2 * blocks);
    for (int b = 0; b < blocks; ++b) {
        want[2 * b] = b % cluster;
        want[2 * b + 1] = cluster;
    }
    CHECK(cudaMemcpyAsync(got.data(), d, 2 * blocks * sizeof(int), cudaMemcpyDeviceToHost, stream));
    CHECK(cudaStreamSynchronize(stream));
    expect_equal("cluster_rank (cluster dimension attribute)", got.data(), want.data(), 2 * blocks);
    CHECK(cudaFree(d));
}
#endif

int main() {
    hipStream_t stream;
    CHECK(hipStreamCreate(&stream));
    smem_kernel();
    cache_and_limits();
    cooperative(stream);
#if !defined(__HIPCC__) && !defined(__HIP_PLATFORM_AMD__)
    clusters(stream);
#endif
    CHECK(hipStreamDestroy(stream));
    std::printf("launch_config: ok\n");
    return 0;
}
