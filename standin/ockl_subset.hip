// The four work-item functions (and, below, the grid sync and fence cooperative groups use) of ROCm's device library (ockl) that HIP 5.2's headers call
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
// Cooperative groups' grid.sync() (cases/launch_config) calls these two. The fence is the
// strongest there is (sequentially consistent, system scope): correct for any flags,
// order and scope asked for. The grid barrier is a software one over a counter and a
// generation in device memory, correct for a co-resident grid (what a cooperative launch
// guarantees), one cooperative kernel at a time (ockl's uses the GWS hardware instead).
extern "C" __device__ void __atomic_work_item_fence(unsigned flags, int order, int scope) {
  (void)flags; (void)order; (void)scope;
  __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, "");
}
__device__ unsigned hrr_grid_barrier[2];  // arrivals, generation
extern "C" __device__ void __ockl_grid_sync(void) {
  __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, "agent");
  __builtin_amdgcn_s_barrier();
  if (__ockl_get_local_id(0) == 0 && __ockl_get_local_id(1) == 0 && __ockl_get_local_id(2) == 0) {
    unsigned groups = (unsigned)(__ockl_get_num_groups(0) * __ockl_get_num_groups(1) * __ockl_get_num_groups(2));
    unsigned gen = __hip_atomic_load(&hrr_grid_barrier[1], __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_AGENT);
    if (__hip_atomic_fetch_add(&hrr_grid_barrier[0], 1u, __ATOMIC_ACQ_REL, __HIP_MEMORY_SCOPE_AGENT) == groups - 1) {
      __hip_atomic_store(&hrr_grid_barrier[0], 0u, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
      __hip_atomic_fetch_add(&hrr_grid_barrier[1], 1u, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_AGENT);
    } else {
      while (__hip_atomic_load(&hrr_grid_barrier[1], __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_AGENT) == gen)
        __builtin_amdgcn_s_sleep(1);
    }
  }
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, "agent");
}
