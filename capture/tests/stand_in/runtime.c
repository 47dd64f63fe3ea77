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
// Held across fork, as a real runtime keeps its own state consistent: a child forked
// while another thread copies finds the queue free (capture's fork test is about capture).
static void queue_prepare(void) { pthread_mutex_lock(&queue_lock); }
static void queue_parent(void) { pthread_mutex_unlock(&queue_lock); }
static void queue_child(void) { pthread_mutex_init(&queue_lock, 0); }
__attribute__((constructor)) static void queue_atfork(void) {
    pthread_atfork(queue_prepare, queue_parent, queue_child);
}
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
/* A kernel fault on demand: HRR_STAND_IN_FAULT=CODE makes the synchronisation fail with
   CODE (a sticky error, as after an illegal address). */
int cudaProfilerStart(void) { return 0; }
int cudaProfilerStop(void) { return 0; }
int cudaDeviceSynchronize(void) {
    perform_queued();
    const char* f = getenv("HRR_STAND_IN_FAULT");
    return f ? atoi(f) : 0;
}
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

// ---- launch configuration and memory pools (tests/launch_config.rs) ----
int cudaFuncSetAttribute(const void* f, int attr, int value) { (void)f; return attr >= 8 && attr <= 16 && value >= 0 ? 0 : 1; }
int cudaFuncSetCacheConfig(const void* f, int c) { (void)f; return c >= 0 && c <= 3 ? 0 : 1; }
int cudaDeviceSetLimit(int limit, size_t value) { (void)value; return limit >= 0 && limit <= 6 ? 0 : 1; }
int cudaDeviceGetLimit(size_t* value, int limit) { *value = 1024u * (unsigned)(limit + 1); return 0; }
int cudaLaunchCooperativeKernel(const void* f, dim3 g, dim3 b, void** args, size_t shmem, void* s) {
    (void)f; (void)g; (void)b; (void)args; (void)shmem; (void)s;
    return 0;
}
int cudaMallocAsync(void** p, size_t n, void* s) { (void)s; *p = calloc(1, n); return *p ? 0 : 2; }
int cudaFreeAsync(void* p, void* s) { (void)s; free(p); return 0; }
int cudaMemPoolCreate(void** pool, const void* props) { (void)props; *pool = (void*)0x7001; return 0; }
int cudaMemPoolDestroy(void* pool) { return pool == (void*)0x7001 ? 0 : 1; }
int cudaMemPoolSetAttribute(void* pool, int attr, void* v) { (void)pool; return attr >= 1 && attr <= 8 && v ? 0 : 1; }
int cudaMemPoolGetAttribute(void* pool, int attr, void* v) {
    (void)pool;
    if (attr >= 1 && attr <= 3) *(int*)v = 1;
    else *(unsigned long long*)v = 4096;
    return 0;
}
int cudaMemPoolTrimTo(void* pool, size_t keep) { (void)pool; (void)keep; return 0; }
int cudaMallocFromPoolAsync(void** p, size_t n, void* pool, void* s) {
    (void)s;
    if (pool != (void*)0x7001) return 1;
    *p = calloc(1, n);
    return *p ? 0 : 2;
}
int cudaDeviceGetDefaultMemPool(void** pool, int dev) { (void)dev; *pool = (void*)0x7000; return 0; }
// ---- APIs capture does not model (its counting pass-throughs forward them) ----
// Graphics interop: a real API capture has no record for.
int cudaGraphicsMapResources(int count, void** resources, void* stream) {
    (void)resources; (void)stream;
    return count == 1 ? 0 : 1;
}
int cudaGraphicsUnmapResources(int count, void** resources, void* stream) {
    (void)resources; (void)stream;
    return count == 2 ? 0 : 1;
}
// Surface names given test signatures (the pass-through never knows a signature): eight
// integer and pointer arguments (two on the stack), and doubles mixed with integers
// (nine doubles: one on the stack). Each returns a value that depends on every argument
// and its position.
long cuGraphicsSubResourceGetMappedArray(long a, const char* b, int c, long d, long e, long f, long g, long h) {
    return a * 1 + (long)b[0] * 2 + c * 3 + d * 4 + e * 5 + f * 6 + g * 7 + h * 8;
}
double cuCoredumpSetAttributeGlobal(double a, int b, double c, const double* d, double e, double f,
                                    double g, double h, double i, double j, double k) {
    return a * 1 + b * 2 + c * 3 + *d * 4 + e * 5 + f * 6 + g * 7 + h * 8 + i * 9 + j * 10 + k * 11;
}
const char* cudaGetErrorString(int e) { return e == 0 ? "no error" : "error"; }
