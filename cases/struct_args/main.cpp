// struct_args: structs passed by value whose members are device pointers (some pointing
// inside allocations), nested, next to plain values. Replay must rewrite each pointer.
#include "../common/hrr_gpu.h"

#include <vector>

struct Span {
    const float* data;
    int len;
};
struct Job {
    Span a;          // nested struct holding a pointer
    const float* b;  // pointer into the middle of an allocation
    float* out;
    double weight;
    short tag;
};

__global__ void combine(Job j) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < j.a.len) j.out[i] = (float)(j.a.data[i] * j.weight + j.b[i]) + j.tag;
}

int main() {
    const int n = 50000;
    std::vector<float> ha(n), hb(n + 1000), got(n), want(n);
    for (int i = 0; i < n; ++i) ha[i] = (float)(i % 301) * 0.25f;
    for (int i = 0; i < n + 1000; ++i) hb[i] = (float)(i % 17);
    float *da, *db, *dout;
    CHECK(hipMalloc((void**)&da, n * sizeof(float)));
    CHECK(hipMalloc((void**)&db, (n + 1000) * sizeof(float)));
    CHECK(hipMalloc((void**)&dout, n * sizeof(float)));
    CHECK(hipMemcpy(da, ha.data(), n * sizeof(float), hipMemcpyHostToDevice));
    CHECK(hipMemcpy(db, hb.data(), (n + 1000) * sizeof(float), hipMemcpyHostToDevice));
    Job j{{da, n}, db + 1000, dout, 3.0, 7};
    combine<<<(n + 255) / 256, 256>>>(j);
    CHECK(hipMemcpy(got.data(), dout, n * sizeof(float), hipMemcpyDeviceToHost));
    for (int i = 0; i < n; ++i) want[i] = (float)(ha[i] * 3.0 + hb[i + 1000]) + 7;
    expect_equal("combine", got.data(), want.data(), n);
    CHECK(hipFree(da));
    CHECK(hipFree(db));
    CHECK(hipFree(dout));
    std::printf("struct_args: ok\n");
    return 0;
}
