// cuda-samples shape: vectorAdd. Allocate, copy in, launch, copy back, check.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void vectorAdd(const float* a, const float* b, float* c, int n) {
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i] + 0.0f;
}

int main() {
    const int n = 50000;
    size_t bytes = n * sizeof(float);
    float *ha = (float*)malloc(bytes), *hb = (float*)malloc(bytes), *hc = (float*)malloc(bytes);
    for (int i = 0; i < n; ++i) { ha[i] = rand() / (float)RAND_MAX; hb[i] = rand() / (float)RAND_MAX; }
    float *da, *db, *dc;
    cudaMalloc(&da, bytes); cudaMalloc(&db, bytes); cudaMalloc(&dc, bytes);
    cudaMemcpy(da, ha, bytes, cudaMemcpyHostToDevice);
    cudaMemcpy(db, hb, bytes, cudaMemcpyHostToDevice);
    int threads = 256, blocks = (n + threads - 1) / threads;
    printf("CUDA kernel launch with %d blocks of %d threads\n", blocks, threads);
    vectorAdd<<<blocks, threads>>>(da, db, dc, n);
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) { fprintf(stderr, "launch: %s\n", cudaGetErrorString(err)); return 1; }
    cudaMemcpy(hc, dc, bytes, cudaMemcpyDeviceToHost);
    for (int i = 0; i < n; ++i)
        if (fabsf(ha[i] + hb[i] - hc[i]) > 1e-5f) { fprintf(stderr, "Result verification failed at element %d!\n", i); return 1; }
    cudaFree(da); cudaFree(db); cudaFree(dc);
    free(ha); free(hb); free(hc);
    printf("Test PASSED\n");
    return 0;
}
