// cuda-samples shape: a float sum by atomicAdd from many blocks. The order of the adds
// changes from run to run, so the low bits of the result may too: a legitimately
// nondeterministic output (the check allows for it; replay must not call it a pass or a
// plain mismatch).
#include <cstdio>
#include <cmath>
#include <cuda_runtime.h>

__global__ void sum(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(out, in[i]);
}

int main() {
    const int n = 1 << 22;
    float* h = new float[n]; double ref = 0;
    for (int i = 0; i < n; ++i) { h[i] = 1.0f / (1 + i % 977); ref += h[i]; }
    float *d, *o; cudaMalloc(&d, n * sizeof(float)); cudaMalloc(&o, sizeof(float));
    cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice); cudaMemset(o, 0, sizeof(float));
    sum<<<n / 256, 256>>>(d, o, n);
    float got = 0; cudaMemcpy(&got, o, sizeof got, cudaMemcpyDeviceToHost);
    printf("float atomic sum: relative error %s 1e-3\n", fabs(got - ref) / ref < 1e-3 ? "below" : "ABOVE");
    return fabs(got - ref) / ref < 1e-3 ? 0 : 1;
}
