// range_step: one step of a training-shaped loop recorded alone (range capture, issue 23).
// State lives across steps: weights and a momentum buffer updated in place, a scratch
// buffer allocated once. Each step copies a new batch in, runs the update and a reduction
// kernel, and copies the step's checksum back. Step 3 of 6 is bracketed by
// hipProfilerStart/hipProfilerStop (cudaProfilerStart/Stop under nvcc): captured with
// HRR_CAPTURE_RANGE=profiler, the archive holds the set-up calls, a snapshot of every
// live allocation at the range's start, and that step's work; replay restores the
// snapshot and must reproduce the step's checksum byte for byte. The program checks
// every step's checksum against a host computation, so its own run proves the values.
#include "../common/hrr_gpu.h"

#include <cstdint>
#include <vector>

#if !defined(__HIPCC__) && !defined(__HIP_PLATFORM_AMD__)
// cuda_profiler_api.h's two functions (not every CUDA package ships that header).
extern "C" cudaError_t cudaProfilerStart(void);
extern "C" cudaError_t cudaProfilerStop(void);
#define hipProfilerStart cudaProfilerStart
#define hipProfilerStop cudaProfilerStop
#else
// HIP marks its profiler markers deprecated (rocTX instead), but they are the ones
// hipProfilerStart-based tools and range capture key on.
#pragma clang diagnostic ignored "-Wdeprecated-declarations"
#endif

constexpr int kN = 1 << 16;
constexpr int kSteps = 6, kMarked = 3;

// Integer arithmetic throughout, so every value (and the checksum's order of atomics)
// is exact and the host can compute the same.
__global__ void update(int* w, int* m, const int* batch, int* scratch, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int g = (w[i] >> 3) - batch[i];
    m[i] = (m[i] >> 1) + g;
    w[i] -= m[i] >> 2;
    scratch[i] = w[i] & 0xffff;
}

__global__ void checksum(const int* scratch, int n, unsigned long long* sum) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(sum, (unsigned long long)scratch[i]);
}

int main() {
    int *w, *m, *batch, *scratch;
    unsigned long long* sum;
    CHECK(hipMalloc((void**)&w, kN * sizeof(int)));
    CHECK(hipMalloc((void**)&m, kN * sizeof(int)));
    CHECK(hipMalloc((void**)&batch, kN * sizeof(int)));
    CHECK(hipMalloc((void**)&scratch, kN * sizeof(int)));
    CHECK(hipMalloc((void**)&sum, sizeof *sum));
    std::vector<int> hw(kN), hm(kN, 0), hb(kN);
    for (int i = 0; i < kN; ++i) hw[i] = (i * 2654435761u) >> 8;
    CHECK(hipMemcpy(w, hw.data(), kN * sizeof(int), hipMemcpyHostToDevice));
    CHECK(hipMemset(m, 0, kN * sizeof(int)));
    for (int step = 1; step <= kSteps; ++step) {
        if (step == kMarked) CHECK(hipProfilerStart());
        for (int i = 0; i < kN; ++i) hb[i] = (i * 31 + step * 977) % 4093;
        CHECK(hipMemcpy(batch, hb.data(), kN * sizeof(int), hipMemcpyHostToDevice));
        CHECK(hipMemset(sum, 0, sizeof *sum));
        update<<<kN / 256, 256>>>(w, m, batch, scratch, kN);
        checksum<<<kN / 256, 256>>>(scratch, kN, sum);
        CHECK(hipGetLastError());
        unsigned long long got = 0;
        CHECK(hipMemcpy(&got, sum, sizeof got, hipMemcpyDeviceToHost));
        if (step == kMarked) CHECK(hipProfilerStop());
        // The host's step.
        unsigned long long want = 0;
        for (int i = 0; i < kN; ++i) {
            int g = (hw[i] >> 3) - hb[i];
            hm[i] = (hm[i] >> 1) + g;
            hw[i] -= hm[i] >> 2;
            want += (unsigned long long)(hw[i] & 0xffff);
        }
        if (hrr_kernels_ran() && got != want) {
            std::fprintf(stderr, "step %d: checksum %llu, the host computed %llu\n", step, got, want);
            return 1;
        }
        std::printf("step %d checksum %llu\n", step, hrr_kernels_ran() ? got : want);
    }
    CHECK(hipFree(w));
    CHECK(hipFree(m));
    CHECK(hipFree(batch));
    CHECK(hipFree(scratch));
    CHECK(hipFree(sum));
    std::printf("range_step: %d steps, step %d marked\n", kSteps, kMarked);
    return 0;
}
