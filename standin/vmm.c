/* Virtual memory management on the stand-in device (cuMem* / hipMem* VMM calls, wrapped
 * per vendor in cuda_vmm.c and hip_vmm.c). The stand-in's device memory is host memory,
 * so the host's own virtual memory models it: a reserved range is an inaccessible
 * anonymous mapping; physical memory is a memfd of its size; mapping places the file's
 * pages at an address inside a reservation (MAP_FIXED | MAP_SHARED), still inaccessible;
 * setting access opens them (mprotect) and makes the range device memory to every copy
 * and check (si_add_device_range). Two mappings of one handle alias, as on a GPU. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core.h"

struct reservation {
    char* p;
    size_t n;
    struct reservation* next;
};
struct handle {
    int fd;
    size_t n;
    /* The program's references (create, retain) plus one per mapping. */
    unsigned refs;
    struct handle* next;
};
struct mapping {
    char* p;
    size_t n;
    struct handle* h;
    int accessible;
    struct mapping* next;
};
static struct reservation* reservations;
static struct handle* handles;
static struct mapping* mappings;

size_t si_vmm_granularity(void) { return SI_VMM_GRANULARITY; }

static int aligned(size_t v) { return v % SI_VMM_GRANULARITY == 0; }

static struct reservation* reservation_holding(const char* p, size_t n) {
    for (struct reservation* r = reservations; r; r = r->next)
        if (p >= r->p && n <= r->n && (size_t)(p - r->p) <= r->n - n) return r;
    return 0;
}

/* The device memory a reservation shows copies and checks: each run of adjacent
 * accessible mappings is one range (a buffer may span two mappings, as on a GPU). */
static void refresh(struct reservation* r) {
    if (!r) return;
    for (size_t at = 0; at < r->n; at += SI_VMM_GRANULARITY) si_remove_device_range(r->p + at);
    char* run = 0;
    for (char* q = r->p;; q += SI_VMM_GRANULARITY) {
        struct mapping* m = 0;
        if (q < r->p + r->n)
            for (struct mapping* x = mappings; x && !m; x = x->next)
                if (q >= x->p && q < x->p + x->n && x->accessible) m = x;
        if (m && !run) run = q;
        if (!m && run) {
            si_add_device_range(run, (size_t)(q - run));
            run = 0;
        }
        if (q >= r->p + r->n) break;
    }
}

static struct handle* live_handle(uint64_t h) {
    for (struct handle* x = handles; x; x = x->next)
        if ((uint64_t)(uintptr_t)x == h) return x;
    return 0;
}

static void unref(struct handle* h) {
    if (--h->refs) return;
    for (struct handle** x = &handles; *x; x = &(*x)->next)
        if (*x == h) {
            *x = h->next;
            break;
        }
    close(h->fd);
    free(h);
}

int si_vmm_reserve(void** out, size_t n, size_t align, const void* hint) {
    if (!out || n == 0 || !aligned(n) || (align && align & (align - 1))) return SI_INVALID_VALUE;
    *out = 0;
    size_t a = align > SI_VMM_GRANULARITY ? align : SI_VMM_GRANULARITY;
    /* Over-reserve, then trim to the alignment asked for. */
    char* raw = mmap((void*)hint, n + a, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (raw == MAP_FAILED) return SI_NO_MEMORY;
    char* p = (char*)(((uintptr_t)raw + a - 1) & ~(uintptr_t)(a - 1));
    if (p > raw) munmap(raw, (size_t)(p - raw));
    if (raw + n + a > p + n) munmap(p + n, (size_t)(raw + n + a - (p + n)));
    struct reservation* r = malloc(sizeof *r);
    if (!r) {
        munmap(p, n);
        return SI_NO_MEMORY;
    }
    *r = (struct reservation){p, n, reservations};
    reservations = r;
    *out = p;
    return SI_OK;
}

int si_vmm_free(void* p, size_t n) {
    for (struct reservation** x = &reservations; *x; x = &(*x)->next) {
        struct reservation* r = *x;
        if (r->p != (char*)p || r->n != n) continue;
        for (struct mapping* m = mappings; m; m = m->next)
            if (m->p >= r->p && m->p < r->p + r->n) return SI_INVALID_VALUE; /* still mapped */
        *x = r->next;
        munmap(r->p, r->n);
        free(r);
        return SI_OK;
    }
    return SI_INVALID_VALUE;
}

int si_vmm_create(uint64_t* out, size_t n, int location_type, int location_id) {
    if (!out || n == 0 || !aligned(n)) return SI_INVALID_VALUE;
    *out = 0;
    /* One device, located by ordinal: location type 1 is a device in both vendors. */
    if (location_type != 1) return SI_INVALID_VALUE;
    if (location_id != 0) return SI_INVALID_DEVICE;
    struct handle* h = malloc(sizeof *h);
    if (!h) return SI_NO_MEMORY;
    h->fd = memfd_create("hrr-stand-in-vmm", MFD_CLOEXEC);
    if (h->fd < 0 || ftruncate(h->fd, (off_t)n) != 0) {
        if (h->fd >= 0) close(h->fd);
        free(h);
        return SI_NO_MEMORY;
    }
    h->n = n;
    h->refs = 1;
    h->next = handles;
    handles = h;
    *out = (uint64_t)(uintptr_t)h;
    return SI_OK;
}

int si_vmm_release(uint64_t handle) {
    struct handle* h = live_handle(handle);
    if (!h) return SI_INVALID_VALUE;
    unref(h);
    return SI_OK;
}

int si_vmm_retain(uint64_t* out, const void* addr) {
    if (!out) return SI_INVALID_VALUE;
    for (struct mapping* m = mappings; m; m = m->next)
        if ((const char*)addr >= m->p && (const char*)addr < m->p + m->n) {
            m->h->refs++;
            *out = (uint64_t)(uintptr_t)m->h;
            return SI_OK;
        }
    return SI_INVALID_VALUE;
}

int si_vmm_map(void* p, size_t n, size_t offset, uint64_t handle) {
    struct handle* h = live_handle(handle);
    if (!h || !p || n == 0 || !aligned((uintptr_t)p) || !aligned(n) || !aligned(offset) ||
        offset > h->n || n > h->n - offset || !reservation_holding(p, n))
        return SI_INVALID_VALUE;
    for (struct mapping* m = mappings; m; m = m->next)
        if ((char*)p < m->p + m->n && m->p < (char*)p + n) return SI_INVALID_VALUE; /* overlap */
    struct mapping* m = malloc(sizeof *m);
    if (!m) return SI_NO_MEMORY;
    if (mmap(p, n, PROT_NONE, MAP_SHARED | MAP_FIXED, h->fd, (off_t)offset) == MAP_FAILED) {
        free(m);
        return SI_NO_MEMORY;
    }
    h->refs++;
    *m = (struct mapping){p, n, h, 0, mappings};
    mappings = m;
    return SI_OK;
}

int si_vmm_unmap(void* p, size_t n) {
    if (!p || n == 0) return SI_INVALID_VALUE;
    /* Whole mappings only, each inside the range and at least one starting at p. */
    int found = 0;
    for (struct mapping* m = mappings; m; m = m->next) {
        int inside = m->p >= (char*)p && m->p + m->n <= (char*)p + n;
        int overlaps = m->p < (char*)p + n && (char*)p < m->p + m->n;
        if (overlaps && !inside) return SI_INVALID_VALUE;
        found |= m->p == (char*)p;
    }
    if (!found) return SI_INVALID_VALUE;
    for (struct mapping** x = &mappings; *x;) {
        struct mapping* m = *x;
        if (m->p < (char*)p || m->p + m->n > (char*)p + n) {
            x = &m->next;
            continue;
        }
        /* Back to a reserved, inaccessible range. */
        mmap(m->p, m->n, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
        *x = m->next;
        unref(m->h);
        free(m);
    }
    refresh(reservation_holding(p, n));
    return SI_OK;
}

/* descs: count access descriptors (location type, location id, flags; 4 bytes each). */
int si_vmm_set_access(void* p, size_t n, const int32_t* descs, size_t count) {
    if (!p || n == 0 || !descs || count == 0) return SI_INVALID_VALUE;
    int prot = -1;
    for (size_t i = 0; i < count; i++) {
        const int32_t* d = descs + 3 * i;
        if (d[0] != 1) return SI_INVALID_VALUE;
        if (d[1] != 0) return SI_INVALID_DEVICE;
        if (d[2] != 0 && d[2] != 1 && d[2] != 3) return SI_INVALID_VALUE;
        prot = d[2] == 3 ? PROT_READ | PROT_WRITE : d[2] == 1 ? PROT_READ : PROT_NONE;
    }
    /* Every byte of the range must be mapped. */
    size_t covered = 0;
    for (struct mapping* m = mappings; m; m = m->next)
        if (m->p >= (char*)p && m->p + m->n <= (char*)p + n) covered += m->n;
    if (covered != n) return SI_INVALID_VALUE;
    if (mprotect(p, n, prot) != 0) return SI_INVALID_VALUE;
    for (struct mapping* m = mappings; m; m = m->next)
        if (m->p >= (char*)p && m->p + m->n <= (char*)p + n) m->accessible = prot != PROT_NONE;
    refresh(reservation_holding(p, n));
    return SI_OK;
}
