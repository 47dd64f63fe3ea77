// Three launches of one kernel reading a 1 MiB managed buffer (with the argument "mapped":
// mapped page-locked host memory): the second while the first is still in flight (no
// synchronisation between them), the third after a device synchronisation and a host
// write of one byte.
#include <stdio.h>
#include <string.h>

#include "fatbin.h"

typedef struct { unsigned x, y, z; } dim3;
int cudaMallocManaged(void**, size_t, unsigned);
int cudaFree(void*);
int cudaHostAlloc(void**, size_t, unsigned);
int cudaFreeHost(void*);
int cudaDeviceSynchronize(void);
void** __cudaRegisterFatBinary(void*);
void __cudaRegisterFatBinaryEnd(void**);
void __cudaRegisterFunction(void**, const char*, char*, const char*, int, void*, void*, void*, void*, int*);
int cudaLaunchKernel(const void*, dim3, dim3, void**, size_t, void*);

static void stub(void) {}
// A kernel of two 8-byte parameters.
HRR_FATBIN(fatbin, ".version 8.0\n.target sm_90\n.visible .entry kernel(.param .u64 a, .param .u64 b)\n{\n ret;\n}\n");

int main(int argc, char** argv) {
    const int mapped = argc > 1 && strcmp(argv[1], "mapped") == 0;
    void** h = __cudaRegisterFatBinary(&fatbin_wrapper);
    __cudaRegisterFunction(h, (const char*)stub, "kernel", "kernel", -1, 0, 0, 0, 0, 0);
    __cudaRegisterFatBinaryEnd(h);
    const size_t n = 1u << 20;
    unsigned char* m = 0;
    // cudaHostAllocMapped; cudaMemAttachGlobal
    if (mapped ? cudaHostAlloc((void**)&m, n, 2) : cudaMallocManaged((void**)&m, n, 1)) return 2;
    for (size_t i = 0; i < n; ++i) m[i] = (unsigned char)(i * 3);
    void* args[] = {&m, &m};
    dim3 g = {1, 1, 1}, b = {32, 1, 1};
    int rc = cudaLaunchKernel((const void*)stub, g, b, args, 0, 0);
    rc |= cudaLaunchKernel((const void*)stub, g, b, args, 0, 0);
    rc |= cudaDeviceSynchronize();
    m[5] ^= 0xff;
    rc |= cudaLaunchKernel((const void*)stub, g, b, args, 0, 0);
    rc |= cudaDeviceSynchronize();
    rc |= mapped ? cudaFreeHost(m) : cudaFree(m);
    printf("managed %s\n", rc ? "FAILED" : "ok");
    return rc != 0;
}
