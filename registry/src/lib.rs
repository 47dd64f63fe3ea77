//! hrr-registry: the API registry (re-exported by hrr-archive as `api`). The API table:
//! every intercepted runtime call, declared once, with the record kinds capture writes by
//! hand, the C types of the calls made outside the table (`sigs`), the surface lists and
//! the rules that cover them. No I/O.
//!
//! `hrr_api_table!(callback)` hands the table to a macro. This crate turns it into
//! [`API_TABLE`] (ids, names, parameter meanings); capture turns the same rows into its
//! `extern "C"` shims (one per vendor name); replay turns them into typed calls of the
//! real function. Adding an API is one row. A row is
//!
//! ```text
//! (id, Name, cuda_symbol, hip_symbol, ret_policy; param: RustType => Kind(args), ...)
//! ```
//!
//! `none` stands for a vendor without that symbol. The kind says what a parameter means
//! (see [`ParamKind`]); its argument names the parameter holding a length. Calls whose
//! meaning no parameter kind captures (registration, launches) are handled by hand in
//! capture and replay: their records are [`SEMANTIC_KINDS`] (one id each, here), and
//! their exported symbols are [`HAND_WRITTEN`] rows naming the records they write and
//! the capture module that owns them. The table and those rows are every symbol capture
//! exports.

pub mod batch_op;
pub mod copy_node;
pub mod coverage;
pub mod driver;
pub mod drv_memcpy;
mod exempt;
pub mod faults;
pub mod fid;
mod fields;
mod hand_written;
pub mod hip_abi;
pub mod kernel_node;
pub mod launch_config;
pub mod memcpy3d;
pub mod mempool;
pub mod node_params;
mod param_kind;
pub mod per_thread;
pub mod polls;
pub mod private_runtime;
pub mod ranges;
pub mod row_hooks;
pub mod semantic;
pub mod sigs;
pub mod surface;
pub mod texture;
mod validate;
pub mod work;

pub use exempt::{exempt_reason, Exemption, EXEMPT};
pub use fields::*;
pub use hand_written::{exported_symbols, HandWritten, HAND_WRITTEN, PROCESS_HOOKS};
pub use param_kind::ParamKind;
pub use semantic::{SemanticKind, SEMANTIC_KINDS};
pub use validate::{validate_table, TableError};

/// The runtime family an archive was captured from: one definition, the contract's
/// (its spelling is what manifests and replay results both carry).
pub use hrr_contract::Vendor;

/// Layout of `cudaMemAllocNodeParams` (CUDA 11.4+): pool properties (88 bytes), then the
/// access descriptors' pointer and count, the size and the address out.
pub mod mem_alloc_node {
    pub const SIZE: usize = 120;
    pub const ACCESS_DESCS: usize = 88;
    pub const ACCESS_COUNT: usize = 96;
    pub const BYTESIZE: usize = 104;
    pub const DPTR: usize = 112;
    /// Size of one `cudaMemAccessDesc` (location type and id, flags).
    pub const ACCESS_DESC_SIZE: usize = 12;
    /// The most access descriptors (one per GPU) capture reads.
    pub const MAX_ACCESS_DESCS: u64 = 64;
}

/// The most device ordinals a device list (`ParamKind::DeviceList`) records: more than
/// any machine has devices.
pub const MAX_DEVICE_LIST: u64 = 1024;

/// Size of `cudaMemsetParams`.
pub const MEMSET_PARAMS_SIZE: u64 = 40;
/// Size of `hipMemsetParams`.
pub const HIP_MEMSET_PARAMS_SIZE: u64 = 48;

/// Size of `cudaGraphInstantiateParams` (u64 flags, stream, node out, result out + pad).
pub const INSTANTIATE_PARAMS_SIZE: u64 = 32;

/// What replay expects of the call's return code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetPolicy {
    /// The same code as at capture.
    Exact,
    /// Timing-dependent (query calls): any code is accepted.
    Any,
}

#[derive(Clone, Copy, Debug)]
pub struct ParamDesc {
    pub name: &'static str,
    pub kind: ParamKind,
}

#[derive(Clone, Copy, Debug)]
pub struct ApiDesc {
    pub id: u16,
    pub name: &'static str,
    pub cuda: Option<&'static str>,
    pub hip: Option<&'static str>,
    pub ret: RetPolicy,
    pub params: &'static [ParamDesc],
}

impl ApiDesc {
    pub fn symbol(&self, v: Vendor) -> Option<&'static str> {
        match v {
            Vendor::Cuda => self.cuda,
            Vendor::Hip => self.hip,
        }
    }
    /// Index of the parameter called `name` (the table's length references).
    pub fn param_index(&self, name: &str) -> Option<usize> {
        self.params.iter().position(|p| p.name == name)
    }
    /// Payload field id of parameter `i` (ids 1..=N are the parameters, in order).
    pub fn field_id(i: usize) -> u16 {
        i as u16 + 1
    }
}

/// Calls the macro `$cb` with the generic table. Rust types use `::std::os::raw` and
/// [`crate::Dim3`]-free signatures only, so every row is callable through one
/// typed function pointer.
#[macro_export]
macro_rules! hrr_api_table {
    ($cb:ident) => {
        $cb! {
            (1, GetDeviceCount, cudaGetDeviceCount, hipGetDeviceCount, Exact; count: *mut ::std::os::raw::c_int => OutValue),
            (2, SetDevice, cudaSetDevice, hipSetDevice, Exact; device: ::std::os::raw::c_int => Value),
            (3, GetDevice, cudaGetDevice, hipGetDevice, Exact; device: *mut ::std::os::raw::c_int => OutValue),
            (4, DeviceSynchronize, cudaDeviceSynchronize, hipDeviceSynchronize, Exact;),
            (5, DeviceReset, cudaDeviceReset, hipDeviceReset, Exact;),
            (6, GetDeviceProperties, cudaGetDeviceProperties_v2, hipGetDeviceProperties, Exact; prop: *mut ::std::os::raw::c_void => OutStruct, device: ::std::os::raw::c_int => Value),
            (10, Malloc, cudaMalloc, hipMalloc, Exact; ptr: *mut *mut ::std::os::raw::c_void => OutDevPtr(size), size: usize => Value),
            (11, Free, cudaFree, hipFree, Exact; ptr: *mut ::std::os::raw::c_void => FreeDevPtr),
            (12, MallocHost, cudaMallocHost, hipMallocHost, Exact; ptr: *mut *mut ::std::os::raw::c_void => OutHostPtr(size), size: usize => Value),
            (13, HostAlloc, cudaHostAlloc, hipHostMalloc, Exact; ptr: *mut *mut ::std::os::raw::c_void => OutHostPtr(size), size: usize => Value, flags: ::std::os::raw::c_uint => Value),
            (14, FreeHost, cudaFreeHost, hipHostFree, Exact; ptr: *mut ::std::os::raw::c_void => FreeHostPtr),
            (15, MallocPitch, cudaMallocPitch, hipMallocPitch, Exact; ptr: *mut *mut ::std::os::raw::c_void => OutPitchedDevPtr(pitch, height), pitch: *mut usize => OutSize, width: usize => Value, height: usize => Value),
            (16, HostRegister, cudaHostRegister, hipHostRegister, Exact; ptr: *mut ::std::os::raw::c_void => RegisterHostPtr(size), size: usize => Value, flags: ::std::os::raw::c_uint => Value),
            (17, HostUnregister, cudaHostUnregister, hipHostUnregister, Exact; ptr: *mut ::std::os::raw::c_void => FreeHostPtr),
            (20, Memcpy, cudaMemcpy, hipMemcpy, Exact; dst: *mut ::std::os::raw::c_void => CopyDst(count), src: *const ::std::os::raw::c_void => CopySrc(count), count: usize => Value, kind: ::std::os::raw::c_int => CopyKind),
            (21, MemcpyAsync, cudaMemcpyAsync, hipMemcpyAsync, Exact; dst: *mut ::std::os::raw::c_void => CopyDst(count), src: *const ::std::os::raw::c_void => CopySrc(count), count: usize => Value, kind: ::std::os::raw::c_int => CopyKind, stream: *mut ::std::os::raw::c_void => Stream),
            (22, Memset, cudaMemset, hipMemset, Exact; ptr: *mut ::std::os::raw::c_void => DevPtr, value: ::std::os::raw::c_int => Value, count: usize => Value),
            (23, MemsetAsync, cudaMemsetAsync, hipMemsetAsync, Exact; ptr: *mut ::std::os::raw::c_void => DevPtr, value: ::std::os::raw::c_int => Value, count: usize => Value, stream: *mut ::std::os::raw::c_void => Stream),
            (24, Memcpy2D, cudaMemcpy2D, hipMemcpy2D, Exact; dst: *mut ::std::os::raw::c_void => CopyDst2D(dpitch, width, height), dpitch: usize => Value, src: *const ::std::os::raw::c_void => CopySrc2D(spitch, width, height), spitch: usize => Value, width: usize => Value, height: usize => Value, kind: ::std::os::raw::c_int => CopyKind),
            (25, Memcpy2DAsync, cudaMemcpy2DAsync, hipMemcpy2DAsync, Exact; dst: *mut ::std::os::raw::c_void => CopyDst2D(dpitch, width, height), dpitch: usize => Value, src: *const ::std::os::raw::c_void => CopySrc2D(spitch, width, height), spitch: usize => Value, width: usize => Value, height: usize => Value, kind: ::std::os::raw::c_int => CopyKind, stream: *mut ::std::os::raw::c_void => Stream),
            (26, Memset2D, cudaMemset2D, hipMemset2D, Exact; ptr: *mut ::std::os::raw::c_void => DevPtr, pitch: usize => Value, value: ::std::os::raw::c_int => Value, width: usize => Value, height: usize => Value),
            (28, Memcpy3D, cudaMemcpy3D, hipMemcpy3D, Exact; p: *const ::std::os::raw::c_void => Copy3DParms),
            (29, Memcpy3DAsync, cudaMemcpy3DAsync, hipMemcpy3DAsync, Exact; p: *const ::std::os::raw::c_void => Copy3DParms, stream: *mut ::std::os::raw::c_void => Stream),
            (27, Memset2DAsync, cudaMemset2DAsync, hipMemset2DAsync, Exact; ptr: *mut ::std::os::raw::c_void => DevPtr, pitch: usize => Value, value: ::std::os::raw::c_int => Value, width: usize => Value, height: usize => Value, stream: *mut ::std::os::raw::c_void => Stream),
            (30, StreamCreate, cudaStreamCreate, hipStreamCreate, Exact; stream: *mut *mut ::std::os::raw::c_void => OutStream),
            (31, StreamCreateWithFlags, cudaStreamCreateWithFlags, hipStreamCreateWithFlags, Exact; stream: *mut *mut ::std::os::raw::c_void => OutStream, flags: ::std::os::raw::c_uint => Value),
            (32, StreamCreateWithPriority, cudaStreamCreateWithPriority, hipStreamCreateWithPriority, Exact; stream: *mut *mut ::std::os::raw::c_void => OutStream, flags: ::std::os::raw::c_uint => Value, priority: ::std::os::raw::c_int => Value),
            (33, StreamDestroy, cudaStreamDestroy, hipStreamDestroy, Exact; stream: *mut ::std::os::raw::c_void => Stream),
            (34, StreamSynchronize, cudaStreamSynchronize, hipStreamSynchronize, Exact; stream: *mut ::std::os::raw::c_void => Stream),
            (35, StreamQuery, cudaStreamQuery, hipStreamQuery, Any; stream: *mut ::std::os::raw::c_void => Stream),
            (36, StreamWaitEvent, cudaStreamWaitEvent, hipStreamWaitEvent, Exact; stream: *mut ::std::os::raw::c_void => Stream, event: *mut ::std::os::raw::c_void => Event, flags: ::std::os::raw::c_uint => Value),
            (40, EventCreate, cudaEventCreate, hipEventCreate, Exact; event: *mut *mut ::std::os::raw::c_void => OutEvent),
            (41, EventCreateWithFlags, cudaEventCreateWithFlags, hipEventCreateWithFlags, Exact; event: *mut *mut ::std::os::raw::c_void => OutEvent, flags: ::std::os::raw::c_uint => Value),
            (42, EventRecord, cudaEventRecord, hipEventRecord, Exact; event: *mut ::std::os::raw::c_void => Event, stream: *mut ::std::os::raw::c_void => Stream),
            (43, EventSynchronize, cudaEventSynchronize, hipEventSynchronize, Exact; event: *mut ::std::os::raw::c_void => Event),
            (44, EventQuery, cudaEventQuery, hipEventQuery, Any; event: *mut ::std::os::raw::c_void => Event),
            (45, EventElapsedTime, cudaEventElapsedTime, hipEventElapsedTime, Exact; ms: *mut f32 => OutValue, start: *mut ::std::os::raw::c_void => Event, end: *mut ::std::os::raw::c_void => Event),
            (70, StreamBeginCapture, cudaStreamBeginCapture, hipStreamBeginCapture, Exact; stream: *mut ::std::os::raw::c_void => Stream, mode: ::std::os::raw::c_int => CaptureMode),
            (71, StreamEndCapture, cudaStreamEndCapture, hipStreamEndCapture, Exact; stream: *mut ::std::os::raw::c_void => Stream, graph: *mut *mut ::std::os::raw::c_void => OutGraph),
            (72, StreamIsCapturing, cudaStreamIsCapturing, hipStreamIsCapturing, Exact; stream: *mut ::std::os::raw::c_void => Stream, status: *mut ::std::os::raw::c_int => OutValue),
            (73, StreamGetCaptureInfo, cudaStreamGetCaptureInfo, none, Exact; stream: *mut ::std::os::raw::c_void => Stream, status: *mut ::std::os::raw::c_int => OutValue, id: *mut u64 => OutSize, graph: *mut ::std::os::raw::c_void => OutStruct, deps: *mut ::std::os::raw::c_void => OutStruct, edges: *mut ::std::os::raw::c_void => OutStruct, count: *mut ::std::os::raw::c_void => OutStruct),
            (74, HipStreamGetCaptureInfo, none, hipStreamGetCaptureInfo, Exact; stream: *mut ::std::os::raw::c_void => Stream, status: *mut ::std::os::raw::c_int => OutValue, id: *mut u64 => OutSize),
            (75, GraphInstantiate, cudaGraphInstantiate, none, Exact; exec: *mut *mut ::std::os::raw::c_void => OutGraphExec, graph: *mut ::std::os::raw::c_void => Graph, flags: u64 => Value),
            (76, HipGraphInstantiate, none, hipGraphInstantiate, Exact; exec: *mut *mut ::std::os::raw::c_void => OutGraphExec, graph: *mut ::std::os::raw::c_void => Graph, error_node: *mut ::std::os::raw::c_void => OutStruct, log: *mut ::std::os::raw::c_void => OutStruct, log_size: usize => Value),
            (77, GraphInstantiateWithFlags, cudaGraphInstantiateWithFlags, hipGraphInstantiateWithFlags, Exact; exec: *mut *mut ::std::os::raw::c_void => OutGraphExec, graph: *mut ::std::os::raw::c_void => Graph, flags: u64 => Value),
            (80, GraphInstantiateWithParams, cudaGraphInstantiateWithParams, none, Exact; exec: *mut *mut ::std::os::raw::c_void => OutGraphExec, graph: *mut ::std::os::raw::c_void => Graph, params: *mut ::std::os::raw::c_void => InstantiateParams),
            (81, GraphCreate, cudaGraphCreate, hipGraphCreate, Exact; graph: *mut *mut ::std::os::raw::c_void => OutGraph, flags: ::std::os::raw::c_uint => Value),
            (82, GraphAddEmptyNode, cudaGraphAddEmptyNode, hipGraphAddEmptyNode, Exact; node: *mut *mut ::std::os::raw::c_void => OutGraphNode, graph: *mut ::std::os::raw::c_void => Graph, deps: *mut ::std::os::raw::c_void => GraphNodes(count), count: usize => Value),
            (83, GraphAddMemcpyNode1D, cudaGraphAddMemcpyNode1D, hipGraphAddMemcpyNode1D, Exact; node: *mut *mut ::std::os::raw::c_void => OutGraphNode, graph: *mut ::std::os::raw::c_void => Graph, deps: *mut ::std::os::raw::c_void => GraphNodes(count), count: usize => Value, dst: *mut ::std::os::raw::c_void => CopyDst(bytes), src: *const ::std::os::raw::c_void => CopySrc(bytes), bytes: usize => Value, kind: ::std::os::raw::c_int => CopyKind),
            (84, GraphAddChildGraphNode, cudaGraphAddChildGraphNode, hipGraphAddChildGraphNode, Exact; node: *mut *mut ::std::os::raw::c_void => OutGraphNode, graph: *mut ::std::os::raw::c_void => Graph, deps: *mut ::std::os::raw::c_void => GraphNodes(count), count: usize => Value, child: *mut ::std::os::raw::c_void => Graph),
            (85, GraphAddEventRecordNode, cudaGraphAddEventRecordNode, hipGraphAddEventRecordNode, Exact; node: *mut *mut ::std::os::raw::c_void => OutGraphNode, graph: *mut ::std::os::raw::c_void => Graph, deps: *mut ::std::os::raw::c_void => GraphNodes(count), count: usize => Value, event: *mut ::std::os::raw::c_void => Event),
            (86, GraphAddEventWaitNode, cudaGraphAddEventWaitNode, hipGraphAddEventWaitNode, Exact; node: *mut *mut ::std::os::raw::c_void => OutGraphNode, graph: *mut ::std::os::raw::c_void => Graph, deps: *mut ::std::os::raw::c_void => GraphNodes(count), count: usize => Value, event: *mut ::std::os::raw::c_void => Event),
            (87, GraphAddMemsetNode, cudaGraphAddMemsetNode, none, Exact; node: *mut *mut ::std::os::raw::c_void => OutGraphNode, graph: *mut ::std::os::raw::c_void => Graph, deps: *mut ::std::os::raw::c_void => GraphNodes(count), count: usize => Value, params: *const ::std::os::raw::c_void => MemsetNodeParams),
            (88, HipGraphAddMemsetNode, none, hipGraphAddMemsetNode, Exact; node: *mut *mut ::std::os::raw::c_void => OutGraphNode, graph: *mut ::std::os::raw::c_void => Graph, deps: *mut ::std::os::raw::c_void => GraphNodes(count), count: usize => Value, params: *const ::std::os::raw::c_void => HipMemsetNodeParams),
            (89, GraphClone, cudaGraphClone, hipGraphClone, Exact; clone: *mut *mut ::std::os::raw::c_void => OutGraph, graph: *mut ::std::os::raw::c_void => Graph),
            (90, GraphAddMemAllocNode, cudaGraphAddMemAllocNode, none, Exact; node: *mut *mut ::std::os::raw::c_void => OutGraphNode, graph: *mut ::std::os::raw::c_void => Graph, deps: *mut ::std::os::raw::c_void => GraphNodes(count), count: usize => Value, params: *mut ::std::os::raw::c_void => MemAllocNodeParams),
            (91, GraphAddMemFreeNode, cudaGraphAddMemFreeNode, none, Exact; node: *mut *mut ::std::os::raw::c_void => OutGraphNode, graph: *mut ::std::os::raw::c_void => Graph, deps: *mut ::std::os::raw::c_void => GraphNodes(count), count: usize => Value, ptr: *mut ::std::os::raw::c_void => DevPtr),
            (92, GraphAddMemcpyNode, cudaGraphAddMemcpyNode, hipGraphAddMemcpyNode, Exact; node: *mut *mut ::std::os::raw::c_void => OutGraphNode, graph: *mut ::std::os::raw::c_void => Graph, deps: *mut ::std::os::raw::c_void => GraphNodes(count), count: usize => Value, p: *const ::std::os::raw::c_void => Copy3DParms),
            (93, GraphMemsetNodeSetParams, cudaGraphMemsetNodeSetParams, none, Exact; node: *mut ::std::os::raw::c_void => GraphNode, params: *const ::std::os::raw::c_void => MemsetNodeParams),
            (94, HipGraphMemsetNodeSetParams, none, hipGraphMemsetNodeSetParams, Exact; node: *mut ::std::os::raw::c_void => GraphNode, params: *const ::std::os::raw::c_void => HipMemsetNodeParams),
            (95, GraphExecMemsetNodeSetParams, cudaGraphExecMemsetNodeSetParams, none, Exact; exec: *mut ::std::os::raw::c_void => GraphExec, node: *mut ::std::os::raw::c_void => GraphNode, params: *const ::std::os::raw::c_void => MemsetNodeParams),
            (96, HipGraphExecMemsetNodeSetParams, none, hipGraphExecMemsetNodeSetParams, Exact; exec: *mut ::std::os::raw::c_void => GraphExec, node: *mut ::std::os::raw::c_void => GraphNode, params: *const ::std::os::raw::c_void => HipMemsetNodeParams),
            (97, GraphExecUpdate, cudaGraphExecUpdate, none, Exact; exec: *mut ::std::os::raw::c_void => GraphExec, graph: *mut ::std::os::raw::c_void => Graph, result: *mut ::std::os::raw::c_void => OutStruct),
            (98, HipGraphExecUpdate, none, hipGraphExecUpdate, Exact; exec: *mut ::std::os::raw::c_void => GraphExec, graph: *mut ::std::os::raw::c_void => Graph, error_node: *mut ::std::os::raw::c_void => OutStruct, result: *mut ::std::os::raw::c_void => OutStruct),
            (78, GraphExecDestroy, cudaGraphExecDestroy, hipGraphExecDestroy, Exact; exec: *mut ::std::os::raw::c_void => FreeGraphExec),
            (79, GraphDestroy, cudaGraphDestroy, hipGraphDestroy, Exact; graph: *mut ::std::os::raw::c_void => FreeGraph),
            // Graph gaps (ids 420-449): memcpy-node parameter updates (the node's host side
            // follows the update: `api::copy_node`), dependency edges.
            (420, GraphMemcpyNodeSetParams1D, cudaGraphMemcpyNodeSetParams1D, hipGraphMemcpyNodeSetParams1D, Exact; node: *mut ::std::os::raw::c_void => GraphNode, dst: *mut ::std::os::raw::c_void => CopyDst(count), src: *const ::std::os::raw::c_void => CopySrc(count), count: usize => Value, kind: ::std::os::raw::c_int => CopyKind),
            (421, GraphExecMemcpyNodeSetParams1D, cudaGraphExecMemcpyNodeSetParams1D, hipGraphExecMemcpyNodeSetParams1D, Exact; exec: *mut ::std::os::raw::c_void => GraphExec, node: *mut ::std::os::raw::c_void => GraphNode, dst: *mut ::std::os::raw::c_void => CopyDst(count), src: *const ::std::os::raw::c_void => CopySrc(count), count: usize => Value, kind: ::std::os::raw::c_int => CopyKind),
            (422, GraphMemcpyNodeSetParams, cudaGraphMemcpyNodeSetParams, hipGraphMemcpyNodeSetParams, Exact; node: *mut ::std::os::raw::c_void => GraphNode, p: *const ::std::os::raw::c_void => Copy3DParms),
            (423, GraphExecMemcpyNodeSetParams, cudaGraphExecMemcpyNodeSetParams, hipGraphExecMemcpyNodeSetParams, Exact; exec: *mut ::std::os::raw::c_void => GraphExec, node: *mut ::std::os::raw::c_void => GraphNode, p: *const ::std::os::raw::c_void => Copy3DParms),
            (424, GraphAddDependencies, cudaGraphAddDependencies, none, Exact; graph: *mut ::std::os::raw::c_void => Graph, from: *mut ::std::os::raw::c_void => GraphNodes(count), to: *mut ::std::os::raw::c_void => GraphNodes(count), edges: *mut ::std::os::raw::c_void => UnrecordedStructIn, count: usize => Value),
            (425, HipGraphAddDependencies, none, hipGraphAddDependencies, Exact; graph: *mut ::std::os::raw::c_void => Graph, from: *mut ::std::os::raw::c_void => GraphNodes(count), to: *mut ::std::os::raw::c_void => GraphNodes(count), count: usize => Value),
            (426, GraphRemoveDependencies, cudaGraphRemoveDependencies, none, Exact; graph: *mut ::std::os::raw::c_void => Graph, from: *mut ::std::os::raw::c_void => GraphNodes(count), to: *mut ::std::os::raw::c_void => GraphNodes(count), edges: *mut ::std::os::raw::c_void => UnrecordedStructIn, count: usize => Value),
            (427, HipGraphRemoveDependencies, none, hipGraphRemoveDependencies, Exact; graph: *mut ::std::os::raw::c_void => Graph, from: *mut ::std::os::raw::c_void => GraphNodes(count), to: *mut ::std::os::raw::c_void => GraphNodes(count), count: usize => Value),
            (431, StreamBeginCaptureToGraph, cudaStreamBeginCaptureToGraph, none, Exact; stream: *mut ::std::os::raw::c_void => Stream, graph: *mut ::std::os::raw::c_void => Graph, deps: *mut ::std::os::raw::c_void => GraphNodes(count), edges: *mut ::std::os::raw::c_void => UnrecordedStructIn, count: usize => Value, mode: ::std::os::raw::c_int => CaptureMode),
            // What runtimes and libraries resolve through cuGetProcAddress at CUDA 13 (H200,
            // driver 580): the unversioned primary-context release, the context-taking
            // synchronize, the driver's capture-state query.
            (432, DevicePrimaryCtxReleaseV1, cuDevicePrimaryCtxRelease, none, Exact; dev: ::std::os::raw::c_int => Value),
            (433, CtxSynchronizeV2, cuCtxSynchronize_v2, none, Exact; ctx: *mut ::std::os::raw::c_void => Context),
            (434, CuStreamGetCaptureInfo, cuStreamGetCaptureInfo_v2, none, Exact; stream: *mut ::std::os::raw::c_void => Stream, status: *mut ::std::os::raw::c_int => OutValue, id: *mut u64 => OutSize, graph: *mut ::std::os::raw::c_void => OutStruct, deps: *mut ::std::os::raw::c_void => OutStruct, count: *mut ::std::os::raw::c_void => OutStruct),
            // The static runtime's cudaDeviceReset: the primary context reset, at the ABI it
            // asks for (both destroy every allocation, module, stream and event).
            (435, DevicePrimaryCtxReset, cuDevicePrimaryCtxReset_v2, none, Exact; dev: ::std::os::raw::c_int => Value),
            (436, DevicePrimaryCtxResetV1, cuDevicePrimaryCtxReset, none, Exact; dev: ::std::os::raw::c_int => Value),
            // What nvcc's static runtime reaches the driver with for managed memory, memory
            // pools and context settings (the runtime rows' twins: the same parameter kinds,
            // `CUmemLocation` by value as 8 bytes, pool properties and attribute values in
            // the runtime's layouts, which the runtime passes through unchanged).
            (437, DrvMemAllocManaged, cuMemAllocManaged, none, Exact; dptr: *mut u64 => OutManagedPtr(size), size: usize => Value, flags: ::std::os::raw::c_uint => Value),
            (438, DrvMemPrefetchAsync, cuMemPrefetchAsync_v2, none, Exact; ptr: u64 => DevPtr, count: usize => Value, location: u64 => Value, flags: ::std::os::raw::c_uint => Value, stream: *mut ::std::os::raw::c_void => Stream),
            (439, DrvMemAdvise, cuMemAdvise_v2, none, Exact; ptr: u64 => DevPtr, count: usize => Value, advice: ::std::os::raw::c_int => Value, location: u64 => Value),
            (440, CuStreamAttachMemAsync, cuStreamAttachMemAsync, none, Exact; stream: *mut ::std::os::raw::c_void => Stream, ptr: u64 => DevPtr, length: usize => Value, flags: ::std::os::raw::c_uint => Value),
            (441, DevicePrimaryCtxSetFlags, cuDevicePrimaryCtxSetFlags_v2, none, Exact; dev: ::std::os::raw::c_int => Value, flags: ::std::os::raw::c_uint => Value),
            (442, DrvMemAllocAsync, cuMemAllocAsync, none, Exact; dptr: *mut u64 => OutDevPtr(size), size: usize => Value, stream: *mut ::std::os::raw::c_void => Stream),
            (443, DrvMemFreeAsync, cuMemFreeAsync, none, Exact; dptr: u64 => FreeDevPtr, stream: *mut ::std::os::raw::c_void => Stream),
            (444, DrvMemPoolCreate, cuMemPoolCreate, none, Exact; pool: *mut *mut ::std::os::raw::c_void => OutMemPool, props: *const ::std::os::raw::c_void => MemPoolProps),
            (445, DrvMemPoolDestroy, cuMemPoolDestroy, none, Exact; pool: *mut ::std::os::raw::c_void => FreeMemPool),
            (446, DrvMemPoolSetAttribute, cuMemPoolSetAttribute, none, Exact; pool: *mut ::std::os::raw::c_void => MemPool, attr: ::std::os::raw::c_int => Value, value: *mut ::std::os::raw::c_void => PoolAttrValue(attr)),
            (447, DrvMemPoolGetAttribute, cuMemPoolGetAttribute, none, Exact; pool: *mut ::std::os::raw::c_void => MemPool, attr: ::std::os::raw::c_int => Value, value: *mut ::std::os::raw::c_void => OutPoolAttrValue(attr)),
            (448, DrvMemPoolTrimTo, cuMemPoolTrimTo, none, Exact; pool: *mut ::std::os::raw::c_void => MemPool, keep: usize => Value),
            (449, DrvDeviceGetDefaultMemPool, cuDeviceGetDefaultMemPool, none, Exact; pool: *mut *mut ::std::os::raw::c_void => OutDevicePool, device: ::std::os::raw::c_int => Value),
            (450, DrvDeviceSetMemPool, cuDeviceSetMemPool, none, Exact; device: ::std::os::raw::c_int => Value, pool: *mut ::std::os::raw::c_void => MemPool),
            (451, DrvDeviceGetMemPool, cuDeviceGetMemPool, none, Exact; pool: *mut *mut ::std::os::raw::c_void => OutDevicePool, device: ::std::os::raw::c_int => Value),
            (452, DrvMemAllocFromPoolAsync, cuMemAllocFromPoolAsync, none, Exact; dptr: *mut u64 => OutDevPtr(size), size: usize => Value, pool: *mut ::std::os::raw::c_void => MemPool, stream: *mut ::std::os::raw::c_void => Stream),
            (453, CtxSetCacheConfig, cuCtxSetCacheConfig, none, Exact; config: ::std::os::raw::c_int => Value),
            (454, CtxSetLimit, cuCtxSetLimit, none, Exact; limit: ::std::os::raw::c_int => Value, value: usize => Value),
            // Virtual memory management (ids 455-462): reserved address ranges, physical
            // memory handles mapped into them, and access to the mappings (PyTorch's
            // expandable segments, NCCL, any allocator that grows in place). HIP's twins
            // take `void*` where CUDA takes `CUdeviceptr`: the same register.
            (455, MemAddressReserve, cuMemAddressReserve, hipMemAddressReserve, Exact; ptr: *mut u64 => OutAddressRange(size), size: usize => Value, alignment: usize => Value, addr: u64 => Value, flags: u64 => Value),
            (456, MemAddressFree, cuMemAddressFree, hipMemAddressFree, Exact; ptr: u64 => FreeDevPtr, size: usize => Value),
            (457, MemCreate, cuMemCreate, hipMemCreate, Exact; handle: *mut u64 => OutMemHandle, size: usize => Value, prop: *const ::std::os::raw::c_void => ByLayout(mem_alloc_prop), flags: u64 => Value),
            (458, MemRelease, cuMemRelease, hipMemRelease, Exact; handle: u64 => FreeMemHandle),
            (459, MemMap, cuMemMap, hipMemMap, Exact; ptr: u64 => MapAt(size), size: usize => Value, offset: usize => Value, handle: u64 => MemHandle, flags: u64 => Value),
            (460, MemUnmap, cuMemUnmap, hipMemUnmap, Exact; ptr: u64 => UnmapAt, size: usize => Value),
            (461, MemSetAccess, cuMemSetAccess, hipMemSetAccess, Exact; ptr: u64 => DevPtr, size: usize => Value, desc: *const ::std::os::raw::c_void => AccessDescs(count), count: usize => Value),
            (462, MemRetainAllocationHandle, cuMemRetainAllocationHandle, hipMemRetainAllocationHandle, Exact; handle: *mut u64 => OutMemHandle, addr: u64 => DevPtr),
            // Graph memory given back to the system (ids 463-464): what graphs freed and
            // the device keeps cached.
            (463, DeviceGraphMemTrim, cudaDeviceGraphMemTrim, none, Exact; device: ::std::os::raw::c_int => Value),
            (464, DrvDeviceGraphMemTrim, cuDeviceGraphMemTrim, none, Exact; device: ::std::os::raw::c_int => Value),
            // Stream and kernel-node attributes (an access-policy window for persisting
            // L2, a priority, a synchronisation policy...), the persisting lines reset,
            // attributes copied between streams, a graph uploaded ahead of its launch,
            // event nodes given another event, peer copies through the runtime (ids
            // 465-484).
            (465, CtxResetPersistingL2Cache, cudaCtxResetPersistingL2Cache, none, Exact;),
            (466, DrvCtxResetPersistingL2Cache, cuCtxResetPersistingL2Cache, none, Exact;),
            (467, StreamCopyAttributes, cudaStreamCopyAttributes, none, Exact; dst: *mut ::std::os::raw::c_void => Stream, src: *mut ::std::os::raw::c_void => Stream),
            (468, DrvStreamCopyAttributes, cuStreamCopyAttributes, none, Exact; dst: *mut ::std::os::raw::c_void => Stream, src: *mut ::std::os::raw::c_void => Stream),
            (469, StreamSetAttribute, cudaStreamSetAttribute, none, Exact; stream: *mut ::std::os::raw::c_void => Stream, attr: ::std::os::raw::c_int => Value, value: *const ::std::os::raw::c_void => LaunchAttrValue(attr)),
            (470, DrvStreamSetAttribute, cuStreamSetAttribute, none, Exact; stream: *mut ::std::os::raw::c_void => Stream, attr: ::std::os::raw::c_int => Value, value: *const ::std::os::raw::c_void => LaunchAttrValue(attr)),
            (471, GraphKernelNodeSetAttribute, cudaGraphKernelNodeSetAttribute, none, Exact; node: *mut ::std::os::raw::c_void => GraphNode, attr: ::std::os::raw::c_int => Value, value: *const ::std::os::raw::c_void => LaunchAttrValue(attr)),
            (472, DrvGraphKernelNodeSetAttribute, cuGraphKernelNodeSetAttribute, none, Exact; node: *mut ::std::os::raw::c_void => GraphNode, attr: ::std::os::raw::c_int => Value, value: *const ::std::os::raw::c_void => LaunchAttrValue(attr)),
            (473, GraphUpload, cudaGraphUpload, none, Exact; exec: *mut ::std::os::raw::c_void => GraphExec, stream: *mut ::std::os::raw::c_void => Stream),
            (474, DrvGraphUpload, cuGraphUpload, none, Exact; exec: *mut ::std::os::raw::c_void => GraphExec, stream: *mut ::std::os::raw::c_void => Stream),
            (475, GraphEventRecordNodeSetEvent, cudaGraphEventRecordNodeSetEvent, hipGraphEventRecordNodeSetEvent, Exact; node: *mut ::std::os::raw::c_void => GraphNode, event: *mut ::std::os::raw::c_void => Event),
            (476, GraphEventWaitNodeSetEvent, cudaGraphEventWaitNodeSetEvent, hipGraphEventWaitNodeSetEvent, Exact; node: *mut ::std::os::raw::c_void => GraphNode, event: *mut ::std::os::raw::c_void => Event),
            (477, GraphExecEventRecordNodeSetEvent, cudaGraphExecEventRecordNodeSetEvent, hipGraphExecEventRecordNodeSetEvent, Exact; exec: *mut ::std::os::raw::c_void => GraphExec, node: *mut ::std::os::raw::c_void => GraphNode, event: *mut ::std::os::raw::c_void => Event),
            (478, GraphExecEventWaitNodeSetEvent, cudaGraphExecEventWaitNodeSetEvent, hipGraphExecEventWaitNodeSetEvent, Exact; exec: *mut ::std::os::raw::c_void => GraphExec, node: *mut ::std::os::raw::c_void => GraphNode, event: *mut ::std::os::raw::c_void => Event),
            (479, DrvGraphEventRecordNodeSetEvent, cuGraphEventRecordNodeSetEvent, none, Exact; node: *mut ::std::os::raw::c_void => GraphNode, event: *mut ::std::os::raw::c_void => Event),
            (480, DrvGraphEventWaitNodeSetEvent, cuGraphEventWaitNodeSetEvent, none, Exact; node: *mut ::std::os::raw::c_void => GraphNode, event: *mut ::std::os::raw::c_void => Event),
            (481, DrvGraphExecEventRecordNodeSetEvent, cuGraphExecEventRecordNodeSetEvent, none, Exact; exec: *mut ::std::os::raw::c_void => GraphExec, node: *mut ::std::os::raw::c_void => GraphNode, event: *mut ::std::os::raw::c_void => Event),
            (482, DrvGraphExecEventWaitNodeSetEvent, cuGraphExecEventWaitNodeSetEvent, none, Exact; exec: *mut ::std::os::raw::c_void => GraphExec, node: *mut ::std::os::raw::c_void => GraphNode, event: *mut ::std::os::raw::c_void => Event),
            (483, RtMemcpyPeer, cudaMemcpyPeer, hipMemcpyPeer, Exact; dst: *mut ::std::os::raw::c_void => DevPtr, dst_device: ::std::os::raw::c_int => Value, src: *const ::std::os::raw::c_void => DevPtr, src_device: ::std::os::raw::c_int => Value, count: usize => Value),
            (484, RtMemcpyPeerAsync, cudaMemcpyPeerAsync, hipMemcpyPeerAsync, Exact; dst: *mut ::std::os::raw::c_void => DevPtr, dst_device: ::std::os::raw::c_int => Value, src: *const ::std::os::raw::c_void => DevPtr, src_device: ::std::os::raw::c_int => Value, count: usize => Value, stream: *mut ::std::os::raw::c_void => Stream),
            // Graph introspection (ids 485-488): the nodes a graph holds, and its roots.
            (485, GraphGetNodes, cudaGraphGetNodes, hipGraphGetNodes, Exact; graph: *mut ::std::os::raw::c_void => Graph, nodes: *mut *mut ::std::os::raw::c_void => OutGraphNodeList(count), count: *mut usize => InOutCount),
            (486, GraphGetRootNodes, cudaGraphGetRootNodes, hipGraphGetRootNodes, Exact; graph: *mut ::std::os::raw::c_void => Graph, nodes: *mut *mut ::std::os::raw::c_void => OutGraphNodeList(count), count: *mut usize => InOutCount),
            (487, DrvGraphGetNodes, cuGraphGetNodes, none, Exact; graph: *mut ::std::os::raw::c_void => Graph, nodes: *mut *mut ::std::os::raw::c_void => OutGraphNodeList(count), count: *mut usize => InOutCount),
            (488, DrvGraphGetRootNodes, cuGraphGetRootNodes, none, Exact; graph: *mut ::std::os::raw::c_void => Graph, nodes: *mut *mut ::std::os::raw::c_void => OutGraphNodeList(count), count: *mut usize => InOutCount),
            (489, GraphNodeSetEnabled, cudaGraphNodeSetEnabled, hipGraphNodeSetEnabled, Exact; exec: *mut ::std::os::raw::c_void => GraphExec, node: *mut ::std::os::raw::c_void => GraphNode, enabled: ::std::os::raw::c_uint => Value),
            (490, DrvGraphNodeSetEnabled, cuGraphNodeSetEnabled, none, Exact; exec: *mut ::std::os::raw::c_void => GraphExec, node: *mut ::std::os::raw::c_void => GraphNode, enabled: ::std::os::raw::c_uint => Value),
            (491, GraphDestroyNode, cudaGraphDestroyNode, hipGraphDestroyNode, Exact; node: *mut ::std::os::raw::c_void => GraphNode),
            (492, DrvGraphDestroyNode, cuGraphDestroyNode, none, Exact; node: *mut ::std::os::raw::c_void => GraphNode),
            (493, DeviceEnablePeerAccess, cudaDeviceEnablePeerAccess, hipDeviceEnablePeerAccess, Exact; peer: ::std::os::raw::c_int => Value, flags: ::std::os::raw::c_uint => Value),
            (494, DeviceDisablePeerAccess, cudaDeviceDisablePeerAccess, hipDeviceDisablePeerAccess, Exact; peer: ::std::os::raw::c_int => Value),
            (495, InitDevice, cudaInitDevice, none, Exact; device: ::std::os::raw::c_int => Value, device_flags: ::std::os::raw::c_uint => Value, flags: ::std::os::raw::c_uint => Value),
            (496, DeviceFlushGPUDirectRDMAWrites, cudaDeviceFlushGPUDirectRDMAWrites, none, Exact; target: ::std::os::raw::c_int => Value, scope: ::std::os::raw::c_int => Value),
            (497, MemcpyArrayToArray, cudaMemcpyArrayToArray, none, Exact; dst: *mut ::std::os::raw::c_void => Array, w_offset_dst: usize => Value, h_offset_dst: usize => Value, src: *mut ::std::os::raw::c_void => Array, w_offset_src: usize => Value, h_offset_src: usize => Value, count: usize => Value, kind: ::std::os::raw::c_int => CopyKind),
            (498, MemcpyToArrayAsync, cudaMemcpyToArrayAsync, none, Exact; dst: *mut ::std::os::raw::c_void => Array, w_offset: usize => Value, h_offset: usize => Value, src: *const ::std::os::raw::c_void => CopySrc(count), count: usize => Value, kind: ::std::os::raw::c_int => CopyKind, stream: *mut ::std::os::raw::c_void => Stream),
            (499, MemcpyFromArrayAsync, cudaMemcpyFromArrayAsync, none, Exact; dst: *mut ::std::os::raw::c_void => CopyDst(count), src: *mut ::std::os::raw::c_void => Array, w_offset: usize => Value, h_offset: usize => Value, count: usize => Value, kind: ::std::os::raw::c_int => CopyKind, stream: *mut ::std::os::raw::c_void => Stream),
            (500, GraphKernelNodeCopyAttributes, cudaGraphKernelNodeCopyAttributes, hipGraphKernelNodeCopyAttributes, Exact; dst: *mut ::std::os::raw::c_void => GraphNode, src: *mut ::std::os::raw::c_void => GraphNode),
            (501, DrvGraphKernelNodeCopyAttributes, cuGraphKernelNodeCopyAttributes, none, Exact; dst: *mut ::std::os::raw::c_void => GraphNode, src: *mut ::std::os::raw::c_void => GraphNode),
            (502, CtxEnablePeerAccess, cuCtxEnablePeerAccess, hipCtxEnablePeerAccess, Exact; peer: *mut ::std::os::raw::c_void => Context, flags: ::std::os::raw::c_uint => Value),
            (503, CtxDisablePeerAccess, cuCtxDisablePeerAccess, hipCtxDisablePeerAccess, Exact; peer: *mut ::std::os::raw::c_void => Context),
            (504, FlushGPUDirectRDMAWrites, cuFlushGPUDirectRDMAWrites, none, Exact; target: ::std::os::raw::c_int => Value, scope: ::std::os::raw::c_int => Value),
            (505, EventRecordWithFlags, cudaEventRecordWithFlags, hipEventRecordWithFlags, Exact; event: *mut ::std::os::raw::c_void => Event, stream: *mut ::std::os::raw::c_void => Stream, flags: ::std::os::raw::c_uint => Value),
            (506, DrvEventRecordWithFlags, cuEventRecordWithFlags, none, Exact; event: *mut ::std::os::raw::c_void => Event, stream: *mut ::std::os::raw::c_void => Stream, flags: ::std::os::raw::c_uint => Value),
            (507, GraphNodeGetDependencies, cudaGraphNodeGetDependencies, none, Exact; node: *mut ::std::os::raw::c_void => GraphNode, deps: *mut *mut ::std::os::raw::c_void => OutGraphNodeList(count), edges: *mut ::std::os::raw::c_void => UnrecordedStructIn, count: *mut usize => InOutCount),
            (508, GraphNodeGetDependentNodes, cudaGraphNodeGetDependentNodes, none, Exact; node: *mut ::std::os::raw::c_void => GraphNode, deps: *mut *mut ::std::os::raw::c_void => OutGraphNodeList(count), edges: *mut ::std::os::raw::c_void => UnrecordedStructIn, count: *mut usize => InOutCount),
            (509, GraphGetEdges, cudaGraphGetEdges, none, Exact; graph: *mut ::std::os::raw::c_void => Graph, from: *mut *mut ::std::os::raw::c_void => OutGraphNodeList(count), to: *mut *mut ::std::os::raw::c_void => OutGraphNodeList(count), edges: *mut ::std::os::raw::c_void => UnrecordedStructIn, count: *mut usize => InOutCount),
            (510, GraphNodeFindInClone, cudaGraphNodeFindInClone, hipGraphNodeFindInClone, Exact; node: *mut *mut ::std::os::raw::c_void => OutGraphNode, original: *mut ::std::os::raw::c_void => GraphNode, clone: *mut ::std::os::raw::c_void => Graph),
            (511, DrvGraphNodeGetDependencies, cuGraphNodeGetDependencies_v2, none, Exact; node: *mut ::std::os::raw::c_void => GraphNode, deps: *mut *mut ::std::os::raw::c_void => OutGraphNodeList(count), edges: *mut ::std::os::raw::c_void => UnrecordedStructIn, count: *mut usize => InOutCount),
            (512, DrvGraphNodeGetDependentNodes, cuGraphNodeGetDependentNodes_v2, none, Exact; node: *mut ::std::os::raw::c_void => GraphNode, deps: *mut *mut ::std::os::raw::c_void => OutGraphNodeList(count), edges: *mut ::std::os::raw::c_void => UnrecordedStructIn, count: *mut usize => InOutCount),
            (513, DrvGraphGetEdges, cuGraphGetEdges_v2, none, Exact; graph: *mut ::std::os::raw::c_void => Graph, from: *mut *mut ::std::os::raw::c_void => OutGraphNodeList(count), to: *mut *mut ::std::os::raw::c_void => OutGraphNodeList(count), edges: *mut ::std::os::raw::c_void => UnrecordedStructIn, count: *mut usize => InOutCount),
            (514, DrvGraphNodeFindInClone, cuGraphNodeFindInClone, none, Exact; node: *mut *mut ::std::os::raw::c_void => OutGraphNode, original: *mut ::std::os::raw::c_void => GraphNode, clone: *mut ::std::os::raw::c_void => Graph),
            (515, DrvGraphNodeGetDependenciesV1, cuGraphNodeGetDependencies, hipGraphNodeGetDependencies, Exact; node: *mut ::std::os::raw::c_void => GraphNode, deps: *mut *mut ::std::os::raw::c_void => OutGraphNodeList(count), count: *mut usize => InOutCount),
            (516, DrvGraphNodeGetDependentNodesV1, cuGraphNodeGetDependentNodes, hipGraphNodeGetDependentNodes, Exact; node: *mut ::std::os::raw::c_void => GraphNode, deps: *mut *mut ::std::os::raw::c_void => OutGraphNodeList(count), count: *mut usize => InOutCount),
            (517, DrvGraphGetEdgesV1, cuGraphGetEdges, hipGraphGetEdges, Exact; graph: *mut ::std::os::raw::c_void => Graph, from: *mut *mut ::std::os::raw::c_void => OutGraphNodeList(count), to: *mut *mut ::std::os::raw::c_void => OutGraphNodeList(count), count: *mut usize => InOutCount),
            // Memory pools by location (ids 524-531, CUDA 13): a pool's access from other
            // devices, and the default or current pool of a location and allocation type.
            (524, MemPoolSetAccess, cudaMemPoolSetAccess, none, Exact; pool: *mut ::std::os::raw::c_void => MemPool, desc: *const ::std::os::raw::c_void => AccessDescs(count), count: usize => Value),
            (525, DrvMemPoolSetAccess, cuMemPoolSetAccess, none, Exact; pool: *mut ::std::os::raw::c_void => MemPool, desc: *const ::std::os::raw::c_void => AccessDescs(count), count: usize => Value),
            (526, MemGetDefaultMemPool, cudaMemGetDefaultMemPool, none, Exact; pool: *mut *mut ::std::os::raw::c_void => OutDevicePool, location: *mut ::std::os::raw::c_void => MemLocation, kind: ::std::os::raw::c_int => Value),
            (527, MemGetMemPool, cudaMemGetMemPool, none, Exact; pool: *mut *mut ::std::os::raw::c_void => OutDevicePool, location: *mut ::std::os::raw::c_void => MemLocation, kind: ::std::os::raw::c_int => Value),
            (528, MemSetMemPool, cudaMemSetMemPool, none, Exact; location: *mut ::std::os::raw::c_void => MemLocation, kind: ::std::os::raw::c_int => Value, pool: *mut ::std::os::raw::c_void => MemPool),
            (529, DrvMemGetDefaultMemPool, cuMemGetDefaultMemPool, none, Exact; pool: *mut *mut ::std::os::raw::c_void => OutDevicePool, location: *mut ::std::os::raw::c_void => MemLocation, kind: ::std::os::raw::c_int => Value),
            (530, DrvMemGetMemPool, cuMemGetMemPool, none, Exact; pool: *mut *mut ::std::os::raw::c_void => OutDevicePool, location: *mut ::std::os::raw::c_void => MemLocation, kind: ::std::os::raw::c_int => Value),
            (531, DrvMemSetMemPool, cuMemSetMemPool, none, Exact; location: *mut ::std::os::raw::c_void => MemLocation, kind: ::std::os::raw::c_int => Value, pool: *mut ::std::os::raw::c_void => MemPool),
            // The driver's context events and a stream's context (ids 538-540).
            (538, DrvCtxRecordEvent, cuCtxRecordEvent, none, Exact; ctx: *mut ::std::os::raw::c_void => Context, event: *mut ::std::os::raw::c_void => Event),
            (539, DrvCtxWaitEvent, cuCtxWaitEvent, none, Exact; ctx: *mut ::std::os::raw::c_void => Context, event: *mut ::std::os::raw::c_void => Event),
            (540, DrvStreamGetCtx, cuStreamGetCtx, none, Exact; stream: *mut ::std::os::raw::c_void => Stream, ctx: *mut *mut ::std::os::raw::c_void => OutContextRef),
            // 3D memsets (ids 541-542): `cudaPitchedPtr` (4 words) and `cudaExtent` (3) are
            // passed by value on the stack (x86-64 SysV: structs over two eightbytes), after
            // the registers the integer parameters leave unused.
            (541, Memset3D, cudaMemset3D, none, Exact; value: ::std::os::raw::c_int => Value, spill_rsi: u64 => SpilledRegister, spill_rdx: u64 => SpilledRegister, spill_rcx: u64 => SpilledRegister, spill_r8: u64 => SpilledRegister, spill_r9: u64 => SpilledRegister, ptr: *mut ::std::os::raw::c_void => DevPtr, pitch: usize => Value, xsize: usize => Value, ysize: usize => Value, width: usize => Value, height: usize => Value, depth: usize => Value),
            (542, Memset3DAsync, cudaMemset3DAsync, none, Exact; value: ::std::os::raw::c_int => Value, stream: *mut ::std::os::raw::c_void => Stream, spill_rdx: u64 => SpilledRegister, spill_rcx: u64 => SpilledRegister, spill_r8: u64 => SpilledRegister, spill_r9: u64 => SpilledRegister, ptr: *mut ::std::os::raw::c_void => DevPtr, pitch: usize => Value, xsize: usize => Value, ysize: usize => Value, width: usize => Value, height: usize => Value, depth: usize => Value),
            // Stream capture and child graphs, edited (ids 543-547): a capture's dependencies
            // replaced or added to (CUDA's edge data unrecorded: null, or the record is
            // incomplete), a child-graph node's graph replaced in an executable graph, the
            // graph a child-graph node holds and the graph a node belongs to (mapped, owned
            // by their node and by the program's handle).
            (543, StreamUpdateCaptureDependencies, cudaStreamUpdateCaptureDependencies, none, Exact; stream: *mut ::std::os::raw::c_void => Stream, deps: *mut ::std::os::raw::c_void => GraphNodes(count), data: *const ::std::os::raw::c_void => UnrecordedStructIn, count: usize => Value, flags: ::std::os::raw::c_uint => Value),
            (544, HipStreamUpdateCaptureDependencies, none, hipStreamUpdateCaptureDependencies, Exact; stream: *mut ::std::os::raw::c_void => Stream, deps: *mut ::std::os::raw::c_void => GraphNodes(count), count: usize => Value, flags: ::std::os::raw::c_uint => Value),
            (545, GraphExecChildGraphNodeSetParams, cudaGraphExecChildGraphNodeSetParams, hipGraphExecChildGraphNodeSetParams, Exact; exec: *mut ::std::os::raw::c_void => GraphExec, node: *mut ::std::os::raw::c_void => GraphNode, child: *mut ::std::os::raw::c_void => Graph),
            (546, GraphChildGraphNodeGetGraph, cudaGraphChildGraphNodeGetGraph, hipGraphChildGraphNodeGetGraph, Exact; node: *mut ::std::os::raw::c_void => GraphNode, graph: *mut *mut ::std::os::raw::c_void => OutGraphRef),
            (547, GraphNodeGetContainingGraph, cudaGraphNodeGetContainingGraph, none, Exact; node: *mut ::std::os::raw::c_void => GraphNode, graph: *mut *mut ::std::os::raw::c_void => OutGraphRef),
            // Host functions (ids 548-553): replayed as ordering points, replay's own function
            // that does nothing in place of the program's (`host_fns` in capture says which
            // host bytes a pending one leaves unknown).
            (548, LaunchHostFunc, cudaLaunchHostFunc, hipLaunchHostFunc, Exact; stream: *mut ::std::os::raw::c_void => Stream, func: *mut ::std::os::raw::c_void => HostFn, data: *mut ::std::os::raw::c_void => HostFnData),
            (549, StreamAddCallback, cudaStreamAddCallback, hipStreamAddCallback, Exact; stream: *mut ::std::os::raw::c_void => Stream, callback: *mut ::std::os::raw::c_void => StreamCallback, data: *mut ::std::os::raw::c_void => HostFnData, flags: ::std::os::raw::c_uint => Value),
            (550, GraphAddHostNode, cudaGraphAddHostNode, hipGraphAddHostNode, Exact; node: *mut *mut ::std::os::raw::c_void => OutGraphNode, graph: *mut ::std::os::raw::c_void => Graph, deps: *mut ::std::os::raw::c_void => GraphNodes(count), count: usize => Value, params: *const ::std::os::raw::c_void => HostNodeParams),
            (551, GraphHostNodeSetParams, cudaGraphHostNodeSetParams, hipGraphHostNodeSetParams, Exact; node: *mut ::std::os::raw::c_void => GraphNode, params: *const ::std::os::raw::c_void => HostNodeParams),
            (552, GraphExecHostNodeSetParams, cudaGraphExecHostNodeSetParams, hipGraphExecHostNodeSetParams, Exact; exec: *mut ::std::os::raw::c_void => GraphExec, node: *mut ::std::os::raw::c_void => GraphNode, params: *const ::std::os::raw::c_void => HostNodeParams),
            (553, LaunchHostFuncV2, cudaLaunchHostFunc_v2, none, Exact; stream: *mut ::std::os::raw::c_void => Stream, func: *mut ::std::os::raw::c_void => HostFn, data: *mut ::std::os::raw::c_void => HostFnData, sync_mode: ::std::os::raw::c_uint => Value),
            // Inter-process handles to this process's memory and events: replay makes
            // its own (nothing opens them at replay); what another process did with
            // the memory is named as a mismatch's possible cause (RowHook::SharesWithOtherProcesses).
            (554, IpcGetMemHandle, cudaIpcGetMemHandle, hipIpcGetMemHandle, Exact; handle: *mut ::std::os::raw::c_void => OutStruct, ptr: *mut ::std::os::raw::c_void => DevPtr),
            (555, IpcGetEventHandle, cudaIpcGetEventHandle, hipIpcGetEventHandle, Exact; handle: *mut ::std::os::raw::c_void => OutStruct, event: *mut ::std::os::raw::c_void => Event),
            (556, DrvIpcGetMemHandle, cuIpcGetMemHandle, none, Exact; handle: *mut ::std::os::raw::c_void => OutStruct, ptr: u64 => DevPtr),
            (557, DrvIpcGetEventHandle, cuIpcGetEventHandle, none, Exact; handle: *mut ::std::os::raw::c_void => OutStruct, event: *mut ::std::os::raw::c_void => Event),
            // A plane of a multi-planar array (NV12 and the like), as a level of a
            // mipmapped array is; and the devices the runtime may pick from.
            (558, ArrayGetPlane, cudaArrayGetPlane, none, Exact; plane: *mut *mut ::std::os::raw::c_void => OutArrayPlane(array), array: *mut ::std::os::raw::c_void => Array, index: ::std::os::raw::c_uint => Value),
            (559, SetValidDevices, cudaSetValidDevices, none, Exact; devices: *mut ::std::os::raw::c_int => DeviceList(count), count: ::std::os::raw::c_int => Value),
            // CUDA 13.5's execution contexts, a device's own (its primary context):
            // explicit context-based programming without a thread's current context.
            (560, DeviceGetExecutionCtx, cudaDeviceGetExecutionCtx, none, Exact; ctx: *mut *mut ::std::os::raw::c_void => OutContextRef, device: ::std::os::raw::c_int => Value),
            (561, ExecutionCtxStreamCreate, cudaExecutionCtxStreamCreate, none, Exact; stream: *mut *mut ::std::os::raw::c_void => OutStream, ctx: *mut ::std::os::raw::c_void => Context, flags: ::std::os::raw::c_uint => Value, priority: ::std::os::raw::c_int => Value),
            (562, ExecutionCtxRecordEvent, cudaExecutionCtxRecordEvent, none, Exact; ctx: *mut ::std::os::raw::c_void => Context, event: *mut ::std::os::raw::c_void => Event),
            (563, ExecutionCtxWaitEvent, cudaExecutionCtxWaitEvent, none, Exact; ctx: *mut ::std::os::raw::c_void => Context, event: *mut ::std::os::raw::c_void => Event),
            (564, ExecutionCtxSynchronize, cudaExecutionCtxSynchronize, none, Exact; ctx: *mut ::std::os::raw::c_void => Context),
            // A pool, and a pointer in it, exported for another process: replay exports
            // its own (and closes the file descriptor it gets); the export is named as a
            // mismatch's possible cause, as IPC handles are.
            (565, MemPoolExportToShareableHandle, cudaMemPoolExportToShareableHandle, none, Exact; handle: *mut ::std::os::raw::c_void => OutStruct, pool: *mut ::std::os::raw::c_void => MemPool, kind: ::std::os::raw::c_int => Value, flags: ::std::os::raw::c_uint => Value),
            (566, MemPoolExportPointer, cudaMemPoolExportPointer, none, Exact; data: *mut ::std::os::raw::c_void => OutStruct, ptr: *mut ::std::os::raw::c_void => DevPtr),
            (567, DrvMemPoolExportToShareableHandle, cuMemPoolExportToShareableHandle, none, Exact; handle: *mut ::std::os::raw::c_void => OutStruct, pool: *mut ::std::os::raw::c_void => MemPool, kind: ::std::os::raw::c_int => Value, flags: u64 => Value),
            (568, DrvMemPoolExportPointer, cuMemPoolExportPointer, none, Exact; data: *mut ::std::os::raw::c_void => OutStruct, ptr: u64 => DevPtr),
            (46, EventDestroy, cudaEventDestroy, hipEventDestroy, Exact; event: *mut ::std::os::raw::c_void => Event),
            // The driver API (ids 200-299): the cuda column is the exact symbol libcuda.so.1
            // exports and CUDA 13's cuda.h binds a program's call to; replay calls these
            // rows through libcuda.so.1. The hip column is HIP's twin where its signature
            // is the same.
            (200, Init, cuInit, hipInit, Exact; flags: ::std::os::raw::c_uint => Value),
            (201, DeviceGet, cuDeviceGet, hipDeviceGet, Exact; device: *mut ::std::os::raw::c_int => OutValue, ordinal: ::std::os::raw::c_int => Value),
            (202, DeviceGetCountDrv, cuDeviceGetCount, none, Exact; count: *mut ::std::os::raw::c_int => OutValue),
            (203, DevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain, hipDevicePrimaryCtxRetain, Exact; pctx: *mut *mut ::std::os::raw::c_void => OutContextRef, dev: ::std::os::raw::c_int => Value),
            (204, DevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease_v2, hipDevicePrimaryCtxRelease, Exact; dev: ::std::os::raw::c_int => Value),
            (205, CtxCreate, cuCtxCreate_v4, none, Exact; pctx: *mut *mut ::std::os::raw::c_void => OutContext, params: *mut ::std::os::raw::c_void => UnrecordedStructIn, flags: ::std::os::raw::c_uint => Value, dev: ::std::os::raw::c_int => Value),
            (206, CtxCreateV2, cuCtxCreate_v2, hipCtxCreate, Exact; pctx: *mut *mut ::std::os::raw::c_void => OutContext, flags: ::std::os::raw::c_uint => Value, dev: ::std::os::raw::c_int => Value),
            (207, CtxDestroy, cuCtxDestroy_v2, hipCtxDestroy, Exact; ctx: *mut ::std::os::raw::c_void => FreeContext),
            (208, CtxSetCurrent, cuCtxSetCurrent, hipCtxSetCurrent, Exact; ctx: *mut ::std::os::raw::c_void => Context),
            (209, CtxGetCurrent, cuCtxGetCurrent, hipCtxGetCurrent, Exact; pctx: *mut *mut ::std::os::raw::c_void => OutContextRef),
            (210, CtxPushCurrent, cuCtxPushCurrent_v2, hipCtxPushCurrent, Exact; ctx: *mut ::std::os::raw::c_void => Context),
            (211, CtxPopCurrent, cuCtxPopCurrent_v2, hipCtxPopCurrent, Exact; pctx: *mut *mut ::std::os::raw::c_void => OutContextRef),
            (212, CtxSynchronize, cuCtxSynchronize, hipCtxSynchronize, Exact;),
            (220, MemAlloc, cuMemAlloc_v2, none, Exact; dptr: *mut u64 => OutDevPtr(size), size: usize => Value),
            (221, MemFree, cuMemFree_v2, none, Exact; dptr: u64 => FreeDevPtr),
            (222, MemAllocPitch, cuMemAllocPitch_v2, hipMemAllocPitch, Exact; dptr: *mut u64 => OutPitchedDevPtr(pitch, height), pitch: *mut usize => OutSize, width: usize => Value, height: usize => Value, element_size: ::std::os::raw::c_uint => Value),
            (223, MemAllocHost, cuMemAllocHost_v2, hipMemAllocHost, Exact; ptr: *mut *mut ::std::os::raw::c_void => OutHostPtr(size), size: usize => Value),
            (224, MemHostAlloc, cuMemHostAlloc, none, Exact; ptr: *mut *mut ::std::os::raw::c_void => OutHostPtr(size), size: usize => Value, flags: ::std::os::raw::c_uint => Value),
            (225, MemFreeHost, cuMemFreeHost, none, Exact; ptr: *mut ::std::os::raw::c_void => FreeHostPtr),
            (226, MemHostRegister, cuMemHostRegister_v2, none, Exact; ptr: *mut ::std::os::raw::c_void => RegisterHostPtr(size), size: usize => Value, flags: ::std::os::raw::c_uint => Value),
            (227, MemHostUnregister, cuMemHostUnregister, none, Exact; ptr: *mut ::std::os::raw::c_void => FreeHostPtr),
            (228, MemHostGetDevicePointer, cuMemHostGetDevicePointer_v2, hipHostGetDevicePointer, Exact; dptr: *mut u64 => OutMappedDevPtr(host), host: *mut ::std::os::raw::c_void => DevPtr, flags: ::std::os::raw::c_uint => Value),
            (230, MemcpyHtoD, cuMemcpyHtoD_v2, hipMemcpyHtoD, Exact; dst: u64 => DevPtr, src: *const ::std::os::raw::c_void => HostSrc(count), count: usize => Value),
            (231, MemcpyDtoH, cuMemcpyDtoH_v2, hipMemcpyDtoH, Exact; dst: *mut ::std::os::raw::c_void => HostDst(count), src: u64 => DevPtr, count: usize => Value),
            (232, MemcpyDtoD, cuMemcpyDtoD_v2, hipMemcpyDtoD, Exact; dst: u64 => DevPtr, src: u64 => DevPtr, count: usize => Value),
            (233, MemcpyHtoDAsync, cuMemcpyHtoDAsync_v2, hipMemcpyHtoDAsync, Exact; dst: u64 => DevPtr, src: *const ::std::os::raw::c_void => HostSrc(count), count: usize => Value, stream: *mut ::std::os::raw::c_void => Stream),
            (234, MemcpyDtoHAsync, cuMemcpyDtoHAsync_v2, hipMemcpyDtoHAsync, Exact; dst: *mut ::std::os::raw::c_void => HostDst(count), src: u64 => DevPtr, count: usize => Value, stream: *mut ::std::os::raw::c_void => Stream),
            (235, MemcpyDtoDAsync, cuMemcpyDtoDAsync_v2, hipMemcpyDtoDAsync, Exact; dst: u64 => DevPtr, src: u64 => DevPtr, count: usize => Value, stream: *mut ::std::os::raw::c_void => Stream),
            (236, DrvMemcpy2D, cuMemcpy2D_v2, none, Exact; p: *const ::std::os::raw::c_void => DrvMemcpy2D),
            (237, DrvMemcpy2DAsync, cuMemcpy2DAsync_v2, none, Exact; p: *const ::std::os::raw::c_void => DrvMemcpy2D, stream: *mut ::std::os::raw::c_void => Stream),
            (238, DrvMemcpy3D, cuMemcpy3D_v2, none, Exact; p: *const ::std::os::raw::c_void => DrvMemcpy3D),
            (239, DrvMemcpy3DAsync, cuMemcpy3DAsync_v2, none, Exact; p: *const ::std::os::raw::c_void => DrvMemcpy3D, stream: *mut ::std::os::raw::c_void => Stream),
            (252, CuMemcpy, cuMemcpy, none, Exact; dst: u64 => CopyDst(count), src: u64 => CopySrc(count), count: usize => Value),
            (253, CuMemcpyAsync, cuMemcpyAsync, none, Exact; dst: u64 => CopyDst(count), src: u64 => CopySrc(count), count: usize => Value, stream: *mut ::std::os::raw::c_void => Stream),
            // Driver copies (ids 428-430): the unaligned 2D form (the same struct), peer copies
            // between contexts (device to device).
            (428, DrvMemcpy2DUnaligned, cuMemcpy2DUnaligned_v2, none, Exact; p: *const ::std::os::raw::c_void => DrvMemcpy2D),
            (429, MemcpyPeer, cuMemcpyPeer, none, Exact; dst: u64 => DevPtr, dst_ctx: *mut ::std::os::raw::c_void => Context, src: u64 => DevPtr, src_ctx: *mut ::std::os::raw::c_void => Context, count: usize => Value),
            (430, MemcpyPeerAsync, cuMemcpyPeerAsync, none, Exact; dst: u64 => DevPtr, dst_ctx: *mut ::std::os::raw::c_void => Context, src: u64 => DevPtr, src_ctx: *mut ::std::os::raw::c_void => Context, count: usize => Value, stream: *mut ::std::os::raw::c_void => Stream),
            (240, MemsetD8, cuMemsetD8_v2, hipMemsetD8, Exact; dst: u64 => DevPtr, value: u8 => Value, count: usize => Value),
            (241, MemsetD16, cuMemsetD16_v2, hipMemsetD16, Exact; dst: u64 => DevPtr, value: u16 => Value, count: usize => Value),
            (242, MemsetD32, cuMemsetD32_v2, hipMemsetD32, Exact; dst: u64 => DevPtr, value: ::std::os::raw::c_uint => Value, count: usize => Value),
            (243, MemsetD8Async, cuMemsetD8Async, hipMemsetD8Async, Exact; dst: u64 => DevPtr, value: u8 => Value, count: usize => Value, stream: *mut ::std::os::raw::c_void => Stream),
            (244, MemsetD16Async, cuMemsetD16Async, hipMemsetD16Async, Exact; dst: u64 => DevPtr, value: u16 => Value, count: usize => Value, stream: *mut ::std::os::raw::c_void => Stream),
            (245, MemsetD32Async, cuMemsetD32Async, hipMemsetD32Async, Exact; dst: u64 => DevPtr, value: ::std::os::raw::c_uint => Value, count: usize => Value, stream: *mut ::std::os::raw::c_void => Stream),
            (246, MemsetD2D8, cuMemsetD2D8_v2, none, Exact; dst: u64 => DevPtr, pitch: usize => Value, value: u8 => Value, width: usize => Value, height: usize => Value),
            (247, MemsetD2D16, cuMemsetD2D16_v2, none, Exact; dst: u64 => DevPtr, pitch: usize => Value, value: u16 => Value, width: usize => Value, height: usize => Value),
            (248, MemsetD2D32, cuMemsetD2D32_v2, none, Exact; dst: u64 => DevPtr, pitch: usize => Value, value: ::std::os::raw::c_uint => Value, width: usize => Value, height: usize => Value),
            (249, MemsetD2D8Async, cuMemsetD2D8Async, none, Exact; dst: u64 => DevPtr, pitch: usize => Value, value: u8 => Value, width: usize => Value, height: usize => Value, stream: *mut ::std::os::raw::c_void => Stream),
            (250, MemsetD2D16Async, cuMemsetD2D16Async, none, Exact; dst: u64 => DevPtr, pitch: usize => Value, value: u16 => Value, width: usize => Value, height: usize => Value, stream: *mut ::std::os::raw::c_void => Stream),
            (251, MemsetD2D32Async, cuMemsetD2D32Async, none, Exact; dst: u64 => DevPtr, pitch: usize => Value, value: ::std::os::raw::c_uint => Value, width: usize => Value, height: usize => Value, stream: *mut ::std::os::raw::c_void => Stream),
            (260, CuStreamCreate, cuStreamCreate, none, Exact; stream: *mut *mut ::std::os::raw::c_void => OutStream, flags: ::std::os::raw::c_uint => Value),
            (261, CuStreamCreateWithPriority, cuStreamCreateWithPriority, none, Exact; stream: *mut *mut ::std::os::raw::c_void => OutStream, flags: ::std::os::raw::c_uint => Value, priority: ::std::os::raw::c_int => Value),
            (262, CuStreamDestroy, cuStreamDestroy_v2, none, Exact; stream: *mut ::std::os::raw::c_void => Stream),
            (263, CuStreamSynchronize, cuStreamSynchronize, none, Exact; stream: *mut ::std::os::raw::c_void => Stream),
            (264, CuStreamWaitEvent, cuStreamWaitEvent, none, Exact; stream: *mut ::std::os::raw::c_void => Stream, event: *mut ::std::os::raw::c_void => Event, flags: ::std::os::raw::c_uint => Value),
            (265, CuStreamQuery, cuStreamQuery, none, Any; stream: *mut ::std::os::raw::c_void => Stream),
            (270, CuEventCreate, cuEventCreate, none, Exact; event: *mut *mut ::std::os::raw::c_void => OutEvent, flags: ::std::os::raw::c_uint => Value),
            (271, CuEventRecord, cuEventRecord, none, Exact; event: *mut ::std::os::raw::c_void => Event, stream: *mut ::std::os::raw::c_void => Stream),
            (272, CuEventSynchronize, cuEventSynchronize, none, Exact; event: *mut ::std::os::raw::c_void => Event),
            (273, CuEventElapsedTime, cuEventElapsedTime_v2, none, Exact; ms: *mut f32 => OutValue, start: *mut ::std::os::raw::c_void => Event, end: *mut ::std::os::raw::c_void => Event),
            (274, CuEventDestroy, cuEventDestroy_v2, none, Exact; event: *mut ::std::os::raw::c_void => Event),
            (275, CuEventQuery, cuEventQuery, none, Any; event: *mut ::std::os::raw::c_void => Event),
            // CUDA 13's libcudart exports cudaGetDeviceProperties (no _v2, which row 6
            // binds for CUDA 12); found by tests/driver_symbols.rs.
            (280, GetDeviceProperties13, cudaGetDeviceProperties, none, Exact; prop: *mut ::std::os::raw::c_void => OutStruct, device: ::std::os::raw::c_int => Value),
            // HIP as ROCm 6+ headers bind it (api::hip_abi): the R0600 name, and the per-thread
            // default stream forms of rows above (a null stream recorded as hipStreamPerThread).
            (300, GetDevicePropertiesR0600, none, hipGetDevicePropertiesR0600, Exact; prop: *mut ::std::os::raw::c_void => OutDevicePropsR0600, device: ::std::os::raw::c_int => Value),
            (301, MemcpySpt, none, hipMemcpy_spt, Exact; dst: *mut ::std::os::raw::c_void => CopyDst(count), src: *const ::std::os::raw::c_void => CopySrc(count), count: usize => Value, kind: ::std::os::raw::c_int => CopyKind),
            (302, MemcpyAsyncSpt, none, hipMemcpyAsync_spt, Exact; dst: *mut ::std::os::raw::c_void => CopyDst(count), src: *const ::std::os::raw::c_void => CopySrc(count), count: usize => Value, kind: ::std::os::raw::c_int => CopyKind, stream: *mut ::std::os::raw::c_void => Stream),
            (303, MemsetSpt, none, hipMemset_spt, Exact; ptr: *mut ::std::os::raw::c_void => DevPtr, value: ::std::os::raw::c_int => Value, count: usize => Value),
            (304, MemsetAsyncSpt, none, hipMemsetAsync_spt, Exact; ptr: *mut ::std::os::raw::c_void => DevPtr, value: ::std::os::raw::c_int => Value, count: usize => Value, stream: *mut ::std::os::raw::c_void => Stream),
            (305, Memcpy2DSpt, none, hipMemcpy2D_spt, Exact; dst: *mut ::std::os::raw::c_void => CopyDst2D(dpitch, width, height), dpitch: usize => Value, src: *const ::std::os::raw::c_void => CopySrc2D(spitch, width, height), spitch: usize => Value, width: usize => Value, height: usize => Value, kind: ::std::os::raw::c_int => CopyKind),
            (306, Memcpy2DAsyncSpt, none, hipMemcpy2DAsync_spt, Exact; dst: *mut ::std::os::raw::c_void => CopyDst2D(dpitch, width, height), dpitch: usize => Value, src: *const ::std::os::raw::c_void => CopySrc2D(spitch, width, height), spitch: usize => Value, width: usize => Value, height: usize => Value, kind: ::std::os::raw::c_int => CopyKind, stream: *mut ::std::os::raw::c_void => Stream),
            (307, Memset2DSpt, none, hipMemset2D_spt, Exact; ptr: *mut ::std::os::raw::c_void => DevPtr, pitch: usize => Value, value: ::std::os::raw::c_int => Value, width: usize => Value, height: usize => Value),
            (308, Memset2DAsyncSpt, none, hipMemset2DAsync_spt, Exact; ptr: *mut ::std::os::raw::c_void => DevPtr, pitch: usize => Value, value: ::std::os::raw::c_int => Value, width: usize => Value, height: usize => Value, stream: *mut ::std::os::raw::c_void => Stream),
            (309, Memcpy3DSpt, none, hipMemcpy3D_spt, Exact; p: *const ::std::os::raw::c_void => Copy3DParms),
            (310, Memcpy3DAsyncSpt, none, hipMemcpy3DAsync_spt, Exact; p: *const ::std::os::raw::c_void => Copy3DParms, stream: *mut ::std::os::raw::c_void => Stream),
            (311, StreamSynchronizeSpt, none, hipStreamSynchronize_spt, Exact; stream: *mut ::std::os::raw::c_void => Stream),
            (312, StreamQuerySpt, none, hipStreamQuery_spt, Any; stream: *mut ::std::os::raw::c_void => Stream),
            (313, StreamWaitEventSpt, none, hipStreamWaitEvent_spt, Exact; stream: *mut ::std::os::raw::c_void => Stream, event: *mut ::std::os::raw::c_void => Event, flags: ::std::os::raw::c_uint => Value),
            (314, EventRecordSpt, none, hipEventRecord_spt, Exact; event: *mut ::std::os::raw::c_void => Event, stream: *mut ::std::os::raw::c_void => Stream),
            (315, StreamBeginCaptureSpt, none, hipStreamBeginCapture_spt, Exact; stream: *mut ::std::os::raw::c_void => Stream, mode: ::std::os::raw::c_int => CaptureMode),
            (316, StreamEndCaptureSpt, none, hipStreamEndCapture_spt, Exact; stream: *mut ::std::os::raw::c_void => Stream, graph: *mut *mut ::std::os::raw::c_void => OutGraph),
            (317, StreamIsCapturingSpt, none, hipStreamIsCapturing_spt, Exact; stream: *mut ::std::os::raw::c_void => Stream, status: *mut ::std::os::raw::c_int => OutValue),
            (50, DeviceSetCacheConfig, cudaDeviceSetCacheConfig, hipDeviceSetCacheConfig, Exact; config: ::std::os::raw::c_int => Value),
            (51, DeviceGetCacheConfig, cudaDeviceGetCacheConfig, hipDeviceGetCacheConfig, Exact; config: *mut ::std::os::raw::c_int => OutValue),
            (52, DeviceSetSharedMemConfig, cudaDeviceSetSharedMemConfig, hipDeviceSetSharedMemConfig, Exact; config: ::std::os::raw::c_int => Value),
            (53, DeviceGetSharedMemConfig, cudaDeviceGetSharedMemConfig, hipDeviceGetSharedMemConfig, Exact; config: *mut ::std::os::raw::c_int => OutValue),
            (54, DeviceSetLimit, cudaDeviceSetLimit, hipDeviceSetLimit, Exact; limit: ::std::os::raw::c_int => Value, value: usize => Value),
            (55, DeviceGetLimit, cudaDeviceGetLimit, hipDeviceGetLimit, Exact; value: *mut usize => OutSize, limit: ::std::os::raw::c_int => Value),
            (56, MallocAsync, cudaMallocAsync, hipMallocAsync, Exact; ptr: *mut *mut ::std::os::raw::c_void => OutDevPtr(size), size: usize => Value, stream: *mut ::std::os::raw::c_void => Stream),
            (57, FreeAsync, cudaFreeAsync, hipFreeAsync, Exact; ptr: *mut ::std::os::raw::c_void => FreeDevPtr, stream: *mut ::std::os::raw::c_void => Stream),
            (58, MemPoolCreate, cudaMemPoolCreate, hipMemPoolCreate, Exact; pool: *mut *mut ::std::os::raw::c_void => OutMemPool, props: *const ::std::os::raw::c_void => MemPoolProps),
            (59, MemPoolDestroy, cudaMemPoolDestroy, hipMemPoolDestroy, Exact; pool: *mut ::std::os::raw::c_void => FreeMemPool),
            (60, MemPoolSetAttribute, cudaMemPoolSetAttribute, hipMemPoolSetAttribute, Exact; pool: *mut ::std::os::raw::c_void => MemPool, attr: ::std::os::raw::c_int => Value, value: *mut ::std::os::raw::c_void => PoolAttrValue(attr)),
            (61, MemPoolGetAttribute, cudaMemPoolGetAttribute, hipMemPoolGetAttribute, Exact; pool: *mut ::std::os::raw::c_void => MemPool, attr: ::std::os::raw::c_int => Value, value: *mut ::std::os::raw::c_void => OutPoolAttrValue(attr)),
            (62, MemPoolTrimTo, cudaMemPoolTrimTo, hipMemPoolTrimTo, Exact; pool: *mut ::std::os::raw::c_void => MemPool, keep: usize => Value),
            (63, DeviceGetDefaultMemPool, cudaDeviceGetDefaultMemPool, hipDeviceGetDefaultMemPool, Exact; pool: *mut *mut ::std::os::raw::c_void => OutDevicePool, device: ::std::os::raw::c_int => Value),
            (64, DeviceSetMemPool, cudaDeviceSetMemPool, hipDeviceSetMemPool, Exact; device: ::std::os::raw::c_int => Value, pool: *mut ::std::os::raw::c_void => MemPool),
            (65, DeviceGetMemPool, cudaDeviceGetMemPool, hipDeviceGetMemPool, Exact; pool: *mut *mut ::std::os::raw::c_void => OutDevicePool, device: ::std::os::raw::c_int => Value),
            (66, MallocFromPoolAsync, cudaMallocFromPoolAsync, hipMallocFromPoolAsync, Exact; ptr: *mut *mut ::std::os::raw::c_void => OutDevPtr(size), size: usize => Value, pool: *mut ::std::os::raw::c_void => MemPool, stream: *mut ::std::os::raw::c_void => Stream),
            // Arrays, textures and surfaces (350-399). A `cudaExtent` passed by value is
            // its three fields on the stack after the unused registers (SpilledRegister).
            (350, MallocArray, cudaMallocArray, hipMallocArray, Exact; array: *mut *mut ::std::os::raw::c_void => OutArray(desc), desc: *const ::std::os::raw::c_void => ByLayout(channel_desc), width: usize => Value, height: usize => Value, flags: ::std::os::raw::c_uint => Value),
            (351, FreeArray, cudaFreeArray, hipFreeArray, Exact; array: *mut ::std::os::raw::c_void => FreeArray),
            (352, Malloc3DArray, cudaMalloc3DArray, hipMalloc3DArray, Exact; array: *mut *mut ::std::os::raw::c_void => OutArray(desc), desc: *const ::std::os::raw::c_void => ByLayout(channel_desc), flags: ::std::os::raw::c_uint => Value, spill_rcx: u64 => SpilledRegister, spill_r8: u64 => SpilledRegister, spill_r9: u64 => SpilledRegister, width: usize => Value, height: usize => Value, depth: usize => Value),
            (353, MallocMipmappedArray, cudaMallocMipmappedArray, hipMallocMipmappedArray, Exact; mipmap: *mut *mut ::std::os::raw::c_void => OutMipmappedArray(desc), desc: *const ::std::os::raw::c_void => ByLayout(channel_desc), levels: ::std::os::raw::c_uint => Value, flags: ::std::os::raw::c_uint => Value, spill_r8: u64 => SpilledRegister, spill_r9: u64 => SpilledRegister, width: usize => Value, height: usize => Value, depth: usize => Value),
            (354, GetMipmappedArrayLevel, cudaGetMipmappedArrayLevel, hipGetMipmappedArrayLevel, Exact; level_array: *mut *mut ::std::os::raw::c_void => OutArrayLevel(mipmap), mipmap: *mut ::std::os::raw::c_void => Array, level: ::std::os::raw::c_uint => Value),
            (355, FreeMipmappedArray, cudaFreeMipmappedArray, hipFreeMipmappedArray, Exact; mipmap: *mut ::std::os::raw::c_void => FreeMipmappedArray),
            (356, ArrayGetInfo, cudaArrayGetInfo, none, Exact; desc: *mut ::std::os::raw::c_void => OutStruct, extent: *mut ::std::os::raw::c_void => OutStruct, flags: *mut ::std::os::raw::c_uint => OutValue, array: *mut ::std::os::raw::c_void => Array),
            (357, Memcpy2DToArray, cudaMemcpy2DToArray, hipMemcpy2DToArray, Exact; dst: *mut ::std::os::raw::c_void => Array, w_offset: usize => Value, h_offset: usize => Value, src: *const ::std::os::raw::c_void => CopySrc2D(spitch, width, height), spitch: usize => Value, width: usize => Value, height: usize => Value, kind: ::std::os::raw::c_int => CopyKind),
            (358, Memcpy2DToArrayAsync, cudaMemcpy2DToArrayAsync, hipMemcpy2DToArrayAsync, Exact; dst: *mut ::std::os::raw::c_void => Array, w_offset: usize => Value, h_offset: usize => Value, src: *const ::std::os::raw::c_void => CopySrc2D(spitch, width, height), spitch: usize => Value, width: usize => Value, height: usize => Value, kind: ::std::os::raw::c_int => CopyKind, stream: *mut ::std::os::raw::c_void => Stream),
            (359, Memcpy2DFromArray, cudaMemcpy2DFromArray, hipMemcpy2DFromArray, Exact; dst: *mut ::std::os::raw::c_void => CopyDst2D(dpitch, width, height), dpitch: usize => Value, src: *mut ::std::os::raw::c_void => Array, w_offset: usize => Value, h_offset: usize => Value, width: usize => Value, height: usize => Value, kind: ::std::os::raw::c_int => CopyKind),
            (360, Memcpy2DFromArrayAsync, cudaMemcpy2DFromArrayAsync, hipMemcpy2DFromArrayAsync, Exact; dst: *mut ::std::os::raw::c_void => CopyDst2D(dpitch, width, height), dpitch: usize => Value, src: *mut ::std::os::raw::c_void => Array, w_offset: usize => Value, h_offset: usize => Value, width: usize => Value, height: usize => Value, kind: ::std::os::raw::c_int => CopyKind, stream: *mut ::std::os::raw::c_void => Stream),
            (361, MemcpyToArray, cudaMemcpyToArray, hipMemcpyToArray, Exact; dst: *mut ::std::os::raw::c_void => Array, w_offset: usize => Value, h_offset: usize => Value, src: *const ::std::os::raw::c_void => CopySrc(count), count: usize => Value, kind: ::std::os::raw::c_int => CopyKind),
            (362, MemcpyFromArray, cudaMemcpyFromArray, hipMemcpyFromArray, Exact; dst: *mut ::std::os::raw::c_void => CopyDst(count), src: *mut ::std::os::raw::c_void => Array, w_offset: usize => Value, h_offset: usize => Value, count: usize => Value, kind: ::std::os::raw::c_int => CopyKind),
            (363, Memcpy2DArrayToArray, cudaMemcpy2DArrayToArray, none, Exact; dst: *mut ::std::os::raw::c_void => Array, w_offset_dst: usize => Value, h_offset_dst: usize => Value, src: *mut ::std::os::raw::c_void => Array, w_offset_src: usize => Value, h_offset_src: usize => Value, width: usize => Value, height: usize => Value, kind: ::std::os::raw::c_int => CopyKind),
            (364, CreateTextureObject, cudaCreateTextureObject, hipCreateTextureObject, Exact; object: *mut u64 => OutTextureObject, res_desc: *const ::std::os::raw::c_void => ByLayout(resource_desc), tex_desc: *const ::std::os::raw::c_void => ByLayout(texture_desc), view_desc: *const ::std::os::raw::c_void => ByLayout(resource_view_desc)),
            (365, DestroyTextureObject, cudaDestroyTextureObject, hipDestroyTextureObject, Exact; object: u64 => FreeTextureObject),
            // HIP 5.2 exports its surface object calls with C++ linkage.
            (366, CreateSurfaceObject, cudaCreateSurfaceObject, _Z22hipCreateSurfaceObjectPP13__hip_surfacePK15hipResourceDesc, Exact; object: *mut u64 => OutSurfaceObject, res_desc: *const ::std::os::raw::c_void => ByLayout(resource_desc)),
            (367, DestroySurfaceObject, cudaDestroySurfaceObject, _Z23hipDestroySurfaceObjectP13__hip_surface, Exact; object: u64 => FreeSurfaceObject),
            (368, GetTextureObjectResourceDesc, cudaGetTextureObjectResourceDesc, hipGetTextureObjectResourceDesc, Exact; desc: *mut ::std::os::raw::c_void => OutStruct, object: u64 => TexObject),
            (369, GetTextureObjectTextureDesc, cudaGetTextureObjectTextureDesc, hipGetTextureObjectTextureDesc, Exact; desc: *mut ::std::os::raw::c_void => OutStruct, object: u64 => TexObject),
            (370, GetTextureObjectResourceViewDesc, cudaGetTextureObjectResourceViewDesc, hipGetTextureObjectResourceViewDesc, Exact; desc: *mut ::std::os::raw::c_void => OutStruct, object: u64 => TexObject),
            (371, GetSurfaceObjectResourceDesc, cudaGetSurfaceObjectResourceDesc, none, Exact; desc: *mut ::std::os::raw::c_void => OutStruct, object: u64 => SurfObject),
            // The driver's arrays, textures and surfaces (372-384), what nvcc's static
            // runtime makes of the calls above: its own descriptors (`api::texture`'s
            // `drv_*` layouts), the same handles.
            (372, DrvArrayCreate, cuArrayCreate_v2, none, Exact; array: *mut *mut ::std::os::raw::c_void => OutArray(desc), desc: *const ::std::os::raw::c_void => ByLayout(drv_array_desc)),
            (373, DrvArray3DCreate, cuArray3DCreate_v2, none, Exact; array: *mut *mut ::std::os::raw::c_void => OutArray(desc), desc: *const ::std::os::raw::c_void => ByLayout(drv_array3d_desc)),
            (374, DrvArrayDestroy, cuArrayDestroy, none, Exact; array: *mut ::std::os::raw::c_void => FreeArray),
            (375, DrvArrayGetDescriptor, cuArrayGetDescriptor_v2, none, Exact; desc: *mut ::std::os::raw::c_void => OutStruct, array: *mut ::std::os::raw::c_void => Array),
            (376, DrvArray3DGetDescriptor, cuArray3DGetDescriptor_v2, none, Exact; desc: *mut ::std::os::raw::c_void => OutStruct, array: *mut ::std::os::raw::c_void => Array),
            (377, DrvMipmappedArrayCreate, cuMipmappedArrayCreate, none, Exact; mipmap: *mut *mut ::std::os::raw::c_void => OutMipmappedArray(desc), desc: *const ::std::os::raw::c_void => ByLayout(drv_array3d_desc), levels: ::std::os::raw::c_uint => Value),
            (378, DrvMipmappedArrayGetLevel, cuMipmappedArrayGetLevel, none, Exact; level_array: *mut *mut ::std::os::raw::c_void => OutArrayLevel(mipmap), mipmap: *mut ::std::os::raw::c_void => Array, level: ::std::os::raw::c_uint => Value),
            (379, DrvMipmappedArrayDestroy, cuMipmappedArrayDestroy, none, Exact; mipmap: *mut ::std::os::raw::c_void => FreeMipmappedArray),
            (380, DrvTexObjectCreate, cuTexObjectCreate, none, Exact; object: *mut u64 => OutTextureObject, res_desc: *const ::std::os::raw::c_void => ByLayout(drv_resource_desc), tex_desc: *const ::std::os::raw::c_void => ByLayout(drv_texture_desc), view_desc: *const ::std::os::raw::c_void => ByLayout(drv_resource_view_desc)),
            (381, DrvTexObjectDestroy, cuTexObjectDestroy, none, Exact; object: u64 => FreeTextureObject),
            (382, DrvSurfObjectCreate, cuSurfObjectCreate, none, Exact; object: *mut u64 => OutSurfaceObject, res_desc: *const ::std::os::raw::c_void => ByLayout(drv_resource_desc)),
            (383, DrvSurfObjectDestroy, cuSurfObjectDestroy, none, Exact; object: u64 => FreeSurfaceObject),
            (384, DrvTexObjectGetResourceDesc, cuTexObjectGetResourceDesc, none, Exact; desc: *mut ::std::os::raw::c_void => OutStruct, object: u64 => TexObject),
            // Zero-copy and managed memory (ids 400-419). cudaMemPrefetchAsync and
            // cudaMemAdvise take CUDA 13's `struct cudaMemLocation` (two ints, 8 bytes:
            // one integer register on x86-64) by value; HIP 5.2's take a device ordinal.
            (400, HostGetDevicePointer, cudaHostGetDevicePointer, none, Exact; dptr: *mut *mut ::std::os::raw::c_void => OutMappedDevPtr(host), host: *mut ::std::os::raw::c_void => DevPtr, flags: ::std::os::raw::c_uint => Value),
            (401, SetDeviceFlags, cudaSetDeviceFlags, hipSetDeviceFlags, Exact; flags: ::std::os::raw::c_uint => Value),
            (402, MallocManaged, cudaMallocManaged, hipMallocManaged, Exact; ptr: *mut *mut ::std::os::raw::c_void => OutManagedPtr(size), size: usize => Value, flags: ::std::os::raw::c_uint => Value),
            (403, MemPrefetchAsync, cudaMemPrefetchAsync, none, Exact; ptr: *const ::std::os::raw::c_void => DevPtr, count: usize => Value, location: u64 => Value, flags: ::std::os::raw::c_uint => Value, stream: *mut ::std::os::raw::c_void => Stream),
            (404, HipMemPrefetchAsync, none, hipMemPrefetchAsync, Exact; ptr: *const ::std::os::raw::c_void => DevPtr, count: usize => Value, device: ::std::os::raw::c_int => Value, stream: *mut ::std::os::raw::c_void => Stream),
            (405, MemAdvise, cudaMemAdvise, none, Exact; ptr: *const ::std::os::raw::c_void => DevPtr, count: usize => Value, advice: ::std::os::raw::c_int => Value, location: u64 => Value),
            (406, HipMemAdvise, none, hipMemAdvise, Exact; ptr: *const ::std::os::raw::c_void => DevPtr, count: usize => Value, advice: ::std::os::raw::c_int => Value, device: ::std::os::raw::c_int => Value),
            (407, StreamAttachMemAsync, cudaStreamAttachMemAsync, hipStreamAttachMemAsync, Exact; stream: *mut ::std::os::raw::c_void => Stream, ptr: *mut ::std::os::raw::c_void => DevPtr, length: usize => Value, flags: ::std::os::raw::c_uint => Value),
        }
    };
}

/// How a parameter of a table row crosses the FFI boundary: every row's parameters are
/// integers or pointers, carried as u64 between the generic code and the typed call.
pub trait FfiArg: Copy {
    fn to_u64(self) -> u64;
    fn from_u64(v: u64) -> Self;
}

macro_rules! ffi_int {
    ($($t:ty),*) => { $( impl FfiArg for $t {
        fn to_u64(self) -> u64 { self as u64 }
        fn from_u64(v: u64) -> Self { v as $t }
    } )* };
}
ffi_int!(i32, u32, usize, u64, u8, u16);

impl<T> FfiArg for *mut T {
    fn to_u64(self) -> u64 {
        self as usize as u64
    }
    fn from_u64(v: u64) -> Self {
        v as usize as *mut T
    }
}

impl<T> FfiArg for *const T {
    fn to_u64(self) -> u64 {
        self as usize as u64
    }
    fn from_u64(v: u64) -> Self {
        v as usize as *const T
    }
}

macro_rules! define_descs {
    ($( ($id:literal, $name:ident, $cuda:ident, $hip:ident, $ret:ident; $( $p:ident : $t:ty => $k:ident $( ( $($ka:ident),+ ) )? ),* ) ),* $(,)?) => {
        /// Ids of the table's generic APIs, by name.
        #[allow(non_upper_case_globals)]
        pub mod id {
            $( pub const $name: u16 = $id; )*
        }
        /// Every generic API, in id order.
        pub static API_TABLE: &[ApiDesc] = &[
            $( ApiDesc {
                id: $id,
                name: stringify!($name),
                cuda: vendor_symbol!($cuda),
                hip: vendor_symbol!($hip),
                ret: RetPolicy::$ret,
                params: &[ $( ParamDesc { name: stringify!($p), kind: ParamKind::$k $( ( $(stringify!($ka)),+ ) )? } ),* ],
            } ),*
        ];
    };
}

macro_rules! vendor_symbol {
    (none) => {
        None
    };
    ($s:ident) => {
        Some(stringify!($s))
    };
}

hrr_api_table!(define_descs);

/// Whether a row resets the device: `cudaDeviceReset`/`hipDeviceReset`, or the driver's
/// primary-context reset that nvcc's static runtime makes for it. Every allocation,
/// module, stream and event of the device goes with it.
pub fn resets_device(api: u16) -> bool {
    matches!(
        api,
        id::DeviceReset | id::DevicePrimaryCtxReset | id::DevicePrimaryCtxResetV1
    )
}

/// Looks up a generic API by id.
pub fn desc(id: u16) -> Option<&'static ApiDesc> {
    API_TABLE.iter().find(|d| d.id == id)
}

/// The name a call goes by in `vendor`'s API: its row's symbol, else [`api_name`].
pub fn call_name(id: u16, vendor: Vendor) -> String {
    desc(id)
        .and_then(|d| d.symbol(vendor))
        .map(str::to_string)
        .unwrap_or_else(|| api_name(id))
}

/// A human name for any API id (generic, semantic, or the trailer).
pub fn api_name(id: u16) -> String {
    if let Some(d) = desc(id) {
        return d.name.to_string();
    }
    if let Some(k) = SEMANTIC_KINDS.iter().find(|k| k.id == id) {
        return k.name.to_string();
    }
    if id == hrr_format::record::TRAILER_API_ID {
        return "Trailer".into();
    }
    format!("Api{id}")
}
