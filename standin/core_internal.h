/* What core.c shares with graph.c (graphs and stream capture), on_request.c and kernels.c
 * (kernels run on the host) alone: the queued operation, the stream and the event. Vendor
 * files use core.h. */
#pragma once
#include <pthread.h>
#include <time.h>

#include "core.h"

/* The most 8-byte argument words of a kernel the stand-in runs (kernels.c). */
#define SI_HOST_KERNEL_ARGS 4

enum op_kind { OP_COPY, OP_MEMSET, OP_LAUNCH, OP_EVENT, OP_WAIT, OP_HOST_FN, OP_CALLBACK, OP_GRAPH, OP_EMPTY };
struct op {
    enum op_kind kind;
    struct op* next;
    char* dst;
    const char* src;
    size_t dpitch, spitch, width, height, elem;
    int value;
    si_event* event;
    uint64_t epoch;
    void (*host_fn)(void*);
    void (*callback)(void*, int, void*);
    void *handle, *data;
    si_graph* graph; /* OP_GRAPH: the executable graph run */
    /* OP_LAUNCH of a kernel the stand-in runs (kernels.c): its body, its argument words
     * (copied when the launch or node was made), its threads (grid times block). */
    void (*kernel)(const struct op* o);
    uint64_t kargs[SI_HOST_KERNEL_ARGS];
    size_t threads;
};

/* The most operations a stream holds (core.c's push runs the oldest past it). */
#define SI_MAX_QUEUED 1024
struct si_stream {
    unsigned flags; /* bit 0: non-blocking (does not wait for the null stream) */
    int device;     /* the device current when it was made */
    struct op *head, *tail;
    size_t queued; /* operations in the queue */
    si_stream* next_live;
    /* Stream capture (graph.c): the graph this stream's work goes to, its mode, whether it
     * began the capture, and the nodes its next operation depends on. */
    si_graph* capture;
    int capture_mode, capture_origin;
    int capture_to_graph; /* the origin captures into the program's own graph */
    pthread_t capture_thread; /* the thread that began the capture */
    unsigned long long capture_id;
    si_node** tails;
    size_t ntails;
};
struct si_event {
    unsigned timing;
    int device; /* the device current when it was made */
    si_stream* stream;
    uint64_t epoch, done_epoch;
    struct timespec at;
    si_event* next_live;
    /* Recorded in a capturing stream: the capture's graph and the nodes the record follows. */
    si_graph* cap_graph;
    si_node** cap_deps;
    size_t ncap;
};


/* Runs one operation now (graph launches run their nodes' operations through it). */
void si_run_op(struct op* o);
/* Queues a launch of the kernel named so, doing what body does (a copy is queued; null:
 * nothing), on s. */
int si_enqueue_launch_op(si_stream* s, const char* kernel, const struct op* body);
/* graph.c: a node doing o (copied); kernel: a kernel node, whose operation
 * si_graph_set_op may replace (in its graph, or with exec set in that executable graph). */
int si_graph_add_op(si_node** out, si_graph* g, si_node* const* deps, size_t n, const struct op* o, int kernel);
int si_graph_set_op(si_graph* exec, const void* node, const struct op* o);
/* Queues o (calloc'd; taken) on s, as every enqueue does. */
int si_enqueue_op(si_stream* s, struct op* o);
si_stream* si_all_streams(void);
si_event* si_all_events(void);

/* graph.c: an operation pushed to a capturing stream (or a wait on a captured event)
 * becomes a node; takes o. */
int si_capture_op(si_stream* s, struct op* o);
/* An event recorded in a capturing stream. */
int si_capture_event(si_stream* s, si_event* e);
/* An event recorded outside any capture no longer names captured nodes. */
void si_capture_forget(si_event* e);
/* Marks the capture invalid (a wait for a capturing stream); returns the error to give. */
int si_capture_invalidate(si_graph* g);
/* Runs an executable graph's nodes in dependency order. */
void si_graph_run(si_graph* x);

/* What core asks of graph.c. graph.c is built on core (it queues and runs core's
 * operations), so core reaches it only through these hooks, which graph.c installs when
 * the library is loaded: the dependency runs one way. */
struct si_graph_hooks {
    int (*capture_op)(si_stream* s, struct op* o);
    int (*capture_event)(si_stream* s, si_event* e);
    void (*capture_forget)(si_event* e);
    int (*capture_invalidate)(si_graph* g);
    void (*graph_run)(si_graph* x);
    int (*capture_unsafe)(void);
};
void si_set_graph_hooks(const struct si_graph_hooks* h);

/* What core asks of on_request.c (behaviour on request by environment variable), through
 * hooks it installs when the library is loaded: a program's device synchronisation (a
 * hang, a fault made sticky; returns si_sticky), a refused out-of-bounds range (its log
 * line), a double free (its abort), a device-to-host result just written (varied, skewed). */
struct si_request_hooks {
    int (*sync)(void);
    void (*out_of_bounds)(const void* p, size_t n);
    void (*double_free)(const void* p);
    void (*result)(struct op* o);
};
void si_set_request_hooks(const struct si_request_hooks* h);
