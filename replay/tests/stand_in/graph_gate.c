/* graph_gate in C against the stand-in runtime (standin/) or a GPU: a stream gated by a
 * host function that waits until the program opens the gate, which it does only after
 * cudaGraphLaunch returned. The graph (a kernel node, a D2H node into page-locked memory)
 * runs behind the gate, three rounds of new input copied in before the gate. Anything that
 * waits for the stream inside cudaGraphLaunch never sees the gate open: the host function
 * gives up after 5 s and the program says so (natively, the launch returns at once).
 * Exit 0: right; 1: a wrong result, or the launch waited for the stream; 2: a call
 * failed. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "xor_kernel.h"

int cudaMalloc(void **, size_t);
int cudaHostAlloc(void **, size_t, unsigned);
int cudaStreamCreateWithFlags(void **, unsigned);
int cudaStreamSynchronize(void *);
int cudaMemcpyAsync(void *, const void *, size_t, int, void *);
int cudaLaunchHostFunc(void *, void (*)(void *), void *);
int cudaGraphCreate(void **, unsigned);
int cudaGraphAddMemcpyNode1D(void **, void *, void *const *, size_t, void *, const void *, size_t, int);
int cudaGraphAddKernelNode(void **, void *, void *const *, size_t, const struct kernel_params *);
int cudaGraphInstantiateWithFlags(void **, void *, unsigned long long);
int cudaGraphLaunch(void *, void *);

#define CHECK(call) do { int e_ = (call); if (e_) { printf("%s failed: %d\n", #call, e_); exit(2); } } while (0)
#define N 256

static volatile int gate_open;
static volatile int gate_gave_up;

/* Waits up to 5 s for the program to open the gate. */
static void gate(void *data) {
    (void)data;
    struct timespec ms = {0, 1000000};
    for (int i = 0; i < 5000 && !gate_open; i++) nanosleep(&ms, 0);
    if (!gate_open) gate_gave_up = 1;
}

int main(void) {
    register_xor_kernel();
    unsigned char *h_in, *h_out, *d;
    void *s, *g, *k, *out, *x;
    static unsigned long long key = 0x6d;
    CHECK(cudaHostAlloc((void **)&h_in, N, 0));
    CHECK(cudaHostAlloc((void **)&h_out, N, 0));
    CHECK(cudaMalloc((void **)&d, N));
    CHECK(cudaStreamCreateWithFlags(&s, 1));
    void *args[2] = {&d, &key};
    struct kernel_params kp = {(void *)xor_kernel, {1, 1, 1}, {N, 1, 1}, 0, args, 0};
    CHECK(cudaGraphCreate(&g, 0));
    CHECK(cudaGraphAddKernelNode(&k, g, 0, 0, &kp));
    CHECK(cudaGraphAddMemcpyNode1D(&out, g, &k, 1, h_out, d, N, 2));
    CHECK(cudaGraphInstantiateWithFlags(&x, g, 0));
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < N; i++) h_in[i] = (unsigned char)(i * (round + 3) + round);
        CHECK(cudaMemcpyAsync(d, h_in, N, 1, s));
        gate_open = 0;
        CHECK(cudaLaunchHostFunc(s, gate, 0));
        CHECK(cudaGraphLaunch(x, s));
        gate_open = 1;
        CHECK(cudaStreamSynchronize(s));
        if (gate_gave_up) {
            printf("round %d: the gate was never opened (the launch waited for the stream)\n", round);
            return 1;
        }
        for (int i = 0; i < N; i++)
            if (h_out[i] != (unsigned char)(h_in[i] ^ key)) { printf("round %d: byte %d wrong\n", round, i); return 1; }
    }
    printf("graph_gate: ok\n");
    return 0;
}
