// cuBLAS shape: strided batched GEMMs (64 products of 64x64 matrices), then the pointer-array
// form over the same batch; both results copied back and compared with each other.
#include <cstdio>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>
#include <cublas_v2.h>

int main() {
    const int n = 64, batch = 64;
    const size_t one = (size_t)n * n, bytes = sizeof(float) * one * batch;
    std::vector<float> a(one * batch), b(one * batch), c1(one * batch), c2(one * batch);
    for (size_t i = 0; i < a.size(); ++i) { a[i] = (i % 7) - 3.0f; b[i] = (i % 5) * 0.5f; }
    float *da, *db, *dc1, *dc2;
    cudaMalloc(&da, bytes); cudaMalloc(&db, bytes); cudaMalloc(&dc1, bytes); cudaMalloc(&dc2, bytes);
    cudaMemcpy(da, a.data(), bytes, cudaMemcpyHostToDevice);
    cudaMemcpy(db, b.data(), bytes, cudaMemcpyHostToDevice);
    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) { fprintf(stderr, "cublasCreate failed\n"); return 1; }
    const float alpha = 1.0f, beta = 0.0f;
    if (cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_T, n, n, n, &alpha, da, n, one, db, n, one,
                                  &beta, dc1, n, one, batch) != CUBLAS_STATUS_SUCCESS) { fprintf(stderr, "strided failed\n"); return 1; }
    std::vector<const float*> pa(batch), pb(batch); std::vector<float*> pc(batch);
    for (int i = 0; i < batch; ++i) { pa[i] = da + i * one; pb[i] = db + i * one; pc[i] = dc2 + i * one; }
    const float **dpa; const float **dpb; float **dpc;
    cudaMalloc(&dpa, batch * sizeof(void*)); cudaMalloc(&dpb, batch * sizeof(void*)); cudaMalloc(&dpc, batch * sizeof(void*));
    cudaMemcpy(dpa, pa.data(), batch * sizeof(void*), cudaMemcpyHostToDevice);
    cudaMemcpy(dpb, pb.data(), batch * sizeof(void*), cudaMemcpyHostToDevice);
    cudaMemcpy(dpc, pc.data(), batch * sizeof(void*), cudaMemcpyHostToDevice);
    if (cublasSgemmBatched(h, CUBLAS_OP_N, CUBLAS_OP_T, n, n, n, &alpha, dpa, n, dpb, n, &beta, dpc, n, batch) != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "batched failed\n"); return 1;
    }
    cudaMemcpy(c1.data(), dc1, bytes, cudaMemcpyDeviceToHost);
    cudaMemcpy(c2.data(), dc2, bytes, cudaMemcpyDeviceToHost);
    if (memcmp(c1.data(), c2.data(), bytes) != 0) { fprintf(stderr, "strided and pointer-array batches differ\n"); return 1; }
    cublasDestroy(h);
    printf("batched gemm PASSED\n");
    return 0;
}
