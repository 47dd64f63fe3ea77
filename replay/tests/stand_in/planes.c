/* planes in C against the stand-in runtime (standin/): an NV12 array's two planes
 * (cudaArrayGetPlane for the luma plane, the driver's cuArrayGetPlane for the chroma one)
 * filled from the host and read back, the chroma plane by a 3D copy whose width counts its
 * two-byte elements; a third plane asked for and refused; the device list set
 * (cudaSetValidDevices). Exit 0: right; 1: a wrong result; 2: a call failed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct channel { int x, y, z, w, kind; };
struct pitched { void *ptr; size_t pitch, xsize, ysize; };
struct extent { size_t w, h, d; };
struct pos { size_t x, y, z; };
struct parms { void *src_array; struct pos src_pos; struct pitched src; void *dst_array; struct pos dst_pos; struct pitched dst; struct extent extent; int kind; };
int cudaMallocArray(void **, const struct channel *, size_t, size_t, unsigned);
int cudaArrayGetPlane(void **, void *, unsigned);
int cuArrayGetPlane(void **, void *, unsigned);
int cudaMemcpy2DToArray(void *, size_t, size_t, const void *, size_t, size_t, size_t, int);
int cudaMemcpy2DFromArray(void *, size_t, const void *, size_t, size_t, size_t, size_t, int);
int cudaMemcpy3D(const struct parms *);
int cudaSetValidDevices(int *, int);
int cudaFreeArray(void *);

#define CHECK(call) do { int e_ = (call); if (e_) { printf("%s failed: %d\n", #call, e_); exit(2); } } while (0)
#define W 64
#define H 32

static unsigned char luma[H][W], chroma[H / 2][W], luma_out[H][W], chroma_out[H / 2][W];

int main(void) {
    int devices[1] = {0};
    CHECK(cudaSetValidDevices(devices, 1));
    struct channel nv12 = {8, 8, 8, 0, 4};
    void *arr, *y, *uv, *none;
    CHECK(cudaMallocArray(&arr, &nv12, W, H, 0));
    CHECK(cudaArrayGetPlane(&y, arr, 0));
    CHECK(cuArrayGetPlane(&uv, arr, 1));
    if (cudaArrayGetPlane(&none, arr, 2) == 0) { printf("a third plane was given\n"); return 1; }
    for (int r = 0; r < H; r++)
        for (int c = 0; c < W; c++) luma[r][c] = (unsigned char)(r * 7 + c);
    for (int r = 0; r < H / 2; r++)
        for (int c = 0; c < W; c++) chroma[r][c] = (unsigned char)(r * 13 + c * 3 + 1);
    CHECK(cudaMemcpy2DToArray(y, 0, 0, luma, W, W, H, 1));
    CHECK(cudaMemcpy2DToArray(uv, 0, 0, chroma, W, W, H / 2, 1));
    CHECK(cudaMemcpy2DFromArray(luma_out, W, y, 0, 0, W, H, 2));
    /* The chroma plane back by a 3D copy: W / 2 two-byte elements a row. */
    struct parms p;
    memset(&p, 0, sizeof p);
    p.src_array = uv;
    p.dst = (struct pitched){chroma_out, W, W, H / 2};
    p.extent = (struct extent){W / 2, H / 2, 1};
    p.kind = 2;
    CHECK(cudaMemcpy3D(&p));
    if (memcmp(luma, luma_out, sizeof luma)) { printf("the luma plane differs\n"); return 1; }
    if (memcmp(chroma, chroma_out, sizeof chroma)) { printf("the chroma plane differs\n"); return 1; }
    CHECK(cudaFreeArray(arr));
    printf("planes: ok\n");
    return 0;
}
