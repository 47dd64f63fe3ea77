// Shape: a warp-aggregated atomic filter (cuda-samples' warpAggregatedAtomicsCG): each warp
// reserves room for its kept elements with one atomicAdd and writes them there. Which warp
// gets which slot depends on the order of the atomics, so the output's positions change
// from run to run while its contents, as a set, do not.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void filter(const int* in, int* out, int* count, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i < n ? in[i] : 0;
    bool keep = i < n && (v % 4) != 0;
    unsigned mask = __ballot_sync(0xffffffffu, keep);
    int lane = threadIdx.x % 32, leader = mask ? __ffs(mask) - 1 : 0, base = 0;
    if (mask && lane == leader) base = atomicAdd(count, __popc(mask));
    base = __shfl_sync(0xffffffffu, base, leader);
    if (keep) out[base + __popc(mask & ((1u << lane) - 1))] = v;
}

int main() {
    const int n = 1 << 23;
    int* h = new int[n];
    for (int i = 0; i < n; ++i) h[i] = (i * 2654435761u) >> 7;
    int *in, *out, *count;
    cudaMalloc(&in, n * sizeof(int)); cudaMalloc(&out, n * sizeof(int)); cudaMalloc(&count, sizeof(int));
    cudaMemcpy(in, h, n * sizeof(int), cudaMemcpyHostToDevice);
    cudaMemset(count, 0, sizeof(int)); cudaMemset(out, 0, n * sizeof(int));
    filter<<<n / 256, 256>>>(in, out, count, n);
    int kept = 0;
    cudaMemcpy(&kept, count, sizeof kept, cudaMemcpyDeviceToHost);
    cudaMemcpy(h, out, n * sizeof(int), cudaMemcpyDeviceToHost);
    long long sum = 0; for (int i = 0; i < kept; ++i) sum += h[i];
    printf("filter kept %d of %d (sum %lld)\n", kept, n, sum);
    return kept > 0 ? 0 : 1;
}
