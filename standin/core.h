/* The vendor-neutral core of the stand-in runtimes (standin/hip.c, standin/cuda.c): a
 * device whose memory is host memory, streams that run their work in order when waited
 * for, events, and a count of kernel launches (no GPU code runs; kernels.c runs the few
 * kernels the stand-in knows by name on the host, below). Every check a GPU runtime
 * makes on a range, handle or configuration is made here and fails with the error code
 * both vendors give it (their numbers agree for everything used here). */
#pragma once
#include <stddef.h>
#include <stdint.h>

enum si_err {
    SI_OK = 0,
    SI_INVALID_VALUE = 1,
    SI_NO_MEMORY = 2,
    SI_INVALID_CONFIG = 9,
    SI_INVALID_SYMBOL = 13,
    SI_INVALID_DEVPTR = 17,
    SI_INVALID_DIRECTION = 21,
    SI_INVALID_DEVICE_FUNCTION = 98,
    SI_INVALID_DEVICE = 101,
    SI_INVALID_IMAGE = 200,
    SI_NO_BINARY = 209,
    SI_INVALID_HANDLE = 400,
    SI_ILLEGAL_STATE = 401,
    SI_NOT_FOUND = 500,
    SI_NOT_READY = 600,
    SI_ALREADY_REGISTERED = 712,
    SI_NOT_REGISTERED = 713,
    SI_COOPERATIVE_TOO_LARGE = 720,
    SI_NOT_SUPPORTED = 801,
    SI_CAPTURE_UNSUPPORTED = 900,
    SI_CAPTURE_INVALIDATED = 901,
    SI_CAPTURE_MERGE = 902,
    SI_CAPTURE_UNMATCHED = 903,
    SI_CAPTURE_UNJOINED = 904,
    SI_CAPTURE_ISOLATION = 905,
    SI_CAPTURED_EVENT = 907,
};

/* The stand-in device's memory, the figure properties report: 16 GiB, or
 * $HRR_STAND_IN_DEVICE_MEMORY. */
size_t si_device_memory(void);

enum si_mem { SI_DEVICE, SI_PINNED, SI_REGISTERED, SI_SYMBOL };

/* Every exported function takes the one lock (recursive: a host callback run while a
 * stream drains may call the runtime). */
void si_lock(void);
void si_unlock(void);

/* Memory. Device memory is mapped pages of its own: freed, its addresses stay reserved and
 * inaccessible, so a later use of a freed device pointer is refused (SI_INVALID_VALUE), never
 * a use of someone else's memory (the last 4096 freed ranges are kept so). */
int si_alloc(void** out, size_t n, enum si_mem kind);
int si_free(void* p, enum si_mem kind);
/* Frees without waiting for the device (a stream-ordered free, run in its stream's order). */
int si_free_now(void* p, enum si_mem kind);
/* Device memory someone else owns (a VMM mapping): in the table, never freed by it. */
int si_add_device_range(void* p, size_t n);
void si_remove_device_range(void* p);
int si_register(void* p, size_t n);
int si_unregister(void* p);
/* The live allocation containing p, its kind, and the bytes from p to its end; 0 if none. */
int si_lookup(const void* p, enum si_mem* kind, size_t* left);
/* Whether p lies in a freed device allocation (still reserved). */
int si_freed(const void* p);
/* Copy kinds as both vendors number them: 0 H2H, 1 H2D, 2 D2H, 3 D2D, 4 default. */
int si_check_copy(void* dst, size_t dspan, const void* src, size_t sspan, int kind);
/* A device reset: waits for all work, then frees device and pinned memory and destroys
 * every stream and event (registered host memory and variables stay). */
void si_reset_device(void);
/* Device memory allocated now. */
size_t si_device_bytes(void);

/* Virtual memory management (vmm.c): reserved ranges, physical memory handles mapped
 * into them, access. Sizes, offsets and mapped addresses are multiples of the
 * granularity. */
#define SI_VMM_GRANULARITY ((size_t)2 << 20)
size_t si_vmm_granularity(void);
int si_vmm_reserve(void** out, size_t n, size_t align, const void* hint);
int si_vmm_free(void* p, size_t n);
int si_vmm_create(uint64_t* out, size_t n, int location_type, int location_id);
int si_vmm_release(uint64_t handle);
int si_vmm_retain(uint64_t* out, const void* addr);
int si_vmm_map(void* p, size_t n, size_t offset, uint64_t handle);
int si_vmm_unmap(void* p, size_t n);
int si_vmm_set_access(void* p, size_t n, const int32_t* descs, size_t count);

/* The device current on this thread (CUDA's cudaSetDevice; HIP has device 0 only). A
 * stream or event belongs to the device current when it was made; an event records on a
 * stream of its own device only. */
extern __thread int si_device_now;
/* How many devices the CUDA side has: $HRR_STAND_IN_DEVICES (1 or 2), else 1. One address
 * space serves them all: memory is not per device here. */
int si_devices(void);

/* Streams: 0 is the null (legacy) stream. */
typedef struct si_stream si_stream;
typedef struct si_event si_event;
/* The device a stream belongs to (the null stream: the current device's). */
int si_stream_device(si_stream* s);
int si_stream_create(si_stream** out, unsigned flags);
int si_stream_destroy(si_stream* s);
/* The stream a handle names (null and the vendors' legacy/per-thread values: the null
 * stream); 0 for a handle this runtime never made. */
si_stream* si_stream_of(const void* handle);
int si_stream_sync(si_stream* s);
int si_stream_query(si_stream* s);
void si_device_sync(void);
/* A program's device synchronize: refused (and every open capture invalidated) while a
 * stream is capturing, as both runtimes do. */
int si_device_sync_checked(void);
/* Work placed on a stream, run in order when the stream is waited for. */
int si_enqueue_copy2d(si_stream* s, void* dst, size_t dpitch, const void* src, size_t spitch,
                      size_t width, size_t height);
int si_enqueue_memset2d(si_stream* s, void* dst, size_t pitch, int value, size_t width,
                        size_t height, size_t elem);
int si_enqueue_launch(si_stream* s, const char* kernel);

/* Kernels the stand-in runs (kernels.c). A launch is a kernel's name and parameter sizes
 * (from its code object), its grid and block, and its argument pointers (each at its
 * parameter's bytes; null where the caller has none). A kernel known by name and layout
 * (kernels.c's table: `hrr_xor_bytes(unsigned char* p, unsigned long long key)`, thread i
 * xors p[i] with the key's low byte) runs its body on the host, over the bytes, when the
 * launch or the graph kernel node runs, its arguments read when the launch or node was
 * made; any other kernel does nothing (a launch is counted, a node is an empty node). */
typedef struct si_graph si_graph;
typedef struct si_node si_node;
struct si_launch {
    const char* name;
    int nparams;
    const uint32_t* param_size;
    unsigned grid[3], block[3];
    void** args;
};
int si_enqueue_kernel(si_stream* s, const struct si_launch* l);
int si_graph_add_kernel(si_node** out, si_graph* g, si_node* const* deps, size_t n, const struct si_launch* l);
/* A kernel node's launch replaced: in its graph, or (exec set) in that executable graph. */
int si_graph_set_kernel(si_graph* exec, const void* node, const struct si_launch* l);
int si_enqueue_host_fn(si_stream* s, void (*fn)(void*), void* data);
int si_enqueue_stream_callback(si_stream* s, void (*fn)(void*, int, void*), void* handle,
                               void* data);
/* A blocking call of the legacy stream: waits for the null stream and every blocking
 * stream, as a synchronous copy does. */
void si_legacy_sync(void);

int si_event_create(si_event** out, unsigned timing);
int si_event_destroy(si_event* e);
si_event* si_event_of(const void* handle);
int si_event_record(si_event* e, si_stream* s);
int si_event_sync(si_event* e);
/* HIP's rule (clr's hip_event.cpp): an event whose last record was on a created stream
 * that is capturing now may be neither waited for nor queried: the capture is invalidated
 * and SI_CAPTURED_EVENT returned (SI_OK: the call may go on). CUDA has no such rule. */
int si_hip_event_capture_check(si_event* e);
int si_event_query(si_event* e);
int si_event_elapsed(float* ms, si_event* a, si_event* b);
int si_stream_wait_event(si_stream* s, si_event* e);

/* A kernel fault, on request: a kernel whose name holds `hrr_fault_` and a number (a
 * case's `oob_write_hrr_fault_700`) "faults" with that error when its launch runs, as a
 * GPU's kernel would. From then on every call returns it (a sticky error: the RET
 * macros), and none of them does anything. 0: no fault. */
extern int si_sticky;

/* Counters for the exit report. */
struct si_counts {
    uint64_t launches, copies, copied_bytes, memsets, code_objects, kernels;
};
extern struct si_counts si_counts;
/* Appends one line to $HRR_STAND_IN_LOG at exit (if set): what this process did. */
void si_report_at_exit(const char* vendor, const char* arch);

/* Graphs (graph.c): nodes holding the operations a stream would run, with dependencies;
 * a launch runs a graph's nodes in an order that honours them, on the launch stream. */
typedef struct si_graph si_graph;
typedef struct si_node si_node;
int si_graph_create(si_graph** out);
si_graph* si_graph_of(const void* handle);
int si_graph_destroy(si_graph* g);
si_graph* si_graph_exec_of(const void* handle);
int si_graph_instantiate(si_graph** exec, si_graph* g);
int si_graph_exec_destroy(si_graph* x);
int si_graph_launch(si_graph* x, si_stream* s);
/* Adding nodes: deps are n node handles of g. */
int si_graph_add_copy2d(si_node** out, si_graph* g, si_node* const* deps, size_t n, void* dst,
                        size_t dpitch, const void* src, size_t spitch, size_t width, size_t height);
int si_graph_add_memset2d(si_node** out, si_graph* g, si_node* const* deps, size_t n, void* dst,
                          size_t pitch, int value, size_t width, size_t height, size_t elem);
int si_graph_add_empty(si_node** out, si_graph* g, si_node* const* deps, size_t n);
int si_graph_add_event(si_node** out, si_graph* g, si_node* const* deps, size_t n, si_event* e,
                       int wait);
/* A host node: fn(data) runs on the host when the node runs. */
int si_graph_add_host(si_node** out, si_graph* g, si_node* const* deps, size_t n, void (*fn)(void*), void* data);
int si_graph_add_child(si_node** out, si_graph* g, si_node* const* deps, size_t n, si_graph* child);
int si_graph_child_graph(const void* node, si_graph** out);
int si_graph_set_host(si_graph* exec, const void* node, void (*fn)(void*), void* data);
int si_graph_nodes(si_graph* g, void** nodes, size_t* count);
int si_graph_containing(const void* node, si_graph** out);
int si_graph_exec_set_child(si_graph* exec, const void* node, si_graph* child);
/* Graph memory (CUDA): an allocation node reserves device memory for the graph's life and
 * returns its address; a free node must name an allocation node's address in g. */
/* Stream-ordered memory in a capturing stream: allocation and free nodes (graph.c). */
int si_capture_alloc(si_stream* s, size_t bytes, void** out);
int si_capture_free(si_stream* s, void* p);
/* Whether p is a graph's memory (an allocation node's). */
int si_graph_memory(const void* p);
int si_graph_add_alloc(si_node** out, si_graph* g, si_node* const* deps, size_t n, size_t bytes,
                       void** dptr);
int si_graph_add_free(si_node** out, si_graph* g, si_node* const* deps, size_t n, void* dptr);
/* A memcpy node's new 1D copy: in its graph, or (exec set) in that executable graph. */
int si_graph_set_copy1d(si_graph* exec, const void* node, void* dst, const void* src, size_t count);
/* n edges from[i] -> to[i] of g added (add) or removed; an added edge must point back to an
 * earlier node (a graph never holds a cycle), else SI_NOT_SUPPORTED. */
int si_graph_edges(si_graph* g, si_node* const* from, si_node* const* to, size_t n, int add);
/* Stream capture. Modes as both vendors number them: 0 global, 1 thread-local, 2 relaxed. */
int si_capture_begin(si_stream* s, int mode);
/* Capture into the program's graph g, after its nodes deps (CUDA 12.3+). */
int si_capture_begin_to(si_stream* s, si_graph* g, si_node* const* deps, size_t n, int mode);
int si_capture_update_deps(si_stream* s, si_node* const* deps, size_t n, unsigned flags);
int si_capture_end(si_stream* s, si_graph** out);
/* Status as both vendors number it: 0 none, 1 active, 2 invalidated. */
int si_capture_status(si_stream* s, int* status, unsigned long long* id);
int si_exchange_capture_mode(int* mode);
/* A potentially unsafe call (a stream synchronisation, a module load) made by this thread
 * while captures are open: 0 where the capture modes allow it; else the capture that
 * forbids it is invalidated and the error to give is returned. */
int si_capture_unsafe(void);

/* Stream-ordered memory pools (pool.c). The default pool is the device's from the start. */
typedef struct si_pool si_pool;
si_pool* si_pool_default(void);
si_pool* si_pool_current(void);
int si_pool_set_current(si_pool* p);
si_pool* si_pool_of(const void* handle);
int si_pool_create(si_pool** out);
int si_pool_destroy(si_pool* p);
/* The shareable handle types a pool may be exported as (its creation's properties); an
 * export (POSIX file descriptors only here: one of /dev/null) and a pointer's export data
 * (64 bytes) for another process. */
void si_pool_set_handle_types(si_pool* p, unsigned types);
int si_pool_export(si_pool* p, unsigned type, int* fd);
int si_pool_export_pointer(const void* ptr, void* data);
int si_pool_alloc(void** out, size_t n, si_pool* p, si_stream* s);
int si_pool_free(void* ptr, si_stream* s);
/* Attributes as both vendors number them (1-3 reuse flags: int; 4-8: uint64). */
int si_pool_set_attr(si_pool* p, int attr, const void* value);
int si_pool_get_attr(si_pool* p, int attr, void* value);
int si_pool_trim(si_pool* p, size_t keep);
