/* Arrays and texture/surface objects of the stand-in runtimes. An array is device memory
 * of the core (core.c) holding its elements row after row (pitch: width x element); a
 * mipmapped array holds one such array per level. Texture and surface objects are handles
 * naming a copy of their descriptors; each process numbers them from a base of its own
 * (its pid), as a GPU's objects mean nothing in another process, and a launch whose
 * argument carries a handle of that form that is not a live object here fails. No kernel
 * runs, so nothing samples or writes through them. */
#define _GNU_SOURCE
#include "array.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_LEVELS 16
struct si_array {
    unsigned char format[20];
    size_t elem, w, h, d;
    unsigned flags;
    char* data;
    int mipmap;
    unsigned nlevels;
    si_array* level[MAX_LEVELS];
    si_array* next_live;
};
static si_array* arrays;

static size_t element_bytes(const void* format) {
    int c[4];
    memcpy(c, format, sizeof c);
    long bits = (long)c[0] + c[1] + c[2] + c[3];
    return bits > 0 && bits % 8 == 0 ? (size_t)bits / 8 : 0;
}

static int make(si_array** out, const void* format, size_t w, size_t h, size_t d, unsigned flags) {
    if (!out || !format || !w) return SI_INVALID_VALUE;
    size_t elem = element_bytes(format);
    if (!elem) return SI_INVALID_VALUE;
    h = h ? h : 1, d = d ? d : 1;
    if (w > SIZE_MAX / elem / h / d) return SI_NO_MEMORY;
    si_array* a = calloc(1, sizeof *a);
    if (!a) return SI_NO_MEMORY;
    memcpy(a->format, format, sizeof a->format);
    a->elem = elem, a->w = w, a->h = h, a->d = d, a->flags = flags;
    int r = si_alloc((void**)&a->data, w * h * d * elem, SI_DEVICE);
    if (r) { free(a); return r; }
    *out = a;
    return SI_OK;
}
static void link_live(si_array* a) { a->next_live = arrays, arrays = a; }

/* cudaChannelFormatKindNV12: two planes, luma (one byte an element) and the chroma pairs
 * of 2x2 pixels (two bytes an element, half the width and height). */
#define KIND_NV12 4
int si_array_create(si_array** out, const void* format, size_t w, size_t h, size_t d, unsigned flags) {
    int kind;
    memcpy(&kind, (const char*)format + 16, sizeof kind);
    int r = make(out, format, w, h, d, flags);
    if (r || kind != KIND_NV12) {
        if (!r) link_live(*out);
        return r;
    }
    static const int luma[5] = {8, 0, 0, 0, 1}, chroma[5] = {8, 8, 0, 0, 1};
    si_array* a = *out;
    if ((r = make(&a->level[0], luma, w, h, 1, flags)) || (r = make(&a->level[1], chroma, w / 2 ? w / 2 : 1, h / 2 ? h / 2 : 1, 1, flags))) {
        if (a->level[0]) { si_free(a->level[0]->data, SI_DEVICE); free(a->level[0]); }
        si_free(a->data, SI_DEVICE);
        free(a);
        return r;
    }
    a->nlevels = 2;
    link_live(a);
    return SI_OK;
}

int si_array_plane(si_array** out, const void* handle, unsigned plane) {
    si_array* a = si_array_of(handle, 0);
    if (!out) return SI_INVALID_VALUE;
    if (!a) return SI_INVALID_HANDLE;
    if (plane >= a->nlevels) return SI_INVALID_VALUE; /* not multi-planar, or no such plane */
    *out = a->level[plane];
    return SI_OK;
}

int si_mipmap_create(si_array** out, const void* format, size_t w, size_t h, size_t d, unsigned levels,
                     unsigned flags) {
    if (!out || !format || !w || !levels || levels > MAX_LEVELS) return SI_INVALID_VALUE;
    si_array* m = calloc(1, sizeof *m);
    if (!m) return SI_NO_MEMORY;
    memcpy(m->format, format, sizeof m->format);
    m->mipmap = 1, m->w = w, m->h = h, m->d = d, m->flags = flags, m->elem = element_bytes(format);
    for (unsigned i = 0; i < levels; i++) {
        int r = make(&m->level[i], format, w, h, d, flags);
        if (r) {
            while (i--) { si_free(m->level[i]->data, SI_DEVICE); free(m->level[i]); }
            free(m);
            return r;
        }
        m->nlevels++;
        w = w > 1 ? w / 2 : 1, h = h > 1 ? h / 2 : h, d = d > 1 ? d / 2 : d;
    }
    link_live(m);
    *out = m;
    return SI_OK;
}

si_array* si_array_of(const void* handle, int mipmap) {
    for (si_array* a = arrays; a; a = a->next_live) {
        if (a == handle && a->mipmap == mipmap) return a;
        if (!mipmap) /* a mipmapped array's levels, a multi-planar array's planes */
            for (unsigned i = 0; i < a->nlevels; i++)
                if (a->level[i] == handle) return a->level[i];
    }
    return 0;
}

int si_mipmap_level(si_array** out, const void* mipmap, unsigned level) {
    si_array* m = si_array_of(mipmap, 1);
    if (!out) return SI_INVALID_VALUE;
    if (!m) return SI_INVALID_HANDLE;
    if (level >= m->nlevels) return SI_INVALID_VALUE;
    *out = m->level[level];
    return SI_OK;
}

int si_array_destroy(const void* handle, int mipmap) {
    si_device_sync();
    for (si_array** p = &arrays; *p; p = &(*p)->next_live) {
        si_array* a = *p;
        if (a != handle || a->mipmap != mipmap) continue;
        *p = a->next_live;
        if (a->data) si_free(a->data, SI_DEVICE);
        for (unsigned i = 0; i < a->nlevels; i++) { si_free(a->level[i]->data, SI_DEVICE); free(a->level[i]); }
        free(a);
        return SI_OK;
    }
    return SI_INVALID_HANDLE;
}

int si_array_info(const void* handle, void* format, size_t* w, size_t* h, size_t* d, unsigned* flags) {
    si_array* a = si_array_of(handle, 0);
    if (!a) return SI_INVALID_HANDLE;
    if (format) memcpy(format, a->format, sizeof a->format);
    if (w) *w = a->w;
    if (h) *h = a->h;
    if (d) *d = a->d;
    if (flags) *flags = a->flags;
    return SI_OK;
}

int si_array_pitched(const void* handle, void** ptr, size_t* pitch, size_t* rows, size_t* elem) {
    si_array* a = si_array_of(handle, 0);
    if (!a) return SI_INVALID_HANDLE;
    *ptr = a->data, *pitch = a->w * a->elem, *rows = a->h, *elem = a->elem;
    return SI_OK;
}

int si_array_region(const void* handle, size_t x, size_t y, size_t width, size_t height, void** at,
                    size_t* pitch) {
    si_array* a = si_array_of(handle, 0);
    if (!a) return SI_INVALID_HANDLE;
    size_t p = a->w * a->elem, rows = a->h * a->d;
    if (x > p || width > p - x || y > rows || height > rows - y) return SI_INVALID_VALUE;
    *at = a->data + y * p + x, *pitch = p;
    return SI_OK;
}

int si_copy2d(void* d, size_t dp, const void* s, size_t sp, size_t w, size_t h, int kind, si_stream* st,
              int sync) {
    if (!st) return SI_INVALID_HANDLE;
    if (!w || !h) return SI_OK;
    if (w > dp || w > sp || h - 1 > (SIZE_MAX - w) / (dp > sp ? dp : sp)) return SI_INVALID_VALUE;
    int r = si_check_copy(d, (h - 1) * dp + w, s, (h - 1) * sp + w, kind);
    if (r) return r;
    if (sync) si_legacy_sync();
    r = si_enqueue_copy2d(st, d, dp, s, sp, w, h);
    if (!r && sync) si_stream_sync(st);
    return r;
}

/* ---- objects ---- */

#define MAX_DESC 144
struct object {
    uint64_t handle;
    int surface;
    unsigned char desc[3][MAX_DESC];
    struct object* next;
};
static struct object* objects;
static uint64_t next_index;

/* A handle: a tag in the top bits, this process's pid, an index. */
#define OBJECT_TAG 0x0b1eull
static uint64_t object_base(void) { return OBJECT_TAG << 48 | ((uint64_t)getpid() & 0xffffff) << 24; }
static int has_object_form(uint64_t v) { return v >> 48 == OBJECT_TAG; }

static struct object* find(uint64_t h, int surface) {
    for (struct object* o = objects; o; o = o->next)
        if (o->handle == h && (surface < 0 || o->surface == surface)) return o;
    return 0;
}

int si_object_create(uint64_t* out, int surface, const void* res, size_t res_len, const void* tex,
                     size_t tex_len, const void* view, size_t view_len) {
    if (!out || !res || res_len > MAX_DESC || tex_len > MAX_DESC || view_len > MAX_DESC) return SI_INVALID_VALUE;
    if (!surface && !tex) return SI_INVALID_VALUE;
    int type;
    const void* what;
    memcpy(&type, res, sizeof type);
    memcpy(&what, (const char*)res + 8, sizeof what);
    switch (type) {
    case 0: if (!si_array_of(what, 0)) return SI_INVALID_HANDLE; break;
    case 1: if (surface || !si_array_of(what, 1)) return surface ? SI_INVALID_VALUE : SI_INVALID_HANDLE; break;
    case 2: case 3: {
        enum si_mem k;
        size_t left;
        if (surface) return SI_INVALID_VALUE;
        if (!si_lookup(what, &k, &left) || k != SI_DEVICE) return SI_INVALID_VALUE;
        break;
    }
    default: return SI_INVALID_VALUE;
    }
    struct object* o = calloc(1, sizeof *o);
    if (!o) return SI_NO_MEMORY;
    o->surface = surface;
    o->handle = object_base() | (++next_index & 0xffffff);
    memcpy(o->desc[0], res, res_len);
    if (tex) memcpy(o->desc[1], tex, tex_len);
    if (view) memcpy(o->desc[2], view, view_len);
    o->next = objects, objects = o;
    *out = o->handle;
    return SI_OK;
}

int si_object_destroy(uint64_t h, int surface) {
    for (struct object** p = &objects; *p; p = &(*p)->next)
        if ((*p)->handle == h && (*p)->surface == surface) {
            struct object* o = *p;
            *p = o->next;
            free(o);
            return SI_OK;
        }
    return SI_INVALID_VALUE;
}

int si_object_desc(uint64_t h, int surface, int which, void* out, size_t len) {
    struct object* o = find(h, surface);
    if (!out || which < 0 || which > 2 || len > MAX_DESC) return SI_INVALID_VALUE;
    if (!o) return SI_INVALID_VALUE;
    memcpy(out, o->desc[which], len);
    return SI_OK;
}

int si_check_object_args(void** args, int nparams, const uint32_t* sizes) {
    if (!args) return SI_OK;
    for (int i = 0; i < nparams; i++) {
        if (!args[i]) continue;
        for (uint32_t at = 0; at + 8 <= sizes[i]; at += 8) {
            uint64_t v;
            memcpy(&v, (const char*)args[i] + at, sizeof v);
            if (has_object_form(v) && !find(v, -1)) return SI_INVALID_VALUE;
        }
    }
    return SI_OK;
}

/* ---- 3D copies ---- */

/* The layout both vendors' 3D copy parameters share (api::memcpy3d in the archive). */
struct parms3d {
    const void* src_array;
    size_t src_pos[3];
    void* src_ptr;
    size_t src_pitch, src_xsize, src_ysize;
    const void* dst_array;
    size_t dst_pos[3];
    void* dst_ptr;
    size_t dst_pitch, dst_xsize, dst_ysize;
    size_t extent[3];
    int kind;
};
_Static_assert(sizeof(struct parms3d) == 160, "3D copy parameters are 160 bytes");

static int array_side(const void* a, void** ptr, size_t* pitch, size_t* xsize, size_t* ysize, size_t* pos_x,
                      size_t* elem) {
    size_t rows;
    int r = si_array_pitched(a, ptr, pitch, &rows, elem);
    if (r) return r;
    *xsize = *pitch, *ysize = rows;
    *pos_x *= *elem;
    return SI_OK;
}

int si_array_sides(const void* parms, void* out, size_t size) {
    struct parms3d q;
    if (!parms || size != sizeof q) return SI_INVALID_VALUE;
    memcpy(&q, parms, sizeof q);
    size_t es = 0, ed = 0;
    int r = SI_OK;
    if (q.src_array)
        r = array_side(q.src_array, &q.src_ptr, &q.src_pitch, &q.src_xsize, &q.src_ysize, &q.src_pos[0], &es);
    if (!r && q.dst_array)
        r = array_side(q.dst_array, &q.dst_ptr, &q.dst_pitch, &q.dst_xsize, &q.dst_ysize, &q.dst_pos[0], &ed);
    if (r) return r;
    if (es && ed && es != ed) return SI_INVALID_VALUE;
    size_t e = es ? es : ed;
    if (e) {
        if (q.extent[0] > SIZE_MAX / e) return SI_INVALID_VALUE;
        q.extent[0] *= e;
    }
    q.src_array = q.dst_array = 0;
    memcpy(out, &q, sizeof q);
    return SI_OK;
}
