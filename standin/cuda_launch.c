/* The stand-in CUDA runtime's launch attributes (the runtime's and the driver's share numbers
 * and layouts; cuda_code.c's launches ask here): each attribute CUDA 13 defines for a
 * launch is checked as a GPU checks it, an id CUDA 13 does not define is an invalid
 * value, and the stream-only and newest ones this stand-in does not model are refused as
 * not supported. Also the cooperative-grid limit. */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>

#include "core.h"
#include "cuda_internal.h"

/* A cooperative grid must be resident at once: one multiprocessor of 2048 threads and
 * 32 blocks (cudaGetDeviceProperties). */
int si_cuda_cooperative_fits(dim3 g, dim3 b) {
    uint64_t threads = (uint64_t)b.x * b.y * b.z, blocks = (uint64_t)g.x * g.y * g.z;
    return !threads || threads > 1024 || (blocks <= 2048 / threads && blocks <= 32);
}

/* The device's largest access policy window (cudaDevAttrMaxAccessPolicyWindowSize of an
 * H100-class GPU). */
#define MAX_WINDOW ((size_t)134213632)

static int cluster_ok(unsigned x, unsigned y, unsigned z, dim3 g) {
    return x && y && z && !(g.x % x) && !(g.y % y) && !(g.z % z) && x * y * z <= 8;
}

int si_cuda_launch_attrs(const cudaLaunchAttribute* a, unsigned n, dim3 g, dim3 b) {
    if (n && !a) return cudaErrorInvalidValue;
    for (unsigned i = 0; i < n; i++) {
        const cudaLaunchAttributeValue* v = &a[i].val;
        switch (a[i].id) {
        case cudaLaunchAttributeIgnore:
        case cudaLaunchAttributePriority: /* any value: the runtime clamps it to the device's range */
        case cudaLaunchAttributeMemSyncDomainMap:
            break;
        case cudaLaunchAttributeAccessPolicyWindow: {
            /* Its base must be device memory of this process. */
            const struct cudaAccessPolicyWindow* w = &v->accessPolicyWindow;
            enum si_mem kind;
            if (!si_lookup(w->base_ptr, &kind, 0) || kind != SI_DEVICE || w->num_bytes > MAX_WINDOW ||
                !(w->hitRatio >= 0.0f && w->hitRatio <= 1.0f) || (unsigned)w->hitProp > cudaAccessPropertyPersisting ||
                (unsigned)w->missProp > cudaAccessPropertyPersisting)
                return cudaErrorInvalidValue;
            break;
        }
        case cudaLaunchAttributeCooperative:
            if (v->cooperative && !si_cuda_cooperative_fits(g, b)) return cudaErrorCooperativeLaunchTooLarge;
            break;
        case cudaLaunchAttributeClusterDimension:
            if (!cluster_ok(v->clusterDim.x, v->clusterDim.y, v->clusterDim.z, g)) return cudaErrorInvalidClusterSize;
            break;
        case cudaLaunchAttributePreferredClusterDimension:
            if (!cluster_ok(v->preferredClusterDim.x, v->preferredClusterDim.y, v->preferredClusterDim.z, g))
                return cudaErrorInvalidClusterSize;
            break;
        case cudaLaunchAttributeClusterSchedulingPolicyPreference:
            if ((unsigned)v->clusterSchedulingPolicyPreference > cudaClusterSchedulingPolicyLoadBalancing)
                return cudaErrorInvalidValue;
            break;
        case cudaLaunchAttributeProgrammaticStreamSerialization:
            if (v->programmaticStreamSerializationAllowed != 0 && v->programmaticStreamSerializationAllowed != 1)
                return cudaErrorInvalidValue;
            break;
        case cudaLaunchAttributeProgrammaticEvent: /* events: ones this process made */
            if (!si_event_of(v->programmaticEvent.event)) return cudaErrorInvalidResourceHandle;
            break;
        case cudaLaunchAttributeLaunchCompletionEvent:
            if (!si_event_of(v->launchCompletionEvent.event)) return cudaErrorInvalidResourceHandle;
            break;
        case cudaLaunchAttributeMemSyncDomain:
            if ((unsigned)v->memSyncDomain > cudaLaunchMemSyncDomainRemote) return cudaErrorInvalidValue;
            break;
        case cudaLaunchAttributeDeviceUpdatableKernelNode:
            return cudaErrorInvalidValue; /* graph kernel nodes only */
        case cudaLaunchAttributePreferredSharedMemoryCarveout:
            if (v->sharedMemCarveout > 100 && v->sharedMemCarveout != (unsigned)-1) return cudaErrorInvalidValue;
            break;
        case cudaLaunchAttributeSynchronizationPolicy: /* streams only */
        case cudaLaunchAttributeNvlinkUtilCentricScheduling:
        case cudaLaunchAttributePortableClusterSizeMode:
        case cudaLaunchAttributeSharedMemoryMode:
            return cudaErrorNotSupported; /* not modelled */
        default:
            return cudaErrorInvalidValue; /* not an attribute CUDA 13 defines */
        }
    }
    return cudaSuccess;
}
