/* The stand-in CUDA runtime's graphs, stream capture, stream-ordered memory pools and
 * device settings (flags, cache configuration, limits), over graph.c and pool.c (see
 * core.h). Declared by CUDA 13's headers. */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <stdint.h>

#include "core.h"
#include "cuda_internal.h"

_Static_assert((int)cudaErrorStreamCaptureUnsupported == SI_CAPTURE_UNSUPPORTED &&
                   (int)cudaErrorStreamCaptureInvalidated == SI_CAPTURE_INVALIDATED &&
                   (int)cudaErrorStreamCaptureMerge == SI_CAPTURE_MERGE &&
                   (int)cudaErrorStreamCaptureUnmatched == SI_CAPTURE_UNMATCHED &&
                   (int)cudaErrorStreamCaptureUnjoined == SI_CAPTURE_UNJOINED &&
                   (int)cudaErrorStreamCaptureIsolation == SI_CAPTURE_ISOLATION &&
                   (int)cudaErrorCapturedEvent == SI_CAPTURED_EVENT &&
                   (int)cudaErrorIllegalState == SI_ILLEGAL_STATE &&
                   (int)cudaErrorCooperativeLaunchTooLarge == SI_COOPERATIVE_TOO_LARGE &&
                   (int)cudaStreamCaptureModeRelaxed == 2 && (int)cudaStreamCaptureStatusInvalidated == 2 &&
                   (int)cudaMemPoolAttrUsedMemHigh == 8,
               "CUDA's capture numbers are the core's");

/* ---- device settings ---- */

static unsigned device_flags, cache_config;
/* Stack, printf FIFO, malloc heap, runtime sync depth, pending launches, L2 fetch
 * granularity, persisting L2: what a fresh H100-class device reports. */
static size_t limits[7] = {1024, 1 << 20, 8 << 20, 2, 2048, 64, 0};
cudaError_t cudaSetDeviceFlags(unsigned f) {
    ENTER;
    unsigned sched = f & cudaDeviceScheduleMask;
    if ((f & ~(cudaDeviceMask)) || (sched & (sched - 1))) RET(cudaErrorInvalidValue);
    device_flags = f;
    RET(cudaSuccess);
}
cudaError_t cudaGetDeviceFlags(unsigned* f) {
    ENTER;
    if (!f) RET(cudaErrorInvalidValue);
    *f = device_flags | cudaDeviceMapHost; /* mapping is always on */
    RET(cudaSuccess);
}
cudaError_t cudaDeviceSetCacheConfig(enum cudaFuncCache c) {
    ENTER;
    if ((unsigned)c > cudaFuncCachePreferEqual) RET(cudaErrorInvalidValue);
    cache_config = (unsigned)c;
    RET(cudaSuccess);
}
cudaError_t cudaDeviceGetCacheConfig(enum cudaFuncCache* c) {
    ENTER;
    if (!c) RET(cudaErrorInvalidValue);
    *c = (enum cudaFuncCache)cache_config;
    RET(cudaSuccess);
}
cudaError_t cudaDeviceSetLimit(enum cudaLimit l, size_t v) {
    ENTER;
    if ((unsigned)l >= 7) RET(cudaErrorUnsupportedLimit);
    if (l == cudaLimitMaxL2FetchGranularity && (v > 128 || (v & (v - 1)))) RET(cudaErrorInvalidValue);
    if (l == cudaLimitStackSize) v = (v + 15) & ~(size_t)15; /* rounded up, as the driver does */
    limits[l] = v;
    RET(cudaSuccess);
}
cudaError_t cudaDeviceGetLimit(size_t* v, enum cudaLimit l) {
    ENTER;
    if (!v) RET(cudaErrorInvalidValue);
    if ((unsigned)l >= 7) RET(cudaErrorUnsupportedLimit);
    *v = limits[l];
    RET(cudaSuccess);
}

/* ---- stream capture ---- */

cudaError_t cudaStreamBeginCapture(cudaStream_t s, enum cudaStreamCaptureMode mode) {
    ENTER;
    RET(si_capture_begin(si_stream_of(s), (int)mode));
}
cudaError_t cudaStreamBeginCaptureToGraph(cudaStream_t s, cudaGraph_t g, const cudaGraphNode_t* d,
                                          const cudaGraphEdgeData* e, size_t n, enum cudaStreamCaptureMode mode) {
    ENTER;
    if (e) RET(cudaErrorNotSupported); /* edge data: not modelled */
    RET(si_capture_begin_to(si_stream_of(s), si_graph_of(g), (si_node* const*)d, n, (int)mode));
}
cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t* g) {
    ENTER;
    RET(si_capture_end(si_stream_of(s), (si_graph**)g));
}
cudaError_t cudaStreamIsCapturing(cudaStream_t s, enum cudaStreamCaptureStatus* st) {
    ENTER;
    RET(si_capture_status(si_stream_of(s), (int*)st, 0));
}
/* The graph and dependency outputs are not modelled: asking for them fails, never lies. */
cudaError_t cudaStreamGetCaptureInfo(cudaStream_t s, enum cudaStreamCaptureStatus* st, unsigned long long* id,
                                     cudaGraph_t* g, const cudaGraphNode_t** deps, const cudaGraphEdgeData** edges,
                                     size_t* n) {
    ENTER;
    if (g || deps || edges || n) RET(cudaErrorNotSupported);
    RET(si_capture_status(si_stream_of(s), (int*)st, id));
}
cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode* mode) {
    ENTER;
    RET(si_exchange_capture_mode((int*)mode));
}

/* ---- graphs ---- */

#define NODES(d) ((si_node* const*)(d))

cudaError_t cudaGraphCreate(cudaGraph_t* g, unsigned flags) {
    ENTER;
    if (flags) RET(cudaErrorInvalidValue);
    RET(si_graph_create((si_graph**)g));
}
cudaError_t cudaGraphDestroy(cudaGraph_t g) { ENTER; RET(si_graph_destroy(si_graph_of(g))); }
cudaError_t cudaGraphAddHostNode(cudaGraphNode_t* out, cudaGraph_t g, const cudaGraphNode_t* d, size_t n,
                                 const struct cudaHostNodeParams* p) {
    ENTER;
    if (!p) RET(cudaErrorInvalidValue);
    RET(si_graph_add_host((si_node**)out, si_graph_of(g), NODES(d), n, p->fn, p->userData));
}
cudaError_t cudaGraphHostNodeSetParams(cudaGraphNode_t node, const struct cudaHostNodeParams* p) {
    ENTER;
    if (!p) RET(cudaErrorInvalidValue);
    RET(si_graph_set_host(0, node, p->fn, p->userData));
}
cudaError_t cudaGraphExecHostNodeSetParams(cudaGraphExec_t x, cudaGraphNode_t node, const struct cudaHostNodeParams* p) {
    ENTER;
    if (!p) RET(cudaErrorInvalidValue);
    RET(si_graph_set_host(si_graph_exec_of(x), node, p->fn, p->userData));
}
cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t* out, cudaGraph_t g, const cudaGraphNode_t* d, size_t n) {
    ENTER;
    RET(si_graph_add_empty((si_node**)out, si_graph_of(g), NODES(d), n));
}
cudaError_t cudaGraphAddMemcpyNode1D(cudaGraphNode_t* out, cudaGraph_t g, const cudaGraphNode_t* d, size_t n,
                                     void* dst, const void* src, size_t count, enum cudaMemcpyKind k) {
    ENTER;
    if (!count) RET(cudaErrorInvalidValue);
    int r = si_check_copy(dst, count, src, count, (int)k);
    if (r) RET(r);
    RET(si_graph_add_copy2d((si_node**)out, si_graph_of(g), NODES(d), n, dst, count, src, count, count, 1));
}
cudaError_t cudaGraphMemcpyNodeSetParams1D(cudaGraphNode_t node, void* dst, const void* src, size_t count,
                                           enum cudaMemcpyKind k) {
    ENTER;
    int r = si_check_copy(dst, count, src, count, (int)k);
    if (r) RET(r);
    RET(si_graph_set_copy1d(0, node, dst, src, count));
}
cudaError_t cudaGraphExecMemcpyNodeSetParams1D(cudaGraphExec_t x, cudaGraphNode_t node, void* dst,
                                               const void* src, size_t count, enum cudaMemcpyKind k) {
    ENTER;
    si_graph* exec = si_graph_exec_of(x);
    if (!exec) RET(cudaErrorInvalidValue);
    int r = si_check_copy(dst, count, src, count, (int)k);
    if (r) RET(r);
    RET(si_graph_set_copy1d(exec, node, dst, src, count));
}
/* Edge data: only the default edge (all zero) is modelled. */
static int default_edges(const cudaGraphEdgeData* e, size_t n) {
    for (size_t i = 0; e && i < n; i++)
        if (e[i].from_port || e[i].to_port || e[i].type) return 0;
    return 1;
}
cudaError_t cudaGraphAddDependencies(cudaGraph_t g, const cudaGraphNode_t* from, const cudaGraphNode_t* to,
                                     const cudaGraphEdgeData* e, size_t n) {
    ENTER;
    if (!default_edges(e, n)) RET(cudaErrorNotSupported);
    RET(si_graph_edges(si_graph_of(g), NODES(from), NODES(to), n, 1));
}
cudaError_t cudaGraphRemoveDependencies(cudaGraph_t g, const cudaGraphNode_t* from, const cudaGraphNode_t* to,
                                        const cudaGraphEdgeData* e, size_t n) {
    ENTER;
    if (!default_edges(e, n)) RET(cudaErrorNotSupported);
    RET(si_graph_edges(si_graph_of(g), NODES(from), NODES(to), n, 0));
}
cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t* out, cudaGraph_t g, const cudaGraphNode_t* d, size_t n,
                                   const struct cudaMemsetParams* p) {
    ENTER;
    if (!p || (p->elementSize != 1 && p->elementSize != 2 && p->elementSize != 4) || !p->width || !p->height)
        RET(cudaErrorInvalidValue);
    size_t row = p->width * p->elementSize, left;
    if (p->height > 1 && p->pitch < row) RET(cudaErrorInvalidValue);
    size_t pitch = p->height > 1 ? p->pitch : row;
    enum si_mem kind;
    if (!si_lookup(p->dst, &kind, &left) || (p->height - 1) * pitch + row > left) RET(cudaErrorInvalidValue);
    RET(si_graph_add_memset2d((si_node**)out, si_graph_of(g), NODES(d), n, p->dst, pitch, (int)p->value,
                              p->width, p->height, p->elementSize));
}
cudaError_t cudaGraphAddEventRecordNode(cudaGraphNode_t* out, cudaGraph_t g, const cudaGraphNode_t* d, size_t n,
                                        cudaEvent_t e) {
    ENTER;
    RET(si_graph_add_event((si_node**)out, si_graph_of(g), NODES(d), n, si_event_of(e), 0));
}
cudaError_t cudaGraphAddEventWaitNode(cudaGraphNode_t* out, cudaGraph_t g, const cudaGraphNode_t* d, size_t n,
                                      cudaEvent_t e) {
    ENTER;
    RET(si_graph_add_event((si_node**)out, si_graph_of(g), NODES(d), n, si_event_of(e), 1));
}
cudaError_t cudaGraphAddChildGraphNode(cudaGraphNode_t* out, cudaGraph_t g, const cudaGraphNode_t* d, size_t n,
                                       cudaGraph_t child) {
    ENTER;
    RET(si_graph_add_child((si_node**)out, si_graph_of(g), NODES(d), n, si_graph_of(child)));
}
cudaError_t cudaGraphGetNodes(cudaGraph_t g, cudaGraphNode_t* nodes, size_t* count) {
    ENTER;
    RET(si_graph_nodes(si_graph_of(g), (void**)nodes, count));
}
cudaError_t cudaGraphChildGraphNodeGetGraph(cudaGraphNode_t node, cudaGraph_t* g) {
    ENTER;
    RET(si_graph_child_graph(node, (si_graph**)g));
}
cudaError_t cudaGraphNodeGetContainingGraph(cudaGraphNode_t node, cudaGraph_t* g) {
    ENTER;
    RET(si_graph_containing(node, (si_graph**)g));
}
cudaError_t cudaGraphExecChildGraphNodeSetParams(cudaGraphExec_t x, cudaGraphNode_t node, cudaGraph_t child) {
    ENTER;
    RET(si_graph_exec_set_child(si_graph_exec_of(x), node, si_graph_of(child)));
}
/* Edge data is not modelled: asking for it fails, never lies. */
cudaError_t cudaStreamUpdateCaptureDependencies(cudaStream_t s, cudaGraphNode_t* d, const cudaGraphEdgeData* data,
                                                size_t n, unsigned flags) {
    ENTER;
    if (data) RET(cudaErrorNotSupported);
    RET(si_capture_update_deps(si_stream_of(s), NODES(d), n, flags));
}
cudaError_t cudaGraphAddMemAllocNode(cudaGraphNode_t* out, cudaGraph_t g, const cudaGraphNode_t* d, size_t n,
                                     struct cudaMemAllocNodeParams* p) {
    ENTER;
    if (!p || p->poolProps.allocType != cudaMemAllocationTypePinned ||
        p->poolProps.location.type != cudaMemLocationTypeDevice)
        RET(cudaErrorInvalidValue);
    if (p->poolProps.location.id != 0) RET(cudaErrorInvalidDevice);
    RET(si_graph_add_alloc((si_node**)out, si_graph_of(g), NODES(d), n, p->bytesize, &p->dptr));
}
cudaError_t cudaGraphAddMemFreeNode(cudaGraphNode_t* out, cudaGraph_t g, const cudaGraphNode_t* d, size_t n,
                                    void* dptr) {
    ENTER;
    RET(si_graph_add_free((si_node**)out, si_graph_of(g), NODES(d), n, dptr));
}
cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t* x, cudaGraph_t g, unsigned long long flags) {
    ENTER;
    if (flags & ~(unsigned long long)(cudaGraphInstantiateFlagAutoFreeOnLaunch | cudaGraphInstantiateFlagUseNodePriority))
        RET(cudaErrorInvalidValue);
    RET(si_graph_instantiate((si_graph**)x, si_graph_of(g)));
}
cudaError_t cudaGraphInstantiate(cudaGraphExec_t* x, cudaGraph_t g, unsigned long long flags) {
    return cudaGraphInstantiateWithFlags(x, g, flags);
}
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t x) { ENTER; RET(si_graph_exec_destroy(si_graph_exec_of(x))); }
cudaError_t cudaGraphLaunch(cudaGraphExec_t x, cudaStream_t s) {
    ENTER;
    RET(si_graph_launch(si_graph_exec_of(x), si_stream_of(s)));
}

/* ---- stream-ordered memory ---- */

cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* p, int d) {
    ENTER;
    if (!p) RET(cudaErrorInvalidValue);
    if (d != 0) RET(cudaErrorInvalidDevice);
    *p = (cudaMemPool_t)si_pool_default();
    RET(cudaSuccess);
}
cudaError_t cudaDeviceGetMemPool(cudaMemPool_t* p, int d) {
    ENTER;
    if (!p) RET(cudaErrorInvalidValue);
    if (d != 0) RET(cudaErrorInvalidDevice);
    *p = (cudaMemPool_t)si_pool_current();
    RET(cudaSuccess);
}
cudaError_t cudaDeviceSetMemPool(int d, cudaMemPool_t p) {
    ENTER;
    if (d != 0) RET(cudaErrorInvalidDevice);
    RET(si_pool_set_current(si_pool_of(p)));
}
/* CUDA 13's pools by location: device 0's pinned pools only. */
static int device0(const struct cudaMemLocation* l, enum cudaMemAllocationType t) {
    if (!l || t != cudaMemAllocationTypePinned || l->type != cudaMemLocationTypeDevice) return cudaErrorInvalidValue;
    return l->id == 0 ? cudaSuccess : cudaErrorInvalidDevice;
}
cudaError_t cudaMemGetDefaultMemPool(cudaMemPool_t* p, struct cudaMemLocation* l, enum cudaMemAllocationType t) {
    ENTER;
    if (!p) RET(cudaErrorInvalidValue);
    int r = device0(l, t);
    if (r) RET(r);
    *p = (cudaMemPool_t)si_pool_default();
    RET(cudaSuccess);
}
cudaError_t cudaMemGetMemPool(cudaMemPool_t* p, struct cudaMemLocation* l, enum cudaMemAllocationType t) {
    ENTER;
    if (!p) RET(cudaErrorInvalidValue);
    int r = device0(l, t);
    if (r) RET(r);
    *p = (cudaMemPool_t)si_pool_current();
    RET(cudaSuccess);
}
cudaError_t cudaMemSetMemPool(struct cudaMemLocation* l, enum cudaMemAllocationType t, cudaMemPool_t p) {
    ENTER;
    int r = device0(l, t);
    if (r) RET(r);
    RET(si_pool_set_current(si_pool_of(p)));
}
/* One device: its own access to a pool is always read-write, and cannot be changed. */
cudaError_t cudaMemPoolSetAccess(cudaMemPool_t p, const struct cudaMemAccessDesc* d, size_t n) {
    ENTER;
    if (!si_pool_of(p) || (n && !d)) RET(cudaErrorInvalidValue);
    for (size_t i = 0; i < n; i++) {
        if (d[i].location.type != cudaMemLocationTypeDevice) RET(cudaErrorInvalidValue);
        if (d[i].location.id != 0) RET(cudaErrorInvalidDevice);
        if (d[i].flags != cudaMemAccessFlagsProtReadWrite) RET(cudaErrorInvalidValue);
    }
    RET(cudaSuccess);
}
cudaError_t cudaMemPoolCreate(cudaMemPool_t* p, const struct cudaMemPoolProps* props) {
    ENTER;
    if (!props || props->allocType != cudaMemAllocationTypePinned || props->location.type != cudaMemLocationTypeDevice)
        RET(cudaErrorInvalidValue);
    if (props->location.id != 0) RET(cudaErrorInvalidDevice);
    int r = si_pool_create((si_pool**)p);
    if (!r) si_pool_set_handle_types(*(si_pool**)p, (unsigned)props->handleTypes);
    RET(r);
}
cudaError_t cudaMemPoolExportToShareableHandle(void* h, cudaMemPool_t p, enum cudaMemAllocationHandleType t, unsigned flags) {
    ENTER;
    if (flags) RET(cudaErrorInvalidValue);
    RET(si_pool_export(si_pool_of(p), (unsigned)t, h));
}
cudaError_t cudaMemPoolExportPointer(struct cudaMemPoolPtrExportData* d, void* ptr) {
    ENTER;
    RET(si_pool_export_pointer(ptr, d));
}
/* The driver's forms (its codes are the runtime's for these: invalid value 1, handle 400). */
int cuMemPoolExportToShareableHandle(void* h, cudaMemPool_t p, int t, unsigned long long flags);
int cuMemPoolExportToShareableHandle(void* h, cudaMemPool_t p, int t, unsigned long long flags) {
    si_lock();
    int r = flags ? SI_INVALID_VALUE : si_pool_export(si_pool_of(p), (unsigned)t, h);
    si_unlock();
    return r;
}
int cuMemPoolExportPointer(void* d, unsigned long long ptr);
int cuMemPoolExportPointer(void* d, unsigned long long ptr) {
    si_lock();
    int r = si_pool_export_pointer((const void*)(uintptr_t)ptr, d);
    si_unlock();
    return r;
}
cudaError_t cudaMemPoolDestroy(cudaMemPool_t p) { ENTER; RET(si_pool_destroy(si_pool_of(p))); }
cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t p, enum cudaMemPoolAttr a, void* v) {
    ENTER;
    RET(si_pool_set_attr(si_pool_of(p), (int)a, v));
}
cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t p, enum cudaMemPoolAttr a, void* v) {
    ENTER;
    RET(si_pool_get_attr(si_pool_of(p), (int)a, v));
}
cudaError_t cudaMemPoolTrimTo(cudaMemPool_t p, size_t keep) { ENTER; RET(si_pool_trim(si_pool_of(p), keep)); }
cudaError_t cudaMallocAsync(void** out, size_t n, cudaStream_t s) {
    ENTER;
    RET(si_pool_alloc(out, n, si_pool_current(), si_stream_of(s)));
}
cudaError_t cudaMallocFromPoolAsync(void** out, size_t n, cudaMemPool_t p, cudaStream_t s) {
    ENTER;
    RET(si_pool_alloc(out, n, si_pool_of(p), si_stream_of(s)));
}
cudaError_t cudaFreeAsync(void* p, cudaStream_t s) { ENTER; RET(si_pool_free(p, si_stream_of(s))); }
