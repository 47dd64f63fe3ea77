// unmodelled_call: the program calls an API capture does not model and the API table
// does not exempt (hipThreadExchangeStreamCaptureMode / cudaThreadExchangeStreamCaptureMode,
// a stream-capture setting: no row, no hand-written shim; cudaSetDeviceFlags, used here
// before, is a table row now),
// then copies and launches as usual. Capture's counting pass-through forwards it
// unchanged and records its first call; replay refuses the archive naming it, its count
// and its first sequence id (the harness replays with --continue-on-error, so every
// D2H check after it still runs, marked "after an unmodelled call").
#include "../common/hrr_gpu.h"

#include <vector>


__global__ void triple(int* p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = 3 * i + 1;
}

int main() {
    const int n = 4096;
    // Relaxed for this thread, and the previous mode back: nothing the program does
    // changes, the call is only seen.
    hipStreamCaptureMode mode = hipStreamCaptureModeRelaxed;
    CHECK(hipThreadExchangeStreamCaptureMode(&mode));
    CHECK(hipThreadExchangeStreamCaptureMode(&mode));
    int* d = nullptr;
    CHECK(hipMalloc((void**)&d, n * sizeof(int)));
    triple<<<n / 256, 256>>>(d, n);
    CHECK(hipDeviceSynchronize());
    std::vector<int> got(n), want(n);
    for (int i = 0; i < n; ++i) want[i] = 3 * i + 1;
    CHECK(hipMemcpy(got.data(), d, n * sizeof(int), hipMemcpyDeviceToHost));
    expect_equal("triple", got.data(), want.data(), n);
    CHECK(hipFree(d));
    std::printf("unmodelled_call: ok\n");
    return 0;
}
