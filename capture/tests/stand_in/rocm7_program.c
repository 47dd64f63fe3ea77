/* A program as ROCm 6+ headers build it, against the repository's stand-in HIP runtime
 * (standin/, reporting $HRR_STAND_IN_HIP_VERSION): device properties through
 * hipGetDevicePropertiesR0600, functions resolved through hipGetProcAddress and
 * hipGetDriverEntryPoint, the per-thread default stream forms with a null stream. Prints
 * name=result lines; the first argument is the copy's length. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*MemcpyAsyncFn)(void*, const void*, size_t, int, void*);
typedef int (*PropsFn)(void*, int);
int hipRuntimeGetVersion(int*);
int hipMalloc(void**, size_t);
int hipFree(void*);
int hipMemcpy(void*, const void*, size_t, int);
int hipGetDevicePropertiesR0600(void*, int);
int hipGetProcAddress(const char*, void**, int, uint64_t, int*);
int hipGetDriverEntryPoint(const char*, void**, unsigned long long, int*);
int hipMemsetAsync_spt(void*, int, size_t, void*);
int hipStreamSynchronize_spt(void*);

int main(void) {
    enum { N = 4096 };
    static unsigned char host[N], props[1472], again[1472];
    int v = 0, st = -1;
    void* d = NULL;
    void* f = NULL;
    void* g = NULL;
    printf("version=%d\n", hipRuntimeGetVersion(&v));
    printf("runtime=%d\n", v);
    printf("malloc=%d\n", hipMalloc(&d, N));
    printf("props=%d\n", hipGetDevicePropertiesR0600(props, 0));
    printf("memset_spt=%d\n", hipMemsetAsync_spt(d, 7, N, NULL));
    printf("sync_spt=%d\n", hipStreamSynchronize_spt(NULL));
    printf("proc=%d\n", hipGetProcAddress("hipMemcpyAsync", &f, 700, 0, &st));
    printf("proc_status=%d\n", st);
    printf("copy=%d\n", ((MemcpyAsyncFn)f)(host, d, N, 2, NULL));
    printf("sync_spt=%d\n", hipStreamSynchronize_spt(NULL));
    printf("copied=%d\n", host[0] == 7 && host[N - 1] == 7);
    printf("entry=%d\n", hipGetDriverEntryPoint("hipGetDeviceProperties", &g, 0, &st));
    printf("props_again=%d\n", ((PropsFn)g)(again, 0));
    printf("same_props=%d\n", !memcmp(props, again, sizeof props));
    printf("free=%d\n", hipFree(d));
    return 0;
}
