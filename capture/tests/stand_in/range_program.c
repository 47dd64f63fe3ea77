// A program with work before, inside and after a profiler range (tests/range.rs): the
// stand-in runtime's "device" memory is host memory, so the snapshot at the range's start
// must hold what the copy and the memset before it left there.
#include <stdio.h>
#include <stddef.h>

int cudaMalloc(void** p, size_t n);
int cudaFree(void* p);
int cudaMemcpy(void* dst, const void* src, size_t n, int kind);
int cudaMemset(void* p, int v, size_t n);
int cudaDeviceSynchronize(void);
int cudaProfilerStart(void);
int cudaProfilerStop(void);

int main(int argc, char** argv) {
    int ranges = argc > 1 ? argv[1][0] - '0' : 1;
    int* d = NULL;
    int h[1024], out[1024];
    for (int i = 0; i < 1024; ++i) h[i] = i * 3 + 1;
    if (cudaMalloc((void**)&d, sizeof h)) return 2;
    for (int r = 0; r < ranges; ++r) {
        cudaMemcpy(d, h, sizeof h, 1);
        cudaMemset(d, 7, 16 + r);
        cudaDeviceSynchronize();
        cudaProfilerStart();
        cudaMemcpy(out, d, sizeof out, 2);
        cudaProfilerStop();
    }
    cudaMemcpy(d, h, sizeof h, 1);
    cudaFree(d);
    printf("first=%d last=%d\n", out[0], out[1023]);
    return 0;
}
