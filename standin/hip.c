/* The stand-in HIP runtime (soname libamdhip64.so.5, what Debian's hipcc links): the hip*
 * API of HIP 5.2, declared by the real headers (a signature that differs from them does
 * not compile), over the host-memory device of core.c. Registration and module loads
 * parse the real code objects (amdgpu.c) for the device's target ($HRR_STAND_IN_ARCH,
 * default gfx90a): a fat binary without a code object for it, or a registered kernel or
 * variable the code object does not define, stops the program as a broken binary would
 * on a GPU. Launches are checked and counted; no kernel runs. */
#define _GNU_SOURCE
#include <hip/hip_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codeobject.h"
#include "array.h"
#include "core.h"
#include "hip_internal.h"

_Static_assert((int)hipErrorInvalidValue == (int)SI_INVALID_VALUE && (int)hipErrorOutOfMemory == (int)SI_NO_MEMORY &&
                   (int)hipErrorInvalidConfiguration == (int)SI_INVALID_CONFIG &&
                   (int)hipErrorInvalidSymbol == (int)SI_INVALID_SYMBOL &&
                   (int)hipErrorInvalidDevicePointer == (int)SI_INVALID_DEVPTR &&
                   (int)hipErrorInvalidMemcpyDirection == (int)SI_INVALID_DIRECTION &&
                   (int)hipErrorInvalidDeviceFunction == (int)SI_INVALID_DEVICE_FUNCTION &&
                   (int)hipErrorInvalidDevice == (int)SI_INVALID_DEVICE && (int)hipErrorInvalidImage == (int)SI_INVALID_IMAGE &&
                   (int)hipErrorNoBinaryForGpu == (int)SI_NO_BINARY && (int)hipErrorInvalidHandle == (int)SI_INVALID_HANDLE &&
                   (int)hipErrorNotFound == (int)SI_NOT_FOUND && (int)hipErrorNotReady == (int)SI_NOT_READY &&
                   (int)hipErrorHostMemoryAlreadyRegistered == (int)SI_ALREADY_REGISTERED &&
                   (int)hipErrorHostMemoryNotRegistered == (int)SI_NOT_REGISTERED &&
                   (int)hipErrorNotSupported == (int)SI_NOT_SUPPORTED,
               "HIP's error numbers are the core's");

__thread hipError_t si_hip_last_error;
static __thread int current_device;

const char* si_hip_arch(void) {
    static const char* a;
    if (!a) {
        const char* e = getenv("HRR_STAND_IN_ARCH");
        a = e && *e ? e : "gfx90a";
        si_report_at_exit("hip", a);
    }
    return a;
}
#define arch si_hip_arch

/* The HIP version this stand-in plays: $HRR_STAND_IN_HIP_VERSION ("MAJOR.MINOR", 5.0 or
 * later), else the headers'. */
int si_hip_version(void) {
    static int v;
    if (!v) {
        const char* e = getenv("HRR_STAND_IN_HIP_VERSION");
        int major = 0, minor = 0;
        if (e && sscanf(e, "%d.%d", &major, &minor) == 2 && major >= 5 && minor >= 0 && minor < 100)
            v = major * 10000000 + minor * 100000;
        else
            v = HIP_VERSION;
    }
    return v;
}

void si_hip_broken(const char* what, const char* detail) {
    fprintf(stderr, "hrr stand-in HIP runtime (%s): %s: %s\n", arch(), what, detail);
    abort();
}

/* ---- device ---- */

hipError_t hipGetDeviceCount(int* n) {
    ENTER;
    if (!n) RET(hipErrorInvalidValue);
    *n = 1;
    RET(hipSuccess);
}
hipError_t hipSetDevice(int d) {
    ENTER;
    if (d != 0) RET(hipErrorInvalidDevice);
    current_device = d;
    RET(hipSuccess);
}
hipError_t hipGetDevice(int* d) {
    ENTER;
    if (!d) RET(hipErrorInvalidValue);
    *d = current_device;
    RET(hipSuccess);
}
hipError_t hipDeviceSynchronize(void) {
    ENTER;
    RET(si_device_sync_checked());
}
/* Profiler markers: no profiler here, so they only succeed. */
hipError_t hipProfilerStart(void) {
    ENTER;
    RET(hipSuccess);
}
hipError_t hipProfilerStop(void) {
    ENTER;
    RET(hipSuccess);
}
/* Scheduling (one of 0, 1, 2, 4), map-host and local-memory-resize flags: kept, read back. */
static unsigned device_flags, cache_config;
static size_t limits[3] = {0, 1 << 20, 8 << 20}; /* printf FIFO, malloc heap */
hipError_t hipSetDeviceFlags(unsigned f) {
    ENTER;
    unsigned sched = f & hipDeviceScheduleMask;
    if ((f & ~(hipDeviceScheduleMask | hipDeviceMapHost | hipDeviceLmemResizeToMax)) || (sched & (sched - 1)))
        RET(hipErrorInvalidValue);
    device_flags = f;
    RET(hipSuccess);
}
hipError_t hipGetDeviceFlags(unsigned* f) {
    ENTER;
    if (!f) RET(hipErrorInvalidValue);
    *f = device_flags;
    RET(hipSuccess);
}
hipError_t hipDeviceSetCacheConfig(hipFuncCache_t c) {
    ENTER;
    if ((unsigned)c > hipFuncCachePreferEqual) RET(hipErrorInvalidValue);
    cache_config = (unsigned)c;
    RET(hipSuccess);
}
hipError_t hipDeviceGetCacheConfig(hipFuncCache_t* c) {
    ENTER;
    if (!c) RET(hipErrorInvalidValue);
    *c = (hipFuncCache_t)cache_config;
    RET(hipSuccess);
}
hipError_t hipDeviceGetLimit(size_t* v, enum hipLimit_t l) {
    ENTER;
    if (!v || (l != hipLimitPrintfFifoSize && l != hipLimitMallocHeapSize)) RET(hipErrorUnsupportedLimit);
    *v = limits[l];
    RET(hipSuccess);
}
hipError_t hipDeviceReset(void) {
    ENTER;
    si_reset_device();
    RET(hipSuccess);
}
hipError_t hipRuntimeGetVersion(int* v) {
    ENTER;
    if (!v) RET(hipErrorInvalidValue);
    *v = si_hip_version();
    RET(hipSuccess);
}
hipError_t hipDriverGetVersion(int* v) {
    ENTER;
    if (!v) RET(hipErrorInvalidValue);
    *v = si_hip_version();
    RET(hipSuccess);
}
static int gfx9(void) { return !strncmp(arch(), "gfx9", 4); }
hipError_t hipGetDeviceProperties(hipDeviceProp_t* p, int d) {
    ENTER;
    if (!p) RET(hipErrorInvalidValue);
    if (d != 0) RET(hipErrorInvalidDevice);
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "HRR stand-in (%s, no GPU)", arch());
    snprintf(p->gcnArchName, sizeof p->gcnArchName, "%s", arch());
    p->totalGlobalMem = si_device_memory();
    p->sharedMemPerBlock = 64 << 10;
    p->regsPerBlock = 65536;
    p->warpSize = gfx9() ? 64 : 32;
    p->maxThreadsPerBlock = 1024;
    p->maxThreadsDim[0] = p->maxThreadsDim[1] = p->maxThreadsDim[2] = 1024;
    p->maxGridSize[0] = 0x7fffffff;
    p->maxGridSize[1] = p->maxGridSize[2] = 65535;
    p->clockRate = 1000000;
    p->totalConstMem = 64 << 10;
    p->major = gfx9() ? 9 : atoi(arch() + 3) / 100;
    p->minor = 0;
    p->multiProcessorCount = 1;
    p->maxSharedMemoryPerMultiProcessor = 64 << 10;
    p->maxThreadsPerMultiProcessor = 2048;
    p->cooperativeLaunch = 1;
    p->isMultiGpuBoard = 0;
    p->canMapHostMemory = 1;
    p->gcnArch = atoi(arch() + 3);
    RET(hipSuccess);
}
hipError_t hipDeviceGetAttribute(int* v, hipDeviceAttribute_t a, int d) {
    ENTER;
    if (!v) RET(hipErrorInvalidValue);
    if (d != 0) RET(hipErrorInvalidDevice);
    switch (a) {
    case hipDeviceAttributeMaxThreadsPerBlock: *v = 1024; break;
    case hipDeviceAttributeWarpSize: *v = gfx9() ? 64 : 32; break;
    case hipDeviceAttributeMultiprocessorCount: *v = 1; break;
    case hipDeviceAttributeComputeCapabilityMajor: *v = gfx9() ? 9 : atoi(arch() + 3) / 100; break;
    case hipDeviceAttributeComputeCapabilityMinor: *v = 0; break;
    case hipDeviceAttributeMaxSharedMemoryPerBlock: *v = 64 << 10; break;
    case hipDeviceAttributeUnifiedAddressing: *v = 1; break;
    case hipDeviceAttributeCanMapHostMemory: *v = 1; break;
    default: RET(hipErrorInvalidValue); /* an attribute this stand-in does not model */
    }
    RET(hipSuccess);
}
hipError_t hipDeviceGetName(char* name, int len, int d) {
    ENTER;
    if (!name || len <= 0) RET(hipErrorInvalidValue);
    if (d != 0) RET(hipErrorInvalidDevice);
    snprintf(name, (size_t)len, "HRR stand-in (%s, no GPU)", arch());
    RET(hipSuccess);
}
hipError_t hipGetLastError(void) {
    hipError_t e = si_hip_last_error;
    si_hip_last_error = hipSuccess;
    return e;
}
hipError_t hipPeekAtLastError(void) { return si_hip_last_error; }

static const struct { int code; const char *name, *text; } errors[] = {
    {0, "hipSuccess", "no error"},
    {1, "hipErrorInvalidValue", "invalid argument"},
    {2, "hipErrorOutOfMemory", "out of memory"},
    {9, "hipErrorInvalidConfiguration", "invalid configuration argument"},
    {13, "hipErrorInvalidSymbol", "invalid device symbol"},
    {17, "hipErrorInvalidDevicePointer", "invalid device pointer"},
    {21, "hipErrorInvalidMemcpyDirection", "invalid copy direction for memcpy"},
    {98, "hipErrorInvalidDeviceFunction", "invalid device function"},
    {101, "hipErrorInvalidDevice", "invalid device ordinal"},
    {200, "hipErrorInvalidImage", "device kernel image is invalid"},
    {209, "hipErrorNoBinaryForGpu", "no kernel image is available for execution on the device"},
    {400, "hipErrorInvalidHandle", "invalid resource handle"},
    {500, "hipErrorNotFound", "named symbol not found"},
    {600, "hipErrorNotReady", "device not ready"},
    {712, "hipErrorHostMemoryAlreadyRegistered", "part or all of the requested memory range is already mapped"},
    {713, "hipErrorHostMemoryNotRegistered", "pointer does not correspond to a registered memory region"},
    {801, "hipErrorNotSupported", "operation not supported"},
};
const char* hipGetErrorName(hipError_t e) {
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
        if (errors[i].code == (int)e) return errors[i].name;
    return "hipErrorUnknown";
}
const char* hipGetErrorString(hipError_t e) {
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
        if (errors[i].code == (int)e) return errors[i].text;
    return "unknown error";
}

/* ---- memory ---- */

hipError_t hipMalloc(void** p, size_t n) { ENTER; RET(si_alloc(p, n, SI_DEVICE)); }
hipError_t hipFree(void* p) { ENTER; RET(si_free(p, SI_DEVICE)); }
hipError_t hipHostMalloc(void** p, size_t n, unsigned flags) {
    (void)flags;
    ENTER;
    RET(si_alloc(p, n, SI_PINNED));
}
hipError_t hipMallocHost(void** p, size_t n) { ENTER; RET(si_alloc(p, n, SI_PINNED)); }
hipError_t hipHostAlloc(void** p, size_t n, unsigned flags) { return hipHostMalloc(p, n, flags); }
hipError_t hipHostFree(void* p) { ENTER; RET(si_free(p, SI_PINNED)); }
hipError_t hipFreeHost(void* p) { return hipHostFree(p); }
hipError_t hipHostRegister(void* p, size_t n, unsigned flags) {
    (void)flags;
    ENTER;
    RET(si_register(p, n));
}
hipError_t hipHostUnregister(void* p) { ENTER; RET(si_unregister(p)); }
hipError_t hipHostGetDevicePointer(void** dp, void* hp, unsigned flags) {
    ENTER;
    enum si_mem k;
    if (!dp || flags) RET(hipErrorInvalidValue);
    if (!si_lookup(hp, &k, 0) || (k != SI_PINNED && k != SI_REGISTERED)) RET(hipErrorInvalidValue);
    *dp = hp; /* one address space, as with unified addressing */
    RET(hipSuccess);
}
/* Managed memory: device memory here is host memory, one address for both sides (freed
 * by hipFree); prefetch, advice and attachment move pages on a GPU, never bytes. */
hipError_t hipMallocManaged(void** p, size_t n, unsigned flags) {
    ENTER;
    if (flags != hipMemAttachGlobal && flags != hipMemAttachHost) RET(hipErrorInvalidValue);
    RET(si_alloc(p, n, SI_DEVICE));
}
static int managed_range(const void* p, size_t n) {
    size_t left;
    return si_lookup(p, 0, &left) && n <= left;
}
hipError_t hipMemPrefetchAsync(const void* p, size_t n, int device, hipStream_t s) {
    ENTER;
    (void)device;
    if (!managed_range(p, n) || !si_stream_of(s)) RET(hipErrorInvalidValue);
    RET(hipSuccess);
}
hipError_t hipMemAdvise(const void* p, size_t n, hipMemoryAdvise advice, int device) {
    ENTER;
    (void)advice;
    (void)device;
    if (!managed_range(p, n)) RET(hipErrorInvalidValue);
    RET(hipSuccess);
}
/* The stand-in imports no external memory: no handle is one. */
hipError_t hipDestroyExternalMemory(hipExternalMemory_t m) {
    ENTER;
    (void)m;
    RET(hipErrorInvalidHandle);
}
hipError_t hipStreamAttachMemAsync(hipStream_t s, void* p, size_t n, unsigned flags) {
    ENTER;
    (void)flags;
    if (!managed_range(p, n ? n : 1) || !si_stream_of(s)) RET(hipErrorInvalidValue);
    RET(hipSuccess);
}
hipError_t hipMallocPitch(void** p, size_t* pitch, size_t width, size_t height) {
    ENTER;
    if (!p || !pitch) RET(hipErrorInvalidValue);
    size_t pw = (width + 255) & ~(size_t)255;
    if (pw < width || (height && pw > SIZE_MAX / height)) RET(hipErrorOutOfMemory);
    int r = si_alloc(p, pw * height, SI_DEVICE);
    if (r == 0) *pitch = pw;
    RET(r);
}
hipError_t hipMemGetInfo(size_t* free_, size_t* total) {
    ENTER;
    if (!free_ || !total) RET(hipErrorInvalidValue);
    *total = si_device_memory();
    *free_ = si_device_memory() - si_device_bytes();
    RET(hipSuccess);
}

/* (h - 1) * pitch + w, or 0 when it overflows or a row is wider than its pitch. */
static int span2d(size_t pitch, size_t w, size_t h, size_t* out) {
    if (!w || !h) {
        *out = 0;
        return 1;
    }
    if (w > pitch || h - 1 > (SIZE_MAX - w) / pitch) return 0;
    *out = (h - 1) * pitch + w;
    return 1;
}

static int copy2d(void* d, size_t dp, const void* s, size_t sp, size_t w, size_t h, int kind,
                  si_stream* st, int sync) {
    size_t dn, sn;
    if (!st) return hipErrorInvalidHandle;
    if (!span2d(dp, w, h, &dn) || !span2d(sp, w, h, &sn)) return hipErrorInvalidValue;
    int r = si_check_copy(d, dn, s, sn, kind);
    if (r) return r;
    if (!w || !h) return hipSuccess;
    if (sync) si_legacy_sync();
    r = si_enqueue_copy2d(st, d, dp, s, sp, w, h);
    if (!r && sync) si_stream_sync(st);
    return r;
}

hipError_t hipMemcpy(void* d, const void* s, size_t n, hipMemcpyKind k) {
    ENTER;
    RET(copy2d(d, n, s, n, n, 1, (int)k, si_stream_of(0), 1));
}
hipError_t hipMemcpyAsync(void* d, const void* s, size_t n, hipMemcpyKind k, hipStream_t st) {
    ENTER;
    RET(copy2d(d, n, s, n, n, 1, (int)k, si_stream_of(st), 0));
}
hipError_t hipMemcpy2D(void* d, size_t dp, const void* s, size_t sp, size_t w, size_t h, hipMemcpyKind k) {
    ENTER;
    RET(copy2d(d, dp, s, sp, w, h, (int)k, si_stream_of(0), 1));
}
hipError_t hipMemcpy2DAsync(void* d, size_t dp, const void* s, size_t sp, size_t w, size_t h,
                            hipMemcpyKind k, hipStream_t st) {
    ENTER;
    RET(copy2d(d, dp, s, sp, w, h, (int)k, si_stream_of(st), 0));
}
hipError_t hipMemcpyHtoD(hipDeviceptr_t d, void* s, size_t n) { return hipMemcpy(d, s, n, hipMemcpyHostToDevice); }
hipError_t hipMemcpyDtoH(void* d, hipDeviceptr_t s, size_t n) { return hipMemcpy(d, s, n, hipMemcpyDeviceToHost); }
hipError_t hipMemcpyDtoD(hipDeviceptr_t d, hipDeviceptr_t s, size_t n) { return hipMemcpy(d, s, n, hipMemcpyDeviceToDevice); }

/* A 3D copy between pitched pointers, slice by slice; arrays are not modelled. */
static int copy3d(const hipMemcpy3DParms* p, si_stream* st, int sync) {
    if (!p) return hipErrorInvalidValue;
    if (!st) return hipErrorInvalidHandle;
    hipMemcpy3DParms q;
    int ra = si_array_sides(p, &q, sizeof q);
    if (ra) return ra;
    p = &q;
    size_t w = p->extent.width, h = p->extent.height, dep = p->extent.depth;
    if (!w || !h || !dep) return hipSuccess;
    const hipPitchedPtr *sp = &p->srcPtr, *dp = &p->dstPtr;
    if (!sp->ptr || !dp->ptr || !sp->pitch || !dp->pitch) return hipErrorInvalidValue;
    if (p->srcPos.x + w > sp->pitch || p->dstPos.x + w > dp->pitch) return hipErrorInvalidValue;
    if (sp->ysize < p->srcPos.y + h || dp->ysize < p->dstPos.y + h) return hipErrorInvalidValue;
    /* The bytes each side spans from its pointer: the last row's end. */
    size_t s_end = ((p->srcPos.z + dep - 1) * sp->ysize + p->srcPos.y + h - 1) * sp->pitch + p->srcPos.x + w;
    size_t d_end = ((p->dstPos.z + dep - 1) * dp->ysize + p->dstPos.y + h - 1) * dp->pitch + p->dstPos.x + w;
    int r = si_check_copy(dp->ptr, d_end, sp->ptr, s_end, (int)p->kind);
    if (r) return r;
    if (sync) si_legacy_sync();
    for (size_t z = 0; z < dep && !r; z++) {
        const char* s = (const char*)sp->ptr +
                        ((p->srcPos.z + z) * sp->ysize + p->srcPos.y) * sp->pitch + p->srcPos.x;
        char* d = (char*)dp->ptr + ((p->dstPos.z + z) * dp->ysize + p->dstPos.y) * dp->pitch + p->dstPos.x;
        r = si_enqueue_copy2d(st, d, dp->pitch, s, sp->pitch, w, h);
    }
    if (!r && sync) si_stream_sync(st);
    return r;
}
hipError_t hipMemcpy3D(const hipMemcpy3DParms* p) { ENTER; RET(copy3d(p, si_stream_of(0), 1)); }
hipError_t hipMemcpy3DAsync(const hipMemcpy3DParms* p, hipStream_t st) { ENTER; RET(copy3d(p, si_stream_of(st), 0)); }

static int memset2d(void* d, size_t pitch, int v, size_t w, size_t h, size_t elem, si_stream* st) {
    size_t n;
    enum si_mem k;
    if (!st) return hipErrorInvalidHandle;
    if (!span2d(pitch, w * elem, h, &n)) return hipErrorInvalidValue;
    size_t left;
    if (n && (!si_lookup(d, &k, &left) || n > left)) return hipErrorInvalidValue;
    if (!n) return hipSuccess;
    return si_enqueue_memset2d(st, d, pitch, v, w, h, elem);
}
hipError_t hipMemset(void* d, int v, size_t n) { ENTER; RET(memset2d(d, n, v, n, 1, 1, si_stream_of(0))); }
hipError_t hipMemsetAsync(void* d, int v, size_t n, hipStream_t s) { ENTER; RET(memset2d(d, n, v, n, 1, 1, si_stream_of(s))); }
hipError_t hipMemset2D(void* d, size_t pitch, int v, size_t w, size_t h) {
    ENTER;
    RET(memset2d(d, pitch, v, w, h, 1, si_stream_of(0)));
}
hipError_t hipMemset2DAsync(void* d, size_t pitch, int v, size_t w, size_t h, hipStream_t s) {
    ENTER;
    RET(memset2d(d, pitch, v, w, h, 1, si_stream_of(s)));
}
hipError_t hipMemsetD32(hipDeviceptr_t d, int v, size_t n) { ENTER; RET(memset2d(d, n * 4, v, n, 1, 4, si_stream_of(0))); }
hipError_t hipMemsetD8(hipDeviceptr_t d, unsigned char v, size_t n) { ENTER; RET(memset2d(d, n, v, n, 1, 1, si_stream_of(0))); }

/* ---- streams and events ---- */

hipError_t hipStreamCreate(hipStream_t* s) { ENTER; RET(si_stream_create((si_stream**)s, 0)); }
hipError_t hipStreamCreateWithFlags(hipStream_t* s, unsigned f) {
    ENTER;
    if (f & ~1u) RET(hipErrorInvalidValue);
    RET(si_stream_create((si_stream**)s, f));
}
hipError_t hipStreamCreateWithPriority(hipStream_t* s, unsigned f, int prio) {
    (void)prio;
    return hipStreamCreateWithFlags(s, f);
}
hipError_t hipStreamDestroy(hipStream_t s) {
    ENTER;
    si_stream* t = si_stream_of(s);
    RET(s && t ? si_stream_destroy(t) : hipErrorInvalidHandle);
}
hipError_t hipStreamSynchronize(hipStream_t s) { ENTER; RET(si_stream_sync(si_stream_of(s))); }
hipError_t hipStreamQuery(hipStream_t s) { ENTER; RET(si_stream_query(si_stream_of(s))); }
hipError_t hipStreamWaitEvent(hipStream_t s, hipEvent_t e, unsigned f) {
    ENTER;
    if (f) RET(hipErrorInvalidValue);
    RET(si_stream_wait_event(si_stream_of(s), si_event_of(e)));
}
hipError_t hipStreamAddCallback(hipStream_t s, hipStreamCallback_t cb, void* data, unsigned f) {
    ENTER;
    if (f) RET(hipErrorInvalidValue);
    RET(si_enqueue_stream_callback(si_stream_of(s), (void (*)(void*, int, void*))cb, s, data));
}
hipError_t hipLaunchHostFunc(hipStream_t s, hipHostFn_t fn, void* data) {
    ENTER;
    RET(si_enqueue_host_fn(si_stream_of(s), fn, data));
}
hipError_t hipEventCreate(hipEvent_t* e) { ENTER; RET(si_event_create((si_event**)e, 1)); }
hipError_t hipEventCreateWithFlags(hipEvent_t* e, unsigned f) {
    ENTER;
    RET(si_event_create((si_event**)e, !(f & hipEventDisableTiming)));
}
hipError_t hipEventDestroy(hipEvent_t e) { ENTER; RET(si_event_destroy(si_event_of(e))); }
hipError_t hipEventRecord(hipEvent_t e, hipStream_t s) { ENTER; RET(si_event_record(si_event_of(e), si_stream_of(s))); }
hipError_t hipEventSynchronize(hipEvent_t e) {
    ENTER;
    int c = si_hip_event_capture_check(si_event_of(e));
    RET(c ? c : si_event_sync(si_event_of(e)));
}
hipError_t hipEventQuery(hipEvent_t e) {
    ENTER;
    int c = si_hip_event_capture_check(si_event_of(e));
    RET(c ? c : si_event_query(si_event_of(e)));
}
hipError_t hipEventElapsedTime(float* ms, hipEvent_t a, hipEvent_t b) {
    ENTER;
    RET(si_event_elapsed(ms, si_event_of(a), si_event_of(b)));
}

