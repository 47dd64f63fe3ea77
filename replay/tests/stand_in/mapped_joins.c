/* mapped_joins in C against the stand-in runtime (standin/): four non-blocking streams each
 * run a kernel (hrr_xor_bytes) over their quarter of a mapped page-locked buffer and record
 * an event; the first stream waits for the other three's events, records one of its own,
 * and only that event is synchronised before the host reads the whole buffer (the CUDA
 * samples' way of joining streams). Every byte is checked here.
 * With the argument "unseen": a kernel on a blocking stream rewrites the buffer, a blocking
 * copy on the legacy default stream waits for it (a synchronisation capture does not
 * follow), the host writes new bytes and a second kernel on the stream xors them, read after
 * the stream's synchronisation: capture finds the first launch finished by its event and
 * snapshots the host's bytes at the second.
 * With "gone": as "unseen", the first stream destroyed after the blocking copy and the
 * second kernel launched on a new stream (which may get the first's handle): capture names
 * the first launch with no stream, and replay waits for the device.
 * With "swapped": a graph's kernel node xors a mapped buffer; after its first launch the
 * executable graph's node is pointed at a second mapped buffer, the first is freed, and the
 * graph launched again (capture must not read the freed buffer at that launch).
 * With "racy": the same without the blocking copy, the host writing while the first kernel
 * may still run (a race on a GPU; the stand-in runs queued work at synchronisations, so the
 * first kernel xors the new bytes too): capture leaves the second launch's snapshot out.
 * Exit 0: right; 1: a wrong result; 2: a call failed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xor_kernel.h"

int cudaHostAlloc(void **, size_t, unsigned);
int cudaHostGetDevicePointer(void **, void *, unsigned);
int cudaStreamCreateWithFlags(void **, unsigned);
int cudaEventCreateWithFlags(void **, unsigned);
int cudaEventRecord(void *, void *);
int cudaStreamWaitEvent(void *, void *, unsigned);
int cudaEventSynchronize(void *);
int cudaFreeHost(void *);
int cudaMalloc(void **, size_t);
int cudaFree(void *);
int cudaMemcpy(void *, const void *, size_t, int);
int cudaStreamSynchronize(void *);
int cudaStreamDestroy(void *);
int cudaGraphCreate(void **, unsigned);
int cudaGraphAddKernelNode(void **, void *, void *const *, size_t, const struct kernel_params *);
int cudaGraphExecKernelNodeSetParams(void *, void *, const struct kernel_params *);
int cudaGraphInstantiateWithFlags(void **, void *, unsigned long long);
int cudaGraphLaunch(void *, void *);
int cudaGraphExecDestroy(void *);
int cudaGraphDestroy(void *);
struct dim3 { unsigned x, y, z; };
int cudaLaunchKernel(const void *, struct dim3, struct dim3, void **, size_t, void *);

#define CHECK(call) do { int e_ = (call); if (e_) { printf("%s failed: %d\n", #call, e_); exit(2); } } while (0)
#define N (1u << 20)
#define STREAMS 4

static int unseen(int copy, int gone);
static int swapped(void);

int main(int argc, char **argv) {
    register_xor_kernel();
    if (argc > 1 && strcmp(argv[1], "unseen") == 0) return unseen(1, 0);
    if (argc > 1 && strcmp(argv[1], "gone") == 0) return unseen(1, 1);
    if (argc > 1 && strcmp(argv[1], "racy") == 0) return unseen(0, 0);
    if (argc > 1 && strcmp(argv[1], "swapped") == 0) return swapped();
    unsigned char *h, *d;
    void *st[STREAMS], *ev[STREAMS];
    unsigned long long key = 0x3c;
    CHECK(cudaHostAlloc((void **)&h, N, 2 /* cudaHostAllocMapped */));
    CHECK(cudaHostGetDevicePointer((void **)&d, h, 0));
    for (size_t i = 0; i < N; i++) h[i] = (unsigned char)(i * 13 + i / 251);
    for (int s = 0; s < STREAMS; s++) {
        CHECK(cudaStreamCreateWithFlags(&st[s], 1 /* cudaStreamNonBlocking */));
        CHECK(cudaEventCreateWithFlags(&ev[s], 2 /* cudaEventDisableTiming */));
    }
    for (int s = 0; s < STREAMS; s++) {
        unsigned char *part = d + (size_t)s * (N / STREAMS);
        void *args[2] = {&part, &key};
        struct dim3 grid = {N / STREAMS / 256, 1, 1}, block = {256, 1, 1};
        CHECK(cudaLaunchKernel((const void *)xor_kernel, grid, block, args, 0, st[s]));
    }
    for (int s = 1; s < STREAMS; s++) {
        CHECK(cudaEventRecord(ev[s], st[s]));
        CHECK(cudaStreamWaitEvent(st[0], ev[s], 0));
    }
    CHECK(cudaEventRecord(ev[0], st[0]));
    CHECK(cudaEventSynchronize(ev[0]));
    for (size_t i = 0; i < N; i++)
        if (h[i] != (unsigned char)((i * 13 + i / 251) ^ key)) { printf("byte %zu: %u\n", i, h[i]); return 1; }
    CHECK(cudaFreeHost(h));
    printf("mapped_joins: ok\n");
    return 0;
}

static int unseen(int copy, int gone) {
    unsigned char *h, *d, *dev, one = 0;
    void *s;
    unsigned long long key = 0x5a;
    CHECK(cudaHostAlloc((void **)&h, N, 2 /* cudaHostAllocMapped */));
    CHECK(cudaHostGetDevicePointer((void **)&d, h, 0));
    CHECK(cudaMalloc((void **)&dev, 1));
    CHECK(cudaStreamCreateWithFlags(&s, 0 /* blocking */));
    for (size_t i = 0; i < N; i++) h[i] = (unsigned char)(i * 13);
    void *args[2] = {&d, &key};
    struct dim3 grid = {N / 256, 1, 1}, block = {256, 1, 1};
    CHECK(cudaLaunchKernel((const void *)xor_kernel, grid, block, args, 0, s));
    if (copy) CHECK(cudaMemcpy(&one, dev, 1, 2 /* cudaMemcpyDeviceToHost */));
    if (gone) {
        CHECK(cudaStreamDestroy(s));
        CHECK(cudaStreamCreateWithFlags(&s, 0 /* blocking */));
    }
    for (size_t i = 0; i < N; i++) h[i] = (unsigned char)(i * 7 + 1);
    /* Racy: both kernels xor the new bytes (the stand-in ran neither yet). */
    const unsigned char twice = copy ? 0 : (unsigned char)key;
    CHECK(cudaLaunchKernel((const void *)xor_kernel, grid, block, args, 0, s));
    CHECK(cudaStreamSynchronize(s));
    for (size_t i = 0; i < N; i++)
        if (h[i] != (unsigned char)((i * 7 + 1) ^ key ^ twice)) { printf("byte %zu: %u\n", i, h[i]); return 1; }
    CHECK(cudaFree(dev));
    CHECK(cudaFreeHost(h));
    CHECK(cudaStreamDestroy(s));
    printf("mapped_joins %s: ok\n", gone ? "gone" : copy ? "unseen" : "racy");
    return 0;
}

static int swapped(void) {
    unsigned char *a, *b, *da, *db;
    void *s, *graph, *exec, *node;
    unsigned long long key = 0x66;
    /* 1 MiB each: freed, the first is unmapped (a read of it would fault). */
    CHECK(cudaHostAlloc((void **)&a, N, 2 /* cudaHostAllocMapped */));
    CHECK(cudaHostAlloc((void **)&b, N, 2 /* cudaHostAllocMapped */));
    CHECK(cudaHostGetDevicePointer((void **)&da, a, 0));
    CHECK(cudaHostGetDevicePointer((void **)&db, b, 0));
    CHECK(cudaStreamCreateWithFlags(&s, 1 /* cudaStreamNonBlocking */));
    for (size_t i = 0; i < N; i++) {
        a[i] = (unsigned char)(i * 3);
        b[i] = (unsigned char)(i * 11 + 5);
    }
    void *args[2] = {&da, &key};
    struct kernel_params kp = {(void *)xor_kernel, {N / 256, 1, 1}, {256, 1, 1}, 0, args, 0};
    CHECK(cudaGraphCreate(&graph, 0));
    CHECK(cudaGraphAddKernelNode(&node, graph, 0, 0, &kp));
    CHECK(cudaGraphInstantiateWithFlags(&exec, graph, 0));
    CHECK(cudaGraphLaunch(exec, s));
    CHECK(cudaStreamSynchronize(s));
    for (size_t i = 0; i < N; i++)
        if (a[i] != (unsigned char)((i * 3) ^ key)) { printf("a: byte %zu: %u\n", i, a[i]); return 1; }
    void *args_b[2] = {&db, &key};
    kp.params = args_b;
    CHECK(cudaGraphExecKernelNodeSetParams(exec, node, &kp));
    CHECK(cudaFreeHost(a));
    CHECK(cudaGraphLaunch(exec, s));
    CHECK(cudaStreamSynchronize(s));
    for (size_t i = 0; i < N; i++)
        if (b[i] != (unsigned char)((i * 11 + 5) ^ key)) { printf("b: byte %zu: %u\n", i, b[i]); return 1; }
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(graph));
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFreeHost(b));
    printf("mapped_joins swapped: ok\n");
    return 0;
}
