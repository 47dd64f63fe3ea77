// A loop of the shape a training step has, for range capture (issue 23): state that
// lives across steps (16 MiB of weights updated in place, a momentum buffer, a
// stream-ordered scratch allocation made once), a new 4 MiB batch copied in each step,
// kernels, and a loss copied back each step. `range_loop [STEPS]` (default 20); the 10th
// step is marked with cudaProfilerStart/Stop, so HRR_CAPTURE_RANGE=profiler records that
// step alone; every step is also an NVTX range named "step" (nvtxRangePushA/Pop), so
// HRR_CAPTURE_RANGE=nvtx:step:10 records the same step.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>
#include <cuda_profiler_api.h>
#include <nvtx3/nvToolsExt.h>

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); return 1; } } while (0)

const int kBatch = 1 << 20;

__global__ void step_kernel(float* w, float* m, const float* batch, float* scratch, int n, float lr) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float g = w[i] * 0.01f - batch[i % kBatch] * 0.001f;
    m[i] = 0.9f * m[i] + g;
    w[i] -= lr * m[i];
    scratch[i] = w[i] * w[i];
}

__global__ void reduce_kernel(const float* scratch, int n, unsigned long long* sum) {
    __shared__ unsigned long long part[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    // Fixed point, so the sum's order cannot change its bits.
    part[threadIdx.x] = i < n ? (unsigned long long)(scratch[i] * 1e6f) : 0ull;
    __syncthreads();
    for (int s = 128; s > 0; s >>= 1) {
        if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(sum, part[0]);
}

int main(int argc, char** argv) {
    const int n = 1 << 22;  // 16 MiB of weights, 16 MiB of momentum
    const int steps = argc > 1 ? atoi(argv[1]) : 20, marked = 10;
    float *w, *m, *batch;
    unsigned long long* sum;
    CHECK(cudaMalloc(&w, n * sizeof(float)));
    CHECK(cudaMalloc(&m, n * sizeof(float)));
    CHECK(cudaMalloc(&batch, kBatch * sizeof(float)));
    CHECK(cudaMalloc(&sum, sizeof *sum));
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    float* scratch;
    CHECK(cudaMallocAsync(&scratch, n * sizeof(float), s));
    std::vector<float> init(n);
    for (int i = 0; i < n; ++i) init[i] = (float)((i * 7919LL) % 1000) / 1000.0f;
    CHECK(cudaMemcpy(w, init.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemset(m, 0, n * sizeof(float)));
    std::vector<float> hb(kBatch);
    for (int step = 1; step <= steps; ++step) {
        if (step == marked) CHECK(cudaProfilerStart());
        nvtxRangePushA("step");
        for (int i = 0; i < kBatch; ++i) hb[i] = (float)((i * (long long)step) % 9973) / 9973.0f;
        CHECK(cudaMemcpyAsync(batch, hb.data(), kBatch * sizeof(float), cudaMemcpyHostToDevice, s));
        CHECK(cudaMemsetAsync(sum, 0, sizeof *sum, s));
        step_kernel<<<n / 256, 256, 0, s>>>(w, m, batch, scratch, n, 0.05f);
        reduce_kernel<<<n / 256, 256, 0, s>>>(scratch, n, sum);
        unsigned long long loss = 0;
        CHECK(cudaMemcpyAsync(&loss, sum, sizeof loss, cudaMemcpyDeviceToHost, s));
        CHECK(cudaStreamSynchronize(s));
        nvtxRangePop();
        if (step == marked) CHECK(cudaProfilerStop());
        if (step % 5 == 0 || step == marked || step == steps) printf("step %d loss %llu\n", step, loss);
    }
    CHECK(cudaFreeAsync(scratch, s));
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaFree(w));
    CHECK(cudaFree(m));
    CHECK(cudaFree(batch));
    CHECK(cudaFree(sum));
    return 0;
}
