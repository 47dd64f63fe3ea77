/* A HIP program with work before, inside and after a roctx range named "step"
 * (tests/range.rs), against the stand-in HIP runtime and a stand-in libroctx64.
 * argv[1]: rounds; argv[2]: "push" (roctxRangePushA/Pop inside an enclosing "outer"
 * range) or "start" (roctxRangeStartA/Stop). Prints what roctx returned. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

int hipMalloc(void** p, size_t n);
int hipFree(void* p);
int hipMemcpy(void* dst, const void* src, size_t n, int kind);
int hipMemset(void* p, int v, size_t n);
int hipDeviceSynchronize(void);
int roctxRangePushA(const char* message);
int roctxRangePop(void);
uint64_t roctxRangeStartA(const char* message);
void roctxRangeStop(uint64_t id);

int main(int argc, char** argv) {
    int ranges = argc > 1 ? argv[1][0] - '0' : 1;
    const char* how = argc > 2 ? argv[2] : "push";
    int* d = NULL;
    int h[1024], out[1024];
    int outer = -9, inner = -9, pop = -9;
    uint64_t id = 0;
    for (int i = 0; i < 1024; ++i) h[i] = i * 3 + 1;
    if (hipMalloc((void**)&d, sizeof h)) return 2;
    for (int r = 0; r < ranges; ++r) {
        hipMemcpy(d, h, sizeof h, 1);
        hipMemset(d, 7, 16 + r);
        hipDeviceSynchronize();
        outer = roctxRangePushA("outer");
        if (strcmp(how, "start") == 0) {
            id = roctxRangeStartA("step");
            hipMemcpy(out, d, sizeof out, 2);
            roctxRangeStop(id);
        } else {
            inner = roctxRangePushA("step");
            hipMemcpy(out, d, sizeof out, 2);
            pop = roctxRangePop();
        }
        roctxRangePop();
    }
    hipMemcpy(d, h, sizeof h, 1);
    hipFree(d);
    printf("first=%d last=%d outer=%d inner=%d pop=%d id=%llu\n", out[0], out[1023], outer,
           inner, pop, (unsigned long long)id);
    return 0;
}
