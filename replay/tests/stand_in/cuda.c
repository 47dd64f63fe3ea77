/* A stand-in CUDA runtime for replay's GPU-free tests: "device" memory is host memory
 * from malloc, copies are memmove, launches do nothing. It checks what a GPU runtime
 * checks: every device-side range must lie inside one live allocation it made (an
 * error code otherwise, never a wild access), and allocations are bounded. Host-side
 * pointers are replay's own buffers and are used as given: a copy that reads past one
 * is replay's bug, and shows up as a crash of the replay process. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
/* A range that starts in an allocation it does not fit (or in a freed one) is out of
 * bounds: refused, and with HRR_STAND_IN_OOB_LOG=FILE one line appended there, so the
 * fuzzer counts the calls replay handed the runtime unchecked (issue 20: target 0). */
static int out_of_bounds(const void *p, size_t n) {
    const char *log = getenv("HRR_STAND_IN_OOB_LOG");
    FILE *f = log ? fopen(log, "a") : 0;
    if (f) {
        fprintf(f, "%p +%zu\n", p, n);
        fclose(f);
    }
    return -1;
}
static int side(const void *p, size_t n) {
    if (!p) return n ? -1 : 0;
    struct alloc *a = find(p);
    if (!a) return 0;
    if (!a->live) return out_of_bounds(p, n);
    size_t off = (size_t)((const char *)p - a->p);
    return n <= a->n - off ? 1 : out_of_bounds(p, n);
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
    /* A second free of a freed allocation is what glibc aborts on; tests that must tell
       it from a refused free set HRR_STAND_IN_ABORT_ON_DOUBLE_FREE. */
    if (a && !a->live && a->p == (char *)p && getenv("HRR_STAND_IN_ABORT_ON_DOUBLE_FREE")) abort();
    if (!a || !a->live || a->p != (char *)p) return INVALID_VALUE;
    /* Kept, not freed: a later use of the address is refused, not a use after free. */
    a->live = 0;
    total -= a->n;
    return OK;
}

/* A kernel fault, on demand: HRR_STAND_IN_FAULT=CODE makes the first device
   synchronisation return CODE, and every allocation, copy and free after it too (a
   sticky error, as a GPU runtime's after an illegal address). */
static int sticky;

int cudaGetDeviceCount(int *n) { if (!n) return INVALID_VALUE; *n = 1; return OK; }
int cudaSetDevice(int d) { return d == 0 ? OK : INVALID_VALUE; }
int cudaGetDevice(int *d) { if (!d) return INVALID_VALUE; *d = 0; return OK; }
static void land_queued(void);
int cudaDeviceSynchronize(void) {
    land_queued();
    /* A kernel that never ends, on demand: the synchronisation waits this many seconds. */
    const char *hang = getenv("HRR_STAND_IN_HANG");
    if (hang) sleep((unsigned)atoi(hang));
    const char *f = getenv("HRR_STAND_IN_FAULT");
    if (f && !sticky) sticky = atoi(f);
    return sticky ? sticky : OK;
}
int cudaDeviceReset(void) {
    for (int i = 0; i < nallocs; i++) if (allocs[i].live) release(allocs[i].p);
    return OK;
}
int cudaGetDeviceProperties_v2(void *prop, int d) {
    if (!prop || d != 0) return INVALID_VALUE;
    memset(prop, 0, 1024);
    return OK;
}
int cudaMalloc(void **p, size_t n) { return sticky ? sticky : allocate(p, n); }
int cudaFree(void *p) { return sticky ? sticky : release(p); }
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
/* Nondeterminism on demand (replay/tests/stability.rs), in device-to-host results:
 * HRR_STAND_IN_VARY="START:LEN" XORs bytes [START, START+LEN) of each such result with a
 * count of them (1..255, so no two results in a row agree there), as a float atomic sum
 * varies from run to run; HRR_STAND_IN_SKEW="OFFSET" XORs byte OFFSET with 0x5a in every
 * result alike, a deterministic regression. */
static void vary(char *d, size_t n) {
    static unsigned count;
    const char *v = getenv("HRR_STAND_IN_VARY"), *k = getenv("HRR_STAND_IN_SKEW");
    if (v) {
        unsigned long start = strtoul(v, 0, 10), len = 0;
        const char *colon = strchr(v, ':');
        if (colon) len = strtoul(colon + 1, 0, 10);
        count = count % 255 + 1;
        for (unsigned long i = start; i < start + len && i < n; i++) d[i] ^= (char)count;
    }
    if (k) {
        unsigned long at = strtoul(k, 0, 10);
        if (at < n) d[at] ^= 0x5a;
    }
}
int cudaMemcpy(void *d, const void *s, size_t n, int kind) {
    if (sticky) return sticky;
    if (kind < 0 || kind > 4) return INVALID_VALUE;
    land_queued();
    int d2h = n && d && s && side(d, n) == 0 && side(s, n) == 1;
    int r = copy(d, s, n);
    if (r == OK && d2h) vary(d, n);
    return r;
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
 * does nothing; each module has one variable of 16 bytes of its own, whatever its name
 * (device memory, allocated when the module is loaded). */
#define MAX_MODULES 64
static struct { void *token; void *global; } modules[MAX_MODULES];
static int nmodules;
int cuModuleLoadData(void **m, const void *image) {
    if (!image || nmodules == MAX_MODULES) return INVALID_VALUE;
    int r = handle(m);
    if (r != OK) return r;
    modules[nmodules].token = *m;
    if (allocate(&modules[nmodules].global, 16) != OK) return NO_MEMORY;
    nmodules++;
    return OK;
}
int cuModuleUnload(void *m) { (void)m; return OK; }
int cuModuleGetFunction(void **f, void *m, const char *name) {
    if (!m || !name) return INVALID_VALUE;
    return handle(f);
}
int cuModuleGetGlobal_v2(uint64_t *d, size_t *n, void *m, const char *name) {
    if (!d || !n || !name) return INVALID_VALUE;
    for (int i = 0; i < nmodules; i++)
        if (modules[i].token == m) {
            *d = (uint64_t)(uintptr_t)modules[i].global;
            *n = 16;
            return OK;
        }
    return 500; /* CUDA_ERROR_NOT_FOUND */
}
/* Dynamic shared memory per function, as a GPU enforces it: 48 KiB unless raised by
 * cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES), at most 227 KiB. */
#define DEFAULT_DYN_SMEM (48u << 10)
#define MAX_DYN_SMEM (227u << 10)
static struct { void *f; unsigned max_dyn; } fattrs[256];
static int nfattrs;
static unsigned max_dyn_of(void *f) {
    for (int i = 0; i < nfattrs; i++)
        if (fattrs[i].f == f) return fattrs[i].max_dyn;
    return DEFAULT_DYN_SMEM;
}
int cuFuncSetAttribute(void *f, int attr, int value) {
    if (!f || attr < 8 || attr > 17 || attr == 16 || value < 0) return INVALID_VALUE;
    if (attr != 8) return OK;
    if ((unsigned)value > MAX_DYN_SMEM) return INVALID_VALUE;
    for (int i = 0; i < nfattrs; i++)
        if (fattrs[i].f == f) { fattrs[i].max_dyn = (unsigned)value; return OK; }
    if (nfattrs == 256) return NO_MEMORY;
    fattrs[nfattrs].f = f;
    fattrs[nfattrs++].max_dyn = (unsigned)value;
    return OK;
}
int cuFuncSetCacheConfig(void *f, int c) { return f && c >= 0 && c <= 3 ? OK : INVALID_VALUE; }
int cuFuncSetSharedMemConfig(void *f, int c) { return f && c >= 0 && c <= 2 ? OK : INVALID_VALUE; }
static int launchable(void *f, unsigned shmem) {
    return f && shmem <= max_dyn_of(f) ? OK : INVALID_VALUE;
}
int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                   unsigned bz, unsigned shmem, void *stream, void **params, void **extra) {
    (void)gx; (void)gy; (void)gz; (void)bx; (void)by; (void)bz; (void)stream;
    (void)params; (void)extra;
    return launchable(f, shmem);
}

/* The driver API's rows (ids 200-299), which replay calls through the library
 * HRR_REPLAY_LIBCUDA names (this one in tests): contexts are tokens, one is current;
 * copies and memsets check their device side as the runtime's do. */
typedef unsigned long long CUdeviceptr;
static void *current_ctx;
int cuInit(unsigned f) { return f == 0 ? OK : INVALID_VALUE; }
int cuDeviceGetCount(int *n) { if (!n) return INVALID_VALUE; *n = 1; return OK; }
int cuDeviceGet(int *d, int ordinal) {
    if (!d || ordinal != 0) return INVALID_VALUE;
    *d = 0;
    return OK;
}
int cuCtxCreate_v4(void **ctx, void *params, unsigned flags, int dev) {
    (void)flags;
    if (params || dev != 0) return INVALID_VALUE;
    int r = handle(ctx);
    if (r == OK) current_ctx = *ctx;
    return r;
}
int cuCtxDestroy_v2(void *ctx) {
    if (!ctx) return INVALID_VALUE;
    if (ctx == current_ctx) current_ctx = 0;
    return OK;
}
int cuCtxSetCurrent(void *ctx) { current_ctx = ctx; return OK; }
// Device 0's primary context: one handle, whoever retains it.
static int primary_ctx;
int cuDevicePrimaryCtxRetain(void **ctx, int dev) {
    if (!ctx || dev != 0) return INVALID_VALUE;
    *ctx = &primary_ctx;
    return OK;
}
int cuDevicePrimaryCtxRelease_v2(int dev) { return dev == 0 ? OK : INVALID_VALUE; }
int cuDevicePrimaryCtxRelease(int dev) { return dev == 0 ? OK : INVALID_VALUE; }
int cuCtxGetCurrent(void **ctx) {
    if (!ctx) return INVALID_VALUE;
    *ctx = current_ctx;
    return OK;
}
int cuCtxSynchronize(void) { return OK; }
int cuMemAlloc_v2(CUdeviceptr *d, size_t n) {
    void *p = 0;
    if (!d) return INVALID_VALUE;
    int r = allocate(&p, n);
    if (r == OK) *d = (CUdeviceptr)(uintptr_t)p;
    return r;
}
int cuMemFree_v2(CUdeviceptr d) { return release((void *)(uintptr_t)d); }
#define DEV(d) ((void *)(uintptr_t)(d))
int cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n) {
    if (side(DEV(d), n) != 1 || side(s, n) != 0 || (n && !s)) return INVALID_VALUE;
    memmove(DEV(d), s, n);
    return OK;
}
int cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n) {
    if (side(DEV(s), n) != 1 || side(d, n) != 0 || (n && !d)) return INVALID_VALUE;
    memmove(d, DEV(s), n);
    return OK;
}
int cuMemcpyDtoD_v2(CUdeviceptr d, CUdeviceptr s, size_t n) {
    if (side(DEV(d), n) != 1 || side(DEV(s), n) != 1) return INVALID_VALUE;
    memmove(DEV(d), DEV(s), n);
    return OK;
}
int cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *s, size_t n, void *st) { (void)st; return cuMemcpyHtoD_v2(d, s, n); }
int cuMemcpyDtoHAsync_v2(void *d, CUdeviceptr s, size_t n, void *st) { (void)st; return cuMemcpyDtoH_v2(d, s, n); }
int cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr s, size_t n, void *st) { (void)st; return cuMemcpyDtoD_v2(d, s, n); }
static int fill(CUdeviceptr d, const void *v, size_t width, size_t n) {
    if (n > SIZE_MAX / width || side(DEV(d), n * width) != 1) return INVALID_VALUE;
    for (size_t i = 0; i < n; i++) memcpy((char *)DEV(d) + i * width, v, width);
    return OK;
}
int cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n) { return fill(d, &v, 1, n); }
int cuMemsetD16_v2(CUdeviceptr d, unsigned short v, size_t n) { return fill(d, &v, 2, n); }
int cuMemsetD32_v2(CUdeviceptr d, unsigned v, size_t n) { return fill(d, &v, 4, n); }
int cuMemsetD32Async(CUdeviceptr d, unsigned v, size_t n, void *st) { (void)st; return fill(d, &v, 4, n); }
/* CUDA_MEMCPY2D as 16 words: src x, y, memory type, host, device, array, pitch; the
 * same for dst; width in bytes, height. Host (1) and device (2) sides only. */
static int side_2d(const size_t *w, size_t width, size_t height, char **at) {
    unsigned type = (unsigned)w[2];
    size_t n;
    if ((type != 1 && type != 2) || w[5] || !span(w[6], width, height, &n)) return 0;
    char *base = (char *)(uintptr_t)(type == 1 ? w[3] : w[4]);
    if (!base || w[1] > SIZE_MAX / (w[6] ? w[6] : 1)) return 0;
    *at = base + w[1] * w[6] + w[0];
    return side(*at, n) == (type == 2 ? 1 : 0);
}
int cuMemcpy2D_v2(const void *p) {
    const size_t *w = p;
    char *s, *d;
    if (!w || !side_2d(w, w[14], w[15], &s) || !side_2d(w + 7, w[14], w[15], &d)) return INVALID_VALUE;
    for (size_t r = 0; r < w[15]; r++) memmove(d + r * w[13], s + r * w[6], w[14]);
    return OK;
}
int cuMemcpy2DAsync_v2(const void *p, void *st) { (void)st; return cuMemcpy2D_v2(p); }
int cuStreamCreate(void **s, unsigned f) { (void)f; return handle(s); }
int cuStreamDestroy_v2(void *s) { return s ? OK : INVALID_VALUE; }
int cuStreamSynchronize(void *s) { (void)s; return OK; }
int cuEventCreate(void **e, unsigned f) { (void)f; return handle(e); }
int cuEventRecord(void *e, void *s) { (void)s; return e ? OK : INVALID_VALUE; }
int cuEventDestroy_v2(void *e) { return e ? OK : INVALID_VALUE; }
int cuMemHostAlloc(void **p, size_t n, unsigned flags) { (void)flags; return allocate(p, n); }
int cuMemHostGetDevicePointer_v2(CUdeviceptr *d, void *p, unsigned flags) {
    if (!d || flags || side(p, 1) != 1) return INVALID_VALUE;
    *d = (CUdeviceptr)(uintptr_t)p;
    return OK;
}
int cuMemFreeHost(void *p) { return release(p); }
int cuLaunchCooperativeKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                              unsigned by, unsigned bz, unsigned shmem, void *stream,
                              void **params) {
    (void)by; (void)bz; (void)stream; (void)params;
    /* Every block must be resident at once: a small grid only. */
    if ((size_t)gx * gy * gz > 1024 || bx > 1024) return INVALID_VALUE;
    return launchable(f, shmem);
}
/* CUlaunchConfig and CUlaunchAttribute: the checks a GPU makes on what replay passes. */
struct launch_attr { unsigned id; char pad[4]; unsigned char val[64]; };
struct launch_config {
    unsigned grid[3], block[3], shmem;
    void *stream;
    struct launch_attr *attrs;
    unsigned num_attrs;
};
static uint64_t word(const unsigned char *v) { uint64_t w; memcpy(&w, v, 8); return w; }
static int is_handle(uint64_t h) { return h > 0x1000 && h <= next_handle; }
int cuLaunchKernelEx(const struct launch_config *c, void *f, void **params, void **extra) {
    (void)params; (void)extra;
    if (!c || (c->num_attrs && !c->attrs)) return INVALID_VALUE;
    for (unsigned i = 0; i < c->num_attrs; i++) {
        const struct launch_attr *a = &c->attrs[i];
        unsigned dims[3];
        memcpy(dims, a->val, sizeof dims);
        switch (a->id) {
        case 1: /* access policy window: its base must be device memory */
            if (side((const void *)(uintptr_t)word(a->val), 1) != 1) return INVALID_VALUE;
            break;
        case 4: /* cluster dimension: divides the grid */
            for (int d = 0; d < 3; d++)
                if (!dims[d] || c->grid[d] % dims[d]) return INVALID_VALUE;
            break;
        case 7: case 12: /* events: handles this runtime made */
            if (!is_handle(word(a->val))) return INVALID_VALUE;
            break;
        case 13: return INVALID_VALUE; /* graph kernel nodes only */
        default: break;
        }
    }
    return launchable(f, c->shmem);
}

/* Device settings. */
static int cache_config, shared_config;
static size_t limits[7] = {1024, 1 << 20, 8 << 20};
int cudaDeviceSetCacheConfig(int c) { if (c < 0 || c > 3) return INVALID_VALUE; cache_config = c; return OK; }
int cudaDeviceGetCacheConfig(int *c) { if (!c) return INVALID_VALUE; *c = cache_config; return OK; }
int cudaDeviceSetSharedMemConfig(int c) { if (c < 0 || c > 2) return INVALID_VALUE; shared_config = c; return OK; }
int cudaDeviceGetSharedMemConfig(int *c) { if (!c) return INVALID_VALUE; *c = shared_config; return OK; }
int cudaDeviceSetLimit(int l, size_t v) { if (l < 0 || l > 6) return INVALID_VALUE; limits[l] = v; return OK; }
int cudaDeviceGetLimit(size_t *v, int l) { if (!v || l < 0 || l > 6) return INVALID_VALUE; *v = limits[l]; return OK; }

/* Memory pools: the default pool and those created, as tokens; allocations from any of
 * them are device memory like cudaMalloc's. */
#define DEFAULT_POOL ((void *)(uintptr_t)0xd00)
static void *pools[64];
static int npools;
static void *current_pool = DEFAULT_POOL;
static int is_pool(void *p) {
    if (p == DEFAULT_POOL) return 1;
    for (int i = 0; i < npools; i++)
        if (pools[i] == p) return 1;
    return 0;
}
int cudaMallocAsync(void **p, size_t n, void *s) { (void)s; return is_pool(current_pool) ? allocate(p, n) : INVALID_VALUE; }
int cudaFreeAsync(void *p, void *s) { (void)s; return release(p); }
int cudaMallocFromPoolAsync(void **p, size_t n, void *pool, void *s) {
    (void)s;
    return is_pool(pool) ? allocate(p, n) : INVALID_VALUE;
}
int cudaMemPoolCreate(void **pool, const unsigned char *props) {
    /* Pinned, on device 0, and no Windows security pointer (it must be null here). */
    int type, loc, id;
    if (!pool || !props || npools == 64) return INVALID_VALUE;
    memcpy(&type, props, 4);
    memcpy(&loc, props + 8, 4);
    memcpy(&id, props + 12, 4);
    if (type != 1 || loc != 1 || id != 0 || word(props + 16) != 0) return INVALID_VALUE;
    if (handle(pool) != OK) return NO_MEMORY;
    pools[npools++] = *pool;
    return OK;
}
int cudaMemPoolDestroy(void *pool) {
    for (int i = 0; i < npools; i++)
        if (pools[i] == pool) { pools[i] = 0; return OK; }
    return INVALID_VALUE;
}
int cudaMemPoolSetAttribute(void *pool, int attr, const void *v) {
    if (!is_pool(pool) || !v) return INVALID_VALUE;
    if (attr >= 1 && attr <= 3) {
        int flag;
        memcpy(&flag, v, 4);
        return flag == 0 || flag == 1 ? OK : INVALID_VALUE;
    }
    return attr == 4 || attr == 6 || attr == 8 ? OK : INVALID_VALUE;
}
int cudaMemPoolGetAttribute(void *pool, int attr, void *v) {
    if (!is_pool(pool) || !v || attr < 1 || attr > 8) return INVALID_VALUE;
    if (attr <= 3) { int one = 1; memcpy(v, &one, 4); }
    else { uint64_t z = 0; memcpy(v, &z, 8); }
    return OK;
}
int cudaMemPoolTrimTo(void *pool, size_t keep) { (void)keep; return is_pool(pool) ? OK : INVALID_VALUE; }
int cudaDeviceGetDefaultMemPool(void **pool, int d) { if (!pool || d) return INVALID_VALUE; *pool = DEFAULT_POOL; return OK; }
int cudaDeviceSetMemPool(int d, void *pool) { if (d || !is_pool(pool)) return INVALID_VALUE; current_pool = pool; return OK; }
int cudaDeviceGetMemPool(void **pool, int d) { if (!pool || d) return INVALID_VALUE; *pool = current_pool; return OK; }
