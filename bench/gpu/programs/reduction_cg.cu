// cuda-samples shape: reductionMultiBlockCG. A cooperative launch whose kernel
// synchronises the whole grid between two phases.
#include <cstdio>
#include <cooperative_groups.h>
#include <cuda_runtime.h>
namespace cg = cooperative_groups;

__global__ void reduce_grid(const int* in, long long* partial, long long* out, int n) {
    cg::grid_group grid = cg::this_grid();
    long long v = 0;
    for (int i = grid.thread_rank(); i < n; i += grid.size()) v += in[i];
    atomicAdd((unsigned long long*)&partial[blockIdx.x], (unsigned long long)v);
    grid.sync();
    if (grid.thread_rank() == 0) { long long t = 0; for (int b = 0; b < gridDim.x; ++b) t += partial[b]; *out = t; }
}

int main() {
    const int n = 1 << 22;
    int* h = new int[n]; long long ref = 0;
    for (int i = 0; i < n; ++i) { h[i] = i % 1000; ref += h[i]; }
    int *d; long long *partial, *out;
    cudaMalloc(&d, n * sizeof(int)); cudaMemcpy(d, h, n * sizeof(int), cudaMemcpyHostToDevice);
    int dev = 0, sms = 0, per_sm = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reduce_grid, 256, 0);
    int blocks = sms * per_sm;
    cudaMalloc(&partial, blocks * sizeof(long long)); cudaMemset(partial, 0, blocks * sizeof(long long));
    cudaMalloc(&out, sizeof(long long));
    int nn = n; void* args[] = {&d, &partial, &out, &nn};
    cudaError_t e = cudaLaunchCooperativeKernel((void*)reduce_grid, blocks, 256, args, 0, 0);
    if (e != cudaSuccess) { fprintf(stderr, "cudaLaunchCooperativeKernel: %s\n", cudaGetErrorString(e)); return 1; }
    long long got = 0; cudaMemcpy(&got, out, sizeof got, cudaMemcpyDeviceToHost);
    printf("cooperative reduction over %d blocks: %lld (expected %lld)\n", blocks, got, ref);
    if (got != ref) return 1;
    printf("Test passed\n");
    return 0;
}
