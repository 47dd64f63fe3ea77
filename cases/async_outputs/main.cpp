// async_outputs: asynchronous device-to-host copies into page-locked memory whose
// destinations capture reads when the copies complete (on its reader threads), under
// every way a program may learn that a copy finished:
// - a buffer reused in stream order: each stream's kernel and copy, round after round,
//   into the same bytes, waited for only at the end (each round's output must be read
//   before the next round's copy overwrites it);
// - a stream waited for, an event waited for, a successful event query, the device;
// - a stream that waited on another stream's event, synchronised (the first stream's
//   copy is complete though capture never saw that stream synchronised);
// - an upload from the bytes a download just wrote, in stream order;
// - a copy that lands milliseconds after its call (behind a spinning kernel);
// - a download the program never waits for before it exits (replay checks it).
#include "../common/hrr_gpu.h"

#include <cstdlib>
#include <cstring>

__global__ void add(int* p, int n, int v) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] += v;
}

// `add` after every thread has spun for `cycles` clocks: the kernel runs for
// milliseconds, so a copy queued behind it lands long after its call returned.
// `threads` is the grid's thread count (the stride over `p`).
__global__ void add_late(int* p, int n, int v, long long cycles, int threads) {
    long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += threads) p[i] += v;
}

// Every value checked here is one the add kernel computed (hrr_kernels_ran).
static int check(const int* h, int n, int want, const char* what) {
    if (!hrr_kernels_ran()) return 0;
    for (int i = 0; i < n; ++i) {
        if (h[i] != want) {
            std::fprintf(stderr, "%s: element %d is %d, expected %d\n", what, i, h[i], want);
            return 1;
        }
    }
    return 0;
}

int main() {
    const int streams = 4, rounds = 6, n = 1 << 20;  // 4 MiB a stream
    const size_t bytes = n * sizeof(int);
    hipStream_t s[streams];
    int* dev[streams];
    int* pinned = nullptr;  // hipHostMalloc'd: a quarter per stream
    CHECK(hipHostMalloc((void**)&pinned, streams * bytes, hipHostMallocDefault));
    // Registered memory as well: the fifth buffer.
    void* raw = nullptr;
    if (posix_memalign(&raw, 4096, bytes) != 0) return 2;
    int* reg = static_cast<int*>(raw);
    std::memset(reg, 0, bytes);
    CHECK(hipHostRegister(reg, bytes, hipHostRegisterDefault));
    for (int k = 0; k < streams; ++k) {
        CHECK(hipStreamCreate(&s[k]));
        CHECK(hipMalloc((void**)&dev[k], bytes));
        CHECK(hipMemsetAsync(dev[k], 0, bytes, s[k]));
    }
    // Rounds into the same bytes, waited for only once, by the device.
    for (int r = 0; r < rounds; ++r) {
        for (int k = 0; k < streams; ++k) {
            add<<<n / 256, 256, 0, s[k]>>>(dev[k], n, k + 1);
            CHECK(hipMemcpyAsync(pinned + (size_t)k * n, dev[k], bytes, hipMemcpyDeviceToHost, s[k]));
        }
    }
    CHECK(hipDeviceSynchronize());
    for (int k = 0; k < streams; ++k)
        if (check(pinned + (size_t)k * n, n, rounds * (k + 1), "rounds")) return 1;

    // A stream waited for.
    add<<<n / 256, 256, 0, s[0]>>>(dev[0], n, 100);
    CHECK(hipMemcpyAsync(reg, dev[0], bytes, hipMemcpyDeviceToHost, s[0]));
    CHECK(hipStreamSynchronize(s[0]));
    if (check(reg, n, rounds + 100, "stream")) return 1;

    // An event waited for, then an event queried until it completes.
    hipEvent_t e;
    CHECK(hipEventCreateWithFlags(&e, hipEventDisableTiming));
    add<<<n / 256, 256, 0, s[1]>>>(dev[1], n, 100);
    CHECK(hipMemcpyAsync(reg, dev[1], bytes, hipMemcpyDeviceToHost, s[1]));
    CHECK(hipEventRecord(e, s[1]));
    CHECK(hipEventSynchronize(e));
    if (check(reg, n, 2 * rounds + 100, "event")) return 1;
    add<<<n / 256, 256, 0, s[2]>>>(dev[2], n, 100);
    CHECK(hipMemcpyAsync(reg, dev[2], bytes, hipMemcpyDeviceToHost, s[2]));
    CHECK(hipEventRecord(e, s[2]));
    hipError_t q;
    while ((q = hipEventQuery(e)) == hipErrorNotReady) {
    }
    CHECK(q);
    if (check(reg, n, 3 * rounds + 100, "query")) return 1;

    // s[3] waits on an event recorded after s[0]'s copy; only s[3] is synchronised.
    add<<<n / 256, 256, 0, s[0]>>>(dev[0], n, 1000);
    CHECK(hipMemcpyAsync(pinned, dev[0], bytes, hipMemcpyDeviceToHost, s[0]));
    CHECK(hipEventRecord(e, s[0]));
    CHECK(hipStreamWaitEvent(s[3], e, 0));
    CHECK(hipStreamSynchronize(s[3]));
    if (check(pinned, n, rounds + 1100, "cross-stream")) return 1;

    // An upload of the bytes a download just wrote, in stream order: dev[1] gets dev[2]'s.
    CHECK(hipMemcpyAsync(pinned + n, dev[2], bytes, hipMemcpyDeviceToHost, s[1]));
    CHECK(hipMemcpyAsync(dev[1], pinned + n, bytes, hipMemcpyHostToDevice, s[1]));
    add<<<n / 256, 256, 0, s[1]>>>(dev[1], n, 7);
    CHECK(hipMemcpyAsync(reg, dev[1], bytes, hipMemcpyDeviceToHost, s[1]));
    CHECK(hipStreamSynchronize(s[1]));
    if (check(reg, n, 3 * rounds + 107, "upload")) return 1;

    // A copy that lands about 10 ms after its call returned (queued behind a kernel
    // that spins that long, in one wave of blocks): the destination's bytes until then
    // are the upload's above, which a capture reading it before the copy completes
    // would record.
    add_late<<<256, 256, 0, s[2]>>>(dev[2], n, 1, 20000000, 256 * 256);
    CHECK(hipMemcpyAsync(reg, dev[2], bytes, hipMemcpyDeviceToHost, s[2]));
    CHECK(hipStreamSynchronize(s[2]));
    if (check(reg, n, 3 * rounds + 101, "late")) return 1;

    // Never waited for: the program exits with the copy in flight (its bytes are not
    // looked at; capture reads them at exit and replay compares them).
    add<<<n / 256, 256, 0, s[3]>>>(dev[3], n, 5);
    CHECK(hipMemcpyAsync(pinned + 3 * (size_t)n, dev[3], bytes, hipMemcpyDeviceToHost, s[3]));
    std::printf("async_outputs: ok\n");
    return 0;
}
