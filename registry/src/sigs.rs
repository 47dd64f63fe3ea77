//! The C types of the calls made outside the table's rows, declared once: capture's
//! hand-written shims call the real function through these (`real!(name: sigs::T)`), and
//! replay's engine looks the same functions up by them (`Runtime::typed::<sigs::T>`), so
//! the two sides cannot drift apart. Capture checks at compile time that each shim it
//! exports has its type (`capture/src/sig_check.rs`). CUDA's and HIP's twins share a type
//! where the ABI passes their parameters alike (every handle is a pointer; `CUdeviceptr`
//! and `hipDeviceptr_t` are one 64-bit word). The table's own rows carry their C types in
//! `hrr_api_table!`.

use std::os::raw::{c_char, c_int, c_uint, c_void};

/// `int f(void)`: `cudaDeviceSynchronize`, `cuCtxSynchronize`, the profiler markers.
pub type NoArgs = unsafe extern "C" fn() -> c_int;
/// `int f(int*)`: `cudaGetDeviceCount`, `cudaRuntimeGetVersion`, `cudaDriverGetVersion`.
pub type IntOut = unsafe extern "C" fn(*mut c_int) -> c_int;
/// `int f(void*)`: a free, a stream's synchronisation, `cuCtxSetCurrent`.
pub type PtrArg = unsafe extern "C" fn(*mut c_void) -> c_int;
/// `cuDevicePrimaryCtxRetain(CUcontext*, CUdevice)`.
pub type PrimaryCtxRetain = unsafe extern "C" fn(*mut *mut c_void, c_int) -> c_int;

/// `cuModuleLoadData` / `hipModuleLoadData(module*, const void* image)`.
pub type ModuleLoadData = unsafe extern "C" fn(*mut *mut c_void, *const c_void) -> c_int;
/// `cuModuleGetFunction` / `hipModuleGetFunction(function*, module, const char* name)`.
pub type ModuleGetFunction =
    unsafe extern "C" fn(*mut *mut c_void, *mut c_void, *const c_char) -> c_int;
/// `cuModuleGetGlobal_v2` / `hipModuleGetGlobal(devptr*, size_t* bytes, module, name)`.
pub type ModuleGetGlobal =
    unsafe extern "C" fn(*mut u64, *mut usize, *mut c_void, *const c_char) -> c_int;
/// `cuFuncGetParamInfo(CUfunction, size_t index, size_t* offset, size_t* size)`.
pub type FuncGetParamInfo =
    unsafe extern "C" fn(*mut c_void, usize, *mut usize, *mut usize) -> c_int;
/// `cudaFuncSetAttribute` / `hipFuncSetAttribute(const void* function, attribute, int)`,
/// and `cuFuncSetAttribute(CUfunction, ...)` (a handle: passed alike).
pub type FuncSetAttribute = unsafe extern "C" fn(*const c_void, c_int, c_int) -> c_int;
/// `cuFuncSetCacheConfig` / `cuFuncSetSharedMemConfig(CUfunction, enum)`, and the
/// runtime's and HIP's twins (`const void*` function).
pub type FuncSetConfig = unsafe extern "C" fn(*const c_void, c_int) -> c_int;

/// `cuLaunchKernel` / `hipModuleLaunchKernel(function, grid xyz, block xyz, unsigned
/// shmem, stream, void** params, void** extra)`.
pub type ModuleLaunchKernel = unsafe extern "C" fn(
    *mut c_void,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    *mut c_void,
    *mut *mut c_void,
    *mut *mut c_void,
) -> c_int;
/// `cuLaunchCooperativeKernel` / `hipModuleLaunchCooperativeKernel(function, grid xyz,
/// block xyz, unsigned shmem, stream, void** params)`.
pub type ModuleLaunchCooperative = unsafe extern "C" fn(
    *mut c_void,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    *mut c_void,
    *mut *mut c_void,
) -> c_int;
/// `cuLaunchKernelEx(const CUlaunchConfig*, CUfunction, void** params, void** extra)`.
pub type LaunchKernelEx =
    unsafe extern "C" fn(*const c_void, *mut c_void, *mut *mut c_void, *mut *mut c_void) -> c_int;
/// `hipExtModuleLaunchKernel(function, global work size xyz, block xyz, size_t shmem,
/// stream, void** params, void** extra, start event, stop event, uint32_t flags)`.
pub type ExtModuleLaunchKernel = unsafe extern "C" fn(
    *mut c_void,
    u32,
    u32,
    u32,
    u32,
    u32,
    u32,
    usize,
    *mut c_void,
    *mut *mut c_void,
    *mut *mut c_void,
    *mut c_void,
    *mut c_void,
    u32,
) -> c_int;

/// `cudaGraphLaunch` / `hipGraphLaunch(graphExec, stream)`.
pub type GraphLaunch = unsafe extern "C" fn(*mut c_void, *mut c_void) -> c_int;
/// `cudaGraphAddKernelNode`, `cuGraphAddKernelNode` (v1), `hipGraphAddKernelNode(node*,
/// graph, const node* deps, size_t count, const params*)`.
pub type GraphAddKernelNode = unsafe extern "C" fn(
    *mut *mut c_void,
    *mut c_void,
    *const *mut c_void,
    usize,
    *const c_void,
) -> c_int;
/// `cuda/cu/hipGraphKernelNodeSetParams(node, const params*)`.
pub type GraphKernelNodeSetParams = unsafe extern "C" fn(*mut c_void, *const c_void) -> c_int;
/// `cuda/cu/hipGraphExecKernelNodeSetParams(exec, node, const params*)`.
pub type GraphExecKernelNodeSetParams =
    unsafe extern "C" fn(*mut c_void, *mut c_void, *const c_void) -> c_int;

/// `cuStreamCreate(CUstream*, unsigned)`, `hipStreamCreateWithFlags(hipStream_t*,
/// unsigned)`: a stream with flags (capture's own copy stream, non-blocking).
pub type StreamCreateFlags = unsafe extern "C" fn(*mut *mut c_void, c_uint) -> c_int;

/// `cuMemHostAlloc(void**, size_t, unsigned)`, `hipHostMalloc(void**, size_t, unsigned)`:
/// page-locked host memory with flags (capture's staging buffer).
pub type HostAllocFlags = unsafe extern "C" fn(*mut *mut c_void, usize, c_uint) -> c_int;

/// `cuMemcpyDtoHAsync_v2(void* dst, CUdeviceptr src, size_t, CUstream)`.
pub type DtoHAsync = unsafe extern "C" fn(*mut c_void, u64, usize, *mut c_void) -> c_int;

/// `hipMemcpyAsync(void* dst, const void* src, size_t, hipMemcpyKind, hipStream_t)`.
pub type MemcpyAsync =
    unsafe extern "C" fn(*mut c_void, *const c_void, usize, c_int, *mut c_void) -> c_int;

/// `cuCtxGetCurrent(CUcontext*)`.
pub type CtxGetCurrent = unsafe extern "C" fn(*mut *mut c_void) -> c_int;

/// `cudaHostFn_t`, `hipHostFn_t`, `CUhostFn`: a host function a stream or graph runs.
pub type HostFn = unsafe extern "C" fn(*mut c_void);

/// `cudaStreamCallback_t`, `hipStreamCallback_t`, `CUstreamCallback`: (stream, status,
/// data).
pub type StreamCallback = unsafe extern "C" fn(*mut c_void, c_int, *mut c_void);

/// `cuLaunchHostFunc(CUstream, CUhostFn, void*)`, `hipLaunchHostFunc`.
pub type LaunchHostFunc = unsafe extern "C" fn(*mut c_void, HostFn, *mut c_void) -> c_int;
