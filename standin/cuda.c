/* The stand-in CUDA runtime and driver in one library (soname libcudart.so.13; the harness
 * links libcuda.so.1 to it, so replay's and capture's driver look-ups reach the same
 * process state): the cuda* API of CUDA 13 as its headers declare it, over the host-memory
 * device of core.c, and the driver entry points replay and capture use (modules, launches,
 * parameter layouts). Registration and module loads parse the real fat binaries, cubins
 * and PTX (cubin.c) for the device ($HRR_STAND_IN_ARCH, default sm_90); parameter layouts
 * come from the cubin's .nv.info, as the real driver's do. No GPU code runs: a launch of a
 * kernel kernels.c knows by name runs there on the host, any other does nothing. This
 * file: the device, memory, streams and events; cuda_code.c: code, launches, variables. */
#define _GNU_SOURCE
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codeobject.h"
#include "array.h"
#include "core.h"
#include "cuda_internal.h"

_Static_assert((int)cudaErrorInvalidValue == SI_INVALID_VALUE && (int)cudaErrorMemoryAllocation == SI_NO_MEMORY &&
                   (int)cudaErrorInvalidConfiguration == SI_INVALID_CONFIG &&
                   (int)cudaErrorInvalidSymbol == SI_INVALID_SYMBOL &&
                   (int)cudaErrorInvalidMemcpyDirection == SI_INVALID_DIRECTION &&
                   (int)cudaErrorInvalidDeviceFunction == SI_INVALID_DEVICE_FUNCTION &&
                   (int)cudaErrorInvalidDevice == SI_INVALID_DEVICE &&
                   (int)cudaErrorInvalidKernelImage == SI_INVALID_IMAGE &&
                   (int)cudaErrorNoKernelImageForDevice == SI_NO_BINARY &&
                   (int)cudaErrorInvalidResourceHandle == SI_INVALID_HANDLE &&
                   (int)cudaErrorSymbolNotFound == SI_NOT_FOUND && (int)cudaErrorNotReady == SI_NOT_READY &&
                   (int)cudaErrorHostMemoryAlreadyRegistered == SI_ALREADY_REGISTERED &&
                   (int)cudaErrorHostMemoryNotRegistered == SI_NOT_REGISTERED &&
                   (int)cudaErrorNotSupported == SI_NOT_SUPPORTED,
               "CUDA's error numbers are the core's");

__thread cudaError_t si_cuda_last_error;

const char* si_cuda_arch(void) {
    static const char* a;
    if (!a) {
        const char* e = getenv("HRR_STAND_IN_ARCH");
        a = e && *e ? e : "sm_90";
        si_report_at_exit("cuda", a);
    }
    return a;
}
#define arch si_cuda_arch
static int cc_major(void) { return atoi(arch() + 3) / 10; }
static int cc_minor(void) { return atoi(arch() + 3) % 10; }

void si_cuda_broken(const char* what, const char* detail) {
    fprintf(stderr, "hrr stand-in CUDA runtime (%s): %s: %s\n", arch(), what, detail);
    abort();
}

/* ---- device ---- */

cudaError_t cudaGetDeviceCount(int* n) { ENTER; if (!n) RET(cudaErrorInvalidValue); *n = si_devices(); RET(cudaSuccess); }
cudaError_t cudaSetDevice(int d) {
    ENTER;
    if (d < 0 || d >= si_devices()) RET(cudaErrorInvalidDevice);
    si_device_now = d;
    RET(cudaSuccess);
}
cudaError_t cudaGetDevice(int* d) { ENTER; if (!d) RET(cudaErrorInvalidValue); *d = si_device_now; RET(cudaSuccess); }
cudaError_t cudaDeviceSynchronize(void) { ENTER; RET(si_device_sync_checked()); }
/* Profiler markers (declared in cuda_profiler_api.h, which the runtime wheel lacks): no
 * profiler here, so they only succeed, as the runtime's do without one. */
cudaError_t cudaProfilerStart(void);
cudaError_t cudaProfilerStop(void);
cudaError_t cudaProfilerStart(void) { ENTER; RET(cudaSuccess); }
cudaError_t cudaProfilerStop(void) { ENTER; RET(cudaSuccess); }
cudaError_t cudaDeviceReset(void) { ENTER; si_reset_device(); RET(cudaSuccess); }
cudaError_t cudaRuntimeGetVersion(int* v) { ENTER; if (!v) RET(cudaErrorInvalidValue); *v = CUDART_VERSION; RET(cudaSuccess); }
cudaError_t cudaDriverGetVersion(int* v) { ENTER; if (!v) RET(cudaErrorInvalidValue); *v = CUDA_VERSION; RET(cudaSuccess); }
CUresult cuDriverGetVersion(int* v) { if (!v) return CUDA_ERROR_INVALID_VALUE; *v = CUDA_VERSION; return CUDA_SUCCESS; }
CUresult cuInit(unsigned flags) { return flags ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS; }
cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp* p, int d) {
    ENTER;
    if (!p) RET(cudaErrorInvalidValue);
    if (d != 0) RET(cudaErrorInvalidDevice);
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "HRR stand-in (%s, no GPU)", arch());
    p->totalGlobalMem = si_device_memory();
    p->sharedMemPerBlock = 48 << 10;
    p->regsPerBlock = 65536;
    p->warpSize = 32;
    p->maxThreadsPerBlock = 1024;
    p->maxThreadsDim[0] = p->maxThreadsDim[1] = 1024;
    p->maxThreadsDim[2] = 64;
    p->maxGridSize[0] = 0x7fffffff;
    p->maxGridSize[1] = p->maxGridSize[2] = 65535;
    p->totalConstMem = 64 << 10;
    p->major = cc_major();
    p->minor = cc_minor();
    p->multiProcessorCount = 1;
    p->maxThreadsPerMultiProcessor = 2048;
    p->sharedMemPerBlockOptin = 227 << 10;
    p->cooperativeLaunch = 1;
    p->canMapHostMemory = 1;
    p->unifiedAddressing = 1;
    RET(cudaSuccess);
}
cudaError_t cudaDeviceGetAttribute(int* v, enum cudaDeviceAttr a, int d) {
    ENTER;
    if (!v) RET(cudaErrorInvalidValue);
    if (d != 0) RET(cudaErrorInvalidDevice);
    switch (a) {
    case cudaDevAttrComputeCapabilityMajor: *v = cc_major(); break;
    case cudaDevAttrComputeCapabilityMinor: *v = cc_minor(); break;
    case cudaDevAttrMaxThreadsPerBlock: *v = 1024; break;
    case cudaDevAttrWarpSize: *v = 32; break;
    case cudaDevAttrMultiProcessorCount: *v = 1; break;
    case cudaDevAttrUnifiedAddressing: *v = 1; break;
    case cudaDevAttrCanMapHostMemory: *v = 1; break;
    case cudaDevAttrCooperativeLaunch: *v = 1; break;
    case cudaDevAttrMaxThreadsPerMultiProcessor: *v = 2048; break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *v = 227 << 10; break;
    default: RET(cudaErrorInvalidValue); /* an attribute this stand-in does not model */
    }
    RET(cudaSuccess);
}
CUresult cuDeviceGetName(char* name, int len, CUdevice d) {
    if (!name || len <= 0) return CUDA_ERROR_INVALID_VALUE;
    if (d != 0) return CUDA_ERROR_INVALID_DEVICE;
    snprintf(name, (size_t)len, "HRR stand-in (%s, no GPU)", arch());
    return CUDA_SUCCESS;
}
cudaError_t cudaGetLastError(void) {
    cudaError_t e = si_cuda_last_error;
    si_cuda_last_error = cudaSuccess;
    return e;
}
cudaError_t cudaPeekAtLastError(void) { return si_cuda_last_error; }
static const struct { int code; const char *name, *text; } errors[] = {
    {0, "cudaSuccess", "no error"},
    {1, "cudaErrorInvalidValue", "invalid argument"},
    {2, "cudaErrorMemoryAllocation", "out of memory"},
    {9, "cudaErrorInvalidConfiguration", "invalid configuration argument"},
    {13, "cudaErrorInvalidSymbol", "invalid device symbol"},
    {21, "cudaErrorInvalidMemcpyDirection", "invalid copy direction for memcpy"},
    {98, "cudaErrorInvalidDeviceFunction", "invalid device function"},
    {101, "cudaErrorInvalidDevice", "invalid device ordinal"},
    {200, "cudaErrorInvalidKernelImage", "device kernel image is invalid"},
    {209, "cudaErrorNoKernelImageForDevice", "no kernel image is available for execution on the device"},
    {400, "cudaErrorInvalidResourceHandle", "invalid resource handle"},
    {500, "cudaErrorSymbolNotFound", "named symbol not found"},
    {600, "cudaErrorNotReady", "device not ready"},
    {712, "cudaErrorHostMemoryAlreadyRegistered", "part or all of the requested memory range is already mapped"},
    {713, "cudaErrorHostMemoryNotRegistered", "pointer does not correspond to a registered memory region"},
    {801, "cudaErrorNotSupported", "operation not supported"},
};
const char* cudaGetErrorName(cudaError_t e) {
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
        if (errors[i].code == (int)e) return errors[i].name;
    return "cudaErrorUnknown";
}
const char* cudaGetErrorString(cudaError_t e) {
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
        if (errors[i].code == (int)e) return errors[i].text;
    return "unknown error";
}

/* ---- memory ---- */

/* The driver's allocation, which the runtime's reaches through the exported symbol (as the
 * real runtime reaches the driver's), so an interposer sees both calls. */
CUresult cuMemAlloc(CUdeviceptr* d, size_t n) {
    if (!d || !n) return CUDA_ERROR_INVALID_VALUE;
    void* p = 0;
    si_lock();
    int r = si_sticky ? si_sticky : si_alloc(&p, n, SI_DEVICE);
    if (!r) *d = (CUdeviceptr)(uintptr_t)p;
    si_unlock();
    return (CUresult)r;
}
CUresult cuMemFree(CUdeviceptr d) {
    si_lock();
    int r = si_sticky ? si_sticky : si_free((void*)(uintptr_t)d, SI_DEVICE);
    si_unlock();
    return (CUresult)r;
}
cudaError_t cudaMalloc(void** p, size_t n) {
    CUdeviceptr d = 0;
    int r = !p ? cudaErrorInvalidValue : n ? (int)cuMemAlloc(&d, n) : cudaSuccess; /* outside the lock */
    ENTER;
    if (!r) *p = (void*)(uintptr_t)d;
    RET(r);
}
cudaError_t cudaFree(void* p) { ENTER; RET(si_free(p, SI_DEVICE)); }
cudaError_t cudaMallocHost(void** p, size_t n) { ENTER; RET(si_alloc(p, n, SI_PINNED)); }
cudaError_t cudaHostAlloc(void** p, size_t n, unsigned f) { (void)f; ENTER; RET(si_alloc(p, n, SI_PINNED)); }
cudaError_t cudaFreeHost(void* p) { ENTER; RET(si_free(p, SI_PINNED)); }
cudaError_t cudaHostRegister(void* p, size_t n, unsigned f) { (void)f; ENTER; RET(si_register(p, n)); }
cudaError_t cudaHostUnregister(void* p) { ENTER; RET(si_unregister(p)); }
cudaError_t cudaHostGetDevicePointer(void** dp, void* hp, unsigned flags) {
    ENTER;
    enum si_mem k;
    if (!dp || flags) RET(cudaErrorInvalidValue);
    if (!si_lookup(hp, &k, 0) || (k != SI_PINNED && k != SI_REGISTERED)) RET(cudaErrorInvalidValue);
    *dp = hp;
    RET(cudaSuccess);
}
/* Managed memory: device memory here is host memory, so one address serves both sides
 * (freed by cudaFree). Prefetch, advice and stream attachment change where pages live
 * on a GPU, never their bytes: checked (range inside one allocation, stream known) and
 * done. */
cudaError_t cudaMallocManaged(void** p, size_t n, unsigned flags) {
    ENTER;
    if (flags != cudaMemAttachGlobal && flags != cudaMemAttachHost) RET(cudaErrorInvalidValue);
    RET(si_alloc(p, n, SI_DEVICE));
}
static int managed_range(const void* p, size_t n) {
    size_t left;
    return si_lookup(p, 0, &left) && n <= left;
}
cudaError_t cudaMemPrefetchAsync(const void* p, size_t n, struct cudaMemLocation loc, unsigned flags,
                                 cudaStream_t s) {
    ENTER;
    (void)loc;
    if (flags || !managed_range(p, n) || !si_stream_of(s)) RET(cudaErrorInvalidValue);
    RET(cudaSuccess);
}
cudaError_t cudaMemAdvise(const void* p, size_t n, enum cudaMemoryAdvise advice, struct cudaMemLocation loc) {
    ENTER;
    (void)advice;
    (void)loc;
    if (!managed_range(p, n)) RET(cudaErrorInvalidValue);
    RET(cudaSuccess);
}
/* The stand-in imports no external memory: no handle is one. */
cudaError_t cudaDestroyExternalMemory(cudaExternalMemory_t m) {
    ENTER;
    (void)m;
    RET(cudaErrorInvalidResourceHandle);
}
cudaError_t cudaStreamAttachMemAsync(cudaStream_t s, void* p, size_t n, unsigned flags) {
    ENTER;
    (void)flags;
    if (!managed_range(p, n ? n : 1) || !si_stream_of(s)) RET(cudaErrorInvalidValue);
    RET(cudaSuccess);
}
cudaError_t cudaMallocPitch(void** p, size_t* pitch, size_t w, size_t h) {
    ENTER;
    if (!p || !pitch) RET(cudaErrorInvalidValue);
    size_t pw = (w + 511) & ~(size_t)511;
    if (pw < w || (h && pw > SIZE_MAX / h)) RET(cudaErrorMemoryAllocation);
    int r = si_alloc(p, pw * h, SI_DEVICE);
    if (!r) *pitch = pw;
    RET(r);
}

/* A pitched 3D allocation: MallocPitch's pitch, height x depth rows. */
cudaError_t cudaMalloc3D(struct cudaPitchedPtr* out, struct cudaExtent e) {
    ENTER;
    if (!out) RET(cudaErrorInvalidValue);
    size_t pw = (e.width + 511) & ~(size_t)511, rows = e.height * e.depth;
    if (pw < e.width || (e.height && rows / e.height != e.depth) || (rows && pw > SIZE_MAX / rows))
        RET(cudaErrorMemoryAllocation);
    void* p = 0;
    int r = si_alloc(&p, pw * rows, SI_DEVICE);
    if (!r) {
        out->ptr = p;
        out->pitch = pw;
        out->xsize = e.width;
        out->ysize = e.height;
    }
    RET(r);
}

static int span2d(size_t pitch, size_t w, size_t h, size_t* out) {
    if (!w || !h) { *out = 0; return 1; }
    if (w > pitch || h - 1 > (SIZE_MAX - w) / pitch) return 0;
    *out = (h - 1) * pitch + w;
    return 1;
}
static int copy2d(void* d, size_t dp, const void* s, size_t sp, size_t w, size_t h, int kind, si_stream* st, int sync) {
    size_t dn, sn;
    if (!st) return cudaErrorInvalidResourceHandle;
    if (!span2d(dp, w, h, &dn) || !span2d(sp, w, h, &sn)) return cudaErrorInvalidValue;
    int r = si_check_copy(d, dn, s, sn, kind);
    if (r || !w || !h) return r;
    if (sync) si_legacy_sync();
    r = si_enqueue_copy2d(st, d, dp, s, sp, w, h);
    if (!r && sync) si_stream_sync(st);
    return r;
}
/* One device, 0: a list naming another is refused, as the runtime refuses a device it does
 * not have. */
cudaError_t cudaSetValidDevices(int* devices, int n) {
    ENTER;
    if (n < 0 || (n > 0 && !devices)) RET(cudaErrorInvalidValue);
    for (int i = 0; i < n; i++)
        if (devices[i] != 0) RET(cudaErrorInvalidDevice);
    RET(cudaSuccess);
}
cudaError_t cudaMemcpy(void* d, const void* s, size_t n, enum cudaMemcpyKind k) { ENTER; RET(copy2d(d, n, s, n, n, 1, (int)k, si_stream_of(0), 1)); }
cudaError_t cudaMemcpyAsync(void* d, const void* s, size_t n, enum cudaMemcpyKind k, cudaStream_t st) {
    ENTER;
    RET(copy2d(d, n, s, n, n, 1, (int)k, si_stream_of(st), 0));
}
cudaError_t cudaMemcpy2D(void* d, size_t dp, const void* s, size_t sp, size_t w, size_t h, enum cudaMemcpyKind k) {
    ENTER;
    RET(copy2d(d, dp, s, sp, w, h, (int)k, si_stream_of(0), 1));
}
cudaError_t cudaMemcpy2DAsync(void* d, size_t dp, const void* s, size_t sp, size_t w, size_t h, enum cudaMemcpyKind k,
                              cudaStream_t st) {
    ENTER;
    RET(copy2d(d, dp, s, sp, w, h, (int)k, si_stream_of(st), 0));
}
static int copy3d(const struct cudaMemcpy3DParms* p, si_stream* st, int sync) {
    if (!p) return cudaErrorInvalidValue;
    if (!st) return cudaErrorInvalidResourceHandle;
    struct cudaMemcpy3DParms q;
    int ra = si_array_sides(p, &q, sizeof q);
    if (ra) return ra;
    p = &q;
    size_t w = p->extent.width, h = p->extent.height, dep = p->extent.depth;
    if (!w || !h || !dep) return cudaSuccess;
    const struct cudaPitchedPtr *sp = &p->srcPtr, *dp = &p->dstPtr;
    if (!sp->ptr || !dp->ptr || !sp->pitch || !dp->pitch) return cudaErrorInvalidValue;
    if (p->srcPos.x + w > sp->pitch || p->dstPos.x + w > dp->pitch) return cudaErrorInvalidValue;
    if (sp->ysize < p->srcPos.y + h || dp->ysize < p->dstPos.y + h) return cudaErrorInvalidValue;
    size_t s_end = ((p->srcPos.z + dep - 1) * sp->ysize + p->srcPos.y + h - 1) * sp->pitch + p->srcPos.x + w;
    size_t d_end = ((p->dstPos.z + dep - 1) * dp->ysize + p->dstPos.y + h - 1) * dp->pitch + p->dstPos.x + w;
    int r = si_check_copy(dp->ptr, d_end, sp->ptr, s_end, (int)p->kind);
    if (r) return r;
    if (sync) si_legacy_sync();
    for (size_t z = 0; z < dep && !r; z++) {
        const char* s = (const char*)sp->ptr + ((p->srcPos.z + z) * sp->ysize + p->srcPos.y) * sp->pitch + p->srcPos.x;
        char* d = (char*)dp->ptr + ((p->dstPos.z + z) * dp->ysize + p->dstPos.y) * dp->pitch + p->dstPos.x;
        r = si_enqueue_copy2d(st, d, dp->pitch, s, sp->pitch, w, h);
    }
    if (!r && sync) si_stream_sync(st);
    return r;
}
cudaError_t cudaMemcpy3D(const struct cudaMemcpy3DParms* p) { ENTER; RET(copy3d(p, si_stream_of(0), 1)); }
int si_cuda_copy3d_async(const struct cudaMemcpy3DParms* p, cudaStream_t s) { return copy3d(p, si_stream_of(s), 0); }
cudaError_t cudaMemcpy3DAsync(const struct cudaMemcpy3DParms* p, cudaStream_t s) { ENTER; RET(copy3d(p, si_stream_of(s), 0)); }
/* A 3D copy between devices: the stand-in has one, so both sides are device 0's, a device
 * to device copy of the same box. */
static int peer3d(const struct cudaMemcpy3DPeerParms* p, si_stream* s, int sync) {
    if (!p) return SI_INVALID_VALUE;
    if (p->srcDevice != 0 || p->dstDevice != 0) return SI_INVALID_DEVICE;
    struct cudaMemcpy3DParms c;
    memset(&c, 0, sizeof c);
    c.srcArray = p->srcArray;
    c.srcPos = p->srcPos;
    c.srcPtr = p->srcPtr;
    c.dstArray = p->dstArray;
    c.dstPos = p->dstPos;
    c.dstPtr = p->dstPtr;
    c.extent = p->extent;
    c.kind = cudaMemcpyDeviceToDevice;
    return copy3d(&c, s, sync);
}
cudaError_t cudaMemcpy3DPeer(const struct cudaMemcpy3DPeerParms* p) { ENTER; RET(peer3d(p, si_stream_of(0), 1)); }
cudaError_t cudaMemcpy3DPeerAsync(const struct cudaMemcpy3DPeerParms* p, cudaStream_t s) {
    ENTER;
    RET(peer3d(p, si_stream_of(s), 0));
}
static int memset2d(void* d, size_t pitch, int v, size_t w, size_t h, si_stream* st) {
    size_t n, left;
    if (!st) return cudaErrorInvalidResourceHandle;
    if (!span2d(pitch, w, h, &n)) return cudaErrorInvalidValue;
    if (n && (!si_lookup(d, 0, &left) || n > left)) return cudaErrorInvalidValue;
    return n ? si_enqueue_memset2d(st, d, pitch, v, w, h, 1) : cudaSuccess;
}
cudaError_t cudaMemset(void* d, int v, size_t n) { ENTER; RET(memset2d(d, n, v, n, 1, si_stream_of(0))); }
cudaError_t cudaMemsetAsync(void* d, int v, size_t n, cudaStream_t s) { ENTER; RET(memset2d(d, n, v, n, 1, si_stream_of(s))); }
cudaError_t cudaMemset2D(void* d, size_t p, int v, size_t w, size_t h) { ENTER; RET(memset2d(d, p, v, w, h, si_stream_of(0))); }
cudaError_t cudaMemset2DAsync(void* d, size_t p, int v, size_t w, size_t h, cudaStream_t s) {
    ENTER;
    RET(memset2d(d, p, v, w, h, si_stream_of(s)));
}

/* A 3D memset: each of the extent's depth slices (height rows of pitch bytes apart, each
 * slice ysize rows apart) a 2D memset of width bytes per row. */
static int memset3d(struct cudaPitchedPtr p, int v, struct cudaExtent e, si_stream* st) {
    if (e.height > p.ysize || e.width > p.pitch) return cudaErrorInvalidValue;
    for (size_t z = 0; z < e.depth; z++) {
        int r = memset2d((char*)p.ptr + z * p.pitch * p.ysize, p.pitch, v, e.width, e.height, st);
        if (r) return r;
    }
    return cudaSuccess;
}
cudaError_t cudaMemset3D(struct cudaPitchedPtr p, int v, struct cudaExtent e) { ENTER; RET(memset3d(p, v, e, si_stream_of(0))); }
cudaError_t cudaMemset3DAsync(struct cudaPitchedPtr p, int v, struct cudaExtent e, cudaStream_t s) {
    ENTER;
    RET(memset3d(p, v, e, si_stream_of(s)));
}

/* ---- streams and events ---- */

cudaError_t cudaStreamCreate(cudaStream_t* s) { ENTER; RET(si_stream_create((si_stream**)s, 0)); }
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned f) {
    ENTER;
    if (f & ~1u) RET(cudaErrorInvalidValue);
    RET(si_stream_create((si_stream**)s, f));
}
cudaError_t cudaStreamCreateWithPriority(cudaStream_t* s, unsigned f, int prio) { (void)prio; return cudaStreamCreateWithFlags(s, f); }
cudaError_t cudaStreamDestroy(cudaStream_t s) {
    ENTER;
    si_stream* t = si_stream_of(s);
    RET((uintptr_t)s > 2 && t ? si_stream_destroy(t) : cudaErrorInvalidResourceHandle);
}
cudaError_t cudaStreamGetDevice(cudaStream_t s, int* d) {
    ENTER;
    si_stream* t = si_stream_of(s);
    if (!t) RET(cudaErrorInvalidResourceHandle);
    if (!d) RET(cudaErrorInvalidValue);
    *d = si_stream_device(t);
    RET(cudaSuccess);
}
cudaError_t cudaStreamSynchronize(cudaStream_t s) { ENTER; RET(si_stream_sync(si_stream_of(s))); }
cudaError_t cudaStreamQuery(cudaStream_t s) { ENTER; RET(si_stream_query(si_stream_of(s))); }
cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned f) {
    ENTER;
    if (f & ~1u) RET(cudaErrorInvalidValue);
    RET(si_stream_wait_event(si_stream_of(s), si_event_of(e)));
}
cudaError_t cudaStreamAddCallback(cudaStream_t s, cudaStreamCallback_t cb, void* data, unsigned f) {
    ENTER;
    if (f) RET(cudaErrorInvalidValue);
    RET(si_enqueue_stream_callback(si_stream_of(s), (void (*)(void*, int, void*))cb, s, data));
}
cudaError_t cudaLaunchHostFunc(cudaStream_t s, cudaHostFn_t fn, void* data) { ENTER; RET(si_enqueue_host_fn(si_stream_of(s), fn, data)); }
cudaError_t cudaEventCreate(cudaEvent_t* e) { ENTER; RET(si_event_create((si_event**)e, 1)); }
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* e, unsigned f) {
    ENTER;
    RET(si_event_create((si_event**)e, !(f & cudaEventDisableTiming)));
}
cudaError_t cudaEventDestroy(cudaEvent_t e) { ENTER; RET(si_event_destroy(si_event_of(e))); }
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) { ENTER; RET(si_event_record(si_event_of(e), si_stream_of(s))); }
cudaError_t cudaEventSynchronize(cudaEvent_t e) { ENTER; RET(si_event_sync(si_event_of(e))); }
cudaError_t cudaEventQuery(cudaEvent_t e) { ENTER; RET(si_event_query(si_event_of(e))); }
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t a, cudaEvent_t b) {
    ENTER;
    RET(si_event_elapsed(ms, si_event_of(a), si_event_of(b)));
}

/* The per-thread default stream entry points (`nvcc --default-stream per-thread`): the
 * base calls, stream 0 meaning the thread's default stream (one device queue here, as
 * every default stream is). Declared here: the headers declare them only for programs
 * built that way. */
cudaError_t cudaMemcpy_ptds(void* d, const void* s, size_t n, enum cudaMemcpyKind k);
cudaError_t cudaMemcpy_ptds(void* d, const void* s, size_t n, enum cudaMemcpyKind k) { return cudaMemcpy(d, s, n, k); }
cudaError_t cudaMemcpyAsync_ptsz(void* d, const void* s, size_t n, enum cudaMemcpyKind k, cudaStream_t st);
cudaError_t cudaMemcpyAsync_ptsz(void* d, const void* s, size_t n, enum cudaMemcpyKind k, cudaStream_t st) {
    return cudaMemcpyAsync(d, s, n, k, st ? st : cudaStreamPerThread);
}
cudaError_t cudaMemset_ptds(void* d, int v, size_t n);
cudaError_t cudaMemset_ptds(void* d, int v, size_t n) { return cudaMemset(d, v, n); }
cudaError_t cudaMemsetAsync_ptsz(void* d, int v, size_t n, cudaStream_t s);
cudaError_t cudaMemsetAsync_ptsz(void* d, int v, size_t n, cudaStream_t s) {
    return cudaMemsetAsync(d, v, n, s ? s : cudaStreamPerThread);
}
cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t s);
cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t s) { return cudaStreamSynchronize(s ? s : cudaStreamPerThread); }
cudaError_t cudaStreamQuery_ptsz(cudaStream_t s);
cudaError_t cudaStreamQuery_ptsz(cudaStream_t s) { return cudaStreamQuery(s ? s : cudaStreamPerThread); }
cudaError_t cudaEventRecord_ptsz(cudaEvent_t e, cudaStream_t s);
cudaError_t cudaEventRecord_ptsz(cudaEvent_t e, cudaStream_t s) { return cudaEventRecord(e, s ? s : cudaStreamPerThread); }
