/* The stand-in CUDA runtime's batched copies (CUDA 12.8+): cudaMemcpyBatchAsync checks a
 * batch as the runtime's contract states (every copy has attributes, each with a source
 * access order; attrsIdxs starts at 0, increases and stays below count; never the legacy
 * stream), then copies each in order on the stream, the pointers deciding the direction;
 * cudaMemcpyWithAttributesAsync is a batch of one. cudaMemcpy3DBatchAsync converts each
 * operation to the cudaMemcpy3DParms it equals (elements of the array side's size, one
 * byte between pointers; a zero row length or layer height packed by the extent) and copies
 * it as cudaMemcpy3DAsync does; cudaMemcpy3DWithAttributesAsync is a 3D batch of one. Their
 * per-thread forms take stream 0 as the thread's default stream. The driver's forms
 * (cuda_driver.c) share the checks and copies. */
#include <string.h>

#include "array.h"
#include "cuda_internal.h"

int si_batch_check(size_t count, const void* attrs, size_t attr_size, const size_t* idxs, size_t n) {
    if (count == 0 || !attrs || !idxs || n == 0 || n > count || idxs[0] != 0) return SI_INVALID_VALUE;
    for (size_t k = 0; k < n; k++) {
        /* srcAccessOrder is each attribute's first word; 0 is the invalid order. */
        int order;
        memcpy(&order, (const char*)attrs + k * attr_size, sizeof order);
        if (order == 0) return SI_INVALID_VALUE;
        if (k > 0 && (idxs[k] <= idxs[k - 1] || idxs[k] >= count)) return SI_INVALID_VALUE;
    }
    return 0;
}

static int batch(void* const* d, const void* const* s, const size_t* n, size_t count, struct cudaMemcpyAttributes* a,
                 size_t* idxs, size_t na, cudaStream_t st) {
    if (!st) return SI_INVALID_VALUE; /* the legacy stream */
    if (!d || !s || !n) return SI_INVALID_VALUE;
    int r = si_batch_check(count, a, sizeof *a, idxs, na);
    si_stream* q = si_stream_of(st);
    if (!r && !q) r = SI_INVALID_HANDLE;
    for (size_t i = 0; !r && i < count; i++) r = si_check_copy(d[i], n[i], s[i], n[i], 4);
    for (size_t i = 0; !r && i < count; i++)
        if (n[i]) r = si_enqueue_copy2d(q, d[i], n[i], s[i], n[i], n[i], 1);
    return r;
}

cudaError_t cudaMemcpyBatchAsync(void* const* d, const void* const* s, const size_t* n, size_t count,
                                 struct cudaMemcpyAttributes* a, size_t* idxs, size_t na, cudaStream_t st) {
    ENTER;
    RET(batch(d, s, n, count, a, idxs, na, st));
}
cudaError_t cudaMemcpyBatchAsync_ptsz(void* const* d, const void* const* s, const size_t* n, size_t count,
                                      struct cudaMemcpyAttributes* a, size_t* idxs, size_t na, cudaStream_t st);
cudaError_t cudaMemcpyBatchAsync_ptsz(void* const* d, const void* const* s, const size_t* n, size_t count,
                                      struct cudaMemcpyAttributes* a, size_t* idxs, size_t na, cudaStream_t st) {
    ENTER;
    RET(batch(d, s, n, count, a, idxs, na, st ? st : cudaStreamPerThread));
}
cudaError_t cudaMemcpyWithAttributesAsync(void* d, const void* s, size_t n, struct cudaMemcpyAttributes* a, cudaStream_t st) {
    size_t first = 0;
    ENTER;
    RET(batch(&d, &s, &n, 1, a, &first, 1, st));
}
cudaError_t cudaMemcpyWithAttributesAsync_ptsz(void* d, const void* s, size_t n, struct cudaMemcpyAttributes* a,
                                               cudaStream_t st);
cudaError_t cudaMemcpyWithAttributesAsync_ptsz(void* d, const void* s, size_t n, struct cudaMemcpyAttributes* a,
                                               cudaStream_t st) {
    size_t first = 0;
    ENTER;
    RET(batch(&d, &s, &n, 1, a, &first, 1, st ? st : cudaStreamPerThread));
}

static int op_parms(const struct cudaMemcpy3DBatchOp* op, struct cudaMemcpy3DParms* p) {
    const struct cudaMemcpy3DOperand* side[2] = {&op->src, &op->dst};
    size_t elem = 1;
    memset(p, 0, sizeof *p);
    if (!op->extent.width || !op->extent.height || !op->extent.depth || !op->srcAccessOrder) return SI_INVALID_VALUE;
    for (int i = 0; i < 2; i++) {
        void* data;
        size_t pitch, rows;
        if (side[i]->type == cudaMemcpyOperandTypeArray &&
            si_array_pitched(side[i]->op.array.array, &data, &pitch, &rows, &elem))
            return SI_INVALID_VALUE;
    }
    for (int i = 0; i < 2; i++) {
        struct cudaPitchedPtr* ptr = i ? &p->dstPtr : &p->srcPtr;
        struct cudaPos* pos = i ? &p->dstPos : &p->srcPos;
        cudaArray_t* array = i ? &p->dstArray : &p->srcArray;
        if (side[i]->type == cudaMemcpyOperandTypePointer) {
            size_t row = side[i]->op.ptr.rowLength ? side[i]->op.ptr.rowLength : op->extent.width;
            size_t layer = side[i]->op.ptr.layerHeight ? side[i]->op.ptr.layerHeight : op->extent.height;
            if (row < op->extent.width || layer < op->extent.height) return SI_INVALID_VALUE;
            *ptr = (struct cudaPitchedPtr){side[i]->op.ptr.ptr, row * elem, row * elem, layer};
        } else if (side[i]->type == cudaMemcpyOperandTypeArray) {
            *array = side[i]->op.array.array;
            *pos = (struct cudaPos){side[i]->op.array.offset.x, side[i]->op.array.offset.y, side[i]->op.array.offset.z};
        } else {
            return SI_INVALID_VALUE;
        }
    }
    p->extent = op->extent;
    p->kind = cudaMemcpyDefault;
    return 0;
}

int si_cuda_batch3d(size_t n, const struct cudaMemcpy3DBatchOp* ops, unsigned long long flags, cudaStream_t st) {
    if (!st || !ops || !n || flags) return SI_INVALID_VALUE;
    for (size_t i = 0; i < n; i++) {
        struct cudaMemcpy3DParms p;
        int r = op_parms(&ops[i], &p);
        if (r) return r;
    }
    for (size_t i = 0; i < n; i++) {
        struct cudaMemcpy3DParms p;
        op_parms(&ops[i], &p);
        int r = si_cuda_copy3d_async(&p, st);
        if (r) return r;
    }
    return 0;
}

cudaError_t cudaMemcpy3DBatchAsync(size_t n, struct cudaMemcpy3DBatchOp* ops, unsigned long long flags, cudaStream_t st) {
    ENTER;
    RET(si_cuda_batch3d(n, ops, flags, st));
}
cudaError_t cudaMemcpy3DBatchAsync_ptsz(size_t n, struct cudaMemcpy3DBatchOp* ops, unsigned long long flags,
                                        cudaStream_t st);
cudaError_t cudaMemcpy3DBatchAsync_ptsz(size_t n, struct cudaMemcpy3DBatchOp* ops, unsigned long long flags,
                                        cudaStream_t st) {
    ENTER;
    RET(si_cuda_batch3d(n, ops, flags, st ? st : cudaStreamPerThread));
}
cudaError_t cudaMemcpy3DWithAttributesAsync(struct cudaMemcpy3DBatchOp* op, unsigned long long flags, cudaStream_t st) {
    ENTER;
    RET(si_cuda_batch3d(1, op, flags, st));
}
cudaError_t cudaMemcpy3DWithAttributesAsync_ptsz(struct cudaMemcpy3DBatchOp* op, unsigned long long flags,
                                                 cudaStream_t st);
cudaError_t cudaMemcpy3DWithAttributesAsync_ptsz(struct cudaMemcpy3DBatchOp* op, unsigned long long flags,
                                                 cudaStream_t st) {
    ENTER;
    RET(si_cuda_batch3d(1, op, flags, st ? st : cudaStreamPerThread));
}
