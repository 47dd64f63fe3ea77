// hrr_gpu.h: the HIP API subset our cases use, mapped onto CUDA when built with nvcc.
// With hipcc this is just <hip/hip_runtime.h>; with nvcc each name becomes the CUDA one.
#pragma once
#if defined(__HIPCC__) || defined(__HIP_PLATFORM_AMD__)
#include <hip/hip_runtime.h>
#define GPU_VENDOR "hip"
#else
#include <cuda_runtime.h>
#define GPU_VENDOR "cuda"
#define hipError_t cudaError_t
#define hipSuccess cudaSuccess
#define hipStream_t cudaStream_t
#define hipEvent_t cudaEvent_t
#define hipGetErrorString cudaGetErrorString
#define hipGetDeviceCount cudaGetDeviceCount
#define hipSetDevice cudaSetDevice
#define hipGetDevice cudaGetDevice
#define hipDeviceSynchronize cudaDeviceSynchronize
#define hipMalloc cudaMalloc
#define hipFree cudaFree
#define hipHostMalloc cudaHostAlloc
#define hipHostMallocDefault cudaHostAllocDefault
#define hipHostFree cudaFreeHost
#define hipMemcpy cudaMemcpy
#define hipMemcpyAsync cudaMemcpyAsync
#define hipMemcpyHostToDevice cudaMemcpyHostToDevice
#define hipMemcpyDeviceToHost cudaMemcpyDeviceToHost
#define hipMemcpyDeviceToDevice cudaMemcpyDeviceToDevice
#define hipMemcpyDefault cudaMemcpyDefault
#define hipMemset cudaMemset
#define hipMemsetAsync cudaMemsetAsync
#define hipStreamCreate cudaStreamCreate
#define hipStreamCreateWithFlags cudaStreamCreateWithFlags
#define hipStreamCreateWithPriority cudaStreamCreateWithPriority
#define hipStreamNonBlocking cudaStreamNonBlocking
#define hipStreamDestroy cudaStreamDestroy
#define hipStreamSynchronize cudaStreamSynchronize
#define hipStreamQuery cudaStreamQuery
#define hipStreamWaitEvent cudaStreamWaitEvent
#define hipEventCreate cudaEventCreate
#define hipEventCreateWithFlags cudaEventCreateWithFlags
#define hipEventDefault cudaEventDefault
#define hipEventRecord cudaEventRecord
#define hipEventSynchronize cudaEventSynchronize
#define hipEventQuery cudaEventQuery
#define hipEventElapsedTime cudaEventElapsedTime
#define hipEventDestroy cudaEventDestroy
#define hipLaunchKernel cudaLaunchKernel
#define hipDeviceProp_t cudaDeviceProp
#define hipGetDeviceProperties cudaGetDeviceProperties
#define hipDeviceReset cudaDeviceReset
#define hipEventDisableTiming cudaEventDisableTiming
#define hipStreamDefault cudaStreamDefault
#define hipLaunchHostFunc cudaLaunchHostFunc
#define hipStreamAddCallback cudaStreamAddCallback
#define hipMallocPitch cudaMallocPitch
#define hipMemcpy2D cudaMemcpy2D
#define hipMemcpy2DAsync cudaMemcpy2DAsync
#define hipMemset2D cudaMemset2D
#define hipMemset2DAsync cudaMemset2DAsync
#define hipHostRegister cudaHostRegister
#define hipHostUnregister cudaHostUnregister
#define hipHostRegisterDefault cudaHostRegisterDefault
#define hipMemcpy3D cudaMemcpy3D
#define hipMemcpy3DAsync cudaMemcpy3DAsync
#define hipMemcpy3DParms cudaMemcpy3DParms
#define make_hipPitchedPtr make_cudaPitchedPtr
#define make_hipExtent make_cudaExtent
#define make_hipPos make_cudaPos
#define hipMemcpyToSymbol cudaMemcpyToSymbol
#define hipMemcpyFromSymbol cudaMemcpyFromSymbol
#define HIP_SYMBOL(x) x
#define hipHostMallocMapped cudaHostAllocMapped
#define hipHostGetDevicePointer cudaHostGetDevicePointer
#define hipMemcpyHostToHost cudaMemcpyHostToHost
#define hipErrorNotReady cudaErrorNotReady
#define hipErrorInvalidDevice cudaErrorInvalidDevice
#define hipErrorOutOfMemory cudaErrorMemoryAllocation
#endif

#include <cstdio>
#include <cstdlib>

// Aborts the case with the failing call and its error, as a person would want to read it.
#define CHECK(call)                                                                   \
    do {                                                                              \
        hipError_t err_ = (call);                                                     \
        if (err_ != hipSuccess) {                                                     \
            std::fprintf(stderr, "%s:%d: %s failed: %d (%s)\n", __FILE__, __LINE__,  \
                         #call, (int)err_, hipGetErrorString(err_));                 \
            std::exit(2);                                                             \
        }                                                                             \
    } while (0)

// Whether this run's kernels really ran. Under the stand-in runtime (HRR_STAND_IN set and
// not "0": standin/, which copies, sets and orders memory but runs no kernel) a check of a
// result a kernel computed would test nothing the stand-in claims, so such checks are
// skipped; checks of what copies and memsets alone produce stay (expect_copied). Every
// case's own check of a kernel's result goes through this one function.
static inline bool hrr_kernels_ran() {
    static const int ran = [] {
        const char* v = std::getenv("HRR_STAND_IN");
        return !(v && *v && !(v[0] == '0' && v[1] == 0));
    }();
    return ran != 0;
}

// A failed check: the case exits 1, so a native run proves the GPU computed the expected
// outputs before capture is involved.
template <typename T>
static inline void expect_all(const char* what, const T* got, const T* want, size_t n) {
    for (size_t i = 0; i < n; ++i) {
        if (!(got[i] == want[i])) {
            std::fprintf(stderr, "%s: element %zu differs\n", what, i);
            std::exit(1);
        }
    }
}

// Compares a result a kernel computed with what the host computed (skipped when no kernel
// ran: hrr_kernels_ran).
template <typename T>
static inline void expect_equal(const char* what, const T* got, const T* want, size_t n) {
    if (hrr_kernels_ran()) expect_all(what, got, want, n);
}

// Compares a result that copies and memsets alone produced: checked on every runtime.
template <typename T>
static inline void expect_copied(const char* what, const T* got, const T* want, size_t n) {
    expect_all(what, got, want, n);
}
