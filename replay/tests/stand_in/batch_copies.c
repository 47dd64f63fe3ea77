/* batch_copies in C against the stand-in runtime (standin/): batched copies of every form
 * moving bytes host to device (page-locked and pageable sources), device to device and
 * back to the host (page-locked and pageable destinations), on a stream and on the
 * thread's default stream:
 *   cudaMemcpyBatchAsync with two attribute entries, cudaMemcpyBatchAsync_ptsz,
 *   cudaMemcpyWithAttributesAsync, the driver's cuMemcpyBatchAsync_v2, its first form
 *   cuMemcpyBatchAsync (with the failing index) and cuMemcpyWithAttributesAsync;
 * and 3D ones: cudaMemcpy3DBatchAsync of a pageable box into an array of 4-byte elements
 * (positions and widths in elements) and of the array into pitched memory (its row length
 * in elements), cudaMemcpy3DWithAttributesAsync of that memory to page-locked host memory
 * (one byte elements), the driver's cuMemcpy3DBatchAsync_v2 of a sub-box;
 * the six host results checked; first, a batch into page-locked memory an earlier
 * asynchronous copy wrote (capture's read of that copy's output must come first: a race
 * the stand-in, whose reader reads as soon as the copy's event passes, seldom loses). With argument "refused", a batch on the legacy stream is
 * tried first (the runtime refuses it: capture records it unreplayable by name).
 * Exit 0: right; 1: a wrong result; 2: a call failed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct loc { int type, id; };
struct attrs { int order; struct loc src, dst; unsigned flags; };
typedef unsigned long long dptr;
int cudaMalloc(void **, size_t);
int cudaMallocHost(void **, size_t);
int cudaStreamCreateWithFlags(void **, unsigned);
int cudaStreamSynchronize(void *);
int cudaMemcpy(void *, const void *, size_t, int);
int cudaMemcpyAsync(void *, const void *, size_t, int, void *);
int cudaMemcpyBatchAsync(void *const *, const void *const *, const size_t *, size_t, struct attrs *, size_t *, size_t, void *);
int cudaMemcpyBatchAsync_ptsz(void *const *, const void *const *, const size_t *, size_t, struct attrs *, size_t *, size_t, void *);
int cudaMemcpyWithAttributesAsync(void *, const void *, size_t, struct attrs *, void *);
int cuMemcpyBatchAsync_v2(dptr *, dptr *, size_t *, size_t, struct attrs *, size_t *, size_t, void *);
int cuMemcpyBatchAsync(dptr *, dptr *, size_t *, size_t, struct attrs *, size_t *, size_t, size_t *, void *);
int cuMemcpyWithAttributesAsync(dptr, dptr, size_t, struct attrs *, void *);
struct channel { int x, y, z, w, kind; };
int cudaMallocArray(void **, const struct channel *, size_t, size_t, unsigned);
int cudaMallocPitch(void **, size_t *, size_t, size_t);
struct operand {
    int type;
    union { struct { void *ptr; size_t row, layer; struct loc hint; } ptr; struct { void *array; size_t x, y, z; } array; } op;
};
struct op3d { struct operand src, dst; size_t w, h, d; int order; unsigned flags; };
int cudaMemcpy3DBatchAsync(size_t, struct op3d *, unsigned long long, void *);
int cudaMemcpy3DWithAttributesAsync(struct op3d *, unsigned long long, void *);
int cuMemcpy3DBatchAsync_v2(size_t, struct op3d *, unsigned long long, void *);

#define CHECK(call) do { int e_ = (call); if (e_) { printf("%s failed: %d\n", #call, e_); exit(2); } } while (0)
#define N 4096
#define PER_THREAD ((void *)2)

static unsigned char page_in[N], page_out[N];

#define W 16
#define H 4
static float box[H][W];

static struct operand pointer(void *p, size_t row, size_t layer) {
    struct operand o = {1, {.ptr = {p, row, layer, {0, 0}}}};
    return o;
}
static struct operand array_at(void *a, size_t x, size_t y) {
    struct operand o = {2, {.array = {a, x, y, 0}}};
    return o;
}

/* The 3D forms; 0 when every result is right. */
static int three_d(void *s) {
    void *arr, *pitched;
    float *out4, *out5;
    size_t pitch;
    struct channel f32 = {32, 0, 0, 0, 2};
    CHECK(cudaMallocArray(&arr, &f32, W, H, 0));
    CHECK(cudaMallocPitch(&pitched, &pitch, W * 4, H));
    CHECK(cudaMallocHost((void **)&out4, sizeof box));
    CHECK(cudaMallocHost((void **)&out5, sizeof box));
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) box[y][x] = (float)(y * 100 + x);
    struct op3d in[2] = {
        {pointer(box, 0, 0), array_at(arr, 0, 0), W, H, 1, 1, 0},
        {array_at(arr, 0, 0), pointer(pitched, pitch / 4, H), W, H, 1, 1, 0},
    };
    /* The two copies are dependent: two batches, in stream order. */
    CHECK(cudaMemcpy3DBatchAsync(1, &in[0], 0, s));
    CHECK(cudaMemcpy3DBatchAsync(1, &in[1], 0, s));
    struct op3d back = {pointer(pitched, pitch, H), pointer(out4, W * 4, H), W * 4, H, 1, 1, 0};
    CHECK(cudaMemcpy3DWithAttributesAsync(&back, 0, s));
    /* Rows 1-2, columns 4-11 (bytes 16-47) into out5's first rows, packed. */
    struct op3d sub = {pointer((char *)pitched + pitch + 16, pitch, H), pointer(out5, 0, 0), 32, 2, 1, 1, 0};
    CHECK(cuMemcpy3DBatchAsync_v2(1, &sub, 0, s));
    CHECK(cudaStreamSynchronize(s));
    if (memcmp(out4, box, sizeof box)) { printf("the 3D round trip differs\n"); return 1; }
    for (int y = 0; y < 2; y++)
        for (int x = 0; x < 8; x++)
            if (out5[y * 8 + x] != box[y + 1][x + 4]) { printf("the 3D sub-box differs at %d,%d\n", y, x); return 1; }
    return 0;
}

/* An asynchronous copy into page-locked x, then a batch copying other bytes into x on the
 * same stream: x must end with the batch's bytes, and the first copy's output be its own. */
static int overwrite(void *s) {
    unsigned char *x, *d1, *d2;
    static unsigned char a[N], b[N];
    CHECK(cudaMallocHost((void **)&x, N));
    CHECK(cudaMalloc((void **)&d1, N));
    CHECK(cudaMalloc((void **)&d2, N));
    memset(a, 0xa1, N);
    memset(b, 0xb2, N);
    CHECK(cudaMemcpy(d1, a, N, 1));
    CHECK(cudaMemcpy(d2, b, N, 1));
    CHECK(cudaMemcpyAsync(x, d1, N, 2, s));
    void *dst[1] = {x};
    const void *src[1] = {d2};
    size_t size = N, first = 0;
    struct attrs one = {1, {0, 0}, {0, 0}, 0};
    CHECK(cudaMemcpyBatchAsync(dst, src, &size, 1, &one, &first, 1, s));
    CHECK(cudaStreamSynchronize(s));
    if (memcmp(x, b, N)) { printf("the batch's bytes did not land\n"); return 1; }
    return 0;
}

int main(int argc, char **argv) {
    unsigned char *pin_in, *pin_out, *pin_out2, *pin_out3, *a, *b, *c, *d;
    void *s;
    CHECK(cudaMallocHost((void **)&pin_in, N));
    CHECK(cudaMallocHost((void **)&pin_out, N));
    CHECK(cudaMallocHost((void **)&pin_out2, 2 * N));
    CHECK(cudaMallocHost((void **)&pin_out3, N));
    CHECK(cudaMalloc((void **)&a, N));
    CHECK(cudaMalloc((void **)&b, N));
    CHECK(cudaMalloc((void **)&c, 2 * N));
    CHECK(cudaMalloc((void **)&d, 2 * N));
    CHECK(cudaStreamCreateWithFlags(&s, 1));
    for (int i = 0; i < N; i++) {
        pin_in[i] = (unsigned char)(i * 7 + 3);
        page_in[i] = (unsigned char)(i * 13 + 5);
    }
    struct attrs two[2] = {{1, {0, 0}, {0, 0}, 0}, {2, {0, 0}, {0, 0}, 1}}, one = {1, {0, 0}, {0, 0}, 0};
    size_t idx2[2] = {0, 1}, idx1 = 0, fail = 0;
    size_t sizes[2] = {N, N};
    if (argc > 1 && !strcmp(argv[1], "refused")) {
        void *dst[1] = {a};
        const void *src[1] = {pin_in};
        int e = cudaMemcpyBatchAsync(dst, src, sizes, 1, &one, &idx1, 1, 0);
        if (e == 0) { printf("a batch on the legacy stream was accepted\n"); return 1; }
    }
    if (overwrite(s)) return 1;
    /* Host to device: a page-locked source in stream order, a pageable one read during the call. */
    void *in_dst[2] = {a, b};
    const void *in_src[2] = {pin_in, page_in};
    CHECK(cudaMemcpyBatchAsync(in_dst, in_src, sizes, 2, two, idx2, 2, s));
    CHECK(cudaStreamSynchronize(s));
    /* Device to device on the thread's default stream: c = a || b. */
    void *cat_dst[2] = {c, c + N};
    const void *cat_src[2] = {a, b};
    CHECK(cudaMemcpyBatchAsync_ptsz(cat_dst, cat_src, sizes, 2, &one, &idx1, 1, 0));
    CHECK(cudaStreamSynchronize(PER_THREAD));
    CHECK(cudaMemcpyWithAttributesAsync(d, c, 2 * N, &one, s));
    /* Back to the host through the driver: d's halves, d whole, a. */
    dptr out_dst[2] = {(dptr)pin_out, (dptr)page_out}, out_src[2] = {(dptr)(d + N), (dptr)d};
    CHECK(cuMemcpyBatchAsync_v2(out_dst, out_src, sizes, 2, &one, &idx1, 1, s));
    dptr whole_dst = (dptr)pin_out2, whole_src = (dptr)d;
    size_t whole = 2 * N;
    CHECK(cuMemcpyBatchAsync(&whole_dst, &whole_src, &whole, 1, &one, &idx1, 1, &fail, s));
    CHECK(cuMemcpyWithAttributesAsync((dptr)pin_out3, (dptr)a, N, &one, s));
    CHECK(cudaStreamSynchronize(s));
    if (memcmp(pin_out, page_in, N) || memcmp(page_out, pin_in, N)) { printf("the halves differ\n"); return 1; }
    if (memcmp(pin_out2, pin_in, N) || memcmp(pin_out2 + N, page_in, N)) { printf("the whole copy differs\n"); return 1; }
    if (memcmp(pin_out3, pin_in, N)) { printf("the single copy differs\n"); return 1; }
    if (three_d(s)) return 1;
    printf("batch copies ok\n");
    return 0;
}
