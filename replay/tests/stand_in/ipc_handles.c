/* ipc_handles in C against the stand-in runtime (standin/): a device buffer filled from the
 * host and read back, then handles to it and to an inter-process event made for another
 * process (cudaIpcGetMemHandle, cudaIpcGetEventHandle, the driver's cuIpcGetMemHandle and
 * cuIpcGetEventHandle), a pool exportable as a file descriptor exported
 * (cudaMemPoolExportToShareableHandle, cuMemPoolExportToShareableHandle) and a pointer in
 * it (cudaMemPoolExportPointer, cuMemPoolExportPointer), then the buffer read back again.
 * Nothing opens the handles: the program only hands them out. Exit 0: right; 1: a wrong result; 2: a call failed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cudaMalloc(void **, size_t);
int cudaMemcpy(void *, const void *, size_t, int);
int cudaEventCreateWithFlags(void **, unsigned);
int cudaIpcGetMemHandle(void *, void *);
int cudaIpcGetEventHandle(void *, void *);
int cuIpcGetMemHandle(void *, unsigned long long);
int cuIpcGetEventHandle(void *, void *);
struct pool_props { int alloc_type, handle_types; struct { int type, id; } location; void *win32; size_t max; unsigned short usage; unsigned char reserved[54]; };
int cudaMemPoolCreate(void **, const struct pool_props *);
int cudaMallocFromPoolAsync(void **, size_t, void *, void *);
int cudaStreamSynchronize(void *);
int cudaMemPoolExportToShareableHandle(void *, void *, int, unsigned);
int cudaMemPoolExportPointer(void *, void *);
int cuMemPoolExportToShareableHandle(void *, void *, int, unsigned long long);
int cuMemPoolExportPointer(void *, unsigned long long);
int close(int);

#define CHECK(call) do { int e_ = (call); if (e_) { printf("%s failed: %d\n", #call, e_); exit(2); } } while (0)
#define N 4096

static unsigned char in[N], out[N];

int main(void) {
    unsigned char *d;
    void *ev;
    unsigned char mem_handle[64], event_handle[64], drv_mem[64], drv_event[64];
    for (int i = 0; i < N; i++) in[i] = (unsigned char)(i * 11 + 1);
    CHECK(cudaMalloc((void **)&d, N));
    CHECK(cudaMemcpy(d, in, N, 1));
    CHECK(cudaMemcpy(out, d, N, 2));
    if (memcmp(in, out, N)) { printf("the first read differs\n"); return 1; }
    CHECK(cudaEventCreateWithFlags(&ev, 2 | 4)); /* disable timing, interprocess */
    CHECK(cudaIpcGetMemHandle(mem_handle, d));
    CHECK(cudaIpcGetEventHandle(event_handle, ev));
    CHECK(cuIpcGetMemHandle(drv_mem, (unsigned long long)d));
    CHECK(cuIpcGetEventHandle(drv_event, ev));
    if (memcmp(mem_handle, drv_mem, sizeof mem_handle)) { printf("the two memory handles differ\n"); return 1; }
    struct pool_props props;
    memset(&props, 0, sizeof props);
    props.alloc_type = 1;   /* pinned */
    props.handle_types = 1; /* POSIX file descriptor */
    props.location.type = 1; /* device 0 */
    void *pool, *q;
    int fd = -1, fd2 = -1;
    unsigned char data[64], drv_data[64];
    CHECK(cudaMemPoolCreate(&pool, &props));
    CHECK(cudaMallocFromPoolAsync(&q, N, pool, 0));
    CHECK(cudaStreamSynchronize(0));
    CHECK(cudaMemPoolExportToShareableHandle(&fd, pool, 1, 0));
    CHECK(cuMemPoolExportToShareableHandle(&fd2, pool, 1, 0));
    CHECK(cudaMemPoolExportPointer(data, q));
    CHECK(cuMemPoolExportPointer(drv_data, (unsigned long long)q));
    /* Two exports of one pointer need not be the same bytes (the H200's differ). */
    if (fd < 0 || fd2 < 0) { printf("a pool export gave no descriptor\n"); return 1; }
    close(fd);
    close(fd2);
    memset(out, 0, N);
    CHECK(cudaMemcpy(out, d, N, 2));
    if (memcmp(in, out, N)) { printf("the second read differs\n"); return 1; }
    printf("ipc_handles: ok\n");
    return 0;
}
