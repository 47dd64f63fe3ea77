// Polling, then reading the result (issue 22's shape): work is launched, the host polls
// cudaEventQuery until it reports completion (hundreds to thousands of polls), reads the
// elapsed time between two events, then polls cudaStreamQuery on a second stream and
// copies the results back. A replay that does not reach the state the polls observed
// reads the elapsed time too early (cudaErrorNotReady, 600).
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); std::exit(1); } } while (0)

// Enough dependent work per thread to take a few milliseconds.
__global__ void spin(float* out, int n, int rounds) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = (float)i;
    for (int r = 0; r < rounds; ++r) v = v * 0.999f + 1.0f;
    out[i] = v;
}

int main() {
    const int n = 1 << 20;
    float *a, *b;
    CHECK(cudaMalloc(&a, n * sizeof(float)));
    CHECK(cudaMalloc(&b, n * sizeof(float)));
    cudaStream_t s1, s2;
    CHECK(cudaStreamCreate(&s1));
    CHECK(cudaStreamCreate(&s2));
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    CHECK(cudaEventRecord(start, s1));
    spin<<<n / 256, 256, 0, s1>>>(a, n, 20000);
    CHECK(cudaEventRecord(stop, s1));
    long polls = 0;
    cudaError_t q;
    while ((q = cudaEventQuery(stop)) == cudaErrorNotReady) ++polls;
    CHECK(q);
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    spin<<<n / 256, 256, 0, s2>>>(b, n, 10000);
    while ((q = cudaStreamQuery(s2)) == cudaErrorNotReady) ++polls;
    CHECK(q);
    float* h = (float*)std::malloc(2 * n * sizeof(float));
    CHECK(cudaMemcpy(h, a, n * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(h + n, b, n * sizeof(float), cudaMemcpyDeviceToHost));
    double sum = 0;
    for (int i = 0; i < 2 * n; ++i) sum += h[i];
    std::printf("event_polling: sum %.6e, elapsed time read (%s)\n", sum, ms > 0 ? "positive" : "zero");
    std::fprintf(stderr, "event_polling: %ld polls, %.3f ms\n", polls, ms);
    std::free(h);
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    return 0;
}
