// copy_3d: 3D copies (a struct passed by pointer) between a pitched device volume and host
// volumes whose rows and slices are padded, at non-zero positions on both sides, sync and
// async. Capture records the struct field by field and the host side as the copied box
// only; replay rebuilds the struct around its own pointers (HRR seeds 003 and 004).
#include "../common/hrr_gpu.h"

#include <vector>

__global__ void bump(char* base, size_t pitch, int w, int h, int d) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y, z = blockIdx.z;
    if (x < w && y < h && z < d) {
        float* row = (float*)(base + ((size_t)z * h + y) * pitch);
        row[x] = row[x] * 2.0f + (float)z;
    }
}

int main() {
    const int W = 50, H = 20, D = 6;           // floats, rows, slices
    const size_t row = W * sizeof(float);
    char* dev = nullptr;
    size_t pitch = 0;
    CHECK(hipMallocPitch((void**)&dev, &pitch, row, (size_t)H * D));
    // Host volume: rows of 64 floats, 23 rows a slice, 8 slices; the box starts at
    // float 3 of row 2 of slice 1.
    const size_t HP = 64 * sizeof(float), HY = 23, HZ = 8;
    std::vector<float> host(64 * HY * HZ, -1.0f), back(64 * HY * HZ, -2.0f);
    auto at = [&](std::vector<float>& v, int x, int y, int z) -> float& { return v[(size_t)(z + 1) * HY * 64 + (y + 2) * 64 + (x + 3)]; };
    for (int z = 0; z < D; ++z)
        for (int y = 0; y < H; ++y)
            for (int x = 0; x < W; ++x) at(host, x, y, z) = (float)(x + 100 * y + 10000 * z);
    hipMemcpy3DParms up = {};
    up.srcPtr = make_hipPitchedPtr(host.data(), HP, 64, HY);
    up.srcPos = make_hipPos(3 * sizeof(float), 2, 1);
    up.dstPtr = make_hipPitchedPtr(dev, pitch, W, H);
    up.extent = make_hipExtent(row, H, D);
    up.kind = hipMemcpyHostToDevice;
    CHECK(hipMemcpy3D(&up));
    bump<<<dim3((W + 63) / 64, H, D), 64>>>(dev, pitch, W, H, D);
    hipMemcpy3DParms down = {};
    down.srcPtr = make_hipPitchedPtr(dev, pitch, W, H);
    down.dstPtr = make_hipPitchedPtr(back.data(), HP, 64, HY);
    down.dstPos = make_hipPos(3 * sizeof(float), 2, 1);
    down.extent = make_hipExtent(row, H, D);
    down.kind = hipMemcpyDeviceToHost;
    CHECK(hipMemcpy3D(&down));
    for (int z = 0; z < D; ++z)
        for (int y = 0; y < H; ++y)
            for (int x = 0; x < W; ++x)
                if (hrr_kernels_ran() && at(back, x, y, z) != (float)(x + 100 * y + 10000 * z) * 2.0f + z) {
                    std::fprintf(stderr, "(%d,%d,%d)\n", x, y, z);
                    return 1;
                }
    // An async sub-box: 10 floats x 4 rows x 2 slices from (5, 3, 2), packed on the host.
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    std::vector<float> sub(10 * 4 * 2, 0.0f);
    hipMemcpy3DParms part = {};
    part.srcPtr = make_hipPitchedPtr(dev, pitch, W, H);
    part.srcPos = make_hipPos(5 * sizeof(float), 3, 2);
    part.dstPtr = make_hipPitchedPtr(sub.data(), 10 * sizeof(float), 10, 4);
    part.extent = make_hipExtent(10 * sizeof(float), 4, 2);
    part.kind = hipMemcpyDeviceToHost;
    CHECK(hipMemcpy3DAsync(&part, s));
    CHECK(hipStreamSynchronize(s));
    for (int z = 0; z < 2; ++z)
        for (int y = 0; y < 4; ++y)
            for (int x = 0; x < 10; ++x)
                if (hrr_kernels_ran() && sub[(z * 4 + y) * 10 + x] != (float)((x + 5) + 100 * (y + 3) + 10000 * (z + 2)) * 2.0f + (z + 2)) {
                    std::fprintf(stderr, "sub (%d,%d,%d)\n", x, y, z);
                    return 1;
                }
    CHECK(hipStreamDestroy(s));
    CHECK(hipFree(dev));
    std::printf("copy_3d: ok (pitch %zu)\n", pitch);
    return 0;
}
