// A program whose kernel faults (issue 26's shape): a scan-like kernel reads its input,
// then, in argv[1]'s mode, writes through an address no allocation holds ("address":
// cudaErrorIllegalAddress, 700) or fails a device-side assert ("assert":
// cudaErrorAssert, 710). The host synchronises, copies the result back into a stack
// array and frees, checking nothing: every call after the fault returns the sticky
// error, and the program exits 1. Its archive must replay to the same fault.
#include <cassert>
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

__global__ void scan_then_fault(int* out, const int* in, int n, int mode, int* wild) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int v = in[i] + (i > 0 ? in[i - 1] : 0);
    out[i] = v;
    if (i == n / 2) {
        if (mode == 0) *wild = v;
        else assert(v < 0);
    }
}

int main(int argc, char** argv) {
    int mode = argc > 1 && std::strcmp(argv[1], "assert") == 0 ? 1 : 0;
    const int n = 32 * 1024;
    int *in, *out;
    cudaMalloc(&in, n * sizeof(int));
    cudaMalloc(&out, n * sizeof(int));
    static int host[n];
    for (int i = 0; i < n; ++i) host[i] = i;
    cudaMemcpy(in, host, n * sizeof(int), cudaMemcpyHostToDevice);
    scan_then_fault<<<n / 256, 256>>>(out, in, n, mode, (int*)0x10);
    cudaError_t sync = cudaDeviceSynchronize();
    int result[32];
    cudaError_t copy = cudaMemcpy(result, out, sizeof result, cudaMemcpyDeviceToHost);
    cudaFree(in);
    cudaFree(out);
    int* again = nullptr;
    cudaError_t alloc = cudaMalloc(&again, 64);
    std::printf("kernel_fault (%s): synchronize %d, copy %d, malloc %d\n", mode ? "assert" : "address",
                (int)sync, (int)copy, (int)alloc);
    return sync == cudaSuccess ? 0 : 1;
}
