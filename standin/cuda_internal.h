/* What the stand-in CUDA runtime's two files (cuda.c, cuda_code.c) share: the
 * lock-and-return macros, the last error, the device's target. */
#pragma once
#include <cuda_runtime_api.h>

#include "core.h"

extern __thread cudaError_t si_cuda_last_error;
/* The device's target: $HRR_STAND_IN_ARCH, default sm_90. */
const char* si_cuda_arch(void);
/* A broken binary: says what and stops the program. */
void si_cuda_broken(const char* what, const char* detail) __attribute__((noreturn));

#define ENTER si_lock()
#define RET(expr)                                         \
    do {                                                  \
        cudaError_t r_ = si_sticky ? (cudaError_t)si_sticky : (cudaError_t)(expr); \
        if (si_sticky) r_ = (cudaError_t)si_sticky;       \
        if (r_ != cudaSuccess) si_cuda_last_error = r_;   \
        si_unlock();                                      \
        return r_;                                        \
    } while (0)
