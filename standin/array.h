/* Arrays and texture/surface objects of the stand-in runtimes (array.c), shared by the
 * vendor files cuda_array.c and hip_array.c; both vendors' descriptors have the same
 * numbers (resource types, memcpy kinds). */
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "core.h"

typedef struct si_array si_array;

/* An array of w x h x d elements of `elem` bytes (h, d: 0 counts as 1); `format` is the
 * program's channel descriptor (20 bytes), kept for info queries. */
int si_array_create(si_array** out, const void* format, size_t w, size_t h, size_t d, unsigned flags);
/* A mipmapped array of `levels` levels, each half the last (at least 1) in every extent. */
int si_mipmap_create(si_array** out, const void* format, size_t w, size_t h, size_t d, unsigned levels,
                     unsigned flags);
int si_mipmap_level(si_array** out, const void* mipmap, unsigned level);
/* Plane `plane` of a multi-planar (NV12) array; invalid value for any other array. */
int si_array_plane(si_array** out, const void* handle, unsigned plane);
/* The live array (mipmap: 0) or mipmapped array (1) a handle names; 0 if none. */
si_array* si_array_of(const void* handle, int mipmap);
int si_array_destroy(const void* handle, int mipmap);
/* The format, extent (elements) and flags of an array. */
int si_array_info(const void* handle, void* format, size_t* w, size_t* h, size_t* d, unsigned* flags);
/* An array as a pitched pointer: its data, row pitch in bytes, rows per slice, and the
 * bytes of one element. */
int si_array_pitched(const void* handle, void** ptr, size_t* pitch, size_t* rows, size_t* elem);
/* The address of byte column `x`, row `y` of an array for a `width` x `height` byte
 * region (checked to lie inside it), and its pitch. */
int si_array_region(const void* handle, size_t x, size_t y, size_t width, size_t height, void** at,
                    size_t* pitch);
/* A 2D copy checked as the vendors' copies are (kinds 0-4), on stream st. */
int si_copy2d(void* d, size_t dp, const void* s, size_t sp, size_t w, size_t h, int kind, si_stream* st,
              int sync);

/* Texture (surface 0) and surface (1) objects over a resource descriptor `res` of
 * `res_len` bytes (resType at 0, the array or pointer at 8); the texture and view
 * descriptors are kept for queries. Handles are meaningful in this process only. */
int si_object_create(uint64_t* out, int surface, const void* res, size_t res_len, const void* tex,
                     size_t tex_len, const void* view, size_t view_len);
int si_object_destroy(uint64_t handle, int surface);
/* Copies a live object's descriptor (0 resource, 1 texture, 2 view) to out. */
int si_object_desc(uint64_t handle, int surface, int which, void* out, size_t len);
/* A launch's arguments: every 8-byte word that has the form of an object handle must be
 * a live object of this process (a kernel given another process's object reads garbage
 * on a GPU; here the launch fails). */
int si_check_object_args(void** args, int nparams, const uint32_t* sizes);
/* A runtime 3D copy's parameters (`cudaMemcpy3DParms` / `hipMemcpy3DParms`, the same
 * 160-byte layout) with each array side made a pitched pointer into the array and the
 * extent's width (elements of the array) made bytes, written to `out`. */
int si_array_sides(const void* parms, void* out, size_t size);
