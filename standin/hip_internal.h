/* What the stand-in HIP runtime's two files (hip.c: device, memory, streams; hip_code.c:
 * code objects, launches, variables) share: the lock-and-return macros, the last error,
 * the device's target. */
#pragma once
#include <hip/hip_runtime_api.h>

#include "core.h"

extern __thread hipError_t si_hip_last_error;
/* The device's target: $HRR_STAND_IN_ARCH, default gfx90a. */
const char* si_hip_arch(void);
/* The version hipRuntimeGetVersion reports: $HRR_STAND_IN_HIP_VERSION ("7.1"), default
 * HIP 5.2's (hip_rocm7.c). */
int si_hip_version(void);
/* A broken binary: says what and stops the program (abort), as the real runtime does when
 * no code object fits the device. */
void si_hip_broken(const char* what, const char* detail) __attribute__((noreturn));

/* Every entry point: take the lock, compute, note a failure as the last error. */
#define ENTER si_lock()
#define RET(expr)                                        \
    do {                                                 \
        hipError_t r_ = si_sticky ? (hipError_t)si_sticky : (hipError_t)(expr); \
        if (si_sticky) r_ = (hipError_t)si_sticky;       \
        if (r_ != hipSuccess) si_hip_last_error = r_;    \
        si_unlock();                                     \
        return r_;                                       \
    } while (0)
