/* graph_nodes in C against the stand-in runtime (standin/): a graph built and edited only
 * through the generic node calls, each type's struct in cudaGraphNodeParams' union:
 *   cudaGraphAddNode of a memset node, a kernel node xoring its bytes, an event record
 *   node, an event wait node, a host node, an empty node, a child graph (itself a kernel
 *   node added by the driver's cuGraphAddNode_v2 and an empty one by its first form
 *   cuGraphAddNode), a graph allocation and its free;
 *   cudaGraphNodeSetParams of the kernel node (another key) before instantiation;
 *   cudaGraphExecNodeSetParams of the kernel node and the host node between launches.
 * Each launch's output checked (copied back after it). With argument "conditional", a
 * conditional node is tried first (the stand-in has none; capture records the call
 * unreplayable by name). Exit 0: right; 1: a wrong result; 2: a call failed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xor_kernel.h"

int cudaMalloc(void **, size_t);
int cudaMemcpy(void *, const void *, size_t, int);
int cudaStreamCreateWithFlags(void **, unsigned);
int cudaStreamSynchronize(void *);
int cudaEventCreateWithFlags(void **, unsigned);
int cudaGraphCreate(void **, unsigned);
int cudaGetFuncBySymbol(void **, const void *);
int cudaGraphInstantiateWithFlags(void **, void *, unsigned long long);
int cudaGraphLaunch(void *, void *);
int cudaGraphExecDestroy(void *);
int cudaGraphDestroy(void *);

struct kernel_v2 { void *func; unsigned grid[3], block[3], shmem; void **params; void **extra; void *ctx; int type; };
struct memset_v2 { void *dst; size_t pitch; unsigned value, element; size_t width, height; void *ctx; };
struct host_v2 { void (*fn)(void *); void *data; unsigned sync; void *ctx; };
struct alloc_params { char pool[88]; const void *descs; size_t ndescs, bytesize; void *dptr; };
struct node_params {
    int type, reserved0[3];
    union {
        long long pad[29];
        struct kernel_v2 kernel;
        struct memset_v2 memset;
        struct host_v2 host;
        struct { void *graph; int ownership; } graph;
        struct { void *event; void *ctx; } event;
        struct alloc_params alloc;
        struct { void *dptr; } free;
    } u;
    long long reserved2;
};
int cudaGraphAddNode(void **, void *, void *const *, const void *, size_t, struct node_params *);
int cudaGraphNodeSetParams(void *, struct node_params *);
int cudaGraphExecNodeSetParams(void *, void *, struct node_params *);
int cuGraphAddNode_v2(void **, void *, void *const *, const void *, size_t, struct node_params *);
int cuGraphAddNode(void **, void *, void *const *, size_t, struct node_params *);

#define CHECK(call) do { int e_ = (call); if (e_) { printf("%s failed: %d\n", #call, e_); exit(2); } } while (0)
#define N 256

static unsigned char *d, out[N];
static int host_calls[2];
static void host_a(void *data) { (void)data; host_calls[0]++; }
static void host_b(void *data) { (void)data; host_calls[1]++; }

static struct node_params node(int type) {
    struct node_params p;
    memset(&p, 0, sizeof p);
    p.type = type;
    return p;
}

/* A kernel node's struct xoring d with *key. */
static struct node_params xor_params(unsigned long long *key, void **args) {
    struct node_params p = node(0);
    args[0] = &d;
    args[1] = key;
    p.u.kernel = (struct kernel_v2){(void *)xor_kernel, {1, 1, 1}, {N, 1, 1}, 0, args, 0, 0, 0};
    return p;
}

/* A node of `p` after `after`. */
static void *add(void *graph, void *after, struct node_params *p) {
    void *n;
    CHECK(cudaGraphAddNode(&n, graph, after ? &after : 0, 0, after ? 1 : 0, p));
    return n;
}

static int check(const char *what, unsigned key, int a, int b) {
    CHECK(cudaMemcpy(out, d, N, 2));
    for (int i = 0; i < N; i++)
        if (out[i] != (unsigned char)(0x5a ^ key)) {
            printf("%s: byte %d is %d, not %d\n", what, i, out[i], 0x5a ^ key);
            return 1;
        }
    if (host_calls[0] != a || host_calls[1] != b) {
        printf("%s: host functions ran %d and %d times\n", what, host_calls[0], host_calls[1]);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    register_xor_kernel();
    void *s, *ev, *graph, *child, *exec;
    CHECK(cudaMalloc((void **)&d, N));
    CHECK(cudaStreamCreateWithFlags(&s, 1));
    CHECK(cudaEventCreateWithFlags(&ev, 2));
    CHECK(cudaGraphCreate(&graph, 0));
    if (argc > 1 && !strcmp(argv[1], "conditional")) {
        struct node_params c = node(13);
        void *n;
        if (cudaGraphAddNode(&n, graph, 0, 0, 0, &c) == 0) { printf("a conditional node was added\n"); return 1; }
    }
    static unsigned long long k1 = 0x11, k2 = 0x22, k3 = 0x44, k4 = 0x08;
    void *a1[2], *a2[2], *a3[2];
    struct node_params ms = node(2);
    ms.u.memset = (struct memset_v2){d, N, 0x5a, 1, N, 1, 0};
    void *n_set = add(graph, 0, &ms);
    struct node_params kp = xor_params(&k1, a1);
    void *n_xor = add(graph, n_set, &kp);
    struct node_params rec = node(7), wait = node(6), host = node(3), empty = node(5);
    rec.u.event.event = ev;
    wait.u.event.event = ev;
    void *n_rec = add(graph, n_xor, &rec);
    void *n_wait = add(graph, n_rec, &wait);
    host.u.host = (struct host_v2){host_a, 0, 0, 0};
    void *n_host = add(graph, n_wait, &host);
    void *n_empty = add(graph, n_host, &empty);
    /* The child: a kernel node by the driver's generic call naming the kernel by its
     * CUfunction (key k4), an empty node after it by the driver's first form. */
    CHECK(cudaGraphCreate(&child, 0));
    void *fn, *cn, *ce, *ca[2] = {&d, &k4};
    CHECK(cudaGetFuncBySymbol(&fn, (const void *)xor_kernel));
    struct node_params ck = node(0);
    struct { void *func; unsigned grid[3], block[3], shmem; void **params; void **extra; void *kern, *ctx; } *dk = (void *)&ck.u;
    *dk = (typeof(*dk)){fn, {1, 1, 1}, {N, 1, 1}, 0, ca, 0, 0, 0};
    CHECK(cuGraphAddNode_v2(&cn, child, 0, 0, 0, &ck));
    struct node_params ce_p = node(5);
    CHECK(cuGraphAddNode(&ce, child, &cn, 1, &ce_p));
    struct node_params cg = node(4);
    cg.u.graph.graph = child;
    void *n_child = add(graph, n_empty, &cg);
    struct node_params al = node(10);
    int pool[4] = {1, 0, 1, 0}; /* pinned allocations, no handle types, on device 0 */
    memcpy(al.u.alloc.pool, pool, sizeof pool);
    al.u.alloc.bytesize = 4096;
    void *n_alloc = add(graph, n_child, &al);
    if (!al.u.alloc.dptr) { printf("the allocation node wrote no address\n"); return 1; }
    struct node_params fr = node(11);
    fr.u.free.dptr = al.u.alloc.dptr;
    add(graph, n_alloc, &fr);
    /* An update before instantiation: the node's key is k2 now. */
    kp = xor_params(&k2, a2);
    CHECK(cudaGraphNodeSetParams(n_xor, &kp));
    CHECK(cudaGraphInstantiateWithFlags(&exec, graph, 0));
    CHECK(cudaGraphLaunch(exec, s));
    CHECK(cudaStreamSynchronize(s));
    if (check("first launch", 0x22 ^ 0x08, 1, 0)) return 1;
    /* Updates of the executable graph: key k3, the other host function. */
    kp = xor_params(&k3, a3);
    CHECK(cudaGraphExecNodeSetParams(exec, n_xor, &kp));
    host.u.host.fn = host_b;
    CHECK(cudaGraphExecNodeSetParams(exec, n_host, &host));
    CHECK(cudaGraphLaunch(exec, s));
    CHECK(cudaStreamSynchronize(s));
    if (check("second launch", 0x44 ^ 0x08, 1, 1)) return 1;
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(graph));
    CHECK(cudaGraphDestroy(child));
    printf("graph_nodes: ok\n");
    return 0;
}
