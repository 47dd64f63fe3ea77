//! Which table rows and hand-written symbols belong to the CUDA driver (libcuda.so.1)
//! rather than a runtime: replay calls them through the driver library, and capture
//! waits for their asynchronous copies with the driver's own stream synchronize.

use super::{ApiDesc, Vendor};

/// Whether `symbol` is a CUDA driver API name (`cu*`, not `cuda*`).
pub fn is_driver_symbol(symbol: &str) -> bool {
    symbol.starts_with("cu") && !symbol.starts_with("cuda")
}

impl ApiDesc {
    /// Whether this row's `vendor` symbol is a CUDA driver API entry point.
    pub fn is_driver(&self, vendor: Vendor) -> bool {
        vendor == Vendor::Cuda && self.cuda.is_some_and(is_driver_symbol)
    }
}

/// Input structs capture does not record (`UnrecordedStructIn`) that mean what null
/// means when every byte is zero, by row and size: `cuCtxCreate_v4`'s
/// `CUctxCreateParams` (execution-affinity list and count, CIG parameters: 24 bytes), which
/// programs pass zero-filled. Such a struct is recorded as null, which replay passes.
pub const EMPTY_MEANS_NULL: &[(u16, u64)] = &[(super::id::CtxCreate, 24)];

/// Driver functions whose parameters and meaning are exactly a runtime row's, on the same
/// handles (a `CUstream` is a `cudaStream_t`, a `CUgraph` a `cudaGraph_t`, the capture
/// modes and statuses the same numbers): what nvcc's static runtime calls for stream
/// capture and graphs. Capture records each as that runtime row (`capture/src/
/// driver_twins.rs`), so stream capture's bookkeeping, keyed by row, holds for both, and
/// replay calls the runtime's function. `cuGraphLaunch` is `cudaGraphLaunch`'s twin the
/// same way, hand-written like it.
pub const RUNTIME_TWINS: &[(&str, u16)] = &[
    ("cuStreamBeginCapture_v2", super::id::StreamBeginCapture),
    ("cuStreamEndCapture", super::id::StreamEndCapture),
    ("cuStreamIsCapturing", super::id::StreamIsCapturing),
    (
        "cuGraphInstantiateWithFlags",
        super::id::GraphInstantiateWithFlags,
    ),
    ("cuGraphExecDestroy", super::id::GraphExecDestroy),
    ("cuGraphDestroy", super::id::GraphDestroy),
    // Explicit graphs: the same handles, and structs of the same layout
    // (CUDA_MEM_ALLOC_NODE_PARAMS, CUDA_MEMSET_NODE_PARAMS, CUDA_GRAPH_INSTANTIATE_PARAMS,
    // CUgraphExecUpdateResultInfo, CUgraphEdgeData). The calls whose C types differ
    // (a trailing context, CUDA_MEMCPY3D, the kernel node structs) are hand-written
    // (capture/src/driver_graph.rs, kernel_node.rs).
    ("cuGraphCreate", super::id::GraphCreate),
    ("cuGraphAddEmptyNode", super::id::GraphAddEmptyNode),
    (
        "cuGraphAddChildGraphNode",
        super::id::GraphAddChildGraphNode,
    ),
    (
        "cuGraphAddEventRecordNode",
        super::id::GraphAddEventRecordNode,
    ),
    ("cuGraphAddEventWaitNode", super::id::GraphAddEventWaitNode),
    ("cuGraphClone", super::id::GraphClone),
    ("cuGraphAddMemAllocNode", super::id::GraphAddMemAllocNode),
    ("cuGraphAddMemFreeNode", super::id::GraphAddMemFreeNode),
    (
        "cuGraphMemsetNodeSetParams",
        super::id::GraphMemsetNodeSetParams,
    ),
    ("cuGraphExecUpdate_v2", super::id::GraphExecUpdate),
    (
        "cuGraphInstantiateWithParams",
        super::id::GraphInstantiateWithParams,
    ),
    ("cuGraphAddDependencies_v2", super::id::GraphAddDependencies),
    (
        "cuGraphRemoveDependencies_v2",
        super::id::GraphRemoveDependencies,
    ),
    (
        "cuStreamBeginCaptureToGraph",
        super::id::StreamBeginCaptureToGraph,
    ),
    (
        "cuStreamUpdateCaptureDependencies_v2",
        super::id::StreamUpdateCaptureDependencies,
    ),
    (
        "cuGraphExecChildGraphNodeSetParams",
        super::id::GraphExecChildGraphNodeSetParams,
    ),
    (
        "cuGraphChildGraphNodeGetGraph",
        super::id::GraphChildGraphNodeGetGraph,
    ),
    (
        "cuGraphNodeGetContainingGraph",
        super::id::GraphNodeGetContainingGraph,
    ),
    // Host functions and host nodes (CUDA_HOST_NODE_PARAMS is cudaHostNodeParams).
    ("cuLaunchHostFunc", super::id::LaunchHostFunc),
    ("cuLaunchHostFunc_v2", super::id::LaunchHostFuncV2),
    ("cuStreamAddCallback", super::id::StreamAddCallback),
    ("cuGraphAddHostNode", super::id::GraphAddHostNode),
    // A plane of a multi-planar array: CUarray is cudaArray_t.
    ("cuArrayGetPlane", super::id::ArrayGetPlane),
    (
        "cuGraphHostNodeSetParams",
        super::id::GraphHostNodeSetParams,
    ),
    (
        "cuGraphExecHostNodeSetParams",
        super::id::GraphExecHostNodeSetParams,
    ),
];

/// The runtime row driver function `symbol` is recorded as, if it is a twin.
pub fn twin_row(symbol: &str) -> Option<u16> {
    RUNTIME_TWINS
        .iter()
        .find(|(s, _)| *s == symbol)
        .map(|(_, r)| *r)
}

/// The size of row `id`'s unrecorded input struct whose all-zero form means null, if any.
pub fn empty_means_null(id: u16) -> Option<u64> {
    EMPTY_MEANS_NULL
        .iter()
        .find(|(row, _)| *row == id)
        .map(|(_, size)| *size)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{desc, id};

    #[test]
    fn driver_rows_are_the_cu_symbols_and_only_under_cuda() {
        assert!(is_driver_symbol("cuMemAlloc_v2"));
        assert!(!is_driver_symbol("cudaMalloc"));
        assert!(!is_driver_symbol("hipMemcpyHtoD"));
        let htod = desc(id::MemcpyHtoD).unwrap();
        assert!(htod.is_driver(Vendor::Cuda));
        assert!(!htod.is_driver(Vendor::Hip));
        assert!(!desc(id::Malloc).unwrap().is_driver(Vendor::Cuda));
    }

    /// Each twin is a libcuda export (of the 580 driver, or of a newer one's list) and a
    /// runtime (not driver) row of CUDA.
    #[test]
    fn runtime_twins_are_driver_exports_recorded_as_runtime_rows() {
        let libcuda: Vec<_> = crate::surface::SURFACE_LISTS
            .iter()
            .filter(|l| l.library.starts_with("libcuda."))
            .collect();
        assert!(!libcuda.is_empty(), "a libcuda surface list");
        for (symbol, row) in RUNTIME_TWINS {
            assert!(
                libcuda.iter().any(|l| l.names().any(|s| s == *symbol)),
                "{symbol}"
            );
            let d = desc(*row).unwrap();
            assert!(d.cuda.is_some() && !d.is_driver(Vendor::Cuda), "{symbol}");
        }
        assert_eq!(twin_row("cuStreamEndCapture"), Some(id::StreamEndCapture));
        assert_eq!(twin_row("cudaStreamEndCapture"), None);
    }
}
