// A program built with -cudart shared: its own kernel registers through the shared
// runtime; it loads the library named by argv[1] (if any) beside a copy round trip.
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
__global__ void touch(int* x) { x[0] = 1; }
int main(int argc, char** argv) {
    void* lib = argc > 1 ? dlopen(argv[1], RTLD_LAZY) : 0;
    if (argc > 1 && !lib) { printf("dlopen failed: %s\n", dlerror()); return 2; }
    if (lib && !dlsym(lib, "lib_scale")) { printf("no lib_scale\n"); return 2; }
    char host[16], back[16];
    for (int i = 0; i < 16; ++i) host[i] = (char)(3 * i);
    void* dev = 0;
    int fails = cudaMalloc(&dev, 16) != 0;
    fails += cudaMemcpy(dev, host, 16, cudaMemcpyHostToDevice) != 0;
    fails += cudaMemcpy(back, dev, 16, cudaMemcpyDeviceToHost) != 0;
    fails += memcmp(host, back, 16) != 0;
    printf("loaded %d fails %d\n", lib != 0, fails);
    return fails != 0;
}
