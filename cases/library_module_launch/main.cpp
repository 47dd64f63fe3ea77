// library_module_launch: the program hands two buffers to a second shared library
// (HRR_CASE_LIBRARY, built from library.cpp), which loads its own code object and launches
// through the module API, as rocBLAS-shaped libraries do; the program copies the result
// back. On AMD these libraries launch through libamdhip64's exported functions, which
// capture interposes by name; under CUDA the library binds the driver's functions by name
// (dlsym), where capture hands out its own. The archive holds the library's module load
// and launch, and replays with the copy checked.
#include "../common/hrr_gpu.h"

#include <dlfcn.h>

#include <vector>

int main() {
    const char* path = std::getenv("HRR_CASE_LIBRARY");
    if (!path) {
        std::fprintf(stderr, "library_module_launch: set HRR_CASE_LIBRARY to the library built from library.cpp\n");
        return 2;
    }
    void* lib = dlopen(path, RTLD_NOW);
    if (!lib) {
        std::fprintf(stderr, "library_module_launch: %s\n", dlerror());
        return 2;
    }
    typedef int (*ScaleAdd)(float*, const float*, float, unsigned);
    ScaleAdd scale_add = (ScaleAdd)dlsym(lib, "case_library_scale_add");
    if (!scale_add) {
        std::fprintf(stderr, "library_module_launch: no case_library_scale_add in %s\n", path);
        return 2;
    }
    const unsigned n = 8192;
    std::vector<float> in(n), out(n), want(n);
    for (unsigned i = 0; i < n; ++i) {
        in[i] = (float)(i % 97) * 0.25f;
        want[i] = in[i] * 2.0f + 1.0f;
    }
    float *din, *dout;
    CHECK(hipMalloc((void**)&din, n * sizeof(float)));
    CHECK(hipMalloc((void**)&dout, n * sizeof(float)));
    CHECK(hipMemcpy(din, in.data(), n * sizeof(float), hipMemcpyHostToDevice));
    CHECK(hipMemset(dout, 0, n * sizeof(float)));
    if (scale_add(dout, din, 2.0f, n) != 0) {
        std::fprintf(stderr, "library_module_launch: the library's launch failed\n");
        return 2;
    }
    CHECK(hipMemcpy(out.data(), dout, n * sizeof(float), hipMemcpyDeviceToHost));
    expect_equal("scale_add through the library", out.data(), want.data(), n);
    CHECK(hipFree(din));
    CHECK(hipFree(dout));
    std::printf("library_module_launch: ok\n");
    return 0;
}
