/* AMDGPU code objects for the stand-in HIP runtime: clang offload bundles
 * ("__CLANG_OFFLOAD_BUNDLE__", what hipcc and clang embed and what --genco writes) and the
 * AMDGPU ELF inside. Validation as the loader would: ELF64 little-endian, EM_AMDGPU,
 * the HSA OS ABI, every section inside the image, the machine in e_flags naming the
 * target the bundle's triple names. Kernels are the `NAME.kd` kernel descriptors of the
 * symbol table (kernarg size read from the descriptor); globals are the other defined
 * objects, with their initial bytes. All reads are bounds-checked. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "codeobject.h"

static const struct { unsigned mach; const char* name; } machs[] = {
    {0x02c, "gfx900"},  {0x02d, "gfx902"},  {0x02e, "gfx904"},  {0x02f, "gfx906"},
    {0x030, "gfx908"},  {0x031, "gfx909"},  {0x032, "gfx90c"},  {0x033, "gfx1010"},
    {0x034, "gfx1011"}, {0x035, "gfx1012"}, {0x036, "gfx1030"}, {0x037, "gfx1031"},
    {0x038, "gfx1032"}, {0x039, "gfx1033"}, {0x03d, "gfx1035"}, {0x03e, "gfx1034"},
    {0x03f, "gfx90a"},  {0x040, "gfx940"},  {0x041, "gfx1100"}, {0x042, "gfx1013"},
    {0x043, "gfx1150"}, {0x044, "gfx1103"}, {0x045, "gfx1036"}, {0x046, "gfx1101"},
    {0x047, "gfx1102"}, {0x048, "gfx1200"}, {0x04a, "gfx1151"}, {0x04b, "gfx941"},
    {0x04c, "gfx942"},  {0x04e, "gfx1201"}, {0x04f, "gfx950"},  {0x055, "gfx1152"},
    {0x058, "gfx1153"},
};

const char* si_amdgpu_mach_name(unsigned mach) {
    for (size_t i = 0; i < sizeof machs / sizeof machs[0]; i++)
        if (machs[i].mach == mach) return machs[i].name;
    return 0;
}

static uint16_t u16(const unsigned char* p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t u32(const unsigned char* p) { return (uint32_t)u16(p) | (uint32_t)u16(p + 2) << 16; }
static uint64_t u64(const unsigned char* p) { return (uint64_t)u32(p) | (uint64_t)u32(p + 4) << 32; }

/* [off, off+len) inside n bytes. */
static int inside(uint64_t off, uint64_t len, size_t n) { return off <= n && len <= n - off; }

struct shdr {
    uint32_t name, type;
    uint64_t addr, off, size;
    uint32_t link;
    uint64_t entsize;
};
static struct shdr sh_at(const unsigned char* p, uint64_t shoff, unsigned i) {
    const unsigned char* s = p + shoff + (uint64_t)i * 64;
    return (struct shdr){u32(s), u32(s + 4), u64(s + 16), u64(s + 24), u64(s + 32), u32(s + 40), u64(s + 56)};
}

static char* dup_n(const char* s, size_t n) {
    char* d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = 0;
    }
    return d;
}

/* Kernels and globals from an ELF's symbol table (shared by AMDGPU and CUDA cubins). */
const char* si_elf_symbols(const unsigned char* p, size_t n, struct si_image* out, int amdgpu) {
    uint64_t shoff = u64(p + 0x28);
    unsigned shentsize = u16(p + 0x3a), shnum = u16(p + 0x3c);
    if (shentsize != 64 || !inside(shoff, (uint64_t)shnum * 64, n)) return "section headers outside the image";
    for (unsigned i = 0; i < shnum; i++) {
        struct shdr s = sh_at(p, shoff, i);
        if (s.type != 8 /* NOBITS */ && s.type != 0 && !inside(s.off, s.size, n))
            return "a section lies outside the image";
    }
    for (unsigned i = 0; i < shnum; i++) {
        struct shdr st = sh_at(p, shoff, i);
        if (st.type != 2 /* SYMTAB */) continue;
        if (st.entsize != 24 || st.link >= shnum) return "malformed symbol table";
        struct shdr str = sh_at(p, shoff, st.link);
        const unsigned char* names = p + str.off;
        for (uint64_t k = 1; k < st.size / 24; k++) {
            const unsigned char* sym = p + st.off + k * 24;
            uint32_t name = u32(sym);
            unsigned info = sym[4], shndx = u16(sym + 6);
            uint64_t value = u64(sym + 8), size = u64(sym + 16);
            if (name >= str.size) return "a symbol name lies outside the string table";
            const char* nm = (const char*)names + name;
            size_t len = strnlen(nm, str.size - name);
            if (len == str.size - name) return "an unterminated symbol name";
            unsigned type = info & 15, bind = info >> 4;
            /* AMDGPU kernels and variables are global symbols; nvcc makes a cubin's
             * variables local objects (its kernels stay global). */
            if (shndx == 0 || shndx >= shnum || (bind == 0 /* LOCAL */ && (amdgpu || type != 1))) continue;
            struct shdr home = sh_at(p, shoff, shndx);
            if (amdgpu && type == 1 && len > 3 && !strcmp(nm + len - 3, ".kd")) {
                /* A kernel descriptor (64 bytes; kernarg_size at +8) in its section. */
                if (size != 64 || value < home.addr || !inside(value - home.addr, 64, home.size))
                    return "a kernel descriptor lies outside its section";
                struct si_kernel* ks = realloc(out->kernels, (out->nkernels + 1) * sizeof *ks);
                if (!ks) return "out of memory";
                out->kernels = ks;
                struct si_kernel* kk = &ks[out->nkernels++];
                memset(kk, 0, sizeof *kk);
                kk->name = dup_n(nm, len - 3);
                kk->kernarg_size = u32(p + home.off + (value - home.addr) + 8);
            } else if (!amdgpu && type == 2 /* FUNC */ && bind == 1 && (home.type == 1) && len) {
                struct si_kernel* ks = realloc(out->kernels, (out->nkernels + 1) * sizeof *ks);
                if (!ks) return "out of memory";
                out->kernels = ks;
                struct si_kernel* kk = &ks[out->nkernels++];
                memset(kk, 0, sizeof *kk);
                kk->name = dup_n(nm, len);
            } else if (type == 1 /* OBJECT */ && size > 0) {
                const unsigned char* init = 0;
                if (home.type != 8) {
                    if (amdgpu) {
                        if (value < home.addr || !inside(value - home.addr, size, home.size))
                            return "a variable lies outside its section";
                        init = p + home.off + (value - home.addr);
                    } else {
                        if (!inside(value, size, home.size)) return "a variable lies outside its section";
                        init = p + home.off + value;
                    }
                }
                struct si_global* gs = realloc(out->globals, (out->nglobals + 1) * sizeof *gs);
                if (!gs) return "out of memory";
                out->globals = gs;
                gs[out->nglobals++] = (struct si_global){dup_n(nm, len), (size_t)size, init};
            }
        }
    }
    return 0;
}

const char* si_amdgpu_elf(const unsigned char* p, size_t n, struct si_image* out) {
    memset(out, 0, sizeof *out);
    if (n < 64 || memcmp(p, "\x7f" "ELF", 4)) return "not an ELF image";
    if (p[4] != 2 || p[5] != 1) return "not a 64-bit little-endian ELF";
    if (p[7] != 64 /* ELFOSABI_AMDGPU_HSA */) return "not an AMDGPU HSA code object (OS ABI)";
    if (p[8] < 1 || p[8] > 4) return "an unknown code object version";
    if (u16(p + 0x12) != 224 /* EM_AMDGPU */) return "not an AMDGPU ELF (machine)";
    const char* arch = si_amdgpu_mach_name(u32(p + 0x30) & 0xff);
    if (!arch) return "an unknown AMDGPU machine in e_flags";
    strncpy(out->arch, arch, sizeof out->arch - 1);
    const char* e = si_elf_symbols(p, n, out, 1);
    if (e) return e;
    if (!out->nkernels && !out->nglobals) return "a code object with no kernel and no variable";
    return 0;
}

/* The target of a bundle triple ("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-"): "gfx90a". */
static void triple_arch(const char* t, size_t len, char* out, size_t cap) {
    const char* dash = 0;
    for (size_t i = 0; i + 1 < len; i++)
        if (t[i] == '-' && t[i + 1] == '-') dash = t + i + 2;
    out[0] = 0;
    if (!dash) return;
    size_t k = 0;
    while (dash < t + len && *dash != ':' && k + 1 < cap) out[k++] = *dash++;
    out[k] = 0;
}

const char* si_amdgpu_image(const unsigned char* p, size_t n, const char* arch,
                            struct si_image* out, int* no_entry) {
    *no_entry = 0;
    memset(out, 0, sizeof *out);
    if (n >= 4 && !memcmp(p, "CCOB", 4)) return "a compressed offload bundle (not supported by this stand-in)";
    if (n < 24 || memcmp(p, "__CLANG_OFFLOAD_BUNDLE__", 24)) {
        const char* e = si_amdgpu_elf(p, n, out);
        if (e) return e;
        if (strcmp(out->arch, arch)) {
            *no_entry = 1;
            return "the code object is for another target";
        }
        return 0;
    }
    if (n < 32) return "a truncated offload bundle";
    uint64_t count = u64(p + 24);
    if (count == 0 || count > 4096) return "an offload bundle with an implausible entry count";
    uint64_t at = 32;
    int found = 0;
    size_t kernels_seen = (size_t)-1;
    for (uint64_t i = 0; i < count; i++) {
        if (!inside(at, 24, n)) return "a truncated offload bundle entry";
        uint64_t off = u64(p + at), size = u64(p + at + 8), tlen = u64(p + at + 16);
        if (tlen > 4096 || !inside(at + 24, tlen, n)) return "an offload bundle triple outside the image";
        if (!inside(off, size, n)) return "an offload bundle entry outside the image";
        const char* triple = (const char*)p + at + 24;
        at += 24 + tlen;
        if (!memmem(triple, tlen, "amdgcn", 6)) continue;
        char t_arch[32];
        triple_arch(triple, tlen, t_arch, sizeof t_arch);
        struct si_image im;
        const char* e = si_amdgpu_elf(p + off, size, &im);
        if (e) {
            si_image_free(&im);
            return e;
        }
        if (strcmp(im.arch, t_arch)) {
            si_image_free(&im);
            return "an offload bundle entry whose ELF machine differs from its triple";
        }
        /* Every target's code object holds the same kernels (one source). */
        if (kernels_seen != (size_t)-1 && im.nkernels != kernels_seen) {
            si_image_free(&im);
            return "offload bundle entries disagree on their kernels";
        }
        kernels_seen = im.nkernels;
        if (!found && !strcmp(t_arch, arch)) {
            *out = im;
            found = 1;
        } else {
            si_image_free(&im);
        }
    }
    if (!found) {
        *no_entry = 1;
        return "the offload bundle has no code object for this device's target";
    }
    return 0;
}

const struct si_kernel* si_image_kernel(const struct si_image* im, const char* name) {
    for (size_t i = 0; i < im->nkernels; i++)
        if (!strcmp(im->kernels[i].name, name)) return &im->kernels[i];
    return 0;
}

const struct si_global* si_image_global(const struct si_image* im, const char* name) {
    for (size_t i = 0; i < im->nglobals; i++)
        if (!strcmp(im->globals[i].name, name)) return &im->globals[i];
    return 0;
}

void si_image_free(struct si_image* im) {
    for (size_t i = 0; i < im->nkernels; i++) free(im->kernels[i].name);
    for (size_t i = 0; i < im->nglobals; i++) free(im->globals[i].name);
    free(im->kernels);
    free(im->globals);
    memset(im, 0, sizeof *im);
}
