// The test programs' device code, as nvcc's constructors hand it to the runtime: a fat
// binary (header: magic, version 1, header size 16, payload size) holding one PTX entry
// (kind 1, for sm_90), and the wrapper __cudaRegisterFatBinary takes. The stand-in
// (standin/cubin.c) takes a fat binary's PTX where it has no cubin for the device, as the
// driver JIT-compiles it: kernels and their parameters from the `.entry` lists, variables
// from the module-scope `.global` and `.const` declarations.
#pragma once

// A fat binary `var` holding the PTX text `ptx` (a string literal), and `var_wrapper`.
#define HRR_FATBIN(var, ptx)                                                              \
    static const struct {                                                                 \
        unsigned int magic;                                                               \
        unsigned short version, header;                                                   \
        unsigned long long size;                                                          \
        unsigned int entry[16];                                                           \
        char text[sizeof(ptx)];                                                           \
    } var = {0xBA55ED50u, 1, 16, 64 + sizeof(ptx), {1, 64, sizeof(ptx), 0, 0, 0, 0, 90}, ptx}; \
    static struct {                                                                       \
        int magic, version;                                                               \
        const void* data;                                                                 \
        void* unused;                                                                     \
    } var##_wrapper = {0x466243b1, 1, &var, 0}
