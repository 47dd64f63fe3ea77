/* library in C against the stand-in runtime (standin/): a library's kernels listed
 * (cuLibraryEnumerateKernels, each named by cuKernelGetName) and its managed variable
 * (cuLibraryGetManaged) written by the host, then xored by the listed hrr_xor_bytes
 * launched on it, read back and checked. Exit 0: right; 1: a wrong result; 2: a call
 * failed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xor_ptx.h"

typedef unsigned long long CUdeviceptr;
int cudaMalloc(void **, size_t);
int cudaMemcpy(void *, const void *, size_t, int);
int cudaDeviceSynchronize(void);
int cuLibraryLoadData(void **, const void *, void *, void **, unsigned, void *, void **, unsigned);
int cuLibraryGetKernelCount(unsigned *, void *);
int cuLibraryEnumerateKernels(void **, unsigned, void *);
int cuKernelGetName(const char **, void *);
int cuLibraryGetManaged(CUdeviceptr *, size_t *, void *, const char *);
int cuLaunchKernel(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *, void **, void **);
int cuLibraryUnload(void *);

#define CHECK(call) do { int e_ = (call); if (e_) { printf("%s failed: %d\n", #call, e_); exit(2); } } while (0)
#define N 64

static const char ptx[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
                          ".visible .global .attribute(.managed) .align 8 .b8 counts[64];\n"
                          ".visible .entry other(.param .u64 a)\n{\n ret;\n}\n" XOR_ENTRY;

int main(void) {
    void *lib, *kernels[4] = {0}, *xor_kernel = 0, *scratch;
    unsigned n = 0;
    CUdeviceptr counts;
    size_t bytes;
    unsigned char out[N];
    CHECK(cudaMalloc(&scratch, 16)); /* the runtime up: its context current */
    CHECK(cuLibraryLoadData(&lib, ptx, NULL, NULL, 0, NULL, NULL, 0));
    CHECK(cuLibraryGetKernelCount(&n, lib));
    if (n != 2) { printf("%u kernels, not 2\n", n); return 1; }
    /* Room for more than the library has: the driver fills two slots. */
    CHECK(cuLibraryEnumerateKernels(kernels, 4, lib));
    if (kernels[2] || kernels[3]) { printf("slots past the library's kernels were written\n"); return 1; }
    for (unsigned i = 0; i < n; i++) {
        const char *name;
        CHECK(cuKernelGetName(&name, kernels[i]));
        if (!strcmp(name, "hrr_xor_bytes")) xor_kernel = kernels[i];
    }
    if (!xor_kernel) { printf("hrr_xor_bytes is not listed\n"); return 1; }
    CHECK(cuLibraryGetManaged(&counts, &bytes, lib, "counts"));
    if (bytes != N) { printf("counts is %zu bytes\n", bytes); return 1; }
    unsigned char *host = (unsigned char *)(size_t)counts; /* managed: the host writes it */
    for (int i = 0; i < N; i++) host[i] = (unsigned char)(i * 3 + 7);
    unsigned long long key = 0x5a;
    void *args[2] = {&counts, &key};
    CHECK(cuLaunchKernel(xor_kernel, 1, 1, 1, N, 1, 1, 0, NULL, args, NULL));
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(out, (void *)(size_t)counts, N, 2));
    for (int i = 0; i < N; i++)
        if (out[i] != (unsigned char)((i * 3 + 7) ^ 0x5a)) { printf("byte %d is %d\n", i, out[i]); return 1; }
    CHECK(cuLibraryUnload(lib));
    printf("library: ok\n");
    return 0;
}
