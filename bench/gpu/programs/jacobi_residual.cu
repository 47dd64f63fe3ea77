// Shape: a Jacobi iteration on a 2-D grid whose residual is summed in double precision by
// atomicAdd from every block and copied back after each sweep (200 sweeps). The order of
// the adds changes from run to run, so the residual's last bits may too: float noise that
// byte comparison cannot describe (a tolerance in ulps can).
#include <cstdio>
#include <cmath>
#include <cuda_runtime.h>

__global__ void sweep(const double* u, double* v, const double* f, int n, double* residual) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    double r = 0;
    if (x > 0 && y > 0 && x < n - 1 && y < n - 1) {
        int i = y * n + x;
        double nv = 0.25 * (u[i - 1] + u[i + 1] + u[i - n] + u[i + n] - f[i]);
        v[i] = nv;
        r = (nv - u[i]) * (nv - u[i]);
    }
    // One add per warp, in whatever order the warps finish.
    for (int o = 16; o > 0; o /= 2) r += __shfl_down_sync(0xffffffffu, r, o);
    if ((threadIdx.y * blockDim.x + threadIdx.x) % 32 == 0) atomicAdd(residual, r);
}

int main() {
    const int n = 1024, sweeps = 200;
    size_t bytes = size_t(n) * n * sizeof(double);
    double* h = new double[size_t(n) * n];
    for (int i = 0; i < n * n; ++i) h[i] = std::sin(0.001 * i) * 1e-3;
    double *u, *v, *f, *res;
    cudaMalloc(&u, bytes); cudaMalloc(&v, bytes); cudaMalloc(&f, bytes); cudaMalloc(&res, sizeof(double));
    cudaMemset(u, 0, bytes); cudaMemset(v, 0, bytes);
    cudaMemcpy(f, h, bytes, cudaMemcpyHostToDevice);
    dim3 block(32, 8), grid(n / 32, n / 8);
    double first = 0, last = 0;
    for (int s = 0; s < sweeps; ++s) {
        cudaMemsetAsync(res, 0, sizeof(double));
        sweep<<<grid, block>>>(u, v, f, n, res);
        double r = 0;
        cudaMemcpy(&r, res, sizeof r, cudaMemcpyDeviceToHost);
        if (s == 0) first = r;
        last = r;
        double* t = u; u = v; v = t;
    }
    cudaMemcpy(h, u, bytes, cudaMemcpyDeviceToHost);
    printf("jacobi: %d sweeps, residual fell %s\n", sweeps, last < first ? "yes" : "NO");
    return last < first ? 0 : 1;
}
