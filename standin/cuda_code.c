/* The stand-in CUDA runtime's code: fat binaries nvcc's constructors register, kernel
 * handles (`__cudaGetKernel`, `cudaGetFuncBySymbol`) and their parameter layouts
 * (`cuKernelGetParamInfo`, `cuFuncGetParamInfo`, from the cubin), launches (checked and
 * counted; a kernel kernels.c knows runs there), modules (loading one while a capture
 * forbids it invalidates the capture) and libraries loaded through the driver API (a library's
 * kernels are CUkernel handles, each with its one CUfunction), and device variables. */
#define _GNU_SOURCE
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "codeobject.h"
#include "cuda_internal.h"

#define arch si_cuda_arch

/* A kernel handle: a registered stub's or a module function's. */
struct kfn {
    const void* stub; /* registered kernels; null for module functions */
    const struct si_kernel* k;
    const void* module;
    struct kfn* next;
    int max_dynamic_shmem; /* cudaFuncAttributeMaxDynamicSharedMemorySize; 0: the default 48 KiB */
    int is_kernel;         /* a library's CUkernel (cuLibraryGetKernel) */
    struct kfn* function;  /* a CUkernel's CUfunction (cuKernelGetFunction), made once */
};
static struct kfn* kfns;

struct var {
    const void* host;
    const char* name;
    char* storage;
    size_t size;
    const void* module;
    struct var* next;
};
static struct var* vars;

static int new_var(const void* host, const struct si_global* g, const void* module) {
    struct var* v = calloc(1, sizeof *v);
    void* p;
    if (!v || si_alloc(&p, g->size, SI_SYMBOL)) {
        free(v);
        return cudaErrorMemoryAllocation;
    }
    if (g->init) memcpy(p, g->init, g->size);
    *v = (struct var){host, g->name, p, g->size, module, vars};
    vars = v;
    return 0;
}

/* ---- registration ---- */

struct fatbin {
    void* self;
    struct si_image im;
};
struct cuda_wrapper {
    int magic, version;
    const unsigned char* data;
    void* unused;
};

static size_t fatbin_size(const unsigned char* p) {
    uint16_t h;
    uint64_t n;
    memcpy(&h, p + 6, 2);
    memcpy(&n, p + 8, 8);
    return (size_t)(h + n);
}

void** __cudaRegisterFatBinary(void* w_) {
    ENTER;
    const struct cuda_wrapper* w = w_;
    if (!w || (unsigned)w->magic != 0x466243b1u || !w->data)
        si_cuda_broken("__cudaRegisterFatBinary", "not a CUDA fat binary wrapper");
    uint32_t magic;
    memcpy(&magic, w->data, 4);
    if (magic != 0xBA55ED50u) si_cuda_broken("__cudaRegisterFatBinary", "not a fat binary");
    struct fatbin* fb = calloc(1, sizeof *fb);
    if (!fb) si_cuda_broken("__cudaRegisterFatBinary", "out of memory");
    int no_entry;
    const char* e = si_cuda_image(w->data, fatbin_size(w->data), arch(), &fb->im, &no_entry);
    if (e) si_cuda_broken("__cudaRegisterFatBinary", e);
    si_counts.code_objects++;
    si_counts.kernels += fb->im.nkernels;
    fb->self = fb;
    si_unlock();
    return &fb->self;
}
void __cudaRegisterFatBinaryEnd(void** h) { (void)h; }
void __cudaUnregisterFatBinary(void** h) { (void)h; /* at exit: nothing outlives the process */ }

void __cudaRegisterFunction(void** h, const char* stub, char* dev_fn, const char* dev_name, int limit,
                            uint3* tid, uint3* bid, dim3* bdim, dim3* gdim, int* wsize) {
    (void)dev_fn; (void)limit; (void)tid; (void)bid; (void)bdim; (void)gdim; (void)wsize;
    ENTER;
    struct fatbin* fb = h ? (struct fatbin*)*h : 0;
    if (!fb || !dev_name) si_cuda_broken("__cudaRegisterFunction", "no fat binary handle or name");
    const struct si_kernel* k = si_image_kernel(&fb->im, dev_name);
    if (!k) si_cuda_broken("__cudaRegisterFunction: the cubin defines no such kernel", dev_name);
    struct kfn* f = calloc(1, sizeof *f);
    if (!f) si_cuda_broken("__cudaRegisterFunction", "out of memory");
    *f = (struct kfn){stub, k, 0, kfns};
    kfns = f;
    si_unlock();
}

void __cudaRegisterVar(void** h, char* host_var, char* dev_addr, const char* dev_name, int ext, size_t size,
                       int constant, int global) {
    (void)dev_addr; (void)ext; (void)constant; (void)global;
    ENTER;
    struct fatbin* fb = h ? (struct fatbin*)*h : 0;
    if (!fb || !dev_name) si_cuda_broken("__cudaRegisterVar", "no fat binary handle or name");
    const struct si_global* g = si_image_global(&fb->im, dev_name);
    if (!g) si_cuda_broken("__cudaRegisterVar: the cubin defines no such variable", dev_name);
    if (g->size != size) si_cuda_broken("__cudaRegisterVar: the cubin's size differs", dev_name);
    if (new_var(host_var, g, 0)) si_cuda_broken("__cudaRegisterVar", "out of memory");
    si_unlock();
}

static struct kfn* by_stub(const void* stub) {
    for (struct kfn* f = kfns; f; f = f->next)
        if (f->stub && f->stub == stub) return f;
    return 0;
}
static struct kfn* by_handle(const void* h) {
    for (struct kfn* f = kfns; f; f = f->next)
        if ((const void*)f == h) return f;
    return 0;
}

cudaError_t __cudaGetKernel(cudaKernel_t* out, const void* stub) {
    ENTER;
    struct kfn* f = by_stub(stub);
    if (!out) RET(cudaErrorInvalidValue);
    if (!f) RET(cudaErrorInvalidDeviceFunction);
    *out = (cudaKernel_t)f;
    RET(cudaSuccess);
}
cudaError_t cudaGetFuncBySymbol(cudaFunction_t* out, const void* stub) {
    ENTER;
    struct kfn* f = by_stub(stub);
    if (!out) RET(cudaErrorInvalidValue);
    if (!f) RET(cudaErrorInvalidDeviceFunction);
    *out = (cudaFunction_t)f;
    RET(cudaSuccess);
}

static CUresult param_info(const void* h, size_t i, size_t* off, size_t* size) {
    si_lock();
    struct kfn* f = by_handle(h);
    CUresult r = CUDA_SUCCESS;
    if (!f) r = CUDA_ERROR_INVALID_HANDLE;
    else if (i >= (size_t)f->k->nparams) r = CUDA_ERROR_INVALID_VALUE;
    else {
        if (off) *off = f->k->param_offset[i];
        if (size) *size = f->k->param_size[i];
    }
    si_unlock();
    return r;
}
CUresult cuKernelGetParamInfo(CUkernel k, size_t i, size_t* off, size_t* size) { return param_info(k, i, off, size); }
CUresult cuFuncGetParamInfo(CUfunction f, size_t i, size_t* off, size_t* size) { return param_info(f, i, off, size); }

/* ---- launches ---- */

int si_cuda_kernel_launch(struct si_launch* l, const void* h, int stub, dim3 g, dim3 b, void** args) {
    const struct kfn* f = stub ? by_stub(h) : by_handle(h);
    if (!f) return cudaErrorInvalidDeviceFunction;
    *l = (struct si_launch){f->k->name, f->k->nparams, f->k->param_size, {g.x, g.y, g.z}, {b.x, b.y, b.z}, args};
    return 0;
}
static int launch(const struct kfn* f, dim3 g, dim3 b, size_t shmem, const void* s, void** args) {
    si_stream* st = si_stream_of(s);
    if (!f) return cudaErrorInvalidDeviceFunction;
    if (!st) return cudaErrorInvalidResourceHandle;
    if (!g.x || !g.y || !g.z || !b.x || !b.y || !b.z) return cudaErrorInvalidConfiguration;
    if (b.x > 1024 || b.y > 1024 || b.z > 64 || (uint64_t)b.x * b.y * b.z > 1024) return cudaErrorInvalidConfiguration;
    if (g.y > 65535 || g.z > 65535 || g.x > 0x7fffffffu) return cudaErrorInvalidConfiguration;
    if (shmem > (size_t)(f->max_dynamic_shmem > 48 << 10 ? f->max_dynamic_shmem : 48 << 10)) return cudaErrorInvalidValue;
    struct si_launch l;
    si_cuda_kernel_launch(&l, f, 0, g, b, args);
    return si_enqueue_kernel(st, &l);
}
/* A launch with its arguments: a texture or surface object in them must be live here. */
static int launch_args(const struct kfn* f, dim3 g, dim3 b, size_t shmem, const void* s, void** args) {
    if (f && si_check_object_args(args, f->k->nparams, f->k->param_size)) return cudaErrorInvalidValue;
    return launch(f, g, b, shmem, s, args);
}
cudaError_t __cudaLaunchKernel(const void* kernel, dim3 g, dim3 b, void** args, size_t shmem, cudaStream_t s) {
    ENTER;
    RET(launch_args(by_handle(kernel), g, b, shmem, s, args));
}
cudaError_t cudaLaunchKernel(const void* stub, dim3 g, dim3 b, void** args, size_t shmem, cudaStream_t s) {
    ENTER;
    RET(launch_args(by_stub(stub), g, b, shmem, s, args));
}
cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t* c, const void* stub, void** args) {
    ENTER;
    if (!c) RET(cudaErrorInvalidValue);
    struct kfn* f = by_stub(stub);
    if (!f) f = by_handle(stub); /* a cudaKernel_t is accepted as the function too */
    int r = si_cuda_launch_attrs(c->attrs, c->numAttrs, c->gridDim, c->blockDim);
    if (r) RET(r);
    RET(launch(f, c->gridDim, c->blockDim, c->dynamicSmemBytes, c->stream, args));
}
cudaError_t cudaLaunchCooperativeKernel(const void* stub, dim3 g, dim3 b, void** args, size_t shmem, cudaStream_t s) {
    ENTER;
    if (!args) RET(cudaErrorInvalidValue);
    if (!si_cuda_cooperative_fits(g, b)) RET(cudaErrorCooperativeLaunchTooLarge);
    RET(launch(by_stub(stub), g, b, shmem, s, args));
}

/* Function settings: the dynamic shared memory limit is kept and enforced at launch
 * (227 KiB at most, sm_90's opt-in); the others are checked and accepted. */
static int func_attribute(struct kfn* f, int attr, int v) {
    if (!f) return cudaErrorInvalidDeviceFunction;
    switch (attr) {
    case cudaFuncAttributeMaxDynamicSharedMemorySize:
        if (v < 0 || v > 227 << 10) return cudaErrorInvalidValue;
        f->max_dynamic_shmem = v;
        return cudaSuccess;
    case cudaFuncAttributePreferredSharedMemoryCarveout:
        return v >= -1 && v <= 100 ? cudaSuccess : cudaErrorInvalidValue;
    case cudaFuncAttributeNonPortableClusterSizeAllowed:
        return v == 0 || v == 1 ? cudaSuccess : cudaErrorInvalidValue;
    default:
        return cudaErrorInvalidValue;
    }
}
cudaError_t cudaFuncSetAttribute(const void* stub, enum cudaFuncAttribute a, int v) {
    ENTER;
    struct kfn* f = by_stub(stub);
    RET(func_attribute(f ? f : by_handle(stub), (int)a, v));
}
cudaError_t cudaFuncSetCacheConfig(const void* stub, enum cudaFuncCache c) {
    ENTER;
    struct kfn* f = by_stub(stub);
    if (!f && !by_handle(stub)) RET(cudaErrorInvalidDeviceFunction);
    RET((unsigned)c <= cudaFuncCachePreferEqual ? cudaSuccess : cudaErrorInvalidValue);
}

static __thread struct { dim3 g, b; size_t shmem; void* s; } configs[16];
static __thread int nconfigs;
unsigned __cudaPushCallConfiguration(dim3 g, dim3 b, size_t shmem, struct CUstream_st* s) {
    if (nconfigs == 16) return cudaErrorInvalidConfiguration;
    configs[nconfigs].g = g;
    configs[nconfigs].b = b;
    configs[nconfigs].shmem = shmem;
    configs[nconfigs].s = s;
    nconfigs++;
    return 0;
}
cudaError_t __cudaPopCallConfiguration(dim3* g, dim3* b, size_t* shmem, void* s) {
    if (!nconfigs) return cudaErrorInvalidConfiguration;
    nconfigs--;
    *g = configs[nconfigs].g;
    *b = configs[nconfigs].b;
    *shmem = configs[nconfigs].shmem;
    *(void**)s = configs[nconfigs].s;
    return cudaSuccess;
}

/* ---- modules (driver API) ---- */

struct module {
    struct si_image im;
    struct module* next;
    int library; /* loaded by cuLibraryLoadData: a CUlibrary, not a CUmodule */
    void* file;  /* cuModuleLoad's copy of the file */
};
static struct module* modules;

static struct module* live_any(const void* h) {
    for (struct module* m = modules; m; m = m->next)
        if ((const void*)m == h) return m;
    return 0;
}
static CUresult load(CUmodule* out, const void* image, int library, void* file) {
    if (!out || !image) return CUDA_ERROR_INVALID_VALUE;
    si_lock();
    int unsafe = si_capture_unsafe(); /* loading code during a capture invalidates it */
    if (unsafe) {
        si_unlock();
        return (CUresult)unsafe;
    }
    const unsigned char* p = image;
    uint32_t magic;
    memcpy(&magic, p, 4);
    size_t n;
    if (magic == 0xBA55ED50u) {
        n = fatbin_size(p);
    } else if (!memcmp(p, "\x7f" "ELF", 4)) {
        uint64_t shoff;
        uint16_t shnum;
        memcpy(&shoff, p + 0x28, 8);
        memcpy(&shnum, p + 0x3c, 2);
        n = (size_t)(shoff + (uint64_t)shnum * 64);
    } else {
        n = strlen(image); /* PTX text */
    }
    struct module* m = calloc(1, sizeof *m);
    if (!m) {
        si_unlock();
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    int no_entry;
    const char* e = si_cuda_image(p, n, arch(), &m->im, &no_entry);
    if (e) {
        fprintf(stderr, "hrr stand-in CUDA runtime (%s): cuModuleLoadData: %s\n", arch(), e);
        si_image_free(&m->im);
        free(m);
        si_unlock();
        return no_entry ? CUDA_ERROR_NO_BINARY_FOR_GPU : CUDA_ERROR_INVALID_IMAGE;
    }
    for (size_t i = 0; i < m->im.nglobals; i++)
        if (new_var(0, &m->im.globals[i], m)) {
            si_unlock();
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
    si_counts.code_objects++;
    si_counts.kernels += m->im.nkernels;
    m->library = library;
    m->file = file;
    m->next = modules;
    modules = m;
    *out = (CUmodule)m;
    si_unlock();
    return CUDA_SUCCESS;
}
CUresult cuModuleLoadData(CUmodule* out, const void* image) { return load(out, image, 0, 0); }
CUresult cuModuleLoadDataEx(CUmodule* out, const void* image, unsigned n, CUjit_option* o, void** v) {
    (void)n; (void)o; (void)v;
    return cuModuleLoadData(out, image);
}
/* A module file: read whole (a NUL after it, for PTX text), kept while the module lives. */
CUresult cuModuleLoad(CUmodule* out, const char* path) {
    if (!out || !path) return CUDA_ERROR_INVALID_VALUE;
    FILE* f = fopen(path, "rb");
    if (!f) return CUDA_ERROR_FILE_NOT_FOUND;
    char* buf = 0;
    size_t n = 0, cap = 0, got;
    do {
        if (n + 4097 > cap) {
            char* b = realloc(buf, cap = 2 * cap + 8192);
            if (!b) break;
            buf = b;
        }
        got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
    } while (got);
    fclose(f);
    if (!buf) return CUDA_ERROR_OUT_OF_MEMORY;
    buf[n] = 0;
    CUresult r = n ? load(out, buf, 0, buf) : CUDA_ERROR_INVALID_IMAGE;
    if (r) free(buf);
    return r;
}
CUresult cuLibraryLoadData(CUlibrary* out, const void* code, CUjit_option* jo, void** jv, unsigned nj,
                           CUlibraryOption* lo, void** lv, unsigned nl) {
    (void)jo; (void)jv; (void)nj; (void)lo; (void)lv; (void)nl;
    return load((CUmodule*)out, code, 1, 0);
}
static CUresult unload(const void* h, int library) {
    si_lock();
    struct module* m = live_any(h);
    if (m && m->library != library) m = 0;
    if (!m) {
        si_unlock();
        return CUDA_ERROR_INVALID_HANDLE;
    }
    si_device_sync();
    for (struct module** p = &modules; *p; p = &(*p)->next)
        if (*p == m) {
            *p = m->next;
            break;
        }
    for (struct kfn** p = &kfns; *p;) {
        if ((*p)->module == m) {
            struct kfn* f = *p;
            *p = f->next;
            free(f);
        } else {
            p = &(*p)->next;
        }
    }
    for (struct var** p = &vars; *p;) {
        if ((*p)->module == m) {
            struct var* v = *p;
            *p = v->next;
            si_free(v->storage, SI_SYMBOL);
            free(v);
        } else {
            p = &(*p)->next;
        }
    }
    si_image_free(&m->im);
    free(m->file);
    free(m);
    si_unlock();
    return CUDA_SUCCESS;
}
CUresult cuModuleUnload(CUmodule h) { return unload(h, 0); }
CUresult cuLibraryUnload(CUlibrary h) { return unload(h, 1); }
static CUresult get_function(struct kfn** out, const void* h, const char* name, int library) {
    if (!out || !name) return CUDA_ERROR_INVALID_VALUE;
    si_lock();
    int unsafe = si_capture_unsafe(); /* so does loading a function */
    if (unsafe) {
        si_unlock();
        return (CUresult)unsafe;
    }
    struct module* m = live_any(h);
    if (m && m->library != library) m = 0;
    CUresult r = CUDA_SUCCESS;
    const struct si_kernel* k = m ? si_image_kernel(&m->im, name) : 0;
    struct kfn* f = k ? calloc(1, sizeof *f) : 0;
    if (!m) r = CUDA_ERROR_INVALID_HANDLE;
    else if (!k) r = CUDA_ERROR_NOT_FOUND;
    else if (!f) r = CUDA_ERROR_OUT_OF_MEMORY;
    else {
        *f = (struct kfn){0, k, m, kfns, 0, library, 0};
        kfns = f;
        *out = f;
    }
    si_unlock();
    return r;
}
CUresult cuModuleGetFunction(CUfunction* out, CUmodule h, const char* name) {
    return get_function((struct kfn**)out, h, name, 0);
}
CUresult cuLibraryGetKernel(CUkernel* out, CUlibrary h, const char* name) {
    return get_function((struct kfn**)out, h, name, 1);
}
/* A library's kernels, in its image's order, as cuLibraryGetKernel gives each: at most n
 * (the slots past the library's count are left as they were). */
CUresult cuLibraryEnumerateKernels(CUkernel* out, unsigned n, CUlibrary h) {
    if (!out) return CUDA_ERROR_INVALID_VALUE;
    si_lock();
    struct module* m = live_any(h);
    CUresult r = m && m->library ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
    if (!r && n > m->im.nkernels) n = (unsigned)m->im.nkernels;
    for (unsigned i = 0; !r && i < n; i++) r = get_function((struct kfn**)&out[i], h, m->im.kernels[i].name, 1);
    si_unlock();
    return r;
}
CUresult cuLibraryGetKernelCount(unsigned* n, CUlibrary h) {
    if (!n) return CUDA_ERROR_INVALID_VALUE;
    si_lock();
    struct module* m = live_any(h);
    if (m && m->library) *n = (unsigned)m->im.nkernels;
    si_unlock();
    return m && m->library ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
CUresult cuKernelGetName(const char** name, CUkernel k) {
    if (!name) return CUDA_ERROR_INVALID_VALUE;
    si_lock();
    struct kfn* f = by_handle(k);
    if (f) *name = f->k->name;
    si_unlock();
    return f ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
/* A CUkernel's function in the current context (one device: one function per kernel). */
CUresult cuKernelGetFunction(CUfunction* out, CUkernel k) {
    if (!out) return CUDA_ERROR_INVALID_VALUE;
    si_lock();
    struct kfn* f = by_handle(k);
    CUresult r = CUDA_SUCCESS;
    if (!f || !f->is_kernel) r = CUDA_ERROR_INVALID_HANDLE;
    else if (!f->function && !(f->function = calloc(1, sizeof *f->function))) r = CUDA_ERROR_OUT_OF_MEMORY;
    else {
        if (!f->function->k) {
            *f->function = (struct kfn){0, f->k, f->module, kfns, 0, 0, 0};
            kfns = f->function;
        }
        *out = (CUfunction)f->function;
    }
    si_unlock();
    return r;
}
/* A global of a module, or of a library (its globals and managed variables: memory the
 * host sees here either way). */
static CUresult global_of(CUdeviceptr* d, size_t* bytes, const void* h, const char* name, int library) {
    if (!name) return CUDA_ERROR_INVALID_VALUE;
    si_lock();
    struct module* m = live_any(h);
    CUresult r = m && m->library == library ? CUDA_ERROR_NOT_FOUND : CUDA_ERROR_INVALID_HANDLE;
    for (struct var* v = vars; v && r == CUDA_ERROR_NOT_FOUND; v = v->next)
        if (v->module == (const void*)h && !strcmp(v->name, name)) {
            if (d) *d = (CUdeviceptr)(uintptr_t)v->storage;
            if (bytes) *bytes = v->size;
            r = CUDA_SUCCESS;
        }
    si_unlock();
    return r;
}
CUresult cuModuleGetGlobal_v2(CUdeviceptr* d, size_t* bytes, CUmodule h, const char* name) {
    return global_of(d, bytes, h, name, 0);
}
CUresult cuLibraryGetGlobal(CUdeviceptr* d, size_t* bytes, CUlibrary h, const char* name) {
    return global_of(d, bytes, h, name, 1);
}
CUresult cuLibraryGetManaged(CUdeviceptr* d, size_t* bytes, CUlibrary h, const char* name) {
    return global_of(d, bytes, h, name, 1);
}
/* `extra`'s argument buffer (CU_LAUNCH_PARAM_BUFFER_POINTER and _SIZE, then _END): its
 * size must be the kernel's parameter block's. */
static int extra_ok(const struct kfn* f, void** extra) {
    const void* buf = 0;
    size_t size = (size_t)-1;
    for (int i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
        if (i >= 16) return 0;
        if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) buf = extra[i + 1];
        else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE && extra[i + 1]) size = *(const size_t*)extra[i + 1];
        else return 0;
    }
    return buf && (!f || size == f->k->kernarg_size);
}
CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shmem, CUstream s, void** params, void** extra) {
    if (params && extra) return CUDA_ERROR_INVALID_VALUE;
    si_lock();
    dim3 g = {gx, gy, gz}, b = {bx, by, bz};
    struct kfn* fn = by_handle(f);
    if (extra && !extra_ok(fn, extra)) {
        si_unlock();
        return CUDA_ERROR_INVALID_VALUE;
    }
    int r = launch_args(fn, g, b, shmem, s, params);
    si_unlock();
    /* The runtime's numbers, as the driver's: invalid value, handle, configuration. */
    return r == 0 ? CUDA_SUCCESS : r == cudaErrorInvalidDeviceFunction ? CUDA_ERROR_INVALID_HANDLE
           : r == cudaErrorInvalidConfiguration                       ? CUDA_ERROR_INVALID_VALUE
                                                                      : (CUresult)r;
}

/* ---- variables ---- */

static struct var* var_of(const void* symbol) {
    for (struct var* v = vars; v; v = v->next)
        if (v->host && v->host == symbol) return v;
    return 0;
}
cudaError_t cudaGetSymbolAddress(void** d, const void* symbol) {
    ENTER;
    struct var* v = var_of(symbol);
    if (!d) RET(cudaErrorInvalidValue);
    if (!v) RET(cudaErrorInvalidSymbol);
    *d = v->storage;
    RET(cudaSuccess);
}
cudaError_t cudaGetSymbolSize(size_t* n, const void* symbol) {
    ENTER;
    struct var* v = var_of(symbol);
    if (!n) RET(cudaErrorInvalidValue);
    if (!v) RET(cudaErrorInvalidSymbol);
    *n = v->size;
    RET(cudaSuccess);
}
static int symbol_copy(char* dst, const char* src, size_t n, int kind, int to_symbol, struct var* v, size_t off,
                       si_stream* st, int sync) {
    if (!v) return cudaErrorInvalidSymbol;
    if (!st) return cudaErrorInvalidResourceHandle;
    if (off > v->size || n > v->size - off) return cudaErrorInvalidValue;
    if (kind < 0 || kind > 4 || (to_symbol ? (kind == 0 || kind == 2) : (kind == 0 || kind == 1)))
        return cudaErrorInvalidMemcpyDirection;
    int r = si_check_copy(dst, n, src, n, kind == 3 ? 3 : 4);
    if (r || !n) return r;
    if (sync) si_legacy_sync();
    r = si_enqueue_copy2d(st, dst, n, src, n, n, 1);
    if (!r && sync) si_stream_sync(st);
    return r;
}
cudaError_t cudaMemcpyToSymbol(const void* symbol, const void* src, size_t n, size_t off, enum cudaMemcpyKind k) {
    ENTER;
    struct var* v = var_of(symbol);
    RET(symbol_copy(v ? v->storage + off : 0, src, n, (int)k, 1, v, off, si_stream_of(0), 1));
}
cudaError_t cudaMemcpyFromSymbol(void* dst, const void* symbol, size_t n, size_t off, enum cudaMemcpyKind k) {
    ENTER;
    struct var* v = var_of(symbol);
    RET(symbol_copy(dst, v ? v->storage + off : 0, n, (int)k, 0, v, off, si_stream_of(0), 1));
}
cudaError_t cudaMemcpyToSymbolAsync(const void* symbol, const void* src, size_t n, size_t off, enum cudaMemcpyKind k,
                                    cudaStream_t s) {
    ENTER;
    struct var* v = var_of(symbol);
    RET(symbol_copy(v ? v->storage + off : 0, src, n, (int)k, 1, v, off, si_stream_of(s), 0));
}
cudaError_t cudaMemcpyFromSymbolAsync(void* dst, const void* symbol, size_t n, size_t off, enum cudaMemcpyKind k,
                                      cudaStream_t s) {
    ENTER;
    struct var* v = var_of(symbol);
    RET(symbol_copy(dst, v ? v->storage + off : 0, n, (int)k, 0, v, off, si_stream_of(s), 0));
}

/* ---- driver launch configuration (replay's calls) ---- */

static CUresult driver_result(int r) {
    return r == 0 ? CUDA_SUCCESS : r == cudaErrorInvalidDeviceFunction ? CUDA_ERROR_INVALID_HANDLE
           : r == cudaErrorInvalidConfiguration                       ? CUDA_ERROR_INVALID_VALUE
                                                                      : (CUresult)r;
}
CUresult cuFuncSetAttribute(CUfunction f, CUfunction_attribute a, int v) {
    si_lock();
    int r = func_attribute(by_handle(f), (int)a, v);
    si_unlock();
    return driver_result(r);
}
CUresult cuKernelSetCacheConfig(CUkernel k, CUfunc_cache c, CUdevice dev) {
    if (dev != 0) return CUDA_ERROR_INVALID_DEVICE;
    si_lock();
    struct kfn* f = by_handle(k);
    int r = !f || !f->is_kernel ? cudaErrorInvalidDeviceFunction : (unsigned)c <= CU_FUNC_CACHE_PREFER_EQUAL ? 0 : cudaErrorInvalidValue;
    si_unlock();
    return driver_result(r);
}
CUresult cuFuncSetCacheConfig(CUfunction f, CUfunc_cache c) {
    si_lock();
    int r = !by_handle(f) ? cudaErrorInvalidDeviceFunction : (unsigned)c <= CU_FUNC_CACHE_PREFER_EQUAL ? 0 : cudaErrorInvalidValue;
    si_unlock();
    return driver_result(r);
}
CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                   unsigned bz, unsigned shmem, CUstream s, void** params) {
    dim3 g = {gx, gy, gz}, b = {bx, by, bz};
    if (!params) return CUDA_ERROR_INVALID_VALUE;
    si_lock();
    int r = si_cuda_cooperative_fits(g, b) ? launch(by_handle(f), g, b, shmem, s, params) : cudaErrorCooperativeLaunchTooLarge;
    si_unlock();
    return driver_result(r);
}
_Static_assert(sizeof(CUlaunchAttribute) == sizeof(cudaLaunchAttribute), "one attribute layout");
CUresult cuLaunchKernelEx(const CUlaunchConfig* c, CUfunction f, void** params, void** extra) {
    if (!c || (params && extra)) return CUDA_ERROR_INVALID_VALUE;
    dim3 g = {c->gridDimX, c->gridDimY, c->gridDimZ}, b = {c->blockDimX, c->blockDimY, c->blockDimZ};
    si_lock();
    int r = si_cuda_launch_attrs((const cudaLaunchAttribute*)c->attrs, c->numAttrs, g, b);
    if (!r) r = launch(by_handle(f), g, b, c->sharedMemBytes, c->hStream, params);
    si_unlock();
    return driver_result(r);
}

/* The per-thread default stream launches (see cuda.c's `_ptsz` forms). */
cudaError_t __cudaLaunchKernel_ptsz(const void* kernel, dim3 g, dim3 b, void** args, size_t shmem, cudaStream_t s);
cudaError_t __cudaLaunchKernel_ptsz(const void* kernel, dim3 g, dim3 b, void** args, size_t shmem, cudaStream_t s) {
    return __cudaLaunchKernel(kernel, g, b, args, shmem, s ? s : cudaStreamPerThread);
}
cudaError_t cudaLaunchKernel_ptsz(const void* stub, dim3 g, dim3 b, void** args, size_t shmem, cudaStream_t s);
cudaError_t cudaLaunchKernel_ptsz(const void* stub, dim3 g, dim3 b, void** args, size_t shmem, cudaStream_t s) {
    return cudaLaunchKernel(stub, g, b, args, shmem, s ? s : cudaStreamPerThread);
}
CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                             unsigned bz, unsigned shmem, CUstream s, void** params, void** extra);
CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                             unsigned bz, unsigned shmem, CUstream s, void** params, void** extra) {
    return cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shmem, s ? s : CU_STREAM_PER_THREAD, params, extra);
}
