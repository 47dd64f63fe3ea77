/* Kernels the stand-in runs (see core.h, "Kernels the stand-in runs"). No GPU code runs
 * here; a kernel the stand-in knows by name and parameter layout is run on the host, over
 * the device memory's bytes, when its launch or graph kernel node runs, so a program's
 * result can depend on a kernel having run (and on the order a graph's nodes run in).
 * Any other kernel's launch is checked and counted and does nothing. This file owns the
 * table of known kernels, their bodies, and the launches and kernel nodes made of them
 * (queued through core.c, added to graphs through graph.c). */
#define _GNU_SOURCE
#include <string.h>

#include "core_internal.h"

/* hrr_xor_bytes(unsigned char* p, unsigned long long key): thread i xors p[i] with the
 * key's low byte. A range outside one live allocation faults as a GPU's kernel does. */
static void xor_bytes(const struct op* o) {
    unsigned char* p = (unsigned char*)(uintptr_t)o->kargs[0];
    enum si_mem kind;
    size_t left;
    if (!o->threads) return;
    if (!si_lookup(p, &kind, &left) || left < o->threads) {
        if (!si_sticky) si_sticky = 700; /* an illegal address, sticky */
        return;
    }
    for (size_t i = 0; i < o->threads; i++) p[i] ^= (unsigned char)o->kargs[1];
}

static const struct known {
    const char* name;
    int nparams;
    uint32_t size[SI_HOST_KERNEL_ARGS];
    void (*run)(const struct op* o);
} known[] = {
    {"hrr_xor_bytes", 2, {8, 8}, xor_bytes},
};

/* The operation a launch of l runs: a known kernel's body with its arguments copied now
 * (an argument array is then required), else an empty launch. */
static int launch_op(struct op* o, const struct si_launch* l) {
    memset(o, 0, sizeof *o);
    o->kind = OP_LAUNCH;
    for (size_t k = 0; k < sizeof known / sizeof *known; k++) {
        const struct known* x = &known[k];
        if (!l->name || strcmp(l->name, x->name) || l->nparams != x->nparams) continue;
        int same = 1;
        for (int i = 0; i < x->nparams; i++) same &= l->param_size[i] == x->size[i];
        if (!same) continue;
        if (!l->args) return SI_INVALID_VALUE;
        for (int i = 0; i < x->nparams; i++) {
            if (!l->args[i]) return SI_INVALID_VALUE;
            memcpy(&o->kargs[i], l->args[i], x->size[i]);
        }
        o->kernel = x->run;
        o->threads = (size_t)l->grid[0] * l->grid[1] * l->grid[2] * l->block[0] * l->block[1] * l->block[2];
    }
    return SI_OK;
}

int si_enqueue_kernel(si_stream* s, const struct si_launch* l) {
    struct op o;
    int r = launch_op(&o, l);
    return r ? r : si_enqueue_launch_op(s, l->name, &o);
}

int si_graph_add_kernel(si_node** out, si_graph* g, si_node* const* deps, size_t n, const struct si_launch* l) {
    struct op o;
    int r = launch_op(&o, l);
    if (r) return r;
    if (!o.kernel) o.kind = OP_EMPTY; /* a kernel that does nothing runs as an empty node */
    return si_graph_add_op(out, g, deps, n, &o, 1);
}

int si_graph_set_kernel(si_graph* exec, const void* node, const struct si_launch* l) {
    struct op o;
    int r = launch_op(&o, l);
    if (r) return r;
    if (!o.kernel) o.kind = OP_EMPTY;
    return si_graph_set_op(exec, node, &o);
}
