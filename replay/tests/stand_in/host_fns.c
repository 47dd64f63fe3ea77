/* host_fns in C against the stand-in runtime (standin/): host code the program queues,
 * replayed as ordering points.
 * 1. A copy in, a kernel (the stand-in's hrr_xor_bytes), a copy out, then a host function
 *    (cudaLaunchHostFunc) and a stream callback (cudaStreamAddCallback) on the stream.
 * 2. An explicit graph of a kernel node, a D2H node and a host node after it, the host
 *    node's data replaced in the graph and then in the executable graph, launched twice.
 * 3. A stream capture holding a host function between a kernel and a copy out.
 * Each host function counts its runs; every output and count is checked. With an argument,
 * a host function writes the pinned input of work queued after it, which capture cannot
 * read when that work is issued (the stand-in runs a stream's work when it is waited
 * for): "write", an asynchronous copy's source (capture reads it when the copy runs);
 * "sync", a synchronous copy's on the legacy stream (read once the copy returned);
 * "snapshot", what a kernel reads in place (refused by name).
 * Exit 0: right; 1: a wrong result; 2: a call failed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xor_kernel.h"

int cudaMalloc(void **, size_t);
int cudaHostAlloc(void **, size_t, unsigned);
int cudaStreamCreateWithFlags(void **, unsigned);
int cudaStreamSynchronize(void *);
int cudaMemcpyAsync(void *, const void *, size_t, int, void *);
int cudaMemcpy(void *, const void *, size_t, int);
int cudaLaunchHostFunc(void *, void (*)(void *), void *);
int cudaStreamAddCallback(void *, void (*)(void *, int, void *), void *, unsigned);
int cudaGraphCreate(void **, unsigned);
int cudaGraphAddMemcpyNode1D(void **, void *, void *const *, size_t, void *, const void *, size_t, int);
int cudaGraphAddKernelNode(void **, void *, void *const *, size_t, const struct kernel_params *);
struct host_params { void (*fn)(void *); void *data; };
int cudaGraphAddHostNode(void **, void *, void *const *, size_t, const struct host_params *);
int cudaGraphHostNodeSetParams(void *, const struct host_params *);
int cudaGraphExecHostNodeSetParams(void *, void *, const struct host_params *);
int cudaStreamBeginCapture(void *, int);
int cudaStreamEndCapture(void *, void **);
struct dim3 { unsigned x, y, z; };
int cudaLaunchKernel(const void *, struct dim3, struct dim3, void **, size_t, void *);
int cudaGraphInstantiateWithFlags(void **, void *, unsigned long long);
int cudaGraphLaunch(void *, void *);
int cudaGraphExecDestroy(void *);
int cudaGraphDestroy(void *);

#define CHECK(call) do { int e_ = (call); if (e_) { printf("%s failed: %d\n", #call, e_); exit(2); } } while (0)
#define N 256


static unsigned char *h_in, *h_out, *d;
static unsigned long long key = 0x5c;
static int runs[4];

static void count(void *data) { (*(int *)data)++; }
static void count_after(void *stream, int status, void *data) {
    (void)stream;
    if (status == 0) (*(int *)data)++;
}
static void fill(void *data) {
    for (int i = 0; i < N; i++) h_in[i] = (unsigned char)(i * 11 + 7);
    (*(int *)data)++;
}

static void xor_launch(void *s) {
    struct dim3 grid = {1, 1, 1}, block = {N, 1, 1};
    void *args[2] = {&d, &key};
    CHECK(cudaLaunchKernel((const void *)xor_kernel, grid, block, args, 0, s));
}

static int check(const char *what, int want_runs, int which) {
    for (int i = 0; i < N; i++)
        if (h_out[i] != (unsigned char)(h_in[i] ^ key)) {
            printf("%s: byte %d wrong\n", what, i);
            return 1;
        }
    if (runs[which] != want_runs) {
        printf("%s: the host code ran %d times, not %d\n", what, runs[which], want_runs);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    register_xor_kernel();
    void *s;
    CHECK(cudaHostAlloc((void **)&h_in, N, 0));
    CHECK(cudaHostAlloc((void **)&h_out, N, 0));
    CHECK(cudaMalloc((void **)&d, N));
    CHECK(cudaStreamCreateWithFlags(&s, 1));
    for (int i = 0; i < N; i++) h_in[i] = (unsigned char)(i * 3 + 1);

    if (argc > 1) {
        const char *how = argv[1];
        if (strcmp(how, "snapshot") == 0) {
            /* The kernel xors the pinned input in place, after the host function fills it. */
            CHECK(cudaLaunchHostFunc(s, fill, &runs[0]));
            struct dim3 grid = {1, 1, 1}, block = {N, 1, 1};
            void *args[2] = {&h_in, &key};
            CHECK(cudaLaunchKernel((const void *)xor_kernel, grid, block, args, 0, s));
            CHECK(cudaStreamSynchronize(s));
            for (int i = 0; i < N; i++)
                if (h_in[i] != (unsigned char)((i * 11 + 7) ^ key)) { printf("snapshot: byte %d wrong\n", i); return 1; }
            printf("host_fns %s: ok\n", how);
            return 0;
        }
        if (strcmp(how, "sync") == 0) {
            CHECK(cudaLaunchHostFunc(0, fill, &runs[0]));
            CHECK(cudaMemcpy(d, h_in, N, 1));
        } else {
            CHECK(cudaLaunchHostFunc(s, fill, &runs[0]));
            CHECK(cudaMemcpyAsync(d, h_in, N, 1, s));
        }
        xor_launch(s);
        CHECK(cudaMemcpyAsync(h_out, d, N, 2, s));
        CHECK(cudaStreamSynchronize(s));
        if (check("written by a host function", 1, 0)) return 1;
        printf("host_fns %s: ok\n", how);
        return 0;
    }

    /* 1. Host code after the stream's work. */
    CHECK(cudaMemcpyAsync(d, h_in, N, 1, s));
    xor_launch(s);
    CHECK(cudaMemcpyAsync(h_out, d, N, 2, s));
    CHECK(cudaLaunchHostFunc(s, count, &runs[0]));
    CHECK(cudaStreamAddCallback(s, count_after, &runs[0], 0));
    CHECK(cudaStreamSynchronize(s));
    if (check("stream host functions", 2, 0)) return 1;

    /* 2. A graph with a host node, its data replaced twice. */
    void *g, *k, *out, *h, *x;
    void *args[2] = {&d, &key};
    struct kernel_params kp = {(void *)xor_kernel, {1, 1, 1}, {N, 1, 1}, 0, args, 0};
    CHECK(cudaGraphCreate(&g, 0));
    CHECK(cudaGraphAddKernelNode(&k, g, 0, 0, &kp));
    CHECK(cudaGraphAddMemcpyNode1D(&out, g, &k, 1, h_out, d, N, 2));
    struct host_params hp = {count, &runs[3]};
    CHECK(cudaGraphAddHostNode(&h, g, &out, 1, &hp));
    hp.data = &runs[1];
    CHECK(cudaGraphHostNodeSetParams(h, &hp));
    CHECK(cudaGraphInstantiateWithFlags(&x, g, 0));
    CHECK(cudaGraphLaunch(x, s));
    CHECK(cudaStreamSynchronize(s));
    /* d held in ^ key; the node xors again: out = in. */
    for (int i = 0; i < N; i++)
        if (h_out[i] != h_in[i]) { printf("graph: byte %d wrong\n", i); return 1; }
    hp.data = &runs[2];
    CHECK(cudaGraphExecHostNodeSetParams(x, h, &hp));
    CHECK(cudaGraphLaunch(x, s));
    CHECK(cudaStreamSynchronize(s));
    if (check("graph host node", 1, 1) || check("graph host node replaced", 1, 2) || runs[3]) return 1;
    CHECK(cudaGraphExecDestroy(x));
    CHECK(cudaGraphDestroy(g));

    /* 3. A host function captured into a graph. */
    void *cg, *cx;
    CHECK(cudaStreamBeginCapture(s, 0));
    xor_launch(s);
    CHECK(cudaLaunchHostFunc(s, count, &runs[3]));
    CHECK(cudaMemcpyAsync(h_out, d, N, 2, s));
    CHECK(cudaStreamEndCapture(s, &cg));
    CHECK(cudaGraphInstantiateWithFlags(&cx, cg, 0));
    CHECK(cudaGraphLaunch(cx, s));
    CHECK(cudaStreamSynchronize(s));
    /* d held in ^ key (after the graph's two launches); one more xor: out = in. */
    for (int i = 0; i < N; i++)
        if (h_out[i] != h_in[i]) { printf("captured host function: byte %d wrong\n", i); return 1; }
    if (runs[3] != 1) { printf("the captured host function ran %d times\n", runs[3]); return 1; }
    CHECK(cudaGraphExecDestroy(cx));
    CHECK(cudaGraphDestroy(cg));
    printf("host_fns: ok\n");
    return 0;
}
