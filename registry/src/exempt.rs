//! Unmodelled calls known not to affect a program's results: capture still counts them
//! and the manifest lists them (marked exempt), but replay does not refuse an archive
//! for them. Each group says why its calls are harmless; a name must be a surface symbol
//! (`surface_of`), which the table's check enforces, so a misspelt name is an error,
//! not a silent gap.
//!
//! What stays out on purpose: anything returning a handle or an address a later call
//! uses (`cudaDeviceGetDefaultMemPool`, `cuDeviceGetDefaultMemPool`),
//! anything handing out functions capture does not wrap (`cudaGetExportTable`; the
//! driver lookups `cuGetProcAddress` and `cudaGetDriverEntryPoint*` are capture's own,
//! `lookup`), settings that change what a kernel
//! may do (`cudaDeviceSetLimit`, `cudaFuncSetAttribute`), and every synchronisation or
//! stream-capture query: their absence at replay could change a result.

/// One reason and the calls it covers.
#[derive(Clone, Copy, Debug)]
pub struct Exemption {
    pub reason: &'static str,
    pub symbols: &'static [&'static str],
}

/// Every exemption.
#[rustfmt::skip]
pub const EXEMPT: &[Exemption] = &[
    Exemption {
        reason: "error strings and the last-error state: they describe results, they make none",
        symbols: &[
            "cudaGetErrorString", "cudaGetErrorName", "cudaGetLastError", "cudaPeekAtLastError",
            "cuGetErrorString", "cuGetErrorName",
            "hipGetErrorString", "hipGetErrorName", "hipGetLastError", "hipPeekAtLastError",
            "hiprtcGetErrorString",
        ],
    },
    Exemption {
        reason: "version queries",
        symbols: &[
            "cudaRuntimeGetVersion", "cudaDriverGetVersion", "cuDriverGetVersion",
            "hipRuntimeGetVersion", "hipDriverGetVersion", "hiprtcVersion",
        ],
    },
    Exemption {
        reason: "driver initialisation: replay initialises its own runtime and driver",
        symbols: &["cuInit", "hipInit"],
    },
    Exemption {
        reason: "device property and attribute queries: they read the device, change nothing on it (what a program does with the answer is recorded in the calls that follow)",
        symbols: &[
            "cudaGetDeviceProperties", "cudaDeviceGetAttribute", "cudaDeviceGetLimit",
            "cudaDeviceGetCacheConfig", "cudaDeviceGetSharedMemConfig",
            "cudaDeviceGetStreamPriorityRange", "cudaDeviceGetPCIBusId",
            "cudaDeviceGetByPCIBusId", "cudaDeviceCanAccessPeer", "cudaDeviceGetP2PAttribute",
            "cudaChooseDevice", "cudaMemGetInfo",
            "cuDeviceGet", "cuDeviceGetCount", "cuDeviceGetName", "cuDeviceGetUuid",
            "cuDeviceGetUuid_v2", "cuDeviceGetLuid", "cuDeviceTotalMem", "cuDeviceTotalMem_v2",
            "cuDeviceGetAttribute", "cuDeviceGetProperties", "cuDeviceComputeCapability",
            "cuDeviceGetPCIBusId", "cuDeviceGetByPCIBusId", "cuDeviceCanAccessPeer",
            "cuDeviceGetP2PAttribute", "cuMemGetInfo", "cuMemGetInfo_v2",
            "cuCtxGetDevice", "cuCtxGetDevice_v2", "cuDevicePrimaryCtxGetState",
            "cuModuleGetLoadingMode", "cuCtxGetApiVersion", "cuCtxGetFlags", "cuCtxGetLimit",
            "cuCtxGetCacheConfig", "cuCtxGetSharedMemConfig", "cuCtxGetStreamPriorityRange",
            "hipDeviceGet", "hipDeviceGetAttribute", "hipDeviceGetLimit", "hipDeviceGetName",
            "hipDeviceGetUuid", "hipDeviceTotalMem", "hipDeviceComputeCapability",
            "hipDeviceGetPCIBusId", "hipDeviceGetByPCIBusId", "hipDeviceCanAccessPeer",
            "hipDeviceGetP2PAttribute", "hipDeviceGetCacheConfig", "hipDeviceGetSharedMemConfig",
            "hipDeviceGetStreamPriorityRange", "hipChooseDevice", "hipChooseDeviceR0600", "hipMemGetInfo",
            "hipCtxGetDevice", "hipCtxGetApiVersion", "hipCtxGetFlags", "hipCtxGetCacheConfig",
            "hipCtxGetSharedMemConfig",
        ],
    },
    Exemption {
        reason: "virtual memory queries: the mapping granularity, a range's access, a handle's properties (what a program maps with the answers is recorded in the calls that follow)",
        symbols: &[
            "cuMemGetAllocationGranularity", "cuMemGetAccess", "cuMemGetAllocationPropertiesFromHandle",
            "hipMemGetAllocationGranularity", "hipMemGetAccess", "hipMemGetAllocationPropertiesFromHandle",
        ],
    },
    Exemption {
        reason: "graph memory usage counters: read, or a high watermark reset to zero (no memory is allocated, freed or written)",
        symbols: &[
            "cudaDeviceGetGraphMemAttribute", "cudaDeviceSetGraphMemAttribute",
            "cuDeviceGetGraphMemAttribute", "cuDeviceSetGraphMemAttribute",
            "hipDeviceGetGraphMemAttribute", "hipDeviceSetGraphMemAttribute",
        ],
    },
    Exemption {
        reason: "array, symbol, memory range and pool access queries: they read properties, change nothing (what a program does with the answer is recorded in the calls that follow)",
        symbols: &[
            "cudaArrayGetMemoryRequirements", "cudaArrayGetSparseProperties",
            "cudaMipmappedArrayGetMemoryRequirements", "cudaMipmappedArrayGetSparseProperties",
            "cudaGetChannelDesc", "cudaGetSymbolSize", "cudaMemRangeGetAttribute",
            "cudaMemRangeGetAttributes", "cudaMemPoolGetAccess", "cudaMemGetLocationInfo",
            "cuArrayGetMemoryRequirements", "cuArrayGetSparseProperties",
            "cuMipmappedArrayGetMemoryRequirements", "cuMipmappedArrayGetSparseProperties",
            "cuMemRangeGetAttribute", "cuMemRangeGetAttributes", "cuMemPoolGetAccess",
            "cuMemGetLocationInfo",
            "hipMemRangeGetAttribute", "hipMemRangeGetAttributes", "hipMemPoolGetAccess",
        ],
    },
    Exemption {
        reason: "more device queries: flags, limits, atomic capabilities, the resources a device, stream or execution context has (and the descriptors and splits computed from them, pure values)",
        symbols: &[
            "cudaGetDeviceFlags", "cudaDeviceGetTexture1DLinearMaxWidth",
            "cudaDeviceGetHostAtomicCapabilities", "cudaDeviceGetP2PAtomicCapabilities",
            "cudaDeviceGetNvSciSyncAttributes", "cudaDeviceGetDevResource",
            "cudaStreamGetDevResource", "cudaExecutionCtxGetDevResource",
            "cudaExecutionCtxGetDevice", "cudaDevResourceGenerateDesc", "cudaDevSmResourceSplit",
            "cudaDevSmResourceSplitByCount",
            "cuDeviceGetTexture1DLinearMaxWidth", "cuDeviceGetHostAtomicCapabilities",
            "cuDeviceGetP2PAtomicCapabilities", "cuDeviceGetNvSciSyncAttributes",
            "cuDeviceGetDevResource", "cuStreamGetDevResource", "cuCtxGetDevResource",
            "cuDevResourceGenerateDesc", "cuDevSmResourceSplit", "cuDevSmResourceSplitByCount",
            "cuDeviceGetExecAffinitySupport", "cuCtxGetExecAffinity",
            "hipGetDeviceFlags",
        ],
    },
    Exemption {
        reason: "identity, type and attribute queries of streams, graphs, nodes and executable graphs: numbers only, no handle a later call could use",
        symbols: &[
            "cudaStreamGetId", "cudaStreamGetId_ptsz", "cudaStreamGetAttribute",
            "cudaStreamGetAttribute_ptsz", "cudaGraphGetId", "cudaGraphExecGetId",
            "cudaGraphNodeGetLocalId", "cudaGraphNodeGetToolsId", "cudaExecutionCtxGetId",
            "cudaGraphExecGetFlags", "cudaGraphNodeGetType", "cudaGraphNodeGetEnabled",
            "cudaLibraryGetKernelCount", "cuLibraryGetKernelCount",
            "cudaGraphKernelNodeGetAttribute", "cudaFuncGetParamCount", "cudaStreamGetDevice_ptsz",
            "cuStreamGetId", "cuStreamGetId_ptsz", "cuStreamGetAttribute", "cuStreamGetAttribute_ptsz",
            "cuGraphGetId", "cuGraphExecGetId", "cuGraphNodeGetLocalId", "cuGraphNodeGetToolsId",
            "cuGraphExecGetFlags", "cuGraphNodeGetType", "cuGraphNodeGetEnabled",
            "cuGraphKernelNodeGetAttribute", "cuFuncGetParamCount", "cuKernelGetParamCount",
            "cuStreamGetDevice_ptsz", "cuCtxGetId",
            "hipStreamGetAttribute", "hipGraphNodeGetType", "hipGraphNodeGetEnabled",
            "hipGraphKernelNodeGetAttribute", "hipGraphExecGetFlags",
        ],
    },
    Exemption {
        reason: "graph node parameter queries: they read what a node holds and change nothing; the addresses they hand back are the program's own allocations or the graph's, which replay translates wherever a later recorded call passes them, and the host pointers (a kernel's argument array, a host node's function) are the program's",
        symbols: &[
            "cudaGraphKernelNodeGetParams", "cudaGraphMemcpyNodeGetParams",
            "cudaGraphMemsetNodeGetParams", "cudaGraphHostNodeGetParams",
            "cudaGraphMemAllocNodeGetParams", "cudaGraphMemFreeNodeGetParams",
            "cudaGraphExternalSemaphoresSignalNodeGetParams",
            "cudaGraphExternalSemaphoresWaitNodeGetParams", "cudaGraphNodeGetParams",
            "cuGraphKernelNodeGetParams_v2", "cuGraphMemcpyNodeGetParams",
            "cuGraphMemsetNodeGetParams", "cuGraphHostNodeGetParams",
            "cuGraphMemAllocNodeGetParams", "cuGraphMemFreeNodeGetParams",
            "cuGraphExternalSemaphoresSignalNodeGetParams",
            "cuGraphExternalSemaphoresWaitNodeGetParams", "cuGraphBatchMemOpNodeGetParams",
            "hipGraphKernelNodeGetParams", "hipGraphMemcpyNodeGetParams",
            "hipGraphMemsetNodeGetParams", "hipGraphHostNodeGetParams",
            "hipGraphMemAllocNodeGetParams", "hipGraphMemFreeNodeGetParams",
            "hipGraphExternalSemaphoresSignalNodeGetParams",
            "hipGraphExternalSemaphoresWaitNodeGetParams",
        ],
    },
    Exemption {
        reason: "the event of an event record or wait node: the handle the program passed when it made the node, which replay already maps",
        symbols: &[
            "cudaGraphEventRecordNodeGetEvent", "cudaGraphEventWaitNodeGetEvent",
            "cuGraphEventRecordNodeGetEvent", "cuGraphEventWaitNodeGetEvent",
            "hipGraphEventRecordNodeGetEvent", "hipGraphEventWaitNodeGetEvent",
        ],
    },
    Exemption {
        reason: "user objects: reference counts that decide when the program's own host destructor runs; a destructor may make no CUDA call (CUDA's rule), so nothing replay runs depends on them",
        symbols: &[
            "cudaUserObjectCreate", "cudaUserObjectRetain", "cudaUserObjectRelease",
            "cudaGraphRetainUserObject", "cudaGraphReleaseUserObject",
            "cuUserObjectCreate", "cuUserObjectRetain", "cuUserObjectRelease",
            "cuGraphRetainUserObject", "cuGraphReleaseUserObject",
            "hipUserObjectCreate", "hipUserObjectRetain", "hipUserObjectRelease",
            "hipGraphRetainUserObject", "hipGraphReleaseUserObject",
        ],
    },
    Exemption {
        reason: "diagnostics: a graph written as a DOT file, the driver's log read or dumped, a callback told of its messages or of a resource budget change (host work only, no GPU state)",
        symbols: &[
            "cudaGraphDebugDotPrint", "cudaLogsCurrent", "cudaLogsDumpToFile", "cudaLogsDumpToMemory",
            "cudaLogsRegisterCallback", "cudaLogsUnregisterCallback",
            "cudaDeviceRegisterAsyncNotification", "cudaDeviceUnregisterAsyncNotification",
            "cuGraphDebugDotPrint", "cuLogsCurrent", "cuLogsDumpToFile", "cuLogsDumpToMemory",
            "cuLogsRegisterCallback", "cuLogsUnregisterCallback",
            "cuDeviceRegisterAsyncNotification", "cuDeviceUnregisterAsyncNotification",
            "cuCoredumpGetAttribute", "cuCoredumpGetAttributeGlobal",
            "cuCoredumpRegisterStartCallback", "cuCoredumpRegisterCompleteCallback",
            "cuCoredumpDeregisterStartCallback", "cuCoredumpDeregisterCompleteCallback",
            "hipGraphDebugDotPrint",
        ],
    },
    Exemption {
        reason: "kernel and function attribute queries",
        symbols: &[
            "cudaFuncGetAttributes", "cudaFuncGetName", "cudaFuncGetParamInfo",
            "cuFuncGetAttribute", "cuFuncGetName", "cuFuncGetParamInfo",
            "cuKernelGetAttribute", "cuKernelGetName", "cuKernelGetParamInfo",
            "hipFuncGetAttribute", "hipFuncGetAttributes",
        ],
    },
    Exemption {
        reason: "occupancy queries: they compute a launch size, and the launch records the size chosen",
        symbols: &[
            "cudaOccupancyMaxActiveBlocksPerMultiprocessor",
            "cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
            "cudaOccupancyAvailableDynamicSMemPerBlock", "cudaOccupancyMaxPotentialClusterSize",
            "cudaOccupancyMaxActiveClusters",
            "cuOccupancyMaxActiveBlocksPerMultiprocessor",
            "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
            "cuOccupancyMaxPotentialBlockSize", "cuOccupancyMaxPotentialBlockSizeWithFlags",
            "cuOccupancyAvailableDynamicSMemPerBlock", "cuOccupancyMaxPotentialClusterSize",
            "cuOccupancyMaxActiveClusters",
            "hipOccupancyMaxActiveBlocksPerMultiprocessor",
            "hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
            "hipOccupancyMaxPotentialBlockSize",
            "hipModuleOccupancyMaxActiveBlocksPerMultiprocessor",
            "hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
            "hipModuleOccupancyMaxPotentialBlockSize",
            "hipModuleOccupancyMaxPotentialBlockSizeWithFlags",
        ],
    },
    Exemption {
        reason: "pointer attribute queries (a mapped host buffer's device pointer is a table row: `cudaHostGetDevicePointer`, `hipHostGetDevicePointer`)",
        symbols: &[
            "cudaPointerGetAttributes", "cudaHostGetFlags",
            "cuPointerGetAttribute", "cuPointerGetAttributes", "cuMemHostGetFlags",
            "hipPointerGetAttributes", "hipPointerGetAttribute", "hipDrvPointerGetAttributes",
            "hipHostGetFlags",
        ],
    },
    Exemption {
        reason: "name lookups and pure value builders (HIP 5.2 also calls some of them itself, through its exported symbols, from inside other calls)",
        symbols: &[
            "hipApiName", "hipGetCmdName", "hipKernelNameRef", "hipKernelNameRefByPtr",
            "hipCreateChannelDesc", "cudaCreateChannelDesc",
        ],
    },
    Exemption {
        reason: "stream property queries (HIP 5.2 calls hipGetStreamDeviceId itself from inside other calls)",
        symbols: &[
            "cudaStreamGetPriority", "cudaStreamGetPriority_ptsz", "cudaStreamGetFlags",
            "cudaStreamGetFlags_ptsz", "cudaStreamGetDevice",
            "cuStreamGetPriority", "cuStreamGetPriority_ptsz", "cuStreamGetFlags",
            "cuStreamGetFlags_ptsz", "cuStreamGetDevice",
            "hipStreamGetPriority", "hipStreamGetPriority_spt", "hipStreamGetFlags",
            "hipStreamGetFlags_spt", "hipGetStreamDeviceId",
        ],
    },
    Exemption {
        reason: "the <<<>>> launch configuration stack: every triple-chevron launch pushes and pops it before the launch call, which records grid, block, memory and stream",
        symbols: &[
            "__cudaPushCallConfiguration", "__cudaPopCallConfiguration",
            "__hipPushCallConfiguration", "__hipPopCallConfiguration",
        ],
    },
    Exemption {
        reason: "batched prefetches: hints of where managed pages should live, never what they hold (a single prefetch is a table row, replayed)",
        symbols: &[
            "cudaMemPrefetchBatchAsync", "cudaMemPrefetchBatchAsync_ptsz", "cuMemPrefetchBatchAsync",
            "cuMemPrefetchBatchAsync_ptsz", "hipMemPrefetchBatchAsync",
        ],
    },
    Exemption {
        reason: "discards: the program declares it will not read the ranges before writing them again, and leaving their bytes as they are is one of the contents a discard allows (a discard that also prefetches is a hint besides)",
        symbols: &[
            "cudaMemDiscardBatchAsync", "cudaMemDiscardBatchAsync_ptsz",
            "cudaMemDiscardAndPrefetchBatchAsync", "cudaMemDiscardAndPrefetchBatchAsync_ptsz",
            "cuMemDiscardBatchAsync", "cuMemDiscardBatchAsync_ptsz",
            "cuMemDiscardAndPrefetchBatchAsync", "cuMemDiscardAndPrefetchBatchAsync_ptsz",
            "hipMemDiscardBatchAsync", "hipDrvMemDiscardBatchAsync",
            "hipMemDiscardAndPrefetchBatchAsync", "hipDrvMemDiscardAndPrefetchBatchAsync",
        ],
    },
    Exemption {
        reason: "a thread's stream-capture interaction mode exchanged: it decides which calls a capture in progress forbids, never what a graph holds; replay begins every capture relaxed (`ParamKind::CaptureMode`), under which no thread's mode forbids a call, and a call the mode made fail at capture carries that failure in its own record",
        symbols: &[
            "cudaThreadExchangeStreamCaptureMode", "cuThreadExchangeStreamCaptureMode",
            "hipThreadExchangeStreamCaptureMode",
        ],
    },
    Exemption {
        reason: "the end and the undoing of a code-object registration capture recorded (__cudaRegisterFatBinary and its functions and variables)",
        symbols: &["__cudaRegisterFatBinaryEnd", "__cudaUnregisterFatBinary", "__hipUnregisterFatBinary"],
    },
];

/// Why `symbol` is exempt, if it is.
pub fn exempt_reason(symbol: &str) -> Option<&'static str> {
    EXEMPT
        .iter()
        .find(|e| e.symbols.contains(&symbol))
        .map(|e| e.reason)
}
