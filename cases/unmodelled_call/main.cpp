// unmodelled_call: the program calls an API capture does not model and the API table
// does not exempt (hipDestroyExternalMemory / cudaDestroyExternalMemory of no handle: it
// fails and changes nothing, and external memory stays unmodelled; cudaSetDeviceFlags and
// then cudaThreadExchangeStreamCaptureMode, used here before, are a row and an exemption
// now),
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
    // No external memory was imported: the call fails, whatever it answers, and the
    // program goes on; the call is only seen.
    (void)hipDestroyExternalMemory(nullptr);
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
