// stream_overlap: the shape of CUDA's simpleStreams sample, the program issue 12 found
// 10.4x slower under capture. 64 MiB of registered (HostRegister) host memory; a kernel
// adds to a device buffer, which is copied back: once in one asynchronous 64 MiB copy
// (timed by events: "memcopy"), then 10 rounds of kernel and blocking copy
// ("non-streamed"), then 10 rounds over 4 streams, each stream a kernel on its quarter
// and an asynchronous 16 MiB copy of it ("4 streams"; the four quarters of a round hold
// the same bytes, each round's differ). It prints its own timer for each phase and the
// loop's total ("... in X s"), and checks the bytes.
#include "../../cases/common/hrr_gpu.h"

#include <chrono>
#include <cstdint>
#include <cstdlib>

__global__ void init_array(int* g_data, const int* factor, int iterations) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    for (int i = 0; i < iterations; ++i) g_data[idx] += *factor;
}

static float elapsed_ms(hipEvent_t a, hipEvent_t b) {
    float ms = 0;
    CHECK(hipEventElapsedTime(&ms, a, b));
    return ms;
}

int main() {
    const int nstreams = 4, nreps = 10, niterations = 5, c = 5;
    const int n = 16 * 1024 * 1024;
    const size_t nbytes = n * sizeof(int);
    const unsigned threads = 512, blocks = n / threads;

    // Registered host memory, page-aligned, as simpleStreams' default path.
    void* raw = nullptr;
    if (posix_memalign(&raw, 4096, nbytes) != 0) return 2;
    int* h_a = static_cast<int*>(raw);
    for (int i = 0; i < n; ++i) h_a[i] = 0;
    CHECK(hipHostRegister(h_a, nbytes, hipHostRegisterDefault));

    int *d_a = nullptr, *d_c = nullptr;
    CHECK(hipMalloc((void**)&d_a, nbytes));
    CHECK(hipMemset(d_a, 0, nbytes));
    CHECK(hipMalloc((void**)&d_c, sizeof(int)));
    CHECK(hipMemcpy(d_c, &c, sizeof(int), hipMemcpyHostToDevice));

    hipStream_t streams[nstreams];
    for (int i = 0; i < nstreams; ++i) CHECK(hipStreamCreate(&streams[i]));
    hipEvent_t start, stop;
    CHECK(hipEventCreate(&start));
    CHECK(hipEventCreate(&stop));

    auto t0 = std::chrono::steady_clock::now();
    // One 64 MiB copy, timed by events (simpleStreams' "memcopy").
    CHECK(hipEventRecord(start, 0));
    CHECK(hipMemcpyAsync(h_a, d_a, nbytes, hipMemcpyDeviceToHost, streams[0]));
    CHECK(hipEventRecord(stop, 0));
    CHECK(hipEventSynchronize(stop));
    float memcopy = elapsed_ms(start, stop);

    // The kernel alone.
    CHECK(hipEventRecord(start, 0));
    init_array<<<blocks, threads, 0, streams[0]>>>(d_a, d_c, niterations);
    CHECK(hipEventRecord(stop, 0));
    CHECK(hipEventSynchronize(stop));
    float kernel = elapsed_ms(start, stop);

    // Non-streamed: kernel then the whole copy (blocking), nreps times.
    CHECK(hipEventRecord(start, 0));
    for (int k = 0; k < nreps; ++k) {
        init_array<<<blocks, threads>>>(d_a, d_c, niterations);
        CHECK(hipMemcpy(h_a, d_a, nbytes, hipMemcpyDeviceToHost));
    }
    CHECK(hipEventRecord(stop, 0));
    CHECK(hipEventSynchronize(stop));
    float serial = elapsed_ms(start, stop);

    // Streamed: each stream a kernel on its quarter, then that quarter's copy.
    for (int i = 0; i < n; ++i) h_a[i] = -1;
    CHECK(hipMemset(d_a, 0, nbytes));
    CHECK(hipEventRecord(start, 0));
    for (int k = 0; k < nreps; ++k) {
        for (int i = 0; i < nstreams; ++i)
            init_array<<<blocks / nstreams, threads, 0, streams[i]>>>(d_a + i * (n / nstreams), d_c,
                                                                     niterations);
        for (int i = 0; i < nstreams; ++i)
            CHECK(hipMemcpyAsync(h_a + i * (n / nstreams), d_a + i * (n / nstreams),
                                 nbytes / nstreams, hipMemcpyDeviceToHost, streams[i]));
    }
    CHECK(hipEventRecord(stop, 0));
    CHECK(hipEventSynchronize(stop));
    float streamed = elapsed_ms(start, stop);
    auto t1 = std::chrono::steady_clock::now();

    // After nreps rounds, each adding niterations * c to a zeroed buffer.
    const int want = nreps * niterations * c;
    int bad = 0;
    for (int i = 0; i < n; ++i) bad += h_a[i] != want;
    std::printf(
        "stream_overlap: memcopy %.2f ms, kernel %.2f ms, non-streamed %.2f ms/round, %d streams "
        "%.2f ms/round; loop in %.3f s; %d wrong\n",
        memcopy, kernel, serial / nreps, nstreams, streamed / nreps,
        std::chrono::duration<double>(t1 - t0).count(), bad);

    for (int i = 0; i < nstreams; ++i) CHECK(hipStreamDestroy(streams[i]));
    CHECK(hipEventDestroy(start));
    CHECK(hipEventDestroy(stop));
    CHECK(hipFree(d_a));
    CHECK(hipFree(d_c));
    CHECK(hipHostUnregister(h_a));
    std::free(raw);
    return bad == 0 ? 0 : 1;
}
