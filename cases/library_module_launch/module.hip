// scale_add, the kernel library_module_launch's library loads: the harness compiles this
// file into a code object for the family's targets (AMD: an offload bundle; NVIDIA: a fat
// binary) and names it in HRR_MODULE_FILE (the matrix's `module:`), as rocBLAS ships .co files.
#include "../common/hrr_gpu.h"

extern "C" __global__ void scale_add(float* out, const float* in, float a, unsigned n) {
#if defined(__HIP_PLATFORM_AMD__) || defined(__HIPCC__)
    // Work-item builtins need no device library: AMD modules build with -nogpulib, as
    // Debian's HIP 5.2 ships no device libraries for some targets. The dispatch packet's
    // third 16-bit field is the work-group size in x.
    unsigned local = __builtin_amdgcn_workitem_id_x();
    unsigned group = __builtin_amdgcn_workgroup_id_x();
    unsigned size = static_cast<const unsigned short*>(__builtin_amdgcn_dispatch_ptr())[2];
    unsigned i = group * size + local;
#else
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
#endif
    if (i < n) out[i] = in[i] * a + 1.0f;
}
