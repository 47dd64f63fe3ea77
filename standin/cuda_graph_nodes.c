/* The stand-in's generic graph-node calls: the runtime's cudaGraphAddNode,
 * cudaGraphNodeSetParams and cudaGraphExecNodeSetParams, the driver's cuGraphAddNode
 * (12.2's, without edge data), cuGraphAddNode_v2/_v3, cuGraphNodeSetParams[_v2] and
 * cuGraphExecNodeSetParams. Each hands its type's struct to this library's own typed call,
 * found in this library itself (an interposer's, such as capture's, is not called a second
 * time); a type, edge or update the stand-in has no typed call for is not supported. */
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <string.h>

#include "cuda_internal.h"

/* This library's own definition of `name`. */
static void* own(const char* name) {
    static void* self;
    if (!self) {
        Dl_info i;
        if (dladdr((void*)own, &i)) self = dlopen(i.dli_fname, RTLD_NOLOAD | RTLD_LAZY);
    }
    return self ? dlsym(self, name) : 0;
}

typedef cudaError_t (*add_ptr_fn)(cudaGraphNode_t*, cudaGraph_t, const cudaGraphNode_t*, size_t, const void*);
typedef cudaError_t (*add_handle_fn)(cudaGraphNode_t*, cudaGraph_t, const cudaGraphNode_t*, size_t, void*);
typedef cudaError_t (*add_empty_fn)(cudaGraphNode_t*, cudaGraph_t, const cudaGraphNode_t*, size_t);
typedef cudaError_t (*set_fn)(cudaGraphNode_t, const void*);
typedef cudaError_t (*exec_set_fn)(cudaGraphExec_t, cudaGraphNode_t, const void*);
#define CALL(type, name, ...) (own(name) ? ((type)own(name))(__VA_ARGS__) : cudaErrorNotSupported)

static int default_edges(const void* e, size_t n) {
    const unsigned char* b = e;
    for (size_t i = 0; b && i < n * 8; i++)
        if (b[i]) return 0;
    return 1;
}
static struct cudaKernelNodeParams kernel_v1(const struct cudaKernelNodeParamsV2* k) {
    struct cudaKernelNodeParams v = {k->func, k->gridDim, k->blockDim, k->sharedMemBytes, k->kernelParams, k->extra};
    return v;
}

cudaError_t cudaGraphAddNode(cudaGraphNode_t* out, cudaGraph_t g, const cudaGraphNode_t* d, const cudaGraphEdgeData* e,
                             size_t n, struct cudaGraphNodeParams* p) {
    if (!p) return cudaErrorInvalidValue;
    if (!default_edges(e, n)) return cudaErrorNotSupported;
    switch (p->type) {
    case cudaGraphNodeTypeKernel: {
        struct cudaKernelNodeParams k = kernel_v1(&p->kernel);
        return CALL(add_ptr_fn, "cudaGraphAddKernelNode", out, g, d, n, &k);
    }
    case cudaGraphNodeTypeMemset: return CALL(add_ptr_fn, "cudaGraphAddMemsetNode", out, g, d, n, &p->memset);
    case cudaGraphNodeTypeHost: return CALL(add_ptr_fn, "cudaGraphAddHostNode", out, g, d, n, &p->host);
    case cudaGraphNodeTypeGraph: return CALL(add_handle_fn, "cudaGraphAddChildGraphNode", out, g, d, n, p->graph.graph);
    case cudaGraphNodeTypeEmpty: return CALL(add_empty_fn, "cudaGraphAddEmptyNode", out, g, d, n);
    case cudaGraphNodeTypeWaitEvent:
        return CALL(add_handle_fn, "cudaGraphAddEventWaitNode", out, g, d, n, p->eventWait.event);
    case cudaGraphNodeTypeEventRecord:
        return CALL(add_handle_fn, "cudaGraphAddEventRecordNode", out, g, d, n, p->eventRecord.event);
    case cudaGraphNodeTypeMemAlloc: return CALL(add_ptr_fn, "cudaGraphAddMemAllocNode", out, g, d, n, &p->alloc);
    case cudaGraphNodeTypeMemFree: return CALL(add_handle_fn, "cudaGraphAddMemFreeNode", out, g, d, n, p->free.dptr);
    default: return cudaErrorNotSupported;
    }
}
cudaError_t cudaGraphNodeSetParams(cudaGraphNode_t node, struct cudaGraphNodeParams* p) {
    if (!p) return cudaErrorInvalidValue;
    switch (p->type) {
    case cudaGraphNodeTypeKernel: {
        struct cudaKernelNodeParams k = kernel_v1(&p->kernel);
        return CALL(set_fn, "cudaGraphKernelNodeSetParams", node, &k);
    }
    case cudaGraphNodeTypeHost: return CALL(set_fn, "cudaGraphHostNodeSetParams", node, &p->host);
    default: return cudaErrorNotSupported;
    }
}
cudaError_t cudaGraphExecNodeSetParams(cudaGraphExec_t x, cudaGraphNode_t node, struct cudaGraphNodeParams* p) {
    if (!p) return cudaErrorInvalidValue;
    switch (p->type) {
    case cudaGraphNodeTypeKernel: {
        struct cudaKernelNodeParams k = kernel_v1(&p->kernel);
        return CALL(exec_set_fn, "cudaGraphExecKernelNodeSetParams", x, node, &k);
    }
    case cudaGraphNodeTypeHost: return CALL(exec_set_fn, "cudaGraphExecHostNodeSetParams", x, node, &p->host);
    case cudaGraphNodeTypeGraph:
        return CALL(exec_set_fn, "cudaGraphExecChildGraphNodeSetParams", x, node, p->graph.graph);
    default: return cudaErrorNotSupported;
    }
}

/* ---- the driver's ---- */

typedef CUresult (*cu_add_ptr_fn)(CUgraphNode*, CUgraph, const CUgraphNode*, size_t, const void*);
typedef CUresult (*cu_add_ctx_fn)(CUgraphNode*, CUgraph, const CUgraphNode*, size_t, const void*, CUcontext);
typedef CUresult (*cu_add_empty_fn)(CUgraphNode*, CUgraph, const CUgraphNode*, size_t);
typedef CUresult (*cu_set_fn)(CUgraphNode, const void*);
typedef CUresult (*cu_exec_set_fn)(CUgraphExec, CUgraphNode, const void*);
#define CU_CALL(type, name, ...) (own(name) ? ((type)own(name))(__VA_ARGS__) : CUDA_ERROR_NOT_SUPPORTED)

CUresult cuGraphAddNode_v2(CUgraphNode* out, CUgraph g, const CUgraphNode* d, const CUgraphEdgeData* e, size_t n,
                           CUgraphNodeParams* p) {
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    if (!default_edges(e, n)) return CUDA_ERROR_NOT_SUPPORTED;
    switch (p->type) {
    /* CUDA_KERNEL_NODE_PARAMS_v3 is the v2 struct, field for field. */
    case CU_GRAPH_NODE_TYPE_KERNEL: return CU_CALL(cu_add_ptr_fn, "cuGraphAddKernelNode_v2", out, g, d, n, &p->kernel);
    case CU_GRAPH_NODE_TYPE_MEMSET:
        return CU_CALL(cu_add_ctx_fn, "cuGraphAddMemsetNode", out, g, d, n, &p->memset, p->memset.ctx);
    case CU_GRAPH_NODE_TYPE_MEMCPY:
        return CU_CALL(cu_add_ctx_fn, "cuGraphAddMemcpyNode", out, g, d, n, &p->memcpy.copyParams, p->memcpy.copyCtx);
    case CU_GRAPH_NODE_TYPE_EMPTY: return CU_CALL(cu_add_empty_fn, "cuGraphAddEmptyNode", out, g, d, n);
    default: return CUDA_ERROR_NOT_SUPPORTED;
    }
}
CUresult cuGraphAddNode_v3(CUgraphNode* out, CUgraph g, const CUgraphNode* d, const CUgraphEdgeData* e, size_t n,
                           CUgraphNodeParams* p) {
    return cuGraphAddNode_v2(out, g, d, e, n, p);
}
#undef cuGraphAddNode
CUresult cuGraphAddNode(CUgraphNode* out, CUgraph g, const CUgraphNode* d, size_t n, CUgraphNodeParams* p);
CUresult cuGraphAddNode(CUgraphNode* out, CUgraph g, const CUgraphNode* d, size_t n, CUgraphNodeParams* p) {
    return cuGraphAddNode_v2(out, g, d, 0, n, p);
}
CUresult cuGraphNodeSetParams(CUgraphNode node, CUgraphNodeParams* p) {
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    if (p->type != CU_GRAPH_NODE_TYPE_KERNEL) return CUDA_ERROR_NOT_SUPPORTED;
    return CU_CALL(cu_set_fn, "cuGraphKernelNodeSetParams_v2", node, &p->kernel);
}
CUresult cuGraphNodeSetParams_v2(CUgraphNode node, CUgraphNodeParams* p) { return cuGraphNodeSetParams(node, p); }
CUresult cuGraphExecNodeSetParams(CUgraphExec x, CUgraphNode node, CUgraphNodeParams* p) {
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    if (p->type != CU_GRAPH_NODE_TYPE_KERNEL) return CUDA_ERROR_NOT_SUPPORTED;
    return CU_CALL(cu_exec_set_fn, "cuGraphExecKernelNodeSetParams_v2", x, node, &p->kernel);
}
