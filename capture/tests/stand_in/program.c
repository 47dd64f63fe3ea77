// Makes one call of each kind capture records, against the stand-in runtime (standin/),
// and prints what the program itself saw (the return codes must be the runtime's).
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "fatbin.h"

typedef struct { unsigned x, y, z; } dim3;
typedef struct { dim3 grid, block; size_t shmem; void* stream; void* attrs; unsigned num_attrs; } launch_config;
int cudaGetDeviceCount(int*);
int cudaMalloc(void**, size_t);
int cudaFree(void*);
int cudaHostAlloc(void**, size_t, unsigned);
int cudaFreeHost(void*);
int cudaMallocPitch(void**, size_t*, size_t, size_t);
int cudaMemcpy(void*, const void*, size_t, int);
int cudaMemcpyAsync(void*, const void*, size_t, int, void*);
int cudaMemcpy2D(void*, size_t, const void*, size_t, size_t, size_t, int);
int cudaMemset(void*, int, size_t);
int cudaStreamCreate(void**);
int cudaStreamDestroy(void*);
int cudaStreamSynchronize(void*);
int cudaEventCreate(void**);
int cudaEventRecord(void*, void*);
int cudaEventSynchronize(void*);
int cudaEventElapsedTime(float*, void*, void*);
int cudaStreamAddCallback(void*, void*, void*, unsigned);
void** __cudaRegisterFatBinary(void*);
void __cudaRegisterFatBinaryEnd(void**);
void __cudaRegisterFunction(void**, const char*, char*, const char*, int, void*, void*, void*, void*, int*);
void __cudaRegisterVar(void**, char*, char*, const char*, int, size_t, int, int);
int cudaMemcpyToSymbol(const void*, const void*, size_t, size_t, int);
int cudaMemcpyFromSymbol(void*, const void*, size_t, size_t, int);
int __cudaGetKernel(void**, const void*);
int __cudaLaunchKernel(const void*, dim3, dim3, void**, size_t, void*);
int cudaLaunchKernel(const void*, dim3, dim3, void**, size_t, void*);
int cudaLaunchKernelExC(const launch_config*, const void*, void**);
int cuModuleLoadData(void**, const void*);
int cuModuleGetFunction(void**, void*, const char*);
int cuLaunchKernel(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*, void**, void**);

enum { H2D = 1, D2H = 2 };
static void stub(void) {}
static char table_shadow[16];
static void on_stream(void) {}

// The registered code: a kernel of two 8-byte parameters and a 16-byte variable.
HRR_FATBIN(fatbin, ".version 8.0\n.target sm_90\n.const .align 1 .b8 table[16];\n"
                   ".visible .entry kernel(.param .u64 a, .param .u64 b)\n{\n ret;\n}\n");
static const char ptx[] = ".version 8.0\n.target sm_90\n"
                          ".visible .entry module_kernel(.param .u64 a, .param .u64 b)\n{\n ret;\n}\n";

int main(void) {
    int n = 0;
    printf("count=%d\n", cudaGetDeviceCount(&n));
    void** h = __cudaRegisterFatBinary(&fatbin_wrapper);
    __cudaRegisterFunction(h, (const char*)stub, "kernel", "kernel", -1, 0, 0, 0, 0, 0);
    __cudaRegisterVar(h, table_shadow, table_shadow, "table", 0, sizeof table_shadow, 1, 0);
    __cudaRegisterFatBinaryEnd(h);

    unsigned char* d = 0;
    unsigned char* pinned = 0;
    printf("malloc=%d\n", cudaMalloc((void**)&d, 256));
    printf("hostalloc=%d\n", cudaHostAlloc((void**)&pinned, 32, 0));
    unsigned char host[64], back[64];
    for (int i = 0; i < 64; ++i) host[i] = (unsigned char)(i * 3);
    memset(pinned, 0x5a, 32);
    printf("h2d=%d\n", cudaMemcpy(d, host, 64, H2D));
    printf("memset=%d\n", cudaMemset(d + 64, 7, 16));
    void* s = 0;
    printf("stream=%d\n", cudaStreamCreate(&s));
    memset(back, 0, sizeof back);
    printf("d2h_async=%d\n", cudaMemcpyAsync(back, d, 64, D2H, s));
    printf("sync=%d\n", cudaStreamSynchronize(s));
    printf("d2h_async_bytes=%d\n", memcmp(back, host, 64));
    unsigned char* pitched = 0;
    size_t pitch = 0;
    printf("pitch=%d\n", cudaMallocPitch((void**)&pitched, &pitch, 10, 3));
    unsigned char rows[3 * 16];
    for (int i = 0; i < 48; ++i) rows[i] = (unsigned char)i;
    printf("h2d_2d=%d\n", cudaMemcpy2D(pitched, pitch, rows, 16, 10, 3, H2D));
    printf("to_symbol=%d\n", cudaMemcpyToSymbol(table_shadow, host, 8, 4, H2D));
    printf("from_symbol=%d\n", cudaMemcpyFromSymbol(back, table_shadow, 8, 4, D2H));

    // A kernel of two 8-byte parameters: a device pointer and a pinned host pointer.
    void* args[] = {&d, &pinned};
    dim3 g = {2, 1, 1}, b = {128, 1, 1};
    void* k = 0;
    printf("get_kernel=%d\n", __cudaGetKernel(&k, (const void*)stub));
    printf("launch_by_handle=%d\n", __cudaLaunchKernel(k, g, b, args, 0, s));
    printf("launch=%d\n", cudaLaunchKernel((const void*)stub, g, b, args, 16, 0));
    launch_config cfg = {g, b, 0, s, 0, 0};
    printf("launch_ex=%d\n", cudaLaunchKernelExC(&cfg, (const void*)stub, args));
    void* m = 0;
    void* f = 0;
    printf("module=%d\n", cuModuleLoadData(&m, ptx));
    printf("function=%d\n", cuModuleGetFunction(&f, m, "module_kernel"));
    printf("module_launch=%d\n", cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, 0, args, 0));

    void *e0 = 0, *e1 = 0;
    float ms = 0;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    cudaEventRecord(e0, s);
    cudaEventRecord(e1, s);
    cudaEventSynchronize(e1);
    printf("elapsed=%d\n", cudaEventElapsedTime(&ms, e0, e1));
    printf("callback=%d\n", cudaStreamAddCallback(s, (void*)on_stream, 0, 0));
    // Exported by capture, not by this runtime: the shim has no real function to call.
    int (*missing)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "cudaCtxResetPersistingL2Cache");
    printf("missing=%d\n", missing ? missing() : -1);
    printf("free_host=%d\n", cudaFreeHost(pinned));
    printf("free=%d\n", cudaFree(d));
    printf("stream_destroy=%d\n", cudaStreamDestroy(s));
    return 0;
}
