/* CUDA device code for the stand-in CUDA runtime: fat binaries (magic 0xBA55ED50, entries
 * of kind 2 = cubin and kind 1 = PTX, each with its sm number), cubins (ELF64, EM_CUDA) and
 * PTX text. A fat binary's cubin for the device is taken; without one, its newest PTX for
 * an older or equal virtual architecture, as the driver JIT-compiles it. Kernels and their
 * parameter layouts come from what the code records: a cubin's `.nv.info.NAME` section
 * (EIATTR_KPARAM_INFO: ordinal, offset, size) and PTX `.entry` parameter lists; PTX's
 * module-scope `.global` and `.const` variables are its globals (zero-initialised: PTX
 * initialisers are not read). Compressed fat binary entries are refused by name. */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codeobject.h"

static uint16_t u16(const unsigned char* p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t u32(const unsigned char* p) { return (uint32_t)u16(p) | (uint32_t)u16(p + 2) << 16; }
static uint64_t u64(const unsigned char* p) { return (uint64_t)u32(p) | (uint64_t)u32(p + 4) << 32; }
static int inside(uint64_t off, uint64_t len, size_t n) { return off <= n && len <= n - off; }

/* The parameters of kernel `k` from its `.nv.info.NAME` section. */
static const char* kparams(const unsigned char* p, size_t n, struct si_kernel* k) {
    (void)n; /* si_elf_symbols checked every section lies inside the n bytes */
    uint64_t shoff = u64(p + 0x28);
    unsigned shnum = u16(p + 0x3c), shstrndx = u16(p + 0x3e);
    if (shstrndx >= shnum) return "no section name table";
    const unsigned char* sh_str = p + shoff + (uint64_t)shstrndx * 64;
    uint64_t str_off = u64(sh_str + 24), str_size = u64(sh_str + 32);
    char want[512];
    if (strlen(k->name) > sizeof want - 16) return "a kernel name too long";
    snprintf(want, sizeof want, ".nv.info.%s", k->name);
    for (unsigned i = 0; i < shnum; i++) {
        const unsigned char* s = p + shoff + (uint64_t)i * 64;
        uint32_t name = u32(s);
        if (name >= str_size) continue;
        const char* nm = (const char*)p + str_off + name;
        if (strnlen(nm, str_size - name) == str_size - name || strcmp(nm, want)) continue;
        uint64_t off = u64(s + 24), size = u64(s + 32);
        for (uint64_t at = 0; at + 4 <= size;) {
            const unsigned char* a = p + off + at;
            unsigned fmt = a[0], attr = a[1];
            if (fmt != 4) { /* no value, a byte or a half word: 4 bytes in all */
                at += 4;
                continue;
            }
            uint32_t len = u16(a + 2);
            if (at + 4 + len > size) return "an .nv.info attribute runs past its section";
            if (attr == 0x17 /* EIATTR_KPARAM_INFO */ && len >= 12) {
                unsigned ordinal = u16(a + 8), offset = u16(a + 10);
                unsigned psize = (u32(a + 12) >> 18) & 0x3fff;
                if (ordinal >= SI_MAX_PARAMS) return "too many kernel parameters";
                k->param_offset[ordinal] = offset;
                k->param_size[ordinal] = psize;
                if ((int)ordinal + 1 > k->nparams) k->nparams = (int)ordinal + 1;
                if (offset + psize > k->kernarg_size) k->kernarg_size = offset + psize;
            }
            at += 4 + len;
        }
        return 0;
    }
    return 0; /* a kernel without parameters has no KPARAM_INFO */
}

const char* si_cuda_cubin(const unsigned char* p, size_t n, struct si_image* out) {
    memset(out, 0, sizeof *out);
    if (n < 64 || memcmp(p, "\x7f" "ELF", 4) || p[4] != 2 || p[5] != 1) return "not a 64-bit ELF cubin";
    if (u16(p + 0x12) != 190 /* EM_CUDA */) return "not a CUDA ELF (machine)";
    snprintf(out->arch, sizeof out->arch, "sm_%u", (unsigned)(u32(p + 0x30) >> 8) & 0xff);
    const char* e = si_elf_symbols(p, n, out, 0);
    if (e) return e;
    for (size_t i = 0; i < out->nkernels; i++)
        if ((e = kparams(p, n, &out->kernels[i]))) return e;
    return 0;
}

/* `.param .u64 name`, `.param .align 8 .b8 name[24]`: size and alignment. */
static const char* ptx_globals(const char* text, size_t n, struct si_image* out);
static int ptx_param(const char* s, const char* end, uint32_t* size, uint32_t* align) {
    const char* t = strstr(s, ".param");
    if (!t || t >= end) return 0;
    *align = 0;
    const char* al = strstr(t, ".align");
    if (al && al < end) *align = (uint32_t)strtoul(al + 6, 0, 10);
    static const struct { const char* ty; uint32_t n; } tys[] = {
        {".u8", 1}, {".s8", 1}, {".b8", 1}, {".u16", 2}, {".s16", 2}, {".b16", 2}, {".f16", 2},
        {".u32", 4}, {".s32", 4}, {".b32", 4}, {".f32", 4}, {".u64", 8}, {".s64", 8}, {".b64", 8}, {".f64", 8},
    };
    uint32_t elem = 0;
    for (const char* q = t + 6; q < end && !elem; q++)
        for (size_t i = 0; i < sizeof tys / sizeof tys[0]; i++) {
            size_t l = strlen(tys[i].ty);
            if (!strncmp(q, tys[i].ty, l) && !isalnum((unsigned char)q[l])) {
                elem = tys[i].n;
                break;
            }
        }
    if (!elem) return -1;
    uint32_t count = 1;
    const char* br = memchr(t, '[', (size_t)(end - t));
    if (br) count = (uint32_t)strtoul(br + 1, 0, 10);
    *size = elem * count;
    if (!*align) *align = elem;
    return 1;
}

const char* si_cuda_ptx(const char* text, size_t n, struct si_image* out) {
    memset(out, 0, sizeof *out);
    const char* end = text + n;
    const char* tgt = memmem(text, n, ".target", 7);
    if (!tgt || !memmem(text, n, ".version", 8)) return "not PTX (no .version/.target)";
    {
        const char* sm = tgt + 7;
        while (sm < end && isspace((unsigned char)*sm)) sm++;
        size_t k = 0;
        while (sm < end && k + 1 < sizeof out->arch && (isalnum((unsigned char)*sm) || *sm == '_')) out->arch[k++] = *sm++;
    }
    for (const char* at = text; (at = memmem(at, (size_t)(end - at), ".entry", 6));) {
        at += 6;
        while (at < end && isspace((unsigned char)*at)) at++;
        const char* name = at;
        while (at < end && (isalnum((unsigned char)*at) || *at == '_' || *at == '$')) at++;
        if (at == name) return "an .entry without a name";
        struct si_kernel* ks = realloc(out->kernels, (out->nkernels + 1) * sizeof *ks);
        if (!ks) return "out of memory";
        out->kernels = ks;
        struct si_kernel* k = &ks[out->nkernels++];
        memset(k, 0, sizeof *k);
        k->name = strndup(name, (size_t)(at - name));
        while (at < end && isspace((unsigned char)*at)) at++;
        if (at < end && *at == '(') {
            const char* close = memchr(at, ')', (size_t)(end - at));
            if (!close) return "an .entry parameter list without its end";
            uint32_t offset = 0;
            for (const char* q = at + 1; q < close;) {
                const char* comma = memchr(q, ',', (size_t)(close - q));
                const char* e = comma ? comma : close;
                uint32_t size, align;
                int r = ptx_param(q, e, &size, &align);
                if (r < 0) return "a PTX parameter of an unknown type";
                if (r > 0) {
                    if (k->nparams == SI_MAX_PARAMS) return "too many kernel parameters";
                    offset = (offset + align - 1) / align * align;
                    k->param_offset[k->nparams] = offset;
                    k->param_size[k->nparams++] = size;
                    offset += size;
                }
                q = e + 1;
            }
            k->kernarg_size = offset;
        }
    }
    return ptx_globals(text, n, out);
}

/* Module-scope `.global`/`.const` declarations (brace depth 0): `.visible .global .align 4
 * .b8 table[16];` is a 16-byte global `table`. */
static const char* ptx_globals(const char* text, size_t n, struct si_image* out) {
    const char* end = text + n;
    int depth = 0;
    for (const char* q = text; q < end; q++) {
        if (*q == '{') depth++;
        else if (*q == '}') depth--;
        else if (*q == '/' && q + 1 < end && q[1] == '/') {
            while (q < end && *q != '\n') q++;
        } else if (!depth && *q == '.' && (!strncmp(q, ".global", 7) || !strncmp(q, ".const", 6)) &&
                   q + 7 < end && isspace((unsigned char)q[*(q + 1) == 'g' ? 7 : 6])) {
            const char* semi = memchr(q, ';', (size_t)(end - q));
            if (!semi) return "a PTX variable without its `;`";
            uint32_t size, align;
            /* The type is read as a parameter's is (ptx_param looks for `.param`). */
            char decl[512];
            size_t len = (size_t)(semi - q);
            if (len + 8 > sizeof decl) return "a PTX variable declaration too long";
            memcpy(decl, ".param ", 7);
            memcpy(decl + 7, q, len);
            decl[7 + len] = 0;
            char* eq = strchr(decl, '=');
            if (eq) *eq = 0; /* an initialiser: not read */
            const char* dend = decl + strlen(decl);
            if (ptx_param(decl, dend, &size, &align) <= 0) return "a PTX variable of an unknown type";
            /* The name: the last identifier before `[` or the end. */
            const char* ne = strchr(decl, '[');
            if (!ne) ne = dend;
            while (ne > decl && isspace((unsigned char)ne[-1])) ne--;
            const char* nb = ne;
            while (nb > decl && (isalnum((unsigned char)nb[-1]) || nb[-1] == '_' || nb[-1] == '$')) nb--;
            if (nb == ne) return "a PTX variable without a name";
            struct si_global* gs = realloc(out->globals, (out->nglobals + 1) * sizeof *gs);
            if (!gs) return "out of memory";
            out->globals = gs;
            gs[out->nglobals++] = (struct si_global){strndup(nb, (size_t)(ne - nb)), size, 0};
            q = semi;
        }
    }
    return 0;
}

const char* si_cuda_image(const unsigned char* p, size_t n, const char* arch, struct si_image* out,
                          int* no_entry) {
    *no_entry = 0;
    memset(out, 0, sizeof *out);
    if (n >= 4 && !memcmp(p, "\x7f" "ELF", 4)) {
        const char* e = si_cuda_cubin(p, n, out);
        if (!e && strcmp(out->arch, arch)) {
            *no_entry = 1;
            return "the cubin is for another GPU";
        }
        return e;
    }
    if (n < 16 || u32(p) != 0xBA55ED50) return si_cuda_ptx((const char*)p, n, out);
    uint64_t hsize = u16(p + 6), total = u64(p + 8);
    if (!inside(hsize, total, n)) return "a fat binary larger than its image";
    unsigned want = (unsigned)atoi(arch + 3), ptx_sm = 0;
    const unsigned char* ptx = 0;
    uint64_t ptx_size = 0;
    for (uint64_t at = hsize; at + 64 <= hsize + total;) {
        const unsigned char* e = p + at;
        unsigned kind = u16(e), ehsize = u32(e + 4);
        uint64_t psize = u64(e + 8), flags = u64(e + 40);
        unsigned sm = u32(e + 28);
        if (ehsize < 64 || !inside(at + ehsize, psize, n)) return "a fat binary entry outside the image";
        if (kind == 2 && sm == want) {
            if (flags & 0x2000) return "a compressed fat binary entry (not supported by this stand-in)";
            const char* err = si_cuda_cubin(p + at + ehsize, psize, out);
            if (err) return err;
            return 0;
        }
        if (kind == 1 && sm <= want && (!ptx || sm > ptx_sm) && !(flags & 0x2000)) {
            ptx = p + at + ehsize;
            ptx_size = psize;
            ptx_sm = sm;
        }
        at += ehsize + psize;
    }
    if (ptx) return si_cuda_ptx((const char*)ptx, strnlen((const char*)ptx, ptx_size), out);
    *no_entry = 1;
    return "the fat binary has no cubin for this GPU";
}
