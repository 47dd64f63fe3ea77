// driver_api: a vector add the cuda-samples way (vectorAddDrv), through the driver API
// (HIP: its hipModule*/hipCtx*/hipMemcpyHtoD twins): initialisation and contexts
// (primary and created, push/pop, set/get current), the kernel's module loaded from its
// file and from memory, driver allocations (linear, pitched, pinned, mapped, registered),
// H2D/D2H/D2D copies synchronous and on streams, memsets of 8/16/32 bits, a launch with
// kernelParams and one with `extra`'s parameter buffer, streams and events, a module's
// global. Under CUDA also 2D and 3D copies by the driver's structs, 2D memsets, a fat
// binary load, the library API (cuLibraryLoadData/LoadFromFile, a CUkernel launched
// directly and through cuKernelGetFunction with cuLaunchKernelEx). One runtime call
// (hipMalloc) sits among the driver calls: each call is one event. Every result is
// checked here, so a native run proves what replay must reproduce.
#define HRR_DRIVER_API
#include <cstddef>
#include "../common/hrr_gpu.h"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <algorithm>
#include <vector>

static const char* module_path() {
    const char* file = std::getenv("HRR_MODULE_FILE");
    if (!file) {
        std::fprintf(stderr, "driver_api: set HRR_MODULE_FILE to a code object with vec_add (module.hip)\n");
        std::exit(2);
    }
    return file;
}

static std::vector<char> read_file(const char* path) {
    std::ifstream f(path, std::ios::binary);
    std::vector<char> image((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (image.empty()) {
        std::fprintf(stderr, "driver_api: cannot read %s\n", path);
        std::exit(2);
    }
    return image;
}

static void fail(const char* what) {
    std::fprintf(stderr, "driver_api: %s\n", what);
    std::exit(1);
}

// hipDeviceptr_t is a pointer under HIP and an integer under CUDA.
static hipDeviceptr_t at_offset(hipDeviceptr_t p, size_t bytes) {
#if defined(__HIPCC__) || defined(__HIP_PLATFORM_AMD__)
    return (hipDeviceptr_t)((char*)p + bytes);
#else
    return p + bytes;
#endif
}

static const int n = 4096;
static const size_t bytes = n * sizeof(float);
static const unsigned threads = 256;
static const unsigned blocks = (n + threads - 1) / threads;

// want[i] = a[i] + b[i] + bias, in the kernel's order (exact in float for these values).
static std::vector<float> sum(const std::vector<float>& a, const std::vector<float>& b, float bias) {
    std::vector<float> w(n);
    for (int i = 0; i < n; ++i) w[i] = a[i] + b[i] + bias;
    return w;
}

// A device buffer of `bytes`: cuMemAlloc under CUDA (hipMalloc is HIP's twin).
static hipDeviceptr_t device_alloc() {
    hipDeviceptr_t p;
#if defined(__HIPCC__) || defined(__HIP_PLATFORM_AMD__)
    CHECK(hipMalloc(&p, bytes));
#else
    CHECK_DRV(DRV(cuMemAlloc)(&p, bytes));
#endif
    return p;
}

static void device_free(hipDeviceptr_t p) {
#if defined(__HIPCC__) || defined(__HIP_PLATFORM_AMD__)
    CHECK(hipFree(p));
#else
    CHECK_DRV(DRV(cuMemFree)(p));
#endif
}

// Reads `count` bytes back and compares them with `want`.
static void expect_bytes(const char* what, hipDeviceptr_t src, const void* want, size_t count) {
    std::vector<unsigned char> got(count);
    CHECK_DRV(hipMemcpyDtoH(got.data(), src, count));
    if (std::memcmp(got.data(), want, count) != 0) fail(what);
}

#if !defined(__HIPCC__) && !defined(__HIP_PLATFORM_AMD__)
// 2D and 3D copies by the driver's structs, and 2D memsets, on a pitched allocation of
// H rows of W 32-bit words; `model` is what the allocation holds, row by row.
static void pitched_copies(CUstream s) {
    const size_t W = 64, H = 32, row = W * 4;
    CUdeviceptr dp;
    size_t pitch;
    CHECK_DRV(DRV(cuMemAllocPitch)(&dp, &pitch, row, H, 4));
    std::vector<uint32_t> model(W * H);
    for (size_t i = 0; i < model.size(); ++i) model[i] = (uint32_t)(i * 2654435761u);
    CUDA_MEMCPY2D up = {};
    up.srcMemoryType = CU_MEMORYTYPE_HOST;
    up.srcHost = model.data();
    up.srcPitch = row;
    up.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    up.dstDevice = dp;
    up.dstPitch = pitch;
    up.WidthInBytes = row;
    up.Height = H;
    CHECK_DRV(DRV(cuMemcpy2D)(&up));
    // Row 0 bytes 0x11, row 1 half-words 0x2233, a 8x4 block of words from (4, 2), then
    // the same three on the stream one row further down each.
    CHECK_DRV(DRV(cuMemsetD2D8)(dp, pitch, 0x11, row, 1));
    CHECK_DRV(DRV(cuMemsetD2D16)(dp + pitch, pitch, 0x2233, W * 2, 1));
    CHECK_DRV(DRV(cuMemsetD2D32)(dp + 2 * pitch + 16, pitch, 0xCAFEF00Du, 8, 4));
    CHECK_DRV(DRV(cuMemsetD2D8Async)(dp + 6 * pitch, pitch, 0x44, row, 1, s));
    CHECK_DRV(DRV(cuMemsetD2D16Async)(dp + 7 * pitch, pitch, 0x5566, W * 2, 1, s));
    CHECK_DRV(DRV(cuMemsetD2D32Async)(dp + 8 * pitch + 16, pitch, 0x0BADBEEFu, 8, 4, s));
    CHECK_DRV(DRV(cuStreamSynchronize)(s));
    for (size_t x = 0; x < W; ++x) {
        model[x] = 0x11111111u;
        model[W + x] = 0x22332233u;
        model[6 * W + x] = 0x44444444u;
        model[7 * W + x] = 0x55665566u;
    }
    for (size_t y = 0; y < 4; ++y)
        for (size_t x = 4; x < 12; ++x) {
            model[(2 + y) * W + x] = 0xCAFEF00Du;
            model[(8 + y) * W + x] = 0x0BADBEEFu;
        }
    // Down: a 20x24 window from (4, 1) into a host buffer of pitch W words, on the stream.
    std::vector<uint32_t> got(W * 24, 0), want(W * 24, 0);
    CUDA_MEMCPY2D down = {};
    down.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    down.srcDevice = dp;
    down.srcPitch = pitch;
    down.srcXInBytes = 16;
    down.srcY = 1;
    down.dstMemoryType = CU_MEMORYTYPE_HOST;
    down.dstHost = got.data();
    down.dstPitch = row;
    down.WidthInBytes = 20 * 4;
    down.Height = 24;
    CHECK_DRV(DRV(cuMemcpy2DAsync)(&down, s));
    CHECK_DRV(DRV(cuStreamSynchronize)(s));
    for (size_t y = 0; y < 24; ++y)
        for (size_t x = 0; x < 20; ++x) want[y * W + x] = model[(1 + y) * W + 4 + x];
    if (got != want) fail("cuMemcpy2DAsync window");
    // The same window by the unaligned form, and row 1 by a peer copy within the current
    // context.
    std::fill(got.begin(), got.end(), 0u);
    CHECK_DRV(DRV(cuMemcpy2DUnaligned)(&down));
    if (got != want) fail("cuMemcpy2DUnaligned window");
    CUcontext cur;
    CHECK_DRV(DRV(cuCtxGetCurrent)(&cur));
    CUdeviceptr peer;
    CHECK_DRV(DRV(cuMemAlloc)(&peer, row));
    CHECK_DRV(DRV(cuMemcpyPeer)(peer, cur, dp + pitch, cur, row));
    std::vector<uint32_t> line(W, 0);
    CHECK_DRV(DRV(cuMemcpyDtoH)(line.data(), peer, row));
    for (size_t x = 0; x < W; ++x)
        if (line[x] != model[W + x]) fail("cuMemcpyPeer row");
    CHECK_DRV(DRV(cuMemFree)(peer));
    // 3D: the whole allocation as 2 slices of 16 rows, to a packed host box.
    std::vector<uint32_t> box(W * H, 0);
    CUDA_MEMCPY3D d3 = {};
    d3.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    d3.srcDevice = dp;
    d3.srcPitch = pitch;
    d3.srcHeight = 16;
    d3.dstMemoryType = CU_MEMORYTYPE_HOST;
    d3.dstHost = box.data();
    d3.dstPitch = row;
    d3.dstHeight = 16;
    d3.WidthInBytes = row;
    d3.Height = 16;
    d3.Depth = 2;
    CHECK_DRV(DRV(cuMemcpy3D)(&d3));
    if (box != model) fail("cuMemcpy3D box");
    // And back up into slice 1 from the host box (rows 16..31 rotated by one word).
    for (size_t i = 16 * W; i < W * H; ++i) box[i] = model[i] + 1;
    CUDA_MEMCPY3D u3 = {};
    u3.srcMemoryType = CU_MEMORYTYPE_HOST;
    u3.srcHost = box.data();
    u3.srcPitch = row;
    u3.srcHeight = 16;
    u3.srcZ = 1;
    u3.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    u3.dstDevice = dp;
    u3.dstPitch = pitch;
    u3.dstHeight = 16;
    u3.dstZ = 1;
    u3.WidthInBytes = row;
    u3.Height = 16;
    u3.Depth = 1;
    CHECK_DRV(DRV(cuMemcpy3DAsync)(&u3, s));
    CHECK_DRV(DRV(cuStreamSynchronize)(s));
    std::vector<uint32_t> last(W);
    CHECK_DRV(hipMemcpyDtoH(last.data(), dp + 31 * pitch, row));
    for (size_t x = 0; x < W; ++x)
        if (last[x] != model[31 * W + x] + 1) fail("cuMemcpy3DAsync slice");
    CHECK_DRV(DRV(cuMemFree)(dp));
}

// The library API CUDA 12+'s lazy loading goes through: a CUkernel launched as it is and
// through the CUfunction cuKernelGetFunction gives (with cuLaunchKernelEx on a stream),
// the library's own vec_bias.
static void library_launches(const std::vector<char>& image, const char* path, CUstream s,
                             CUdeviceptr da, CUdeviceptr db, CUdeviceptr dc,
                             const std::vector<float>& a, const std::vector<float>& b) {
    CUlibrary lib;
    CHECK_DRV(DRV(cuLibraryLoadData)(&lib, image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    CUkernel k;
    CHECK_DRV(DRV(cuLibraryGetKernel)(&k, lib, "vec_add"));
    CUdeviceptr bias_at;
    size_t bias_size = 0;
    CHECK_DRV(DRV(cuLibraryGetGlobal)(&bias_at, &bias_size, lib, "vec_bias"));
    if (bias_size != sizeof(float)) fail("cuLibraryGetGlobal size");
    const float bias = 2.0f;
    CHECK_DRV(hipMemcpyHtoD(bias_at, &bias, sizeof bias));
    int count = n;
    void* params[] = {&da, &db, &dc, &count};
    CHECK_DRV(DRV(cuLaunchKernel)((CUfunction)k, blocks, 1, 1, threads, 1, 1, 0, nullptr, params, nullptr));
    std::vector<float> want = sum(a, b, bias);
    expect_bytes("CUkernel launch", dc, want.data(), bytes);
    CUfunction f;
    CHECK_DRV(DRV(cuKernelGetFunction)(&f, k));
    CHECK_DRV(hipMemsetD32(dc, 0, n));
    CUlaunchConfig cfg = {};
    cfg.gridDimX = blocks;
    cfg.gridDimY = 1;
    cfg.gridDimZ = 1;
    cfg.blockDimX = threads;
    cfg.blockDimY = 1;
    cfg.blockDimZ = 1;
    cfg.hStream = s;
    // A launch attribute (recorded as cudaLaunchKernelExC's are, and replayed).
    CUlaunchAttribute attr[1] = {};
    attr[0].id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
    attr[0].value.priority = 0;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    void* swapped[] = {&db, &da, &dc, &count};
    CHECK_DRV(DRV(cuLaunchKernelEx)(&cfg, f, swapped, nullptr));
    CHECK_DRV(DRV(cuStreamSynchronize)(s));
    std::vector<float> want_swapped = sum(b, a, bias);
    expect_bytes("cuLaunchKernelEx", dc, want_swapped.data(), bytes);
    CUlibrary from_file;
    CHECK_DRV(DRV(cuLibraryLoadFromFile)(&from_file, path, nullptr, nullptr, 0, nullptr, nullptr, 0));
    CHECK_DRV(DRV(cuLibraryUnload)(from_file));
    CHECK_DRV(DRV(cuLibraryUnload)(lib));
    // The same image as a fat binary module: its vec_bias is 0.
    CUmodule fat;
    CHECK_DRV(DRV(cuModuleLoadFatBinary)(&fat, image.data()));
    CUfunction ff;
    CHECK_DRV(hipModuleGetFunction(&ff, fat, "vec_add"));
    CHECK_DRV(hipModuleLaunchKernel(ff, blocks, 1, 1, threads, 1, 1, 0, nullptr, params, nullptr));
    std::vector<float> want_fat = sum(a, b, 0.0f);
    expect_bytes("fat binary module", dc, want_fat.data(), bytes);
    CHECK_DRV(hipModuleUnload(fat));
}
#endif

int main() {
    const char* path = module_path();
    std::vector<char> image = read_file(path);

    // Initialisation, the device, contexts: the work runs in a context of our own.
    CHECK_DRV(hipInit(0));
    hipDevice_t dev;
    CHECK_DRV(hipDeviceGet(&dev, 0));
#if !defined(__HIPCC__) && !defined(__HIP_PLATFORM_AMD__)
    int devices = 0;
    CHECK_DRV(DRV(cuDeviceGetCount)(&devices));
    if (devices < 1) fail("no device");
#endif
    hipCtx_t primary, ctx, current = nullptr, popped = nullptr;
    CHECK_DRV(hipDevicePrimaryCtxRetain(&primary, dev));
    CHECK_DRV(hipCtxCreate(&ctx, 0, dev));
    CHECK_DRV(hipCtxGetCurrent(&current));
    CHECK_DRV(hipCtxPushCurrent(primary));
    CHECK_DRV(hipCtxPopCurrent(&popped));
    CHECK_DRV(hipCtxSetCurrent(ctx));
#if !defined(__HIPCC__) && !defined(__HIP_PLATFORM_AMD__)
    if (current != ctx || popped != primary) fail("context stack");
#endif

    // The module from its file and from memory; each has its own vec_bias.
    hipModule_t from_file, from_memory;
    CHECK_DRV(hipModuleLoad(&from_file, path));
    CHECK_DRV(hipModuleLoadData(&from_memory, image.data()));
    hipFunction_t add_file, add_memory;
    CHECK_DRV(hipModuleGetFunction(&add_file, from_file, "vec_add"));
    CHECK_DRV(hipModuleGetFunction(&add_memory, from_memory, "vec_add"));
    hipDeviceptr_t bias_at;
    size_t bias_size = 0;
    CHECK_DRV(hipModuleGetGlobal(&bias_at, &bias_size, from_file, "vec_bias"));
    if (bias_size != sizeof(float)) fail("hipModuleGetGlobal size");

    std::vector<float> a(n), b(n), c(n);
    for (int i = 0; i < n; ++i) {
        a[i] = (float)(i % 1000) * 0.25f;
        b[i] = (float)(n - i) * 0.5f;
    }
    hipDeviceptr_t da = device_alloc(), db = device_alloc(), dc = device_alloc();
    CHECK_DRV(hipMemcpyHtoD(da, a.data(), bytes));
    CHECK_DRV(hipMemcpyHtoD(db, b.data(), bytes));
    float bias = 0.5f;
    CHECK_DRV(hipMemcpyHtoD(bias_at, &bias, sizeof bias));
    float bias_back = 0;
    CHECK_DRV(hipMemcpyDtoH(&bias_back, bias_at, sizeof bias_back));
    if (bias_back != bias) fail("vec_bias read back");

    // Launch 1: kernelParams, the module from the file (bias 0.5).
    int count = n;
    void* params[] = {&da, &db, &dc, &count};
    CHECK_DRV(hipModuleLaunchKernel(add_file, blocks, 1, 1, threads, 1, 1, 0, nullptr, params, nullptr));
    CHECK_DRV(hipCtxSynchronize());
    CHECK_DRV(hipMemcpyDtoH(c.data(), dc, bytes));
    std::vector<float> want = sum(a, b, bias);
    expect_equal("vec_add (kernelParams)", c.data(), want.data(), n);

    // Launch 2: the arguments in `extra`'s buffer, the module from memory (its vec_bias
    // was never written: 0), into a runtime allocation.
    hipDeviceptr_t dr;
    CHECK(hipMalloc((void**)&dr, bytes));
    struct {
        hipDeviceptr_t a, b, c;
        int n;
    } packed = {db, da, dr, n};
    // The kernel's parameters end with the int: the buffer's size is theirs, not the
    // struct's padded size (the driver refuses a buffer larger than the parameters).
    size_t packed_size = offsetof(decltype(packed), n) + sizeof(int);
    void* extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, &packed, HIP_LAUNCH_PARAM_BUFFER_SIZE, &packed_size,
                     HIP_LAUNCH_PARAM_END};
    CHECK_DRV(hipModuleLaunchKernel(add_memory, blocks, 1, 1, threads, 1, 1, 0, nullptr, nullptr, extra));
    CHECK_DRV(hipCtxSynchronize());
    std::vector<float> want_extra = sum(b, a, 0.0f);
    expect_bytes("vec_add (extra)", dr, want_extra.data(), bytes);

    // Device to device, then memsets of each width, synchronous.
    CHECK_DRV(hipMemcpyDtoD(dc, dr, bytes));
    expect_bytes("hipMemcpyDtoD", dc, want_extra.data(), bytes);
#if !defined(__HIPCC__) && !defined(__HIP_PLATFORM_AMD__)
    // Unified addressing: cuMemcpy finds the direction from where the pointers live.
    std::vector<float> unified(n);
    CHECK_DRV(DRV(cuMemcpy)((CUdeviceptr)(uintptr_t)unified.data(), dc, bytes));
    if (std::memcmp(unified.data(), want_extra.data(), bytes) != 0) fail("cuMemcpy to the host");
#endif
    std::vector<unsigned char> pattern(bytes, 0xAB);
    CHECK_DRV(hipMemsetD8(dc, 0xAB, bytes));
    expect_bytes("hipMemsetD8", dc, pattern.data(), bytes);
    std::vector<uint16_t> halves(n * 2, 0x1234);
    CHECK_DRV(hipMemsetD16(dc, 0x1234, n * 2));
    expect_bytes("hipMemsetD16", dc, halves.data(), bytes);
    std::vector<uint32_t> words(n, 0xDEADBEEFu);
    CHECK_DRV(hipMemsetD32(dc, 0xDEADBEEF, n));
    expect_bytes("hipMemsetD32", dc, words.data(), bytes);

    // Streams and events: H2D, memsets and D2D on one stream, an event another stream
    // waits for, D2H into pinned memory there; the elapsed time between two events.
#if defined(__HIPCC__) || defined(__HIP_PLATFORM_AMD__)
    hipStream_t s, t;
    CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    CHECK(hipStreamCreateWithPriority(&t, hipStreamNonBlocking, 0));
    hipEvent_t start, done;
    CHECK(hipEventCreate(&start));
    CHECK(hipEventCreate(&done));
#define STREAM_WAIT_EVENT(st, ev) CHECK(hipStreamWaitEvent(st, ev, 0))
#define EVENT_RECORD(ev, st) CHECK(hipEventRecord(ev, st))
#define STREAM_SYNC(st) CHECK(hipStreamSynchronize(st))
#else
    CUstream s, t;
    CHECK_DRV(DRV(cuStreamCreate)(&s, CU_STREAM_NON_BLOCKING));
    CHECK_DRV(DRV(cuStreamCreateWithPriority)(&t, CU_STREAM_NON_BLOCKING, 0));
    CUevent start, done;
    CHECK_DRV(DRV(cuEventCreate)(&start, CU_EVENT_DEFAULT));
    CHECK_DRV(DRV(cuEventCreate)(&done, CU_EVENT_DEFAULT));
#define STREAM_WAIT_EVENT(st, ev) CHECK_DRV(DRV(cuStreamWaitEvent)(st, ev, 0))
#define EVENT_RECORD(ev, st) CHECK_DRV(DRV(cuEventRecord)(ev, st))
#define STREAM_SYNC(st) CHECK_DRV(DRV(cuStreamSynchronize)(st))
#endif
    float* pinned;
    CHECK_DRV(hipMemAllocHost((void**)&pinned, bytes));
    EVENT_RECORD(start, s);
    CHECK_DRV(hipMemcpyHtoDAsync(dc, a.data(), bytes, s));
    CHECK_DRV(hipMemsetD8Async(at_offset(dc, 0), 0x3F, 16, s));
    CHECK_DRV(hipMemsetD16Async(at_offset(dc, 16), 0x4040, 8, s));
    CHECK_DRV(hipMemsetD32Async(at_offset(dc, 32), 0x3F800000u, 4, s));
    CHECK_DRV(hipMemcpyDtoDAsync(dr, dc, bytes, s));
    EVENT_RECORD(done, s);
    STREAM_WAIT_EVENT(t, done);
    CHECK_DRV(hipMemcpyDtoHAsync(pinned, dr, bytes, t));
    STREAM_SYNC(t);
    std::vector<float> want_async(a);
    std::memset(want_async.data(), 0x3F, 16);
    for (int i = 0; i < 8; ++i) std::memcpy((char*)want_async.data() + 16 + 2 * i, "\x40\x40", 2);
    for (int i = 8; i < 12; ++i) want_async[i] = 1.0f;
    if (std::memcmp(pinned, want_async.data(), bytes) != 0) fail("stream copies");
#if defined(__HIPCC__) || defined(__HIP_PLATFORM_AMD__)
    CHECK(hipEventSynchronize(done));
    float ms = -1;
    CHECK(hipEventElapsedTime(&ms, start, done));
#else
    CHECK_DRV(DRV(cuEventSynchronize)(done));
    float ms = -1;
    CHECK_DRV(DRV(cuEventElapsedTime)(&ms, start, done));
#endif
    if (!(ms >= 0)) fail("elapsed time");

    // Mapped pinned memory a kernel reads directly, and registered host memory.
    float* mapped;
    hipDeviceptr_t mapped_dev;
#if defined(__HIPCC__) || defined(__HIP_PLATFORM_AMD__)
    CHECK(hipHostMalloc((void**)&mapped, bytes, hipHostMallocMapped));
    CHECK(hipHostGetDevicePointer(&mapped_dev, mapped, 0));
#else
    CHECK_DRV(DRV(cuMemHostAlloc)((void**)&mapped, bytes, CU_MEMHOSTALLOC_DEVICEMAP));
    CHECK_DRV(DRV(cuMemHostGetDevicePointer)(&mapped_dev, mapped, 0));
#endif
    for (int i = 0; i < n; ++i) mapped[i] = (float)(i % 7);
    void* mapped_params[] = {&mapped_dev, &db, &dc, &count};
    CHECK_DRV(hipModuleLaunchKernel(add_file, blocks, 1, 1, threads, 1, 1, 0, nullptr, mapped_params, nullptr));
    CHECK_DRV(hipCtxSynchronize());
    std::vector<float> m(mapped, mapped + n);
    std::vector<float> want_mapped = sum(m, b, bias);
    expect_bytes("kernel reading mapped memory", dc, want_mapped.data(), bytes);
    float* registered = (float*)std::aligned_alloc(4096, bytes);
    for (int i = 0; i < n; ++i) registered[i] = (float)(3 * i);
#if defined(__HIPCC__) || defined(__HIP_PLATFORM_AMD__)
    CHECK(hipHostRegister(registered, bytes, 0));
    CHECK_DRV(hipMemcpyHtoD(dc, registered, bytes));
    CHECK(hipHostUnregister(registered));
#else
    CHECK_DRV(DRV(cuMemHostRegister)(registered, bytes, 0));
    CHECK_DRV(hipMemcpyHtoD(dc, registered, bytes));
    CHECK_DRV(DRV(cuMemHostUnregister)(registered));
#endif
    expect_bytes("copy from registered memory", dc, registered, bytes);

#if !defined(__HIPCC__) && !defined(__HIP_PLATFORM_AMD__)
    pitched_copies(s);
    library_launches(image, path, s, da, db, dc, a, b);
    CHECK_DRV(DRV(cuMemFreeHost)(mapped));
    CHECK_DRV(DRV(cuMemFreeHost)(pinned));
    CHECK_DRV(DRV(cuEventDestroy)(start));
    CHECK_DRV(DRV(cuEventDestroy)(done));
    CHECK_DRV(DRV(cuStreamDestroy)(s));
    CHECK_DRV(DRV(cuStreamDestroy)(t));
#else
    hipDeviceptr_t pitched;
    size_t pitch = 0;
    CHECK_DRV(hipMemAllocPitch(&pitched, &pitch, 256, 8, 4));
    CHECK(hipFree(pitched));
    CHECK(hipHostFree(mapped));
    CHECK(hipHostFree(pinned));
    CHECK(hipEventDestroy(start));
    CHECK(hipEventDestroy(done));
    CHECK(hipStreamDestroy(s));
    CHECK(hipStreamDestroy(t));
#endif
    std::free(registered);
    CHECK(hipFree((void*)dr));
    device_free(da);
    device_free(db);
    device_free(dc);
    CHECK_DRV(hipModuleUnload(from_file));
    CHECK_DRV(hipModuleUnload(from_memory));
    CHECK_DRV(hipCtxSynchronize());
    CHECK_DRV(hipCtxDestroy(ctx));
    CHECK_DRV(hipDevicePrimaryCtxRelease(dev));
    std::printf("driver_api: ok\n");
    return 0;
}
