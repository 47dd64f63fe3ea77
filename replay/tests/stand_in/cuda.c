/* A stand-in CUDA runtime for replay's GPU-free tests: "device" memory is host memory
 * from malloc, copies are memmove, launches do nothing. It checks what a GPU runtime
 * checks: every device-side range must lie inside one live allocation it made (an
 * error code otherwise, never a wild access), and allocations are bounded. Host-side
 * pointers are replay's own buffers and are used as given: a copy that reads past one
 * is replay's bug, and shows up as a crash of the replay process. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ALLOCS 4096
#define MAX_ONE (64u << 20)
#define MAX_TOTAL (256u << 20)

struct alloc { char *p; size_t n; int live; };
static struct alloc allocs[MAX_ALLOCS];
static int nallocs;
static size_t total;
static uintptr_t next_handle = 0x1000;

enum { OK = 0, INVALID_VALUE = 1, NO_MEMORY = 2 };

static struct alloc *find(const void *p) {
    for (int i = 0; i < nallocs; i++)
        if ((const char *)p >= allocs[i].p && (const char *)p < allocs[i].p + allocs[i].n)
            return &allocs[i];
    return 0;
}

/* 1: [p, p+n) is device memory inside one live allocation; 0: host memory (replay's);
 * -1: neither (null, a freed allocation, or running past an allocation's end). */
static int side(const void *p, size_t n) {
    if (!p) return n ? -1 : 0;
    struct alloc *a = find(p);
    if (!a) return 0;
    if (!a->live) return -1;
    size_t off = (size_t)((const char *)p - a->p);
    return n <= a->n - off ? 1 : -1;
}

static int allocate(void **out, size_t n) {
    if (!out) return INVALID_VALUE;
    if (n == 0) { *out = 0; return OK; }
    if (n > MAX_ONE || total + n > MAX_TOTAL || nallocs == MAX_ALLOCS) return NO_MEMORY;
    char *p = calloc(1, n);
    if (!p) return NO_MEMORY;
    allocs[nallocs++] = (struct alloc){p, n, 1};
    total += n;
    *out = p;
    return OK;
}

static int release(void *p) {
    if (!p) return OK;
    struct alloc *a = find(p);
    if (!a || !a->live || a->p != (char *)p) return INVALID_VALUE;
    /* Kept, not freed: a later use of the address is refused, not a use after free. */
    a->live = 0;
    total -= a->n;
    return OK;
}

int cudaGetDeviceCount(int *n) { if (!n) return INVALID_VALUE; *n = 1; return OK; }
int cudaSetDevice(int d) { return d == 0 ? OK : INVALID_VALUE; }
int cudaGetDevice(int *d) { if (!d) return INVALID_VALUE; *d = 0; return OK; }
static void land_queued(void);
int cudaDeviceSynchronize(void) { land_queued(); return OK; }
int cudaDeviceReset(void) {
    for (int i = 0; i < nallocs; i++) if (allocs[i].live) release(allocs[i].p);
    return OK;
}
int cudaGetDeviceProperties_v2(void *prop, int d) {
    if (!prop || d != 0) return INVALID_VALUE;
    memset(prop, 0, 1024);
    return OK;
}
int cudaMalloc(void **p, size_t n) { return allocate(p, n); }
int cudaFree(void *p) { return release(p); }
int cudaMallocHost(void **p, size_t n) { return allocate(p, n); }
int cudaHostAlloc(void **p, size_t n, unsigned flags) { (void)flags; return allocate(p, n); }
int cudaFreeHost(void *p) { return release(p); }
int cudaMallocPitch(void **p, size_t *pitch, size_t w, size_t h) {
    if (!pitch) return INVALID_VALUE;
    size_t pw = (w + 255) & ~(size_t)255;
    if (pw < w || (h && pw > SIZE_MAX / h)) return NO_MEMORY;
    *pitch = pw;
    return allocate(p, pw * h);
}
int cudaHostRegister(void *p, size_t n, unsigned f) { (void)p; (void)n; (void)f; return INVALID_VALUE; }
int cudaHostUnregister(void *p) { (void)p; return INVALID_VALUE; }

static int copy(void *d, const void *s, size_t n) {
    int ds = side(d, n), ss = side(s, n);
    if (ds < 0 || ss < 0 || (n && (!d || !s))) return INVALID_VALUE;
    memmove(d, s, n);
    return OK;
}
int cudaMemcpy(void *d, const void *s, size_t n, int kind) {
    if (kind < 0 || kind > 4) return INVALID_VALUE;
    land_queued();
    return copy(d, s, n);
}
/* An asynchronous copy into host memory lands when its stream, an event or the device
 * is waited for (as on a GPU it may): a replay that reads its result before waiting sees
 * the old bytes. Queued in issue order, one queue for all streams. */
#define MAX_QUEUED 256
static struct { void *d; const void *s; size_t n; } queued[MAX_QUEUED];
static int nqueued;
static void land_queued(void) {
    for (int i = 0; i < nqueued; i++) memmove(queued[i].d, queued[i].s, queued[i].n);
    nqueued = 0;
}
int cudaMemcpyAsync(void *d, const void *s, size_t n, int kind, void *stream) {
    (void)stream;
    if (kind < 0 || kind > 4) return INVALID_VALUE;
    if (n && d && side(d, n) == 0 && side(s, n) == 1) {
        if (nqueued == MAX_QUEUED) land_queued();
        queued[nqueued++] = (typeof(queued[0])){d, s, n};
        return OK;
    }
    return cudaMemcpy(d, s, n, kind);
}
int cudaMemset(void *p, int v, size_t n) {
    if (side(p, n) != 1) return INVALID_VALUE;
    memset(p, v, n);
    return OK;
}
int cudaMemsetAsync(void *p, int v, size_t n, void *s) { (void)s; return cudaMemset(p, v, n); }

/* The span a pitched region covers: (h - 1) * pitch + w, or 0 on overflow. */
static int span(size_t pitch, size_t w, size_t h, size_t *out) {
    if (h == 0 || w == 0) { *out = 0; return 1; }
    if (w > pitch) return 0;
    if (h - 1 > (SIZE_MAX - w) / pitch) return 0;
    *out = (h - 1) * pitch + w;
    return 1;
}
int cudaMemcpy2D(void *d, size_t dp, const void *s, size_t sp, size_t w, size_t h, int kind) {
    size_t dn, sn;
    if (kind < 0 || kind > 4 || !span(dp, w, h, &dn) || !span(sp, w, h, &sn)) return INVALID_VALUE;
    if (side(d, dn) < 0 || side(s, sn) < 0 || (dn && (!d || !s))) return INVALID_VALUE;
    for (size_t r = 0; r < h; r++) memmove((char *)d + r * dp, (const char *)s + r * sp, w);
    return OK;
}
int cudaMemcpy2DAsync(void *d, size_t dp, const void *s, size_t sp, size_t w, size_t h, int k, void *st) {
    (void)st;
    return cudaMemcpy2D(d, dp, s, sp, w, h, k);
}
int cudaMemset2D(void *p, size_t pitch, int v, size_t w, size_t h) {
    size_t n;
    if (!span(pitch, w, h, &n) || side(p, n) != 1) return INVALID_VALUE;
    for (size_t r = 0; r < h; r++) memset((char *)p + r * pitch, v, w);
    return OK;
}
int cudaMemset2DAsync(void *p, size_t pitch, int v, size_t w, size_t h, void *s) {
    (void)s;
    return cudaMemset2D(p, pitch, v, w, h);
}
/* 3D copies are not emulated. */
int cudaMemcpy3D(const void *p) { (void)p; return INVALID_VALUE; }
int cudaMemcpy3DAsync(const void *p, void *s) { (void)p; (void)s; return INVALID_VALUE; }

static int handle(void **out) {
    if (!out) return INVALID_VALUE;
    *out = (void *)(next_handle += 16);
    return OK;
}
int cudaStreamCreate(void **s) { return handle(s); }
int cudaStreamCreateWithFlags(void **s, unsigned f) { (void)f; return handle(s); }
int cudaStreamCreateWithPriority(void **s, unsigned f, int p) { (void)f; (void)p; return handle(s); }
int cudaStreamDestroy(void *s) { (void)s; return OK; }
int cudaStreamSynchronize(void *s) { (void)s; land_queued(); return OK; }
int cudaStreamQuery(void *s) { (void)s; return OK; }
int cudaStreamWaitEvent(void *s, void *e, unsigned f) { (void)s; (void)e; (void)f; return OK; }
int cudaEventCreate(void **e) { return handle(e); }
int cudaEventCreateWithFlags(void **e, unsigned f) { (void)f; return handle(e); }
int cudaEventRecord(void *e, void *s) { (void)e; (void)s; return OK; }
int cudaEventSynchronize(void *e) { (void)e; land_queued(); return OK; }
int cudaEventQuery(void *e) { (void)e; return nqueued ? 600 : OK; }
int cudaEventElapsedTime(float *ms, void *a, void *b) {
    (void)a; (void)b;
    if (!ms) return INVALID_VALUE;
    *ms = 0.0f;
    return OK;
}
int cudaEventDestroy(void *e) { (void)e; return OK; }

/* The driver side replay uses for kernels: modules and functions are tokens, a launch
 * does nothing, no module has variables. */
int cuModuleLoadData(void **m, const void *image) {
    if (!image) return INVALID_VALUE;
    return handle(m);
}
int cuModuleUnload(void *m) { (void)m; return OK; }
int cuModuleGetFunction(void **f, void *m, const char *name) {
    if (!m || !name) return INVALID_VALUE;
    return handle(f);
}
int cuModuleGetGlobal_v2(uint64_t *d, size_t *n, void *m, const char *name) {
    (void)d; (void)n; (void)m; (void)name;
    return 500;
}
int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                   unsigned bz, unsigned shmem, void *stream, void **params, void **extra) {
    (void)gx; (void)gy; (void)gz; (void)bx; (void)by; (void)bz; (void)shmem; (void)stream;
    (void)params; (void)extra;
    return f ? OK : INVALID_VALUE;
}
