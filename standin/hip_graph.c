/* The stand-in HIP runtime's graphs, stream capture and stream-ordered memory pools, over
 * graph.c and pool.c (see core.h). Declared by HIP 5.2's headers. */
#define _GNU_SOURCE
#include <hip/hip_runtime_api.h>
#include <stdint.h>

#include "core.h"
#include "hip_internal.h"

_Static_assert((int)hipErrorStreamCaptureUnsupported == (int)SI_CAPTURE_UNSUPPORTED &&
                   (int)hipErrorStreamCaptureInvalidated == (int)SI_CAPTURE_INVALIDATED &&
                   (int)hipErrorStreamCaptureMerge == (int)SI_CAPTURE_MERGE &&
                   (int)hipErrorStreamCaptureUnmatched == (int)SI_CAPTURE_UNMATCHED &&
                   (int)hipErrorStreamCaptureUnjoined == (int)SI_CAPTURE_UNJOINED &&
                   (int)hipErrorStreamCaptureIsolation == (int)SI_CAPTURE_ISOLATION &&
                   (int)hipErrorCapturedEvent == (int)SI_CAPTURED_EVENT &&
                   (int)hipErrorIllegalState == (int)SI_ILLEGAL_STATE &&
                   (int)hipStreamCaptureModeRelaxed == 2 && (int)hipStreamCaptureStatusInvalidated == 2 &&
                   (int)hipMemPoolAttrUsedMemHigh == 8,
               "HIP's capture numbers are the core's");

/* ---- stream capture ---- */

hipError_t hipStreamBeginCapture(hipStream_t s, hipStreamCaptureMode mode) {
    ENTER;
    RET(si_capture_begin(si_stream_of(s), (int)mode));
}
hipError_t hipStreamEndCapture(hipStream_t s, hipGraph_t* g) {
    ENTER;
    RET(si_capture_end(si_stream_of(s), (si_graph**)g));
}
hipError_t hipStreamIsCapturing(hipStream_t s, hipStreamCaptureStatus* st) {
    ENTER;
    RET(si_capture_status(si_stream_of(s), (int*)st, 0));
}
hipError_t hipStreamGetCaptureInfo(hipStream_t s, hipStreamCaptureStatus* st, unsigned long long* id) {
    ENTER;
    RET(si_capture_status(si_stream_of(s), (int*)st, id));
}
hipError_t hipThreadExchangeStreamCaptureMode(hipStreamCaptureMode* mode) {
    ENTER;
    RET(si_exchange_capture_mode((int*)mode));
}

/* ---- graphs ---- */

#define NODES(d) ((si_node* const*)(d))

hipError_t hipGraphCreate(hipGraph_t* g, unsigned flags) {
    ENTER;
    if (flags) RET(hipErrorInvalidValue);
    RET(si_graph_create((si_graph**)g));
}
hipError_t hipGraphDestroy(hipGraph_t g) { ENTER; RET(si_graph_destroy(si_graph_of(g))); }
hipError_t hipGraphAddEmptyNode(hipGraphNode_t* out, hipGraph_t g, const hipGraphNode_t* d, size_t n) {
    ENTER;
    RET(si_graph_add_empty((si_node**)out, si_graph_of(g), NODES(d), n));
}
hipError_t hipGraphAddMemcpyNode1D(hipGraphNode_t* out, hipGraph_t g, const hipGraphNode_t* d, size_t n,
                                   void* dst, const void* src, size_t count, hipMemcpyKind k) {
    ENTER;
    if (!count) RET(hipErrorInvalidValue);
    int r = si_check_copy(dst, count, src, count, (int)k);
    if (r) RET(r);
    RET(si_graph_add_copy2d((si_node**)out, si_graph_of(g), NODES(d), n, dst, count, src, count, count, 1));
}
hipError_t hipGraphMemcpyNodeSetParams1D(hipGraphNode_t node, void* dst, const void* src, size_t count,
                                         hipMemcpyKind k) {
    ENTER;
    int r = si_check_copy(dst, count, src, count, (int)k);
    if (r) RET(r);
    RET(si_graph_set_copy1d(0, node, dst, src, count));
}
hipError_t hipGraphExecMemcpyNodeSetParams1D(hipGraphExec_t x, hipGraphNode_t node, void* dst, const void* src,
                                             size_t count, hipMemcpyKind k) {
    ENTER;
    si_graph* exec = si_graph_exec_of(x);
    if (!exec) RET(hipErrorInvalidValue);
    int r = si_check_copy(dst, count, src, count, (int)k);
    if (r) RET(r);
    RET(si_graph_set_copy1d(exec, node, dst, src, count));
}
hipError_t hipGraphAddDependencies(hipGraph_t g, const hipGraphNode_t* from, const hipGraphNode_t* to, size_t n) {
    ENTER;
    RET(si_graph_edges(si_graph_of(g), NODES(from), NODES(to), n, 1));
}
hipError_t hipGraphRemoveDependencies(hipGraph_t g, const hipGraphNode_t* from, const hipGraphNode_t* to,
                                      size_t n) {
    ENTER;
    RET(si_graph_edges(si_graph_of(g), NODES(from), NODES(to), n, 0));
}
hipError_t hipGraphAddMemsetNode(hipGraphNode_t* out, hipGraph_t g, const hipGraphNode_t* d, size_t n,
                                 const hipMemsetParams* p) {
    ENTER;
    if (!p || (p->elementSize != 1 && p->elementSize != 2 && p->elementSize != 4) || !p->width || !p->height)
        RET(hipErrorInvalidValue);
    size_t row = p->width * p->elementSize, left;
    if (p->height > 1 && p->pitch < row) RET(hipErrorInvalidValue);
    size_t pitch = p->height > 1 ? p->pitch : row;
    enum si_mem kind;
    if (!si_lookup(p->dst, &kind, &left) || (p->height - 1) * pitch + row > left) RET(hipErrorInvalidValue);
    RET(si_graph_add_memset2d((si_node**)out, si_graph_of(g), NODES(d), n, p->dst, pitch, (int)p->value,
                              p->width, p->height, p->elementSize));
}
hipError_t hipGraphAddEventRecordNode(hipGraphNode_t* out, hipGraph_t g, const hipGraphNode_t* d, size_t n,
                                      hipEvent_t e) {
    ENTER;
    RET(si_graph_add_event((si_node**)out, si_graph_of(g), NODES(d), n, si_event_of(e), 0));
}
hipError_t hipGraphAddEventWaitNode(hipGraphNode_t* out, hipGraph_t g, const hipGraphNode_t* d, size_t n,
                                    hipEvent_t e) {
    ENTER;
    RET(si_graph_add_event((si_node**)out, si_graph_of(g), NODES(d), n, si_event_of(e), 1));
}
hipError_t hipGraphAddHostNode(hipGraphNode_t* out, hipGraph_t g, const hipGraphNode_t* d, size_t n,
                               const hipHostNodeParams* p) {
    ENTER;
    if (!p) RET(hipErrorInvalidValue);
    RET(si_graph_add_host((si_node**)out, si_graph_of(g), NODES(d), n, p->fn, p->userData));
}
hipError_t hipGraphHostNodeSetParams(hipGraphNode_t node, const hipHostNodeParams* p) {
    ENTER;
    if (!p) RET(hipErrorInvalidValue);
    RET(si_graph_set_host(0, node, p->fn, p->userData));
}
hipError_t hipGraphExecHostNodeSetParams(hipGraphExec_t x, hipGraphNode_t node, const hipHostNodeParams* p) {
    ENTER;
    if (!p) RET(hipErrorInvalidValue);
    RET(si_graph_set_host(si_graph_exec_of(x), node, p->fn, p->userData));
}
hipError_t hipGraphChildGraphNodeGetGraph(hipGraphNode_t node, hipGraph_t* g) {
    ENTER;
    RET(si_graph_child_graph(node, (si_graph**)g));
}
hipError_t hipGraphExecChildGraphNodeSetParams(hipGraphExec_t x, hipGraphNode_t node, hipGraph_t child) {
    ENTER;
    RET(si_graph_exec_set_child(si_graph_exec_of(x), node, si_graph_of(child)));
}
hipError_t hipStreamUpdateCaptureDependencies(hipStream_t s, hipGraphNode_t* d, size_t n, unsigned flags) {
    ENTER;
    RET(si_capture_update_deps(si_stream_of(s), NODES(d), n, flags));
}
hipError_t hipGraphAddChildGraphNode(hipGraphNode_t* out, hipGraph_t g, const hipGraphNode_t* d, size_t n,
                                     hipGraph_t child) {
    ENTER;
    RET(si_graph_add_child((si_node**)out, si_graph_of(g), NODES(d), n, si_graph_of(child)));
}
hipError_t hipGraphInstantiate(hipGraphExec_t* x, hipGraph_t g, hipGraphNode_t* err_node, char* log, size_t size) {
    ENTER;
    if (err_node) *err_node = 0;
    if (log && size) log[0] = 0;
    RET(si_graph_instantiate((si_graph**)x, si_graph_of(g)));
}
hipError_t hipGraphInstantiateWithFlags(hipGraphExec_t* x, hipGraph_t g, unsigned long long flags) {
    ENTER;
    if (flags & ~1ull) RET(hipErrorInvalidValue); /* AutoFreeOnLaunch is the one flag */
    RET(si_graph_instantiate((si_graph**)x, si_graph_of(g)));
}
hipError_t hipGraphExecDestroy(hipGraphExec_t x) { ENTER; RET(si_graph_exec_destroy(si_graph_exec_of(x))); }
hipError_t hipGraphLaunch(hipGraphExec_t x, hipStream_t s) {
    ENTER;
    RET(si_graph_launch(si_graph_exec_of(x), si_stream_of(s)));
}

/* ---- stream-ordered memory ---- */

hipError_t hipDeviceGetDefaultMemPool(hipMemPool_t* p, int d) {
    ENTER;
    if (!p) RET(hipErrorInvalidValue);
    if (d != 0) RET(hipErrorInvalidDevice);
    *p = (hipMemPool_t)si_pool_default();
    RET(hipSuccess);
}
hipError_t hipDeviceGetMemPool(hipMemPool_t* p, int d) {
    ENTER;
    if (!p) RET(hipErrorInvalidValue);
    if (d != 0) RET(hipErrorInvalidDevice);
    *p = (hipMemPool_t)si_pool_current();
    RET(hipSuccess);
}
hipError_t hipDeviceSetMemPool(int d, hipMemPool_t p) {
    ENTER;
    if (d != 0) RET(hipErrorInvalidDevice);
    RET(si_pool_set_current(si_pool_of(p)));
}
hipError_t hipMemPoolCreate(hipMemPool_t* p, const hipMemPoolProps* props) {
    ENTER;
    if (!props || props->allocType != hipMemAllocationTypePinned ||
        props->location.type != hipMemLocationTypeDevice)
        RET(hipErrorInvalidValue);
    if (props->location.id != 0) RET(hipErrorInvalidDevice);
    RET(si_pool_create((si_pool**)p));
}
hipError_t hipMemPoolDestroy(hipMemPool_t p) { ENTER; RET(si_pool_destroy(si_pool_of(p))); }
hipError_t hipMemPoolSetAttribute(hipMemPool_t p, hipMemPoolAttr a, void* v) {
    ENTER;
    RET(si_pool_set_attr(si_pool_of(p), (int)a, v));
}
hipError_t hipMemPoolGetAttribute(hipMemPool_t p, hipMemPoolAttr a, void* v) {
    ENTER;
    RET(si_pool_get_attr(si_pool_of(p), (int)a, v));
}
hipError_t hipMemPoolTrimTo(hipMemPool_t p, size_t keep) { ENTER; RET(si_pool_trim(si_pool_of(p), keep)); }
hipError_t hipMallocAsync(void** out, size_t n, hipStream_t s) {
    ENTER;
    RET(si_pool_alloc(out, n, si_pool_current(), si_stream_of(s)));
}
hipError_t hipMallocFromPoolAsync(void** out, size_t n, hipMemPool_t p, hipStream_t s) {
    ENTER;
    RET(si_pool_alloc(out, n, si_pool_of(p), si_stream_of(s)));
}
hipError_t hipFreeAsync(void* p, hipStream_t s) { ENTER; RET(si_pool_free(p, si_stream_of(s))); }
