/* Parsing the device code a program hands the stand-in runtimes: clang offload bundles
 * and AMDGPU ELF code objects (standin/amdgpu.c), CUDA fat binaries and cubins
 * (standin/cubin.c). A code object is validated before it is used, and what it holds is
 * listed: its kernels (with their argument layout where the format records it) and its
 * global variables (with their initial bytes). */
#pragma once
#include <stddef.h>
#include <stdint.h>

#define SI_MAX_PARAMS 256

struct si_kernel {
    char* name;
    uint32_t kernarg_size;   /* AMDGPU: from the kernel descriptor; CUDA: parameter bytes */
    int nparams;             /* CUDA: from .nv.info; AMDGPU: 0 (the metadata note has them) */
    uint32_t param_offset[SI_MAX_PARAMS], param_size[SI_MAX_PARAMS];
};
struct si_global {
    char* name;
    size_t size;
    const unsigned char* init; /* initial bytes inside the image, or null: zeros */
};
struct si_image {
    char arch[32]; /* "gfx90a", "sm_90" */
    struct si_kernel* kernels;
    size_t nkernels;
    struct si_global* globals;
    size_t nglobals;
};

/* Parses one AMDGPU ELF code object of `n` bytes; on failure returns an error text. */
const char* si_amdgpu_elf(const unsigned char* p, size_t n, struct si_image* out);
/* Chooses the entry for `arch` from an offload bundle (or takes a bare ELF) and parses it.
 * Every AMDGPU entry of a bundle is validated (ELF header, its machine agreeing with its
 * triple). `*size` receives the image's extent when the caller does not know it (0). */
const char* si_amdgpu_image(const unsigned char* p, size_t n, const char* arch,
                            struct si_image* out, int* no_entry_for_arch);
/* The gfx name of an AMDGPU ELF machine number (e_flags & 0xff), or null. */
const char* si_amdgpu_mach_name(unsigned mach);
/* CUDA: the cubin for `arch` (sm_NN) in a fat binary, or a bare cubin. */
const char* si_cuda_image(const unsigned char* p, size_t n, const char* arch,
                          struct si_image* out, int* no_entry_for_arch);

const struct si_kernel* si_image_kernel(const struct si_image* im, const char* name);
const struct si_global* si_image_global(const struct si_image* im, const char* name);
void si_image_free(struct si_image* im);
/* Kernels and globals from an ELF's symbol table (amdgpu: kernels are `NAME.kd`
 * descriptors; otherwise global functions of executable sections, as in a cubin). */
const char* si_elf_symbols(const unsigned char* p, size_t n, struct si_image* out, int amdgpu);
/* CUDA: one cubin (ELF, EM_CUDA) with its kernels' parameters from .nv.info; PTX text with
 * its .entry parameter lists. */
const char* si_cuda_cubin(const unsigned char* p, size_t n, struct si_image* out);
const char* si_cuda_ptx(const char* text, size_t n, struct si_image* out);
