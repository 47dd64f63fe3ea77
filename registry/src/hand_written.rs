//! The exported symbols capture implements by hand, one row each: vendor, the records
//! a call writes, and the capture module that owns the shim.

use super::{id, semantic as k, Vendor, API_TABLE};

/// A symbol libhrr_capture.so exports with a hand-written shim (its meaning is not in its
/// parameter types). Together with the table's rows ([`API_TABLE`]) these are every
/// symbol the library exports, no more and no fewer (capture's export test checks the
/// built library against both).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HandWritten {
    pub symbol: &'static str,
    pub vendor: Vendor,
    /// The records one call writes: semantic kinds, or (symbol copies) the address record
    /// and the generic copy row. Empty: the call only teaches capture a handle.
    pub records: &'static [u16],
    /// The capture module that implements it (`capture/src/<owner>.rs`).
    pub owner: &'static str,
}

/// One [`HandWritten`] per `(symbol, vendor, [records], owner module)`.
macro_rules! hand_written {
    ($( ($sym:ident, $vendor:ident, [$($rec:expr),*], $owner:ident) ),* $(,)?) => {
        &[ $( HandWritten {
            symbol: stringify!($sym),
            vendor: Vendor::$vendor,
            records: &[$($rec),*],
            owner: stringify!($owner),
        } ),* ]
    };
}

/// Every hand-written exported symbol.
pub const HAND_WRITTEN: &[HandWritten] = hand_written! {
    // Code-object registration, called by compiler-generated constructors.
    (__cudaRegisterFatBinary, Cuda, [k::REGISTER_FAT_BINARY], register),
    (__hipRegisterFatBinary, Hip, [k::REGISTER_FAT_BINARY], register),
    (__cudaRegisterFunction, Cuda, [k::REGISTER_FUNCTION], register),
    (__hipRegisterFunction, Hip, [k::REGISTER_FUNCTION], register),
    (__cudaRegisterVar, Cuda, [k::REGISTER_VAR], register),
    (__hipRegisterVar, Hip, [k::REGISTER_VAR], register),
    (__cudaGetKernel, Cuda, [], register),
    (cudaGetKernel, Cuda, [], register),
    (cudaGetFuncBySymbol, Cuda, [], register),
    // Launches of registered kernels.
    (cudaLaunchKernel, Cuda, [k::LAUNCH_KERNEL], launch),
    (cudaLaunchKernelExC, Cuda, [k::LAUNCH_KERNEL, k::LAUNCH_KERNEL_EX], launch),
    (hipLaunchKernel, Hip, [k::LAUNCH_KERNEL], launch),
    (hipLaunchKernel_spt, Hip, [k::LAUNCH_KERNEL], launch),
    (__cudaLaunchKernel, Cuda, [k::LAUNCH_KERNEL_BY_HANDLE], launch),
    // Launch configuration: function attributes and cooperative launches.
    (cudaFuncSetAttribute, Cuda, [k::FUNC_SET_ATTRIBUTE], launchcfg),
    (cuFuncSetAttribute, Cuda, [k::FUNC_SET_ATTRIBUTE], launchcfg),
    (cuKernelSetAttribute, Cuda, [k::FUNC_SET_ATTRIBUTE], launchcfg),
    (cudaKernelSetAttributeForDevice, Cuda, [k::FUNC_SET_ATTRIBUTE], launchcfg),
    (cuFuncSetCacheConfig, Cuda, [k::FUNC_SET_CACHE_CONFIG], launchcfg),
    (cuKernelSetCacheConfig, Cuda, [k::FUNC_SET_CACHE_CONFIG], launchcfg),
    (cuFuncSetSharedMemConfig, Cuda, [k::FUNC_SET_SHARED_MEM_CONFIG], launchcfg),
    (hipFuncSetAttribute, Hip, [k::FUNC_SET_ATTRIBUTE], launchcfg),
    (cudaFuncSetCacheConfig, Cuda, [k::FUNC_SET_CACHE_CONFIG], launchcfg),
    (hipFuncSetCacheConfig, Hip, [k::FUNC_SET_CACHE_CONFIG], launchcfg),
    (cudaFuncSetSharedMemConfig, Cuda, [k::FUNC_SET_SHARED_MEM_CONFIG], launchcfg),
    (hipFuncSetSharedMemConfig, Hip, [k::FUNC_SET_SHARED_MEM_CONFIG], launchcfg),
    (cudaLaunchCooperativeKernel, Cuda, [k::LAUNCH_COOPERATIVE], launchcfg),
    (hipLaunchCooperativeKernel, Hip, [k::LAUNCH_COOPERATIVE], launchcfg),
    (hipModuleLaunchCooperativeKernel, Hip, [k::LAUNCH_COOPERATIVE], launchcfg),
    (cuLaunchCooperativeKernel, Cuda, [k::LAUNCH_COOPERATIVE], launchcfg),
    (cuLaunchCooperativeKernel_ptsz, Cuda, [k::LAUNCH_COOPERATIVE], launchcfg),
    (hipExtLaunchKernel, Hip, [k::HIP_EXT_LAUNCH], launchcfg),
    // Modules loaded by the program, and launches of their functions.
    (cuModuleLoadData, Cuda, [k::MODULE_LOAD], modules),
    (cuModuleLoadDataEx, Cuda, [k::MODULE_LOAD], modules),
    (hipModuleLoadData, Hip, [k::MODULE_LOAD], modules),
    (cuModuleGetFunction, Cuda, [k::MODULE_GET_FUNCTION], modules),
    (hipModuleGetFunction, Hip, [k::MODULE_GET_FUNCTION], modules),
    (cuLaunchKernel, Cuda, [k::MODULE_LAUNCH_KERNEL], modules),
    (cuLaunchKernel_ptsz, Cuda, [k::MODULE_LAUNCH_KERNEL], modules),
    (hipModuleLaunchKernel, Hip, [k::MODULE_LAUNCH_KERNEL], modules),
    (hipExtModuleLaunchKernel, Hip, [k::MODULE_LAUNCH_KERNEL], modules),
    // The rest of the driver's module and library API, and cuLaunchKernelEx
    // (capture/src/driver.rs): loads store the image, globals map like __device__
    // variables, library kernels launch like module functions.
    (cuModuleLoad, Cuda, [k::MODULE_LOAD], driver),
    (hipModuleLoad, Hip, [k::MODULE_LOAD], driver),
    (cuModuleLoadFatBinary, Cuda, [k::MODULE_LOAD], driver),
    (cuModuleGetGlobal_v2, Cuda, [k::SYMBOL_ADDRESS], driver),
    (hipModuleGetGlobal, Hip, [k::SYMBOL_ADDRESS], driver),
    (cuModuleUnload, Cuda, [k::MODULE_UNLOAD], driver),
    (hipModuleUnload, Hip, [k::MODULE_UNLOAD], driver),
    (cuLibraryLoadData, Cuda, [k::MODULE_LOAD], driver),
    (cuLibraryLoadFromFile, Cuda, [k::MODULE_LOAD], driver),
    (cuLibraryGetKernel, Cuda, [k::MODULE_GET_FUNCTION], driver),
    (cuKernelGetFunction, Cuda, [k::MODULE_GET_FUNCTION], driver),
    (cuLibraryGetGlobal, Cuda, [k::SYMBOL_ADDRESS], driver),
    (cuLibraryUnload, Cuda, [k::MODULE_UNLOAD], driver),
    (cudaLibraryLoadData, Cuda, [k::MODULE_LOAD], driver),
    (cudaLibraryLoadFromFile, Cuda, [k::MODULE_LOAD], driver),
    (cudaLibraryGetKernel, Cuda, [k::MODULE_GET_FUNCTION], driver),
    (cudaLibraryGetGlobal, Cuda, [k::SYMBOL_ADDRESS], driver),
    (cuLibraryGetManaged, Cuda, [k::SYMBOL_ADDRESS], driver),
    (cudaLibraryGetManaged, Cuda, [k::SYMBOL_ADDRESS], driver),
    (cuLibraryEnumerateKernels, Cuda, [k::MODULE_GET_FUNCTION, k::UNREPLAYABLE], driver),
    (cudaLibraryEnumerateKernels, Cuda, [k::MODULE_GET_FUNCTION, k::UNREPLAYABLE], driver),
    (cudaLibraryUnload, Cuda, [k::MODULE_UNLOAD], driver),
    (cuLaunchKernelEx, Cuda, [k::MODULE_LAUNCH_KERNEL], driver),
    // Copies to and from __device__ / __constant__ variables: the variable's address
    // once, then the copy as the generic row.
    (cudaGetSymbolAddress, Cuda, [k::SYMBOL_ADDRESS], symbols),
    (hipGetSymbolAddress, Hip, [k::SYMBOL_ADDRESS], symbols),
    (cudaMemcpyToSymbol, Cuda, [k::SYMBOL_ADDRESS, id::Memcpy], symbols),
    (cudaMemcpyFromSymbol, Cuda, [k::SYMBOL_ADDRESS, id::Memcpy], symbols),
    (cudaMemcpyToSymbolAsync, Cuda, [k::SYMBOL_ADDRESS, id::MemcpyAsync], symbols),
    (cudaMemcpyFromSymbolAsync, Cuda, [k::SYMBOL_ADDRESS, id::MemcpyAsync], symbols),
    (hipMemcpyToSymbol, Hip, [k::SYMBOL_ADDRESS, id::Memcpy], symbols),
    (hipMemcpyFromSymbol, Hip, [k::SYMBOL_ADDRESS, id::Memcpy], symbols),
    (hipMemcpyToSymbolAsync, Hip, [k::SYMBOL_ADDRESS, id::MemcpyAsync], symbols),
    (hipMemcpyFromSymbolAsync, Hip, [k::SYMBOL_ADDRESS, id::MemcpyAsync], symbols),
    // Graph copy nodes to and from variables: the variable's address once, then the node
    // as the 1D copy-node row.
    (cudaGraphAddMemcpyNodeToSymbol, Cuda, [k::SYMBOL_ADDRESS, id::GraphAddMemcpyNode1D], symbol_nodes),
    (cudaGraphAddMemcpyNodeFromSymbol, Cuda, [k::SYMBOL_ADDRESS, id::GraphAddMemcpyNode1D], symbol_nodes),
    (cudaGraphMemcpyNodeSetParamsToSymbol, Cuda, [k::SYMBOL_ADDRESS, id::GraphMemcpyNodeSetParams1D], symbol_nodes),
    (cudaGraphMemcpyNodeSetParamsFromSymbol, Cuda, [k::SYMBOL_ADDRESS, id::GraphMemcpyNodeSetParams1D], symbol_nodes),
    (cudaGraphExecMemcpyNodeSetParamsToSymbol, Cuda, [k::SYMBOL_ADDRESS, id::GraphExecMemcpyNodeSetParams1D], symbol_nodes),
    (cudaGraphExecMemcpyNodeSetParamsFromSymbol, Cuda, [k::SYMBOL_ADDRESS, id::GraphExecMemcpyNodeSetParams1D], symbol_nodes),
    (hipGraphAddMemcpyNodeToSymbol, Hip, [k::SYMBOL_ADDRESS, id::GraphAddMemcpyNode1D], symbol_nodes),
    (hipGraphAddMemcpyNodeFromSymbol, Hip, [k::SYMBOL_ADDRESS, id::GraphAddMemcpyNode1D], symbol_nodes),
    (hipGraphMemcpyNodeSetParamsToSymbol, Hip, [k::SYMBOL_ADDRESS, id::GraphMemcpyNodeSetParams1D], symbol_nodes),
    (hipGraphMemcpyNodeSetParamsFromSymbol, Hip, [k::SYMBOL_ADDRESS, id::GraphMemcpyNodeSetParams1D], symbol_nodes),
    (hipGraphExecMemcpyNodeSetParamsToSymbol, Hip, [k::SYMBOL_ADDRESS, id::GraphExecMemcpyNodeSetParams1D], symbol_nodes),
    (hipGraphExecMemcpyNodeSetParamsFromSymbol, Hip, [k::SYMBOL_ADDRESS, id::GraphExecMemcpyNodeSetParams1D], symbol_nodes),
    // Profiler range markers: where a range capture starts and ends (`api::work`).
    (cudaProfilerStart, Cuda, [k::RANGE_RESTORE, k::RANGE_MARK], range),
    (cudaProfilerStop, Cuda, [k::RANGE_MARK], range),
    (cuProfilerStart, Cuda, [k::RANGE_RESTORE, k::RANGE_MARK], range),
    (cuProfilerStop, Cuda, [k::RANGE_MARK], range),
    (hipProfilerStart, Hip, [k::RANGE_RESTORE, k::RANGE_MARK], range),
    (hipProfilerStop, Hip, [k::RANGE_MARK], range),
    // roctx ranges (libroctx64), forwarded: where an `nvtx:NAME` range capture starts and
    // ends on AMD (NVTX's own calls reach capture as an injection library: PROCESS_HOOKS).
    (roctxRangePushA, Hip, [k::RANGE_RESTORE, k::RANGE_MARK], nvtx),
    (roctxRangePop, Hip, [k::RANGE_MARK], nvtx),
    (roctxRangeStartA, Hip, [k::RANGE_RESTORE, k::RANGE_MARK], nvtx),
    (roctxRangeStop, Hip, [k::RANGE_MARK], nvtx),
    // Calls no other process can reproduce: passed through, recorded as unreplayable (IPC
    // handles name this process's memory; host functions are table rows: `host_fns`).
    (hipLaunchCooperativeKernelMultiDevice, Hip, [k::UNREPLAYABLE], unreplayable),
    (cudaGraphAddKernelNode, Cuda, [k::GRAPH_KERNEL_NODE, k::UNREPLAYABLE], kernel_node),
    (hipGraphAddKernelNode, Hip, [k::GRAPH_KERNEL_NODE, k::UNREPLAYABLE], kernel_node),
    // Node parameter updates capture does not follow yet.
    (cudaGraphKernelNodeSetParams, Cuda, [k::GRAPH_KERNEL_NODE_SET_PARAMS, k::UNREPLAYABLE], kernel_node),
    (cudaGraphExecKernelNodeSetParams, Cuda, [k::GRAPH_EXEC_KERNEL_NODE_SET_PARAMS, k::UNREPLAYABLE], kernel_node),
    (hipGraphKernelNodeSetParams, Hip, [k::GRAPH_KERNEL_NODE_SET_PARAMS, k::UNREPLAYABLE], kernel_node),
    (hipGraphExecKernelNodeSetParams, Hip, [k::GRAPH_EXEC_KERNEL_NODE_SET_PARAMS, k::UNREPLAYABLE], kernel_node),
    (cuGraphAddKernelNode_v2, Cuda, [k::GRAPH_KERNEL_NODE, k::UNREPLAYABLE], kernel_node),
    (cuGraphKernelNodeSetParams_v2, Cuda, [k::GRAPH_KERNEL_NODE_SET_PARAMS, k::UNREPLAYABLE], kernel_node),
    (cuGraphExecKernelNodeSetParams_v2, Cuda, [k::GRAPH_EXEC_KERNEL_NODE_SET_PARAMS, k::UNREPLAYABLE], kernel_node),
    // The per-thread default stream forms of the launches (`api::per_thread`).
    (cudaLaunchKernel_ptsz, Cuda, [k::LAUNCH_KERNEL], per_thread),
    (__cudaLaunchKernel_ptsz, Cuda, [k::LAUNCH_KERNEL_BY_HANDLE], per_thread),
    // The driver's graph-building calls whose C types differ from their runtime twins'
    // (a trailing context, or CUDA_MEMCPY3D for cudaMemcpy3DParms): recorded as the
    // runtime row, or unreplayable (a copy node with an array side).
    (cuGraphAddMemsetNode, Cuda, [id::GraphAddMemsetNode], driver_graph),
    (cuGraphExecMemsetNodeSetParams, Cuda, [id::GraphExecMemsetNodeSetParams], driver_graph),
    (cuGraphAddMemcpyNode, Cuda, [id::GraphAddMemcpyNode, k::UNREPLAYABLE], driver_graph),
    (cuGraphMemcpyNodeSetParams, Cuda, [id::GraphMemcpyNodeSetParams, k::UNREPLAYABLE], driver_graph),
    (cuGraphExecMemcpyNodeSetParams, Cuda, [id::GraphExecMemcpyNodeSetParams, k::UNREPLAYABLE], driver_graph),
    // 3D allocations and peer copies recorded as the rows they equal: a pitched
    // allocation of height x depth rows, a 3D copy within one device (between two:
    // unreplayable by name).
    (cudaMalloc3D, Cuda, [id::MallocPitch], memory3d),
    (hipMalloc3D, Hip, [id::MallocPitch], memory3d),
    (cudaMemcpy3DPeer, Cuda, [id::Memcpy3D, k::UNREPLAYABLE], memory3d),
    (cudaMemcpy3DPeerAsync, Cuda, [id::Memcpy3DAsync, k::UNREPLAYABLE], memory3d),
    (cuMemcpy3DPeer, Cuda, [id::DrvMemcpy3D, k::UNREPLAYABLE], memory3d),
    (cuMemcpy3DPeerAsync, Cuda, [id::DrvMemcpy3DAsync, k::UNREPLAYABLE], memory3d),
    // Generic graph-node calls, recorded as the typed calls they equal.
    (cudaGraphAddNode, Cuda, [k::GRAPH_KERNEL_NODE, k::UNREPLAYABLE], graph_nodes),
    (cudaGraphNodeSetParams, Cuda, [k::GRAPH_KERNEL_NODE_SET_PARAMS, k::UNREPLAYABLE], graph_nodes),
    (cudaGraphExecNodeSetParams, Cuda, [k::GRAPH_EXEC_KERNEL_NODE_SET_PARAMS, k::UNREPLAYABLE], graph_nodes),
    (cuGraphAddNode, Cuda, [k::GRAPH_KERNEL_NODE, k::UNREPLAYABLE], graph_nodes),
    (cuGraphAddNode_v2, Cuda, [k::GRAPH_KERNEL_NODE, k::UNREPLAYABLE], graph_nodes),
    (cuGraphAddNode_v3, Cuda, [k::GRAPH_KERNEL_NODE, k::UNREPLAYABLE], graph_nodes),
    (cuGraphNodeSetParams, Cuda, [k::GRAPH_KERNEL_NODE_SET_PARAMS, k::UNREPLAYABLE], graph_nodes),
    (cuGraphNodeSetParams_v2, Cuda, [k::GRAPH_KERNEL_NODE_SET_PARAMS, k::UNREPLAYABLE], graph_nodes),
    (cuGraphExecNodeSetParams, Cuda, [k::GRAPH_EXEC_KERNEL_NODE_SET_PARAMS, k::UNREPLAYABLE], graph_nodes),
    // Batched copies, recorded as the copies they make.
    (cudaMemcpyBatchAsync, Cuda, [id::MemcpyAsync, k::UNREPLAYABLE], batch_copies),
    (cudaMemcpyBatchAsync_ptsz, Cuda, [id::MemcpyAsync, k::UNREPLAYABLE], batch_copies),
    (cudaMemcpyWithAttributesAsync, Cuda, [id::MemcpyAsync, k::UNREPLAYABLE], batch_copies),
    (cudaMemcpyWithAttributesAsync_ptsz, Cuda, [id::MemcpyAsync, k::UNREPLAYABLE], batch_copies),
    (cuMemcpyBatchAsync_v2, Cuda, [id::CuMemcpyAsync, k::UNREPLAYABLE], batch_copies),
    (cuMemcpyBatchAsync_v2_ptsz, Cuda, [id::CuMemcpyAsync, k::UNREPLAYABLE], batch_copies),
    (cuMemcpyBatchAsync, Cuda, [id::CuMemcpyAsync, k::UNREPLAYABLE], batch_copies),
    (cuMemcpyBatchAsync_ptsz, Cuda, [id::CuMemcpyAsync, k::UNREPLAYABLE], batch_copies),
    (cuMemcpyWithAttributesAsync, Cuda, [id::CuMemcpyAsync, k::UNREPLAYABLE], batch_copies),
    (cudaMemcpy3DBatchAsync, Cuda, [id::Memcpy3DAsync, k::UNREPLAYABLE], batch_copies),
    (cudaMemcpy3DBatchAsync_ptsz, Cuda, [id::Memcpy3DAsync, k::UNREPLAYABLE], batch_copies),
    (cudaMemcpy3DWithAttributesAsync, Cuda, [id::Memcpy3DAsync, k::UNREPLAYABLE], batch_copies),
    (cudaMemcpy3DWithAttributesAsync_ptsz, Cuda, [id::Memcpy3DAsync, k::UNREPLAYABLE], batch_copies),
    (cuMemcpy3DBatchAsync_v2, Cuda, [id::Memcpy3DAsync, k::UNREPLAYABLE], batch_copies),
    (cuMemcpy3DBatchAsync_v2_ptsz, Cuda, [id::Memcpy3DAsync, k::UNREPLAYABLE], batch_copies),
    (cuMemcpy3DBatchAsync, Cuda, [id::Memcpy3DAsync, k::UNREPLAYABLE], batch_copies),
    (cuMemcpy3DBatchAsync_ptsz, Cuda, [id::Memcpy3DAsync, k::UNREPLAYABLE], batch_copies),
    (cuMemcpy3DWithAttributesAsync, Cuda, [id::Memcpy3DAsync, k::UNREPLAYABLE], batch_copies),
    // Graph launches: the host side of the graph's copy nodes at each launch.
    (cudaGraphLaunch, Cuda, [k::GRAPH_LAUNCH], graph_launch),
    (cuGraphLaunch, Cuda, [k::GRAPH_LAUNCH], graph_launch),
    (hipGraphLaunch, Hip, [k::GRAPH_LAUNCH], graph_launch),
    // Entry-point lookups (ROCm 6+): a function capture models is handed out as capture's
    // own shim; a name capture does not know gets the real pointer and an unmodelled note.
    (hipGetProcAddress, Hip, [k::UNMODELLED_CALL], proc_address),
    (hipGetProcAddress_spt, Hip, [k::UNMODELLED_CALL], proc_address),
    (hipGetDriverEntryPoint, Hip, [k::UNMODELLED_CALL], proc_address),
    (hipGetDriverEntryPoint_spt, Hip, [k::UNMODELLED_CALL], proc_address),
    // The CUDA driver's entry-point lookup (every runtime and library's way to the
    // driver): capture's function handed out for each one it exports.
    (cuGetProcAddress, Cuda, [k::UNMODELLED_CALL], lookup),
    (cuGetProcAddress_v2, Cuda, [k::UNMODELLED_CALL], lookup),
    // The shared runtime's driver lookups for the program: the driver's function it
    // finds is handed out as capture's.
    (cudaGetDriverEntryPoint, Cuda, [k::UNMODELLED_CALL], lookup),
    (cudaGetDriverEntryPoint_ptsz, Cuda, [k::UNMODELLED_CALL], lookup),
    (cudaGetDriverEntryPointByVersion, Cuda, [k::UNMODELLED_CALL], lookup),
    (cudaGetDriverEntryPointByVersion_ptsz, Cuda, [k::UNMODELLED_CALL], lookup),
};

/// C library functions capture also exports, and the one entry point of a tool protocol,
/// as `(symbol, owner module)`: no runtime's API and no record of their own. `_exit` and
/// `_Exit` skip atexit handlers, so a process leaving through them (a forked child,
/// usually) would lose what capture still buffers; their shims write it first. `dlsym`
/// and `dlvsym` hand out capture's function for a driver function looked up by name
/// (x86_64: trampolines keeping the caller's address). `InitializeInjectionNvtx2` is what
/// an NVTX loader calls in the injection library `NVTX_INJECTION64_PATH` names (capture,
/// when an `nvtx:NAME` range capture is asked for).
pub const PROCESS_HOOKS: &[(&str, &str)] = &[
    ("_exit", "state"),
    ("_Exit", "state"),
    ("dlsym", "lookup"),
    ("dlvsym", "lookup"),
    ("InitializeInjectionNvtx2", "nvtx"),
];

/// The hand-written symbols whose every call is recorded as unreplayable (a host
/// callback, an IPC handle): exported, and refused by replay, so not modelled.
pub fn unreplayable_only() -> impl Iterator<Item = &'static str> {
    HAND_WRITTEN
        .iter()
        .filter(|h| h.records == [super::semantic::UNREPLAYABLE])
        .map(|h| h.symbol)
}

/// Every symbol libhrr_capture.so exports: each vendor symbol of each table row, each
/// hand-written one, then the process hooks.
pub fn exported_symbols() -> impl Iterator<Item = &'static str> {
    API_TABLE
        .iter()
        .flat_map(|d| d.cuda.into_iter().chain(d.hip))
        .chain(HAND_WRITTEN.iter().map(|h| h.symbol))
        .chain(PROCESS_HOOKS.iter().map(|(s, _)| *s))
        .chain(super::per_thread::TABLE_ALIASES.iter().map(|(a, _)| *a))
        .chain(super::driver::RUNTIME_TWINS.iter().map(|(a, _)| *a))
}
