// module_launch: a kernel the program loads itself, from memory, through the module API
// (cuModuleLoadData / cuModuleGetFunction / cuLaunchKernel under CUDA; hipModuleLoadData /
// hipModuleGetFunction / hipModuleLaunchKernel under HIP), as JIT-compiling frameworks
// do. The code object is module.hip, which the harness compiles for the family's targets
// and names in HRR_MODULE_FILE (an offload bundle for AMD, a fat binary for NVIDIA).
// Under CUDA the same kernel is also loaded as PTX text embedded here, which the driver
// compiles at load time; the driver functions are looked up by name in the global
// scope, as a program linked with -lcuda binds them.
#include "../common/hrr_gpu.h"

#include <dlfcn.h>
#include <fstream>
#include <iterator>
#include <vector>

// The file HRR_MODULE_FILE names, whole.
static std::vector<char> module_file() {
    const char* file = std::getenv("HRR_MODULE_FILE");
    if (!file) {
        std::fprintf(stderr, "module_launch: set HRR_MODULE_FILE to a code object with scale_add (module.hip)\n");
        std::exit(2);
    }
    std::ifstream f(file, std::ios::binary);
    std::vector<char> image((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (image.empty()) {
        std::fprintf(stderr, "module_launch: cannot read %s\n", file);
        std::exit(2);
    }
    return image;
}

#if !defined(__HIPCC__) && !defined(__HIP_PLATFORM_AMD__)
static const char* kPtx = R"PTX(
.version 7.0
.target sm_50
.address_size 64
.visible .entry scale_add(.param .u64 out, .param .u64 in, .param .f32 a, .param .u32 n)
{
    .reg .pred %p;
    .reg .b32 %r<6>;
    .reg .f32 %f<4>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [out];
    ld.param.u64 %rd2, [in];
    ld.param.f32 %f1, [a];
    ld.param.u32 %r1, [n];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.s32 %r5, %r2, %r3, %r4;
    setp.ge.u32 %p, %r5, %r1;
    @%p bra DONE;
    cvta.to.global.u64 %rd3, %rd1;
    cvta.to.global.u64 %rd4, %rd2;
    mul.wide.u32 %rd5, %r5, 4;
    add.s64 %rd6, %rd4, %rd5;
    ld.global.f32 %f2, [%rd6];
    fma.rn.f32 %f3, %f2, %f1, 0f3F800000;
    add.s64 %rd7, %rd3, %rd5;
    st.global.f32 [%rd7], %f3;
DONE:
    ret;
}
)PTX";
typedef int (*LoadData)(void**, const void*);
typedef int (*GetFunction)(void**, void*, const char*);
typedef int (*Launch)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*, void**, void**);
#endif

int main() {
    const unsigned n = 10000;
    std::vector<float> in(n), out(n), want(n);
    for (unsigned i = 0; i < n; ++i) {
        in[i] = (float)(i % 101) * 0.5f;
        want[i] = in[i] * 3.0f + 1.0f;
    }
    float *din, *dout;
    CHECK(hipMalloc((void**)&din, n * sizeof(float)));
    CHECK(hipMalloc((void**)&dout, n * sizeof(float)));
    CHECK(hipMemcpy(din, in.data(), n * sizeof(float), hipMemcpyHostToDevice));
    float a = 3.0f;
    unsigned count = n;
    void* params[] = {&dout, &din, &a, &count};
    std::vector<char> image = module_file();
#if defined(__HIPCC__) || defined(__HIP_PLATFORM_AMD__)
    hipModule_t module;
    hipFunction_t fn;
    CHECK(hipModuleLoadData(&module, image.data()));
    CHECK(hipModuleGetFunction(&fn, module, "scale_add"));
    CHECK(hipModuleLaunchKernel(fn, (n + 127) / 128, 1, 1, 128, 1, 1, 0, nullptr, params, nullptr));
#else
    // The runtime loads the driver; make its symbols global, then bind them by name.
    CHECK(cudaFree(0));
    if (!dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL)) { std::fprintf(stderr, "%s\n", dlerror()); return 2; }
    LoadData load = (LoadData)dlsym(RTLD_DEFAULT, "cuModuleLoadData");
    GetFunction get = (GetFunction)dlsym(RTLD_DEFAULT, "cuModuleGetFunction");
    Launch launch = (Launch)dlsym(RTLD_DEFAULT, "cuLaunchKernel");
    if (!load || !get || !launch) { std::fprintf(stderr, "driver functions not found\n"); return 2; }
    void* module = nullptr;
    void* fn = nullptr;
    int r = load(&module, kPtx);
    if (r != 0) { std::fprintf(stderr, "cuModuleLoadData: %d\n", r); return 2; }
    r = get(&fn, module, "scale_add");
    if (r != 0) { std::fprintf(stderr, "cuModuleGetFunction: %d\n", r); return 2; }
    r = launch(fn, (n + 127) / 128, 1, 1, 128, 1, 1, 0, nullptr, params, nullptr);
    if (r != 0) { std::fprintf(stderr, "cuLaunchKernel: %d\n", r); return 2; }
    CHECK(hipMemcpy(out.data(), dout, n * sizeof(float), hipMemcpyDeviceToHost));
    expect_equal("scale_add (PTX)", out.data(), want.data(), n);
    // The fat binary: loaded without JIT, from the image the harness built.
    CHECK(hipMemset(dout, 0, n * sizeof(float)));
    void* fat_module = nullptr;
    r = load(&fat_module, image.data());
    if (r != 0) { std::fprintf(stderr, "cuModuleLoadData (fat binary): %d\n", r); return 2; }
    r = get(&fn, fat_module, "scale_add");
    if (r != 0) { std::fprintf(stderr, "cuModuleGetFunction (fat binary): %d\n", r); return 2; }
    r = launch(fn, (n + 127) / 128, 1, 1, 128, 1, 1, 0, nullptr, params, nullptr);
    if (r != 0) { std::fprintf(stderr, "cuLaunchKernel (fat binary): %d\n", r); return 2; }
#endif
    CHECK(hipMemcpy(out.data(), dout, n * sizeof(float), hipMemcpyDeviceToHost));
    expect_equal("scale_add", out.data(), want.data(), n);
    CHECK(hipFree(din));
    CHECK(hipFree(dout));
    std::printf("module_launch: ok\n");
    return 0;
}
