//! Code-object registration, called by the constructors nvcc and hipcc generate: a fat
//! binary (`__cudaRegisterFatBinary`, `__hipRegisterFatBinary`), then each kernel
//! (`__*RegisterFunction`) and variable (`__*RegisterVar`) in it; and CUDA 12.4's kernel
//! handles (`__cudaGetKernel`). CUDA and HIP share each shim body; their C signatures
//! differ only in names and in types the ABI passes alike.
//!
//! The real function runs first; then the registration is recorded and entered in the
//! kernel registry, where launches and symbol copies find it.

use std::ffi::c_char;
use std::os::raw::{c_int, c_void};

use hrr_archive::api::{fid, semantic, Vendor};
use hrr_archive::codeobject;
use hrr_archive::payload::PayloadWriter;

use crate::ffi::{bytes_at, c_string, read_at, Dim3};
use crate::real::{NoReal, NO_REAL_FUNCTION};
use crate::state::{self, guarded};

/// The code object bytes behind a registration wrapper, sized from their own headers.
///
/// # Safety
/// `wrapper` must be the pointer the compiler-generated code passes to the register call.
pub(crate) unsafe fn code_object_bytes<'a>(
    wrapper: *const c_void,
    vendor: Vendor,
) -> Option<&'a [u8]> {
    if wrapper.is_null() {
        return None;
    }
    // SAFETY: both wrappers start with {u32 magic, u32 version, const void* data}.
    let (magic, data) = unsafe {
        (
            read_at::<u32>(wrapper as u64),
            read_at::<*const u8>(wrapper as u64 + 8),
        )
    };
    if data.is_null() {
        return None;
    }
    let peek = |off: u64, len: u64| {
        // SAFETY: header fields of an image that the runtime reads in full.
        Some(unsafe { bytes_at(data.add(off as usize), len as usize) }.to_vec())
    };
    let size = match (vendor, magic) {
        (Vendor::Cuda, codeobject::CUDA_WRAPPER_MAGIC) => {
            codeobject::cuda_fatbin_size(&peek(0, 16)?)?
        }
        (Vendor::Hip, codeobject::HIP_WRAPPER_MAGIC) => codeobject::bundle_size(peek)?,
        _ => return None,
    };
    // SAFETY: the image's own header says it spans `size` bytes.
    Some(unsafe { bytes_at(data, size as usize) })
}

fn register_fat_binary(
    vendor: Vendor,
    wrapper: *const c_void,
    handle: *mut *mut c_void,
    api: &str,
) {
    let Some((cap, _g)) = state::enter(vendor) else {
        return;
    };
    guarded(api, || {
        let mut p = PayloadWriter::new();
        p.handle(fid::HANDLE, handle as u64);
        // SAFETY: `wrapper` is what the compiler-generated constructor passed.
        let incomplete = match unsafe { code_object_bytes(wrapper, vendor) } {
            Some(bytes) => match cap.writer().put_code_object(bytes) {
                Ok(h) => {
                    if vendor == Vendor::Hip {
                        cap.kernels.add_hip_layouts(h, bytes);
                    }
                    cap.kernels.add_fat_binary(handle as u64, h);
                    p.str(fid::CODE_OBJECT, &h.to_hex());
                    p.u64(fid::SIZE, bytes.len() as u64);
                    None
                }
                Err(_) => Some("code object not stored (capture stopped)"),
            },
            None => Some("unrecognised fat-binary wrapper: code object not stored"),
        };
        cap.record(semantic::REGISTER_FAT_BINARY, 0, &p, incomplete, api);
    });
}

fn register_function(
    vendor: Vendor,
    handle: *mut *mut c_void,
    stub: *const c_void,
    name: *const c_char,
    api: &str,
) {
    let Some((cap, _g)) = state::enter(vendor) else {
        return;
    };
    guarded(api, || {
        // SAFETY: the device function's name, a string in the program's image.
        let name = unsafe { c_string(name) };
        let mut p = PayloadWriter::new();
        p.handle(fid::HANDLE, handle as u64)
            .u64(fid::HOST_STUB, stub as u64)
            .str(fid::NAME, &name);
        if let Some(h) = cap
            .kernels
            .register_function(handle as u64, stub as u64, name)
        {
            p.str(fid::CODE_OBJECT, &h.to_hex());
        }
        cap.record(semantic::REGISTER_FUNCTION, 0, &p, None, api);
    });
}

fn register_var(
    vendor: Vendor,
    handle: *mut *mut c_void,
    host_var: *const c_void,
    name: *const c_char,
    size: usize,
    constant: c_int,
    api: &str,
) {
    let Some((cap, _g)) = state::enter(vendor) else {
        return;
    };
    guarded(api, || {
        // SAFETY: the variable's name, a string in the program's image.
        let name = unsafe { c_string(name) };
        let mut p = PayloadWriter::new();
        p.handle(fid::HANDLE, handle as u64)
            .u64(fid::HOST_STUB, host_var as u64)
            .str(fid::NAME, &name)
            .u64(fid::SIZE, size as u64)
            .u64(fid::SHARED_MEM, constant as u64);
        if let Some(h) = cap
            .kernels
            .register_var(handle as u64, host_var as u64, name, size as u64)
        {
            p.str(fid::CODE_OBJECT, &h.to_hex());
        }
        cap.record(semantic::REGISTER_VAR, 0, &p, None, api);
    });
}

/// C type of `__cudaRegisterFatBinary(void*)` / `__hipRegisterFatBinary(const void*)`.
type RegisterFatBinaryFn = unsafe extern "C" fn(*const c_void) -> *mut *mut c_void;

/// C type of `__cudaRegisterFunction` / `__hipRegisterFunction`: (handle, host stub,
/// device function, device name, thread limit, tid, bid, bDim, gDim, wSize). The thread
/// limit is `int` in CUDA and `unsigned` in HIP, passed alike.
type RegisterFunctionFn = unsafe extern "C" fn(
    *mut *mut c_void,
    *const c_void,
    *mut c_char,
    *const c_char,
    c_int,
    *mut c_void,
    *mut c_void,
    *mut Dim3,
    *mut Dim3,
    *mut c_int,
);

/// C type of `__cudaRegisterVar` / `__hipRegisterVar`: (handle, host variable, CUDA's
/// device address or HIP's host variable name, device name, ext, size, constant,
/// global).
type RegisterVarFn = unsafe extern "C" fn(
    *mut *mut c_void,
    *mut c_void,
    *mut c_char,
    *const c_char,
    c_int,
    usize,
    c_int,
    c_int,
);

/// The registration shims of one vendor.
macro_rules! registration_shims {
    ($vendor:expr, $fat_binary:ident, $function:ident, $var:ident) => {
        /// # Safety
        /// Called by the compiler-generated constructors, in place of the runtime's.
        #[no_mangle]
        pub unsafe extern "C" fn $fat_binary(wrapper: *const c_void) -> *mut *mut c_void {
            let Some(f) = real!($fat_binary: RegisterFatBinaryFn).for_shim() else {
                return NoReal::VALUE;
            };
            // SAFETY: the constructor's own argument.
            let handle = unsafe { f(wrapper) };
            register_fat_binary($vendor, wrapper, handle, stringify!($fat_binary));
            handle
        }

        /// # Safety
        /// Called by the compiler-generated constructors (once per kernel), in place of
        /// the runtime's.
        #[no_mangle]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "C" fn $function(
            handle: *mut *mut c_void,
            host_fun: *const c_void,
            device_fun: *mut c_char,
            device_name: *const c_char,
            thread_limit: c_int,
            tid: *mut c_void,
            bid: *mut c_void,
            bdim: *mut Dim3,
            gdim: *mut Dim3,
            wsize: *mut c_int,
        ) {
            let Some(f) = real!($function: RegisterFunctionFn).for_shim() else {
                return;
            };
            // SAFETY: the constructor's own arguments.
            unsafe {
                f(
                    handle,
                    host_fun,
                    device_fun,
                    device_name,
                    thread_limit,
                    tid,
                    bid,
                    bdim,
                    gdim,
                    wsize,
                )
            };
            register_function($vendor, handle, host_fun, device_name, stringify!($function));
        }

        /// # Safety
        /// Called by the compiler-generated constructors (once per `__device__` or
        /// `__constant__` variable), in place of the runtime's.
        #[no_mangle]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "C" fn $var(
            handle: *mut *mut c_void,
            host_var: *mut c_void,
            // CUDA's deviceAddress, HIP's hostVar: passed through, never read.
            passed_through: *mut c_char,
            device_name: *const c_char,
            ext: c_int,
            size: usize,
            constant: c_int,
            global: c_int,
        ) {
            let Some(f) = real!($var: RegisterVarFn).for_shim() else {
                return;
            };
            // SAFETY: the constructor's own arguments.
            unsafe {
                f(
                    handle,
                    host_var,
                    passed_through,
                    device_name,
                    ext,
                    size,
                    constant,
                    global,
                )
            };
            register_var($vendor, handle, host_var, device_name, size, constant, stringify!($var));
        }
    };
}

registration_shims!(
    Vendor::Cuda,
    __cudaRegisterFatBinary,
    __cudaRegisterFunction,
    __cudaRegisterVar
);
registration_shims!(
    Vendor::Hip,
    __hipRegisterFatBinary,
    __hipRegisterFunction,
    __hipRegisterVar
);

/// C type of `__cudaGetKernel` / `cudaGetKernel` / `cudaGetFuncBySymbol`:
/// `cudaError_t (handle*, const void* stub)`.
type StubHandleFn = unsafe extern "C" fn(*mut *mut c_void, *const c_void) -> c_int;

/// The body of the calls that hand out a driver handle for a registered stub: the real
/// call, then the handle bound to the stub in the registry, so a launch through it is
/// recorded as a launch of the stub's kernel (name and code object). Nothing else is
/// recorded: replay launches by name and code object.
fn bind_stub_handle(
    api: &'static str,
    f: StubHandleFn,
    handle: *mut *mut c_void,
    stub: *const c_void,
    bind: fn(&crate::registry::KernelRegistry, u64, u64),
) -> c_int {
    // SAFETY: the program's own arguments.
    let ret = unsafe { f(handle, stub) };
    if ret == 0 && !handle.is_null() {
        if let Some(cap) = state::current() {
            // SAFETY: on success the runtime stored the handle.
            let h = unsafe { read_at::<u64>(handle as u64) };
            let _ = guarded(api, || bind(&cap.kernels, h, stub as u64));
        }
    }
    ret
}

/// # Safety
/// Called by nvcc-generated code (CUDA 12.4+ launch stubs), once per stub.
#[no_mangle]
pub unsafe extern "C" fn __cudaGetKernel(kernel: *mut *mut c_void, stub: *const c_void) -> c_int {
    let Some(f) = real!(__cudaGetKernel: StubHandleFn).for_shim() else {
        return NO_REAL_FUNCTION;
    };
    bind_stub_handle("__cudaGetKernel", f, kernel, stub, |r, k, s| {
        r.bind_kernel(k, s)
    })
}

/// # Safety
/// Called by the program: the `cudaKernel_t` of a kernel's host stub.
#[no_mangle]
pub unsafe extern "C" fn cudaGetKernel(kernel: *mut *mut c_void, stub: *const c_void) -> c_int {
    let Some(f) = real!(cudaGetKernel: StubHandleFn).for_shim() else {
        return NO_REAL_FUNCTION;
    };
    bind_stub_handle("cudaGetKernel", f, kernel, stub, |r, k, s| {
        r.bind_kernel(k, s)
    })
}

/// # Safety
/// Called by the program: the `cudaFunction_t` (a `CUfunction`) of a kernel's host stub,
/// which the driver API can launch.
#[no_mangle]
pub unsafe extern "C" fn cudaGetFuncBySymbol(func: *mut *mut c_void, stub: *const c_void) -> c_int {
    let Some(f) = real!(cudaGetFuncBySymbol: StubHandleFn).for_shim() else {
        return NO_REAL_FUNCTION;
    };
    bind_stub_handle("cudaGetFuncBySymbol", f, func, stub, |r, func, s| {
        let _ = r.alias_function(s, func);
    })
}
