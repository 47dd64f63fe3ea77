// Copies into page-locked memory on two devices' streams (the stand-in with
// HRR_STAND_IN_DEVICES=2): each device's stream with its device current, the second
// device's stream with the first current, and a copy made while the program has an error
// pending, which it reads after. Capture's own events must be of the stream's device, and
// none of its calls may leave an error for the program to see. Prints the last errors the
// program saw and each copy's first byte.
#include <stdio.h>

int cudaGetDeviceCount(int*);
int cudaSetDevice(int);
int cudaMalloc(void**, size_t);
int cudaHostAlloc(void**, size_t, unsigned);
int cudaMemset(void*, int, size_t);
int cudaMemcpyAsync(void*, const void*, size_t, int, void*);
int cudaStreamCreate(void**);
int cudaStreamSynchronize(void*);
int cudaGetLastError(void);
int cudaPeekAtLastError(void);

enum { D2H = 2, N = 4096 };

int main(void) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != 0 || n < 2) {
        printf("devices=%d: two wanted\n", n);
        return 2;
    }
    unsigned char *pinned = 0, *d0 = 0, *d1 = 0;
    void *s0 = 0, *s1 = 0;
    cudaHostAlloc((void**)&pinned, 4 * N, 0);
    cudaSetDevice(0);
    cudaStreamCreate(&s0);
    cudaMalloc((void**)&d0, N);
    cudaMemset(d0, 0x10, N);
    cudaSetDevice(1);
    cudaStreamCreate(&s1);
    cudaMalloc((void**)&d1, N);
    cudaMemset(d1, 0x11, N);

    // Device 0's stream first: capture's events of device 0 are made and pooled.
    cudaSetDevice(0);
    cudaMemcpyAsync(pinned, d0, N, D2H, s0);
    cudaStreamSynchronize(s0);
    printf("device 0's copy: last error %d\n", cudaPeekAtLastError());
    cudaSetDevice(1);
    cudaMemcpyAsync(pinned + N, d1, N, D2H, s1);
    printf("device 1's copy: last error %d\n", cudaPeekAtLastError());
    cudaSetDevice(0);
    cudaMemcpyAsync(pinned + 2 * N, d1, N, D2H, s1);
    printf("device 1's stream, device 0 current: last error %d\n", cudaPeekAtLastError());
    cudaSetDevice(7);
    cudaMemcpyAsync(pinned + 3 * N, d0, N, D2H, s0);
    printf("an error pending across a copy: %d\n", cudaGetLastError());
    cudaStreamSynchronize(s0);
    cudaStreamSynchronize(s1);
    printf("first bytes %x %x %x %x\n", pinned[0], pinned[N], pinned[2 * N], pinned[3 * N]);
    return 0;
}
