// Registers one kernel the way nvcc's generated code does, then launches it N times
// through __cudaLaunchKernel (CUDA 13's <<<>>> path) and prints the time per launch.
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct { unsigned x, y, z; } dim3;
void** __cudaRegisterFatBinary(void* wrapper);
void __cudaRegisterFatBinaryEnd(void** handle);
void __cudaRegisterFunction(void** h, const char* stub, char* dev, const char* name, int limit,
                            void* tid, void* bid, void* bdim, void* gdim, int* wsize);
int __cudaGetKernel(void** kernel, const void* stub);
int __cudaLaunchKernel(const void* k, dim3 g, dim3 b, void** args, size_t shmem, void* s);
int cudaMalloc(void** p, size_t n);

static void stub(void) {}

// A fat binary: header (magic, version 1, header size 16, 64 bytes of payload).
static unsigned long long fatbin[2 + 8] = {0x0010000100000000ull | 0xBA55ED50ull, 64};
static struct { int magic, version; const void* data; void* unused; } wrapper = {0x466243b1, 1, fatbin, 0};

int main(int argc, char** argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    void** h = __cudaRegisterFatBinary(&wrapper);
    __cudaRegisterFunction(h, (const char*)stub, "step", "step", -1, 0, 0, 0, 0, 0);
    __cudaRegisterFatBinaryEnd(h);
    void* k;
    __cudaGetKernel(&k, (const void*)stub);
    float* d;
    cudaMalloc((void**)&d, 1024);
    float a = 0.5f;
    void* args[] = {&d, &a};
    dim3 g = {1, 1, 1}, b = {256, 1, 1};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long i = 0; i < n; ++i) __cudaLaunchKernel(k, g, b, args, 0, 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ns = (t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec);
    printf("%.0f ns per launch over %ld launches\n", ns / n, n);
    return 0;
}
