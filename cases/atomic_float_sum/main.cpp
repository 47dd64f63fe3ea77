// atomic_float_sum: a result the program itself does not reproduce, beside results it
// does. Four float sums of 65536 values each are added by atomicAdd from 1024 blocks:
// the order the additions land in changes from run to run, and each value cancels
// against another (the first half of a sum adds +L, the second half -L, plus a small
// constant), so the order changes the rounding well into the sum's mantissa while its
// sign and exponent (the top byte) stay put. Beside them, in the same program and the
// same copies, integer sums and a histogram by integer atomics are exact whatever the
// order. The matrix declares the case `unstable` (the 16 bytes of the four float sums
// may differ between replays); every other byte must replay exactly.
//
// Outputs, in the order copied back: the histogram (1 KiB, the blob-edit check's byte),
// then one struct of the four float sums and four integer sums (32 bytes).
#include "../common/hrr_gpu.h"

#include <cmath>
#include <cstring>
#include <vector>

constexpr int kSums = 4;
constexpr int kPerSum = 1 << 16;
constexpr int kValues = kSums * kPerSum;
constexpr int kBins = 256;

struct Totals {
    float fsum[kSums];
    unsigned isum[kSums];
};

__global__ void accumulate(const float* x, const unsigned* v, Totals* t, unsigned* hist) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= kValues) return;
    int k = i / kPerSum;
    atomicAdd(&t->fsum[k], x[i]);
    atomicAdd(&t->isum[k], v[i]);
    atomicAdd(&hist[v[i] % kBins], 1u);
}

static unsigned mix(unsigned x) {
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

int main() {
    std::vector<float> x(kValues);
    std::vector<unsigned> v(kValues);
    for (int k = 0; k < kSums; ++k) {
        // Every value is a multiple of 2^-9 below 16384, so exact in a float, and the
        // exact sum is 1036: the +L and -L cancel, 65536 * 2^-6 = 1024, and 12 more. 1036
        // lies mid-way between the sums whose third byte changes (1032, 1040) and well
        // inside [512, 2048), where the top byte (sign, exponent) is the same: an order
        // that moves the sum by less than 4 leaves those bytes alone, and a warp-by-warp
        // order (simulated, warps in random order: +-20) changes the low three bytes
        // widely. Magnitudes per sum: up to 6000, 8000, 10000, 12000.
        const unsigned scale = 512u * (6000u + 2000u * (unsigned)k);
        for (int j = 0; j < kPerSum; ++j) {
            int pair = j % (kPerSum / 2);
            float l = (float)(mix((unsigned)(k * kPerSum + pair) * 4u + 1u) % scale) / 512.0f;
            x[k * kPerSum + j] = (j < kPerSum / 2 ? l : -l) + 0.015625f;
        }
        x[k * kPerSum] += 12.0f;
    }
    for (int i = 0; i < kValues; ++i) v[i] = mix((unsigned)i * 2654435761u) % 100000u;

    float* dx;
    unsigned *dv, *dhist;
    Totals* dt;
    CHECK(hipMalloc((void**)&dx, kValues * sizeof(float)));
    CHECK(hipMalloc((void**)&dv, kValues * sizeof(unsigned)));
    CHECK(hipMalloc((void**)&dt, sizeof(Totals)));
    CHECK(hipMalloc((void**)&dhist, kBins * sizeof(unsigned)));
    CHECK(hipMemcpy(dx, x.data(), kValues * sizeof(float), hipMemcpyHostToDevice));
    CHECK(hipMemcpy(dv, v.data(), kValues * sizeof(unsigned), hipMemcpyHostToDevice));
    CHECK(hipMemset(dt, 0, sizeof(Totals)));
    CHECK(hipMemset(dhist, 0, kBins * sizeof(unsigned)));
    accumulate<<<kValues / 256, 256>>>(dx, dv, dt, dhist);
    std::vector<unsigned> hist(kBins);
    Totals t;
    CHECK(hipMemcpy(hist.data(), dhist, kBins * sizeof(unsigned), hipMemcpyDeviceToHost));
    CHECK(hipMemcpy(&t, dt, sizeof(Totals), hipMemcpyDeviceToHost));

    if (hrr_kernels_ran()) {
        std::vector<unsigned> want_hist(kBins, 0);
        for (int i = 0; i < kValues; ++i) ++want_hist[v[i] % kBins];
        expect_all("histogram", hist.data(), want_hist.data(), kBins);
        for (int k = 0; k < kSums; ++k) {
            unsigned want = 0;
            double exact = 0, magnitude = 0;
            for (int j = 0; j < kPerSum; ++j) {
                want += v[k * kPerSum + j];
                exact += x[k * kPerSum + j];
                magnitude += std::fabs(x[k * kPerSum + j]);
            }
            expect_all("integer sum", &t.isum[k], &want, 1);
            // Float addition in an arbitrary order: the rounding errors add up like a
            // random walk, about sqrt(n) * 2^-24 * sum|x| (simulated orders: a tenth of
            // that). Eight times it still fails a sum missing one block (~250 values of
            // thousands each).
            const double tolerance = 8.0 * std::sqrt((double)kPerSum) * std::ldexp(magnitude, -24);
            if (!(std::fabs(t.fsum[k] - exact) <= tolerance)) {
                std::fprintf(stderr, "float sum %d is %f, exact %f (tolerance %f)\n", k, t.fsum[k], exact, tolerance);
                return 1;
            }
        }
    }
    CHECK(hipFree(dx));
    CHECK(hipFree(dv));
    CHECK(hipFree(dt));
    CHECK(hipFree(dhist));
    std::printf("atomic_float_sum: ok\n");
    return 0;
}
