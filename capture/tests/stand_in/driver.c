// A stand-in CUDA driver (soname libcuda.so.1) with the one runtime call a driver-API
// program mixes in: "device" memory is host memory, contexts and streams are tokens, an
// asynchronous copy happens when its stream is waited for (as on a GPU it may), every
// kernel has two 8-byte parameters, every module one 16-byte global. cudaMalloc
// allocates through the exported cuMemAlloc_v2, which capture interposes: its record
// must still be the runtime call's alone.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned long long CUdeviceptr;

// ---- the runtime call, and what capture asks for the manifest ----
int cuMemAlloc_v2(CUdeviceptr* d, size_t n);
int cudaMalloc(void** p, size_t n) {
    CUdeviceptr d = 0;
    int r = cuMemAlloc_v2(&d, n);
    *p = (void*)(uintptr_t)d;
    return r;
}
int cudaRuntimeGetVersion(int* v) { *v = 13000; return 0; }
int cudaDriverGetVersion(int* v) { *v = 13000; return 0; }
int cudaGetDeviceCount(int* n) { *n = 1; return 0; }
int cudaDeviceGetAttribute(int* v, int attr, int dev) { (void)dev; *v = attr == 75 ? 9 : 0; return 0; }
int cuDeviceGetName(char* name, int len, int dev) { (void)dev; strncpy(name, "Stand-in GPU", (size_t)len); return 0; }

// ---- init, devices, contexts ----
static void* current;
int cuInit(unsigned f) { return f ? 1 : 0; }
int cuDeviceGet(int* d, int ordinal) { *d = ordinal; return ordinal ? 101 : 0; }
int cuCtxCreate_v4(void** ctx, void* params, unsigned flags, int dev) {
    (void)params; (void)flags; (void)dev;
    *ctx = current = (void*)0xc7;
    return 0;
}
int cuCtxGetCurrent(void** ctx) { *ctx = current; return 0; }
int cuCtxDestroy_v2(void* ctx) { if (ctx == current) current = 0; return 0; }

// ---- memory and copies ----
int cuMemAlloc_v2(CUdeviceptr* d, size_t n) { *d = (CUdeviceptr)(uintptr_t)calloc(1, n); return *d ? 0 : 2; }
int cuMemFree_v2(CUdeviceptr d) { free((void*)(uintptr_t)d); return 0; }
int cuMemHostAlloc(void** p, size_t n, unsigned flags) { (void)flags; *p = calloc(1, n); return 0; }
int cuMemHostGetDevicePointer_v2(CUdeviceptr* d, void* p, unsigned flags) { (void)flags; *d = (CUdeviceptr)(uintptr_t)p; return 0; }
int cuMemFreeHost(void* p) { free(p); return 0; }
int cuMemcpyHtoD_v2(CUdeviceptr d, const void* s, size_t n) { memmove((void*)(uintptr_t)d, s, n); return 0; }
int cuMemcpyDtoH_v2(void* d, CUdeviceptr s, size_t n) { memmove(d, (void*)(uintptr_t)s, n); return 0; }
static struct { void* dst; const void* src; size_t n; } pending;
int cuMemcpyDtoHAsync_v2(void* d, CUdeviceptr s, size_t n, void* stream) {
    (void)stream;
    pending.dst = d;
    pending.src = (const void*)(uintptr_t)s;
    pending.n = n;
    return 0;
}
int cuMemsetD32_v2(CUdeviceptr d, unsigned v, size_t n) {
    for (size_t i = 0; i < n; i++) memcpy((char*)(uintptr_t)d + 4 * i, &v, 4);
    return 0;
}
// CUDA_MEMCPY2D as 16 words (host 1, device 2): src x, y, type, host, device, array,
// pitch; the same for dst; width, height.
int cuMemcpy2D_v2(const size_t* w);
int cuMemcpy2DUnaligned_v2(const size_t* w) { return cuMemcpy2D_v2(w); }
int cuMemcpyPeer(CUdeviceptr d, void* dctx, CUdeviceptr s, void* sctx, size_t n) {
    (void)dctx;
    (void)sctx;
    memmove((void*)(uintptr_t)d, (void*)(uintptr_t)s, n);
    return 0;
}
int cuMemcpy2D_v2(const size_t* w) {
    const char* s = (const char*)(w[2] == 1 ? w[3] : w[4]) + w[1] * w[6] + w[0];
    char* d = (char*)(w[9] == 1 ? w[10] : w[11]) + w[8] * w[13] + w[7];
    for (size_t r = 0; r < w[15]; r++) memmove(d + r * w[13], s + r * w[6], w[14]);
    return 0;
}

// ---- streams ----
int cuStreamCreate(void** s, unsigned flags) { (void)flags; *s = (void*)0x5e; return 0; }
/* Stream capture and graphs: one capture at a time, nothing captured into it. */
static int capturing;
int cuStreamBeginCapture_v2(void* s, int mode) { (void)mode; if (!s || capturing) return 1; capturing = 1; return 0; }
int cuStreamIsCapturing(void* s, int* status) { (void)s; *status = capturing; return 0; }
int cuStreamEndCapture(void* s, void** g) { if (!s || !capturing) return 1; capturing = 0; *g = (void*)0x6a; return 0; }
/* A captured graph is 0x6a (executable 0x6e), an explicit one 0x7a (0x7e); explicit
   nodes are numbered from 0x7b1. Nothing runs. */
int cuGraphInstantiateWithFlags(void** e, void* g, unsigned long long f) {
    (void)f;
    if (g != (void*)0x6a && g != (void*)0x7a) return 1;
    *e = (char*)g + 4;
    return 0;
}
static int is_exec(void* e) { return e == (void*)0x6e || e == (void*)0x7e; }
static int is_graph(void* g) { return g == (void*)0x6a || g == (void*)0x7a; }
int cuGraphLaunch(void* e, void* s) { (void)s; return is_exec(e) ? 0 : 1; }
int cuGraphExecDestroy(void* e) { return is_exec(e) ? 0 : 1; }
int cuGraphDestroy(void* g) { return is_graph(g) ? 0 : 1; }
int cuGraphCreate(void** g, unsigned flags) { (void)flags; *g = (void*)0x7a; return 0; }
static uintptr_t next_node = 0x7b1;
static int add_node(void** n, void* g, const void* params) {
    if (g != (void*)0x7a || !params) return 1;
    *n = (void*)next_node++;
    return 0;
}
int cuGraphAddMemcpyNode(void** n, void* g, const void* deps, size_t nd, const void* p, void* ctx) {
    (void)deps; (void)nd; (void)ctx;
    return add_node(n, g, p);
}
int cuGraphAddMemsetNode(void** n, void* g, const void* deps, size_t nd, const void* p, void* ctx) {
    (void)deps; (void)nd; (void)ctx;
    return add_node(n, g, p);
}
int cuGraphAddKernelNode_v2(void** n, void* g, const void* deps, size_t nd, const void* p) {
    (void)deps; (void)nd;
    return add_node(n, g, p);
}
int cuGraphExecMemcpyNodeSetParams(void* e, void* n, const void* p, void* ctx) {
    (void)n; (void)ctx;
    return e == (void*)0x7e && p ? 0 : 1;
}
// ---- launch configuration ----
int cuLaunchCooperativeKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                              unsigned bz, unsigned shmem, void* stream, void** params) {
    (void)gx; (void)gy; (void)gz; (void)bx; (void)by; (void)bz; (void)shmem; (void)stream;
    return f && params ? 0 : 1;
}
int cuKernelSetCacheConfig(void* k, int config, int dev) { (void)dev; return k && config >= 0 ? 0 : 1; }
int cuFuncSetCacheConfig(void* f, int config) { return f && config >= 0 ? 0 : 1; }
// ---- polls: an event's work is done at the sixth query ----
int cuEventQuery(void* e) {
    static int polls;
    if (!e) return 400;
    return ++polls < 6 ? 600 : 0;
}
int cuStreamSynchronize(void* s) {
    (void)s;
    if (pending.n) memmove(pending.dst, pending.src, pending.n);
    pending.n = 0;
    return 0;
}
int cuStreamDestroy_v2(void* s) { (void)s; return 0; }

// ---- modules, libraries, kernels ----
static char global[16];
int cuModuleLoad(void** m, const char* path) { (void)path; *m = (void*)0x30; return 0; }
int cuModuleGetFunction(void** f, void* m, const char* name) { (void)m; (void)name; *f = (void*)0x31; return 0; }
int cuModuleGetGlobal_v2(CUdeviceptr* d, size_t* n, void* m, const char* name) {
    (void)m; (void)name;
    if (d) *d = (CUdeviceptr)(uintptr_t)global;
    if (n) *n = sizeof global;
    return 0;
}
int cuModuleUnload(void* m) { (void)m; return 0; }
int cuLibraryLoadData(void** lib, const void* code, void* o, void** ov, unsigned no, void* lo, void** lv, unsigned nl) {
    (void)code; (void)o; (void)ov; (void)no; (void)lo; (void)lv; (void)nl;
    *lib = (void*)0x40;
    return 0;
}
int cuLibraryGetKernel(void** k, void* lib, const char* name) { (void)lib; (void)name; *k = (void*)0x41; return 0; }
int cuKernelGetFunction(void** f, void* k) { (void)k; *f = (void*)0x42; return 0; }
int cuLibraryUnload(void* lib) { (void)lib; return 0; }
static int param_info(size_t i, size_t* off, size_t* size) {
    if (i >= 2) return 1;
    *off = i * 8;
    *size = 8;
    return 0;
}
int cuKernelGetParamInfo(void* k, size_t i, size_t* off, size_t* size) { (void)k; return param_info(i, off, size); }
int cuFuncGetParamInfo(void* f, size_t i, size_t* off, size_t* size) { (void)f; return param_info(i, off, size); }
int cuMemsetD32_v2_ptds(CUdeviceptr d, unsigned v, size_t n) { return cuMemsetD32_v2(d, v, n); }
int cuLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                   unsigned shmem, void* stream, void** params, void** extra);
int cuLaunchKernel_ptsz(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shmem, void* stream, void** params, void** extra) {
    return cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shmem, stream, params, extra);
}
int cuLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                   unsigned shmem, void* stream, void** params, void** extra) {
    (void)f; (void)gx; (void)gy; (void)gz; (void)bx; (void)by; (void)bz; (void)shmem; (void)stream;
    (void)params; (void)extra;
    return 0;
}
int cuLaunchKernelEx(const void* config, void* f, void** params, void** extra) {
    (void)config; (void)f; (void)params; (void)extra;
    return 0;
}

// ---- the entry-point lookup every runtime and library uses ----
// As the driver answers: the current ABI of a name (NAME_v2 where this library has one,
// else NAME), looked up in this library itself; 1 in *status when there is none.
static void* self_symbol(const char* name) {
    Dl_info i;
    if (!dladdr((void*)self_symbol, &i) || !i.dli_fname) return 0;
    void* h = dlopen(i.dli_fname, RTLD_NOW | RTLD_NOLOAD);
    return h ? dlsym(h, name) : 0;
}
static int lookup(const char* name, void** pfn, int* status) {
    char v2[256];
    snprintf(v2, sizeof v2, "%s_v2", name);
    void* p = self_symbol(v2);
    if (!p) p = self_symbol(name);
    *pfn = p;
    if (status) *status = p ? 0 : 1;
    return p ? 0 : 500; // CUDA_ERROR_NOT_FOUND
}
int cuGetProcAddress_v2(const char* name, void** pfn, int version, unsigned long long flags, int* status) {
    (void)version; (void)flags;
    return lookup(name, pfn, status);
}
// The shared runtime's lookup of a driver function for the program (here beside the
// driver: what capture judges is where the answer lies).
int cudaGetDriverEntryPointByVersion(const char* name, void** pfn, unsigned version,
                                     unsigned long long flags, int* status) {
    (void)version; (void)flags;
    return lookup(name, pfn, status) ? 500 : 0;
}
int cuGetExportTable(const void** table, const void* uuid) { (void)uuid; *table = 0; return 500; }
