// cuBLAS shape: one SGEMM (C = alpha A B + beta C) on 512x512 matrices, result copied back
// and checked against a host product on a few entries.
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <vector>
#include <cuda_runtime.h>
#include <cublas_v2.h>

int main() {
    const int n = 512;
    std::vector<float> a(n * n), b(n * n), c(n * n, 0.0f);
    for (int i = 0; i < n * n; ++i) { a[i] = (i % 17) * 0.25f; b[i] = (i % 13) * 0.5f - 2.0f; }
    float *da, *db, *dc;
    size_t bytes = sizeof(float) * n * n;
    cudaMalloc(&da, bytes); cudaMalloc(&db, bytes); cudaMalloc(&dc, bytes);
    cudaMemcpy(da, a.data(), bytes, cudaMemcpyHostToDevice);
    cudaMemcpy(db, b.data(), bytes, cudaMemcpyHostToDevice);
    cudaMemset(dc, 0, bytes);
    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) { fprintf(stderr, "cublasCreate failed\n"); return 1; }
    const float alpha = 1.0f, beta = 0.0f;
    if (cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, da, n, db, n, &beta, dc, n) != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "cublasSgemm failed\n"); return 1;
    }
    cudaMemcpy(c.data(), dc, bytes, cudaMemcpyDeviceToHost);
    for (int k = 0; k < 8; ++k) {
        int i = (k * 97) % n, j = (k * 31) % n;
        double want = 0;
        for (int l = 0; l < n; ++l) want += (double)a[l * n + i] * b[j * n + l];
        if (fabs(want - c[j * n + i]) > 1e-2 * fabs(want) + 1e-2) { fprintf(stderr, "mismatch at %d,%d: %f vs %f\n", i, j, c[j * n + i], want); return 1; }
    }
    cublasDestroy(h);
    cudaFree(da); cudaFree(db); cudaFree(dc);
    printf("sgemm PASSED\n");
    return 0;
}
