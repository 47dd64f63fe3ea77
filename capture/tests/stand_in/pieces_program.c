// Two launches of one kernel reading a 40 MiB page-locked buffer (three snapshot pieces:
// 16, 16 and 8 MiB); between them the program changes one byte of the last piece.
#include <stdio.h>
#include <string.h>

#include "fatbin.h"

typedef struct { unsigned x, y, z; } dim3;
int cudaMalloc(void**, size_t);
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

int main(void) {
    void** h = __cudaRegisterFatBinary(&fatbin_wrapper);
    __cudaRegisterFunction(h, (const char*)stub, "kernel", "kernel", -1, 0, 0, 0, 0, 0);
    __cudaRegisterFatBinaryEnd(h);
    const size_t n = 40u << 20;
    unsigned char *d = 0, *pinned = 0;
    int rc = cudaMalloc((void**)&d, 256) | cudaHostAlloc((void**)&pinned, n, 0);
    if (rc) return 2;
    for (size_t i = 0; i < n; ++i) pinned[i] = (unsigned char)(i * 7);
    void* args[] = {&d, &pinned};
    dim3 g = {1, 1, 1}, b = {32, 1, 1};
    rc |= cudaLaunchKernel((const void*)stub, g, b, args, 0, 0);
    rc |= cudaDeviceSynchronize();
    pinned[n - 5] ^= 0xff;
    rc |= cudaLaunchKernel((const void*)stub, g, b, args, 0, 0);
    rc |= cudaDeviceSynchronize();
    rc |= cudaFreeHost(pinned) | cudaFree(d);
    printf("pieces %s\n", rc ? "FAILED" : "ok");
    return rc != 0;
}
