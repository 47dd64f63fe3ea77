// A program that uses the driver it links (cuInit: recorded) and also loads a second
// copy of the driver into a link-map namespace of its own (dlmopen, argv[1]), where it
// allocates and frees through functions found with dlsym on that copy. Capture is not
// in that namespace: the program must work as without capture, and its archive must be
// refused by name. Prints "dlmopen ok".
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

typedef unsigned long long CUdeviceptr;
int cuInit(unsigned flags);

int main(int argc, char** argv) {
    if (argc < 2 || cuInit(0) != 0) return 2;
    void* h = dlmopen(LM_ID_NEWLM, argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!h) { printf("dlmopen: %s\n", dlerror()); return 3; }
    int (*alloc)(CUdeviceptr*, size_t) = (int (*)(CUdeviceptr*, size_t))dlsym(h, "cuMemAlloc_v2");
    int (*mfree)(CUdeviceptr) = (int (*)(CUdeviceptr))dlsym(h, "cuMemFree_v2");
    if (!alloc || !mfree) return 4;
    CUdeviceptr d = 0;
    int rc = alloc(&d, 4096);
    rc |= mfree(d);
    printf("%s\n", rc == 0 && d != 0 ? "dlmopen ok" : "dlmopen FAILED");
    return rc != 0;
}
