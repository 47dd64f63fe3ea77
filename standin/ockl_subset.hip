// The four work-item functions of ROCm's device library (ockl) that HIP 5.2's headers call
// for threadIdx, blockIdx, blockDim and gridDim, written with compiler builtins and the HSA
// dispatch packet (workgroup_size_x/y/z: u16 at bytes 4, 6, 8; grid_size_x/y/z: u32 at
// 12, 16, 20). Debian's HIP 5.2 ships no device libraries for gfx11, and clang-19 none
// for its targets; linked with -fgpu-rdc -nogpulib, this lets a case become a program for
// the stand-in runtime on those targets (standin/). Correct on a GPU too for HIP's uniform
// work-groups; only stand-in builds link it.
#include <hip/hip_runtime.h>
#include <stdint.h>
// dispatch packet: u16 workgroup_size_x @4, y @6, z @8; u32 grid_size_x @12, y @16, z @20
extern "C" __device__ size_t __ockl_get_local_id(unsigned d) {
  return d == 0 ? __builtin_amdgcn_workitem_id_x() : d == 1 ? __builtin_amdgcn_workitem_id_y() : d == 2 ? __builtin_amdgcn_workitem_id_z() : 0;
}
extern "C" __device__ size_t __ockl_get_group_id(unsigned d) {
  return d == 0 ? __builtin_amdgcn_workgroup_id_x() : d == 1 ? __builtin_amdgcn_workgroup_id_y() : d == 2 ? __builtin_amdgcn_workgroup_id_z() : 0;
}
extern "C" __device__ size_t __ockl_get_local_size(unsigned d) {
  const uint16_t* p = (const uint16_t*)__builtin_amdgcn_dispatch_ptr();
  return d < 3 ? p[2 + d] : 1;
}
extern "C" __device__ size_t __ockl_get_num_groups(unsigned d) {
  if (d >= 3) return 1;
  const char* p = (const char*)__builtin_amdgcn_dispatch_ptr();
  uint32_t grid = *(const uint32_t*)(p + 12 + 4 * d);
  uint16_t wg = *(const uint16_t*)(p + 4 + 2 * d);
  return (grid + wg - 1) / wg;
}
