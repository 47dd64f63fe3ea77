// graph_fault: a fault in a kernel launched inside a graph (issue 26). A graph captured
// from a stream (a copy in, a kernel, a copy out) runs once correctly; then its kernel's
// input holds an index out of range and the next launch writes through an address no
// allocation holds (700, sticky): the stream's synchronisation returns it, and so does
// every later call. The host says what each returned and exits 1. Its archive must replay
// to the same fault at the same call.
//
// The second graph's kernel carries `hrr_fault_700` in its name: the stand-in runtime,
// which runs no kernel, faults a launch of a kernel so marked, so the case runs end to end
// without a GPU too (the first graph's kernel, the same code unmarked, does not fault).
#include "../common/hrr_gpu.h"

#include <cstdio>

// An index out of range is reported through `wild`, an address no allocation holds (on
// the H200 a gather far past the table faulted with 717, an invalid address space, not
// 700; a write through a small wild pointer is 700 as in kernel_fault).
__global__ void gather_hrr_fault_700(int* out, const int* table, const int* idx, int n, int* wild) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    if (idx[i] >= n) *wild = i;
    else out[i] = table[idx[i]];
}
__global__ void gather(int* out, const int* table, const int* idx, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = table[idx[i]];
}

int main() {
    const int n = 4096;
    int *table = nullptr, *idx = nullptr, *out = nullptr;
    CHECK(hipMalloc((void**)&table, n * sizeof(int)));
    CHECK(hipMalloc((void**)&idx, n * sizeof(int)));
    CHECK(hipMalloc((void**)&out, n * sizeof(int)));
    static int h_table[n], h_idx[n], got[n];
    for (int i = 0; i < n; ++i) {
        h_table[i] = 3 * i + 1;
        h_idx[i] = (i * 7) % n;
    }
    CHECK(hipMemcpy(table, h_table, sizeof h_table, hipMemcpyHostToDevice));
    hipStream_t s;
    CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    // The first graph: a correct gather, launched and checked.
    hipGraph_t g1, g2;
    CHECK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
    CHECK(hipMemcpyAsync(idx, h_idx, sizeof h_idx, hipMemcpyHostToDevice, s));
    gather<<<n / 256, 256, 0, s>>>(out, table, idx, n);
    CHECK(hipMemcpyAsync(got, out, sizeof got, hipMemcpyDeviceToHost, s));
    CHECK(hipStreamEndCapture(s, &g1));
    hipGraphExec_t x1, x2;
    CHECK(hipGraphInstantiateWithFlags(&x1, g1, 0));
    CHECK(hipGraphLaunch(x1, s));
    CHECK(hipStreamSynchronize(s));
    static int want[n];
    for (int i = 0; i < n; ++i) want[i] = h_table[h_idx[i]];
    expect_equal("the first graph's gather", got, want, n);
    // The second: the same shape, one index far out of range.
    h_idx[n / 2] = 1 << 30;
    CHECK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
    CHECK(hipMemcpyAsync(idx, h_idx, sizeof h_idx, hipMemcpyHostToDevice, s));
    gather_hrr_fault_700<<<n / 256, 256, 0, s>>>(out, table, idx, n, (int*)0x10);
    CHECK(hipMemcpyAsync(got, out, sizeof got, hipMemcpyDeviceToHost, s));
    CHECK(hipStreamEndCapture(s, &g2));
    CHECK(hipGraphInstantiateWithFlags(&x2, g2, 0));
    hipError_t launch = hipGraphLaunch(x2, s);
    hipError_t sync = hipStreamSynchronize(s);
    hipError_t freed = hipFree(table);
    std::printf("graph_fault: launch %d, synchronize %d, free %d\n", (int)launch, (int)sync, (int)freed);
    return sync == hipSuccess ? 0 : 1;
}
