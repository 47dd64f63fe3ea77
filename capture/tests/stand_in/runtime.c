// A stand-in CUDA runtime and driver in one library (soname libcuda.so.1, which capture
// looks driver functions up in): "device" memory is host memory, copies copy, launches
// do nothing, and every kernel has two 8-byte parameters. Enough for capture to record
// each kind of call the way it does against the real runtime, without a GPU.
#include <stdlib.h>
#include <string.h>

typedef struct { unsigned x, y, z; } dim3;

// ---- devices, versions, metadata ----
int cudaGetDeviceCount(int* n) { *n = 1; return 0; }
int cudaGetDevice(int* d) { *d = 0; return 0; }
int cudaRuntimeGetVersion(int* v) { *v = 12040; return 0; }
int cudaDriverGetVersion(int* v) { *v = 12080; return 0; }
int cudaDeviceGetAttribute(int* v, int attr, int dev) {
    (void)dev;
    *v = attr == 75 ? 9 : 0; // compute capability 9.0
    return 0;
}
int cuDeviceGetName(char* name, int len, int dev) {
    (void)dev;
    strncpy(name, "Stand-in GPU", (size_t)len);
    return 0;
}

// ---- memory ----
int cudaMalloc(void** p, size_t n) { *p = calloc(1, n); return *p ? 0 : 2; }
int cudaFree(void* p) { free(p); return 0; }
int cudaMallocHost(void** p, size_t n) { *p = calloc(1, n); return 0; }
int cudaHostAlloc(void** p, size_t n, unsigned flags) { (void)flags; *p = calloc(1, n); return 0; }
int cudaFreeHost(void* p) { free(p); return 0; }
int cudaHostRegister(void* p, size_t n, unsigned flags) { (void)p; (void)n; (void)flags; return 0; }
int cudaHostUnregister(void* p) { (void)p; return 0; }
int cudaMallocPitch(void** p, size_t* pitch, size_t width, size_t height) {
    *pitch = (width + 63) & ~(size_t)63;
    *p = calloc(1, *pitch * height);
    return 0;
}
static void perform_queued(void);
// A blocking copy runs on the legacy default stream: after every queued copy.
int cudaMemcpy(void* dst, const void* src, size_t n, int kind) {
    (void)kind;
    perform_queued();
    memmove(dst, src, n);
    return 0;
}
// An asynchronous copy happens when its stream (or an event, or the device) is waited
// for, as on a GPU it may: whoever reads the destination before that sees the old bytes.
// Copies queue in issue order; a wait performs every queued copy (one queue for all
// streams), under a lock since capture waits for events on its reader threads.
#include <pthread.h>
#define MAX_QUEUED 64
static struct { void* dst; const void* src; size_t n; } queued[MAX_QUEUED];
static int n_queued;
static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static void perform_queued(void) {
    pthread_mutex_lock(&queue_lock);
    for (int i = 0; i < n_queued; ++i) memmove(queued[i].dst, queued[i].src, queued[i].n);
    n_queued = 0;
    pthread_mutex_unlock(&queue_lock);
}
int cudaMemcpyAsync(void* dst, const void* src, size_t n, int kind, void* s) {
    (void)kind; (void)s;
    pthread_mutex_lock(&queue_lock);
    if (n_queued == MAX_QUEUED) {
        pthread_mutex_unlock(&queue_lock);
        perform_queued();
        pthread_mutex_lock(&queue_lock);
    }
    queued[n_queued].dst = dst;
    queued[n_queued].src = src;
    queued[n_queued].n = n;
    n_queued++;
    pthread_mutex_unlock(&queue_lock);
    return 0;
}
int cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t w, size_t h, int kind) {
    (void)kind;
    for (size_t r = 0; r < h; ++r) memmove((char*)dst + r * dpitch, (const char*)src + r * spitch, w);
    return 0;
}
int cudaMemset(void* p, int v, size_t n) { memset(p, v, n); return 0; }

// ---- streams and events ----
int cudaStreamCreate(void** s) { *s = (void*)0x51; return 0; }
int cudaStreamSynchronize(void* s) {
    (void)s;
    perform_queued();
    return 0;
}
int cudaDeviceSynchronize(void) { perform_queued(); return 0; }
int cudaStreamDestroy(void* s) { (void)s; return 0; }
int cudaEventCreate(void** e) { *e = (void*)0xe1; return 0; }
// Events made with flags (capture's own pool among them) are distinct handles.
int cudaEventCreateWithFlags(void** e, unsigned flags) {
    (void)flags;
    *e = malloc(1);
    return *e ? 0 : 2;
}
int cudaEventRecord(void* e, void* s) { (void)e; (void)s; return 0; }
int cudaEventSynchronize(void* e) { (void)e; perform_queued(); return 0; }
// 600: cudaErrorNotReady, while any queued copy is outstanding.
int cudaEventQuery(void* e) {
    (void)e;
    pthread_mutex_lock(&queue_lock);
    int busy = n_queued != 0;
    pthread_mutex_unlock(&queue_lock);
    return busy ? 600 : 0;
}
int cudaEventDestroy(void* e) { (void)e; return 0; }
int cudaEventElapsedTime(float* ms, void* a, void* b) { (void)a; (void)b; *ms = 1.5f; return 0; }
int cudaStreamAddCallback(void* s, void* cb, void* data, unsigned flags) {
    (void)s; (void)cb; (void)data; (void)flags;
    return 0;
}

// ---- registration and variables ----
static void* fatbin_handle;
static const void* var_shadow;
static char var_storage[64];
void** __cudaRegisterFatBinary(void* wrapper) { (void)wrapper; return &fatbin_handle; }
void __cudaRegisterFatBinaryEnd(void** h) { (void)h; }
void __cudaUnregisterFatBinary(void** h) { (void)h; }
void __cudaRegisterFunction(void** h, const char* stub, char* dev, const char* name, int limit,
                            void* tid, void* bid, void* bdim, void* gdim, int* wsize) {
    (void)h; (void)stub; (void)dev; (void)name; (void)limit; (void)tid; (void)bid; (void)bdim;
    (void)gdim; (void)wsize;
}
void __cudaRegisterVar(void** h, char* host_var, char* dev_addr, const char* name, int ext,
                       size_t size, int constant, int global) {
    (void)h; (void)dev_addr; (void)name; (void)ext; (void)size; (void)constant; (void)global;
    var_shadow = host_var;
}
int cudaGetSymbolAddress(void** dptr, const void* symbol) {
    if (symbol != var_shadow) return 13;
    *dptr = var_storage;
    return 0;
}
int cudaMemcpyToSymbol(const void* symbol, const void* src, size_t n, size_t off, int kind) {
    (void)kind;
    if (symbol != var_shadow) return 13;
    memcpy(var_storage + off, src, n);
    return 0;
}
int cudaMemcpyFromSymbol(void* dst, const void* symbol, size_t n, size_t off, int kind) {
    (void)kind;
    if (symbol != var_shadow) return 13;
    memcpy(dst, var_storage + off, n);
    return 0;
}

// ---- kernels ----
static int param_info(size_t i, size_t* off, size_t* size) {
    if (i >= 2) return 1;
    *off = i * 8;
    *size = 8;
    return 0;
}
int cuKernelGetParamInfo(void* k, size_t i, size_t* off, size_t* size) { (void)k; return param_info(i, off, size); }
int cuFuncGetParamInfo(void* f, size_t i, size_t* off, size_t* size) { (void)f; return param_info(i, off, size); }
int cudaGetFuncBySymbol(void** f, const void* stub) { *f = (void*)((char*)stub + 1); return 0; }
int __cudaGetKernel(void** kernel, const void* stub) { *kernel = (void*)stub; return 0; }
int __cudaLaunchKernel(const void* k, dim3 g, dim3 b, void** args, size_t shmem, void* s) {
    (void)k; (void)g; (void)b; (void)args; (void)shmem; (void)s;
    return 0;
}
int cudaLaunchKernel(const void* f, dim3 g, dim3 b, void** args, size_t shmem, void* s) {
    (void)f; (void)g; (void)b; (void)args; (void)shmem; (void)s;
    return 0;
}
typedef struct { dim3 grid, block; size_t shmem; void* stream; void* attrs; unsigned num_attrs; } launch_config;
int cudaLaunchKernelExC(const launch_config* c, const void* f, void** args) { (void)c; (void)f; (void)args; return 0; }

// ---- modules ----
int cuModuleLoadData(void** m, const void* image) { (void)image; *m = (void*)0x30; return 0; }
int cuModuleGetFunction(void** f, void* m, const char* name) { (void)m; (void)name; *f = (void*)0x31; return 0; }
int cuLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                   unsigned shmem, void* stream, void** params, void** extra) {
    (void)f; (void)gx; (void)gy; (void)gz; (void)bx; (void)by; (void)bz; (void)shmem; (void)stream;
    (void)params; (void)extra;
    return 0;
}
