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
#define hipGetLastError cudaGetLastError
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
// Launch configuration (cases/launch_config).
#define hipFuncSetAttribute cudaFuncSetAttribute
#define hipFuncAttributeMaxDynamicSharedMemorySize cudaFuncAttributeMaxDynamicSharedMemorySize
#define hipFuncSetCacheConfig cudaFuncSetCacheConfig
#define hipFuncCache_t cudaFuncCache
#define hipFuncCachePreferNone cudaFuncCachePreferNone
#define hipFuncCachePreferShared cudaFuncCachePreferShared
#define hipFuncCachePreferL1 cudaFuncCachePreferL1
#define hipDeviceSetCacheConfig cudaDeviceSetCacheConfig
#define hipDeviceGetCacheConfig cudaDeviceGetCacheConfig
#define hipDeviceGetLimit cudaDeviceGetLimit
#define hipLimitMallocHeapSize cudaLimitMallocHeapSize
#define hipLimitPrintfFifoSize cudaLimitPrintfFifoSize
#define hipLaunchCooperativeKernel cudaLaunchCooperativeKernel
// Stream-ordered memory (cases/stream_ordered).
#define hipMallocAsync cudaMallocAsync
#define hipFreeAsync cudaFreeAsync
#define hipMallocFromPoolAsync cudaMallocFromPoolAsync
#define hipMemPool_t cudaMemPool_t
#define hipMemPoolProps cudaMemPoolProps
#define hipMemPoolCreate cudaMemPoolCreate
#define hipMemPoolDestroy cudaMemPoolDestroy
#define hipMemPoolSetAttribute cudaMemPoolSetAttribute
#define hipMemPoolGetAttribute cudaMemPoolGetAttribute
#define hipMemPoolTrimTo cudaMemPoolTrimTo
#define hipDeviceGetDefaultMemPool cudaDeviceGetDefaultMemPool
#define hipDeviceSetMemPool cudaDeviceSetMemPool
#define hipDeviceGetMemPool cudaDeviceGetMemPool
#define hipMemAllocationTypePinned cudaMemAllocationTypePinned
#define hipMemLocationTypeDevice cudaMemLocationTypeDevice
#define hipMemPoolReuseAllowOpportunistic cudaMemPoolReuseAllowOpportunistic
#define hipMemPoolAttrReleaseThreshold cudaMemPoolAttrReleaseThreshold
#define hipMemPoolAttrUsedMemCurrent cudaMemPoolAttrUsedMemCurrent
#define hipGraph_t cudaGraph_t
#define hipGraphExec_t cudaGraphExec_t
#define hipStreamCaptureMode cudaStreamCaptureMode
#define hipStreamCaptureModeGlobal cudaStreamCaptureModeGlobal
#define hipStreamCaptureModeThreadLocal cudaStreamCaptureModeThreadLocal
#define hipStreamCaptureModeRelaxed cudaStreamCaptureModeRelaxed
#define hipStreamCaptureStatus cudaStreamCaptureStatus
#define hipStreamCaptureStatusNone cudaStreamCaptureStatusNone
#define hipStreamCaptureStatusActive cudaStreamCaptureStatusActive
// Arrays, textures and surfaces (cases/texture_surface).
#define hipArray_t cudaArray_t
#define hipMipmappedArray_t cudaMipmappedArray_t
#define hipChannelFormatDesc cudaChannelFormatDesc
#define hipCreateChannelDesc cudaCreateChannelDesc
#define hipMallocArray cudaMallocArray
#define hipMalloc3DArray cudaMalloc3DArray
#define hipMallocMipmappedArray cudaMallocMipmappedArray
#define hipGetMipmappedArrayLevel cudaGetMipmappedArrayLevel
#define hipFreeArray cudaFreeArray
#define hipFreeMipmappedArray cudaFreeMipmappedArray
#define hipArrayDefault cudaArrayDefault
#define hipArraySurfaceLoadStore cudaArraySurfaceLoadStore
#define hipMemcpy2DToArray cudaMemcpy2DToArray
#define hipMemcpy2DToArrayAsync cudaMemcpy2DToArrayAsync
#define hipMemcpy2DFromArray cudaMemcpy2DFromArray
#define hipMemcpy2DFromArrayAsync cudaMemcpy2DFromArrayAsync
#define hipMemcpyToArray cudaMemcpyToArray
#define hipMemcpyFromArray cudaMemcpyFromArray
#define hipResourceDesc cudaResourceDesc
#define hipResourceTypeArray cudaResourceTypeArray
#define hipResourceTypePitch2D cudaResourceTypePitch2D
#define hipTextureDesc cudaTextureDesc
#define hipTextureObject_t cudaTextureObject_t
#define hipSurfaceObject_t cudaSurfaceObject_t
#define hipCreateTextureObject cudaCreateTextureObject
#define hipDestroyTextureObject cudaDestroyTextureObject
#define hipCreateSurfaceObject cudaCreateSurfaceObject
#define hipDestroySurfaceObject cudaDestroySurfaceObject
#define hipGetTextureObjectResourceDesc cudaGetTextureObjectResourceDesc
#define hipAddressModeClamp cudaAddressModeClamp
#define hipFilterModePoint cudaFilterModePoint
#define hipReadModeElementType cudaReadModeElementType
#define hipStreamBeginCapture cudaStreamBeginCapture
#define hipStreamEndCapture cudaStreamEndCapture
#define hipStreamIsCapturing cudaStreamIsCapturing
#define hipThreadExchangeStreamCaptureMode cudaThreadExchangeStreamCaptureMode
#define hipDestroyExternalMemory cudaDestroyExternalMemory
#define hipGraphInstantiateWithFlags cudaGraphInstantiateWithFlags
#define hipGraphLaunch cudaGraphLaunch
#define hipGraphExecDestroy cudaGraphExecDestroy
#define hipGraphDestroy cudaGraphDestroy
#define hipGraphNode_t cudaGraphNode_t
#define hipGraphCreate cudaGraphCreate
#define hipGraphAddEmptyNode cudaGraphAddEmptyNode
#define hipGraphAddMemcpyNode1D cudaGraphAddMemcpyNode1D
#define hipGraphAddChildGraphNode cudaGraphAddChildGraphNode
#define hipGraphAddEventRecordNode cudaGraphAddEventRecordNode
#define hipGraphAddEventWaitNode cudaGraphAddEventWaitNode
#define hipGraphAddMemsetNode cudaGraphAddMemsetNode
#define hipMemsetParams cudaMemsetParams
#define hipKernelNodeParams cudaKernelNodeParams
#define hipGraphAddKernelNode cudaGraphAddKernelNode
#define hipGraphKernelNodeSetParams cudaGraphKernelNodeSetParams
#define hipGraphExecKernelNodeSetParams cudaGraphExecKernelNodeSetParams
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

// The driver API (cases that define HRR_DRIVER_API before including this header): HIP's
// hipModule*/hipCtx*/hipMemcpyHtoD-family names onto the CUDA driver. Under nvcc each
// driver function is bound by the symbol cuda.h binds its name to (cuMemcpyHtoD is
// cuMemcpyHtoD_v2), looked up in the global scope after libcuda.so.1 is loaded there:
// what a program linked with -lcuda calls, without needing libcuda.so at link time.
// DRV(f) is the driver function f, for the calls HIP has no twin of.
#if defined(HRR_DRIVER_API)
#if defined(__HIPCC__) || defined(__HIP_PLATFORM_AMD__)
#define CHECK_DRV(call) CHECK(call)
#else
#include <cuda.h>
#include <dlfcn.h>
static inline void* hrr_driver_symbol(const char* name) {
    static void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    void* f = lib ? dlsym(RTLD_DEFAULT, name) : nullptr;
    if (!f) {
        std::fprintf(stderr, "driver function %s not found\n", name);
        std::exit(2);
    }
    return f;
}
#define DRV(f) HRR_DRV_(f)
#define HRR_DRV_(f) ((decltype(&f))hrr_driver_symbol(#f))
#define CHECK_DRV(call)                                                               \
    do {                                                                              \
        CUresult err_ = (call);                                                       \
        if (err_ != CUDA_SUCCESS) {                                                   \
            std::fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #call, \
                         (int)err_);                                                  \
            std::exit(2);                                                             \
        }                                                                             \
    } while (0)
typedef CUdevice hipDevice_t;
typedef CUcontext hipCtx_t;
typedef CUdeviceptr hipDeviceptr_t;
typedef CUmodule hipModule_t;
typedef CUfunction hipFunction_t;
#define HIP_LAUNCH_PARAM_BUFFER_POINTER CU_LAUNCH_PARAM_BUFFER_POINTER
#define HIP_LAUNCH_PARAM_BUFFER_SIZE CU_LAUNCH_PARAM_BUFFER_SIZE
#define HIP_LAUNCH_PARAM_END CU_LAUNCH_PARAM_END
#define hipInit(...) DRV(cuInit)(__VA_ARGS__)
#define hipDeviceGet(...) DRV(cuDeviceGet)(__VA_ARGS__)
#define hipDevicePrimaryCtxRetain(...) DRV(cuDevicePrimaryCtxRetain)(__VA_ARGS__)
#define hipDevicePrimaryCtxRelease(...) DRV(cuDevicePrimaryCtxRelease)(__VA_ARGS__)
// CUDA 13's cuCtxCreate takes creation parameters (none here) before the flags.
#define hipCtxCreate(ctx, flags, dev) DRV(cuCtxCreate)(ctx, nullptr, flags, dev)
#define hipCtxDestroy(...) DRV(cuCtxDestroy)(__VA_ARGS__)
#define hipCtxSetCurrent(...) DRV(cuCtxSetCurrent)(__VA_ARGS__)
#define hipCtxGetCurrent(...) DRV(cuCtxGetCurrent)(__VA_ARGS__)
#define hipCtxPushCurrent(...) DRV(cuCtxPushCurrent)(__VA_ARGS__)
#define hipCtxPopCurrent(...) DRV(cuCtxPopCurrent)(__VA_ARGS__)
#define hipCtxSynchronize(...) DRV(cuCtxSynchronize)(__VA_ARGS__)
#define hipModuleLoad(...) DRV(cuModuleLoad)(__VA_ARGS__)
#define hipModuleLoadData(...) DRV(cuModuleLoadData)(__VA_ARGS__)
#define hipModuleGetFunction(...) DRV(cuModuleGetFunction)(__VA_ARGS__)
#define hipModuleGetGlobal(...) DRV(cuModuleGetGlobal)(__VA_ARGS__)
#define hipModuleUnload(...) DRV(cuModuleUnload)(__VA_ARGS__)
#define hipModuleLaunchKernel(...) DRV(cuLaunchKernel)(__VA_ARGS__)
#define hipMemAllocPitch(...) DRV(cuMemAllocPitch)(__VA_ARGS__)
#define hipMemAllocHost(...) DRV(cuMemAllocHost)(__VA_ARGS__)
#define hipMemcpyHtoD(...) DRV(cuMemcpyHtoD)(__VA_ARGS__)
#define hipMemcpyDtoH(...) DRV(cuMemcpyDtoH)(__VA_ARGS__)
#define hipMemcpyDtoD(...) DRV(cuMemcpyDtoD)(__VA_ARGS__)
#define hipMemcpyHtoDAsync(...) DRV(cuMemcpyHtoDAsync)(__VA_ARGS__)
#define hipMemcpyDtoHAsync(...) DRV(cuMemcpyDtoHAsync)(__VA_ARGS__)
#define hipMemcpyDtoDAsync(...) DRV(cuMemcpyDtoDAsync)(__VA_ARGS__)
#define hipMemsetD8(...) DRV(cuMemsetD8)(__VA_ARGS__)
#define hipMemsetD16(...) DRV(cuMemsetD16)(__VA_ARGS__)
#define hipMemsetD32(...) DRV(cuMemsetD32)(__VA_ARGS__)
#define hipMemsetD8Async(...) DRV(cuMemsetD8Async)(__VA_ARGS__)
#define hipMemsetD16Async(...) DRV(cuMemsetD16Async)(__VA_ARGS__)
#define hipMemsetD32Async(...) DRV(cuMemsetD32Async)(__VA_ARGS__)
#endif
#endif
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
