/* The stand-in HIP runtime's code objects: fat binaries registered by the constructors
 * hipcc and clang emit (`__hipRegisterFatBinary/Function/Var`), modules a program loads
 * (`hipModule*`), device variables and their copies, and launches (checked, counted,
 * never run). Every image is parsed by amdgpu.c for the device's target. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codeobject.h"
#include "hip_internal.h"

#define arch si_hip_arch

static uint64_t rd64(const unsigned char* p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* The extent of an image handed over by pointer only: an offload bundle's furthest
 * entry, or an ELF's section header table end. 0: neither. */
static size_t image_size(const unsigned char* p) {
    if (!memcmp(p, "__CLANG_OFFLOAD_BUNDLE__", 24)) {
        uint64_t n = rd64(p + 24), at = 32, end = 32;
        if (n == 0 || n > 4096) return 0;
        for (uint64_t i = 0; i < n; i++) {
            uint64_t off = rd64(p + at), size = rd64(p + at + 8), tlen = rd64(p + at + 16);
            if (tlen > 4096 || off + size < off) return 0;
            at += 24 + tlen;
            if (off + size > end) end = off + size;
            if (at > end) end = at;
        }
        return end <= ((uint64_t)4 << 30) ? (size_t)end : 0;
    }
    if (!memcmp(p, "\x7f" "ELF", 4)) {
        uint64_t shoff = rd64(p + 0x28);
        uint16_t shnum;
        memcpy(&shnum, p + 0x3c, 2);
        return (size_t)(shoff + (uint64_t)shnum * 64);
    }
    return 0;
}

/* A device variable: its storage, initialised from the image. */
struct var {
    const void* host; /* the host shadow (registered variables), or null (module globals) */
    const char* name;
    char* storage;
    size_t size;
    const unsigned char* init;
    struct var* next;
};

static int new_storage(struct var* v) {
    void* p;
    int r = si_alloc(&p, v->size, SI_SYMBOL);
    if (r) return r;
    v->storage = p;
    if (v->init) memcpy(p, v->init, v->size);
    return 0;
}

/* ---- fat binaries ---- */

struct fatbin {
    void* self; /* the handle given out is &self */
    struct si_image im;
};
struct func {
    const void* stub;
    const struct si_kernel* k;
    struct func* next;
};
static struct func* funcs;
static struct var* vars;

struct hip_wrapper {
    uint32_t magic, version;
    const void* binary;
    void* unused;
};

void** __hipRegisterFatBinary(const void* data) {
    ENTER;
    const struct hip_wrapper* w = data;
    if (!w || w->magic != 0x48495046 /* "HIPF" */ || !w->binary)
        si_hip_broken("__hipRegisterFatBinary", "not a HIP fat binary wrapper");
    size_t n = image_size(w->binary);
    if (!n) si_hip_broken("__hipRegisterFatBinary", "the fat binary is neither an offload bundle nor an ELF");
    struct fatbin* fb = calloc(1, sizeof *fb);
    if (!fb) si_hip_broken("__hipRegisterFatBinary", "out of memory");
    int no_entry;
    const char* e = si_amdgpu_image(w->binary, n, arch(), &fb->im, &no_entry);
    /* As HIP 5.2 does: "Unable to find code object for all current devices!", then abort. */
    if (e) si_hip_broken("__hipRegisterFatBinary", e);
    si_counts.code_objects++;
    si_counts.kernels += fb->im.nkernels;
    fb->self = fb;
    si_unlock();
    return &fb->self;
}

void __hipRegisterFunction(void** h, const void* stub, char* dev_fn, const char* dev_name,
                           unsigned limit, void* tid, void* bid, dim3* bdim, dim3* gdim, int* wsize) {
    (void)dev_fn; (void)limit; (void)tid; (void)bid; (void)bdim; (void)gdim; (void)wsize;
    ENTER;
    struct fatbin* fb = h ? (struct fatbin*)*h : 0;
    if (!fb || !dev_name) si_hip_broken("__hipRegisterFunction", "no fat binary handle or name");
    const struct si_kernel* k = si_image_kernel(&fb->im, dev_name);
    if (!k) si_hip_broken("__hipRegisterFunction: the code object defines no such kernel", dev_name);
    struct func* f = calloc(1, sizeof *f);
    if (!f) si_hip_broken("__hipRegisterFunction", "out of memory");
    *f = (struct func){stub, k, funcs};
    funcs = f;
    si_unlock();
}

void __hipRegisterVar(void** h, void* var, char* host_name, char* dev_name, int ext, size_t size,
                      int constant, int global) {
    (void)host_name; (void)ext; (void)constant; (void)global;
    ENTER;
    struct fatbin* fb = h ? (struct fatbin*)*h : 0;
    if (!fb || !dev_name) si_hip_broken("__hipRegisterVar", "no fat binary handle or name");
    const struct si_global* g = si_image_global(&fb->im, dev_name);
    if (!g) si_hip_broken("__hipRegisterVar: the code object defines no such variable", dev_name);
    if (g->size != size) si_hip_broken("__hipRegisterVar: the code object's size differs", dev_name);
    struct var* v = calloc(1, sizeof *v);
    if (!v) si_hip_broken("__hipRegisterVar", "out of memory");
    *v = (struct var){var, g->name, 0, size, g->init, vars};
    if (new_storage(v)) si_hip_broken("__hipRegisterVar", "out of memory");
    vars = v;
    si_unlock();
}

void __hipUnregisterFatBinary(void** h) {
    (void)h; /* at exit: what it registered stays valid until the process ends */
}

/* ---- launches ---- */

static int launch(const struct si_kernel* k, dim3 g, dim3 b, size_t shmem, hipStream_t s) {
    si_stream* st = si_stream_of(s);
    if (!k) return hipErrorInvalidDeviceFunction;
    if (!st) return hipErrorInvalidHandle;
    if (!g.x || !g.y || !g.z || !b.x || !b.y || !b.z) return hipErrorInvalidConfiguration;
    if (b.x > 1024 || b.y > 1024 || b.z > 1024 || (uint64_t)b.x * b.y * b.z > 1024) return hipErrorInvalidConfiguration;
    if (g.y > 65535 || g.z > 65535 || g.x > 0x7fffffffu) return hipErrorInvalidConfiguration;
    if (shmem > 64 << 10) return hipErrorInvalidValue;
    return si_enqueue_launch(st, k->name);
}

static const struct si_kernel* kernel_of_stub(const void* stub) {
    for (struct func* f = funcs; f; f = f->next)
        if (f->stub == stub) return f->k;
    return 0;
}

hipError_t hipLaunchKernel(const void* stub, dim3 g, dim3 b, void** args, size_t shmem, hipStream_t s) {
    (void)args;
    ENTER;
    RET(launch(kernel_of_stub(stub), g, b, shmem, s));
}

/* `<<<>>>`: the configuration is pushed, the stub pops it and calls hipLaunchKernel. */
static __thread struct { dim3 g, b; size_t shmem; hipStream_t s; } configs[16];
static __thread int nconfigs;
hipError_t __hipPushCallConfiguration(dim3 g, dim3 b, size_t shmem, hipStream_t s) {
    if (nconfigs == 16) return hipErrorInvalidConfiguration;
    configs[nconfigs].g = g;
    configs[nconfigs].b = b;
    configs[nconfigs].shmem = shmem;
    configs[nconfigs].s = s;
    nconfigs++;
    return hipSuccess;
}
hipError_t __hipPopCallConfiguration(dim3* g, dim3* b, size_t* shmem, hipStream_t* s) {
    if (!nconfigs) return hipErrorInvalidConfiguration;
    nconfigs--;
    *g = configs[nconfigs].g;
    *b = configs[nconfigs].b;
    *shmem = configs[nconfigs].shmem;
    *s = configs[nconfigs].s;
    return hipSuccess;
}

/* ---- modules ---- */

struct module {
    struct si_image im;
    struct var* globals;
    struct module* next;
};
static struct module* modules;
struct function {
    struct module* m;
    const struct si_kernel* k;
    struct function* next;
};
static struct function* functions;

static struct module* live_module(hipModule_t h) {
    for (struct module* m = modules; m; m = m->next)
        if ((hipModule_t)m == h) return m;
    return 0;
}

hipError_t hipModuleLoadData(hipModule_t* out, const void* image) {
    ENTER;
    if (!out || !image) RET(hipErrorInvalidValue);
    size_t n = image_size(image);
    if (!n) RET(hipErrorInvalidImage);
    struct module* m = calloc(1, sizeof *m);
    if (!m) RET(hipErrorOutOfMemory);
    int no_entry;
    const char* e = si_amdgpu_image(image, n, arch(), &m->im, &no_entry);
    if (e) {
        fprintf(stderr, "hrr stand-in HIP runtime (%s): hipModuleLoadData: %s\n", arch(), e);
        si_image_free(&m->im);
        free(m);
        RET(no_entry ? hipErrorNoBinaryForGpu : hipErrorInvalidImage);
    }
    for (size_t i = 0; i < m->im.nglobals; i++) {
        const struct si_global* g = &m->im.globals[i];
        struct var* v = calloc(1, sizeof *v);
        if (!v) RET(hipErrorOutOfMemory);
        *v = (struct var){0, g->name, 0, g->size, g->init, m->globals};
        if (new_storage(v)) {
            free(v);
            RET(hipErrorOutOfMemory);
        }
        m->globals = v;
    }
    si_counts.code_objects++;
    si_counts.kernels += m->im.nkernels;
    m->next = modules;
    modules = m;
    *out = (hipModule_t)m;
    RET(hipSuccess);
}
hipError_t hipModuleLoadDataEx(hipModule_t* out, const void* image, unsigned n, hipJitOption* o, void** v) {
    (void)n; (void)o; (void)v;
    return hipModuleLoadData(out, image);
}
hipError_t hipModuleLoad(hipModule_t* out, const char* path) {
    if (!path) return hipErrorInvalidValue;
    FILE* f = fopen(path, "rb");
    if (!f) return hipErrorFileNotFound;
    char* buf = 0;
    size_t len = 0, cap = 0, got;
    do {
        if (len == cap) {
            cap = cap ? cap * 2 : 1 << 16;
            char* nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                fclose(f);
                return hipErrorOutOfMemory;
            }
            buf = nb;
        }
        got = fread(buf + len, 1, cap - len, f);
        len += got;
    } while (got);
    fclose(f);
    /* The image stays mapped for the module's life (its globals' initial bytes). */
    hipError_t r = len >= 64 ? hipModuleLoadData(out, buf) : hipErrorInvalidImage;
    if (r) free(buf);
    return r;
}
hipError_t hipModuleUnload(hipModule_t h) {
    ENTER;
    struct module* m = live_module(h);
    if (!m) RET(hipErrorInvalidHandle);
    si_device_sync();
    for (struct module** p = &modules; *p; p = &(*p)->next)
        if (*p == m) {
            *p = m->next;
            break;
        }
    for (struct function** p = &functions; *p;) {
        if ((*p)->m == m) {
            struct function* f = *p;
            *p = f->next;
            free(f);
        } else {
            p = &(*p)->next;
        }
    }
    for (struct var* v = m->globals; v;) {
        struct var* next = v->next;
        si_free(v->storage, SI_SYMBOL);
        free(v);
        v = next;
    }
    si_image_free(&m->im);
    free(m);
    RET(hipSuccess);
}
hipError_t hipModuleGetFunction(hipFunction_t* out, hipModule_t h, const char* name) {
    ENTER;
    struct module* m = live_module(h);
    if (!out || !name) RET(hipErrorInvalidValue);
    if (!m) RET(hipErrorInvalidHandle);
    const struct si_kernel* k = si_image_kernel(&m->im, name);
    if (!k) RET(hipErrorNotFound);
    struct function* f = calloc(1, sizeof *f);
    if (!f) RET(hipErrorOutOfMemory);
    *f = (struct function){m, k, functions};
    functions = f;
    *out = (hipFunction_t)f;
    RET(hipSuccess);
}
hipError_t hipModuleGetGlobal(hipDeviceptr_t* d, size_t* bytes, hipModule_t h, const char* name) {
    ENTER;
    struct module* m = live_module(h);
    if (!name) RET(hipErrorInvalidValue);
    if (!m) RET(hipErrorInvalidHandle);
    for (struct var* v = m->globals; v; v = v->next)
        if (!strcmp(v->name, name)) {
            if (d) *d = v->storage;
            if (bytes) *bytes = v->size;
            RET(hipSuccess);
        }
    RET(hipErrorNotFound);
}

static const struct si_kernel* kernel_of_function(hipFunction_t h) {
    for (struct function* f = functions; f; f = f->next)
        if ((hipFunction_t)f == h) return f->k;
    return 0;
}

hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                 unsigned by, unsigned bz, unsigned shmem, hipStream_t s, void** params,
                                 void** extra) {
    ENTER;
    if (params && extra) RET(hipErrorInvalidValue);
    dim3 g = {gx, gy, gz}, b = {bx, by, bz};
    RET(launch(kernel_of_function(f), g, b, shmem, s));
}

hipError_t hipExtModuleLaunchKernel(hipFunction_t f, uint32_t gwx, uint32_t gwy, uint32_t gwz, uint32_t lx,
                                    uint32_t ly, uint32_t lz, size_t shmem, hipStream_t s, void** params,
                                    void** extra, hipEvent_t start, hipEvent_t stop, uint32_t flags) {
    (void)flags;
    ENTER;
    if (!lx || !ly || !lz) RET(hipErrorInvalidConfiguration);
    if (params && extra) RET(hipErrorInvalidValue);
    dim3 g = {(gwx + lx - 1) / lx, (gwy + ly - 1) / ly, (gwz + lz - 1) / lz}, b = {lx, ly, lz};
    si_stream* st = si_stream_of(s);
    if (start && si_event_record(si_event_of(start), st)) RET(hipErrorInvalidHandle);
    int r = launch(kernel_of_function(f), g, b, shmem, s);
    if (!r && stop) r = si_event_record(si_event_of(stop), st);
    RET(r);
}

/* ---- device variables of registered code ---- */

static struct var* var_of(const void* symbol) {
    for (struct var* v = vars; v; v = v->next)
        if (v->host == symbol) return v;
    return 0;
}

hipError_t hipGetSymbolAddress(void** d, const void* symbol) {
    ENTER;
    struct var* v = var_of(symbol);
    if (!d) RET(hipErrorInvalidValue);
    if (!v) RET(hipErrorInvalidSymbol);
    *d = v->storage;
    RET(hipSuccess);
}
hipError_t hipGetSymbolSize(size_t* n, const void* symbol) {
    ENTER;
    struct var* v = var_of(symbol);
    if (!n) RET(hipErrorInvalidValue);
    if (!v) RET(hipErrorInvalidSymbol);
    *n = v->size;
    RET(hipSuccess);
}

static int symbol_copy(char* dst, const char* src, size_t n, int kind, int to_symbol, struct var* v,
                       size_t off, si_stream* st, int sync) {
    if (!v) return hipErrorInvalidSymbol;
    if (!st) return hipErrorInvalidHandle;
    if (off > v->size || n > v->size - off) return hipErrorInvalidValue;
    if (to_symbol ? (kind == 0 || kind == 2) : (kind == 0 || kind == 1)) return hipErrorInvalidMemcpyDirection;
    if (kind < 0 || kind > 4) return hipErrorInvalidMemcpyDirection;
    int r = si_check_copy(dst, n, src, n, to_symbol ? (kind == 3 ? 3 : 4) : (kind == 3 ? 3 : 4));
    if (r || !n) return r;
    if (sync) si_legacy_sync();
    r = si_enqueue_copy2d(st, dst, n, src, n, n, 1);
    if (!r && sync) si_stream_sync(st);
    return r;
}
hipError_t hipMemcpyToSymbol(const void* symbol, const void* src, size_t n, size_t off, hipMemcpyKind k) {
    ENTER;
    struct var* v = var_of(symbol);
    RET(symbol_copy(v ? v->storage + off : 0, src, n, (int)k, 1, v, off, si_stream_of(0), 1));
}
hipError_t hipMemcpyFromSymbol(void* dst, const void* symbol, size_t n, size_t off, hipMemcpyKind k) {
    ENTER;
    struct var* v = var_of(symbol);
    RET(symbol_copy(dst, v ? v->storage + off : 0, n, (int)k, 0, v, off, si_stream_of(0), 1));
}
hipError_t hipMemcpyToSymbolAsync(const void* symbol, const void* src, size_t n, size_t off, hipMemcpyKind k,
                                  hipStream_t s) {
    ENTER;
    struct var* v = var_of(symbol);
    RET(symbol_copy(v ? v->storage + off : 0, src, n, (int)k, 1, v, off, si_stream_of(s), 0));
}
hipError_t hipMemcpyFromSymbolAsync(void* dst, const void* symbol, size_t n, size_t off, hipMemcpyKind k,
                                    hipStream_t s) {
    ENTER;
    struct var* v = var_of(symbol);
    RET(symbol_copy(dst, v ? v->storage + off : 0, n, (int)k, 0, v, off, si_stream_of(s), 0));
}

/* ---- launch configuration ---- */

/* A registered kernel's stub or a module function (what replay passes). */
static const struct si_kernel* kernel_of_any(const void* h) {
    const struct si_kernel* k = kernel_of_stub(h);
    return k ? k : kernel_of_function((hipFunction_t)h);
}

/* AMD keeps no per-function setting: the values are checked against what the device
 * accepts (64 KiB of LDS a workgroup) and the call succeeds, as HIP's does. */
hipError_t hipFuncSetAttribute(const void* func, hipFuncAttribute a, int v) {
    ENTER;
    if (!kernel_of_any(func)) RET(hipErrorInvalidDeviceFunction);
    if (a == hipFuncAttributeMaxDynamicSharedMemorySize && v >= 0 && v <= 64 << 10) RET(hipSuccess);
    if (a == hipFuncAttributePreferredSharedMemoryCarveout && v >= -1 && v <= 100) RET(hipSuccess);
    RET(hipErrorInvalidValue);
}
hipError_t hipFuncSetCacheConfig(const void* func, hipFuncCache_t c) {
    ENTER;
    if (!kernel_of_any(func)) RET(hipErrorInvalidDeviceFunction);
    RET((unsigned)c <= hipFuncCachePreferEqual ? hipSuccess : hipErrorInvalidValue);
}

/* A cooperative grid must be resident at once: the stand-in device has one compute unit
 * of 2048 work-items (hipGetDeviceProperties). */
static int cooperative(const struct si_kernel* k, dim3 g, dim3 b, size_t shmem, hipStream_t s) {
    uint64_t threads = (uint64_t)b.x * b.y * b.z, blocks = (uint64_t)g.x * g.y * g.z;
    if (k && threads && threads <= 1024 && blocks > 2048 / threads) return hipErrorCooperativeLaunchTooLarge;
    return launch(k, g, b, shmem, s);
}
hipError_t hipLaunchCooperativeKernel(const void* stub, dim3 g, dim3 b, void** args, unsigned shmem, hipStream_t s) {
    ENTER;
    if (!args) RET(hipErrorInvalidValue);
    RET(cooperative(kernel_of_stub(stub), g, b, shmem, s));
}
/* HIP 6's module form (HIP 5.2's headers lack it; replay calls it for cooperative launches). */
hipError_t hipModuleLaunchCooperativeKernel(hipFunction_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                            unsigned by, unsigned bz, unsigned shmem, hipStream_t s, void** params);
hipError_t hipModuleLaunchCooperativeKernel(hipFunction_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                            unsigned by, unsigned bz, unsigned shmem, hipStream_t s, void** params) {
    ENTER;
    if (!params) RET(hipErrorInvalidValue);
    dim3 g = {gx, gy, gz}, b = {bx, by, bz};
    RET(cooperative(kernel_of_function(f), g, b, shmem, s));
}

/* Graph kernel nodes: the kernel (a registered stub, or a module function as replay
 * passes) must be known; the node then runs in its graph like an empty node, since the
 * stand-in runs no kernel (its launches are not counted in the exit report). */
static const struct si_kernel* node_kernel(const hipKernelNodeParams* p) {
    if (!p || !p->func) return 0;
    const struct si_kernel* k = kernel_of_stub(p->func);
    return k ? k : kernel_of_function((hipFunction_t)p->func);
}
hipError_t hipGraphAddKernelNode(hipGraphNode_t* out, hipGraph_t g, const hipGraphNode_t* d, size_t n,
                                 const hipKernelNodeParams* p) {
    ENTER;
    if (!node_kernel(p)) RET(hipErrorInvalidDeviceFunction);
    RET(si_graph_add_empty((si_node**)out, si_graph_of(g), (si_node* const*)d, n));
}
hipError_t hipGraphKernelNodeSetParams(hipGraphNode_t node, const hipKernelNodeParams* p) {
    ENTER;
    RET(node && node_kernel(p) ? hipSuccess : hipErrorInvalidValue);
}
hipError_t hipGraphExecKernelNodeSetParams(hipGraphExec_t x, hipGraphNode_t node, const hipKernelNodeParams* p) {
    ENTER;
    RET(si_graph_exec_of(x) && node && node_kernel(p) ? hipSuccess : hipErrorInvalidValue);
}
