/* The stand-in CUDA runtime's batched copies (CUDA 12.8+): cudaMemcpyBatchAsync checks a
 * batch as the runtime's contract states (every copy has attributes, each with a source
 * access order; attrsIdxs starts at 0, increases and stays below count; never the legacy
 * stream), then copies each in order on the stream, the pointers deciding the direction;
 * cudaMemcpyWithAttributesAsync is a batch of one. Their per-thread forms take stream 0 as
 * the thread's default stream. The driver's forms (cuda_driver.c) share the check. */
#include <string.h>

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
