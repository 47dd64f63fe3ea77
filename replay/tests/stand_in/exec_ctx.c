/* exec_ctx in C against the stand-in runtime (standin/): CUDA 13.5's execution contexts, a
 * device's own: streams made in it (cudaExecutionCtxStreamCreate), work on them, an event
 * recorded over the context (cudaExecutionCtxRecordEvent) and waited for on the host, the
 * context made to wait for it (cudaExecutionCtxWaitEvent), the context synchronised
 * (cudaExecutionCtxSynchronize); each round's output read into page-locked memory and
 * checked after the context's event or synchronisation. Exit 0: right; 1: a wrong result;
 * 2: a call failed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xor_kernel.h"

int cudaMalloc(void **, size_t);
int cudaHostAlloc(void **, size_t, unsigned);
int cudaMemcpyAsync(void *, const void *, size_t, int, void *);
int cudaEventCreateWithFlags(void **, unsigned);
int cudaEventSynchronize(void *);
int cudaDeviceGetExecutionCtx(void **, int);
int cudaExecutionCtxStreamCreate(void **, void *, unsigned, int);
int cudaExecutionCtxRecordEvent(void *, void *);
int cudaExecutionCtxWaitEvent(void *, void *);
int cudaExecutionCtxSynchronize(void *);
struct dim3 { unsigned x, y, z; };
int cudaLaunchKernel(const void *, struct dim3, struct dim3, void **, size_t, void *);

#define CHECK(call) do { int e_ = (call); if (e_) { printf("%s failed: %d\n", #call, e_); exit(2); } } while (0)
#define N 256

static unsigned char *in, *out, *d;

static int check(const char *what, unsigned key) {
    for (int i = 0; i < N; i++)
        if (out[i] != (unsigned char)(in[i] ^ key)) {
            printf("%s: byte %d is %d, not %d\n", what, i, out[i], in[i] ^ key);
            return 1;
        }
    return 0;
}

/* In, xor with *key, out, on stream s. */
static void round_on(void *s, unsigned long long *key) {
    struct dim3 grid = {1, 1, 1}, block = {N, 1, 1};
    void *args[2] = {&d, key};
    CHECK(cudaMemcpyAsync(d, in, N, 1, s));
    CHECK(cudaLaunchKernel((const void *)xor_kernel, grid, block, args, 0, s));
    CHECK(cudaMemcpyAsync(out, d, N, 2, s));
}

int main(void) {
    register_xor_kernel();
    void *ctx, *s1, *s2, *ev;
    static unsigned long long k1 = 0x3c, k2 = 0x81;
    CHECK(cudaHostAlloc((void **)&in, N, 0));
    CHECK(cudaHostAlloc((void **)&out, N, 0));
    CHECK(cudaMalloc((void **)&d, N));
    for (int i = 0; i < N; i++) in[i] = (unsigned char)(i * 5 + 9);
    CHECK(cudaDeviceGetExecutionCtx(&ctx, 0));
    CHECK(cudaExecutionCtxStreamCreate(&s1, ctx, 1, 0));
    CHECK(cudaExecutionCtxStreamCreate(&s2, ctx, 1, 0));
    CHECK(cudaEventCreateWithFlags(&ev, 2));
    round_on(s1, &k1);
    CHECK(cudaExecutionCtxRecordEvent(ctx, ev));
    CHECK(cudaEventSynchronize(ev));
    if (check("after the context's event", 0x3c)) return 1;
    CHECK(cudaExecutionCtxWaitEvent(ctx, ev));
    round_on(s2, &k2);
    CHECK(cudaExecutionCtxSynchronize(ctx));
    if (check("after the context's synchronisation", 0x81)) return 1;
    printf("exec_ctx: ok\n");
    return 0;
}
