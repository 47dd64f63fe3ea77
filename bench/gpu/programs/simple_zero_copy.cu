// cuda-samples shape: simpleZeroCopy. The kernel writes straight into mapped pinned host
// memory; the host reads the result after a synchronize (no D2H copy at all).
#include <cstdio>
#include <cuda_runtime.h>

__global__ void vectorAddGPU(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

int main() {
    const int n = 1 << 20; size_t bytes = n * sizeof(float);
    cudaSetDeviceFlags(cudaDeviceMapHost);
    float *a, *b, *c;
    cudaHostAlloc(&a, bytes, cudaHostAllocMapped); cudaHostAlloc(&b, bytes, cudaHostAllocMapped); cudaHostAlloc(&c, bytes, cudaHostAllocMapped);
    for (int i = 0; i < n; ++i) { a[i] = (float)(i % 13); b[i] = (float)(i % 7); }
    float *da, *db, *dc;
    cudaHostGetDevicePointer(&da, a, 0); cudaHostGetDevicePointer(&db, b, 0); cudaHostGetDevicePointer(&dc, c, 0);
    vectorAddGPU<<<(n + 255) / 256, 256>>>(da, db, dc, n);
    cudaDeviceSynchronize();
    for (int i = 0; i < n; ++i) if (c[i] != a[i] + b[i]) { fprintf(stderr, "c[%d] = %f\n", i, c[i]); return 1; }
    cudaFreeHost(a); cudaFreeHost(b); cudaFreeHost(c);
    printf("> Releasing CPU memory...\nTest PASSED\n");
    return 0;
}
