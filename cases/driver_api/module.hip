// vec_add and the global it reads, as a module of its own: the harness compiles this file
// into a code object for the family's targets (AMD: hipcc --genco, an offload bundle;
// NVIDIA: nvcc --fatbin) and names it to the program in HRR_MODULE_FILE (the matrix's
// `module:`). The program loads it several times (from the file, from memory, as a fat
// binary, as a library): each load has its own vec_bias.
#include "../common/hrr_gpu.h"

__device__ float vec_bias;

extern "C" __global__ void vec_add(const float* a, const float* b, float* c, int n) {
#if defined(__HIP_PLATFORM_AMD__) || defined(__HIPCC__)
    // Work-item builtins need no device library (AMD modules build with -nogpulib); the
    // dispatch packet's third 16-bit field is the work-group size in x.
    int local = __builtin_amdgcn_workitem_id_x();
    int group = __builtin_amdgcn_workgroup_id_x();
    int size = static_cast<const unsigned short*>(__builtin_amdgcn_dispatch_ptr())[2];
    int i = group * size + local;
#else
    int i = blockIdx.x * blockDim.x + threadIdx.x;
#endif
    if (i < n) c[i] = a[i] + b[i] + vec_bias;
}
