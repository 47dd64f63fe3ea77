/* Stream-ordered memory pools for the stand-in runtimes (see core.h). An allocation is
 * device memory of the allocation table from the call on (its stream's earlier work cannot
 * touch it); a stream-ordered free runs in its stream's order, so work queued before it
 * still reads and writes the memory. Pools count what they hold; nothing is cached, so a
 * pool's reserved memory is its used memory and trimming has nothing to release. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

struct si_pool {
    uint64_t release_threshold, used, used_high, reserved_high;
    unsigned handle_types; /* the shareable handle types it may be exported as */
    int reuse[4]; /* attributes 1-3 */
    si_pool* next_live;
};

struct pool_alloc {
    void* p;
    size_t n;
    si_pool* pool;
    int freeing; /* a stream-ordered free is queued */
    struct pool_alloc* next;
};

static si_pool default_pool = {.reuse = {0, 1, 1, 1}};
static si_pool* current = &default_pool;
static si_pool* pools;
static struct pool_alloc* allocs;

si_pool* si_pool_default(void) { return &default_pool; }
si_pool* si_pool_current(void) { return current; }

si_pool* si_pool_of(const void* h) {
    if (h == &default_pool) return &default_pool;
    for (si_pool* p = pools; p; p = p->next_live)
        if (p == h) return p;
    return 0;
}

int si_pool_set_current(si_pool* p) {
    if (!p) return SI_INVALID_VALUE;
    current = p;
    return SI_OK;
}

int si_pool_create(si_pool** out) {
    if (!out) return SI_INVALID_VALUE;
    si_pool* p = calloc(1, sizeof *p);
    if (!p) return SI_NO_MEMORY;
    p->reuse[1] = p->reuse[2] = p->reuse[3] = 1;
    p->next_live = pools;
    pools = p;
    *out = p;
    return SI_OK;
}

void si_pool_set_handle_types(si_pool* p, unsigned types) {
    if (p) p->handle_types = types;
}

/* The stand-in exports a POSIX file descriptor only (of /dev/null: no other process shares
 * its device). */
int si_pool_export(si_pool* p, unsigned type, int* fd) {
    if (!p) return SI_INVALID_HANDLE;
    if (!fd || type != 1 || !(p->handle_types & type)) return SI_INVALID_VALUE;
    *fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    return *fd < 0 ? SI_NO_MEMORY : SI_OK;
}

int si_pool_export_pointer(const void* ptr, void* data) {
    for (struct pool_alloc* a = allocs; a; a = a->next)
        if (a->p == ptr && !a->freeing) {
            if (!a->pool || !a->pool->handle_types || !data) return SI_INVALID_VALUE;
            unsigned char d[64] = "hrr-pool";
            memcpy(d + 8, &ptr, sizeof ptr);
            memcpy(data, d, sizeof d);
            return SI_OK;
        }
    return SI_INVALID_VALUE;
}

int si_pool_destroy(si_pool* p) {
    if (!p || p == &default_pool) return SI_INVALID_VALUE;
    for (si_pool** q = &pools; *q; q = &(*q)->next_live)
        if (*q == p) {
            *q = p->next_live;
            /* Allocations still live keep their memory (freeing them later works). */
            for (struct pool_alloc* a = allocs; a; a = a->next)
                if (a->pool == p) a->pool = 0;
            if (current == p) current = &default_pool;
            free(p);
            return SI_OK;
        }
    return SI_INVALID_VALUE;
}

int si_pool_alloc(void** out, size_t n, si_pool* p, si_stream* s) {
    if (!out || !p) return SI_INVALID_VALUE;
    if (!s) return SI_INVALID_HANDLE;
    int status = 0;
    si_capture_status(s, &status, 0);
    if (status) return si_capture_alloc(s, n, out); /* the graph's memory: an allocation node */
    struct pool_alloc* a = calloc(1, sizeof *a);
    if (!a) return SI_NO_MEMORY;
    int r = si_alloc(&a->p, n, SI_DEVICE);
    if (r || !a->p) {
        free(a);
        *out = 0;
        return r ? r : SI_INVALID_VALUE; /* a zero-byte stream-ordered allocation */
    }
    a->n = n;
    a->pool = p;
    a->next = allocs;
    allocs = a;
    p->used += n;
    if (p->used > p->used_high) p->used_high = p->used;
    if (p->used > p->reserved_high) p->reserved_high = p->used;
    *out = a->p;
    return SI_OK;
}

static void release(void* ptr) {
    for (struct pool_alloc** q = &allocs; *q; q = &(*q)->next)
        if ((*q)->p == ptr) {
            struct pool_alloc* a = *q;
            *q = a->next;
            if (a->pool) a->pool->used -= a->n;
            si_free_now(a->p, SI_DEVICE);
            free(a);
            return;
        }
}

int si_pool_free(void* ptr, si_stream* s) {
    if (!s) return SI_INVALID_HANDLE;
    int status = 0;
    si_capture_status(s, &status, 0);
    if (status) return si_capture_free(s, ptr);
    /* A graph's memory freed outside it: the graph allocates it again at its next launch,
     * at the same address (the stand-in keeps it reserved). */
    if (ptr && si_graph_memory(ptr)) return SI_OK;
    struct pool_alloc* a = allocs;
    while (a && a->p != ptr) a = a->next;
    if (a && a->freeing) return SI_INVALID_VALUE; /* freed twice */
    if (!a) {
        /* Memory from hipMalloc/cudaMalloc may be freed in stream order too. */
        enum si_mem kind;
        if (!ptr || !si_lookup(ptr, &kind, 0) || kind != SI_DEVICE) return SI_INVALID_VALUE;
        a = calloc(1, sizeof *a);
        if (!a) return SI_NO_MEMORY;
        a->p = ptr;
        a->next = allocs;
        allocs = a;
    }
    a->freeing = 1;
    return si_enqueue_host_fn(s, release, ptr);
}

int si_pool_set_attr(si_pool* p, int attr, const void* value) {
    if (!p || !value) return SI_INVALID_VALUE;
    if (attr >= 1 && attr <= 3) p->reuse[attr] = *(const int*)value != 0;
    else if (attr == 4) p->release_threshold = *(const uint64_t*)value;
    else if ((attr == 6 || attr == 8) && *(const uint64_t*)value == 0) /* high marks reset to 0 only */
        *(attr == 6 ? &p->reserved_high : &p->used_high) = p->used;
    else return SI_INVALID_VALUE;
    return SI_OK;
}

int si_pool_get_attr(si_pool* p, int attr, void* value) {
    if (!p || !value) return SI_INVALID_VALUE;
    switch (attr) {
    case 1: case 2: case 3: *(int*)value = p->reuse[attr]; break;
    case 4: *(uint64_t*)value = p->release_threshold; break;
    case 5: case 7: *(uint64_t*)value = p->used; break;
    case 6: *(uint64_t*)value = p->reserved_high; break;
    case 8: *(uint64_t*)value = p->used_high; break;
    default: return SI_INVALID_VALUE;
    }
    return SI_OK;
}

int si_pool_trim(si_pool* p, size_t keep) {
    (void)keep; /* nothing is cached beyond what is in use: nothing to release */
    return p ? SI_OK : SI_INVALID_VALUE;
}
