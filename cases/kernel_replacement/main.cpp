// kernel_replacement: a kernel launched as programs launch theirs (<<<>>>, registered from
// the program's fat binary), its inputs and results copied. The case declares
// `replace_kernel`: replay launches `affine` from replacement.hip, the same kernel rebuilt
// as a code object of its own, with the captured arguments and launch configuration; it
// computes the same, so every result matches byte for byte (the control
// `kernel_replacement_changed` makes the replacement compute otherwise: it must fail).
#include "../common/hrr_gpu.h"

#include <vector>

extern "C" __global__ void affine(int* out, const int* in, int a, int b, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] * a + b;
}

int main() {
    const unsigned n = 1 << 16;
    const size_t bytes = n * sizeof(int);
    std::vector<int> in(n), out(n), want(n);
    int *d_in, *d_out;
    CHECK(hipMalloc((void**)&d_in, bytes));
    CHECK(hipMalloc((void**)&d_out, bytes));
    for (int round = 0; round < 2; ++round) {
        const int a = 3 + round, b = -7 * (round + 1);
        for (unsigned i = 0; i < n; ++i) {
            in[i] = int(i * 2654435761u >> 9) - 4096 * round;
            want[i] = in[i] * a + b;
        }
        CHECK(hipMemcpy(d_in, in.data(), bytes, hipMemcpyHostToDevice));
        affine<<<(n + 255) / 256, 256>>>(d_out, d_in, a, b, n);
        CHECK(hipGetLastError());
        CHECK(hipMemcpy(out.data(), d_out, bytes, hipMemcpyDeviceToHost));
        if (hrr_kernels_ran()) expect_all("affine", out.data(), want.data(), n);
    }
    CHECK(hipFree(d_in));
    CHECK(hipFree(d_out));
    std::printf("kernel_replacement: 2 rounds of %u\n", n);
    return 0;
}
