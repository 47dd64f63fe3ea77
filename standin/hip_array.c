/* The stand-in HIP runtime's arrays, array copies, and texture and surface objects (HIP
 * 5.2's declarations), over array.c. HIP 5.2 exports its surface object calls with C++
 * linkage: they are defined here under their mangled names. Launch arguments are not
 * checked for objects (an AMDGPU kernel's parameter sizes are in its metadata note, which
 * the stand-in does not read). */
#define _GNU_SOURCE
#include <hip/hip_runtime_api.h>
#include <string.h>

#include "array.h"
#include "hip_internal.h"

hipError_t hipMallocArray(hipArray** a, const hipChannelFormatDesc* f, size_t w, size_t h, unsigned flags) {
    ENTER;
    RET(si_array_create((si_array**)a, f, w, h, 0, flags));
}
hipError_t hipMalloc3DArray(hipArray** a, const struct hipChannelFormatDesc* f, struct hipExtent e, unsigned flags) {
    ENTER;
    RET(si_array_create((si_array**)a, f, e.width, e.height, e.depth, flags));
}
hipError_t hipMallocMipmappedArray(hipMipmappedArray_t* m, const struct hipChannelFormatDesc* f, struct hipExtent e,
                                   unsigned levels, unsigned flags) {
    ENTER;
    RET(si_mipmap_create((si_array**)m, f, e.width, e.height, e.depth, levels, flags));
}
hipError_t hipGetMipmappedArrayLevel(hipArray_t* a, hipMipmappedArray_const_t m, unsigned level) {
    ENTER;
    RET(si_mipmap_level((si_array**)a, m, level));
}
hipError_t hipFreeArray(hipArray* a) { ENTER; RET(a ? si_array_destroy(a, 0) : hipSuccess); }
hipError_t hipFreeMipmappedArray(hipMipmappedArray_t m) { ENTER; RET(m ? si_array_destroy(m, 1) : hipSuccess); }

/* ---- copies ---- */

static int to_array(const void* a, size_t x, size_t y, const void* s, size_t sp, size_t w, size_t h, int kind,
                    hipStream_t st, int sync) {
    void* at;
    size_t pitch;
    int r = si_array_region(a, x, y, w, h, &at, &pitch);
    if (r) return r;
    if (kind == hipMemcpyDeviceToHost || kind == hipMemcpyHostToHost) return hipErrorInvalidMemcpyDirection;
    return si_copy2d(at, pitch, s, sp, w, h, kind, si_stream_of(st), sync);
}
static int from_array(void* d, size_t dp, const void* a, size_t x, size_t y, size_t w, size_t h, int kind,
                      hipStream_t st, int sync) {
    void* at;
    size_t pitch;
    int r = si_array_region(a, x, y, w, h, &at, &pitch);
    if (r) return r;
    if (kind == hipMemcpyHostToDevice || kind == hipMemcpyHostToHost) return hipErrorInvalidMemcpyDirection;
    return si_copy2d(d, dp, at, pitch, w, h, kind, si_stream_of(st), sync);
}
/* A linear copy of `count` bytes from (x, y): whole rows after the first. */
static int linear_region(const void* a, size_t x, size_t y, size_t count, void** at) {
    size_t pitch, rows, elem;
    void* data;
    int r = si_array_region(a, x, y, 0, 0, at, &pitch);
    if (r) return r;
    si_array_pitched(a, &data, &pitch, &rows, &elem);
    size_t from = (size_t)((char*)*at - (char*)data);
    return count <= pitch * rows - from ? hipSuccess : hipErrorInvalidValue;
}

hipError_t hipMemcpy2DToArray(hipArray* a, size_t x, size_t y, const void* s, size_t sp, size_t w, size_t h,
                              hipMemcpyKind k) {
    ENTER;
    RET(to_array(a, x, y, s, sp, w, h, (int)k, 0, 1));
}
hipError_t hipMemcpy2DToArrayAsync(hipArray* a, size_t x, size_t y, const void* s, size_t sp, size_t w, size_t h,
                                   hipMemcpyKind k, hipStream_t st) {
    ENTER;
    RET(to_array(a, x, y, s, sp, w, h, (int)k, st, 0));
}
hipError_t hipMemcpy2DFromArray(void* d, size_t dp, hipArray_const_t a, size_t x, size_t y, size_t w, size_t h,
                                hipMemcpyKind k) {
    ENTER;
    RET(from_array(d, dp, a, x, y, w, h, (int)k, 0, 1));
}
hipError_t hipMemcpy2DFromArrayAsync(void* d, size_t dp, hipArray_const_t a, size_t x, size_t y, size_t w, size_t h,
                                     hipMemcpyKind k, hipStream_t st) {
    ENTER;
    RET(from_array(d, dp, a, x, y, w, h, (int)k, st, 0));
}
hipError_t hipMemcpyToArray(hipArray* a, size_t x, size_t y, const void* s, size_t n, hipMemcpyKind k) {
    ENTER;
    void* at;
    int r = linear_region(a, x, y, n, &at);
    if (r) RET(r);
    RET(si_copy2d(at, n, s, n, n, 1, (int)k, si_stream_of(0), 1));
}
hipError_t hipMemcpyFromArray(void* d, hipArray_const_t a, size_t x, size_t y, size_t n, hipMemcpyKind k) {
    ENTER;
    void* at;
    int r = linear_region(a, x, y, n, &at);
    if (r) RET(r);
    RET(si_copy2d(d, n, at, n, n, 1, (int)k, si_stream_of(0), 1));
}

/* ---- objects ---- */

hipError_t hipCreateTextureObject(hipTextureObject_t* t, const hipResourceDesc* r, const hipTextureDesc* td,
                                  const struct hipResourceViewDesc* v) {
    ENTER;
    RET(si_object_create((uint64_t*)t, 0, r, sizeof *r, td, sizeof *td, v, v ? sizeof *v : 0));
}
hipError_t hipDestroyTextureObject(hipTextureObject_t t) { ENTER; RET(si_object_destroy((uint64_t)(uintptr_t)t, 0)); }
hipError_t hipGetTextureObjectResourceDesc(hipResourceDesc* out, hipTextureObject_t t) {
    ENTER;
    RET(si_object_desc((uint64_t)(uintptr_t)t, 0, 0, out, sizeof *out));
}
hipError_t hipGetTextureObjectTextureDesc(hipTextureDesc* out, hipTextureObject_t t) {
    ENTER;
    RET(si_object_desc((uint64_t)(uintptr_t)t, 0, 1, out, sizeof *out));
}
hipError_t hipGetTextureObjectResourceViewDesc(struct hipResourceViewDesc* out, hipTextureObject_t t) {
    ENTER;
    RET(si_object_desc((uint64_t)(uintptr_t)t, 0, 2, out, sizeof *out));
}
/* hipCreateSurfaceObject(hipSurfaceObject_t*, const hipResourceDesc*) */
hipError_t _Z22hipCreateSurfaceObjectPP13__hip_surfacePK15hipResourceDesc(hipSurfaceObject_t* s,
                                                                          const hipResourceDesc* r);
hipError_t _Z22hipCreateSurfaceObjectPP13__hip_surfacePK15hipResourceDesc(hipSurfaceObject_t* s,
                                                                          const hipResourceDesc* r) {
    ENTER;
    RET(si_object_create((uint64_t*)s, 1, r, sizeof *r, 0, 0, 0, 0));
}
/* hipDestroySurfaceObject(hipSurfaceObject_t) */
hipError_t _Z23hipDestroySurfaceObjectP13__hip_surface(hipSurfaceObject_t s);
hipError_t _Z23hipDestroySurfaceObjectP13__hip_surface(hipSurfaceObject_t s) {
    ENTER;
    RET(si_object_destroy((uint64_t)(uintptr_t)s, 1));
}

hipChannelFormatDesc hipCreateChannelDesc(int x, int y, int z, int w, hipChannelFormatKind f) {
    hipChannelFormatDesc d = {x, y, z, w, f};
    return d;
}
