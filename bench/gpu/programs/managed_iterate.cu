// Shape: an iterative solver on managed memory that stays on the GPU. A 256 MiB
// cudaMallocManaged buffer is filled by the host once, then 64 kernels step it in place
// with no host access between them (each launch's arguments reach the whole buffer), and
// the host reads a checksum at the end. A snapshot that read the buffer through the host
// would pull every page to the host before each launch, and the kernel would pull them
// back: the copy engine reads them where they are.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void relax(float* p, size_t n, float k) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = p[i] * k + 1.0f;
}
#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); return 1; } } while (0)

int main() {
    const size_t bytes = 256u << 20, n = bytes / sizeof(float);
    const int steps = 64;
    float* p = nullptr;
    CHECK(cudaMallocManaged(&p, bytes));
    for (size_t i = 0; i < n; ++i) p[i] = (float)(i % 1000);
    for (int s = 0; s < steps; ++s) {
        relax<<<1024, 256>>>(p, n, 0.5f);
        CHECK(cudaGetLastError());
    }
    CHECK(cudaDeviceSynchronize());
    // x -> 0.5x + 1 converges to 2: every element is 2 after 64 steps in float.
    size_t wrong = 0;
    double sum = 0;
    for (size_t i = 0; i < n; ++i) {
        sum += p[i];
        if (p[i] != 2.0f) ++wrong;
    }
    printf("managed_iterate: %d steps over %zu MiB, sum %.1f, %zu wrong\n", steps, bytes >> 20, sum, wrong);
    CHECK(cudaFree(p));
    return wrong ? 1 : 0;
}
