//! Record kinds that capture writes by hand (registration, launches, symbol addresses,
//! function configuration, unreplayable calls): their ids, stable because archives record them, and names.

pub const REGISTER_FAT_BINARY: u16 = 100;
pub const REGISTER_FUNCTION: u16 = 101;
pub const REGISTER_VAR: u16 = 102;
pub const UNREGISTER_FAT_BINARY: u16 = 103;
/// The device address of a `__device__`/`__constant__` variable at capture (recorded
/// before the first symbol copy that touches it), so replay can map it to the same
/// variable in its own module (`cuModuleGetGlobal` / `hipModuleGetGlobal`). The copy
/// itself is recorded as a plain Memcpy / MemcpyAsync to or from that address.
pub const SYMBOL_ADDRESS: u16 = 104;
/// `cuModuleLoadData[Ex]` / `hipModuleLoadData`: a code object loaded from memory; also
/// written for loads from a file (`cuModuleLoad`, `hipModuleLoad`, whose image capture
/// reads and stores), `cuModuleLoadFatBinary` and the library API (`cuLibraryLoadData`,
/// `cuLibraryLoadFromFile`: the library handle stands for the module).
pub const MODULE_LOAD: u16 = 105;
/// `cuModuleGetFunction` / `hipModuleGetFunction`; also `cuLibraryGetKernel` (a `CUkernel`
/// of a library) and `cuKernelGetFunction` (the `CUfunction` behind one).
pub const MODULE_GET_FUNCTION: u16 = 106;
/// `cudaLaunchKernel` / `hipLaunchKernel`: launch by host stub.
pub const LAUNCH_KERNEL: u16 = 110;
/// `__cudaLaunchKernel`: launch by `cudaKernel_t` (CUDA 12.4+ triple-chevron path).
pub const LAUNCH_KERNEL_BY_HANDLE: u16 = 111;
/// `cuLaunchKernel` / `hipModuleLaunchKernel` / `hipExtModuleLaunchKernel`: a function
/// from a module loaded by the program; recorded like every launch (name, code object,
/// grid, block, arguments).
pub const MODULE_LAUNCH_KERNEL: u16 = 112;
/// `cuModuleUnload` / `cuLibraryUnload` / `hipModuleUnload`: the program is done with a
/// module (replay keeps its own module, loaded by code object, until the end).
pub const MODULE_UNLOAD: u16 = 141;
/// An API that no other process can reproduce (host callbacks, IPC handles).
pub const UNREPLAYABLE: u16 = 120;
/// `cudaFuncSetAttribute` / `hipFuncSetAttribute`: a kernel (name, code object, as a
/// launch names it) and the attribute and value the program set; replay applies it to
/// its own function (`cuFuncSetAttribute`).
pub const FUNC_SET_ATTRIBUTE: u16 = 121;
/// `cudaFuncSetCacheConfig` / `hipFuncSetCacheConfig`: a kernel and its cache preference.
pub const FUNC_SET_CACHE_CONFIG: u16 = 122;
/// `cudaLaunchCooperativeKernel` / `hipLaunchCooperativeKernel` /
/// `hipModuleLaunchCooperativeKernel`: a launch record, replayed cooperatively.
pub const LAUNCH_COOPERATIVE: u16 = 123;
/// `cudaLaunchKernelExC` with launch attributes: a launch record and every attribute
/// (id and value, verbatim), replayed through `cuLaunchKernelEx`.
pub const LAUNCH_KERNEL_EX: u16 = 124;
/// `cudaFuncSetSharedMemConfig` / `hipFuncSetSharedMemConfig`: a kernel and its bank size.
pub const FUNC_SET_SHARED_MEM_CONFIG: u16 = 125;
/// `hipExtLaunchKernel`: a launch record with its start and stop events and flags,
/// replayed through `hipExtModuleLaunchKernel`.
pub const HIP_EXT_LAUNCH: u16 = 126;
/// `cudaGraphLaunch` / `hipGraphLaunch`: the executable graph and stream, the host
/// sources of its H2D nodes as they were at this launch (`fid::GRAPH_INPUT`), the pinned
/// memory its kernels read (`fid::PINNED_SNAPSHOT`), and after the launch completed the
/// bytes each D2H node wrote (`fid::GRAPH_OUTPUT`). A node is named by the sequence id
/// of the call that created it.
pub const GRAPH_LAUNCH: u16 = 131;
/// `cudaGraphAddKernelNode` / `hipGraphAddKernelNode`: a launch record (kernel, shape,
/// arguments with pointer words, pinned snapshots) and the node's graph, dependencies and
/// handle (`fid::KERNEL_NODE`); replayed through `cuGraphAddKernelNode` /
/// `hipGraphAddKernelNode` with replay's own function (`api::kernel_node`).
pub const GRAPH_KERNEL_NODE: u16 = 132;
/// `cudaGraphKernelNodeSetParams` / `hipGraphKernelNodeSetParams`: a launch record and
/// the node (`fid::KERNEL_NODE`).
pub const GRAPH_KERNEL_NODE_SET_PARAMS: u16 = 133;
/// `cudaGraphExecKernelNodeSetParams` / `hipGraphExecKernelNodeSetParams`: a launch
/// record, the executable graph and the node (`fid::KERNEL_NODE`).
pub const GRAPH_EXEC_KERNEL_NODE_SET_PARAMS: u16 = 134;

/// The first call of a surface symbol capture does not model (`api::surface`): its
/// name (`fid::API_NAME`), the library it belongs to (`fid::LIBRARY`) and, for an exempt
/// call, why it is harmless (`fid::REASON`). Only the first call of each API is recorded;
/// the manifest's `unmodelled_apis` counts them all.
pub const UNMODELLED_CALL: u16 = 161;

/// The expected output of an asynchronous device-to-host copy, read by capture once the
/// copy completed (off the program's thread) and attached to the copy's record, which
/// says its output is pending (`api::OUTPUT_PENDING_FIELD`). Fields: `fid::COPY_SEQ`
/// (the copy's sequence id), `fid::COPY_FIELD` (the copy parameter's field id) and the
/// bytes as a blob at `BLOB_FIELD | COPY_FIELD`; flagged incomplete, with the reason in
/// the manifest, when capture could not read them. A graph launch's D2H node output
/// (`fid::GRAPH_OUTPUT_PENDING`) names the launch as the copy and adds `fid::COPY_NODE`.
pub const COPY_OUTPUT: u16 = 171;
/// The bytes of a mapped (page-locked) or managed allocation that completed kernels
/// reached, recorded right after the synchronisation that completed them (no copy
/// carries them): `fid::MAPPED_*`. Replay compares its own allocation after replaying
/// the same synchronisation. Flagged incomplete (no bytes) when over
/// `HRR_CAPTURE_MAPPED_OUTPUT_MAX`.
/// 419: one id space with the table's rows, whose 200-299 are the driver's; 419 is the
/// last of the zero-copy rows' range (400-419), left free for it.
pub const MAPPED_OUTPUT: u16 = 419;

/// A range capture's snapshot of one live allocation (or a piece of one) at the range's
/// start (`HRR_CAPTURE_RANGE`, `api::work`): `fid::DEVICE_ADDRESS`, `fid::SIZE` and the
/// bytes as a blob at `fid::RANGE_BYTES`. Replay copies the bytes into the allocation it
/// made for that address before it replays the range. Flagged incomplete (no bytes) when
/// capture could not read the allocation.
pub const RANGE_RESTORE: u16 = 172;
/// Where a range capture's range starts or ends: `fid::NAME` (the trigger, `profiler`),
/// `fid::RANGE_OCCURRENCE`, and at the start the snapshot's `fid::RANGE_ALLOCATIONS`,
/// `fid::SIZE` (bytes) and `fid::RANGE_NS` (its cost); `fid::RANGE_END` at the end.
pub const RANGE_MARK: u16 = 173;

/// A record kind that capture writes by hand rather than from a table row. Its id is
/// stable: archives record it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SemanticKind {
    pub id: u16,
    pub name: &'static str,
}

/// Every hand-written record kind, by id (names as `api_name` prints them).
pub const SEMANTIC_KINDS: &[SemanticKind] = &[
    SemanticKind {
        id: REGISTER_FAT_BINARY,
        name: "RegisterFatBinary",
    },
    SemanticKind {
        id: REGISTER_FUNCTION,
        name: "RegisterFunction",
    },
    SemanticKind {
        id: REGISTER_VAR,
        name: "RegisterVar",
    },
    // Accepted by replay; capture does not intercept __cudaUnregisterFatBinary.
    SemanticKind {
        id: UNREGISTER_FAT_BINARY,
        name: "UnregisterFatBinary",
    },
    SemanticKind {
        id: SYMBOL_ADDRESS,
        name: "SymbolAddress",
    },
    SemanticKind {
        id: MODULE_LOAD,
        name: "ModuleLoadData",
    },
    SemanticKind {
        id: MODULE_GET_FUNCTION,
        name: "ModuleGetFunction",
    },
    SemanticKind {
        id: LAUNCH_KERNEL,
        name: "LaunchKernel",
    },
    SemanticKind {
        id: LAUNCH_KERNEL_BY_HANDLE,
        name: "LaunchKernelByHandle",
    },
    SemanticKind {
        id: MODULE_LAUNCH_KERNEL,
        name: "ModuleLaunchKernel",
    },
    SemanticKind {
        id: UNREPLAYABLE,
        name: "Unreplayable",
    },
    SemanticKind {
        id: MODULE_UNLOAD,
        name: "ModuleUnload",
    },
    SemanticKind {
        id: FUNC_SET_ATTRIBUTE,
        name: "FuncSetAttribute",
    },
    SemanticKind {
        id: FUNC_SET_CACHE_CONFIG,
        name: "FuncSetCacheConfig",
    },
    SemanticKind {
        id: LAUNCH_COOPERATIVE,
        name: "LaunchCooperativeKernel",
    },
    SemanticKind {
        id: LAUNCH_KERNEL_EX,
        name: "LaunchKernelEx",
    },
    SemanticKind {
        id: FUNC_SET_SHARED_MEM_CONFIG,
        name: "FuncSetSharedMemConfig",
    },
    SemanticKind {
        id: HIP_EXT_LAUNCH,
        name: "HipExtLaunchKernel",
    },
    SemanticKind {
        id: GRAPH_LAUNCH,
        name: "GraphLaunch",
    },
    SemanticKind {
        id: GRAPH_KERNEL_NODE,
        name: "GraphAddKernelNode",
    },
    SemanticKind {
        id: GRAPH_KERNEL_NODE_SET_PARAMS,
        name: "GraphKernelNodeSetParams",
    },
    SemanticKind {
        id: GRAPH_EXEC_KERNEL_NODE_SET_PARAMS,
        name: "GraphExecKernelNodeSetParams",
    },
    SemanticKind {
        id: UNMODELLED_CALL,
        name: "UnmodelledCall",
    },
    SemanticKind {
        id: COPY_OUTPUT,
        name: "CopyOutput",
    },
    SemanticKind {
        id: MAPPED_OUTPUT,
        name: "MappedOutput",
    },
    SemanticKind {
        id: RANGE_RESTORE,
        name: "RangeRestore",
    },
    SemanticKind {
        id: RANGE_MARK,
        name: "RangeMark",
    },
];
