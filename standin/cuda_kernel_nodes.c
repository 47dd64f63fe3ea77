/* The stand-in CUDA runtime's graph kernel nodes (runtime and driver forms): the kernel (a
 * registered stub; for the driver's forms a function or CUkernel handle) must be known; a
 * node of a kernel the stand-in runs (kernels.c) runs it over its arguments, read when the
 * node is made or its parameters set, and any other kernel's node runs as an empty node.
 * Setting a node's parameters replaces its launch in its graph or in one executable graph. */
#include <cuda.h>

#include "cuda_internal.h"

/* The launch a runtime node's parameters make, or the error. */
static int node_launch(struct si_launch* l, const struct cudaKernelNodeParams* p) {
    if (!p) return cudaErrorInvalidValue;
    if (p->kernelParams && p->extra) return cudaErrorInvalidValue;
    return si_cuda_kernel_launch(l, p->func, 1, p->gridDim, p->blockDim, p->kernelParams);
}
/* The driver's (v1 and v2 share these fields). */
static int driver_launch(struct si_launch* l, const void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                         unsigned by, unsigned bz, void** params, void** extra) {
    if (params && extra) return cudaErrorInvalidValue;
    dim3 g = {gx, gy, gz}, b = {bx, by, bz};
    return si_cuda_kernel_launch(l, f, 0, g, b, params);
}
static CUresult driver_result(int r) {
    return r == 0 ? CUDA_SUCCESS : r == cudaErrorInvalidDeviceFunction ? CUDA_ERROR_INVALID_HANDLE : CUDA_ERROR_INVALID_VALUE;
}

cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t* out, cudaGraph_t g, const cudaGraphNode_t* d, size_t n,
                                   const struct cudaKernelNodeParams* p) {
    ENTER;
    struct si_launch l;
    int r = node_launch(&l, p);
    if (r) RET(r);
    RET(si_graph_add_kernel((si_node**)out, si_graph_of(g), (si_node* const*)d, n, &l));
}
cudaError_t cudaGraphKernelNodeSetParams(cudaGraphNode_t node, const struct cudaKernelNodeParams* p) {
    ENTER;
    struct si_launch l;
    int r = node_launch(&l, p);
    if (r) RET(r == cudaErrorInvalidDeviceFunction ? cudaErrorInvalidValue : r);
    RET(si_graph_set_kernel(0, node, &l));
}
cudaError_t cudaGraphExecKernelNodeSetParams(cudaGraphExec_t x, cudaGraphNode_t node,
                                             const struct cudaKernelNodeParams* p) {
    ENTER;
    struct si_launch l;
    si_graph* exec = si_graph_exec_of(x);
    int r = node_launch(&l, p);
    if (r || !exec) RET(cudaErrorInvalidValue);
    RET(si_graph_set_kernel(exec, node, &l));
}
/* CUDA_KERNEL_NODE_PARAMS v2, what cuda.h binds a program's cuGraphAddKernelNode to: the
 * function, else the CUkernel (`kern`), must be known. */
CUresult cuGraphAddKernelNode_v2(CUgraphNode* out, CUgraph g, const CUgraphNode* d, size_t n,
                                 const CUDA_KERNEL_NODE_PARAMS_v2* p) {
    if (!p) return CUDA_ERROR_INVALID_HANDLE;
    si_lock();
    struct si_launch l;
    int r = driver_launch(&l, p->func ? (const void*)p->func : (const void*)p->kern, p->gridDimX, p->gridDimY,
                          p->gridDimZ, p->blockDimX, p->blockDimY, p->blockDimZ, p->kernelParams, p->extra);
    if (!r) r = si_graph_add_kernel((si_node**)out, si_graph_of(g), (si_node* const*)d, n, &l) ? cudaErrorInvalidValue : 0;
    si_unlock();
    return driver_result(r);
}
/* The unversioned symbols (CUDA_KERNEL_NODE_PARAMS v1), which replay calls; cuda.h maps
 * the names onto the _v2 forms. */
#undef cuGraphAddKernelNode
#undef cuGraphKernelNodeSetParams
#undef cuGraphExecKernelNodeSetParams
static int v1_launch(struct si_launch* l, const CUDA_KERNEL_NODE_PARAMS_v1* p) {
    if (!p) return cudaErrorInvalidDeviceFunction;
    return driver_launch(l, p->func, p->gridDimX, p->gridDimY, p->gridDimZ, p->blockDimX, p->blockDimY, p->blockDimZ,
                         p->kernelParams, p->extra);
}
CUresult cuGraphAddKernelNode(CUgraphNode* out, CUgraph g, const CUgraphNode* d, size_t n,
                              const CUDA_KERNEL_NODE_PARAMS_v1* p) {
    si_lock();
    struct si_launch l;
    int r = v1_launch(&l, p);
    if (!r) r = si_graph_add_kernel((si_node**)out, si_graph_of(g), (si_node* const*)d, n, &l) ? cudaErrorInvalidValue : 0;
    si_unlock();
    return driver_result(r);
}
CUresult cuGraphKernelNodeSetParams(CUgraphNode node, const CUDA_KERNEL_NODE_PARAMS_v1* p) {
    si_lock();
    struct si_launch l;
    int r = v1_launch(&l, p) || si_graph_set_kernel(0, node, &l);
    si_unlock();
    return r ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}
CUresult cuGraphExecKernelNodeSetParams(CUgraphExec x, CUgraphNode node, const CUDA_KERNEL_NODE_PARAMS_v1* p) {
    si_lock();
    struct si_launch l;
    si_graph* exec = si_graph_exec_of(x);
    int r = !exec || v1_launch(&l, p) || si_graph_set_kernel(exec, node, &l);
    si_unlock();
    return r ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}
