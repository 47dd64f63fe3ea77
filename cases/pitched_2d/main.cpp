// pitched_2d: a pitched allocation, 2D copies in both directions with host pitches wider
// than the rows and offsets on both sides, 2D memsets (sync and async) and an async 2D
// copy. Capture records the host side of each 2D copy as its rows only (HRR seed 003);
// replay must compare exactly those rows, never the padding between them.
#include "../common/hrr_gpu.h"

#include <vector>

__global__ void add_rows(float* base, size_t pitch, int width, int height, float v) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x < width && y < height) {
        float* row = (float*)((char*)base + y * pitch);
        row[x] += v + y;
    }
}

int main() {
    const int width = 300, height = 77;  // floats per row, rows
    const size_t row_bytes = width * sizeof(float);
    float* d = nullptr;
    size_t pitch = 0;
    CHECK(hipMallocPitch((void**)&d, &pitch, row_bytes, height));
    if (pitch < row_bytes) { std::fprintf(stderr, "pitch %zu < row %zu\n", pitch, row_bytes); return 1; }
    // Host rows 1000 floats apart, starting 5 floats in; the padding holds a marker that
    // must never reach the device nor be compared.
    const size_t hpitch_f = 1000, hoff = 5;
    std::vector<float> host(hpitch_f * (height + 1), -7.0f), back(hpitch_f * (height + 1), -9.0f);
    for (int y = 0; y < height; ++y)
        for (int x = 0; x < width; ++x) host[hoff + y * hpitch_f + x] = (float)(x * 0.5 + y);
    CHECK(hipMemset2D(d, pitch, 0, row_bytes, height));
    CHECK(hipMemcpy2D(d, pitch, host.data() + hoff, hpitch_f * sizeof(float), row_bytes, height, hipMemcpyHostToDevice));
    add_rows<<<dim3((width + 127) / 128, height), 128>>>(d, pitch, width, height, 1.0f);
    CHECK(hipMemcpy2D(back.data() + 3, hpitch_f * sizeof(float), d, pitch, row_bytes, height, hipMemcpyDeviceToHost));
    for (int y = 0; y < height; ++y)
        for (int x = 0; x < width; ++x) {
            float want = (float)(x * 0.5 + y) + 1.0f + y;
            if (hrr_kernels_ran() && back[3 + y * hpitch_f + x] != want) { std::fprintf(stderr, "row %d col %d\n", y, x); return 1; }
        }
    // A sub-rectangle: 100 floats of 10 rows, from column 40 of row 20, async on a stream.
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    CHECK(hipMemset2DAsync((char*)d + 20 * pitch + 40 * sizeof(float), pitch, 0x3f, 100 * sizeof(float), 10, s));
    std::vector<float> sub(100 * 10, 0.0f);
    CHECK(hipMemcpy2DAsync(sub.data(), 100 * sizeof(float), (char*)d + 20 * pitch + 40 * sizeof(float), pitch,
                           100 * sizeof(float), 10, hipMemcpyDeviceToHost, s));
    CHECK(hipStreamSynchronize(s));
    unsigned char* raw = (unsigned char*)sub.data();
    for (size_t i = 0; i < sub.size() * sizeof(float); ++i)
        if (raw[i] != 0x3f) { std::fprintf(stderr, "memset2D byte %zu\n", i); return 1; }
    CHECK(hipStreamDestroy(s));
    CHECK(hipFree(d));
    std::printf("pitched_2d: ok (pitch %zu for %zu-byte rows)\n", pitch, row_bytes);
    return 0;
}
