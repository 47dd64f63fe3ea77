/* mapped_pieces in C against the stand-in runtime (standin/): a kernel (hrr_xor_bytes)
 * rewrites a 40 MiB mapped page-locked buffer in place, read by the host after a device
 * synchronisation; capture records that output in three pieces (16, 16 and 8 MiB), each
 * checked on its own at replay. Every byte is checked here.
 * Exit 0: right; 1: a wrong result; 2: a call failed. */
#include <stdio.h>
#include <stdlib.h>

#include "xor_kernel.h"

int cudaHostAlloc(void **, size_t, unsigned);
int cudaHostGetDevicePointer(void **, void *, unsigned);
int cudaDeviceSynchronize(void);
int cudaFreeHost(void *);
struct dim3 { unsigned x, y, z; };
int cudaLaunchKernel(const void *, struct dim3, struct dim3, void **, size_t, void *);

#define CHECK(call) do { int e_ = (call); if (e_) { printf("%s failed: %d\n", #call, e_); exit(2); } } while (0)
#define N (40u << 20)

static unsigned char at(size_t i) { return (unsigned char)(i * 7 + i / 4099); }

int main(void) {
    register_xor_kernel();
    unsigned char *h, *d;
    unsigned long long key = 0xa5;
    CHECK(cudaHostAlloc((void **)&h, N, 2 /* cudaHostAllocMapped */));
    CHECK(cudaHostGetDevicePointer((void **)&d, h, 0));
    for (size_t i = 0; i < N; i++) h[i] = at(i);
    void *args[2] = {&d, &key};
    struct dim3 grid = {N / 256, 1, 1}, block = {256, 1, 1};
    CHECK(cudaLaunchKernel((const void *)xor_kernel, grid, block, args, 0, 0));
    CHECK(cudaDeviceSynchronize());
    for (size_t i = 0; i < N; i++)
        if (h[i] != (unsigned char)(at(i) ^ key)) { printf("byte %zu: %u\n", i, h[i]); return 1; }
    CHECK(cudaFreeHost(h));
    printf("mapped_pieces: ok\n");
    return 0;
}
