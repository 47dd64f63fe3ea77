/* graph_explicit in C against the stand-in runtime (standin/): an explicit graph
 * of an H2D copy, a memset, a D2D copy after the H2D, two kernel nodes in a chain after
 * it (each xors the bytes with a key: the stand-in's
 * hrr_xor_bytes, which it runs over the bytes), an empty join node, an event record node and a
 * child graph holding the D2H copy; the D2D copy goes through graph memory (an
 * allocation node before it and a free node after it), launched three times with new
 * input, the second kernel's key changed in the executable graph before each launch
 * after the first, each launch's output checked. With argument "extra", a kernel node
 * passing its arguments through `extra` is added to a third graph. With argument "host", a second graph gains a host node (replay
 * runs its own, which does nothing) and is instantiated and launched. Exit 0: right; 1: a wrong result; 2: a call
 * failed (printed). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xor_kernel.h"

int cudaMalloc(void **, size_t);
int cudaHostAlloc(void **, size_t, unsigned);
int cudaStreamCreateWithFlags(void **, unsigned);
int cudaEventCreateWithFlags(void **, unsigned);
int cudaStreamSynchronize(void *);
int cudaGraphCreate(void **, unsigned);
int cudaGraphAddEmptyNode(void **, void *, void *const *, size_t);
int cudaGraphAddMemcpyNode1D(void **, void *, void *const *, size_t, void *, const void *, size_t, int);
int cudaGraphAddChildGraphNode(void **, void *, void *const *, size_t, void *);
int cudaGraphAddEventRecordNode(void **, void *, void *const *, size_t, void *);
int cudaGraphAddHostNode(void **, void *, void *const *, size_t, void *);
struct alloc_params { char pool[88]; const void *descs; size_t ndescs, bytesize; void *dptr; };
int cudaGraphAddMemAllocNode(void **, void *, void *const *, size_t, struct alloc_params *);
int cudaGraphAddMemFreeNode(void **, void *, void *const *, size_t, void *);
struct memset_params { void *dst; size_t pitch; unsigned value, element; size_t width, height; };
int cudaGraphAddMemsetNode(void **, void *, void *const *, size_t, const struct memset_params *);
int cudaGraphAddKernelNode(void **, void *, void *const *, size_t, const struct kernel_params *);
int cudaGraphExecKernelNodeSetParams(void *, void *, const struct kernel_params *);
int cudaGraphInstantiateWithFlags(void **, void *, unsigned long long);
int cudaGraphLaunch(void *, void *);
int cudaGraphExecDestroy(void *);
int cudaGraphDestroy(void *);

#define CHECK(call) do { int e_ = (call); if (e_) { printf("%s failed: %d\n", #call, e_); exit(2); } } while (0)
#define N 256
#define M 64

static void host_fn(void *data) { (void)data; }
struct host_params { void (*fn)(void *); void *data; };

int main(int argc, char **argv) {
    register_xor_kernel();
    unsigned char *h_in, *h_out, *d_in, *d_mid;
    void *s, *ev, *graph, *child, *exec;
    CHECK(cudaHostAlloc((void **)&h_in, N, 0));
    CHECK(cudaHostAlloc((void **)&h_out, N + M, 0));
    CHECK(cudaMalloc((void **)&d_in, N));
    CHECK(cudaMalloc((void **)&d_mid, N + M));
    CHECK(cudaStreamCreateWithFlags(&s, 1));
    CHECK(cudaEventCreateWithFlags(&ev, 2));

    void *c1, *n1, *n2, *n3, *n4, *n5, *n6, *a1, *t1, *f1;
    CHECK(cudaGraphCreate(&child, 0));
    CHECK(cudaGraphAddMemcpyNode1D(&c1, child, 0, 0, h_out, d_mid, N + M, 2));
    CHECK(cudaGraphCreate(&graph, 0));
    CHECK(cudaGraphAddMemcpyNode1D(&n1, graph, 0, 0, d_in, h_in, N, 1));
    struct memset_params mp = {d_mid + N, M, 0x5a, 1, M, 1};
    CHECK(cudaGraphAddMemsetNode(&n2, graph, 0, 0, &mp));
    struct alloc_params ap;
    memset(&ap, 0, sizeof ap);
    ap.bytesize = N;
    int pool[4] = {1, 0, 1, 0}; /* pinned allocations, no handle types, on device 0 */
    memcpy(ap.pool, pool, sizeof pool);
    CHECK(cudaGraphAddMemAllocNode(&a1, graph, 0, 0, &ap));
    void *before[2] = {n1, a1};
    CHECK(cudaGraphAddMemcpyNode1D(&t1, graph, before, 2, ap.dptr, d_in, N, 3));
    CHECK(cudaGraphAddMemcpyNode1D(&n3, graph, &t1, 1, d_mid, ap.dptr, N, 3));
    CHECK(cudaGraphAddMemFreeNode(&f1, graph, &n3, 1, ap.dptr));
    void *k1, *k2;
    unsigned long long key1 = 0x0f, key2 = 0x30;
    void *args1[2] = {&d_mid, &key1}, *args2[2] = {&d_mid, &key2};
    struct kernel_params kp1 = {(void *)xor_kernel, {1, 1, 1}, {N, 1, 1}, 0, args1, 0};
    struct kernel_params kp2 = {(void *)xor_kernel, {1, 1, 1}, {N, 1, 1}, 0, args2, 0};
    CHECK(cudaGraphAddKernelNode(&k1, graph, &n3, 1, &kp1));
    CHECK(cudaGraphAddKernelNode(&k2, graph, &k1, 1, &kp2));
    void *join[2] = {n2, k2};
    CHECK(cudaGraphAddEmptyNode(&n4, graph, join, 2));
    CHECK(cudaGraphAddEventRecordNode(&n5, graph, &n4, 1, ev));
    CHECK(cudaGraphAddChildGraphNode(&n6, graph, &n5, 1, child));
    CHECK(cudaGraphInstantiateWithFlags(&exec, graph, 0));
    for (int l = 0; l < 3; l++) {
        if (l > 0) {
            key2 = 0x30 + 0x101 * (unsigned long long)l;
            CHECK(cudaGraphExecKernelNodeSetParams(exec, k2, &kp2));
        }
        for (int i = 0; i < N; i++) h_in[i] = (unsigned char)(i * 5 + l * 40);
        memset(h_out, 0, N + M);
        CHECK(cudaGraphLaunch(exec, s));
        CHECK(cudaStreamSynchronize(s));
        for (int i = 0; i < N + M; i++) {
            unsigned char want = i < N ? (unsigned char)(h_in[i] ^ key1 ^ key2) : 0x5a;
            if (h_out[i] != want) { printf("launch %d: byte %d wrong\n", l, i); return 1; }
        }
    }
    CHECK(cudaGraphExecDestroy(exec));
    if (argc > 1 && strcmp(argv[1], "host") == 0) {
        void *g2, *h, *x2;
        CHECK(cudaGraphCreate(&g2, 0));
        struct host_params hp = {host_fn, 0};
        CHECK(cudaGraphAddHostNode(&h, g2, 0, 0, &hp));
        CHECK(cudaGraphInstantiateWithFlags(&x2, g2, 0));
        CHECK(cudaGraphLaunch(x2, s));
        CHECK(cudaStreamSynchronize(s));
    }
    if (argc > 1 && strcmp(argv[1], "extra") == 0) {
        /* Arguments packed in `extra`: the stand-in refuses them, capture records the call
         * as unreplayable by name. */
        void *g3, *k3, *packed[1] = {0};
        struct kernel_params kx = kp1;
        kx.extra = packed;
        CHECK(cudaGraphCreate(&g3, 0));
        printf("extra=%d\n", cudaGraphAddKernelNode(&k3, g3, 0, 0, &kx));
    }
    CHECK(cudaGraphDestroy(graph));
    CHECK(cudaGraphDestroy(child));
    printf("graph_explicit: ok\n");
    return 0;
}
