// Host code in the stream's order, as pipelines use it (CUDA 13):
// 1. Four streams, sixteen chunks: per chunk a host function fills the chunk's pinned input
//    (cudaLaunchHostFunc), then a copy in, a kernel, a copy out, and a stream callback
//    (cudaStreamAddCallback) that folds the chunk's output into a checksum.
// 2. A graph of a kernel, a copy out and a host node after it (cudaGraphAddHostNode),
//    launched five times, the node's data replaced in the executable graph once.
// 3. A host function on the legacy stream filling a buffer a synchronous copy then sends.
// 4. A stream capture holding a host function between two kernels, launched three times.
// Every result is checked on the host. Exit 0: right; 1: a wrong result; 2: a call failed.
#include <atomic>
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

constexpr int STREAMS = 4, CHUNKS = 16, N = 1 << 18;

__global__ void affine(const unsigned* in, unsigned* out, unsigned a, unsigned b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] * a + b;
}

__global__ void bump(unsigned* p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] += 3;
}

struct Chunk {
    unsigned *in, *out;
    int index;
    unsigned long long sum;
};

static void fill_chunk(void* data) {
    Chunk* c = static_cast<Chunk*>(data);
    for (int i = 0; i < N; i++) c->in[i] = (unsigned)(i * 2654435761u + c->index * 97u);
}

static void fold_chunk(cudaStream_t, cudaError_t status, void* data) {
    Chunk* c = static_cast<Chunk*>(data);
    if (status != cudaSuccess) return;
    unsigned long long s = 0;
    for (int i = 0; i < N; i++) s = s * 31 + c->out[i];
    c->sum = s;
}

static std::atomic<int> node_runs[2];
static void count(void* data) { static_cast<std::atomic<int>*>(data)->fetch_add(1); }

static unsigned long long want_sum(int index, unsigned a, unsigned b) {
    unsigned long long s = 0;
    for (int i = 0; i < N; i++) s = s * 31 + (unsigned)((unsigned)(i * 2654435761u + index * 97u) * a + b);
    return s;
}

int main() {
    cudaStream_t s[STREAMS];
    for (auto& x : s) CHECK(cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking));
    // 1. The pipeline: host functions fill the inputs in the streams' order.
    static Chunk chunks[CHUNKS];
    unsigned *d_in[STREAMS], *d_out[STREAMS];
    for (int k = 0; k < STREAMS; k++) {
        CHECK(cudaMalloc(&d_in[k], N * sizeof(unsigned)));
        CHECK(cudaMalloc(&d_out[k], N * sizeof(unsigned)));
    }
    for (int c = 0; c < CHUNKS; c++) {
        CHECK(cudaHostAlloc(&chunks[c].in, N * sizeof(unsigned), 0));
        CHECK(cudaHostAlloc(&chunks[c].out, N * sizeof(unsigned), 0));
        chunks[c].index = c;
    }
    for (int c = 0; c < CHUNKS; c++) {
        int k = c % STREAMS;
        CHECK(cudaLaunchHostFunc(s[k], fill_chunk, &chunks[c]));
        CHECK(cudaMemcpyAsync(d_in[k], chunks[c].in, N * sizeof(unsigned), cudaMemcpyHostToDevice, s[k]));
        affine<<<N / 256, 256, 0, s[k]>>>(d_in[k], d_out[k], 5u + c, 11u, N);
        CHECK(cudaMemcpyAsync(chunks[c].out, d_out[k], N * sizeof(unsigned), cudaMemcpyDeviceToHost, s[k]));
        CHECK(cudaStreamAddCallback(s[k], fold_chunk, &chunks[c], 0));
    }
    for (auto& x : s) CHECK(cudaStreamSynchronize(x));
    for (int c = 0; c < CHUNKS; c++)
        if (chunks[c].sum != want_sum(c, 5u + c, 11u)) {
            printf("chunk %d: checksum %llx, not %llx\n", c, chunks[c].sum, want_sum(c, 5u + c, 11u));
            return 1;
        }
    printf("pipeline: %d chunks ok\n", CHUNKS);

    // 2. A graph with a host node after its copy out.
    unsigned* h = nullptr;
    CHECK(cudaHostAlloc(&h, N * sizeof(unsigned), 0));
    CHECK(cudaMemset(d_out[0], 0, N * sizeof(unsigned)));
    cudaGraph_t g;
    cudaGraphExec_t x;
    cudaGraphNode_t kn, cp, hn;
    CHECK(cudaGraphCreate(&g, 0));
    int n = N;
    void* args[2] = {&d_out[0], &n};
    cudaKernelNodeParams kp = {};
    kp.func = (void*)bump;
    kp.gridDim = dim3(N / 256);
    kp.blockDim = dim3(256);
    kp.kernelParams = args;
    CHECK(cudaGraphAddKernelNode(&kn, g, nullptr, 0, &kp));
    CHECK(cudaGraphAddMemcpyNode1D(&cp, g, &kn, 1, h, d_out[0], N * sizeof(unsigned), cudaMemcpyDeviceToHost));
    cudaHostNodeParams hp = {count, &node_runs[0]};
    CHECK(cudaGraphAddHostNode(&hn, g, &cp, 1, &hp));
    CHECK(cudaGraphInstantiate(&x, g, 0));
    for (int l = 0; l < 5; l++) {
        if (l == 3) {
            hp.userData = &node_runs[1];
            CHECK(cudaGraphExecHostNodeSetParams(x, hn, &hp));
        }
        CHECK(cudaGraphLaunch(x, s[0]));
        CHECK(cudaStreamSynchronize(s[0]));
        for (int i = 0; i < N; i++)
            if (h[i] != 3u * (l + 1)) { printf("graph launch %d: word %d is %u\n", l, i, h[i]); return 1; }
    }
    if (node_runs[0] != 3 || node_runs[1] != 2) { printf("host node ran %d/%d\n", node_runs[0].load(), node_runs[1].load()); return 1; }
    printf("graph host node: ok\n");

    // 3. A host function on the legacy stream, then a synchronous copy of what it wrote.
    CHECK(cudaLaunchHostFunc(0, fill_chunk, &chunks[0]));
    CHECK(cudaMemcpy(d_in[0], chunks[0].in, N * sizeof(unsigned), cudaMemcpyHostToDevice));
    affine<<<N / 256, 256>>>(d_in[0], d_out[0], 7u, 1u, N);
    CHECK(cudaMemcpy(chunks[0].out, d_out[0], N * sizeof(unsigned), cudaMemcpyDeviceToHost));
    fold_chunk(0, cudaSuccess, &chunks[0]);
    if (chunks[0].sum != want_sum(0, 7u, 1u)) { printf("legacy stream: wrong\n"); return 1; }
    printf("legacy stream: ok\n");

    // 4. A host function captured into a graph.
    cudaGraph_t cg;
    cudaGraphExec_t cx;
    CHECK(cudaMemset(d_out[1], 0, N * sizeof(unsigned)));
    CHECK(cudaStreamBeginCapture(s[1], cudaStreamCaptureModeGlobal));
    bump<<<N / 256, 256, 0, s[1]>>>(d_out[1], N);
    CHECK(cudaLaunchHostFunc(s[1], count, &node_runs[0]));
    bump<<<N / 256, 256, 0, s[1]>>>(d_out[1], N);
    CHECK(cudaMemcpyAsync(h, d_out[1], N * sizeof(unsigned), cudaMemcpyDeviceToHost, s[1]));
    CHECK(cudaStreamEndCapture(s[1], &cg));
    CHECK(cudaGraphInstantiate(&cx, cg, 0));
    for (int l = 0; l < 3; l++) {
        CHECK(cudaGraphLaunch(cx, s[1]));
        CHECK(cudaStreamSynchronize(s[1]));
        if (h[12345] != 6u * (l + 1)) { printf("captured launch %d: %u\n", l, h[12345]); return 1; }
    }
    if (node_runs[0] != 6) { printf("captured host function ran %d\n", node_runs[0].load() - 3); return 1; }
    printf("captured host function: ok\nhost_callbacks: ok\n");
    return 0;
}
