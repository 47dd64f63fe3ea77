// library_module_launch's library, in the shape of rocBLAS, hipBLASLt and MIOpen: a second
// shared library that loads a code object of its own from a file (HRR_MODULE_FILE, as
// rocBLAS loads its .co files) and launches its kernel through the module API
// (hipModuleLoadData / hipModuleGetFunction / hipModuleLaunchKernel; under CUDA the
// driver's cuModuleLoadData / cuModuleGetFunction / cuLaunchKernel, bound by name from
// libcuda.so.1). The program never sees the kernel or the module.
#define HRR_DRIVER_API
#include "../common/hrr_gpu.h"

#include <fstream>
#include <iterator>
#include <vector>

extern "C" int case_library_scale_add(float* out, const float* in, float a, unsigned n) {
    const char* file = std::getenv("HRR_MODULE_FILE");
    if (!file) {
        std::fprintf(stderr, "library_module_launch: set HRR_MODULE_FILE (module.hip's code object)\n");
        return 2;
    }
    std::ifstream f(file, std::ios::binary);
    std::vector<char> image((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (image.empty()) {
        std::fprintf(stderr, "library_module_launch: cannot read %s\n", file);
        return 2;
    }
    hipModule_t module;
    hipFunction_t fn;
    CHECK_DRV(hipModuleLoadData(&module, image.data()));
    CHECK_DRV(hipModuleGetFunction(&fn, module, "scale_add"));
    void* params[] = {&out, &in, &a, &n};
    CHECK_DRV(hipModuleLaunchKernel(fn, (n + 127) / 128, 1, 1, 128, 1, 1, 0, nullptr, params, nullptr));
    return 0;
}
