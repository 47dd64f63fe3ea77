//! Kernel launches: the launch shims (`cudaLaunchKernel`, `__cudaLaunchKernel`,
//! `cudaLaunchKernelExC`, `hipLaunchKernel`) and the launch path every launch shares,
//! module launches included (`launch_by`, `around_launch`).
//!
//! A launch record is self-contained: the kernel's mangled name, the hash of the code
//! object that holds it, grid, block, shared memory, stream, and per parameter its
//! offset, size, bytes and the offsets of words that point into live allocations
//! (`payload.rs`). What a launch needs about its kernel is resolved once per kernel per
//! thread ([`KernelInfo`], `kernel_info.rs`): a launch then takes no global lock and
//! copies no parameter list.
//!
//! `cudaLaunchKernelExC` with launch attributes is a `LaunchKernelEx` record: the launch
//! record and each attribute's id and 64-byte value verbatim, in the program's order
//! (replay hands them to `cuLaunchKernelEx`); without attributes it is a plain launch.

mod kernel_info;
mod payload;

use std::os::raw::{c_int, c_uint, c_void};

use hrr_archive::api::launch_config::{self, RecordedAttr};
use hrr_archive::api::{fid, semantic, Vendor};
use hrr_archive::payload::PayloadWriter;

use crate::ffi::{bytes_at, Dim3};
use crate::real::NO_REAL_FUNCTION;
use crate::registry::KernelRegistry;
use crate::state::{self, guarded, Capture};

pub use kernel_info::{
    cuda_param_layout, kernel_info_cached, resolve_cuda_function, resolve_cuda_kernel,
    resolve_cuda_stub, resolve_hip_stub, with_kernel_info, AddrHash, AddrHasher, CudaHandle,
    KernelInfo, Resolved,
};
pub use payload::{
    launch_payload, record_launch_body, record_launch_built, LaunchPayload, LaunchShape,
};

/// C type shared by `__cudaLaunchKernel`, `cudaLaunchKernel` and `hipLaunchKernel` (the
/// first parameter is a kernel handle or a host stub).
pub type LaunchFn =
    unsafe extern "C" fn(*const c_void, Dim3, Dim3, *mut *mut c_void, usize, *mut c_void) -> c_int;

/// The path every [`LaunchFn`] shim shares: call the real function exactly once (inside
/// the shim guard, so the runtime's own calls go straight through), then record the
/// launch, its kernel resolved from `first` by `resolve`. A per-thread default stream
/// form (`hipLaunchKernel_spt`) records its null stream as `hipStreamPerThread`.
///
/// # Safety
/// The arguments are the program's own, for the runtime's `f`.
#[allow(clippy::too_many_arguments)]
unsafe fn launch(
    f: LaunchFn,
    vendor: Vendor,
    id: u16,
    api: &str,
    first: *const c_void,
    grid: Dim3,
    block: Dim3,
    args: *mut *mut c_void,
    shmem: usize,
    stream: *mut c_void,
    resolve: fn(&KernelRegistry, u64) -> Resolved,
    per_thread: bool,
) -> c_int {
    let shape = LaunchShape {
        grid,
        block,
        shmem,
        stream: match stream as u64 {
            0 if per_thread => hrr_archive::api::hip_abi::STREAM_PER_THREAD,
            s => s,
        },
    };
    // SAFETY: the program's own arguments, for the runtime's `f`.
    let call = || unsafe { f(first, grid, block, args, shmem, stream) };
    // SAFETY: `args` are the launch's argument pointers, which `call` hands the runtime.
    unsafe {
        launch_by(
            call,
            vendor,
            id,
            api,
            first as u64,
            shape,
            args,
            resolve,
            &|_| {},
        )
    }
}

/// The launch path of every launch by stub or kernel handle: `call` makes the real call
/// exactly once (inside the shim guard, so the runtime's own calls go straight through),
/// then the launch is recorded as `id`, its kernel resolved from `first` by `resolve`,
/// `extra` adding the path's own fields.
///
/// # Safety
/// `args` must be the argument pointers `call` passes to the runtime.
#[allow(clippy::too_many_arguments)]
pub unsafe fn launch_by(
    call: impl FnOnce() -> c_int,
    vendor: Vendor,
    id: u16,
    api: &str,
    first: u64,
    shape: LaunchShape,
    args: *mut *mut c_void,
    resolve: fn(&KernelRegistry, u64) -> Resolved,
    extra: &dyn Fn(&mut PayloadWriter),
) -> c_int {
    let Some((cap, _g)) = state::enter(vendor) else {
        return call();
    };
    let build = || {
        with_kernel_info(&cap.kernels, id, first, resolve, |info| {
            // SAFETY: the program's argument pointers, which the runtime is about to read.
            unsafe { launch_payload(cap, info, shape, args) }
        })
    };
    around_launch(cap, id, api, shape, build, call, extra)
}

/// The order every launch path records in: `build` makes the record's payload before
/// `call` makes the real call (so the snapshot of host-visible memory the kernel reads
/// is taken before the kernel can write it), and the record is written after, with the
/// call's result and `extra`'s fields. A payload built without the kernel's parameters
/// (the driver could not describe the kernel before its first launch) is built again
/// after a successful call, when it can: the arguments are recorded then, and only the
/// snapshot, if the arguments reach host-visible memory, is taken after the launch was
/// issued. A panic in either half is contained (`guarded`).
pub fn around_launch(
    cap: &Capture,
    id: u16,
    api: &str,
    shape: LaunchShape,
    build: impl Fn() -> LaunchPayload,
    call: impl FnOnce() -> c_int,
    extra: &dyn Fn(&mut PayloadWriter),
) -> c_int {
    // A launch outside a range capture's range: the snapshot holds its effect.
    if !crate::range_gate::keeps(id) {
        return call();
    }
    let built = guarded(api, &build);
    let ret = call();
    let built = match built {
        Some(b) if b.layout_unsure && ret == 0 => guarded(api, &build).or(Some(b)),
        other => other,
    };
    if let Some(built) = built {
        guarded(api, || {
            record_launch_built(cap, id, api, shape, ret, built, extra)
        });
    }
    ret
}

/// A [`LaunchFn`] shim: `$resolve` finds the kernel behind the first argument.
macro_rules! launch_shim {
    ($name:ident, $vendor:expr, $id:expr, $resolve:path) => {
        launch_shim!($name, $vendor, $id, $resolve, false);
    };
    ($name:ident, $vendor:expr, $id:expr, $resolve:path, $per_thread:expr) => {
        /// # Safety
        /// Called by compiler-generated launch stubs or the program, in place of the
        /// runtime's function of this name.
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            first: *const c_void,
            grid: Dim3,
            block: Dim3,
            args: *mut *mut c_void,
            shmem: usize,
            stream: *mut c_void,
        ) -> c_int {
            let Some(f) = real!($name: LaunchFn).for_shim() else {
                return NO_REAL_FUNCTION;
            };
            // SAFETY: the program's own arguments, for the runtime's function.
            unsafe {
                launch(
                    f,
                    $vendor,
                    $id,
                    stringify!($name),
                    first,
                    grid,
                    block,
                    args,
                    shmem,
                    stream,
                    $resolve,
                    $per_thread,
                )
            }
        }
    };
}

// nvcc's launch stubs (CUDA 12.4+) launch by kernel handle; older ones and programs by stub.
launch_shim!(
    __cudaLaunchKernel,
    Vendor::Cuda,
    semantic::LAUNCH_KERNEL_BY_HANDLE,
    resolve_cuda_kernel
);
launch_shim!(
    cudaLaunchKernel,
    Vendor::Cuda,
    semantic::LAUNCH_KERNEL,
    resolve_cuda_stub
);
launch_shim!(
    hipLaunchKernel,
    Vendor::Hip,
    semantic::LAUNCH_KERNEL,
    resolve_hip_stub
);
// Programs built with -fgpu-default-stream=per-thread launch through the _spt form.
launch_shim!(
    hipLaunchKernel_spt,
    Vendor::Hip,
    semantic::LAUNCH_KERNEL,
    resolve_hip_stub,
    true
);

/// CUDA's `cudaLaunchConfig_t` (CUDA 11.8+).
#[repr(C)]
pub struct LaunchConfig {
    grid: Dim3,
    block: Dim3,
    shmem: usize,
    stream: *mut c_void,
    attrs: *mut c_void,
    num_attrs: c_uint,
}

/// # Safety
/// Called by the program (and by `cudaLaunchKernelEx`, the header template) in place of the
/// runtime's function.
#[no_mangle]
pub unsafe extern "C" fn cudaLaunchKernelExC(
    config: *const LaunchConfig,
    func: *const c_void,
    args: *mut *mut c_void,
) -> c_int {
    // cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t*, const void*, void**).
    let real = real!(cudaLaunchKernelExC: unsafe extern "C" fn(*const LaunchConfig, *const c_void, *mut *mut c_void) -> c_int);
    let Some(f) = real.for_shim() else {
        return NO_REAL_FUNCTION;
    };
    // SAFETY: the program's own arguments, for the runtime's function.
    let call = || unsafe { f(config, func, args) };
    if config.is_null() {
        return call();
    }
    // SAFETY: the configuration the runtime reads in full (read here before the call: the
    // program's memory, unchanged by it).
    let cfg = unsafe { &*config };
    // SAFETY: the runtime reads `num_attrs` attributes there.
    let attrs = unsafe { launch_attrs(cfg) };
    let id = if attrs.is_empty() {
        semantic::LAUNCH_KERNEL
    } else {
        semantic::LAUNCH_KERNEL_EX
    };
    let shape = LaunchShape {
        grid: cfg.grid,
        block: cfg.block,
        shmem: cfg.shmem,
        stream: cfg.stream as u64,
    };
    // SAFETY: `args` are the argument pointers `call` hands the runtime.
    unsafe {
        launch_by(
            call,
            Vendor::Cuda,
            id,
            "cudaLaunchKernelExC",
            func as u64,
            shape,
            args,
            resolve_cuda_stub,
            &|p| encode_launch_attrs(p, &attrs),
        )
    }
}

/// The launch attributes of a configuration, each as recorded (id and value verbatim).
///
/// # Safety
/// `cfg.attrs` must hold `cfg.num_attrs` attributes when it is not null (the runtime
/// reads them so).
unsafe fn launch_attrs(cfg: &LaunchConfig) -> Vec<RecordedAttr> {
    // SAFETY: the caller's contract.
    unsafe { attrs_at(cfg.attrs as u64, cfg.num_attrs) }
}

/// `n` launch attributes at `at` (the runtime's `cudaLaunchAttribute` and the driver's
/// `CUlaunchAttribute` share their layout and numbering), each as recorded.
///
/// # Safety
/// `at` must hold `n` attributes when it is not null (the runtime or driver has just read
/// them there).
pub unsafe fn attrs_at(at: u64, n: c_uint) -> Vec<RecordedAttr> {
    if at == 0 || n == 0 {
        return Vec::new();
    }
    let len = n as usize * launch_config::ATTR_SIZE;
    // SAFETY: the caller's contract.
    let raw = unsafe { bytes_at(at as *const u8, len) };
    raw.chunks_exact(launch_config::ATTR_SIZE)
        .filter_map(|c| c.try_into().ok())
        .map(RecordedAttr::decode)
        .collect()
}

/// One nested field per launch attribute, in the program's order.
pub fn encode_launch_attrs(p: &mut PayloadWriter, attrs: &[RecordedAttr]) {
    for a in attrs {
        p.nested_with(fid::LAUNCH_ATTR, |n| {
            n.u64(fid::LAUNCH_ATTR_ID, a.id as u64);
            n.bytes(fid::LAUNCH_ATTR_VALUE, &a.value, false);
        });
    }
}
