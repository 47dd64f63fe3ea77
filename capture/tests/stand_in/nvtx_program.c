// A program with work before, inside and after an NVTX range named "step"
// (tests/range.rs), against the stand-in runtime. argv[1]: rounds; argv[2]: how the range
// is marked: "push" (nvtxRangePushA inside an enclosing "outer" range, an "inner" one
// nested), "start" (nvtxRangeStartA/End), "domain" (a domain's push with a registered
// message). Each push and pop's return value is printed: without a tool NVTX returns -2
// (NVTX_NO_PUSH_POP_TRACKING), and capture must return the same.
#include <stdio.h>
#include <stddef.h>
#include <string.h>

#include <nvtx3/nvToolsExt.h>

int cudaMalloc(void** p, size_t n);
int cudaFree(void* p);
int cudaMemcpy(void* dst, const void* src, size_t n, int kind);
int cudaMemset(void* p, int v, size_t n);
int cudaDeviceSynchronize(void);

int main(int argc, char** argv) {
    int ranges = argc > 1 ? argv[1][0] - '0' : 1;
    const char* how = argc > 2 ? argv[2] : "push";
    int* d = NULL;
    int h[1024], out[1024];
    int rets[4] = {0, 0, 0, 0};
    for (int i = 0; i < 1024; ++i) h[i] = i * 3 + 1;
    if (cudaMalloc((void**)&d, sizeof h)) return 2;
    nvtxDomainHandle_t dom = nvtxDomainCreateA("hrr-test");
    nvtxStringHandle_t step = nvtxDomainRegisterStringA(dom, "step");
    for (int r = 0; r < ranges; ++r) {
        cudaMemcpy(d, h, sizeof h, 1);
        cudaMemset(d, 7, 16 + r);
        cudaDeviceSynchronize();
        rets[0] = nvtxRangePushA("outer");
        if (strcmp(how, "start") == 0) {
            nvtxRangeId_t id = nvtxRangeStartA("step");
            cudaMemcpy(out, d, sizeof out, 2);
            nvtxRangeEnd(id);
        } else if (strcmp(how, "domain") == 0) {
            nvtxEventAttributes_t a;
            memset(&a, 0, sizeof a);
            a.version = NVTX_VERSION;
            a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
            a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
            a.message.registered = step;
            nvtxDomainRangePushEx(dom, &a);
            cudaMemcpy(out, d, sizeof out, 2);
            nvtxDomainRangePop(dom);
        } else {
            rets[1] = nvtxRangePushA("step");
            rets[2] = nvtxRangePushA("inner");
            nvtxRangePop();
            cudaMemcpy(out, d, sizeof out, 2);
            rets[3] = nvtxRangePop();
        }
        nvtxRangePop();
    }
    cudaMemcpy(d, h, sizeof h, 1);
    cudaFree(d);
    printf("first=%d last=%d pushes=%d,%d,%d pop=%d\n", out[0], out[1023], rets[0], rets[1],
           rets[2], rets[3]);
    return 0;
}
