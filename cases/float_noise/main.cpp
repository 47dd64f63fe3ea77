// float_noise: a Jacobi iteration on a 2-D grid whose residual, a sum of squares in double
// precision, is reduced per block and added by atomicAdd from every block, then copied
// back after each of 100 sweeps. The order of the blocks' adds changes from run to run, so
// the residual's last bits may too (float noise byte comparison cannot describe); the grid
// itself is computed element by element and replays exactly. The case declares an f64
// tolerance: each residual matches within it, reported as such, never as byte-exact.
#include "../common/hrr_gpu.h"

#include <cmath>
#include <vector>

constexpr int kBlock = 16;

__global__ void sweep(const double* u, double* v, const double* f, int n, double* residual) {
    __shared__ double part[kBlock * kBlock];
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    int t = threadIdx.y * blockDim.x + threadIdx.x;
    double r = 0;
    if (x > 0 && y > 0 && x < n - 1 && y < n - 1) {
        int i = y * n + x;
        double nv = 0.25 * (u[i - 1] + u[i + 1] + u[i - n] + u[i + n] - f[i]);
        v[i] = nv;
        r = (nv - u[i]) * (nv - u[i]);
    }
    part[t] = r;
    __syncthreads();
    for (int s = kBlock * kBlock / 2; s > 0; s /= 2) {
        if (t < s) part[t] += part[t + s];
        __syncthreads();
    }
    if (t == 0) atomicAdd(residual, part[0]);
}

int main() {
    const int n = 512, sweeps = 100;
    const size_t bytes = size_t(n) * n * sizeof(double);
    std::vector<double> f(size_t(n) * n), back(size_t(n) * n);
    for (size_t i = 0; i < f.size(); ++i) f[i] = std::sin(0.001 * double(i)) * 1e-3;
    double *u, *v, *df, *res;
    CHECK(hipMalloc((void**)&u, bytes));
    CHECK(hipMalloc((void**)&v, bytes));
    CHECK(hipMalloc((void**)&df, bytes));
    CHECK(hipMalloc((void**)&res, sizeof(double)));
    CHECK(hipMemset(u, 0, bytes));
    CHECK(hipMemset(v, 0, bytes));
    CHECK(hipMemcpy(df, f.data(), bytes, hipMemcpyHostToDevice));
    // The source term as uploaded (exact): the first check, a whole grid of doubles.
    CHECK(hipMemcpy(back.data(), df, bytes, hipMemcpyDeviceToHost));
    expect_all("source term", back.data(), f.data(), f.size());
    dim3 block(kBlock, kBlock), grid(n / kBlock, n / kBlock);
    std::vector<double> residuals(sweeps);
    for (int s = 0; s < sweeps; ++s) {
        CHECK(hipMemset(res, 0, sizeof(double)));
        sweep<<<grid, block>>>(u, v, df, n, res);
        CHECK(hipGetLastError());
        CHECK(hipMemcpy(&residuals[s], res, sizeof(double), hipMemcpyDeviceToHost));
        std::swap(u, v);
    }
    CHECK(hipMemcpy(back.data(), u, bytes, hipMemcpyDeviceToHost));
    if (hrr_kernels_ran() && !(residuals[sweeps - 1] < residuals[0] && residuals[0] > 0)) {
        std::fprintf(stderr, "residual did not fall: %g -> %g\n", residuals[0], residuals[sweeps - 1]);
        return 1;
    }
    CHECK(hipFree(u));
    CHECK(hipFree(v));
    CHECK(hipFree(df));
    CHECK(hipFree(res));
    std::printf("float_noise: %d sweeps\n", sweeps);
    return 0;
}
