// cuda-samples shape: UnifiedMemoryPerf. The same kernel over buffers of 4 KiB to 256 MiB
// in four kinds of memory: managed with prefetching (cudaMemPrefetchAsync to the device
// and back), managed without, zero-copy (mapped page-locked host memory) and device memory
// with page-locked copies; each buffer cut into chunks spread over 16 streams, timed with
// events, three passes each, every result read and checked by the host.
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>

__global__ void step(float* p, size_t n, float k) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = p[i] * k + 1.0f;
}
#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); return 1; } } while (0)

enum Kind { MANAGED_PREFETCH, MANAGED, ZERO_COPY, DEVICE, KINDS };
static const char* names[] = {"managed+prefetch", "managed", "zero-copy", "device"};

int main() {
    const int nstreams = 16, passes = 3;
    std::vector<cudaStream_t> st(nstreams);
    for (auto& s : st) CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    int device = 0; CHECK(cudaGetDevice(&device));
    cudaEvent_t t0, t1; CHECK(cudaEventCreate(&t0)); CHECK(cudaEventCreate(&t1));
    double checksum = 0;
    for (size_t bytes = 4096; bytes <= (256u << 20); bytes *= 4) {
        const size_t n = bytes / sizeof(float), chunk = (n + nstreams - 1) / nstreams;
        for (int kind = 0; kind < KINDS; ++kind) {
            float *host = nullptr, *dev = nullptr;
            if (kind == MANAGED_PREFETCH || kind == MANAGED) {
                CHECK(cudaMallocManaged(&host, bytes));
                dev = host;
            } else if (kind == ZERO_COPY) {
                CHECK(cudaHostAlloc(&host, bytes, cudaHostAllocMapped));
                CHECK(cudaHostGetDevicePointer((void**)&dev, host, 0));
            } else {
                CHECK(cudaMallocHost(&host, bytes));
                CHECK(cudaMalloc(&dev, bytes));
            }
            for (size_t i = 0; i < n; ++i) host[i] = (float)(i % 1024);
            float ms_total = 0;
            for (int pass = 0; pass < passes; ++pass) {
                CHECK(cudaEventRecord(t0, st[0]));
                for (int s = 0; s < nstreams; ++s) {
                    size_t at = s * chunk; if (at >= n) break;
                    size_t len = at + chunk > n ? n - at : chunk;
                    cudaStream_t q = st[s];
                    if (kind == MANAGED_PREFETCH) {
                        cudaMemLocation loc = {cudaMemLocationTypeDevice, device};
                        CHECK(cudaMemPrefetchAsync(dev + at, len * sizeof(float), loc, 0, q));
                    }
                    if (kind == DEVICE) CHECK(cudaMemcpyAsync(dev + at, host + at, len * sizeof(float), cudaMemcpyHostToDevice, q));
                    step<<<(unsigned)((len + 255) / 256 < 1024 ? (len + 255) / 256 : 1024), 256, 0, q>>>(dev + at, len, 0.5f);
                    if (kind == DEVICE) CHECK(cudaMemcpyAsync(host + at, dev + at, len * sizeof(float), cudaMemcpyDeviceToHost, q));
                    if (kind == MANAGED_PREFETCH) {
                        cudaMemLocation loc = {cudaMemLocationTypeHost, 0};
                        CHECK(cudaMemPrefetchAsync(dev + at, len * sizeof(float), loc, 0, q));
                    }
                }
                for (int s = 1; s < nstreams; ++s) { cudaEvent_t e; CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming)); CHECK(cudaEventRecord(e, st[s])); CHECK(cudaStreamWaitEvent(st[0], e, 0)); CHECK(cudaEventDestroy(e)); }
                CHECK(cudaEventRecord(t1, st[0]));
                CHECK(cudaEventSynchronize(t1));
                float ms = 0; CHECK(cudaEventElapsedTime(&ms, t0, t1)); ms_total += ms;
                // The host reads every element: the kernel's result, checked.
                for (size_t i = 0; i < n; i += 1 + (i % 7)) {
                    float v = (float)(i % 1024);
                    for (int p = 0; p <= pass; ++p) v = v * 0.5f + 1.0f;
                    if (host[i] != v) { fprintf(stderr, "%s %zu bytes pass %d: [%zu] = %f, not %f\n", names[kind], bytes, pass, i, host[i], v); return 1; }
                }
                checksum += host[n / 2];
            }
            if (kind == MANAGED_PREFETCH || kind == MANAGED) CHECK(cudaFree(host));
            else if (kind == ZERO_COPY) CHECK(cudaFreeHost(host));
            else { CHECK(cudaFreeHost(host)); CHECK(cudaFree(dev)); }
            (void)ms_total;
        }
    }
    printf("unified memory: 4 kinds x 9 sizes x %d passes over %d streams, checksum %.3f: Test PASSED\n", passes, nstreams, checksum);
    return 0;
}
