// private_runtime: the program loads a library (HRR_CASE_LIBRARY, built from library.cpp)
// whose GPU code runs through its own static copy of the CUDA runtime, as cuBLAS does, and
// lets it add 7 to a buffer the program then copies back. That runtime reaches the driver
// only through dlsym and cuGetProcAddress; capture hands it its own functions there, so
// the library's module load, launch and synchronisation are recorded at the driver, and
// the archive replays with every copy checked (the `driver_lookup` control removes the
// hand-out: the copy after the library runs then mismatches). Under the stand-in runtime
// the library is loaded but not called (its private runtime would need a real driver).
#include "../common/hrr_gpu.h"

#include <dlfcn.h>

#include <vector>

int main() {
    const char* path = std::getenv("HRR_CASE_LIBRARY");
    if (!path) {
        std::fprintf(stderr, "private_runtime: set HRR_CASE_LIBRARY to the library built from library.cpp\n");
        return 2;
    }
    void* lib = dlopen(path, RTLD_NOW);
    if (!lib) {
        std::fprintf(stderr, "private_runtime: %s\n", dlerror());
        return 2;
    }
    typedef int (*AddSeven)(int*, int);
    AddSeven add_seven = (AddSeven)dlsym(lib, "case_library_add_seven");
    if (!add_seven) {
        std::fprintf(stderr, "private_runtime: no case_library_add_seven in %s\n", path);
        return 2;
    }
    const int n = 4096;
    std::vector<int> host(n), got(n), want(n);
    for (int i = 0; i < n; ++i) host[i] = 5 * i - 3;
    int* d = nullptr;
    CHECK(hipMalloc((void**)&d, n * sizeof(int)));
    CHECK(hipMemcpy(d, host.data(), n * sizeof(int), hipMemcpyHostToDevice));
    CHECK(hipMemcpy(got.data(), d, n * sizeof(int), hipMemcpyDeviceToHost));
    expect_copied("before the library", got.data(), host.data(), n);
    if (hrr_kernels_ran()) {
        if (add_seven(d, n) != 0) {
            std::fprintf(stderr, "private_runtime: the library's launch failed\n");
            return 2;
        }
        CHECK(hipMemcpy(got.data(), d, n * sizeof(int), hipMemcpyDeviceToHost));
        for (int i = 0; i < n; ++i) want[i] = host[i] + 7;
        expect_all("after the library", got.data(), want.data(), n);
    }
    CHECK(hipFree(d));
    std::printf("private_runtime: ok\n");
    return 0;
}
