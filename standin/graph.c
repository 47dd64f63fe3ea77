/* Graphs and stream capture for the stand-in runtimes (see core.h). A graph is its nodes
 * with their dependencies (every dependency names an earlier node, so a graph has no
 * cycle); a launch runs the nodes, on the launch stream, when that stream is waited for,
 * in an order the dependencies allow but otherwise last added first: not the order they
 * were added in, so a graph that lost a dependency computes something else, as it may on
 * a GPU. Capture turns each operation pushed to a capturing stream into a node that
 * depends on the stream's last nodes; an event recorded in the capture carries its nodes to
 * the streams that wait for it (which join the capture). Waiting for a capturing stream
 * invalidates the capture, and EndCapture then fails, as on a GPU; so does a potentially
 * unsafe call (a stream synchronisation, a module load) the capture modes forbid. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "core_internal.h"

struct si_node {
    si_graph* owner;
    size_t index;
    struct op op;    /* what the node does (OP_EMPTY for empty, alloc and free nodes) */
    si_graph* child; /* a child graph node: its own copy of the graph */
    void* memory;    /* an allocation node's reservation; a free node's address */
    int is_alloc, is_free, has_dependent;
    int is_kernel; /* a kernel node (its operation replaceable: si_graph_set_op) */
    si_node** deps;
    size_t ndeps;
};

struct si_graph {
    si_node** nodes;
    size_t n, cap;
    int invalid; /* a capture that was waited for */
    int exec;    /* an executable graph (instantiated) */
    int child;   /* a child-graph node's own copy: its node owns it */
    si_graph* next_live;
};

static si_graph* graphs;
static unsigned long long capture_ids;
static __thread int thread_mode; /* this thread's capture mode: 0 global */

static void link_graph(si_graph* g) {
    g->next_live = graphs;
    graphs = g;
}

int si_graph_create(si_graph** out) {
    if (!out) return SI_INVALID_VALUE;
    si_graph* g = calloc(1, sizeof *g);
    if (!g) return SI_NO_MEMORY;
    link_graph(g);
    *out = g;
    return SI_OK;
}

static si_graph* live(const void* h, int exec) {
    for (si_graph* g = graphs; g; g = g->next_live)
        if (g == h && g->exec == exec) return g;
    return 0;
}
si_graph* si_graph_of(const void* h) { return h ? live(h, 0) : 0; }
si_graph* si_graph_exec_of(const void* h) { return h ? live(h, 1) : 0; }

static int unlink_graph(si_graph* g);

static void free_graph(si_graph* g) {
    for (size_t i = 0; i < g->n; i++) {
        si_node* x = g->nodes[i];
        if (x->child) {
            unlink_graph(x->child);
            free_graph(x->child);
        }
        if (x->is_alloc) si_free(x->memory, SI_DEVICE);
        free(x->deps);
        free(x);
    }
    free(g->nodes);
    free(g);
}

static int unlink_graph(si_graph* g) {
    for (si_graph** p = &graphs; *p; p = &(*p)->next_live)
        if (*p == g) {
            *p = g->next_live;
            return 1;
        }
    return 0;
}

int si_graph_destroy(si_graph* g) {
    if (!g || g->exec || g->child || !unlink_graph(g)) return SI_INVALID_VALUE;
    free_graph(g);
    return SI_OK;
}

int si_graph_exec_destroy(si_graph* x) {
    if (!x || !x->exec) return SI_INVALID_VALUE;
    si_device_sync(); /* a launch still queued runs first */
    if (!unlink_graph(x)) return SI_INVALID_VALUE;
    free_graph(x);
    return SI_OK;
}

/* A new node of g after deps (each must be a node of g). */
static int add(si_node** out, si_graph* g, si_node* const* deps, size_t n, si_node** made) {
    if (!g || (n && !deps)) return SI_INVALID_VALUE;
    for (size_t i = 0; i < n; i++)
        if (!deps[i] || deps[i]->owner != g || deps[i]->index >= g->n || g->nodes[deps[i]->index] != deps[i])
            return SI_INVALID_VALUE;
    if (g->n == g->cap) {
        size_t c = g->cap ? g->cap * 2 : 16;
        si_node** a = realloc(g->nodes, c * sizeof *a);
        if (!a) return SI_NO_MEMORY;
        g->nodes = a;
        g->cap = c;
    }
    si_node* x = calloc(1, sizeof *x);
    if (!x || (n && !(x->deps = malloc(n * sizeof *x->deps)))) {
        free(x);
        return SI_NO_MEMORY;
    }
    for (size_t i = 0; i < n; i++) {
        x->deps[i] = deps[i];
        deps[i]->has_dependent = 1;
    }
    x->ndeps = n;
    x->owner = g;
    x->index = g->n;
    x->op.kind = OP_EMPTY;
    g->nodes[g->n++] = x;
    if (out) *out = x;
    *made = x;
    return SI_OK;
}

int si_graph_add_copy2d(si_node** out, si_graph* g, si_node* const* deps, size_t n, void* dst,
                        size_t dpitch, const void* src, size_t spitch, size_t width, size_t height) {
    if (!out) return SI_INVALID_VALUE;
    si_node* x;
    int r = add(out, g, deps, n, &x);
    if (r) return r;
    x->op = (struct op){.kind = OP_COPY, .dst = dst, .src = src, .dpitch = dpitch, .spitch = spitch,
                        .width = width, .height = height};
    return SI_OK;
}

int si_graph_add_memset2d(si_node** out, si_graph* g, si_node* const* deps, size_t n, void* dst,
                          size_t pitch, int value, size_t width, size_t height, size_t elem) {
    if (!out) return SI_INVALID_VALUE;
    si_node* x;
    int r = add(out, g, deps, n, &x);
    if (r) return r;
    x->op = (struct op){.kind = OP_MEMSET, .dst = dst, .dpitch = pitch, .value = value,
                        .width = width, .height = height, .elem = elem};
    return SI_OK;
}

int si_graph_add_empty(si_node** out, si_graph* g, si_node* const* deps, size_t n) {
    if (!out) return SI_INVALID_VALUE;
    si_node* x;
    return add(out, g, deps, n, &x);
}

int si_graph_add_op(si_node** out, si_graph* g, si_node* const* deps, size_t n, const struct op* o, int kernel) {
    if (!out || !o) return SI_INVALID_VALUE;
    si_node* x;
    int r = add(out, g, deps, n, &x);
    if (r) return r;
    x->op = *o;
    x->op.next = 0;
    x->is_kernel = kernel;
    return SI_OK;
}

int si_graph_add_host(si_node** out, si_graph* g, si_node* const* deps, size_t n, void (*fn)(void*), void* data) {
    if (!fn) return SI_INVALID_VALUE;
    struct op o = {.kind = OP_HOST_FN, .host_fn = fn, .data = data};
    return si_graph_add_op(out, g, deps, n, &o, 0);
}

int si_graph_add_event(si_node** out, si_graph* g, si_node* const* deps, size_t n, si_event* e,
                       int wait) {
    if (!out) return SI_INVALID_VALUE;
    if (!e) return SI_INVALID_HANDLE;
    si_node* x;
    int r = add(out, g, deps, n, &x);
    if (r) return r;
    x->op = (struct op){.kind = wait ? OP_WAIT : OP_EVENT, .event = e};
    return SI_OK;
}

/* A copy of g (its nodes, their operations and edges; child graphs copied too). */
static si_graph* clone_graph(const si_graph* g) {
    si_graph* c = calloc(1, sizeof *c);
    if (!c) return 0;
    for (size_t i = 0; i < g->n; i++) {
        const si_node* s = g->nodes[i];
        si_node* deps[s->ndeps ? s->ndeps : 1];
        for (size_t k = 0; k < s->ndeps; k++) deps[k] = c->nodes[s->deps[k]->index];
        si_node* x;
        if (add(0, c, deps, s->ndeps, &x)) {
            free_graph(c);
            return 0;
        }
        x->op = s->op;
        x->is_free = s->is_free;
        x->is_kernel = s->is_kernel;
        x->memory = s->memory; /* an allocation stays the original graph's */
        if (s->child && !(x->child = clone_graph(s->child))) {
            free_graph(c);
            return 0;
        }
        if (x->child) { /* a handle the program may ask for (cudaGraphChildGraphNodeGetGraph) */
            x->child->child = 1;
            link_graph(x->child);
        }
    }
    return c;
}

int si_graph_add_child(si_node** out, si_graph* g, si_node* const* deps, size_t n, si_graph* child) {
    if (!out || !child || child->exec) return SI_INVALID_VALUE;
    si_graph* copy = clone_graph(child);
    if (!copy) return SI_NO_MEMORY;
    si_node* x;
    int r = add(out, g, deps, n, &x);
    if (r) {
        free_graph(copy);
        return r;
    }
    x->child = copy;
    copy->child = 1;
    link_graph(copy);
    return SI_OK;
}

int si_graph_add_alloc(si_node** out, si_graph* g, si_node* const* deps, size_t n, size_t bytes,
                       void** dptr) {
    if (!out || !dptr || !bytes) return SI_INVALID_VALUE;
    void* p;
    int r = si_alloc(&p, bytes, SI_DEVICE);
    if (r) return r;
    si_node* x;
    if ((r = add(out, g, deps, n, &x))) {
        si_free_now(p, SI_DEVICE);
        return r;
    }
    x->is_alloc = 1;
    x->memory = p;
    *dptr = p;
    return SI_OK;
}

int si_graph_add_free(si_node** out, si_graph* g, si_node* const* deps, size_t n, void* dptr) {
    if (!out || !g || !dptr) return SI_INVALID_VALUE;
    int found = 0;
    for (size_t i = 0; i < g->n; i++) found |= g->nodes[i]->is_alloc && g->nodes[i]->memory == dptr;
    if (!found) return SI_INVALID_VALUE;
    si_node* x;
    int r = add(out, g, deps, n, &x);
    if (r) return r;
    x->is_free = 1;
    x->memory = dptr;
    return SI_OK;
}

int si_graph_instantiate(si_graph** exec, si_graph* g) {
    if (!exec || !g || g->exec) return SI_INVALID_VALUE;
    si_graph* x = clone_graph(g);
    if (!x) return SI_NO_MEMORY;
    x->exec = 1;
    link_graph(x);
    *exec = x;
    return SI_OK;
}

int si_graph_launch(si_graph* x, si_stream* s) {
    if (!x || !x->exec) return SI_INVALID_VALUE;
    if (!s) return SI_INVALID_HANDLE;
    if (s->capture) return SI_CAPTURE_UNSUPPORTED; /* a graph launched into a capture: not modelled */
    struct op* o = calloc(1, sizeof *o);
    if (!o) return SI_NO_MEMORY;
    o->kind = OP_GRAPH;
    o->graph = x;
    return si_enqueue_op(s, o);
}

static void run_node(si_node* n) {
    if (n->child) {
        si_graph_run(n->child);
    } else if (n->op.kind == OP_EVENT) {
        struct op o = n->op;
        o.epoch = ++o.event->epoch;
        o.event->stream = 0;
        si_run_op(&o);
    } else if (n->op.kind == OP_WAIT) {
        si_event_sync(n->op.event);
    } else if (n->op.kind != OP_EMPTY) {
        struct op o = n->op;
        si_run_op(&o);
    }
}

/* The nodes whose dependencies have all run are ready; the last added of them runs next.
 * Every dependency is an earlier node, so one is always ready until all have run. */
void si_graph_run(si_graph* x) {
    char* done = calloc(x->n ? x->n : 1, 1);
    if (!done) return;
    for (size_t left = x->n; left; left--) {
        size_t i = x->n;
        while (i--) {
            int ready = !done[i];
            for (size_t d = 0; ready && d < x->nodes[i]->ndeps; d++) ready = done[x->nodes[i]->deps[d]->index];
            if (ready) break;
        }
        run_node(x->nodes[i]);
        done[i] = 1;
    }
    free(done);
}

/* ---- memcpy-node updates and dependency edges ---- */

/* Whether x is one of g's nodes (a handle checked by value, never dereferenced first). */
static int has_node(const si_graph* g, const void* x) {
    for (size_t i = 0; g && i < g->n; i++)
        if (g->nodes[i] == x) return 1;
    return 0;
}

/* The live graph (not executable) that holds node handle h, or 0. */
static si_graph* owner_of(const void* h) {
    for (si_graph* g = graphs; h && g; g = g->next_live)
        if (!g->exec && has_node(g, h)) return g;
    return 0;
}

int si_graph_set_copy1d(si_graph* exec, const void* node, void* dst, const void* src, size_t count) {
    si_graph* g = owner_of(node);
    if (!g || !count) return SI_INVALID_VALUE;
    si_node* x = (si_node*)node;
    /* An executable graph is a copy of its graph: the node at the same index. */
    if (exec) {
        if (!exec->exec || x->index >= exec->n) return SI_INVALID_VALUE;
        x = exec->nodes[x->index];
    }
    if (x->child || x->op.kind != OP_COPY || x->is_kernel) return SI_INVALID_VALUE;
    x->op.dst = dst;
    x->op.src = src;
    x->op.dpitch = x->op.spitch = x->op.width = count;
    x->op.height = 1;
    return SI_OK;
}

int si_graph_set_op(si_graph* exec, const void* node, const struct op* o) {
    si_graph* g = owner_of(node);
    if (!g || !o) return SI_INVALID_VALUE;
    si_node* x = (si_node*)node;
    if (exec) {
        if (!exec->exec || x->index >= exec->n) return SI_INVALID_VALUE;
        x = exec->nodes[x->index];
    }
    if (!x->is_kernel) return SI_INVALID_VALUE;
    x->op = *o;
    x->op.next = 0;
    return SI_OK;
}

/* A host node's function and data replaced (in its graph, or with exec set in that
 * executable graph). */
int si_graph_set_host(si_graph* exec, const void* node, void (*fn)(void*), void* data) {
    si_graph* g = owner_of(node);
    if (!g || !fn) return SI_INVALID_VALUE;
    si_node* x = (si_node*)node;
    if (exec) {
        if (!exec->exec || x->index >= exec->n) return SI_INVALID_VALUE;
        x = exec->nodes[x->index];
    }
    if (x->op.kind != OP_HOST_FN) return SI_INVALID_VALUE;
    x->op.host_fn = fn;
    x->op.data = data;
    return SI_OK;
}

int si_graph_edges(si_graph* g, si_node* const* from, si_node* const* to, size_t n, int add) {
    if (!g || g->exec || (n && (!from || !to))) return SI_INVALID_VALUE;
    for (size_t i = 0; i < n; i++) {
        if (!has_node(g, from[i]) || !has_node(g, to[i]) || from[i] == to[i]) return SI_INVALID_VALUE;
        int present = 0;
        for (size_t k = 0; k < to[i]->ndeps; k++) present |= to[i]->deps[k] == from[i];
        if (present == add) return SI_INVALID_VALUE; /* a duplicate, or no such edge */
        /* An edge must point back to an earlier node: a graph never holds a cycle. */
        if (add && from[i]->index > to[i]->index) return SI_NOT_SUPPORTED;
    }
    for (size_t i = 0; i < n; i++) {
        si_node* t = to[i];
        if (add) {
            si_node** d = realloc(t->deps, (t->ndeps + 1) * sizeof *d);
            if (!d) return SI_NO_MEMORY;
            t->deps = d;
            t->deps[t->ndeps++] = from[i];
            from[i]->has_dependent = 1;
        } else {
            size_t k = 0;
            while (t->deps[k] != from[i]) k++;
            memmove(t->deps + k, t->deps + k + 1, (t->ndeps - k - 1) * sizeof *t->deps);
            t->ndeps--;
        }
    }
    return SI_OK;
}

/* A graph's nodes in the order they were added (CUDA's rule: null nodes asks for the count;
 * slots past the last node are set null, and the count says how many were written). */
int si_graph_nodes(si_graph* g, void** nodes, size_t* count) {
    if (!g || !count) return SI_INVALID_VALUE;
    if (!nodes) {
        *count = g->n;
        return SI_OK;
    }
    size_t k = *count < g->n ? *count : g->n;
    for (size_t i = 0; i < *count; i++) nodes[i] = i < k ? g->nodes[i] : 0;
    *count = k;
    return SI_OK;
}

/* A child-graph node's graph (the node's own copy, a live handle its node owns). */
int si_graph_child_graph(const void* node, si_graph** out) {
    si_graph* g = owner_of(node);
    if (!g || !out || !((si_node*)node)->child) return SI_INVALID_VALUE;
    *out = ((si_node*)node)->child;
    return SI_OK;
}

/* The graph a node belongs to. */
int si_graph_containing(const void* node, si_graph** out) {
    si_graph* g = owner_of(node);
    if (!g || !out) return SI_INVALID_VALUE;
    *out = g;
    return SI_OK;
}

/* An executable graph's child-graph node (the node at the graph node's index) given a
 * copy of child, which must have as many nodes as the one it replaces (CUDA: the same
 * topology). */
int si_graph_exec_set_child(si_graph* exec, const void* node, si_graph* child) {
    si_graph* g = owner_of(node);
    si_node* x = (si_node*)node;
    if (!exec || !exec->exec || !g || !child || child->exec || !x->child || x->index >= exec->n)
        return SI_INVALID_VALUE;
    si_node* e = exec->nodes[x->index];
    if (!e->child || e->child->n != child->n) return SI_INVALID_VALUE;
    si_graph* copy = clone_graph(child);
    if (!copy) return SI_NO_MEMORY;
    si_device_sync(); /* a launch still queued runs the old one first */
    unlink_graph(e->child);
    free_graph(e->child);
    copy->child = 1;
    link_graph(copy);
    e->child = copy;
    return SI_OK;
}

/* ---- stream capture ---- */

int si_exchange_capture_mode(int* mode) {
    if (!mode || *mode < 0 || *mode > 2) return SI_INVALID_VALUE;
    int old = thread_mode;
    thread_mode = *mode;
    *mode = old;
    return SI_OK;
}

static int set_tails(si_node*** tails, size_t* n, si_node* const* from, size_t k) {
    si_node** t = k ? malloc(k * sizeof *t) : 0;
    if (k && !t) return SI_NO_MEMORY;
    if (k) memcpy(t, from, k * sizeof *t);
    free(*tails);
    *tails = t;
    *n = k;
    return SI_OK;
}

int si_capture_begin(si_stream* s, int mode) {
    if (!s) return SI_INVALID_HANDLE;
    if (mode < 0 || mode > 2) return SI_INVALID_VALUE;
    if (s == si_stream_of(0)) return SI_CAPTURE_UNSUPPORTED; /* the legacy stream cannot capture */
    if (s->capture) return SI_ILLEGAL_STATE;
    si_graph* g;
    int r = si_graph_create(&g);
    if (r) return r;
    s->capture = g;
    s->capture_mode = mode;
    s->capture_origin = 1;
    s->capture_id = ++capture_ids;
    s->capture_thread = pthread_self();
    s->ntails = 0;
    return SI_OK;
}

int si_capture_begin_to(si_stream* s, si_graph* g, si_node* const* deps, size_t n, int mode) {
    if (!s) return SI_INVALID_HANDLE;
    if (!g || g->exec || mode < 0 || mode > 2 || (n && !deps)) return SI_INVALID_VALUE;
    if (s == si_stream_of(0)) return SI_CAPTURE_UNSUPPORTED;
    if (s->capture) return SI_ILLEGAL_STATE;
    for (size_t i = 0; i < n; i++)
        if (!has_node(g, deps[i])) return SI_INVALID_VALUE;
    int r = set_tails(&s->tails, &s->ntails, deps, n);
    if (r) return r;
    s->capture = g;
    s->capture_mode = mode;
    s->capture_origin = 1;
    s->capture_to_graph = 1;
    s->capture_id = ++capture_ids;
    s->capture_thread = pthread_self();
    return SI_OK;
}

/* A capturing stream's next node follows deps instead of (flags 1: set) or besides
 * (flags 0: add) its last nodes; each must be a node of the capture's graph. */
int si_capture_update_deps(si_stream* s, si_node* const* deps, size_t n, unsigned flags) {
    if (!s) return SI_INVALID_HANDLE;
    if (!s->capture) return SI_ILLEGAL_STATE;
    if (flags > 1 || (n && !deps)) return SI_INVALID_VALUE;
    for (size_t i = 0; i < n; i++)
        if (!has_node(s->capture, deps[i])) return SI_INVALID_VALUE;
    if (flags == 1) return set_tails(&s->tails, &s->ntails, deps, n);
    si_node* both[s->ntails + n + 1];
    memcpy(both, s->tails, s->ntails * sizeof *both);
    size_t k = s->ntails;
    for (size_t i = 0; i < n; i++) {
        int dup = 0;
        for (size_t j = 0; j < k; j++) dup |= both[j] == deps[i];
        if (!dup) both[k++] = deps[i];
    }
    return set_tails(&s->tails, &s->ntails, both, k);
}

int si_capture_status(si_stream* s, int* status, unsigned long long* id) {
    if (!s) return SI_INVALID_HANDLE;
    if (!status) return SI_INVALID_VALUE;
    *status = !s->capture ? 0 : s->capture->invalid ? 2 : 1;
    if (id && s->capture) *id = s->capture_id;
    return SI_OK;
}

int si_capture_invalidate(si_graph* g) {
    g->invalid = 1;
    return SI_CAPTURE_UNSUPPORTED;
}

/* The rules of both runtimes' capture modes: a thread in global mode may make no unsafe
 * call while it captures in a mode other than relaxed or another thread captures in
 * global mode; in thread-local mode, only its own captures (not relaxed) forbid it; in
 * relaxed mode nothing does. */
int si_capture_unsafe(void) {
    int r = SI_OK;
    for (si_stream* t = si_all_streams(); t; t = t->next_live) {
        if (!t->capture || !t->capture_origin || t->capture->invalid) continue;
        int mine = pthread_equal(t->capture_thread, pthread_self());
        int forbids = thread_mode == 2 ? 0
                      : mine           ? t->capture_mode != 2
                                       : thread_mode == 0 && t->capture_mode == 0;
        if (forbids) r = si_capture_invalidate(t->capture);
    }
    return r;
}

void si_capture_forget(si_event* e) {
    free(e->cap_deps);
    e->cap_deps = 0;
    e->ncap = 0;
    e->cap_graph = 0;
}

int si_capture_op(si_stream* s, struct op* o) {
    si_graph* g = s->capture;
    int r = SI_OK;
    if (o->kind == OP_WAIT && o->event->cap_graph) {
        si_event* e = o->event;
        if (g && g != e->cap_graph) {
            r = SI_CAPTURE_MERGE;
        } else if (!g) {
            /* The waiting stream joins the capture after the record's nodes. */
            si_stream* origin = 0;
            for (si_stream* t = si_all_streams(); t; t = t->next_live)
                if (t->capture == e->cap_graph && t->capture_origin) origin = t;
            s->capture = e->cap_graph;
            s->capture_mode = origin ? origin->capture_mode : 0;
            s->capture_id = origin ? origin->capture_id : 0;
            s->capture_thread = origin ? origin->capture_thread : pthread_self();
            s->capture_origin = 0;
            r = set_tails(&s->tails, &s->ntails, e->cap_deps, e->ncap);
        } else {
            /* Both: the stream's next node follows its own last nodes and the record's. */
            si_node* both[s->ntails + e->ncap + 1];
            memcpy(both, s->tails, s->ntails * sizeof *both);
            memcpy(both + s->ntails, e->cap_deps, e->ncap * sizeof *both);
            r = set_tails(&s->tails, &s->ntails, both, s->ntails + e->ncap);
        }
        free(o);
        return r;
    }
    if (g->invalid) r = SI_CAPTURE_INVALIDATED;
    else if (o->kind == OP_WAIT && !o->event->epoch) { /* never recorded: nothing to wait for */
        free(o);
        return SI_OK;
    } else if (o->kind == OP_WAIT) r = SI_CAPTURE_ISOLATION; /* an event from outside the capture */
    else if (o->kind == OP_CALLBACK) r = SI_NOT_SUPPORTED; /* stream callbacks cannot be captured */
    if (r) {
        free(o);
        return r;
    }
    si_node* x;
    if ((r = add(0, g, s->tails, s->ntails, &x))) {
        free(o);
        return r;
    }
    x->op = *o;
    x->op.next = 0;
    free(o);
    return set_tails(&s->tails, &s->ntails, &x, 1);
}

/* A stream-ordered allocation made into a capturing stream: an allocation node after the
 * stream's last nodes. Its memory is the graph's, at one address for every launch. */
int si_capture_alloc(si_stream* s, size_t bytes, void** out) {
    if (s->capture->invalid) return SI_CAPTURE_INVALIDATED;
    si_node* x;
    int r = si_graph_add_alloc(&x, s->capture, s->tails, s->ntails, bytes, out);
    return r ? r : set_tails(&s->tails, &s->ntails, &x, 1);
}

/* A stream-ordered free of the capture's own allocation: a free node. */
int si_capture_free(si_stream* s, void* p) {
    if (s->capture->invalid) return SI_CAPTURE_INVALIDATED;
    si_node* x;
    int r = si_graph_add_free(&x, s->capture, s->tails, s->ntails, p);
    return r ? r : set_tails(&s->tails, &s->ntails, &x, 1);
}

/* Whether p is memory a graph's allocation node holds (freed outside the graph, it stays
 * reserved for the graph's next launch). */
int si_graph_memory(const void* p) {
    for (si_graph* g = graphs; g; g = g->next_live)
        for (size_t i = 0; !g->exec && i < g->n; i++)
            if (g->nodes[i]->is_alloc && g->nodes[i]->memory == p) return 1;
    return 0;
}

int si_capture_event(si_stream* s, si_event* e) {
    if (s->capture->invalid) return SI_CAPTURE_INVALIDATED;
    si_capture_forget(e);
    int r = set_tails(&e->cap_deps, &e->ncap, s->tails, s->ntails);
    if (r == SI_OK) e->cap_graph = s->capture;
    return r;
}

int si_capture_end(si_stream* s, si_graph** out) {
    if (!s) return SI_INVALID_HANDLE;
    if (!out) return SI_INVALID_VALUE;
    si_graph* g = s->capture;
    if (!g) return SI_ILLEGAL_STATE;
    if (!s->capture_origin) return SI_CAPTURE_UNMATCHED;
    /* Every stream that joined must have rejoined the origin: each of its last nodes is
     * something a later node (or the origin's last nodes) depends on. */
    int unjoined = 0;
    for (si_stream* t = si_all_streams(); t; t = t->next_live) {
        if (t->capture != g || t == s) continue;
        for (size_t i = 0; i < t->ntails; i++) {
            int in_origin = 0;
            for (size_t k = 0; k < s->ntails; k++) in_origin |= s->tails[k] == t->tails[i];
            if (!t->tails[i]->has_dependent && !in_origin) unjoined = 1;
        }
    }
    int to_graph = s->capture_to_graph;
    s->capture_to_graph = 0;
    for (si_stream* t = si_all_streams(); t; t = t->next_live)
        if (t->capture == g) {
            t->capture = 0;
            t->capture_origin = 0;
            set_tails(&t->tails, &t->ntails, 0, 0);
        }
    for (si_event* e = si_all_events(); e; e = e->next_live)
        if (e->cap_graph == g) si_capture_forget(e);
    *out = 0;
    if (g->invalid || unjoined) {
        int r = g->invalid ? SI_CAPTURE_INVALIDATED : SI_CAPTURE_UNJOINED;
        if (to_graph)
            g->invalid = 0; /* the program's graph stays the program's */
        else
            si_graph_destroy(g);
        return r;
    }
    *out = g;
    return SI_OK;
}

static const struct si_graph_hooks hooks = {
    si_capture_op, si_capture_event, si_capture_forget, si_capture_invalidate, si_graph_run, si_capture_unsafe,
};

__attribute__((constructor)) static void install_graph_hooks(void) { si_set_graph_hooks(&hooks); }
