// Graphs edited after they were made, and 3D allocations and peer copies, as real
// programs make them (CUDA 13):
// 1. A child-graph node's graph, asked for (cudaGraphChildGraphNodeGetGraph), gains a
//    kernel node; the child is then replaced in the executable graph
//    (cudaGraphExecChildGraphNodeSetParams) by one of the same shape.
// 2. A capture into a graph after its H2D node whose last node is made to wait for an
//    explicit memset node too (cudaStreamUpdateCaptureDependencies); inside the capture a
//    cudaMalloc made legal by a relaxed thread mode (cudaThreadExchangeStreamCaptureMode),
//    as PyTorch's allocator does.
// 3. Pitched 3D allocations (cudaMalloc3D), a kernel over their rows, boxes moved by 3D
//    peer copies within the device (cudaMemcpy3DPeerAsync, cudaMemcpy3DPeer).
// Every result is checked on the host. Exit 0: right; 1: a wrong result; 2: a call failed.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define CHECK(call)                                                                  \
    do {                                                                             \
        cudaError_t e_ = (call);                                                     \
        if (e_ != cudaSuccess) {                                                     \
            printf("%s failed: %s\n", #call, cudaGetErrorString(e_));                \
            exit(2);                                                                 \
        }                                                                            \
    } while (0)

constexpr int N = 1 << 16, M = 4096;

__global__ void xor_bytes(unsigned char* p, unsigned long long key, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] ^= (unsigned char)(key + i / 256);
}

// Adds row index z*h+y to every byte of a pitched box's rows.
__global__ void bump_rows(cudaPitchedPtr p, int w, int h, int d) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y, z = blockIdx.z;
    if (x < w && y < h && z < d) ((unsigned char*)p.ptr)[(size_t)(z * h + y) * p.pitch + x] += (unsigned char)(z * h + y);
}

static unsigned char *h_in, *h_out, *d;

static cudaGraphNode_t xor_node(cudaGraph_t g, cudaGraphNode_t after, unsigned long long* key) {
    static int n = N;
    void* args[3] = {&d, key, &n};
    cudaKernelNodeParams kp = {};
    kp.func = (void*)xor_bytes;
    kp.gridDim = dim3(N / 256);
    kp.blockDim = dim3(256);
    kp.kernelParams = args;
    cudaGraphNode_t node;
    CHECK(cudaGraphAddKernelNode(&node, g, after ? &after : nullptr, after ? 1 : 0, &kp));
    return node;
}

// h_out against h_in xored with each key's term (and the memset's bytes after N).
static int check(const char* what, const unsigned long long* keys, int nkeys, bool tail) {
    for (int i = 0; i < N + (tail ? M : 0); i++) {
        unsigned char want = 0x77;
        if (i < N) {
            want = h_in[i];
            for (int k = 0; k < nkeys; k++) want ^= (unsigned char)(keys[k] + i / 256);
        }
        if (h_out[i] != want) {
            printf("%s: byte %d is %d, not %d\n", what, i, h_out[i], want);
            return 1;
        }
    }
    unsigned sum = 0;
    for (int i = 0; i < N + (tail ? M : 0); i++) sum = sum * 31 + h_out[i];
    printf("%s: ok, checksum %08x\n", what, sum);
    return 0;
}

static int graphs(cudaStream_t s) {
    static unsigned long long k1 = 0x11, k2 = 0x22, k3 = 0x44, k4 = 0x08;
    cudaGraph_t child, parent, inner, other;
    cudaGraphExec_t exec;
    cudaGraphNode_t n1, nc, n3, first;
    CHECK(cudaGraphCreate(&child, 0));
    xor_node(child, nullptr, &k1);
    CHECK(cudaGraphCreate(&parent, 0));
    CHECK(cudaGraphAddMemcpyNode1D(&n1, parent, nullptr, 0, d, h_in, N, cudaMemcpyHostToDevice));
    CHECK(cudaGraphAddChildGraphNode(&nc, parent, &n1, 1, child));
    CHECK(cudaGraphAddMemcpyNode1D(&n3, parent, &nc, 1, h_out, d, N, cudaMemcpyDeviceToHost));
    CHECK(cudaGraphChildGraphNodeGetGraph(nc, &inner));
    size_t count = 1;
    CHECK(cudaGraphGetNodes(inner, &first, &count));
    xor_node(inner, first, &k2);
    CHECK(cudaGraphInstantiate(&exec, parent, 0));
    CHECK(cudaGraphLaunch(exec, s));
    CHECK(cudaStreamSynchronize(s));
    const unsigned long long edited[2] = {k1, k2}, replaced[2] = {k3, k4};
    if (check("child graph edited", edited, 2, false)) return 1;
    CHECK(cudaGraphCreate(&other, 0));
    xor_node(other, xor_node(other, nullptr, &k3), &k4);
    CHECK(cudaGraphExecChildGraphNodeSetParams(exec, nc, other));
    CHECK(cudaGraphLaunch(exec, s));
    CHECK(cudaStreamSynchronize(s));
    if (check("child graph replaced", replaced, 2, false)) return 1;
    CHECK(cudaGraphExecDestroy(exec));

    // 2. A capture made to wait for an explicit node too; a relaxed allocation inside it.
    cudaGraph_t g2, ended;
    cudaGraphNode_t m1, m2;
    CHECK(cudaGraphCreate(&g2, 0));
    CHECK(cudaGraphAddMemcpyNode1D(&m1, g2, nullptr, 0, d, h_in, N, cudaMemcpyHostToDevice));
    cudaMemsetParams mp = {};
    mp.dst = d + N;
    mp.value = 0x77;
    mp.elementSize = 1;
    mp.width = M;
    mp.height = 1;
    CHECK(cudaGraphAddMemsetNode(&m2, g2, &m1, 1, &mp));
    CHECK(cudaStreamBeginCaptureToGraph(s, g2, &m1, nullptr, 1, cudaStreamCaptureModeGlobal));
    int n = N;
    xor_bytes<<<N / 256, 256, 0, s>>>(d, k3, n);
    cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    CHECK(cudaThreadExchangeStreamCaptureMode(&mode));
    void* scratch;
    CHECK(cudaMalloc(&scratch, 1 << 20));
    CHECK(cudaThreadExchangeStreamCaptureMode(&mode));
    CHECK(cudaStreamUpdateCaptureDependencies(s, &m2, nullptr, 1, cudaStreamAddCaptureDependencies));
    CHECK(cudaMemcpyAsync(h_out, d, N + M, cudaMemcpyDeviceToHost, s));
    CHECK(cudaStreamEndCapture(s, &ended));
    if (ended != g2) { printf("the capture ended in another graph\n"); return 1; }
    memset(h_out, 0, N + M);
    CHECK(cudaGraphInstantiate(&exec, g2, 0));
    for (int l = 0; l < 3; l++) {
        for (int i = 0; i < N; i++) h_in[i] = (unsigned char)(i * 7 + l * 13 + 3);
        CHECK(cudaGraphLaunch(exec, s));
        CHECK(cudaStreamSynchronize(s));
        if (check("capture after an explicit node", &k3, 1, true)) return 1;
    }
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaFree(scratch));
    CHECK(cudaGraphDestroy(g2));
    CHECK(cudaGraphDestroy(other));
    CHECK(cudaGraphDestroy(parent));
    CHECK(cudaGraphDestroy(child));
    return 0;
}

static int boxes(cudaStream_t s) {
    const int W = 300, H = 20, D = 6;
    static unsigned char in[D][H][W], out[D][H][W], want[D][H][W];
    cudaPitchedPtr a, b;
    CHECK(cudaMalloc3D(&a, make_cudaExtent(W, H, D)));
    CHECK(cudaMalloc3D(&b, make_cudaExtent(W, H, D)));
    for (int z = 0; z < D; z++)
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) in[z][y][x] = (unsigned char)(x * 3 + y * 41 + z * 97 + 1);
    cudaMemcpy3DParms c = {};
    c.srcPtr = make_cudaPitchedPtr(in, W, W, H);
    c.dstPtr = a;
    c.extent = make_cudaExtent(W, H, D);
    c.kind = cudaMemcpyHostToDevice;
    CHECK(cudaMemcpy3D(&c));
    CHECK(cudaMemset3D(b, 0, make_cudaExtent(W, H, D)));
    bump_rows<<<dim3((W + 127) / 128, H, D), 128, 0, s>>>(a, W, H, D);
    for (int z = 0; z < D; z++)
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) in[z][y][x] += (unsigned char)(z * H + y);
    auto box = [&](cudaPos from, cudaPos to, cudaExtent e) {
        for (size_t z = 0; z < e.depth; z++)
            for (size_t y = 0; y < e.height; y++)
                memcpy(&want[to.z + z][to.y + y][to.x], &in[from.z + z][from.y + y][from.x], e.width);
        cudaMemcpy3DPeerParms p = {};
        p.srcPtr = a;
        p.srcPos = from;
        p.dstPtr = b;
        p.dstPos = to;
        p.extent = e;
        return p;
    };
    cudaMemcpy3DPeerParms p1 = box(make_cudaPos(17, 3, 1), make_cudaPos(5, 2, 0), make_cudaExtent(200, 9, 4));
    CHECK(cudaMemcpy3DPeerAsync(&p1, s));
    CHECK(cudaStreamSynchronize(s));
    cudaMemcpy3DPeerParms p2 = box(make_cudaPos(0, 0, 5), make_cudaPos(250, 15, 5), make_cudaExtent(50, 5, 1));
    CHECK(cudaMemcpy3DPeer(&p2));
    c = {};
    c.srcPtr = b;
    c.dstPtr = make_cudaPitchedPtr(out, W, W, H);
    c.extent = make_cudaExtent(W, H, D);
    c.kind = cudaMemcpyDeviceToHost;
    CHECK(cudaMemcpy3D(&c));
    if (memcmp(out, want, sizeof out)) {
        printf("the copied boxes differ\n");
        return 1;
    }
    unsigned sum = 0;
    for (size_t i = 0; i < sizeof out; i++) sum = sum * 31 + ((unsigned char*)out)[i];
    printf("3D boxes (pitch %zu): ok, checksum %08x\n", a.pitch, sum);
    CHECK(cudaFree(a.ptr));
    CHECK(cudaFree(b.ptr));
    return 0;
}

int main() {
    cudaStream_t s;
    CHECK(cudaHostAlloc(&h_in, N, 0));
    CHECK(cudaHostAlloc(&h_out, N + M, 0));
    CHECK(cudaMalloc(&d, N + M));
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (int i = 0; i < N; i++) h_in[i] = (unsigned char)(i * 7 + 3);
    if (graphs(s) || boxes(s)) return 1;
    printf("graph_edits_3d: ok\n");
    return 0;
}
