/* memory3d in C against the stand-in runtime (standin/): two pitched 3D allocations
 * (cudaMalloc3D), one filled from the host and the other zeroed (cudaMemcpy3D), a box of
 * the first copied into the second at another place by a 3D peer copy within the device
 * (cudaMemcpy3DPeerAsync, then cudaMemcpy3DPeer of a second box), the second read back
 * whole and checked. With argument "two", a peer copy naming device 1 is tried too (the
 * stand-in has one device: it fails, and capture records it unreplayable by name).
 * Exit 0: right; 1: a wrong result; 2: a call failed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pitched { void *ptr; size_t pitch, xsize, ysize; };
struct extent { size_t w, h, d; };
struct pos { size_t x, y, z; };
struct parms { void *src_array; struct pos src_pos; struct pitched src; void *dst_array; struct pos dst_pos; struct pitched dst; struct extent extent; int kind; };
struct peer { void *src_array; struct pos src_pos; struct pitched src; int src_device; void *dst_array; struct pos dst_pos; struct pitched dst; int dst_device; struct extent extent; };
int cudaMalloc3D(struct pitched *, struct extent);
int cudaMemcpy3D(const struct parms *);
int cudaMemcpy3DPeer(const struct peer *);
int cudaMemcpy3DPeerAsync(const struct peer *, void *);
int cudaStreamCreateWithFlags(void **, unsigned);
int cudaStreamSynchronize(void *);
int cudaFree(void *);

#define CHECK(call) do { int e_ = (call); if (e_) { printf("%s failed: %d\n", #call, e_); exit(2); } } while (0)
#define W 40
#define H 6
#define D 4

static unsigned char in[D][H][W], zero[D][H][W], out[D][H][W], want[D][H][W];

/* A whole-box copy between the host array `h` and the pitched allocation `p`. */
static void whole(struct pitched p, void *h, int to_device) {
    struct parms c;
    memset(&c, 0, sizeof c);
    struct pitched host = {h, W, W, H};
    if (to_device) { c.src = host; c.dst = p; } else { c.src = p; c.dst = host; }
    c.extent = (struct extent){W, H, D};
    c.kind = to_device ? 1 : 2;
    CHECK(cudaMemcpy3D(&c));
}

/* Box `e` of `a` at `from` copied to `b` at `to`, on the host's model and by `peer`. */
static struct peer box(struct pitched a, struct pos from, struct pitched b, struct pos to, struct extent e) {
    for (size_t z = 0; z < e.d; z++)
        for (size_t y = 0; y < e.h; y++)
            memcpy(&want[to.z + z][to.y + y][to.x], &in[from.z + z][from.y + y][from.x], e.w);
    struct peer p;
    memset(&p, 0, sizeof p);
    p.src = a;
    p.src_pos = from;
    p.dst = b;
    p.dst_pos = to;
    p.extent = e;
    return p;
}

int main(int argc, char **argv) {
    struct pitched a, b;
    void *s;
    CHECK(cudaMalloc3D(&a, (struct extent){W, H, D}));
    CHECK(cudaMalloc3D(&b, (struct extent){W, H, D}));
    if (a.pitch < W || b.pitch != a.pitch || a.xsize != W || a.ysize != H) {
        printf("pitched pointer %zu %zu %zu\n", a.pitch, a.xsize, a.ysize);
        return 1;
    }
    CHECK(cudaStreamCreateWithFlags(&s, 1));
    for (int z = 0; z < D; z++)
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) in[z][y][x] = (unsigned char)(x * 3 + y * 41 + z * 97 + 1);
    whole(a, in, 1);
    whole(b, zero, 1);
    struct peer p1 = box(a, (struct pos){8, 2, 1}, b, (struct pos){2, 1, 0}, (struct extent){20, 2, 2});
    CHECK(cudaMemcpy3DPeerAsync(&p1, s));
    CHECK(cudaStreamSynchronize(s));
    struct peer p2 = box(a, (struct pos){0, 0, 3}, b, (struct pos){30, 4, 3}, (struct extent){10, 2, 1});
    CHECK(cudaMemcpy3DPeer(&p2));
    whole(b, out, 0);
    if (memcmp(out, want, sizeof out)) {
        printf("the copied boxes differ\n");
        return 1;
    }
    if (argc > 1 && strcmp(argv[1], "two") == 0) {
        p2.dst_device = 1;
        printf("two devices: %d\n", cudaMemcpy3DPeer(&p2));
    }
    CHECK(cudaFree(a.ptr));
    CHECK(cudaFree(b.ptr));
    printf("memory3d: ok\n");
    return 0;
}
