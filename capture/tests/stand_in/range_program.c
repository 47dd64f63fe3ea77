// A program with work before, inside and after a profiler range (tests/range.rs): the
// stand-in runtime's (standin/) "device" memory is host memory, so the snapshot at the range's start
// must hold what the copy and the memset before it left there. Two fat binaries are
// registered; only the first one's kernel is launched, inside the range, so the range
// archive keeps that one's registrations and leaves the other's out.
#include <stdio.h>
#include <stddef.h>

#include "fatbin.h"

int cudaMalloc(void** p, size_t n);
int cudaFree(void* p);
int cudaMemcpy(void* dst, const void* src, size_t n, int kind);
int cudaMemset(void* p, int v, size_t n);
int cudaDeviceSynchronize(void);
int cudaProfilerStart(void);
int cudaProfilerStop(void);
void** __cudaRegisterFatBinary(void*);
void __cudaRegisterFatBinaryEnd(void**);
void __cudaRegisterFunction(void**, const char*, char*, const char*, int, void*, void*, void*, void*, int*);
typedef struct { unsigned x, y, z; } dim3;
int cudaLaunchKernel(const void*, dim3, dim3, void**, size_t, void*);

// Two fat binaries, each with one kernel of no parameters.
HRR_FATBIN(used, ".version 8.0\n.target sm_90\n.visible .entry used()\n{\n ret;\n}\n");
HRR_FATBIN(unused, ".version 8.0\n.target sm_90\n.visible .entry unused()\n{\n ret;\n}\n");
static void used_stub(void) {}
static void unused_stub(void) {}

static void registers(void* wrapper, void (*stub)(void), char* name) {
    void** h = __cudaRegisterFatBinary(wrapper);
    __cudaRegisterFunction(h, (const char*)stub, name, name, -1, 0, 0, 0, 0, 0);
    __cudaRegisterFatBinaryEnd(h);
}

int main(int argc, char** argv) {
    int ranges = argc > 1 ? argv[1][0] - '0' : 1;
    int* d = NULL;
    int h[1024], out[1024];
    registers(&used_wrapper, used_stub, "used");
    registers(&unused_wrapper, unused_stub, "unused");
    dim3 one = {1, 1, 1};
    for (int i = 0; i < 1024; ++i) h[i] = i * 3 + 1;
    if (cudaMalloc((void**)&d, sizeof h)) return 2;
    for (int r = 0; r < ranges; ++r) {
        cudaMemcpy(d, h, sizeof h, 1);
        cudaMemset(d, 7, 16 + r);
        cudaDeviceSynchronize();
        cudaProfilerStart();
        cudaLaunchKernel((const void*)used_stub, one, one, 0, 0, 0);
        cudaMemcpy(out, d, sizeof out, 2);
        cudaProfilerStop();
    }
    cudaMemcpy(d, h, sizeof h, 1);
    cudaFree(d);
    printf("first=%d last=%d\n", out[0], out[1023]);
    return 0;
}
