/* The stand-in HIP runtime's virtual memory management calls: hipMemAddressReserve and
 * the rest, over vmm.c (their hipError_t numbers are the core's). */
#include <hip/hip_runtime_api.h>

#include "core.h"
#include "hip_internal.h"

hipError_t hipMemGetAllocationGranularity(size_t* g, const hipMemAllocationProp* prop,
                                          hipMemAllocationGranularity_flags option) {
    (void)option;
    if (!g || !prop) return hipErrorInvalidValue;
    *g = si_vmm_granularity();
    return hipSuccess;
}
hipError_t hipMemAddressReserve(void** p, size_t n, size_t align, void* hint,
                                unsigned long long flags) {
    (void)flags;
    ENTER;
    RET(si_vmm_reserve(p, n, align, hint));
}
hipError_t hipMemAddressFree(void* p, size_t n) {
    ENTER;
    RET(si_vmm_free(p, n));
}
hipError_t hipMemCreate(hipMemGenericAllocationHandle_t* h, size_t n,
                        const hipMemAllocationProp* prop, unsigned long long flags) {
    if (!h || !prop || flags || prop->type != hipMemAllocationTypePinned)
        return hipErrorInvalidValue;
    ENTER;
    uint64_t out = 0;
    int r = si_vmm_create(&out, n, (int)prop->location.type, prop->location.id);
    *h = (hipMemGenericAllocationHandle_t)(uintptr_t)out;
    RET(r);
}
hipError_t hipMemRelease(hipMemGenericAllocationHandle_t h) {
    ENTER;
    RET(si_vmm_release((uint64_t)(uintptr_t)h));
}
hipError_t hipMemRetainAllocationHandle(hipMemGenericAllocationHandle_t* h, void* addr) {
    ENTER;
    uint64_t out = 0;
    int r = si_vmm_retain(&out, addr);
    if (h && r == 0) *h = (hipMemGenericAllocationHandle_t)(uintptr_t)out;
    RET(r);
}
hipError_t hipMemMap(void* p, size_t n, size_t offset, hipMemGenericAllocationHandle_t h,
                     unsigned long long flags) {
    if (flags) return hipErrorInvalidValue;
    ENTER;
    RET(si_vmm_map(p, n, offset, (uint64_t)(uintptr_t)h));
}
hipError_t hipMemUnmap(void* p, size_t n) {
    ENTER;
    si_device_sync(); /* unmapping waits for the work that may use the range */
    RET(si_vmm_unmap(p, n));
}
hipError_t hipMemSetAccess(void* p, size_t n, const hipMemAccessDesc* desc, size_t count) {
    _Static_assert(sizeof(hipMemAccessDesc) == 12, "hipMemAccessDesc is three 4-byte words");
    ENTER;
    RET(si_vmm_set_access(p, n, (const int32_t*)desc, count));
}
