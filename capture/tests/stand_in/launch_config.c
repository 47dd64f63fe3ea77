// Launch configuration and stream-ordered memory against the stand-in runtime: function
// settings by stub, a cooperative launch, a launch with attributes, device limits, pools
// and stream-ordered allocations (one of them a kernel argument). Prints what each call
// returned to the program.
#include <stdio.h>
#include <string.h>

#include "fatbin.h"

typedef struct { unsigned x, y, z; } dim3;
typedef struct { unsigned id; char pad[4]; unsigned char val[64]; } launch_attr;
typedef struct { dim3 grid, block; size_t shmem; void* stream; launch_attr* attrs; unsigned num_attrs; } launch_config;
void** __cudaRegisterFatBinary(void*);
void __cudaRegisterFatBinaryEnd(void**);
void __cudaRegisterFunction(void**, const char*, char*, const char*, int, void*, void*, void*, void*, int*);
int cudaStreamCreate(void**);
int cudaFuncSetAttribute(const void*, int, int);
int cudaFuncSetCacheConfig(const void*, int);
int cudaDeviceSetLimit(int, size_t);
int cudaDeviceGetLimit(size_t*, int);
int cudaLaunchCooperativeKernel(const void*, dim3, dim3, void**, size_t, void*);
int cudaLaunchKernelExC(const launch_config*, const void*, void**);
int cudaMallocAsync(void**, size_t, void*);
int cudaFreeAsync(void*, void*);
int cudaMemPoolCreate(void**, const void*);
int cudaMemPoolDestroy(void*);
int cudaMemPoolSetAttribute(void*, int, void*);
int cudaMemPoolGetAttribute(void*, int, void*);
int cudaMemPoolTrimTo(void*, size_t);
int cudaMallocFromPoolAsync(void**, size_t, void*, void*);
int cudaDeviceGetDefaultMemPool(void**, int);

static void stub(void) {}
static void unregistered(void) {}
// A kernel of two 8-byte parameters.
HRR_FATBIN(fatbin, ".version 8.0\n.target sm_90\n.visible .entry kernel(.param .u64 a, .param .u64 b)\n{\n ret;\n}\n");

int main(void) {
    void** h = __cudaRegisterFatBinary(&fatbin_wrapper);
    __cudaRegisterFunction(h, (const char*)stub, "kernel", "kernel", -1, 0, 0, 0, 0, 0);
    __cudaRegisterFatBinaryEnd(h);
    void* s = 0;
    printf("stream=%d\n", cudaStreamCreate(&s));
    printf("func_attribute=%d\n", cudaFuncSetAttribute((const void*)stub, 8, 64 * 1024));
    printf("func_cache=%d\n", cudaFuncSetCacheConfig((const void*)stub, 1));
    printf("func_attribute_unregistered=%d\n", cudaFuncSetAttribute((const void*)unregistered, 8, 1));
    printf("set_limit=%d\n", cudaDeviceSetLimit(0, 4096));
    size_t limit = 0;
    printf("get_limit=%d\n", cudaDeviceGetLimit(&limit, 2));

    void* def = 0;
    printf("default_pool=%d\n", cudaDeviceGetDefaultMemPool(&def, 0));
    unsigned long long threshold = ~0ull;
    printf("pool_threshold=%d\n", cudaMemPoolSetAttribute(def, 4, &threshold));
    unsigned char props[88];
    memset(props, 0, sizeof props);
    props[0] = 1;                       // allocType pinned
    props[8] = 1;                       // location: a device
    memset(props + 16, 0x44, 8);        // a Windows security pointer (meaningless here)
    void* pool = 0;
    printf("pool_create=%d\n", cudaMemPoolCreate(&pool, props));
    int reuse = 1;
    printf("pool_reuse=%d\n", cudaMemPoolSetAttribute(pool, 2, &reuse));

    unsigned char* a = 0;
    unsigned char* b = 0;
    printf("malloc_async=%d\n", cudaMallocAsync((void**)&a, 128, s));
    printf("malloc_from_pool=%d\n", cudaMallocFromPoolAsync((void**)&b, 64, pool, s));
    void* args[] = {&a, &b};
    dim3 g = {4, 1, 1}, blk = {64, 1, 1};
    printf("cooperative=%d\n", cudaLaunchCooperativeKernel((const void*)stub, g, blk, args, 0, s));
    launch_attr attrs[2];
    memset(attrs, 0xcc, sizeof attrs); // padding the program never set
    attrs[0].id = 4;                   // cluster dimension {2, 1, 1}
    memset(attrs[0].val, 0, 64);
    attrs[0].val[0] = 2;
    attrs[0].val[4] = 1;
    attrs[0].val[8] = 1;
    attrs[1].id = 8;                   // priority 3
    memset(attrs[1].val, 0, 64);
    attrs[1].val[0] = 3;
    launch_config cfg = {g, blk, 256, s, attrs, 2};
    printf("launch_ex=%d\n", cudaLaunchKernelExC(&cfg, (const void*)stub, args));
    unsigned long long used = 0;
    printf("pool_used=%d\n", cudaMemPoolGetAttribute(pool, 7, &used));
    printf("free_async=%d\n", cudaFreeAsync(b, s));
    printf("free_async_a=%d\n", cudaFreeAsync(a, s));
    printf("trim=%d\n", cudaMemPoolTrimTo(pool, 0));
    printf("pool_destroy=%d\n", cudaMemPoolDestroy(pool));
    return 0;
}
