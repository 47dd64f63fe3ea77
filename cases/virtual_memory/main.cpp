// virtual_memory: an allocator that grows in place, the way PyTorch's expandable segments
// and NCCL use the driver's virtual memory management. A range of addresses is reserved;
// physical memory is created in granules and mapped into it piece by piece; access is
// set; copies and kernels then use addresses that span two mappings as one buffer. A
// handle is retained from an address and released; one physical allocation is mapped at
// a second address too (an alias: what a kernel wrote through one is read through the
// other); mappings are removed and the memory released. The second range is left
// mapped at exit, as a program may: replay must unmap and free it itself. Every result
// is copied back and checked here.
#define HRR_DRIVER_API
#include "../common/hrr_gpu.h"

#include <cstdint>
#include <cstring>
#include <vector>

#if defined(__HIPCC__) || defined(__HIP_PLATFORM_AMD__)
typedef void* va_t;
typedef hipMemGenericAllocationHandle_t phys_t;
static va_t at(va_t p, size_t off) { return (char*)p + off; }
static void* ptr(va_t p) { return p; }
static size_t granularity() {
    hipMemAllocationProp prop{};
    prop.type = hipMemAllocationTypePinned;
    prop.location.type = hipMemLocationTypeDevice;
    prop.location.id = 0;
    size_t g = 0;
    CHECK(hipMemGetAllocationGranularity(&g, &prop, hipMemAllocationGranularityMinimum));
    return g;
}
static va_t reserve(size_t n) {
    void* p = nullptr;
    CHECK(hipMemAddressReserve(&p, n, 0, nullptr, 0));
    return p;
}
static phys_t create(size_t n) {
    hipMemAllocationProp prop{};
    prop.type = hipMemAllocationTypePinned;
    prop.location.type = hipMemLocationTypeDevice;
    prop.location.id = 0;
    phys_t h;
    CHECK(hipMemCreate(&h, n, &prop, 0));
    return h;
}
static void map(va_t p, size_t n, size_t off, phys_t h) { CHECK(hipMemMap(p, n, off, h, 0)); }
static void allow(va_t p, size_t n) {
    hipMemAccessDesc d{};
    d.location.type = hipMemLocationTypeDevice;
    d.location.id = 0;
    d.flags = hipMemAccessFlagsProtReadWrite;
    CHECK(hipMemSetAccess(p, n, &d, 1));
}
static phys_t retain(va_t p) {
    phys_t h;
    CHECK(hipMemRetainAllocationHandle(&h, p));
    return h;
}
static void unmap(va_t p, size_t n) { CHECK(hipMemUnmap(p, n)); }
static void release(phys_t h) { CHECK(hipMemRelease(h)); }
static void unreserve(va_t p, size_t n) { CHECK(hipMemAddressFree(p, n)); }
#else
typedef CUdeviceptr va_t;
typedef CUmemGenericAllocationHandle phys_t;
static va_t at(va_t p, size_t off) { return p + off; }
static void* ptr(va_t p) { return (void*)(uintptr_t)p; }
static CUmemAllocationProp device_prop() {
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    return prop;
}
static size_t granularity() {
    CUmemAllocationProp prop = device_prop();
    size_t g = 0;
    CHECK_DRV(DRV(cuMemGetAllocationGranularity)(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    return g;
}
static va_t reserve(size_t n) {
    CUdeviceptr p = 0;
    CHECK_DRV(DRV(cuMemAddressReserve)(&p, n, 0, 0, 0));
    return p;
}
static phys_t create(size_t n) {
    CUmemAllocationProp prop = device_prop();
    phys_t h;
    CHECK_DRV(DRV(cuMemCreate)(&h, n, &prop, 0));
    return h;
}
static void map(va_t p, size_t n, size_t off, phys_t h) { CHECK_DRV(DRV(cuMemMap)(p, n, off, h, 0)); }
static void allow(va_t p, size_t n) {
    CUmemAccessDesc d{};
    d.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    d.location.id = 0;
    d.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CHECK_DRV(DRV(cuMemSetAccess)(p, n, &d, 1));
}
static phys_t retain(va_t p) {
    phys_t h;
    CHECK_DRV(DRV(cuMemRetainAllocationHandle)(&h, ptr(p)));
    return h;
}
static void unmap(va_t p, size_t n) { CHECK_DRV(DRV(cuMemUnmap)(p, n)); }
static void release(phys_t h) { CHECK_DRV(DRV(cuMemRelease)(h)); }
static void unreserve(va_t p, size_t n) { CHECK_DRV(DRV(cuMemAddressFree)(p, n)); }
#endif

__global__ void scale_add(const int* a, const int* b, int* c, int n, int k) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] * k + b[n - 1 - i];
}

int main() {
    CHECK(hipFree(nullptr));  // the runtime's context, which the driver calls then share
    const size_t g = granularity();
    if (g == 0 || g > (64u << 20)) {
        std::fprintf(stderr, "virtual_memory: granularity %zu\n", g);
        return 1;
    }
    // A range of four granules, filled by two physical allocations of two granules each.
    const size_t range = 4 * g, half = 2 * g;
    va_t base = reserve(range);
    phys_t lo = create(half), hi = create(half);
    map(base, half, 0, lo);
    allow(base, half);
    map(at(base, half), half, 0, hi);
    allow(at(base, half), half);

    // Three buffers of n ints; b and c straddle the boundary between the two mappings.
    const int n = (int)(g / sizeof(int));
    const size_t bytes = (size_t)n * sizeof(int);
    int* a = (int*)ptr(base);
    int* b = (int*)ptr(at(base, half - bytes / 2));
    int* c = (int*)ptr(at(base, half + bytes / 2 + 4096));
    std::vector<int> ha(n), hb(n), got(n), want(n);
    for (int i = 0; i < n; ++i) {
        ha[i] = (i * 7) % 1013 - 300;
        hb[i] = (i % 89) * 3 - 100;
    }
    CHECK(hipMemcpy(a, ha.data(), bytes, hipMemcpyHostToDevice));
    CHECK(hipMemcpy(b, hb.data(), bytes, hipMemcpyHostToDevice));
    CHECK(hipMemset(c, 0, bytes));
    scale_add<<<(n + 255) / 256, 256>>>(a, b, c, n, 3);
    CHECK(hipMemcpy(got.data(), c, bytes, hipMemcpyDeviceToHost));
    for (int i = 0; i < n; ++i) want[i] = ha[i] * 3 + hb[n - 1 - i];
    expect_equal("kernel across two mappings", got.data(), want.data(), n);
    CHECK(hipMemcpy(got.data(), b, bytes, hipMemcpyDeviceToHost));
    expect_copied("copy across two mappings", got.data(), hb.data(), n);

    // The handle behind an address, retained and released again (the program's own
    // reference stays).
    phys_t again = retain(at(base, half + 64));
    release(again);

    // `hi` mapped a second time, in a range of its own: an alias of the same memory.
    va_t alias = reserve(half);
    map(alias, half, 0, hi);
    allow(alias, half);
    int* c_alias = (int*)ptr(at(alias, bytes / 2 + 4096));
    CHECK(hipMemcpy(got.data(), c_alias, bytes, hipMemcpyDeviceToHost));
    expect_equal("the kernel's result read through the alias", got.data(), want.data(), n);
    // A write through the alias is seen through the first mapping.
    CHECK(hipMemcpy(c_alias, ha.data(), bytes, hipMemcpyHostToDevice));
    CHECK(hipMemcpy(got.data(), c, bytes, hipMemcpyDeviceToHost));
    expect_copied("a write through the alias", got.data(), ha.data(), n);

    // The first range taken apart; the physical memory stays while the alias maps it.
    CHECK(hipDeviceSynchronize());
    unmap(base, half);
    unmap(at(base, half), half);
    release(lo);
    release(hi);
    unreserve(base, range);
    CHECK(hipMemcpy(got.data(), c_alias, bytes, hipMemcpyDeviceToHost));
    expect_copied("the alias after the first range is gone", got.data(), ha.data(), n);
    // `alias` stays mapped at exit.
    std::printf("virtual_memory: %d ints over granularity %zu: ok\n", n, g);
    return 0;
}
