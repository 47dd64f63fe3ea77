// Asynchronous device-to-host copies into page-locked memory, whose outputs capture reads
// on its reader threads: two streams, a buffer reused in stream order, the same content
// copied again and again, and (with "exit") a copy the program never waits for before it
// returns. Prints what the program itself saw (0: the bytes it expected).
#include <stdio.h>
#include <string.h>

int cudaMalloc(void**, size_t);
int cudaHostAlloc(void**, size_t, unsigned);
int cudaMemcpy(void*, const void*, size_t, int);
int cudaMemcpyAsync(void*, const void*, size_t, int, void*);
int cudaStreamCreate(void**);
int cudaStreamSynchronize(void*);
int cudaEventCreate(void**);
int cudaEventRecord(void*, void*);
int cudaEventSynchronize(void*);

enum { H2D = 1, D2H = 2, N = 1 << 20, HALF = N / 2 };
static unsigned char a[N], b[N], c[N];

int main(int argc, char** argv) {
    for (int i = 0; i < N; ++i) {
        a[i] = (unsigned char)(i * 7 + 1);
        b[i] = (unsigned char)(i * 13 + 2);
        c[i] = (unsigned char)(i * 5 + 3);
    }
    unsigned char *d = 0, *pinned = 0;
    void *s1 = 0, *s2 = 0, *e = 0;
    cudaMalloc((void**)&d, N);
    cudaHostAlloc((void**)&pinned, N, 0);
    cudaStreamCreate(&s1);
    cudaStreamCreate(&s2);
    cudaEventCreate(&e);
    cudaMemcpy(d, a, N, H2D);

    // Two halves on two streams, each stream waited for.
    cudaMemcpyAsync(pinned, d, HALF, D2H, s1);
    cudaMemcpyAsync(pinned + HALF, d + HALF, HALF, D2H, s2);
    cudaStreamSynchronize(s1);
    cudaStreamSynchronize(s2);
    printf("halves=%d\n", memcmp(pinned, a, N));
    // A blocking copy into the same memory: complete when it returns.
    memset(pinned, 0, N);
    cudaMemcpy(pinned, d, N, D2H);
    printf("blocking=%d\n", memcmp(pinned, a, N));
    memset(pinned, 0, N);

    // The buffer reused in stream order: c read back, b uploaded, b read back into the
    // same bytes, then an event waited for.
    cudaMemcpy(d, c, N, H2D);
    cudaMemcpyAsync(pinned, d, HALF, D2H, s1);
    cudaMemcpyAsync(d, b, HALF, H2D, s1);
    cudaMemcpyAsync(pinned, d, HALF, D2H, s1);
    cudaEventRecord(e, s1);
    cudaEventSynchronize(e);
    printf("reused=%d\n", memcmp(pinned, b, HALF));

    // The same content three times: one blob.
    for (int k = 0; k < 3; ++k) {
        cudaMemcpyAsync(pinned, d, HALF, D2H, s2);
        cudaStreamSynchronize(s2);
    }
    printf("repeated=%d\n", memcmp(pinned, b, HALF));

    // Never waited for: capture reads it when the program exits.
    if (argc > 1 && strcmp(argv[1], "exit") == 0) {
        cudaMemcpyAsync(pinned + HALF, d, HALF, D2H, s1);
    }
    return 0;
}
