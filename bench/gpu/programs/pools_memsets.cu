// The calls issue 22's second coverage round models, in one program, each result copied
// back and checked on the host:
//   - 3D memsets: cudaMemset3D and cudaMemset3DAsync into a pitched allocation (only the
//     extent's bytes of each row are set, the pitch's tail keeps what was there);
//   - memory pools by location (CUDA 13): cudaMemGetDefaultMemPool and cudaMemGetMemPool
//     of device 0, cudaMemSetMemPool back to the default, cudaMemPoolSetAccess (the
//     pool's own device: what the runtime answers is compared, not assumed), then an
//     allocation from the pool used by a kernel; the driver's cuMemGetDefaultMemPool,
//     cuMemGetMemPool, cuMemSetMemPool and cuMemPoolSetAccess likewise;
//   - the driver's context events: cuCtxRecordEvent, cuCtxWaitEvent, cuStreamGetCtx.
// Build: nvcc -O2 -arch=sm_90 [-cudart shared] pools_memsets.cu -lcuda
#include <cstdio>
#include <vector>
#include <cuda.h>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); return 1; } } while (0)
#define DRV(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { fprintf(stderr, "%s:%d %s: %d\n", __FILE__, __LINE__, #x, (int)r_); return 1; } } while (0)

__global__ void scale(int* p, int n, int k) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = p[i] * k + 1;
}

__global__ void fill(int* p, int n, int v) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = v + i;
}

static unsigned long long digest(const void* p, size_t n) {
    const unsigned char* b = static_cast<const unsigned char*>(p);
    unsigned long long h = 1469598103934665603ull;
    for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

static int memsets() {
    const size_t w = 100, h = 6, d = 3;
    void* p = nullptr;
    size_t pitch = 0;
    CHECK(cudaMallocPitch(&p, &pitch, w, h * d));
    CHECK(cudaMemset(p, 0x11, pitch * h * d));
    cudaPitchedPtr pp = make_cudaPitchedPtr(p, pitch, w, h);
    CHECK(cudaMemset3D(pp, 0x5a, make_cudaExtent(w - 10, h, d)));
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    CHECK(cudaMemset3DAsync(pp, 0x3c, make_cudaExtent(20, h - 2, d - 1), s));
    CHECK(cudaStreamSynchronize(s));
    std::vector<unsigned char> back(pitch * h * d);
    CHECK(cudaMemcpy(back.data(), p, back.size(), cudaMemcpyDeviceToHost));
    size_t fives = 0, threes = 0;
    for (size_t z = 0; z < d; ++z)
        for (size_t y = 0; y < h; ++y)
            for (size_t x = 0; x < w; ++x) {
                unsigned char v = back[(z * h + y) * pitch + x];
                fives += v == 0x5a;
                threes += v == 0x3c;
            }
    printf("memset3d: 0x5a %zu bytes, 0x3c %zu bytes, digest of the %zu-wide rows %016llx\n", fives,
           threes, w, digest(back.data(), back.size()));
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(p));
    return 0;
}

static int pools() {
    cudaMemLocation loc = {};
    loc.type = cudaMemLocationTypeDevice;
    loc.id = 0;
    cudaMemPool_t dflt = nullptr, cur = nullptr;
    CHECK(cudaMemGetDefaultMemPool(&dflt, &loc, cudaMemAllocationTypePinned));
    CHECK(cudaMemGetMemPool(&cur, &loc, cudaMemAllocationTypePinned));
    CHECK(cudaMemSetMemPool(&loc, cudaMemAllocationTypePinned, dflt));
    cudaMemAccessDesc acc = {};
    acc.location = loc;
    acc.flags = cudaMemAccessFlagsProtReadWrite;
    cudaError_t own = cudaMemPoolSetAccess(dflt, &acc, 1);
    cudaGetLastError();
    printf("pools: default is current %d, access of its own device: %d\n", dflt == cur, (int)own);
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    const int n = 4096;
    int* a = nullptr;
    CHECK(cudaMallocFromPoolAsync((void**)&a, n * sizeof(int), dflt, s));
    fill<<<(n + 255) / 256, 256, 0, s>>>(a, n, 7);
    scale<<<(n + 255) / 256, 256, 0, s>>>(a, n, 3);
    std::vector<int> back(n);
    CHECK(cudaMemcpyAsync(back.data(), a, n * sizeof(int), cudaMemcpyDeviceToHost, s));
    CHECK(cudaFreeAsync(a, s));
    CHECK(cudaStreamSynchronize(s));
    printf("pools: pool allocation digest %016llx\n", digest(back.data(), n * sizeof(int)));

    // The driver's forms of the same.
    CUmemLocation dloc = {};
    dloc.type = CU_MEM_LOCATION_TYPE_DEVICE;
    dloc.id = 0;
    CUmemoryPool ddflt = nullptr, dcur = nullptr;
    DRV(cuMemGetDefaultMemPool(&ddflt, &dloc, CU_MEM_ALLOCATION_TYPE_PINNED));
    DRV(cuMemGetMemPool(&dcur, &dloc, CU_MEM_ALLOCATION_TYPE_PINNED));
    DRV(cuMemSetMemPool(&dloc, CU_MEM_ALLOCATION_TYPE_PINNED, ddflt));
    CUmemAccessDesc dacc = {};
    dacc.location = dloc;
    dacc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CUresult downer = cuMemPoolSetAccess(ddflt, &dacc, 1);
    printf("pools: driver default is current %d, is the runtime's %d, access: %d\n", ddflt == dcur,
           (void*)ddflt == (void*)dflt, (int)downer);
    CHECK(cudaStreamDestroy(s));
    return 0;
}

static int context_events() {
    CUcontext ctx = nullptr;
    DRV(cuCtxGetCurrent(&ctx));
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    CUcontext of_stream = nullptr;
    DRV(cuStreamGetCtx((CUstream)s, &of_stream));
    const int n = 1024;
    int* a = nullptr;
    CHECK(cudaMalloc(&a, n * sizeof(int)));
    fill<<<(n + 255) / 256, 256, 0, s>>>(a, n, 1);
    cudaEvent_t e;
    CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    // The context's work so far, recorded; the context then waits for it.
    DRV(cuCtxRecordEvent(ctx, (CUevent)e));
    DRV(cuCtxWaitEvent(ctx, (CUevent)e));
    scale<<<(n + 255) / 256, 256, 0, s>>>(a, n, 5);
    std::vector<int> back(n);
    CHECK(cudaMemcpyAsync(back.data(), a, n * sizeof(int), cudaMemcpyDeviceToHost, s));
    CHECK(cudaStreamSynchronize(s));
    printf("context events: stream's context is current %d, %d %d digest %016llx\n",
           of_stream == ctx, back[0], back[n - 1], digest(back.data(), n * sizeof(int)));
    CHECK(cudaEventDestroy(e));
    CHECK(cudaFree(a));
    CHECK(cudaStreamDestroy(s));
    return 0;
}

int main() {
    CHECK(cudaSetDevice(0));
    CHECK(cudaFree(nullptr));
    if (memsets() || pools() || context_events()) return 1;
    printf("done\n");
    return 0;
}
