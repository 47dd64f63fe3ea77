/* ipc_handles in C against the stand-in runtime (standin/): a device buffer filled from the
 * host and read back, then handles to it and to an inter-process event made for another
 * process (cudaIpcGetMemHandle, cudaIpcGetEventHandle, the driver's cuIpcGetMemHandle and
 * cuIpcGetEventHandle), then the buffer read back again. Nothing opens the handles: the
 * program only hands them out. Exit 0: right; 1: a wrong result; 2: a call failed. */
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
    memset(out, 0, N);
    CHECK(cudaMemcpy(out, d, N, 2));
    if (memcmp(in, out, N)) { printf("the second read differs\n"); return 1; }
    printf("ipc_handles: ok\n");
    return 0;
}
