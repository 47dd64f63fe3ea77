// cuda-samples shape: simpleStreams. A registered (cudaHostRegister) host buffer, async
// memset, kernel and D2H copy per stream, repeated; events time the loop.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void init_array(int* g_data, const int* factor, int num_iterations) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    for (int i = 0; i < num_iterations; i++) g_data[idx] += *factor;
}

int main() {
    const int nstreams = 4, nreps = 10, n = 16 * 1024 * 1024, niter = 5;
    size_t bytes = n * sizeof(int);
    int* h_a = (int*)malloc(bytes);
    cudaHostRegister(h_a, bytes, cudaHostRegisterMapped);
    int *d_a, *d_c, c = 5;
    cudaMalloc(&d_a, bytes); cudaMalloc(&d_c, sizeof(int));
    cudaMemcpy(d_c, &c, sizeof(int), cudaMemcpyHostToDevice);
    cudaStream_t s[nstreams];
    for (int i = 0; i < nstreams; i++) cudaStreamCreate(&s[i]);
    cudaEvent_t start, stop;
    cudaEventCreate(&start); cudaEventCreate(&stop);
    dim3 threads(512), blocks(n / nstreams / 512);
    cudaEventRecord(start, 0);
    for (int k = 0; k < nreps; k++) {
        for (int i = 0; i < nstreams; i++) {
            size_t off = (size_t)i * n / nstreams;
            cudaMemsetAsync(d_a + off, 0, bytes / nstreams, s[i]);
            init_array<<<blocks, threads, 0, s[i]>>>(d_a + off, d_c, niter);
            cudaMemcpyAsync(h_a + off, d_a + off, bytes / nstreams, cudaMemcpyDeviceToHost, s[i]);
        }
    }
    cudaEventRecord(stop, 0);
    cudaEventSynchronize(stop);
    float ms = 0; cudaEventElapsedTime(&ms, start, stop);
    printf("%d streams x %d reps:\t%.2f ms\n", nstreams, nreps, ms);
    for (int i = 0; i < n; i++) if (h_a[i] != c * niter) { fprintf(stderr, "element %d: %d\n", i, h_a[i]); return 1; }
    for (int i = 0; i < nstreams; i++) cudaStreamDestroy(s[i]);
    cudaHostUnregister(h_a); free(h_a); cudaFree(d_a); cudaFree(d_c);
    printf("Test PASSED\n");
    return 0;
}
