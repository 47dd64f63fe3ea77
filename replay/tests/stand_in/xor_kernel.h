/* The kernel the graph programs of this directory launch: hrr_xor_bytes (xor_ptx.h; the
 * stand-in runs it on the host, a GPU its PTX), its host stub, a fat binary holding its PTX
 * (header: magic, version 1, header size 16, payload size; one uncompressed PTX entry laid
 * out as CUDA 13's `fatbinary --compress=false` writes one: kind 1, an 80-byte header,
 * PTX ISA 8.0, sm_52, flags 0x11, its two unexplained words 64 and 72 kept), the
 * registration a compiler would emit, and the kernel-node parameters CUDA's struct lays
 * out. */
#ifndef HRR_XOR_KERNEL_H
#define HRR_XOR_KERNEL_H

#include "xor_ptx.h"

void **__cudaRegisterFatBinary(void *);
void __cudaRegisterFatBinaryEnd(void **);
void __cudaRegisterFunction(void **, const char *, char *, const char *, int, void *, void *, void *, void *, int *);

struct kernel_params { void *func; unsigned grid[3], block[3], shmem; void **params; void **extra; };

static void xor_kernel(void) {}
#define PTX ".version 8.0\n.target sm_52\n.address_size 64\n" XOR_ENTRY

static struct {
    unsigned magic;
    unsigned short version, hsize;
    unsigned long long total;
    unsigned short kind, eversion;
    unsigned ehsize;
    unsigned long long psize;
    unsigned compressed, at_64;
    unsigned short isa_minor, isa_major;
    unsigned sm;
    unsigned long long name, flags, reserved, uncompressed, at_72, pad;
    char ptx[(sizeof PTX + 7) / 8 * 8];
} fatbin = {0xBA55ED50u, 1, 16, 80 + (sizeof PTX + 7) / 8 * 8, 1, 0x101, 80, (sizeof PTX + 7) / 8 * 8,
            0, 64, 0, 8, 52, 0, 0x11, 0, 0, 72, 0, PTX};
static struct { int magic, version; const void *data; void *unused; } wrapper = {0x466243b1, 1, &fatbin, 0};

/* Registers the kernel as a compiler's constructor would. */
static void register_xor_kernel(void) {
    void **fat = __cudaRegisterFatBinary(&wrapper);
    __cudaRegisterFunction(fat, (const char *)xor_kernel, "hrr_xor_bytes", "hrr_xor_bytes", -1, 0, 0, 0, 0, 0);
    __cudaRegisterFatBinaryEnd(fat);
}

#endif
