/* The stand-in HIP runtime's ROCm 6/7 names (what programs built against current headers
 * call): hipGetDevicePropertiesR0600 with the R0600 struct (1472 bytes; field offsets from
 * the layout rocm-bindings-hip declares), the per-thread default stream forms (*_spt: a
 * null stream is hipStreamPerThread), and the entry-point lookups hipGetProcAddress and
 * hipGetDriverEntryPoint, which resolve names in this library only (as the real runtime
 * hands out its own functions, never an LD_PRELOAD shim's).
 *
 * The version it reports: $HRR_STAND_IN_HIP_VERSION ("7.1", "6.4"; the harness sets each
 * AMD family's minimum ROCm), default the HIP 5.2 headers' HIP_VERSION. A runtime reporting
 * 5.x has none of these names: a program calling one then is a broken binary (stops). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <hip/hip_runtime_api.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hip_internal.h"

/* A ROCm 6+ name called while the stand-in plays a HIP 5 runtime. */
static void need_rocm6(const char* name) {
    if (si_hip_version() < 60000000)
        si_hip_broken(name, "HIP 5 exports no such function ($HRR_STAND_IN_HIP_VERSION is below 6.0)");
}

/* hipDeviceProp_tR0600: its size and the offsets of the fields filled here. */
enum {
    R0600_SIZE = 1472,
    R0600_NAME = 0,
    R0600_TOTAL_GLOBAL_MEM = 288,
    R0600_SHARED_PER_BLOCK = 296,
    R0600_REGS_PER_BLOCK = 304,
    R0600_WARP_SIZE = 308,
    R0600_MAX_THREADS_PER_BLOCK = 320,
    R0600_CLOCK_RATE = 348,
    R0600_TOTAL_CONST_MEM = 352,
    R0600_MAJOR = 360,
    R0600_MINOR = 364,
    R0600_MULTIPROCESSORS = 388,
    R0600_CAN_MAP_HOST = 400,
    R0600_MAX_THREADS_PER_MP = 624,
    R0600_COOPERATIVE = 688,
    R0600_GCN_ARCH_NAME = 1160,
    R0600_SHARED_PER_MP = 1416,
};

#define PUT(off, field) memcpy(out + (off), &old.field, sizeof old.field)
hipError_t hipGetDevicePropertiesR0600(void* p, int d) {
    need_rocm6("hipGetDevicePropertiesR0600");
    hipDeviceProp_t old;
    hipError_t r = hipGetDeviceProperties(&old, d);
    if (r != hipSuccess || !p) return r;
    unsigned char* out = p;
    memset(out, 0, R0600_SIZE);
    PUT(R0600_NAME, name);
    PUT(R0600_TOTAL_GLOBAL_MEM, totalGlobalMem);
    PUT(R0600_SHARED_PER_BLOCK, sharedMemPerBlock);
    PUT(R0600_REGS_PER_BLOCK, regsPerBlock);
    PUT(R0600_WARP_SIZE, warpSize);
    PUT(R0600_MAX_THREADS_PER_BLOCK, maxThreadsPerBlock);
    PUT(R0600_CLOCK_RATE, clockRate);
    PUT(R0600_TOTAL_CONST_MEM, totalConstMem);
    PUT(R0600_MAJOR, major);
    PUT(R0600_MINOR, minor);
    PUT(R0600_MULTIPROCESSORS, multiProcessorCount);
    PUT(R0600_CAN_MAP_HOST, canMapHostMemory);
    PUT(R0600_MAX_THREADS_PER_MP, maxThreadsPerMultiProcessor);
    PUT(R0600_COOPERATIVE, cooperativeLaunch);
    PUT(R0600_GCN_ARCH_NAME, gcnArchName);
    PUT(R0600_SHARED_PER_MP, maxSharedMemoryPerMultiProcessor);
    return hipSuccess;
}
#undef PUT

hipError_t hipChooseDeviceR0600(int* device, const void* prop) {
    need_rocm6("hipChooseDeviceR0600");
    if (!device || !prop) return hipErrorInvalidValue;
    *device = 0;
    return hipSuccess;
}

/* ---- per-thread default stream forms ---- */

#define PT(s) ((s) ? (s) : hipStreamPerThread)
hipError_t hipMemcpy_spt(void* d, const void* s, size_t n, hipMemcpyKind k) {
    hipError_t r = hipMemcpyAsync(d, s, n, k, hipStreamPerThread);
    return r ? r : hipStreamSynchronize(hipStreamPerThread);
}
hipError_t hipMemcpyAsync_spt(void* d, const void* s, size_t n, hipMemcpyKind k, hipStream_t st) {
    return hipMemcpyAsync(d, s, n, k, PT(st));
}
hipError_t hipMemset_spt(void* d, int v, size_t n) {
    hipError_t r = hipMemsetAsync(d, v, n, hipStreamPerThread);
    return r ? r : hipStreamSynchronize(hipStreamPerThread);
}
hipError_t hipMemsetAsync_spt(void* d, int v, size_t n, hipStream_t st) { return hipMemsetAsync(d, v, n, PT(st)); }
hipError_t hipMemcpy2D_spt(void* d, size_t dp, const void* s, size_t sp, size_t w, size_t h, hipMemcpyKind k) {
    hipError_t r = hipMemcpy2DAsync(d, dp, s, sp, w, h, k, hipStreamPerThread);
    return r ? r : hipStreamSynchronize(hipStreamPerThread);
}
hipError_t hipMemcpy2DAsync_spt(void* d, size_t dp, const void* s, size_t sp, size_t w, size_t h, hipMemcpyKind k,
                                hipStream_t st) {
    return hipMemcpy2DAsync(d, dp, s, sp, w, h, k, PT(st));
}
hipError_t hipMemset2D_spt(void* d, size_t p, int v, size_t w, size_t h) {
    hipError_t r = hipMemset2DAsync(d, p, v, w, h, hipStreamPerThread);
    return r ? r : hipStreamSynchronize(hipStreamPerThread);
}
hipError_t hipMemset2DAsync_spt(void* d, size_t p, int v, size_t w, size_t h, hipStream_t st) {
    return hipMemset2DAsync(d, p, v, w, h, PT(st));
}
hipError_t hipMemcpy3D_spt(const struct hipMemcpy3DParms* p) {
    hipError_t r = hipMemcpy3DAsync(p, hipStreamPerThread);
    return r ? r : hipStreamSynchronize(hipStreamPerThread);
}
hipError_t hipMemcpy3DAsync_spt(const struct hipMemcpy3DParms* p, hipStream_t st) { return hipMemcpy3DAsync(p, PT(st)); }
hipError_t hipStreamSynchronize_spt(hipStream_t s) { return hipStreamSynchronize(PT(s)); }
hipError_t hipStreamQuery_spt(hipStream_t s) { return hipStreamQuery(PT(s)); }
hipError_t hipStreamWaitEvent_spt(hipStream_t s, hipEvent_t e, unsigned f) { return hipStreamWaitEvent(PT(s), e, f); }
hipError_t hipEventRecord_spt(hipEvent_t e, hipStream_t s) { return hipEventRecord(e, PT(s)); }
hipError_t hipStreamBeginCapture_spt(hipStream_t s, hipStreamCaptureMode m) { return hipStreamBeginCapture(PT(s), m); }
hipError_t hipStreamEndCapture_spt(hipStream_t s, hipGraph_t* g) { return hipStreamEndCapture(PT(s), g); }
hipError_t hipStreamIsCapturing_spt(hipStream_t s, hipStreamCaptureStatus* st) { return hipStreamIsCapturing(PT(s), st); }
hipError_t hipLaunchKernel_spt(const void* f, dim3 grid, dim3 block, void** args, size_t shmem, hipStream_t s) {
    return hipLaunchKernel(f, grid, block, args, shmem, PT(s));
}
#undef PT

/* ---- entry-point lookups ---- */

enum { LOOKUP_SUCCESS = 0, LOOKUP_NOT_FOUND = 1 };

/* `name` resolved in this library alone (never an interposer's definition). */
static void* own_symbol(const char* name) {
    static void* self;
    if (!self) {
        Dl_info info;
        if (!dladdr((void*)own_symbol, &info) || !info.dli_fname) return NULL;
        self = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
        if (!self) return NULL;
    }
    return dlsym(self, name);
}

/* The lookup both entry points share; `version` 100 * major + minor (-1: the current). */
static hipError_t lookup(const char* symbol, void** pfn, int version, int* status) {
    if (!symbol || !pfn) return hipErrorInvalidValue;
    char name[256];
    int renamed = version < 0 || version >= 600;
    if (renamed && (!strcmp(symbol, "hipGetDeviceProperties") || !strcmp(symbol, "hipChooseDevice")))
        snprintf(name, sizeof name, "%sR0600", symbol);
    else
        snprintf(name, sizeof name, "%s", symbol);
    *pfn = strncmp(name, "hip", 3) ? NULL : own_symbol(name);
    if (status) *status = *pfn ? LOOKUP_SUCCESS : LOOKUP_NOT_FOUND;
    return *pfn ? hipSuccess : hipErrorNotFound;
}

hipError_t hipGetProcAddress(const char* symbol, void** pfn, int version, uint64_t flags, int* status) {
    need_rocm6("hipGetProcAddress");
    if (flags) return hipErrorInvalidValue;
    return lookup(symbol, pfn, version, status);
}
hipError_t hipGetProcAddress_spt(const char* symbol, void** pfn, int version, uint64_t flags, int* status) {
    return hipGetProcAddress(symbol, pfn, version, flags, status);
}
hipError_t hipGetDriverEntryPoint(const char* symbol, void** pfn, unsigned long long flags, int* status) {
    need_rocm6("hipGetDriverEntryPoint");
    (void)flags;
    return lookup(symbol, pfn, -1, status);
}
hipError_t hipGetDriverEntryPoint_spt(const char* symbol, void** pfn, unsigned long long flags, int* status) {
    return hipGetDriverEntryPoint(symbol, pfn, flags, status);
}
