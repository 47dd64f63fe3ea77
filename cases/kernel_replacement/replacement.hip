// affine rebuilt as a code object of its own (the harness compiles it as a `module:`:
// AMD --genco or an offload bundle, NVIDIA --fatbin), which replay launches in place of
// the program's own (`replace_kernel` in the matrix, `hrr-replay --replace-kernel`).
#include "../common/hrr_gpu.h"

extern "C" __global__ void affine(int* out, const int* in, int a, int b, unsigned n) {
#if defined(__HIP_PLATFORM_AMD__) || defined(__HIPCC__)
    // Work-item builtins need no device library (AMD modules build with -nogpulib); the
    // dispatch packet's third 16-bit field is the work-group size in x.
    unsigned local = __builtin_amdgcn_workitem_id_x();
    unsigned group = __builtin_amdgcn_workgroup_id_x();
    unsigned size = static_cast<const unsigned short*>(__builtin_amdgcn_dispatch_ptr())[2];
    unsigned i = group * size + local;
#else
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
#endif
    const int offset = 0;
    if (i < n) out[i] = in[i] * a + b + offset;
}
