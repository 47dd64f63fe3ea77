// private_runtime's library: built by the harness as a shared library with the compiler's
// default runtime linkage (`library` in the matrix). Under nvcc that is the static CUDA
// runtime: this library registers its kernel with a runtime of its own, as cuBLAS does,
// and its launch and synchronisation never pass through the shared runtime capture
// interposes.
#include "../common/hrr_gpu.h"

__global__ void add_seven(int* p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] += 7;
}

extern "C" int case_library_add_seven(int* d, int n) {
    add_seven<<<(n + 255) / 256, 256>>>(d, n);
    return hipDeviceSynchronize() == hipSuccess ? 0 : 1;
}
