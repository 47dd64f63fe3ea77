// The calls issue 22's third coverage round models, in one program, each result copied
// back and checked on the host:
//   - graph copy nodes to and from __device__ / __constant__ variables:
//     cudaGraphAddMemcpyNodeToSymbol (with an offset into the variable),
//     cudaGraphAddMemcpyNodeFromSymbol, then the node updates
//     cudaGraphMemcpyNodeSetParamsToSymbol / FromSymbol before instantiation and
//     cudaGraphExecMemcpyNodeSetParamsToSymbol / FromSymbol after it; the executable
//     graph launched three times with new host input between launches;
//   - cudaKernelSetAttributeForDevice on a kernel handle (cudaGetKernel): the kernel's
//     dynamic shared memory raised past the default 48 KB, then a launch that needs it;
//   - cudaMemDiscardBatchAsync over a buffer the program then writes whole before
//     reading (the discard is exempt by rule: nothing read depends on it).
// Build: nvcc -O2 -arch=sm_90 [-cudart shared] graph_symbol_nodes.cu
#include <cstdio>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); return 1; } } while (0)

constexpr int N = 256;
__device__ int table[2 * N];
__constant__ int coeff[N];

// out[i] = table[N + i] * coeff[i] + i: reads the half of `table` the to-symbol node
// writes (offset N ints) and the constant the other node fills.
__global__ void combine(int* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) {
        table[i] = table[N + i] * coeff[i] + i;
        out[i] = table[i];
    }
}

// Needs `bytes` of dynamic shared memory: sums a block's inputs through it.
__global__ void shared_sum(const int* in, int* out, int n) {
    extern __shared__ int buf[];
    int t = threadIdx.x;
    int per = n / blockDim.x;
    int s = 0;
    for (int k = 0; k < per; ++k) {
        buf[t * per + k] = in[t * per + k] * 3;
    }
    __syncthreads();
    for (int k = 0; k < per; ++k) s += buf[((t + 1) % blockDim.x) * per + k];
    out[t] = s;
}

static int graph_nodes() {
    int* d_out = nullptr;
    CHECK(cudaMalloc(&d_out, N * sizeof(int)));
    std::vector<int> in(N), co(N), back(2 * N), got(N), alt(N);
    cudaGraph_t g;
    CHECK(cudaGraphCreate(&g, 0));
    cudaGraphNode_t to_table, to_coeff, run, from_table;
    for (int i = 0; i < N; ++i) { in[i] = i * 7 + 1; co[i] = (i % 5) + 2; alt[i] = -i; }
    CHECK(cudaGraphAddMemcpyNodeToSymbol(&to_table, g, nullptr, 0, table, alt.data(), N * sizeof(int), N * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaGraphAddMemcpyNodeToSymbol(&to_coeff, g, &to_table, 1, coeff, co.data(), N * sizeof(int), 0, cudaMemcpyHostToDevice));
    // The node first points at `alt`; the update points it at `in` before instantiation.
    CHECK(cudaGraphMemcpyNodeSetParamsToSymbol(to_table, table, in.data(), N * sizeof(int), N * sizeof(int), cudaMemcpyHostToDevice));
    void* args[] = {&d_out};
    cudaKernelNodeParams kp = {};
    kp.func = (void*)combine;
    kp.gridDim = dim3(1);
    kp.blockDim = dim3(N);
    kp.kernelParams = args;
    CHECK(cudaGraphAddKernelNode(&run, g, &to_coeff, 1, &kp));
    CHECK(cudaGraphAddMemcpyNodeFromSymbol(&from_table, g, &run, 1, alt.data(), table, N * sizeof(int), 0, cudaMemcpyDeviceToHost));
    CHECK(cudaGraphMemcpyNodeSetParamsFromSymbol(from_table, back.data(), table, 2 * N * sizeof(int), 0, cudaMemcpyDeviceToHost));
    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiate(&exec, g, 0));
    int bad = 0;
    for (int launch = 0; launch < 3; ++launch) {
        for (int i = 0; i < N; ++i) in[i] = i * 7 + 1 + launch * 1000;
        if (launch == 2) {
            // Executable-graph updates: new coefficients from another buffer, and the
            // result into `got` (the first half of the variable only).
            for (int i = 0; i < N; ++i) alt[i] = (i % 3) + 1;
            CHECK(cudaGraphExecMemcpyNodeSetParamsToSymbol(exec, to_coeff, coeff, alt.data(), N * sizeof(int), 0, cudaMemcpyHostToDevice));
            CHECK(cudaGraphExecMemcpyNodeSetParamsFromSymbol(exec, from_table, got.data(), table, N * sizeof(int), 0, cudaMemcpyDeviceToHost));
        }
        CHECK(cudaGraphLaunch(exec, 0));
        CHECK(cudaStreamSynchronize(0));
        const int* first = launch == 2 ? got.data() : back.data();
        const int* c = launch == 2 ? alt.data() : co.data();
        for (int i = 0; i < N; ++i) {
            int want = in[i] * c[i] + i;
            if (first[i] != want) { if (bad < 5) fprintf(stderr, "launch %d: table[%d] = %d, want %d\n", launch, i, first[i], want); ++bad; }
            if (launch < 2 && back[N + i] != in[i]) { if (bad < 5) fprintf(stderr, "launch %d: table[%d] = %d, want %d\n", launch, N + i, back[N + i], in[i]); ++bad; }
        }
    }
    std::vector<int> d(N);
    CHECK(cudaMemcpy(d.data(), d_out, N * sizeof(int), cudaMemcpyDeviceToHost));
    for (int i = 0; i < N; ++i) if (d[i] != got[i]) { if (bad < 5) fprintf(stderr, "out[%d] = %d, want %d\n", i, d[i], got[i]); ++bad; }
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(g));
    CHECK(cudaFree(d_out));
    printf("graph symbol nodes: %s\n", bad ? "WRONG" : "ok");
    return bad ? 1 : 0;
}

static int kernel_attribute() {
    const int threads = 128, per = 128, n = threads * per;  // 64 KB of shared memory
    const int bytes = n * (int)sizeof(int);
    cudaKernel_t k;
    CHECK(cudaGetKernel(&k, (const void*)shared_sum));
    CHECK(cudaKernelSetAttributeForDevice(k, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes, 0));
    int *d_in, *d_out;
    CHECK(cudaMalloc(&d_in, bytes));
    CHECK(cudaMalloc(&d_out, threads * sizeof(int)));
    std::vector<int> in(n), out(threads);
    for (int i = 0; i < n; ++i) in[i] = (i * 13) % 101;
    CHECK(cudaMemcpy(d_in, in.data(), bytes, cudaMemcpyHostToDevice));
    shared_sum<<<1, threads, bytes>>>(d_in, d_out, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(out.data(), d_out, threads * sizeof(int), cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int t = 0; t < threads; ++t) {
        int s = 0;
        for (int k2 = 0; k2 < per; ++k2) s += in[((t + 1) % threads) * per + k2] * 3;
        if (out[t] != s) ++bad;
    }
    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
    printf("kernel attribute for device: %s\n", bad ? "WRONG" : "ok");
    return bad ? 1 : 0;
}

static int discard() {
    const size_t n = 1 << 20;
    int* p = nullptr;
    CHECK(cudaMallocManaged(&p, n * sizeof(int)));
    for (size_t i = 0; i < n; ++i) p[i] = (int)i;
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    void* ptrs[] = {p};
    size_t sizes[] = {n * sizeof(int)};
    cudaError_t e = cudaMemDiscardBatchAsync(ptrs, sizes, 1, 0, s);
    if (e != cudaSuccess) {
        // A device or driver without discards refuses it; the program goes on the same.
        printf("discard: %s (not supported here)\n", cudaGetErrorString(e));
        (void)cudaGetLastError();
    }
    CHECK(cudaMemsetAsync(p, 0x11, n * sizeof(int), s));
    std::vector<int> back(n);
    CHECK(cudaMemcpyAsync(back.data(), p, n * sizeof(int), cudaMemcpyDeviceToHost, s));
    CHECK(cudaStreamSynchronize(s));
    int bad = 0;
    for (size_t i = 0; i < n; ++i) if (back[i] != 0x11111111) { ++bad; break; }
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(p));
    printf("discard then write: %s\n", bad ? "WRONG" : "ok");
    return bad ? 1 : 0;
}

int main() {
    int r = graph_nodes();
    r |= kernel_attribute();
    r |= discard();
    return r;
}
