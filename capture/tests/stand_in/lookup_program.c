// A program in the shape of nvcc's default build (the static runtime) or of a library such
// as cuBLAS: it links no CUDA library, opens the driver with dlopen (argv[1]), takes
// cuGetProcAddress_v2 with dlsym, and every other driver function from that; one more by
// dlsym directly, and one RTLD_NEXT lookup (which must stay libc's answer). Allocates,
// copies in, sets, copies back, frees; prints "round trip ok" when the bytes came back.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef unsigned long long CUdeviceptr;
typedef int (*gpa_t)(const char*, void**, int, unsigned long long, int*);
static gpa_t gpa;

static void* get(const char* name) {
    void* p = 0;
    int status = -1;
    if (gpa(name, &p, 13000, 0, &status) != 0 || status != 0 || !p) {
        printf("no %s\n", name);
        return 0;
    }
    return p;
}

int main(int argc, char** argv) {
    if (argc < 2) return 2;
    void* h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!h) { printf("dlopen: %s\n", dlerror()); return 2; }
    gpa = (gpa_t)dlsym(h, "cuGetProcAddress_v2");
    if (!gpa) return 3;
    int (*init)(unsigned) = (int (*)(unsigned))get("cuInit");
    int (*alloc)(CUdeviceptr*, size_t) = (int (*)(CUdeviceptr*, size_t))get("cuMemAlloc");
    int (*htod)(CUdeviceptr, const void*, size_t) = (int (*)(CUdeviceptr, const void*, size_t))get("cuMemcpyHtoD");
    int (*dtoh)(void*, CUdeviceptr, size_t) = (int (*)(void*, CUdeviceptr, size_t))get("cuMemcpyDtoH");
    int (*mfree)(CUdeviceptr) = (int (*)(CUdeviceptr))get("cuMemFree");
    int (*memset32)(CUdeviceptr, unsigned, size_t) = (int (*)(CUdeviceptr, unsigned, size_t))dlsym(h, "cuMemsetD32_v2");
    if (!init || !alloc || !htod || !dtoh || !mfree || !memset32) return 4;
    // An interposer chaining to the next definition gets libc's answer, not a substitute.
    if (dlsym(RTLD_NEXT, "strlen") != (void*)strlen) { printf("RTLD_NEXT changed\n"); return 5; }
    unsigned char host[256], back[256];
    for (int i = 0; i < 256; ++i) host[i] = (unsigned char)(7 * i + 1);
    CUdeviceptr d = 0;
    int rc = init(0);
    rc |= alloc(&d, sizeof host);
    rc |= htod(d, host, sizeof host);
    rc |= memset32(d + 128, 0x01020304u, 8);
    rc |= dtoh(back, d, sizeof back);
    rc |= mfree(d);
    for (int i = 128; i < 160; i += 4) memcpy(host + i, &(unsigned){0x01020304u}, 4);
    printf("%s\n", rc == 0 && memcmp(host, back, sizeof host) == 0 ? "round trip ok" : "round trip FAILED");
    return rc != 0;
}
