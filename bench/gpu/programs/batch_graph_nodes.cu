// Batched copies and the generic graph-node calls, as CUDA 12.8+ programs make them (the
// static runtime makes them of the driver's cuMemcpyBatchAsync_v2, cuMemcpy3DBatchAsync_v2
// and cuGraphAddNode_v2):
// 1. cudaMemcpyBatchAsync of a page-locked and a pageable input (two attribute entries:
//    stream order, and read during the call), a kernel over them, a batch of the results
//    back to page-locked and pageable memory.
// 2. cudaMemcpy3DBatchAsync of a host box into a float array and of the array into pitched
//    memory (row length in elements), a kernel over the rows, a batch of a sub-box back.
// 3. A graph built only with cudaGraphAddNode: a memset node, a kernel node, an event
//    record and wait, a host node, an allocation node whose memory a kernel fills and a
//    copy node moves out before the free node, a child graph, a copy node back to the
//    host; cudaGraphNodeSetParams of the kernel before instantiation, then
//    cudaGraphExecNodeSetParams of the kernel and the host node between launches.
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

constexpr int N = 1 << 18;
constexpr int W = 96, H = 40;

__global__ void axpy(float* y, const float* x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

__global__ void row_add(float* p, size_t pitch, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x < w && y < h) ((float*)((char*)p + y * pitch))[x] += (float)y;
}

__global__ void xor_bytes(unsigned char* p, unsigned key, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] ^= (unsigned char)(key + i / 1024);
}

static int failures;
static void expect(bool ok, const char* what, long at) {
    if (!ok && failures++ < 5) printf("%s differs at %ld\n", what, at);
}

static cudaMemcpyAttributes attrs(cudaMemcpySrcAccessOrder order) {
    cudaMemcpyAttributes a = {};
    a.srcAccessOrder = order;
    return a;
}

static void batches(cudaStream_t s) {
    float *pin_x, *pin_out, *dx, *dy;
    static float page_y[N], page_out[N];
    CHECK(cudaMallocHost(&pin_x, N * 4));
    CHECK(cudaMallocHost(&pin_out, N * 4));
    CHECK(cudaMalloc(&dx, N * 4));
    CHECK(cudaMalloc(&dy, N * 4));
    for (int i = 0; i < N; i++) {
        pin_x[i] = (float)(i % 1000);
        page_y[i] = (float)(i % 77);
    }
    void* dsts[2] = {dx, dy};
    const void* srcs[2] = {pin_x, page_y};
    size_t sizes[2] = {N * 4, N * 4};
    cudaMemcpyAttributes two[2] = {attrs(cudaMemcpySrcAccessOrderStream), attrs(cudaMemcpySrcAccessOrderDuringApiCall)};
    size_t idx[2] = {0, 1};
    CHECK(cudaMemcpyBatchAsync(dsts, srcs, sizes, 2, two, idx, 2, s));
    axpy<<<N / 256, 256, 0, s>>>(dy, dx, 2.0f, N);
    void* back_dst[2] = {pin_out, page_out};
    const void* back_src[2] = {dy, dx};
    cudaMemcpyAttributes one = attrs(cudaMemcpySrcAccessOrderStream);
    size_t first = 0;
    CHECK(cudaMemcpyBatchAsync(back_dst, back_src, sizes, 2, &one, &first, 1, s));
    CHECK(cudaStreamSynchronize(s));
    for (int i = 0; i < N; i++) {
        expect(pin_out[i] == 2.0f * (float)(i % 1000) + (float)(i % 77), "batch: axpy result", i);
        expect(page_out[i] == (float)(i % 1000), "batch: x round trip", i);
    }
}

static cudaMemcpy3DOperand pointer(void* p, size_t row, size_t layer) {
    cudaMemcpy3DOperand o = {};
    o.type = cudaMemcpyOperandTypePointer;
    o.op.ptr.ptr = p;
    o.op.ptr.rowLength = row;
    o.op.ptr.layerHeight = layer;
    return o;
}

static cudaMemcpy3DOperand array_at(cudaArray_t a, size_t x, size_t y) {
    cudaMemcpy3DOperand o = {};
    o.type = cudaMemcpyOperandTypeArray;
    o.op.array.array = a;
    o.op.array.offset = {x, y, 0};
    return o;
}

static cudaMemcpy3DBatchOp op3d(cudaMemcpy3DOperand src, cudaMemcpy3DOperand dst, size_t w, size_t h) {
    cudaMemcpy3DBatchOp op = {};
    op.src = src;
    op.dst = dst;
    op.extent = make_cudaExtent(w, h, 1);
    op.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    return op;
}

static void batches_3d(cudaStream_t s) {
    static float box[H][W];
    float *pitched, *out;
    size_t pitch;
    cudaArray_t arr;
    cudaChannelFormatDesc f32 = cudaCreateChannelDesc<float>();
    CHECK(cudaMallocArray(&arr, &f32, W, H));
    CHECK(cudaMallocPitch(&pitched, &pitch, W * 4, H));
    CHECK(cudaMallocHost(&out, sizeof box));
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) box[y][x] = (float)(y * 1000 + x);
    // Dependent copies: one batch each, in stream order.
    cudaMemcpy3DBatchOp in = op3d(pointer(box, 0, 0), array_at(arr, 0, 0), W, H);
    CHECK(cudaMemcpy3DBatchAsync(1, &in, 0, s));
    cudaMemcpy3DBatchOp mid = op3d(array_at(arr, 0, 0), pointer(pitched, pitch / 4, H), W, H);
    CHECK(cudaMemcpy3DBatchAsync(1, &mid, 0, s));
    row_add<<<dim3((W + 63) / 64, H), 64, 0, s>>>(pitched, pitch, W, H);
    // Rows 5..24, columns 16..79 (bytes 64..319), packed into out.
    cudaMemcpy3DBatchOp sub = op3d(pointer((char*)pitched + 5 * pitch + 64, pitch, H), pointer(out, 0, 0), 256, 20);
    CHECK(cudaMemcpy3DBatchAsync(1, &sub, 0, s));
    CHECK(cudaStreamSynchronize(s));
    for (int y = 0; y < 20; y++)
        for (int x = 0; x < 64; x++)
            expect(out[y * 64 + x] == box[y + 5][x + 16] + (float)(y + 5), "3D batch: sub-box", y * 64 + x);
}

static int host_calls[2];
static void CUDART_CB host_a(void*) { host_calls[0]++; }
static void CUDART_CB host_b(void*) { host_calls[1]++; }

static cudaGraphNode_t add(cudaGraph_t g, cudaGraphNode_t after, cudaGraphNodeParams* p) {
    cudaGraphNode_t n;
    CHECK(cudaGraphAddNode(&n, g, after ? &after : nullptr, nullptr, after ? 1 : 0, p));
    return n;
}

static cudaGraphNodeParams xor_node(unsigned char** buf, unsigned* key, int* n, void** args) {
    cudaGraphNodeParams p = {};
    p.type = cudaGraphNodeTypeKernel;
    args[0] = buf;
    args[1] = key;
    args[2] = n;
    p.kernel.func = (void*)xor_bytes;
    p.kernel.gridDim = dim3(N / 256);
    p.kernel.blockDim = dim3(256);
    p.kernel.kernelParams = args;
    return p;
}

static cudaGraphNodeParams copy_node(void* dst, const void* src, size_t bytes) {
    cudaGraphNodeParams p = {};
    p.type = cudaGraphNodeTypeMemcpy;
    p.memcpy.copyParams.srcPtr = make_cudaPitchedPtr((void*)src, bytes, bytes, 1);
    p.memcpy.copyParams.dstPtr = make_cudaPitchedPtr(dst, bytes, bytes, 1);
    p.memcpy.copyParams.extent = make_cudaExtent(bytes, 1, 1);
    p.memcpy.copyParams.kind = cudaMemcpyDefault;
    return p;
}

static void check_graph(const char* what, const unsigned char* out, const unsigned char* scratch, unsigned key,
                        unsigned child_key, int a, int b) {
    for (int i = 0; i < N; i++) {
        unsigned char v = (unsigned char)(0x5a ^ (unsigned char)(key + i / 1024));
        expect(out[i] == (unsigned char)(v ^ (unsigned char)(child_key + i / 1024)), what, i);
        expect(scratch[i] == (unsigned char)(0x33 ^ (unsigned char)(key + i / 1024)), "graph: allocation copied out", i);
    }
    if (host_calls[0] != a || host_calls[1] != b) {
        printf("%s: host functions ran %d and %d times, not %d and %d\n", what, host_calls[0], host_calls[1], a, b);
        failures++;
    }
}

static void graph(cudaStream_t s) {
    static unsigned char* buf;
    static unsigned char* mem;
    unsigned char *out, *scratch_out, *scratch;
    CHECK(cudaMalloc(&buf, N));
    CHECK(cudaMalloc(&scratch, N));
    CHECK(cudaMallocHost(&out, N));
    CHECK(cudaMallocHost(&scratch_out, N));
    cudaEvent_t ev;
    CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    cudaGraph_t g, child;
    CHECK(cudaGraphCreate(&g, 0));
    static int n = N;
    static unsigned k1 = 0x11, k2 = 0x22, k3 = 0x44, kc = 0x08;
    void *a1[3], *a2[3], *a3[3], *ac[3], *am[3];

    cudaGraphNodeParams ms = {};
    ms.type = cudaGraphNodeTypeMemset;
    ms.memset.dst = buf;
    ms.memset.value = 0x5a;
    ms.memset.elementSize = 1;
    ms.memset.width = N;
    ms.memset.height = 1;
    cudaGraphNodeParams kp = xor_node(&buf, &k1, &n, a1);
    cudaGraphNode_t n_xor = add(g, add(g, nullptr, &ms), &kp);
    cudaGraphNodeParams rec = {}, wait = {}, host = {}, alloc = {}, free_ = {}, cg = {};
    rec.type = cudaGraphNodeTypeEventRecord;
    rec.eventRecord.event = ev;
    wait.type = cudaGraphNodeTypeWaitEvent;
    wait.eventWait.event = ev;
    cudaGraphNode_t n_wait = add(g, add(g, n_xor, &rec), &wait);
    host.type = cudaGraphNodeTypeHost;
    host.host.fn = host_a;
    cudaGraphNode_t n_host = add(g, n_wait, &host);
    // Graph memory: allocated, filled by a kernel, copied out, freed.
    alloc.type = cudaGraphNodeTypeMemAlloc;
    alloc.alloc.poolProps.allocType = cudaMemAllocationTypePinned;
    alloc.alloc.poolProps.location = {cudaMemLocationTypeDevice, 0};
    alloc.alloc.bytesize = N;
    cudaGraphNode_t n_alloc = add(g, n_host, &alloc);
    mem = (unsigned char*)alloc.alloc.dptr;
    cudaGraphNodeParams fill = {};
    fill.type = cudaGraphNodeTypeMemset;
    fill.memset.dst = mem;
    fill.memset.value = 0x33;
    fill.memset.elementSize = 1;
    fill.memset.width = N;
    fill.memset.height = 1;
    cudaGraphNodeParams km = xor_node(&mem, &k1, &n, am);
    cudaGraphNode_t n_mem_xor = add(g, add(g, n_alloc, &fill), &km);
    cudaGraphNodeParams move = copy_node(scratch, mem, N);
    cudaGraphNode_t n_move = add(g, n_mem_xor, &move);
    free_.type = cudaGraphNodeTypeMemFree;
    free_.free.dptr = mem;
    cudaGraphNode_t n_free = add(g, n_move, &free_);
    // A child graph xoring buf with kc.
    CHECK(cudaGraphCreate(&child, 0));
    cudaGraphNodeParams ck = xor_node(&buf, &kc, &n, ac);
    add(child, nullptr, &ck);
    cg.type = cudaGraphNodeTypeGraph;
    cg.graph.graph = child;
    cudaGraphNode_t n_child = add(g, n_free, &cg);
    cudaGraphNodeParams out_copy = copy_node(out, buf, N), scratch_copy = copy_node(scratch_out, scratch, N);
    add(g, add(g, n_child, &out_copy), &scratch_copy);

    // Before instantiation: the first kernel's key is k2 (the allocation's stays k1).
    kp = xor_node(&buf, &k2, &n, a2);
    CHECK(cudaGraphNodeSetParams(n_xor, &kp));
    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiate(&exec, g, 0));
    CHECK(cudaGraphLaunch(exec, s));
    CHECK(cudaStreamSynchronize(s));
    // The allocation's kernel xors with k1, whose term check_graph expects as `key`.
    for (int i = 0; i < N; i++) {
        unsigned char v = (unsigned char)(0x5a ^ (unsigned char)(k2 + i / 1024));
        expect(out[i] == (unsigned char)(v ^ (unsigned char)(kc + i / 1024)), "graph: first launch", i);
        expect(scratch_out[i] == (unsigned char)(0x33 ^ (unsigned char)(k1 + i / 1024)), "graph: first allocation", i);
    }
    if (host_calls[0] != 1 || host_calls[1] != 0) {
        printf("first launch: host functions ran %d and %d times\n", host_calls[0], host_calls[1]);
        failures++;
    }
    // Executable-graph updates: both kernels' keys k3, the other host function.
    kp = xor_node(&buf, &k3, &n, a3);
    CHECK(cudaGraphExecNodeSetParams(exec, n_xor, &kp));
    km = xor_node(&mem, &k3, &n, am);
    CHECK(cudaGraphExecNodeSetParams(exec, n_mem_xor, &km));
    host.host.fn = host_b;
    CHECK(cudaGraphExecNodeSetParams(exec, n_host, &host));
    for (int r = 0; r < 3; r++) {
        CHECK(cudaGraphLaunch(exec, s));
        CHECK(cudaStreamSynchronize(s));
        check_graph("graph: updated launch", out, scratch_out, k3, kc, 1, r + 1);
    }
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(g));
    CHECK(cudaGraphDestroy(child));
}

int main() {
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    batches(s);
    batches_3d(s);
    graph(s);
    if (failures) {
        printf("FAIL: %d wrong results\n", failures);
        return 1;
    }
    printf("batch_graph_nodes: all results right\n");
    return 0;
}
