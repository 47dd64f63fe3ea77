// Measures what a CUDA program asks of the driver's lookup paths, without recording
// anything: LD_PRELOAD it, and every dlsym/dlvsym of a `cu*` name, every dlopen/dlmopen of a
// CUDA library, every cuGetProcAddress(_v2) (name, version, flags, the symbol the driver
// resolved it to) and every cuGetExportTable UUID is written, one line each, to
// $HRR_TRACE_LOOKUPS (default stderr), with the object that asked.
//
// The real dlsym/dlvsym/dlopen/dlmopen are found in libc.so.6's own dynamic symbol table
// (GNU hash), never through dlsym: a dlsym interposer that asks dlsym for the real one
// recurses. A lookup this library forwards is made from here, so an RTLD_NEXT lookup of the
// program's is answered relative to this library (a measuring tool may live with that;
// capture's trampolines do not: see capture/src/lookup.rs).
//
// With HRR_TRACE_SHADOW=safe or =all (x86_64), each export table is handed out as a copy
// whose entries that point into libcuda's code go through a counting trampoline, and
// every entry's call count is written at exit ("entry UUID[INDEX] calls N"): which private
// entries a program calls, and how often. `safe` leaves the runtime's interface table
// (6bd5fb6c...) and the integrity-check table (d4082055...) as the driver gave them (their
// addresses are hashed by the runtime's integrity check); `all` copies every table, to
// measure what that does to a program.
//
//   gcc -shared -fPIC -O2 -o libtrace_lookups.so trace_lookups.c -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef void *(*dlsym_fn)(void *, const char *);
typedef void *(*dlvsym_fn)(void *, const char *, const char *);
typedef void *(*dlopen_fn)(const char *, int);
typedef void *(*dlmopen_fn)(Lmid_t, const char *, int);
typedef int (*gpa2_fn)(const char *, void **, int, uint64_t, int *);
typedef int (*gpa1_fn)(const char *, void **, int, uint64_t);
typedef int (*get_export_fn)(const void **, const unsigned char *);

static dlsym_fn real_dlsym;
static dlvsym_fn real_dlvsym;
static dlopen_fn real_dlopen;
static dlmopen_fn real_dlmopen;
static gpa2_fn real_gpa2;
static gpa1_fn real_gpa1;
static get_export_fn real_export;
static FILE *out;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

struct want { const char *name; void **slot; };

static uint32_t gnu_hash(const char *s) {
    uint32_t h = 5381;
    for (; *s; s++) h = h * 33 + (unsigned char)*s;
    return h;
}

static uintptr_t fix(uintptr_t p, uintptr_t base) { return p < base ? p + base : p; }

static int find_in_libc(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    const char *n = info->dlpi_name;
    size_t len = strlen(n);
    if (len < 9 || strcmp(n + len - 9, "libc.so.6") != 0) return 0;
    const ElfW(Dyn) *dyn = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    if (!dyn) return 0;
    uintptr_t base = info->dlpi_addr, symtab = 0, strtab = 0, gnuhash = 0;
    for (; dyn->d_tag != DT_NULL; dyn++) {
        if (dyn->d_tag == DT_SYMTAB) symtab = fix(dyn->d_un.d_ptr, base);
        if (dyn->d_tag == DT_STRTAB) strtab = fix(dyn->d_un.d_ptr, base);
        if (dyn->d_tag == DT_GNU_HASH) gnuhash = fix(dyn->d_un.d_ptr, base);
    }
    if (!symtab || !strtab || !gnuhash) return 0;
    const uint32_t *gh = (const uint32_t *)gnuhash;
    uint32_t nbuckets = gh[0], symoffset = gh[1], bloom_size = gh[2];
    const uint32_t *buckets = (const uint32_t *)((const uint64_t *)(gh + 4) + bloom_size);
    const uint32_t *chain = buckets + nbuckets;
    const ElfW(Sym) *syms = (const ElfW(Sym) *)symtab;
    for (struct want *w = data; w->name; w++) {
        uint32_t h = gnu_hash(w->name);
        uint32_t idx = buckets[h % nbuckets];
        if (idx < symoffset) continue;
        for (;; idx++) {
            uint32_t ch = chain[idx - symoffset];
            if ((ch | 1) == (h | 1) && syms[idx].st_shndx != SHN_UNDEF &&
                strcmp((const char *)strtab + syms[idx].st_name, w->name) == 0) {
                *w->slot = (void *)(base + syms[idx].st_value);
                break;
            }
            if (ch & 1) break;
        }
    }
    return 1;
}

static void resolve(void) {
    if (real_dlsym) return;
    struct want w[] = {{"dlsym", (void **)&real_dlsym},   {"dlvsym", (void **)&real_dlvsym},
                       {"dlopen", (void **)&real_dlopen}, {"dlmopen", (void **)&real_dlmopen},
                       {NULL, NULL}};
    dl_iterate_phdr(find_in_libc, w);
    if (!real_dlsym) { fprintf(stderr, "trace_lookups: no dlsym in libc.so.6\n"); abort(); }
}

static const char *who(void *addr) {
    Dl_info i;
    if (dladdr(addr, &i) && i.dli_fname) {
        const char *s = strrchr(i.dli_fname, '/');
        return s ? s + 1 : i.dli_fname;
    }
    return "?";
}

static const char *sym_at(void *p) {
    Dl_info i;
    if (p && dladdr(p, &i) && i.dli_sname && i.dli_saddr == p) return i.dli_sname;
    return p ? "(not an exported symbol)" : "(null)";
}

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...) {
    pthread_mutex_lock(&out_lock);
    if (!out) {
        const char *p = getenv("HRR_TRACE_LOOKUPS");
        out = p ? fopen(p, "a") : NULL;
        if (!out) out = stderr;
    }
    va_list ap;
    va_start(ap, fmt);
    vfprintf(out, fmt, ap);
    va_end(ap);
    fflush(out);
    pthread_mutex_unlock(&out_lock);
}

static int gpa2_wrap(const char *, void **, int, uint64_t, int *);
static int gpa1_wrap(const char *, void **, int, uint64_t);
static int export_wrap(const void **, const unsigned char *);

// Our wrapper in place of the driver's lookup functions, wherever they are handed out.
static void *swap_in(const char *name, void *p) {
    if (!p) return p;
    const char *s = sym_at(p);
    if (!strcmp(s, "cuGetProcAddress_v2")) { real_gpa2 = p; return (void *)gpa2_wrap; }
    if (!strcmp(s, "cuGetProcAddress")) { real_gpa1 = p; return (void *)gpa1_wrap; }
    if (!strcmp(s, "cuGetExportTable")) { real_export = p; return (void *)export_wrap; }
    (void)name;
    return p;
}

static int gpa2_wrap(const char *sym, void **pfn, int ver, uint64_t flags, int *status) {
    int r = real_gpa2(sym, pfn, ver, flags, status);
    void *p = (r == 0 && pfn) ? *pfn : NULL;
    logf_("gpa2 %s ver=%d flags=%llu ret=%d status=%d -> %s [%s]\n", sym, ver,
          (unsigned long long)flags, r, status ? *status : -1, sym_at(p),
          who(__builtin_return_address(0)));
    if (p) *pfn = swap_in(sym, p);
    return r;
}

static int gpa1_wrap(const char *sym, void **pfn, int ver, uint64_t flags) {
    int r = real_gpa1(sym, pfn, ver, flags);
    void *p = (r == 0 && pfn) ? *pfn : NULL;
    logf_("gpa1 %s ver=%d flags=%llu ret=%d -> %s [%s]\n", sym, ver, (unsigned long long)flags,
          r, sym_at(p), who(__builtin_return_address(0)));
    if (p) *pfn = swap_in(sym, p);
    return r;
}

#if defined(__x86_64__)
// Counting trampolines: stub I loads I and jumps to the common part, which keeps every
// argument register, asks tl_enter for entry I's real function (counting the call), and
// jumps there with the stack as the caller left it.
#define MAX_SLOTS 2048
struct slot { const void *real; unsigned char uuid[16]; int index; unsigned long calls; };
static struct slot slots[MAX_SLOTS];
static int nslots;
__attribute__((used, visibility("hidden"))) const void *tl_enter(unsigned i) {
    __atomic_fetch_add(&slots[i].calls, 1, __ATOMIC_RELAXED);
    return slots[i].real;
}
extern char tl_stubs[] __attribute__((visibility("hidden")));
__asm__(".text\n.p2align 4\n.globl tl_stubs\n.hidden tl_stubs\ntl_stubs:\n"
        ".set tl_i, 0\n.rept 2048\n.p2align 4\nmovl $tl_i, %r11d\njmp tl_common\n"
        ".set tl_i, tl_i+1\n.endr\n"
        "tl_common:\n"
        "push %rdi\npush %rsi\npush %rdx\npush %rcx\npush %r8\npush %r9\npush %rax\n"
        "sub $128, %rsp\n"
        "movdqu %xmm0, 0(%rsp)\nmovdqu %xmm1, 16(%rsp)\nmovdqu %xmm2, 32(%rsp)\n"
        "movdqu %xmm3, 48(%rsp)\nmovdqu %xmm4, 64(%rsp)\nmovdqu %xmm5, 80(%rsp)\n"
        "movdqu %xmm6, 96(%rsp)\nmovdqu %xmm7, 112(%rsp)\n"
        "mov %r11d, %edi\ncall tl_enter\nmov %rax, %r11\n"
        "movdqu 0(%rsp), %xmm0\nmovdqu 16(%rsp), %xmm1\nmovdqu 32(%rsp), %xmm2\n"
        "movdqu 48(%rsp), %xmm3\nmovdqu 64(%rsp), %xmm4\nmovdqu 80(%rsp), %xmm5\n"
        "movdqu 96(%rsp), %xmm6\nmovdqu 112(%rsp), %xmm7\n"
        "add $128, %rsp\n"
        "pop %rax\npop %r9\npop %r8\npop %rcx\npop %rdx\npop %rsi\npop %rdi\n"
        "jmp *%r11\n");

struct text { uintptr_t lo[8], hi[8]; int n; };
static int find_cuda_text(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    struct text *t = data;
    if (!strstr(info->dlpi_name, "libcuda.so")) return 0;
    for (int i = 0; i < info->dlpi_phnum && t->n < 8; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            t->lo[t->n] = info->dlpi_addr + ph->p_vaddr;
            t->hi[t->n] = t->lo[t->n] + ph->p_memsz;
            t->n++;
        }
    }
    return 1;
}
static int in_cuda_text(const void *p) {
    static struct text t;
    if (!t.n) dl_iterate_phdr(find_cuda_text, &t);
    for (int i = 0; i < t.n; i++)
        if ((uintptr_t)p >= t.lo[i] && (uintptr_t)p < t.hi[i]) return 1;
    return 0;
}

// The words of a table: its first word when that is a byte size, else the longest run of
// code pointers from the start (tables without a size word start with functions).
static size_t table_words(const void *const *t) {
    size_t first = (size_t)t[0];
    if (first >= 8 && first <= 4096 && first % 8 == 0) return first / 8;
    size_t n = 0;
    while (n < 64 && in_cuda_text(t[n])) n++;
    return n;
}

struct shadow { unsigned char uuid[16]; const void *real_table; const void **copy; };
static struct shadow shadows[64];
static int nshadows;
static pthread_mutex_t shadow_lock = PTHREAD_MUTEX_INITIALIZER;

static const void *shadow_of(const void *table, const unsigned char *uuid, const char *hex) {
    const char *mode = getenv("HRR_TRACE_SHADOW");
    if (!mode || !table) return table;
    if (strcmp(mode, "all") != 0 &&
        (!strncmp(hex, "6bd5fb6c", 8) || !strncmp(hex, "d4082055", 8)))
        return table;
    pthread_mutex_lock(&shadow_lock);
    for (int i = 0; i < nshadows; i++)
        if (shadows[i].real_table == table) {
            pthread_mutex_unlock(&shadow_lock);
            return shadows[i].copy;
        }
    const void *const *t = table;
    size_t n = table_words(t);
    const void **copy = calloc(n ? n : 1, sizeof *copy);
    for (size_t k = 0; k < n; k++) {
        copy[k] = t[k];
        if (in_cuda_text(t[k]) && nslots < MAX_SLOTS) {
            struct slot *s = &slots[nslots];
            s->real = t[k];
            memcpy(s->uuid, uuid, 16);
            s->index = (int)k;
            copy[k] = tl_stubs + 16 * nslots;
            nslots++;
        }
    }
    if (nshadows < 64) {
        memcpy(shadows[nshadows].uuid, uuid, 16);
        shadows[nshadows].real_table = table;
        shadows[nshadows].copy = copy;
        nshadows++;
    }
    pthread_mutex_unlock(&shadow_lock);
    logf_("shadow %s words=%zu\n", hex, n);
    return copy;
}

__attribute__((destructor)) static void report_entries(void) {
    for (int i = 0; i < nslots; i++) {
        char hex[33];
        for (int k = 0; k < 16; k++) sprintf(hex + 2 * k, "%02x", slots[i].uuid[k]);
        logf_("entry %.8s[%d] calls %lu\n", hex, slots[i].index, slots[i].calls);
    }
}
#else
static const void *shadow_of(const void *table, const unsigned char *uuid, const char *hex) {
    (void)uuid; (void)hex;
    return table;
}
#endif

static int export_wrap(const void **table, const unsigned char *uuid) {
    int r = real_export(table, uuid);
    char hex[33];
    for (int i = 0; i < 16; i++) sprintf(hex + 2 * i, "%02x", uuid[i]);
    size_t words = (r == 0 && table && *table) ? *(const size_t *)*table : 0;
    logf_("export %s ret=%d first-word=%zu [%s]\n", hex, r, words,
          who(__builtin_return_address(0)));
    if (r == 0 && table) *table = shadow_of(*table, uuid, hex);
    return r;
}

void *dlsym(void *h, const char *name) {
    resolve();
    void *p = real_dlsym(h, name);
    if (name && name[0] == 'c' && name[1] == 'u') {
        logf_("dlsym %s h=%s -> %s [%s]\n", name,
              h == RTLD_NEXT ? "NEXT" : h == RTLD_DEFAULT ? "DEFAULT" : "handle", sym_at(p),
              who(__builtin_return_address(0)));
        p = swap_in(name, p);
    }
    return p;
}

void *dlvsym(void *h, const char *name, const char *version) {
    resolve();
    void *p = real_dlvsym(h, name, version);
    if (name && name[0] == 'c' && name[1] == 'u') {
        logf_("dlvsym %s@%s -> %s [%s]\n", name, version, sym_at(p),
              who(__builtin_return_address(0)));
        p = swap_in(name, p);
    }
    return p;
}

static int interesting(const char *f) {
    return f && (strstr(f, "cuda") || strstr(f, "cublas") || strstr(f, "cudnn") ||
                 strstr(f, "nvrtc") || strstr(f, "nvJit"));
}

void *dlopen(const char *f, int flags) {
    resolve();
    void *h = real_dlopen(f, flags);
    if (interesting(f))
        logf_("dlopen %s flags=%#x -> %s [%s]\n", f, flags, h ? "ok" : "null",
              who(__builtin_return_address(0)));
    return h;
}

void *dlmopen(Lmid_t lmid, const char *f, int flags) {
    resolve();
    void *h = real_dlmopen(lmid, f, flags);
    logf_("dlmopen lmid=%ld %s flags=%#x -> %s [%s]\n", (long)lmid, f ? f : "(null)", flags,
          h ? "ok" : "null", who(__builtin_return_address(0)));
    return h;
}

// Programs linking libcuda call these directly.
int cuGetProcAddress_v2(const char *sym, void **pfn, int ver, uint64_t flags, int *status) {
    resolve();
    if (!real_gpa2) {
        void *h = real_dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
        real_gpa2 = h ? real_dlsym(h, "cuGetProcAddress_v2") : NULL;
        if (!real_gpa2) return 999;
    }
    return gpa2_wrap(sym, pfn, ver, flags, status);
}

int cuGetExportTable(const void **table, const unsigned char *uuid) {
    resolve();
    if (!real_export) {
        void *h = real_dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
        real_export = h ? real_dlsym(h, "cuGetExportTable") : NULL;
        if (!real_export) return 999;
    }
    return export_wrap(table, uuid);
}
