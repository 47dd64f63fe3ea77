// A program that takes driver functions from the shared runtime
// (cudaGetDriverEntryPointByVersion, as PyTorch does for its expandable segments' virtual
// memory calls), allocates and frees through them; prints "entry points ok".
#include <stdio.h>
#include <stddef.h>

typedef unsigned long long CUdeviceptr;
int cudaGetDriverEntryPointByVersion(const char* name, void** pfn, unsigned version,
                                     unsigned long long flags, int* status);

int main(void) {
    void *alloc = 0, *mfree = 0;
    int status = -1;
    if (cudaGetDriverEntryPointByVersion("cuMemAlloc", &alloc, 13000, 0, &status) || status ||
        cudaGetDriverEntryPointByVersion("cuMemFree", &mfree, 13000, 0, &status) || status)
        return 2;
    CUdeviceptr d = 0;
    int rc = ((int (*)(CUdeviceptr*, size_t))alloc)(&d, 4096);
    rc |= ((int (*)(CUdeviceptr))mfree)(d);
    printf("%s\n", rc == 0 && d != 0 ? "entry points ok" : "entry points FAILED");
    return rc != 0;
}
