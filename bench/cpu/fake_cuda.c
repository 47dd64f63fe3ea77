// A stand-in CUDA runtime and driver in one library (soname libcuda.so.1) for measuring
// capture's per-launch cost without a GPU: registration succeeds, launches do nothing,
// and the driver reports two 8-byte kernel parameters.
#include <stddef.h>

typedef struct { unsigned x, y, z; } dim3;

static void* fatbin_handle;
void** __cudaRegisterFatBinary(void* wrapper) { (void)wrapper; return &fatbin_handle; }
void __cudaRegisterFatBinaryEnd(void** handle) { (void)handle; }
void __cudaUnregisterFatBinary(void** handle) { (void)handle; }
void __cudaRegisterFunction(void** h, const char* stub, char* dev, const char* name, int limit,
                            void* tid, void* bid, void* bdim, void* gdim, int* wsize) {
    (void)h; (void)stub; (void)dev; (void)name; (void)limit; (void)tid; (void)bid; (void)bdim;
    (void)gdim; (void)wsize;
}
int __cudaGetKernel(void** kernel, const void* stub) { *kernel = (void*)stub; return 0; }
int __cudaLaunchKernel(const void* k, dim3 g, dim3 b, void** args, size_t shmem, void* s) {
    (void)k; (void)g; (void)b; (void)args; (void)shmem; (void)s;
    return 0;
}
int cudaMalloc(void** p, size_t n) { static char heap[1 << 20]; (void)n; *p = heap; return 0; }
static int param_info(size_t i, size_t* off, size_t* size) {
    if (i >= 2) return 1;
    *off = i * 8;
    *size = 8;
    return 0;
}
int cuKernelGetParamInfo(void* k, size_t i, size_t* off, size_t* size) { (void)k; return param_info(i, off, size); }
int cuFuncGetParamInfo(void* f, size_t i, size_t* off, size_t* size) { (void)f; return param_info(i, off, size); }

// What replay calls.
int cudaGetDeviceCount(int* n) { *n = 1; return 0; }
int cudaFree(void* p) { (void)p; return 0; }
int cudaDeviceSynchronize(void) { return 0; }
int cuModuleLoadData(void** m, const void* image) { (void)image; *m = (void*)1; return 0; }
int cuModuleUnload(void* m) { (void)m; return 0; }
int cuModuleGetFunction(void** f, void* m, const char* name) { (void)m; (void)name; *f = (void*)2; return 0; }
int cuLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                   unsigned shmem, void* stream, void** params, void** extra) {
    (void)f; (void)gx; (void)gy; (void)gz; (void)bx; (void)by; (void)bz; (void)shmem; (void)stream;
    (void)params; (void)extra;
    return 0;
}
