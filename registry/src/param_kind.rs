//! `ParamKind`: what a table row's parameter means, which decides how capture records it
//! and replay rebuilds it (the kinds the rows of `hrr_api_table!` name).

/// What a parameter means, which decides how capture records it and replay rebuilds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamKind {
    /// An integer passed through unchanged (flags, sizes, values, device ordinals).
    Value,
    /// A device address; replay translates it to the enclosing replay allocation.
    DevPtr,
    /// A device allocation being freed: translated, then dropped from the table.
    FreeDevPtr,
    /// `T**` out: a new device allocation whose size is the named parameter.
    OutDevPtr(&'static str),
    /// `T**` out: new pinned host memory of the named size (kernels may read it).
    OutHostPtr(&'static str),
    /// Pinned host memory being freed.
    FreeHostPtr,
    /// `T**` out: a new managed allocation (`cudaMallocManaged`) of the named size,
    /// addressed alike by host and device: replay allocates its own and maps the
    /// captured range onto it; kernels' outputs there are checked at synchronisations.
    OutManagedPtr(&'static str),
    /// Pointer to a plain value the call writes (a count, an ordinal, a time).
    OutValue,
    /// Pointer to a struct the call fills (device properties); not replayed.
    OutStruct,
    /// A stream handle (0 is the default stream).
    Stream,
    /// `stream*` out.
    OutStream,
    Event,
    OutEvent,
    /// Memcpy destination: device or host according to the `kind` parameter (or the
    /// pointer's attributes for "default"); length is the named parameter.
    CopyDst(&'static str),
    /// Memcpy source, as above.
    CopySrc(&'static str),
    /// The cudaMemcpyKind / hipMemcpyKind value.
    CopyKind,
    /// `size_t*` out: a size the call writes (the pitch of a pitched allocation).
    OutSize,
    /// `T**` out: a pitched device allocation of `*pitch * height` bytes; names the
    /// `OutSize` pitch parameter and the height parameter. Replay requires the same pitch.
    OutPitchedDevPtr(&'static str, &'static str),
    /// 2D copy destination: `height` rows of `width` bytes, `pitch` apart (pitch, width,
    /// height). A host side is recorded as its copied rows only, packed (seed 003): the
    /// capture cost follows the bytes copied, and padding between rows is never compared.
    CopyDst2D(&'static str, &'static str, &'static str),
    /// 2D copy source, as above.
    CopySrc2D(&'static str, &'static str, &'static str),
    /// `const cudaMemcpy3DParms*` / `const hipMemcpy3DParms*`: a struct passed by pointer
    /// (layout in `memcpy3d`), recorded field by field; its host side as packed rows.
    Copy3DParms,
    /// Host memory being page-locked (`HostRegister`) of the named size: replay registers a
    /// buffer of its own of that size and maps the captured range onto it.
    RegisterHostPtr(&'static str),
    /// A context handle (`CUcontext` / `hipCtx_t`), mapped like a stream handle.
    Context,
    /// `CUcontext*` out: a context the call creates (replay destroys it at the end if
    /// the program did not).
    OutContext,
    /// `CUcontext*` out: an existing context the call hands back (current, popped,
    /// primary): mapped, not owned.
    OutContextRef,
    /// A context being destroyed.
    FreeContext,
    /// A copy's host source where the API fixes the direction host to device
    /// (`cuMemcpyHtoD`): `len` bytes, recorded before the call.
    HostSrc(&'static str),
    /// A copy's host destination where the API fixes the direction device to host
    /// (`cuMemcpyDtoH`): `len` bytes, the expected output.
    HostDst(&'static str),
    /// `const CUDA_MEMCPY2D*`: the driver's 2D copy struct (layout in `drv_memcpy`).
    DrvMemcpy2D,
    /// `const CUDA_MEMCPY3D*`: the driver's 3D copy struct (layout in `drv_memcpy`).
    DrvMemcpy3D,
    /// `CUdeviceptr*` out: the device address of the mapped pinned host memory the named
    /// parameter points at; replay maps it onto its own mapped address.
    OutMappedDevPtr(&'static str),
    /// A pointer to an optional struct capture does not record: an input
    /// (`cuCtxCreate`'s `CUctxCreateParams`) or an output a program may leave null (the
    /// edge data of a graph's dependency queries). Null replays as null; a non-null one
    /// makes the record incomplete.
    UnrecordedStructIn,
    /// `pool*` out: a memory pool the call creates (replay maps it like a stream and
    /// destroys it at the end if the program did not).
    OutMemPool,
    /// `pool*` out: a device's existing pool the call reports (mapped, not owned).
    OutDevicePool,
    /// A memory pool handle, mapped like a stream.
    MemPool,
    /// A memory pool being destroyed.
    FreeMemPool,
    /// `const cudaMemPoolProps*` / `const hipMemPoolProps*`: recorded by its layout
    /// (`mempool`), passed again with the captured host pointer cleared.
    MemPoolProps,
    /// `void*` to a pool attribute's value the call reads; its width follows the named
    /// attribute parameter (`mempool::pool_attribute`).
    PoolAttrValue(&'static str),
    /// `void*` to a pool attribute's value the call writes (not compared: usage
    /// counters depend on timing).
    OutPoolAttrValue(&'static str),
    /// A graph (`cudaGraph_t` / `hipGraph_t`): a handle replay maps like a stream's.
    Graph,
    /// `cudaGraph_t*` out: a graph the call creates (or stream capture returns).
    OutGraph,
    /// `cudaGraph_t*` out: an existing graph the call hands back (a child-graph node's
    /// graph, a node's containing graph): mapped, never released on its own (its node or
    /// the program's own handle owns it).
    OutGraphRef,
    /// A graph being destroyed: mapped, then released from replay's resources.
    FreeGraph,
    /// An executable graph (`cudaGraphExec_t` / `hipGraphExec_t`).
    GraphExec,
    /// `cudaGraphExec_t*` out: an instantiated graph.
    OutGraphExec,
    /// An executable graph being destroyed.
    FreeGraphExec,
    /// A `cudaStreamCaptureMode` / `hipStreamCaptureMode` that starts a capture. Replay runs
    /// every thread's calls on one thread, so it begins each capture in relaxed mode
    /// (the mode restricts other calls, never what the graph holds): the captured mode
    /// would forbid the other threads' calls that now share replay's thread.
    CaptureMode,
    /// `cudaGraphInstantiateParams*` (flags, upload stream, and two outputs: 32 bytes):
    /// recorded as its bytes; replay passes the flags and its own upload stream.
    InstantiateParams,
    /// `cudaGraphNode_t*` out: a node an explicit graph gains (a handle replay maps; the
    /// graph owns it).
    OutGraphNode,
    /// `const cudaGraphNode_t*` of the named count: a node's dependencies, each a node
    /// handle that replay maps like a stream's.
    GraphNodes(&'static str),
    /// `const cudaMemsetParams*` (dst, pitch, value, element size, width, height: 40
    /// bytes): recorded as its bytes; replay translates `dst`.
    MemsetNodeParams,
    /// `const hipMemsetParams*` (dst, element size, height, pitch, value, width: 48
    /// bytes, `dst` first as in CUDA's): recorded as its bytes; replay translates `dst`.
    HipMemsetNodeParams,
    /// `cudaMemAllocNodeParams*` (pool properties, access descriptors, size in; the new
    /// allocation's address out): recorded as the struct after the call followed by its
    /// access descriptors; replay passes its own, and maps the captured address to the
    /// allocation its runtime returned, as for any allocation.
    MemAllocNodeParams,
    /// A graph node (`cudaGraphNode_t`): a handle replay maps like a stream's.
    GraphNode,
    /// `struct cudaMemLocation*` / `CUmemLocation*` in (a location type and id, two ints:
    /// 8 bytes): recorded as bytes and passed again as captured. Null stays null.
    MemLocation,
    /// `hipDeviceProp_tR0600*` out (`hipGetDevicePropertiesR0600`): recorded after the call
    /// at the R0600 struct's full size (`hip_abi::layout::DEVICE_PROP_R0600`); replay hands
    /// the runtime an out slot larger than any layout and compares nothing.
    OutDevicePropsR0600,
    /// `cudaArray_t*` / `hipArray_t*` out: a new array, its element format given by the
    /// named channel-descriptor parameter; replay maps it like a stream handle and frees it
    /// at the end if the program did not (`api::texture`).
    OutArray(&'static str),
    /// `cudaMipmappedArray_t*` out: a new mipmapped array, as [`ParamKind::OutArray`].
    OutMipmappedArray(&'static str),
    /// `cudaArray_t*` out: one level of the named mipmapped array (mapped; the mipmapped
    /// array owns it).
    OutArrayLevel(&'static str),
    /// `cudaArray_t*` out: one format plane of the named multi-planar array (mapped; the
    /// array owns it). Its element size is the driver's answer for the plane
    /// (`cuArrayGetDescriptor`), which the parent's format does not give.
    OutArrayPlane(&'static str),
    /// An array or mipmapped array handle: mapped to replay's.
    Array,
    /// An array being freed.
    FreeArray,
    /// A mipmapped array being freed.
    FreeMipmappedArray,
    /// A descriptor struct passed by pointer, recorded by value by the named layout of
    /// `api::texture` (its size per vendor, and which words hold arrays or device
    /// addresses); replay passes it rebuilt around its own arrays and allocations. Null
    /// stays null.
    ByLayout(&'static str),
    /// `cudaTextureObject_t*` out: a new texture object. Capture keeps it among the live
    /// object handles (kernel arguments holding it are translated); replay maps it and
    /// destroys it at the end if the program did not.
    OutTextureObject,
    /// `cudaSurfaceObject_t*` out: a new surface object, as [`ParamKind::OutTextureObject`].
    OutSurfaceObject,
    /// A texture object passed by value: mapped.
    TexObject,
    /// A surface object passed by value: mapped.
    SurfObject,
    /// A texture object being destroyed.
    FreeTextureObject,
    /// A surface object being destroyed.
    FreeSurfaceObject,
    /// `CUdeviceptr*` / `void**` out: a range of virtual addresses of the named size
    /// reserved for mapping (`cuMemAddressReserve`). Capture treats the range as device
    /// memory (kernel arguments and copies point into it once memory is mapped there);
    /// replay reserves its own range of the same size and alignment, maps the captured
    /// range onto it, and frees it at the end if the program did not (`FreeDevPtr` frees
    /// it in the program's order).
    OutAddressRange(&'static str),
    /// `CUmemGenericAllocationHandle*` out: physical memory the call creates
    /// (`cuMemCreate`), or a handle it hands back again (`cuMemRetainAllocationHandle`).
    /// Replay maps it to its own handle and releases it at the end if the program did not.
    OutMemHandle,
    /// A physical memory handle: mapped to replay's (never a default-stream number).
    MemHandle,
    /// A physical memory handle being released.
    FreeMemHandle,
    /// A device address where the call maps memory of the named size (`cuMemMap`):
    /// translated, the whole mapping inside the reserved range; replay unmaps what the
    /// program left mapped before it frees the range.
    MapAt(&'static str),
    /// A device address whose mapping the call removes (`cuMemUnmap`).
    UnmapAt,
    /// `const CUmemAccessDesc*` of the named count (location type and id, flags: 12
    /// bytes each, at most `mem_alloc_node::MAX_ACCESS_DESCS`): recorded as bytes and
    /// passed again as captured.
    AccessDescs(&'static str),
    /// `int*` of the named count of device ordinals (`cudaSetValidDevices`), at most
    /// `crate::MAX_DEVICE_LIST`: recorded as bytes and passed again as captured.
    DeviceList(&'static str),
    /// `const cudaLaunchAttributeValue*` / `const CUlaunchAttributeValue*` (64 bytes) whose
    /// meaning the named attribute-id parameter gives (`launch_config::LAUNCH_ATTRIBUTES`:
    /// an access-policy window's base address, an event): recorded as its bytes; replay
    /// translates what the attribute says is an address or a handle, and refuses by name
    /// what it cannot honour.
    LaunchAttrValue(&'static str),
    /// `cudaGraphNode_t*` out, may be null: the graph's nodes, as many as the named
    /// `size_t*` count holds after the call (`cudaGraphGetNodes`): recorded as handles;
    /// replay maps each captured node to the node its own call listed at that place
    /// (graphs list their nodes in the order they were added).
    OutGraphNodeList(&'static str),
    /// `size_t*` in and out: the capacity given, the count written. Recorded after the
    /// call; replay passes the recorded count as its capacity.
    InOutCount,
    /// A host function of the program (`cudaHostFn_t`, `hipHostFn_t`): recorded as its
    /// address (for the reader); replay passes a function of its own that does nothing, so
    /// the stream or graph keeps the ordering point and none of the program's code runs.
    HostFn,
    /// A stream callback of the program (`cudaStreamCallback_t`): as [`ParamKind::HostFn`],
    /// replay's own taking the callback's three arguments.
    StreamCallback,
    /// The data pointer a host function is called with: recorded; replay passes null.
    HostFnData,
    /// `const cudaHostNodeParams*` (and HIP's, and the driver's `CUDA_HOST_NODE_PARAMS`:
    /// the function, then its data, 16 bytes): recorded as its bytes; replay passes its own
    /// function that does nothing, and null.
    HostNodeParams,
    /// An integer register the C signature leaves unused: the next parameter is a struct
    /// of more than two eightbytes passed by value (`cudaExtent`), which the x86-64 SysV
    /// ABI passes on the stack, where the row's following integer parameters (its
    /// fields) are read. Neither recorded nor meaningful (`api::texture` tests the ABI).
    SpilledRegister,
}
