/* The stand-in CUDA runtime's arrays, array copies, and texture and surface objects (CUDA
 * 13's declarations), over array.c. */
#define _GNU_SOURCE
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <string.h>

#include "array.h"
#include "cuda_internal.h"

cudaError_t cudaMallocArray(cudaArray_t* a, const struct cudaChannelFormatDesc* f, size_t w, size_t h, unsigned flags) {
    ENTER;
    RET(si_array_create((si_array**)a, f, w, h, 0, flags));
}
cudaError_t cudaMalloc3DArray(cudaArray_t* a, const struct cudaChannelFormatDesc* f, struct cudaExtent e, unsigned flags) {
    ENTER;
    RET(si_array_create((si_array**)a, f, e.width, e.height, e.depth, flags));
}
cudaError_t cudaMallocMipmappedArray(cudaMipmappedArray_t* m, const struct cudaChannelFormatDesc* f, struct cudaExtent e,
                                     unsigned levels, unsigned flags) {
    ENTER;
    RET(si_mipmap_create((si_array**)m, f, e.width, e.height, e.depth, levels, flags));
}
cudaError_t cudaGetMipmappedArrayLevel(cudaArray_t* a, cudaMipmappedArray_const_t m, unsigned level) {
    ENTER;
    RET(si_mipmap_level((si_array**)a, m, level));
}
cudaError_t cudaFreeArray(cudaArray_t a) { ENTER; RET(a ? si_array_destroy(a, 0) : cudaSuccess); }
cudaError_t cudaFreeMipmappedArray(cudaMipmappedArray_t m) { ENTER; RET(m ? si_array_destroy(m, 1) : cudaSuccess); }
cudaError_t cudaArrayGetInfo(struct cudaChannelFormatDesc* f, struct cudaExtent* e, unsigned* flags, cudaArray_t a) {
    ENTER;
    size_t w, h, d;
    int r = si_array_info(a, f, &w, &h, &d, flags);
    if (!r && e) e->width = w, e->height = h, e->depth = d;
    RET(r);
}

cudaError_t cudaArrayGetPlane(cudaArray_t* p, cudaArray_t a, unsigned plane) {
    ENTER;
    RET(si_array_plane((si_array**)p, a, plane));
}
CUresult cuArrayGetPlane(CUarray* p, CUarray a, unsigned plane) {
    si_lock();
    int r = si_array_plane((si_array**)p, a, plane);
    si_unlock();
    return r == SI_INVALID_HANDLE ? CUDA_ERROR_INVALID_HANDLE : (CUresult)r;
}
/* The driver's description of an array: its channels' format, their count. */
CUresult cuArrayGetDescriptor(CUDA_ARRAY_DESCRIPTOR* out, CUarray a) {
    struct cudaChannelFormatDesc f;
    size_t w, h, d;
    unsigned flags;
    si_lock();
    int r = out ? si_array_info(a, &f, &w, &h, &d, &flags) : SI_INVALID_VALUE;
    si_unlock();
    if (r) return r == SI_INVALID_HANDLE ? CUDA_ERROR_INVALID_HANDLE : CUDA_ERROR_INVALID_VALUE;
    int bits = f.x, n = !!f.x + !!f.y + !!f.z + !!f.w;
    CUarray_format fmt = 0;
    if (f.f == cudaChannelFormatKindUnsigned)
        fmt = bits == 8 ? CU_AD_FORMAT_UNSIGNED_INT8 : bits == 16 ? CU_AD_FORMAT_UNSIGNED_INT16 : bits == 32 ? CU_AD_FORMAT_UNSIGNED_INT32 : 0;
    if (f.f == cudaChannelFormatKindSigned)
        fmt = bits == 8 ? CU_AD_FORMAT_SIGNED_INT8 : bits == 16 ? CU_AD_FORMAT_SIGNED_INT16 : bits == 32 ? CU_AD_FORMAT_SIGNED_INT32 : 0;
    if (f.f == cudaChannelFormatKindFloat) fmt = bits == 16 ? CU_AD_FORMAT_HALF : bits == 32 ? CU_AD_FORMAT_FLOAT : 0;
    if (!fmt) return CUDA_ERROR_NOT_SUPPORTED; /* a format the stand-in does not describe */
    out->Width = w, out->Height = h, out->Format = fmt, out->NumChannels = (unsigned)n;
    return CUDA_SUCCESS;
}

/* ---- copies ---- */

static int to_array(cudaArray_const_t a, size_t x, size_t y, const void* s, size_t sp, size_t w, size_t h, int kind,
                    cudaStream_t st, int sync) {
    void* at;
    size_t pitch;
    int r = si_array_region(a, x, y, w, h, &at, &pitch);
    if (r) return r;
    if (kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyHostToHost) return cudaErrorInvalidMemcpyDirection;
    return si_copy2d(at, pitch, s, sp, w, h, kind, si_stream_of(st), sync);
}
static int from_array(void* d, size_t dp, cudaArray_const_t a, size_t x, size_t y, size_t w, size_t h, int kind,
                      cudaStream_t st, int sync) {
    void* at;
    size_t pitch;
    int r = si_array_region(a, x, y, w, h, &at, &pitch);
    if (r) return r;
    if (kind == cudaMemcpyHostToDevice || kind == cudaMemcpyHostToHost) return cudaErrorInvalidMemcpyDirection;
    return si_copy2d(d, dp, at, pitch, w, h, kind, si_stream_of(st), sync);
}
/* A linear copy of `count` bytes from (x, y): whole rows after the first. */
static int linear_region(cudaArray_const_t a, size_t x, size_t y, size_t count, void** at) {
    size_t pitch;
    int r = si_array_region(a, x, y, 0, 0, at, &pitch);
    if (r) return r;
    void* data;
    size_t rows, elem;
    si_array_pitched(a, &data, &pitch, &rows, &elem);
    size_t total = pitch * rows, from = (size_t)((char*)*at - (char*)data);
    return count <= total - from ? cudaSuccess : cudaErrorInvalidValue;
}

cudaError_t cudaMemcpy2DToArray(cudaArray_t a, size_t x, size_t y, const void* s, size_t sp, size_t w, size_t h,
                                enum cudaMemcpyKind k) {
    ENTER;
    RET(to_array(a, x, y, s, sp, w, h, (int)k, 0, 1));
}
cudaError_t cudaMemcpy2DToArrayAsync(cudaArray_t a, size_t x, size_t y, const void* s, size_t sp, size_t w, size_t h,
                                     enum cudaMemcpyKind k, cudaStream_t st) {
    ENTER;
    RET(to_array(a, x, y, s, sp, w, h, (int)k, st, 0));
}
cudaError_t cudaMemcpy2DFromArray(void* d, size_t dp, cudaArray_const_t a, size_t x, size_t y, size_t w, size_t h,
                                  enum cudaMemcpyKind k) {
    ENTER;
    RET(from_array(d, dp, a, x, y, w, h, (int)k, 0, 1));
}
cudaError_t cudaMemcpy2DFromArrayAsync(void* d, size_t dp, cudaArray_const_t a, size_t x, size_t y, size_t w, size_t h,
                                       enum cudaMemcpyKind k, cudaStream_t st) {
    ENTER;
    RET(from_array(d, dp, a, x, y, w, h, (int)k, st, 0));
}
cudaError_t cudaMemcpyToArray(cudaArray_t a, size_t x, size_t y, const void* s, size_t n, enum cudaMemcpyKind k) {
    ENTER;
    void* at;
    int r = linear_region(a, x, y, n, &at);
    if (r) RET(r);
    RET(si_copy2d(at, n, s, n, n, 1, (int)k, si_stream_of(0), 1));
}
cudaError_t cudaMemcpyFromArray(void* d, cudaArray_const_t a, size_t x, size_t y, size_t n, enum cudaMemcpyKind k) {
    ENTER;
    void* at;
    int r = linear_region(a, x, y, n, &at);
    if (r) RET(r);
    RET(si_copy2d(d, n, at, n, n, 1, (int)k, si_stream_of(0), 1));
}
cudaError_t cudaMemcpy2DArrayToArray(cudaArray_t dst, size_t dx, size_t dy, cudaArray_const_t src, size_t sx, size_t sy,
                                     size_t w, size_t h, enum cudaMemcpyKind k) {
    ENTER;
    void *d, *s;
    size_t dp, sp;
    int r = si_array_region(dst, dx, dy, w, h, &d, &dp);
    if (!r) r = si_array_region(src, sx, sy, w, h, &s, &sp);
    if (r) RET(r);
    RET(si_copy2d(d, dp, s, sp, w, h, (int)k == cudaMemcpyDefault ? cudaMemcpyDeviceToDevice : (int)k, si_stream_of(0), 1));
}

/* ---- objects ---- */

cudaError_t cudaCreateTextureObject(cudaTextureObject_t* t, const struct cudaResourceDesc* r,
                                    const struct cudaTextureDesc* td, const struct cudaResourceViewDesc* v) {
    ENTER;
    RET(si_object_create((uint64_t*)t, 0, r, sizeof *r, td, sizeof *td, v, v ? sizeof *v : 0));
}
cudaError_t cudaDestroyTextureObject(cudaTextureObject_t t) { ENTER; RET(si_object_destroy(t, 0)); }
cudaError_t cudaCreateSurfaceObject(cudaSurfaceObject_t* s, const struct cudaResourceDesc* r) {
    ENTER;
    RET(si_object_create((uint64_t*)s, 1, r, sizeof *r, 0, 0, 0, 0));
}
cudaError_t cudaDestroySurfaceObject(cudaSurfaceObject_t s) { ENTER; RET(si_object_destroy(s, 1)); }
cudaError_t cudaGetTextureObjectResourceDesc(struct cudaResourceDesc* out, cudaTextureObject_t t) {
    ENTER;
    RET(si_object_desc(t, 0, 0, out, sizeof *out));
}
cudaError_t cudaGetTextureObjectTextureDesc(struct cudaTextureDesc* out, cudaTextureObject_t t) {
    ENTER;
    RET(si_object_desc(t, 0, 1, out, sizeof *out));
}
cudaError_t cudaGetTextureObjectResourceViewDesc(struct cudaResourceViewDesc* out, cudaTextureObject_t t) {
    ENTER;
    RET(si_object_desc(t, 0, 2, out, sizeof *out));
}
cudaError_t cudaGetSurfaceObjectResourceDesc(struct cudaResourceDesc* out, cudaSurfaceObject_t s) {
    ENTER;
    RET(si_object_desc(s, 1, 0, out, sizeof *out));
}

struct cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w, enum cudaChannelFormatKind f) {
    struct cudaChannelFormatDesc d = {x, y, z, w, f};
    return d;
}
