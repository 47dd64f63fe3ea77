// cuda-samples shape: streamOrderedAllocation. Allocations from the default pool with a
// release threshold, and from a created pool, used and freed in stream order.
#include <cstdio>
#include <cstdint>
#include <cuda_runtime.h>

__global__ void saxpy(float a, const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); return 1; } } while (0)

int main() {
    const int n = 1 << 20, iters = 20; size_t bytes = n * sizeof(float);
    float *hx, *hy; CHECK(cudaMallocHost(&hx, bytes)); CHECK(cudaMallocHost(&hy, bytes));
    for (int i = 0; i < n; ++i) { hx[i] = 1.0f; hy[i] = (float)(i % 100); }
    cudaStream_t s; CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaMemPool_t def; CHECK(cudaDeviceGetDefaultMemPool(&def, 0));
    uint64_t threshold = UINT64_MAX; CHECK(cudaMemPoolSetAttribute(def, cudaMemPoolAttrReleaseThreshold, &threshold));
    cudaMemPoolProps props = {}; props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice; props.location.id = 0;
    cudaMemPool_t pool; CHECK(cudaMemPoolCreate(&pool, &props));
    for (int it = 0; it < iters; ++it) {
        float *dx, *dy;
        CHECK(cudaMallocAsync(&dx, bytes, s));
        CHECK(cudaMallocFromPoolAsync((void**)&dy, bytes, pool, s));
        CHECK(cudaMemcpyAsync(dx, hx, bytes, cudaMemcpyHostToDevice, s));
        CHECK(cudaMemcpyAsync(dy, hy, bytes, cudaMemcpyHostToDevice, s));
        saxpy<<<(n + 255) / 256, 256, 0, s>>>(2.0f, dx, dy, n);
        CHECK(cudaMemcpyAsync(hy, dy, bytes, cudaMemcpyDeviceToHost, s));
        CHECK(cudaFreeAsync(dx, s)); CHECK(cudaFreeAsync(dy, s));
    }
    CHECK(cudaStreamSynchronize(s));
    for (int i = 0; i < n; ++i) if (hy[i] != (float)(i % 100) + 2.0f * iters) { fprintf(stderr, "y[%d] = %f\n", i, hy[i]); return 1; }
    CHECK(cudaMemPoolTrimTo(def, 0)); CHECK(cudaMemPoolDestroy(pool));
    printf("%d iterations of stream-ordered allocation: Test PASSED\n", iters);
    return 0;
}
