/* graph_edits in C against the stand-in runtime (standin/): graphs edited after they were
 * made, each edit changing what the launch computes.
 * 1. A child-graph node's graph, asked for (cudaGraphChildGraphNodeGetGraph), gains a
 *    second kernel node; the graph a node belongs to is asked for
 *    (cudaGraphNodeGetContainingGraph) and must be that graph; launched, then the child
 *    replaced in the executable graph (cudaGraphExecChildGraphNodeSetParams) by one of the
 *    same shape with other keys, launched again.
 * 2. A capture into a graph (cudaStreamBeginCaptureToGraph after its H2D node) whose last
 *    node gains a dependency on an explicit memset node (cudaStreamUpdateCaptureDependencies,
 *    add): without it the D2H copy may run before the memset.
 * Every launch's output checked. Exit 0: right; 1: a wrong result; 2: a call failed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xor_kernel.h"

int cudaMalloc(void **, size_t);
int cudaHostAlloc(void **, size_t, unsigned);
int cudaStreamCreateWithFlags(void **, unsigned);
int cudaStreamSynchronize(void *);
int cudaGraphCreate(void **, unsigned);
int cudaGraphAddMemcpyNode1D(void **, void *, void *const *, size_t, void *, const void *, size_t, int);
int cudaGraphAddChildGraphNode(void **, void *, void *const *, size_t, void *);
struct memset_params { void *dst; size_t pitch; unsigned value, element; size_t width, height; };
int cudaGraphAddMemsetNode(void **, void *, void *const *, size_t, const struct memset_params *);
int cudaGraphAddKernelNode(void **, void *, void *const *, size_t, const struct kernel_params *);
int cudaGraphGetNodes(void *, void **, size_t *);
int cudaGraphChildGraphNodeGetGraph(void *, void **);
int cudaGraphNodeGetContainingGraph(void *, void **);
int cudaGraphExecChildGraphNodeSetParams(void *, void *, void *);
int cudaStreamBeginCaptureToGraph(void *, void *, void *const *, const void *, size_t, int);
int cudaStreamUpdateCaptureDependencies(void *, void **, const void *, size_t, unsigned);
int cudaStreamEndCapture(void *, void **);
int cudaMemcpyAsync(void *, const void *, size_t, int, void *);
struct dim3 { unsigned x, y, z; };
int cudaLaunchKernel(const void *, struct dim3, struct dim3, void **, size_t, void *);
int cudaGraphInstantiateWithFlags(void **, void *, unsigned long long);
int cudaGraphLaunch(void *, void *);
int cudaGraphExecDestroy(void *);
int cudaGraphDestroy(void *);

#define CHECK(call) do { int e_ = (call); if (e_) { printf("%s failed: %d\n", #call, e_); exit(2); } } while (0)
#define N 256
#define M 64


static unsigned char *h_in, *h_out, *d;

/* A kernel node xoring d's first N bytes with *key, after `after` (null: none). */
static void *xor_node(void *graph, void *after, unsigned long long *key) {
    void *node, *args[2] = {&d, key};
    struct kernel_params kp = {(void *)xor_kernel, {1, 1, 1}, {N, 1, 1}, 0, args, 0};
    CHECK(cudaGraphAddKernelNode(&node, graph, after ? &after : 0, after ? 1 : 0, &kp));
    return node;
}

static int check(const char *what, unsigned key, int tail) {
    for (int i = 0; i < N + (tail ? M : 0); i++) {
        unsigned char want = i < N ? (unsigned char)(h_in[i] ^ key) : 0x77;
        if (h_out[i] != want) {
            printf("%s: byte %d is %d, not %d\n", what, i, h_out[i], want);
            return 1;
        }
    }
    return 0;
}

int main(void) {
    register_xor_kernel();
    void *s;
    CHECK(cudaHostAlloc((void **)&h_in, N, 0));
    CHECK(cudaHostAlloc((void **)&h_out, N + M, 0));
    CHECK(cudaMalloc((void **)&d, N + M));
    CHECK(cudaStreamCreateWithFlags(&s, 1));
    for (int i = 0; i < N; i++) h_in[i] = (unsigned char)(i * 7 + 3);

    /* 1. A child graph edited through its node, then replaced in the executable graph. */
    static unsigned long long k1 = 0x11, k2 = 0x22, k3 = 0x44, k4 = 0x08;
    void *child, *parent, *inner, *owner, *exec, *n1, *nc, *n3, *first;
    CHECK(cudaGraphCreate(&child, 0));
    xor_node(child, 0, &k1);
    CHECK(cudaGraphCreate(&parent, 0));
    CHECK(cudaGraphAddMemcpyNode1D(&n1, parent, 0, 0, d, h_in, N, 1));
    CHECK(cudaGraphAddChildGraphNode(&nc, parent, &n1, 1, child));
    CHECK(cudaGraphAddMemcpyNode1D(&n3, parent, &nc, 1, h_out, d, N, 2));
    CHECK(cudaGraphChildGraphNodeGetGraph(nc, &inner));
    size_t count = 1;
    CHECK(cudaGraphGetNodes(inner, &first, &count));
    void *ki = xor_node(inner, first, &k2);
    CHECK(cudaGraphNodeGetContainingGraph(ki, &owner));
    if (owner != inner) { printf("the new node's graph is %p, not the child's %p\n", owner, inner); return 1; }
    CHECK(cudaGraphNodeGetContainingGraph(n3, &owner));
    if (owner != parent) { printf("the D2H node's graph is %p, not %p\n", owner, parent); return 1; }
    CHECK(cudaGraphInstantiateWithFlags(&exec, parent, 0));
    CHECK(cudaGraphLaunch(exec, s));
    CHECK(cudaStreamSynchronize(s));
    if (check("child graph edited", 0x11 ^ 0x22, 0)) return 1;
    void *other;
    CHECK(cudaGraphCreate(&other, 0));
    xor_node(other, xor_node(other, 0, &k3), &k4);
    CHECK(cudaGraphExecChildGraphNodeSetParams(exec, nc, other));
    CHECK(cudaGraphLaunch(exec, s));
    CHECK(cudaStreamSynchronize(s));
    if (check("child graph replaced", 0x44 ^ 0x08, 0)) return 1;
    CHECK(cudaGraphExecDestroy(exec));

    /* 2. A capture's last node made to wait for an explicit node too. */
    void *g2, *m1, *m2, *ended;
    CHECK(cudaGraphCreate(&g2, 0));
    CHECK(cudaGraphAddMemcpyNode1D(&m1, g2, 0, 0, d, h_in, N, 1));
    struct memset_params mp = {d + N, M, 0x77, 1, M, 1};
    CHECK(cudaGraphAddMemsetNode(&m2, g2, &m1, 1, &mp));
    CHECK(cudaStreamBeginCaptureToGraph(s, g2, &m1, 0, 1, 2));
    struct dim3 grid = {1, 1, 1}, block = {N, 1, 1};
    void *args[2] = {&d, &k3};
    CHECK(cudaLaunchKernel((const void *)xor_kernel, grid, block, args, 0, s));
    CHECK(cudaStreamUpdateCaptureDependencies(s, &m2, 0, 1, 0));
    CHECK(cudaMemcpyAsync(h_out, d, N + M, 2, s));
    CHECK(cudaStreamEndCapture(s, &ended));
    if (ended != g2) { printf("the capture ended in %p, not %p\n", ended, g2); return 1; }
    memset(h_out, 0, N + M);
    CHECK(cudaGraphInstantiateWithFlags(&exec, g2, 0));
    CHECK(cudaGraphLaunch(exec, s));
    CHECK(cudaStreamSynchronize(s));
    if (check("capture after an explicit node", 0x44, 1)) return 1;
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(g2));
    CHECK(cudaGraphDestroy(other));
    CHECK(cudaGraphDestroy(parent));
    CHECK(cudaGraphDestroy(child));
    printf("graph_edits: ok\n");
    return 0;
}
