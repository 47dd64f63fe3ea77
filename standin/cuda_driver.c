/* The stand-in CUDA driver API (libcuda.so.1 is a link to this library) beyond code and
 * launches (cuda_code.c) and allocation (cuda.c): contexts (one device; a per-thread stack
 * of current contexts, as the driver keeps one), page-locked and registered host memory,
 * copies (1D, CUDA_MEMCPY2D, peer) and memsets over core.c's streams, streams, events,
 * stream capture and graphs over graph.c (CUDA_MEMCPY3D copy nodes of host or device
 * memory, memset nodes), and the entry-point lookups (cuGetProcAddress,
 * cudaGetDriverEntryPointByVersion: names in this library only). Each call returns the
 * driver's CUresult for what the core decides. */
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "cuda_internal.h"

_Static_assert((int)CUDA_ERROR_INVALID_VALUE == (int)SI_INVALID_VALUE && (int)CUDA_ERROR_OUT_OF_MEMORY == (int)SI_NO_MEMORY &&
                   (int)CUDA_ERROR_INVALID_DEVICE == (int)SI_INVALID_DEVICE && (int)CUDA_ERROR_INVALID_HANDLE == (int)SI_INVALID_HANDLE &&
                   (int)CUDA_ERROR_NOT_FOUND == (int)SI_NOT_FOUND && (int)CUDA_ERROR_NOT_READY == (int)SI_NOT_READY &&
                   (int)CUDA_ERROR_NOT_SUPPORTED == (int)SI_NOT_SUPPORTED &&
                   (int)CUDA_ERROR_STREAM_CAPTURE_INVALIDATED == (int)SI_CAPTURE_INVALIDATED &&
                   (int)CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED == (int)SI_ALREADY_REGISTERED &&
                   (int)CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED == (int)SI_NOT_REGISTERED,
               "the driver's numbers are the core's");

/* The core's answer as the driver numbers it: the runtime-only codes (configuration,
 * symbol, device pointer, direction) are the driver's invalid value, an unknown
 * function its invalid handle. */
static CUresult drv(int r) {
    switch (r) {
    case SI_INVALID_CONFIG:
    case SI_INVALID_SYMBOL:
    case SI_INVALID_DEVPTR:
    case SI_INVALID_DIRECTION: return CUDA_ERROR_INVALID_VALUE;
    case SI_INVALID_DEVICE_FUNCTION: return CUDA_ERROR_INVALID_HANDLE;
    default: return (CUresult)r;
    }
}
#define DRET(expr)                                          \
    do {                                                    \
        int r_ = si_sticky ? si_sticky : (int)(expr);       \
        si_unlock();                                        \
        return drv(r_);                                     \
    } while (0)

/* ---- devices and contexts ---- */

CUresult cuDeviceGetCount(int* n) {
    if (!n) return CUDA_ERROR_INVALID_VALUE;
    *n = 1;
    return CUDA_SUCCESS;
}
CUresult cuDeviceGet(CUdevice* d, int ordinal) {
    if (!d) return CUDA_ERROR_INVALID_VALUE;
    if (ordinal != 0) return CUDA_ERROR_INVALID_DEVICE;
    *d = 0;
    return CUDA_SUCCESS;
}

struct ctx {
    struct ctx* next;
};
static struct ctx primary;
static unsigned primary_refs;
static struct ctx* created;
#define STACK 64
static __thread struct ctx* stack[STACK];
static __thread int depth;
__thread int si_cuda_runtime_bound;

static int live_ctx(const void* c) {
    if (c == (const void*)&primary) return 1;
    for (struct ctx* x = created; x; x = x->next)
        if ((const void*)x == c) return 1;
    return 0;
}
static int push_ctx(struct ctx* c) {
    if (depth == STACK) return CUDA_ERROR_OUT_OF_MEMORY;
    stack[depth++] = c;
    return CUDA_SUCCESS;
}

CUresult cuCtxCreate(CUcontext* out, CUctxCreateParams* params, unsigned flags, CUdevice dev) {
    si_lock();
    /* A zero-filled CUctxCreateParams (no affinity, no CIG) means what NULL means. */
    int plain = !params || (!params->execAffinityParams && !params->numExecAffinityParams && !params->cigParams);
    if (!out || !plain || (flags & ~(unsigned)CU_CTX_FLAGS_MASK)) DRET(CUDA_ERROR_INVALID_VALUE);
    if (!plain) DRET(CUDA_ERROR_NOT_SUPPORTED);
    if (dev != 0) DRET(CUDA_ERROR_INVALID_DEVICE);
    struct ctx* c = calloc(1, sizeof *c);
    if (!c) DRET(CUDA_ERROR_OUT_OF_MEMORY);
    int r = push_ctx(c);
    if (r) {
        free(c);
        DRET(r);
    }
    c->next = created;
    created = c;
    *out = (CUcontext)c;
    DRET(CUDA_SUCCESS);
}
CUresult cuCtxDestroy(CUcontext c) {
    si_lock();
    if (!c || c == (CUcontext)&primary || !live_ctx(c)) DRET(CUDA_ERROR_INVALID_CONTEXT);
    si_device_sync();
    for (struct ctx** p = &created; *p; p = &(*p)->next)
        if (*p == (struct ctx*)c) {
            *p = (*p)->next;
            break;
        }
    /* Current on this thread: popped, as the driver does. */
    if (depth && stack[depth - 1] == (struct ctx*)c) depth--;
    free(c);
    DRET(CUDA_SUCCESS);
}
CUresult cuCtxSetCurrent(CUcontext c) {
    si_lock();
    if (c && !live_ctx(c)) DRET(CUDA_ERROR_INVALID_CONTEXT);
    if (!c) {
        if (depth) depth--;
        DRET(CUDA_SUCCESS);
    }
    if (depth) stack[depth - 1] = (struct ctx*)c;
    else stack[depth++] = (struct ctx*)c;
    DRET(CUDA_SUCCESS);
}
CUresult cuCtxGetCurrent(CUcontext* c) {
    if (!c) return CUDA_ERROR_INVALID_VALUE;
    /* The runtime's primary context once a runtime call bound it to this thread. */
    *c = depth ? (CUcontext)stack[depth - 1] : si_cuda_runtime_bound ? (CUcontext)&primary : 0;
    return CUDA_SUCCESS;
}
CUresult cuCtxPushCurrent(CUcontext c) {
    si_lock();
    if (!c || !live_ctx(c)) DRET(CUDA_ERROR_INVALID_CONTEXT);
    DRET(push_ctx((struct ctx*)c));
}
CUresult cuCtxPopCurrent(CUcontext* c) {
    if (!depth) return CUDA_ERROR_INVALID_CONTEXT;
    depth--;
    if (c) *c = (CUcontext)stack[depth];
    return CUDA_SUCCESS;
}
CUresult cuCtxGetDevice(CUdevice* d) {
    if (!d) return CUDA_ERROR_INVALID_VALUE;
    *d = 0;
    return CUDA_SUCCESS;
}
CUresult cuCtxSynchronize(void) {
    si_lock();
    DRET(si_device_sync_checked());
}
/* Device 0's primary context: one context, counted retains. */
CUresult cuDevicePrimaryCtxRetain(CUcontext* c, CUdevice dev) {
    if (!c) return CUDA_ERROR_INVALID_VALUE;
    if (dev != 0) return CUDA_ERROR_INVALID_DEVICE;
    si_lock();
    primary_refs++;
    *c = (CUcontext)&primary;
    DRET(CUDA_SUCCESS);
}
/* CUDA 13.5's execution contexts: device 0's is its primary context. Work recorded or
 * waited for over a context covers the whole device here (one device queue). */
static int exec_ctx(cudaExecutionContext_t c) { return c == (cudaExecutionContext_t)(void*)&primary; }
cudaError_t cudaDeviceGetExecutionCtx(cudaExecutionContext_t* c, int dev) {
    ENTER;
    if (!c) RET(cudaErrorInvalidValue);
    if (dev != 0) RET(cudaErrorInvalidDevice);
    *c = (cudaExecutionContext_t)(void*)&primary;
    RET(cudaSuccess);
}
cudaError_t cudaExecutionCtxStreamCreate(cudaStream_t* s, cudaExecutionContext_t c, unsigned flags, int prio) {
    ENTER;
    (void)prio;
    if (!s || !exec_ctx(c)) RET(cudaErrorInvalidValue);
    RET(si_stream_create((si_stream**)s, flags));
}
cudaError_t cudaExecutionCtxRecordEvent(cudaExecutionContext_t c, cudaEvent_t e) {
    ENTER;
    if (!exec_ctx(c)) RET(cudaErrorInvalidValue);
    si_device_sync();
    RET(si_event_record(si_event_of(e), si_stream_of(0)));
}
cudaError_t cudaExecutionCtxWaitEvent(cudaExecutionContext_t c, cudaEvent_t e) {
    ENTER;
    if (!exec_ctx(c)) RET(cudaErrorInvalidValue);
    RET(si_event_sync(si_event_of(e)));
}
cudaError_t cudaExecutionCtxSynchronize(cudaExecutionContext_t c) {
    ENTER;
    if (!exec_ctx(c)) RET(cudaErrorInvalidValue);
    RET(si_device_sync_checked());
}
CUresult cuDevicePrimaryCtxRelease(CUdevice dev) {
    if (dev != 0) return CUDA_ERROR_INVALID_DEVICE;
    si_lock();
    if (!primary_refs) DRET(CUDA_ERROR_INVALID_CONTEXT);
    primary_refs--;
    DRET(CUDA_SUCCESS);
}

/* ---- host memory ---- */

CUresult cuMemAllocHost(void** p, size_t n) {
    if (!p || !n) return CUDA_ERROR_INVALID_VALUE;
    si_lock();
    DRET(si_alloc(p, n, SI_PINNED));
}
CUresult cuMemHostAlloc(void** p, size_t n, unsigned flags) {
    if (!p || !n || (flags & ~(unsigned)(CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED)))
        return CUDA_ERROR_INVALID_VALUE;
    si_lock();
    DRET(si_alloc(p, n, SI_PINNED));
}
CUresult cuMemFreeHost(void* p) {
    si_lock();
    DRET(si_free(p, SI_PINNED));
}
CUresult cuMemHostRegister(void* p, size_t n, unsigned flags) {
    (void)flags;
    si_lock();
    DRET(si_register(p, n));
}
CUresult cuMemHostUnregister(void* p) {
    si_lock();
    DRET(si_unregister(p));
}
CUresult cuMemHostGetDevicePointer(CUdeviceptr* d, void* p, unsigned flags) {
    enum si_mem k;
    if (!d || flags) return CUDA_ERROR_INVALID_VALUE;
    si_lock();
    if (!si_lookup(p, &k, 0) || (k != SI_PINNED && k != SI_REGISTERED)) DRET(CUDA_ERROR_INVALID_VALUE);
    *d = (CUdeviceptr)(uintptr_t)p;
    DRET(CUDA_SUCCESS);
}
CUresult cuMemAllocPitch(CUdeviceptr* d, size_t* pitch, size_t w, size_t h, unsigned elem) {
    if (!d || !pitch || !w || !h || (elem != 4 && elem != 8 && elem != 16)) return CUDA_ERROR_INVALID_VALUE;
    size_t pw = (w + 511) & ~(size_t)511;
    if (pw < w || pw > SIZE_MAX / h) return CUDA_ERROR_OUT_OF_MEMORY;
    void* p = 0;
    si_lock();
    int r = si_alloc(&p, pw * h, SI_DEVICE);
    if (!r) {
        *d = (CUdeviceptr)(uintptr_t)p;
        *pitch = pw;
    }
    DRET(r);
}

/* ---- copies and memsets ---- */

#define DEV(d) ((void*)(uintptr_t)(d))
/* Kinds as core.h numbers them: 1 H2D, 2 D2H, 3 D2D, 4 either side. A synchronous copy
 * waits for the legacy stream's work first and for itself after. */
static int copy2d(void* d, size_t dp, const void* s, size_t sp, size_t w, size_t h, int kind, CUstream hs, int sync) {
    si_stream* st = si_stream_of(hs);
    if (!st) return CUDA_ERROR_INVALID_HANDLE;
    if (!w || !h) return CUDA_SUCCESS;
    if (w > dp || w > sp || h - 1 > (SIZE_MAX - w) / dp || h - 1 > (SIZE_MAX - w) / sp) return CUDA_ERROR_INVALID_VALUE;
    int r = si_check_copy(d, (h - 1) * dp + w, s, (h - 1) * sp + w, kind);
    if (r) return r;
    if (sync) si_legacy_sync();
    r = si_enqueue_copy2d(st, d, dp, s, sp, w, h);
    if (!r && sync) si_stream_sync(st);
    return r;
}
#define COPY(d, s, n, kind, st, sync) copy2d(d, n, s, n, n, 1, kind, st, sync)
CUresult cuMemcpyHtoD(CUdeviceptr d, const void* s, size_t n) { si_lock(); DRET(COPY(DEV(d), s, n, 1, 0, 1)); }
CUresult cuMemcpyDtoH(void* d, CUdeviceptr s, size_t n) { si_lock(); DRET(COPY(d, DEV(s), n, 2, 0, 1)); }
CUresult cuMemcpyDtoD(CUdeviceptr d, CUdeviceptr s, size_t n) { si_lock(); DRET(COPY(DEV(d), DEV(s), n, 3, 0, 1)); }
CUresult cuMemcpy(CUdeviceptr d, CUdeviceptr s, size_t n) { si_lock(); DRET(COPY(DEV(d), DEV(s), n, 4, 0, 1)); }
CUresult cuMemcpyHtoDAsync(CUdeviceptr d, const void* s, size_t n, CUstream st) { si_lock(); DRET(COPY(DEV(d), s, n, 1, st, 0)); }
CUresult cuMemcpyDtoHAsync(void* d, CUdeviceptr s, size_t n, CUstream st) { si_lock(); DRET(COPY(d, DEV(s), n, 2, st, 0)); }
CUresult cuMemcpyDtoDAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) { si_lock(); DRET(COPY(DEV(d), DEV(s), n, 3, st, 0)); }
CUresult cuMemcpyAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) { si_lock(); DRET(COPY(DEV(d), DEV(s), n, 4, st, 0)); }
/* Batched copies (cuda_batch.c's check): each copy in order on the stream, never the
 * legacy one; the first form reports no failing index (none fails after the check). */
static int batch(CUdeviceptr* d, CUdeviceptr* s, size_t* n, size_t count, CUmemcpyAttributes* a, size_t* idxs, size_t na,
                 CUstream st) {
    if (!st || !d || !s || !n) return SI_INVALID_VALUE;
    int r = si_batch_check(count, a, sizeof *a, idxs, na);
    for (size_t i = 0; !r && i < count; i++) r = si_check_copy(DEV(d[i]), n[i], DEV(s[i]), n[i], 4);
    for (size_t i = 0; !r && i < count; i++) r = COPY(DEV(d[i]), DEV(s[i]), n[i], 4, st, 0);
    return r;
}
#define PER_THREAD(st) ((st) ? (st) : CU_STREAM_PER_THREAD)
CUresult cuMemcpyBatchAsync_v2(CUdeviceptr* d, CUdeviceptr* s, size_t* n, size_t count, CUmemcpyAttributes* a,
                               size_t* idxs, size_t na, CUstream st) {
    si_lock();
    DRET(batch(d, s, n, count, a, idxs, na, st));
}
CUresult cuMemcpyBatchAsync_v2_ptsz(CUdeviceptr* d, CUdeviceptr* s, size_t* n, size_t count, CUmemcpyAttributes* a,
                                    size_t* idxs, size_t na, CUstream st);
CUresult cuMemcpyBatchAsync_v2_ptsz(CUdeviceptr* d, CUdeviceptr* s, size_t* n, size_t count, CUmemcpyAttributes* a,
                                    size_t* idxs, size_t na, CUstream st) {
    si_lock();
    DRET(batch(d, s, n, count, a, idxs, na, PER_THREAD(st)));
}
/* The first form, with the failing index; cuda.h binds the name to the second. */
#undef cuMemcpyBatchAsync
CUresult cuMemcpyBatchAsync(CUdeviceptr* d, CUdeviceptr* s, size_t* n, size_t count, CUmemcpyAttributes* a, size_t* idxs,
                            size_t na, size_t* fail, CUstream st);
CUresult cuMemcpyBatchAsync(CUdeviceptr* d, CUdeviceptr* s, size_t* n, size_t count, CUmemcpyAttributes* a, size_t* idxs,
                            size_t na, size_t* fail, CUstream st) {
    si_lock();
    if (fail) *fail = SIZE_MAX;
    DRET(batch(d, s, n, count, a, idxs, na, st));
}
CUresult cuMemcpyWithAttributesAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUmemcpyAttributes* a, CUstream st) {
    size_t first = 0;
    si_lock();
    DRET(batch(&d, &s, &n, 1, a, &first, 1, st));
}
/* 3D batches: the runtime's (cuda_batch.c); CUDA_MEMCPY3D_BATCH_OP is its struct. */
#define OPS(o) ((const struct cudaMemcpy3DBatchOp*)(const void*)(o))
CUresult cuMemcpy3DBatchAsync_v2(size_t n, CUDA_MEMCPY3D_BATCH_OP* ops, unsigned long long flags, CUstream st) {
    si_lock();
    DRET(si_cuda_batch3d(n, OPS(ops), flags, (cudaStream_t)st));
}
CUresult cuMemcpy3DBatchAsync_v2_ptsz(size_t n, CUDA_MEMCPY3D_BATCH_OP* ops, unsigned long long flags, CUstream st);
CUresult cuMemcpy3DBatchAsync_v2_ptsz(size_t n, CUDA_MEMCPY3D_BATCH_OP* ops, unsigned long long flags, CUstream st) {
    si_lock();
    DRET(si_cuda_batch3d(n, OPS(ops), flags, (cudaStream_t)PER_THREAD(st)));
}
#undef cuMemcpy3DBatchAsync
CUresult cuMemcpy3DBatchAsync(size_t n, CUDA_MEMCPY3D_BATCH_OP* ops, size_t* fail, unsigned long long flags, CUstream st);
CUresult cuMemcpy3DBatchAsync(size_t n, CUDA_MEMCPY3D_BATCH_OP* ops, size_t* fail, unsigned long long flags, CUstream st) {
    si_lock();
    if (fail) *fail = SIZE_MAX;
    DRET(si_cuda_batch3d(n, OPS(ops), flags, (cudaStream_t)st));
}
CUresult cuMemcpy3DWithAttributesAsync(CUDA_MEMCPY3D_BATCH_OP* op, unsigned long long flags, CUstream st) {
    si_lock();
    DRET(si_cuda_batch3d(1, OPS(op), flags, (cudaStream_t)st));
}
/* Peer copies: both contexts must be live (one device, so a device-to-device copy). */
static int peer(CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n, CUstream st, int sync) {
    if (!live_ctx(dc) || !live_ctx(sc)) return CUDA_ERROR_INVALID_CONTEXT;
    return COPY(DEV(d), DEV(s), n, 3, st, sync);
}
CUresult cuMemcpyPeer(CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n) { si_lock(); DRET(peer(d, dc, s, sc, n, 0, 1)); }
CUresult cuMemcpyPeerAsync(CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n, CUstream st) {
    si_lock();
    DRET(peer(d, dc, s, sc, n, st, 0));
}
/* One side of a CUDA_MEMCPY2D/3D: host, device or unified memory (arrays are not
 * modelled here: refused as not supported); its first byte and whether it is device. */
static int copy_side(CUmemorytype type, const void* host, CUdeviceptr dev, CUarray array, size_t x, size_t y,
                     size_t pitch, char** at, int* device) {
    if (array || type == CU_MEMORYTYPE_ARRAY) return CUDA_ERROR_NOT_SUPPORTED;
    if (type != CU_MEMORYTYPE_HOST && type != CU_MEMORYTYPE_DEVICE && type != CU_MEMORYTYPE_UNIFIED)
        return CUDA_ERROR_INVALID_VALUE;
    const char* base = type == CU_MEMORYTYPE_HOST ? host : DEV(dev);
    if (!base || (pitch && y > SIZE_MAX / pitch)) return CUDA_ERROR_INVALID_VALUE;
    *at = (char*)base + y * pitch + x;
    *device = type == CU_MEMORYTYPE_DEVICE;
    return CUDA_SUCCESS;
}
static int kind_of(int src_dev, int dst_dev) { return src_dev && dst_dev ? 3 : src_dev ? 2 : dst_dev ? 1 : 4; }
static int copy_2d(const CUDA_MEMCPY2D* p, CUstream st, int sync) {
    char *s, *d;
    int sd, dd, r;
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    size_t sp = p->Height > 1 ? p->srcPitch : p->WidthInBytes, dp = p->Height > 1 ? p->dstPitch : p->WidthInBytes;
    if ((r = copy_side(p->srcMemoryType, p->srcHost, p->srcDevice, p->srcArray, p->srcXInBytes, p->srcY, p->srcPitch, &s, &sd)) ||
        (r = copy_side(p->dstMemoryType, p->dstHost, p->dstDevice, p->dstArray, p->dstXInBytes, p->dstY, p->dstPitch, &d, &dd)))
        return r;
    return copy2d(d, dp, s, sp, p->WidthInBytes, p->Height, kind_of(sd, dd), st, sync);
}
CUresult cuMemcpy2D(const CUDA_MEMCPY2D* p) { si_lock(); DRET(copy_2d(p, 0, 1)); }
CUresult cuMemcpy2DUnaligned(const CUDA_MEMCPY2D* p) { si_lock(); DRET(copy_2d(p, 0, 1)); }
CUresult cuMemcpy2DAsync(const CUDA_MEMCPY2D* p, CUstream st) { si_lock(); DRET(copy_2d(p, st, 0)); }

/* Memsets of elem-byte values: width elements per row, rows pitch bytes apart. */
static int memset2d(CUdeviceptr d, size_t pitch, unsigned v, size_t w, size_t h, size_t elem, CUstream hs, int sync) {
    si_stream* st = si_stream_of(hs);
    size_t left;
    if (!st) return CUDA_ERROR_INVALID_HANDLE;
    if (!w || !h) return CUDA_SUCCESS;
    if (w > SIZE_MAX / elem || (h > 1 && pitch < w * elem) || (h > 1 && h - 1 > (SIZE_MAX - w * elem) / pitch))
        return CUDA_ERROR_INVALID_VALUE;
    size_t n = (h - 1) * pitch + w * elem;
    if (!si_lookup(DEV(d), 0, &left) || n > left) return CUDA_ERROR_INVALID_VALUE;
    if (sync) si_legacy_sync();
    int r = si_enqueue_memset2d(st, DEV(d), h > 1 ? pitch : w * elem, (int)v, w, h, elem);
    if (!r && sync) si_stream_sync(st);
    return r;
}
CUresult cuMemsetD8(CUdeviceptr d, unsigned char v, size_t n) { si_lock(); DRET(memset2d(d, 0, v, n, 1, 1, 0, 1)); }
CUresult cuMemsetD16(CUdeviceptr d, unsigned short v, size_t n) { si_lock(); DRET(memset2d(d, 0, v, n, 1, 2, 0, 1)); }
CUresult cuMemsetD32(CUdeviceptr d, unsigned v, size_t n) { si_lock(); DRET(memset2d(d, 0, v, n, 1, 4, 0, 1)); }
CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream s) { si_lock(); DRET(memset2d(d, 0, v, n, 1, 1, s, 0)); }
CUresult cuMemsetD16Async(CUdeviceptr d, unsigned short v, size_t n, CUstream s) { si_lock(); DRET(memset2d(d, 0, v, n, 1, 2, s, 0)); }
CUresult cuMemsetD32Async(CUdeviceptr d, unsigned v, size_t n, CUstream s) { si_lock(); DRET(memset2d(d, 0, v, n, 1, 4, s, 0)); }
CUresult cuMemsetD2D8(CUdeviceptr d, size_t p, unsigned char v, size_t w, size_t h) { si_lock(); DRET(memset2d(d, p, v, w, h, 1, 0, 1)); }
CUresult cuMemsetD2D16(CUdeviceptr d, size_t p, unsigned short v, size_t w, size_t h) { si_lock(); DRET(memset2d(d, p, v, w, h, 2, 0, 1)); }
CUresult cuMemsetD2D32(CUdeviceptr d, size_t p, unsigned v, size_t w, size_t h) { si_lock(); DRET(memset2d(d, p, v, w, h, 4, 0, 1)); }
CUresult cuMemsetD2D8Async(CUdeviceptr d, size_t p, unsigned char v, size_t w, size_t h, CUstream s) {
    si_lock();
    DRET(memset2d(d, p, v, w, h, 1, s, 0));
}
CUresult cuMemsetD2D16Async(CUdeviceptr d, size_t p, unsigned short v, size_t w, size_t h, CUstream s) {
    si_lock();
    DRET(memset2d(d, p, v, w, h, 2, s, 0));
}
CUresult cuMemsetD2D32Async(CUdeviceptr d, size_t p, unsigned v, size_t w, size_t h, CUstream s) {
    si_lock();
    DRET(memset2d(d, p, v, w, h, 4, s, 0));
}
/* The per-thread default stream forms (declared only for programs built that way). */
CUresult cuMemsetD32_v2_ptds(CUdeviceptr d, unsigned v, size_t n);
CUresult cuMemsetD32_v2_ptds(CUdeviceptr d, unsigned v, size_t n) { si_lock(); DRET(memset2d(d, 0, v, n, 1, 4, CU_STREAM_PER_THREAD, 1)); }
CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr d, const void* s, size_t n);
CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr d, const void* s, size_t n) { si_lock(); DRET(COPY(DEV(d), s, n, 1, CU_STREAM_PER_THREAD, 1)); }
CUresult cuMemcpyDtoH_v2_ptds(void* d, CUdeviceptr s, size_t n);
CUresult cuMemcpyDtoH_v2_ptds(void* d, CUdeviceptr s, size_t n) { si_lock(); DRET(COPY(d, DEV(s), n, 2, CU_STREAM_PER_THREAD, 1)); }

/* ---- streams and events ---- */

CUresult cuStreamCreate(CUstream* s, unsigned flags) {
    if (!s || (flags & ~(unsigned)CU_STREAM_NON_BLOCKING)) return CUDA_ERROR_INVALID_VALUE;
    si_lock();
    DRET(si_stream_create((si_stream**)s, flags));
}
CUresult cuStreamCreateWithPriority(CUstream* s, unsigned flags, int priority) {
    (void)priority; /* any value: the driver clamps it to the device's range */
    return cuStreamCreate(s, flags);
}
CUresult cuStreamDestroy(CUstream s) {
    si_lock();
    si_stream* t = si_stream_of(s);
    DRET((uintptr_t)s > 2 && t ? si_stream_destroy(t) : CUDA_ERROR_INVALID_HANDLE);
}
CUresult cuStreamSynchronize(CUstream s) { si_lock(); DRET(si_stream_sync(si_stream_of(s))); }
CUresult cuStreamQuery(CUstream s) { si_lock(); DRET(si_stream_query(si_stream_of(s))); }
CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned flags) {
    if (flags & ~1u) return CUDA_ERROR_INVALID_VALUE;
    si_lock();
    DRET(si_stream_wait_event(si_stream_of(s), si_event_of(e)));
}
CUresult cuEventCreate(CUevent* e, unsigned flags) {
    if (!e || (flags & ~(unsigned)(CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS)))
        return CUDA_ERROR_INVALID_VALUE;
    si_lock();
    DRET(si_event_create((si_event**)e, !(flags & CU_EVENT_DISABLE_TIMING)));
}
CUresult cuEventRecord(CUevent e, CUstream s) { si_lock(); DRET(si_event_record(si_event_of(e), si_stream_of(s))); }
CUresult cuEventQuery(CUevent e) { si_lock(); DRET(si_event_query(si_event_of(e))); }
CUresult cuEventSynchronize(CUevent e) { si_lock(); DRET(si_event_sync(si_event_of(e))); }
CUresult cuEventDestroy(CUevent e) { si_lock(); DRET(si_event_destroy(si_event_of(e))); }
CUresult cuEventElapsedTime(float* ms, CUevent a, CUevent b) {
    si_lock();
    DRET(si_event_elapsed(ms, si_event_of(a), si_event_of(b)));
}

/* ---- stream capture and graphs ---- */

CUresult cuStreamBeginCapture(CUstream s, CUstreamCaptureMode mode) { si_lock(); DRET(si_capture_begin(si_stream_of(s), (int)mode)); }
CUresult cuStreamEndCapture(CUstream s, CUgraph* g) { si_lock(); DRET(si_capture_end(si_stream_of(s), (si_graph**)g)); }
CUresult cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus* st) {
    si_lock();
    DRET(si_capture_status(si_stream_of(s), (int*)st, 0));
}
CUresult cuGraphCreate(CUgraph* g, unsigned flags) {
    if (flags) return CUDA_ERROR_INVALID_VALUE;
    si_lock();
    DRET(si_graph_create((si_graph**)g));
}
CUresult cuGraphDestroy(CUgraph g) { si_lock(); DRET(si_graph_destroy(si_graph_of(g))); }
CUresult cuGraphInstantiateWithFlags(CUgraphExec* x, CUgraph g, unsigned long long flags) {
    if (flags & ~(unsigned long long)(CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH | CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY))
        return CUDA_ERROR_INVALID_VALUE;
    si_lock();
    DRET(si_graph_instantiate((si_graph**)x, si_graph_of(g)));
}
CUresult cuGraphExecDestroy(CUgraphExec x) { si_lock(); DRET(si_graph_exec_destroy(si_graph_exec_of(x))); }
CUresult cuGraphLaunch(CUgraphExec x, CUstream s) { si_lock(); DRET(si_graph_launch(si_graph_exec_of(x), si_stream_of(s))); }
CUresult cuLaunchHostFunc(CUstream s, CUhostFn fn, void* data) {
    si_lock();
    DRET(si_enqueue_host_fn(si_stream_of(s), fn, data));
}
CUresult cuGraphChildGraphNodeGetGraph(CUgraphNode node, CUgraph* g) {
    si_lock();
    DRET(si_graph_child_graph(node, (si_graph**)g));
}
CUresult cuGraphNodeGetContainingGraph(CUgraphNode node, CUgraph* g) {
    si_lock();
    DRET(si_graph_containing(node, (si_graph**)g));
}
CUresult cuGraphExecChildGraphNodeSetParams(CUgraphExec x, CUgraphNode node, CUgraph child) {
    si_lock();
    DRET(si_graph_exec_set_child(si_graph_exec_of(x), node, si_graph_of(child)));
}
CUresult cuStreamUpdateCaptureDependencies_v2(CUstream s, CUgraphNode* d, const CUgraphEdgeData* data, size_t n,
                                              unsigned flags) {
    si_lock();
    if (data) DRET(SI_NOT_SUPPORTED);
    DRET(si_capture_update_deps(si_stream_of(s), (si_node* const*)d, n, flags));
}
CUresult cuGraphAddEmptyNode(CUgraphNode* out, CUgraph g, const CUgraphNode* d, size_t n) {
    si_lock();
    DRET(si_graph_add_empty((si_node**)out, si_graph_of(g), (si_node* const*)d, n));
}

/* A CUDA_MEMCPY3D of one slice (Depth 1) between host or device memory: its two sides. */
static int copy3d_sides(const CUDA_MEMCPY3D* p, CUcontext ctx, char** s, size_t* sp, char** d, size_t* dp) {
    int sd, dd, r;
    if (!p || (ctx && !live_ctx(ctx))) return !p ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_INVALID_CONTEXT;
    if (p->Depth != 1 || p->srcZ || p->dstZ || p->srcLOD || p->dstLOD) return CUDA_ERROR_NOT_SUPPORTED;
    if (!p->WidthInBytes || !p->Height) return CUDA_ERROR_INVALID_VALUE;
    if ((r = copy_side(p->srcMemoryType, p->srcHost, p->srcDevice, p->srcArray, p->srcXInBytes, p->srcY, p->srcPitch, s, &sd)) ||
        (r = copy_side(p->dstMemoryType, p->dstHost, p->dstDevice, p->dstArray, p->dstXInBytes, p->dstY, p->dstPitch, d, &dd)))
        return r;
    *sp = p->Height > 1 ? p->srcPitch : p->WidthInBytes;
    *dp = p->Height > 1 ? p->dstPitch : p->WidthInBytes;
    if (p->WidthInBytes > *sp || p->WidthInBytes > *dp) return CUDA_ERROR_INVALID_VALUE;
    return si_check_copy(*d, (p->Height - 1) * *dp + p->WidthInBytes, *s, (p->Height - 1) * *sp + p->WidthInBytes,
                         kind_of(sd, dd));
}
CUresult cuGraphAddMemcpyNode(CUgraphNode* out, CUgraph g, const CUgraphNode* deps, size_t n, const CUDA_MEMCPY3D* p,
                              CUcontext ctx) {
    char *s, *d;
    size_t sp, dp;
    si_lock();
    int r = copy3d_sides(p, ctx, &s, &sp, &d, &dp);
    if (r) DRET(r);
    DRET(si_graph_add_copy2d((si_node**)out, si_graph_of(g), (si_node* const*)deps, n, d, dp, s, sp, p->WidthInBytes,
                             p->Height));
}
/* An executable graph's copy node made a new 1D copy (one row). */
CUresult cuGraphExecMemcpyNodeSetParams(CUgraphExec x, CUgraphNode node, const CUDA_MEMCPY3D* p, CUcontext ctx) {
    char *s, *d;
    size_t sp, dp;
    si_lock();
    si_graph* exec = si_graph_exec_of(x);
    if (!exec) DRET(CUDA_ERROR_INVALID_VALUE);
    int r = copy3d_sides(p, ctx, &s, &sp, &d, &dp);
    if (r) DRET(r);
    if (p->Height != 1) DRET(CUDA_ERROR_NOT_SUPPORTED);
    DRET(si_graph_set_copy1d(exec, node, d, s, p->WidthInBytes));
}
CUresult cuGraphAddMemsetNode(CUgraphNode* out, CUgraph g, const CUgraphNode* deps, size_t n,
                              const CUDA_MEMSET_NODE_PARAMS* p, CUcontext ctx) {
    size_t left;
    si_lock();
    if (ctx && !live_ctx(ctx)) DRET(CUDA_ERROR_INVALID_CONTEXT);
    if (!p || (p->elementSize != 1 && p->elementSize != 2 && p->elementSize != 4) || !p->width || !p->height)
        DRET(CUDA_ERROR_INVALID_VALUE);
    size_t row = p->width * p->elementSize;
    if (p->height > 1 && p->pitch < row) DRET(CUDA_ERROR_INVALID_VALUE);
    size_t pitch = p->height > 1 ? p->pitch : row;
    if (!si_lookup(DEV(p->dst), 0, &left) || (p->height - 1) * pitch + row > left) DRET(CUDA_ERROR_INVALID_VALUE);
    DRET(si_graph_add_memset2d((si_node**)out, si_graph_of(g), (si_node* const*)deps, n, DEV(p->dst), pitch,
                               (int)p->value, p->width, p->height, p->elementSize));
}

/* ---- entry points ---- */

/* A name's current ABI in this library (NAME_v4 ... NAME_v2 where it has one, else NAME),
 * the per-thread stream form first when asked for; null if it has none. */
static void* self_symbol(const char* name) {
    Dl_info i;
    if (!dladdr((void*)self_symbol, &i) || !i.dli_fname) return 0;
    void* h = dlopen(i.dli_fname, RTLD_NOW | RTLD_NOLOAD);
    void* p = h ? dlsym(h, name) : 0;
    if (h) dlclose(h);
    return p;
}
static void* lookup(const char* name, int per_thread) {
    char v[256];
    if (!name || strlen(name) > 200) return 0;
    for (int ver = 4; ver >= 1; ver--) {
        void* p = 0;
        if (ver > 1) snprintf(v, sizeof v, "%s_v%d", name, ver);
        else snprintf(v, sizeof v, "%s", name);
        if (per_thread) {
            char pt[272];
            snprintf(pt, sizeof pt, "%s_ptds", v);
            if (!(p = self_symbol(pt))) {
                snprintf(pt, sizeof pt, "%s_ptsz", v);
                p = self_symbol(pt);
            }
        }
        if (p || (p = self_symbol(v))) return p;
    }
    return 0;
}
CUresult cuGetProcAddress(const char* name, void** pfn, int version, cuuint64_t flags,
                          CUdriverProcAddressQueryResult* status) {
    (void)version;
    if (!name || !pfn) return CUDA_ERROR_INVALID_VALUE;
    *pfn = lookup(name, (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0);
    if (status) *status = *pfn ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return *pfn ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}
/* The shared runtime's lookup of a driver function for the program: the same answer. */
cudaError_t cudaGetDriverEntryPointByVersion(const char* name, void** pfn, unsigned version, unsigned long long flags,
                                             enum cudaDriverEntryPointQueryResult* status) {
    (void)version;
    if (!name || !pfn) return cudaErrorInvalidValue;
    *pfn = lookup(name, (flags & cudaEnablePerThreadDefaultStream) != 0);
    if (status) *status = *pfn ? cudaDriverEntryPointSuccess : cudaDriverEntryPointSymbolNotFound;
    return cudaSuccess;
}
