/* What the stand-in CUDA runtime's files (cuda.c, cuda_code.c, cuda_launch.c, cuda_driver.c...) share: the
 * lock-and-return macros, the last error, the device's target. */
#pragma once
#include <cuda_runtime_api.h>

#include "core.h"

extern __thread cudaError_t si_cuda_last_error;
/* The device's target: $HRR_STAND_IN_ARCH, default sm_90. */
const char* si_cuda_arch(void);
/* Launch attributes (cuda_launch.c): 0 when a GPU would take them for a grid g of blocks b,
 * else the runtime's error; and whether a cooperative grid fits on the device at once. */
int si_cuda_launch_attrs(const cudaLaunchAttribute* a, unsigned n, dim3 g, dim3 b);
int si_cuda_cooperative_fits(dim3 g, dim3 b);
/* The launch (core.h's si_launch) of a kernel handle (a registered stub when stub is set,
 * else a function or CUkernel handle) with grid g, blocks b and these arguments;
 * cudaErrorInvalidDeviceFunction for a kernel not known here (cuda_code.c). */
int si_cuda_kernel_launch(struct si_launch* l, const void* h, int stub, dim3 g, dim3 b, void** args);
/* A broken binary: says what and stops the program. */
void si_cuda_broken(const char* what, const char* detail) __attribute__((noreturn));

/* Set on a thread by its first runtime call: the runtime has made device 0's primary
 * context current there, as the real runtime does (cuCtxGetCurrent returns it when the
 * thread pushed no context of its own). */
extern __thread int si_cuda_runtime_bound;
#define ENTER (si_lock(), si_cuda_runtime_bound = 1)
#define RET(expr)                                         \
    do {                                                  \
        cudaError_t r_ = si_sticky ? (cudaError_t)si_sticky : (cudaError_t)(expr); \
        if (si_sticky) r_ = (cudaError_t)si_sticky;       \
        if (r_ != cudaSuccess) si_cuda_last_error = r_;   \
        si_unlock();                                      \
        return r_;                                        \
    } while (0)
/* A batch of count copies (cuda_batch.c): 0 when its n attributes (attr_size bytes each,
 * the source access order first) and their first-copy indices idxs are well formed, else
 * SI_INVALID_VALUE. */
int si_batch_check(size_t count, const void* attrs, size_t attr_size, const size_t* idxs, size_t n);
/* cudaMemcpy3DAsync's copy, the lock held by the caller (cuda.c). */
int si_cuda_copy3d_async(const struct cudaMemcpy3DParms* p, cudaStream_t s);
/* A 3D batch of n operations (cudaMemcpy3DBatchOp, the driver's struct alike) on stream st,
 * checked and copied in order, the lock held by the caller (cuda_batch.c). */
int si_cuda_batch3d(size_t n, const struct cudaMemcpy3DBatchOp* ops, unsigned long long flags, cudaStream_t st);
