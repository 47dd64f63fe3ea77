/* The stand-in CUDA driver's virtual memory management calls: cuMemAddressReserve and
 * the rest, over vmm.c (their CUresult numbers are the core's). */
#include <cuda.h>

#include "core.h"

CUresult cuMemGetAllocationGranularity(size_t* g, const CUmemAllocationProp* prop,
                                       CUmemAllocationGranularity_flags option) {
    (void)option;
    if (!g || !prop) return CUDA_ERROR_INVALID_VALUE;
    *g = si_vmm_granularity();
    return CUDA_SUCCESS;
}
CUresult cuMemAddressReserve(CUdeviceptr* p, size_t n, size_t align, CUdeviceptr hint,
                             unsigned long long flags) {
    (void)flags;
    si_lock();
    void* out = 0;
    int r = si_vmm_reserve(&out, n, align, (const void*)(uintptr_t)hint);
    if (p) *p = (CUdeviceptr)(uintptr_t)out;
    si_unlock();
    return (CUresult)r;
}
CUresult cuMemAddressFree(CUdeviceptr p, size_t n) {
    si_lock();
    int r = si_vmm_free((void*)(uintptr_t)p, n);
    si_unlock();
    return (CUresult)r;
}
CUresult cuMemCreate(CUmemGenericAllocationHandle* h, size_t n, const CUmemAllocationProp* prop,
                     unsigned long long flags) {
    if (!h || !prop || flags) return CUDA_ERROR_INVALID_VALUE;
    if (prop->type != CU_MEM_ALLOCATION_TYPE_PINNED) return CUDA_ERROR_INVALID_VALUE;
    si_lock();
    uint64_t out = 0;
    int r = si_vmm_create(&out, n, (int)prop->location.type, prop->location.id);
    *h = out;
    si_unlock();
    return (CUresult)r;
}
CUresult cuMemRelease(CUmemGenericAllocationHandle h) {
    si_lock();
    int r = si_vmm_release(h);
    si_unlock();
    return (CUresult)r;
}
CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle* h, void* addr) {
    si_lock();
    uint64_t out = 0;
    int r = si_vmm_retain(&out, addr);
    if (h && r == 0) *h = out;
    si_unlock();
    return (CUresult)r;
}
CUresult cuMemMap(CUdeviceptr p, size_t n, size_t offset, CUmemGenericAllocationHandle h,
                  unsigned long long flags) {
    if (flags) return CUDA_ERROR_INVALID_VALUE;
    si_lock();
    int r = si_vmm_map((void*)(uintptr_t)p, n, offset, h);
    si_unlock();
    return (CUresult)r;
}
CUresult cuMemUnmap(CUdeviceptr p, size_t n) {
    si_lock();
    si_device_sync(); /* unmapping waits for the work that may use the range */
    int r = si_vmm_unmap((void*)(uintptr_t)p, n);
    si_unlock();
    return (CUresult)r;
}
CUresult cuMemSetAccess(CUdeviceptr p, size_t n, const CUmemAccessDesc* desc, size_t count) {
    _Static_assert(sizeof(CUmemAccessDesc) == 12, "CUmemAccessDesc is three 4-byte words");
    si_lock();
    int r = si_vmm_set_access((void*)(uintptr_t)p, n, (const int32_t*)desc, count);
    si_unlock();
    return (CUresult)r;
}
