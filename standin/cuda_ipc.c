/* The stand-in's inter-process handles, runtime and driver: cudaIpcGetMemHandle of device
 * memory and cudaIpcGetEventHandle of a live event write a 64-byte handle naming this
 * process and the address; nothing here opens one (no other process shares the stand-in's
 * device). */
#include <cuda.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "cuda_internal.h"

/* The handle: "hrr-ipc", the process, the address. */
static void handle(void* out, const void* at) {
    unsigned char h[64] = "hrr-ipc";
    int64_t pid = getpid();
    uint64_t a = (uint64_t)(uintptr_t)at;
    memcpy(h + 8, &pid, 8);
    memcpy(h + 16, &a, 8);
    memcpy(out, h, sizeof h);
}
static int mem_handle(void* out, const void* p) {
    enum si_mem kind;
    size_t left;
    if (!out || !si_lookup(p, &kind, &left) || kind != SI_DEVICE) return SI_INVALID_VALUE;
    handle(out, p);
    return 0;
}
static int event_handle(void* out, const void* e) {
    if (!out) return SI_INVALID_VALUE;
    if (!si_event_of(e)) return SI_INVALID_HANDLE;
    handle(out, e);
    return 0;
}

cudaError_t cudaIpcGetMemHandle(cudaIpcMemHandle_t* h, void* p) { ENTER; RET(mem_handle(h, p)); }
cudaError_t cudaIpcGetEventHandle(cudaIpcEventHandle_t* h, cudaEvent_t e) { ENTER; RET(event_handle(h, e)); }
CUresult cuIpcGetMemHandle(CUipcMemHandle* h, CUdeviceptr p) {
    si_lock();
    int r = mem_handle(h, (const void*)(uintptr_t)p);
    si_unlock();
    return r == SI_INVALID_VALUE ? CUDA_ERROR_INVALID_VALUE : (CUresult)r;
}
CUresult cuIpcGetEventHandle(CUipcEventHandle* h, CUevent e) {
    si_lock();
    int r = event_handle(h, e);
    si_unlock();
    return r == SI_INVALID_HANDLE ? CUDA_ERROR_INVALID_HANDLE : r ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}
