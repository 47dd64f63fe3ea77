//! Launch configuration that changes what a kernel may do: the function settings
//! (`cudaFuncSetAttribute`, `cudaFuncSetCacheConfig`, `cudaFuncSetSharedMemConfig` and
//! the `hip` twins) and the cooperative and extended launches (`cudaLaunchCooperativeKernel`,
//! `hipLaunchCooperativeKernel`, `hipModuleLaunchCooperativeKernel`, `hipExtLaunchKernel`)
//! and their driver forms (`cuFuncSetAttribute`, `cuKernelSetAttribute`,
//! `cudaKernelSetAttributeForDevice` for a kernel handle,
//! `cuFuncSetCacheConfig`, `cuKernelSetCacheConfig`, `cuFuncSetSharedMemConfig`,
//! `cuLaunchCooperativeKernel` and its `_ptsz` form), which nvcc's static runtime calls.
//!
//! A function setting names its kernel by host stub; capture records the kernel as a
//! launch names it (mangled name and code object), so replay applies the setting to its
//! own function of that name. Device-wide settings (`cudaDeviceSetLimit`, cache and
//! shared-memory configurations) are plain table rows.

use std::os::raw::{c_int, c_uint, c_void};

use hrr_archive::api::launch_config::func_attribute_of_driver;
use hrr_archive::api::sigs;
use hrr_archive::api::{fid, semantic, Vendor};
use hrr_archive::payload::PayloadWriter;

use crate::ffi::Dim3;
use crate::launch::{launch_by, resolve_cuda_stub, resolve_hip_stub, LaunchShape};
use crate::modules::module_launch;
use crate::real::NO_REAL_FUNCTION;
use crate::registry::KernelRegistry;
use crate::state::{self, guarded};

/// What a function setting records besides its kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FuncSetting {
    /// A `cudaFuncAttribute` / `hipFuncAttribute` and its value.
    Attribute { attr: i64, value: i64 },
    /// A `cudaFuncCache` / `hipFuncCache_t`.
    CacheConfig(i64),
    /// A `cudaSharedMemConfig` / `hipSharedMemConfig`.
    SharedMemConfig(i64),
}

impl FuncSetting {
    /// The record kind it is written as.
    pub fn record_id(self) -> u16 {
        match self {
            FuncSetting::Attribute { .. } => semantic::FUNC_SET_ATTRIBUTE,
            FuncSetting::CacheConfig(_) => semantic::FUNC_SET_CACHE_CONFIG,
            FuncSetting::SharedMemConfig(_) => semantic::FUNC_SET_SHARED_MEM_CONFIG,
        }
    }

    /// Its fields after the kernel's.
    pub fn encode(self, p: &mut PayloadWriter) {
        match self {
            FuncSetting::Attribute { attr, value } => {
                p.i64(fid::FUNC_ATTRIBUTE, attr)
                    .i64(fid::CONFIG_VALUE, value);
            }
            FuncSetting::CacheConfig(v) | FuncSetting::SharedMemConfig(v) => {
                p.i64(fid::CONFIG_VALUE, v);
            }
        }
    }
}

/// The host stub a function setting names: `func` itself when registration bound it, or
/// the stub behind it when it is a `cudaKernel_t` (`__cudaGetKernel`); 0 when neither.
fn stub_of(reg: &KernelRegistry, func: u64) -> u64 {
    if reg.launch_prefix(func).is_some() {
        func
    } else {
        reg.stub_of_kernel(func)
    }
}

/// Records a function setting (after the real call returned `ret`).
fn record_setting(
    vendor: Vendor,
    api: &str,
    func: *const c_void,
    setting: FuncSetting,
    ret: c_int,
) {
    let Some((cap, _g)) = state::enter(vendor) else {
        return;
    };
    guarded(api, || {
        let stub = stub_of(&cap.kernels, func as u64);
        let mut p = PayloadWriter::new();
        p.u64(fid::HOST_STUB, func as u64);
        let incomplete = match cap.kernels.launch_prefix(stub) {
            Some(pre) => {
                p.extend_encoded(&pre);
                None
            }
            None => Some(format!(
                "kernel {:#x} was never registered: replay could not name the function to configure",
                func as u64
            )),
        };
        setting.encode(&mut p);
        cap.record(setting.record_id(), ret, &p, incomplete.as_deref(), api);
    });
}

/// A function-setting shim: `(const void* func, int what[, int value])`.
macro_rules! func_setting_shim {
    ($name:ident, $vendor:expr, |$a:ident, $b:ident| $setting:expr) => {
        /// # Safety
        /// Called by the program in place of the runtime's function of this name.
        #[no_mangle]
        pub unsafe extern "C" fn $name(func: *const c_void, $a: c_int, $b: c_int) -> c_int {
            // cudaError_t f(const void* func, enum attr, int value).
            let real = real!($name: sigs::FuncSetAttribute);
            let Some(f) = real.for_shim() else {
                return NO_REAL_FUNCTION;
            };
            // SAFETY: the program's own arguments.
            let ret = unsafe { f(func, $a, $b) };
            record_setting($vendor, stringify!($name), func, $setting, ret);
            ret
        }
    };
    ($name:ident, $vendor:expr, |$a:ident| $setting:expr) => {
        /// # Safety
        /// Called by the program in place of the runtime's function of this name.
        #[no_mangle]
        pub unsafe extern "C" fn $name(func: *const c_void, $a: c_int) -> c_int {
            // cudaError_t f(const void* func, enum config).
            let real = real!($name: sigs::FuncSetConfig);
            let Some(f) = real.for_shim() else {
                return NO_REAL_FUNCTION;
            };
            // SAFETY: the program's own arguments.
            let ret = unsafe { f(func, $a) };
            record_setting($vendor, stringify!($name), func, $setting, ret);
            ret
        }
    };
}

/// A driver function attribute (`CUfunction_attribute`) recorded as the runtime's: the
/// record replay applies by kernel name, whoever set it. An attribute with no runtime
/// twin is recorded incomplete, naming it.
fn record_driver_attribute(
    api: &str,
    func: *const c_void,
    attrib: c_int,
    value: c_int,
    ret: c_int,
) {
    match func_attribute_of_driver(attrib as i64) {
        Some(a) => record_setting(
            Vendor::Cuda,
            api,
            func,
            FuncSetting::Attribute {
                attr: a.runtime,
                value: value as i64,
            },
            ret,
        ),
        None => {
            let Some((cap, _g)) = state::enter(Vendor::Cuda) else {
                return;
            };
            guarded(api, || {
                let mut p = PayloadWriter::new();
                p.u64(fid::HOST_STUB, func as u64);
                let why = format!(
                    "CUfunction_attribute {attrib} has no cudaFuncAttribute replay applies"
                );
                cap.record(semantic::FUNC_SET_ATTRIBUTE, ret, &p, Some(&why), api);
            });
        }
    }
}

/// `cuFuncSetAttribute(CUfunction, CUfunction_attribute, int)`: as `cudaFuncSetAttribute`.
///
/// # Safety
/// Called by the program in place of the driver's function.
#[no_mangle]
pub unsafe extern "C" fn cuFuncSetAttribute(
    func: *const c_void,
    attrib: c_int,
    value: c_int,
) -> c_int {
    let real = real!(cuFuncSetAttribute: sigs::FuncSetAttribute);
    let Some(f) = real.for_shim() else {
        return NO_REAL_FUNCTION;
    };
    // SAFETY: the program's own arguments.
    let ret = unsafe { f(func, attrib, value) };
    record_driver_attribute("cuFuncSetAttribute", func, attrib, value, ret);
    ret
}

/// `cuKernelSetAttribute(CUfunction_attribute, int, CUkernel, CUdevice)`: as
/// `cudaFuncSetAttribute`, for a library kernel (replay sets it on its own function of
/// that name, on its one device).
///
/// # Safety
/// Called by the program in place of the driver's function.
#[no_mangle]
pub unsafe extern "C" fn cuKernelSetAttribute(
    attrib: c_int,
    value: c_int,
    kernel: *mut c_void,
    dev: c_int,
) -> c_int {
    let real = real!(cuKernelSetAttribute: unsafe extern "C" fn(c_int, c_int, *mut c_void, c_int) -> c_int);
    let Some(f) = real.for_shim() else {
        return NO_REAL_FUNCTION;
    };
    // SAFETY: the program's own arguments.
    let ret = unsafe { f(attrib, value, kernel, dev) };
    record_driver_attribute("cuKernelSetAttribute", kernel, attrib, value, ret);
    ret
}

/// `cudaKernelSetAttributeForDevice(cudaKernel_t, cudaFuncAttribute, int value, int
/// device)`: as `cudaFuncSetAttribute`, for a kernel handle (`cudaGetKernel`,
/// `cudaLibraryGetKernel`): replay sets it on its own function of that name, on its one
/// device.
///
/// # Safety
/// Called by the program in place of the runtime's function.
#[no_mangle]
pub unsafe extern "C" fn cudaKernelSetAttributeForDevice(
    kernel: *mut c_void,
    attr: c_int,
    value: c_int,
    device: c_int,
) -> c_int {
    let real = real!(cudaKernelSetAttributeForDevice: unsafe extern "C" fn(*mut c_void, c_int, c_int, c_int) -> c_int);
    let Some(f) = real.for_shim() else {
        return NO_REAL_FUNCTION;
    };
    // SAFETY: the program's own arguments.
    let ret = unsafe { f(kernel, attr, value, device) };
    let setting = FuncSetting::Attribute {
        attr: attr as i64,
        value: value as i64,
    };
    record_setting(
        Vendor::Cuda,
        "cudaKernelSetAttributeForDevice",
        kernel,
        setting,
        ret,
    );
    ret
}

/// `cuKernelSetCacheConfig(CUkernel, CUfunc_cache, CUdevice)` (what nvcc's static runtime
/// makes of `cudaFuncSetCacheConfig`): as `cudaFuncSetCacheConfig`, for a library kernel
/// (replay sets it on its own function of that name, on its one device).
///
/// # Safety
/// Called by the program in place of the driver's function.
#[no_mangle]
pub unsafe extern "C" fn cuKernelSetCacheConfig(
    kernel: *mut c_void,
    config: c_int,
    dev: c_int,
) -> c_int {
    let real =
        real!(cuKernelSetCacheConfig: unsafe extern "C" fn(*mut c_void, c_int, c_int) -> c_int);
    let Some(f) = real.for_shim() else {
        return NO_REAL_FUNCTION;
    };
    // SAFETY: the program's own arguments.
    let ret = unsafe { f(kernel, config, dev) };
    let setting = FuncSetting::CacheConfig(config as i64);
    record_setting(Vendor::Cuda, "cuKernelSetCacheConfig", kernel, setting, ret);
    ret
}

func_setting_shim!(cudaFuncSetAttribute, Vendor::Cuda, |attr, value| {
    FuncSetting::Attribute {
        attr: attr as i64,
        value: value as i64,
    }
});
func_setting_shim!(hipFuncSetAttribute, Vendor::Hip, |attr, value| {
    FuncSetting::Attribute {
        attr: attr as i64,
        value: value as i64,
    }
});
func_setting_shim!(cudaFuncSetCacheConfig, Vendor::Cuda, |config| {
    FuncSetting::CacheConfig(config as i64)
});
func_setting_shim!(hipFuncSetCacheConfig, Vendor::Hip, |config| {
    FuncSetting::CacheConfig(config as i64)
});
// The driver's: a `CUfunction` where the runtime's take a host stub (the same ABI), and
// `CUfunc_cache` / `CUsharedconfig` number their values as the runtime's enums do.
func_setting_shim!(cuFuncSetCacheConfig, Vendor::Cuda, |config| {
    FuncSetting::CacheConfig(config as i64)
});
func_setting_shim!(cuFuncSetSharedMemConfig, Vendor::Cuda, |config| {
    FuncSetting::SharedMemConfig(config as i64)
});
func_setting_shim!(cudaFuncSetSharedMemConfig, Vendor::Cuda, |config| {
    FuncSetting::SharedMemConfig(config as i64)
});
func_setting_shim!(hipFuncSetSharedMemConfig, Vendor::Hip, |config| {
    FuncSetting::SharedMemConfig(config as i64)
});

/// # Safety
/// Called by the program (and the `cudaLaunchCooperativeKernel` template) in place of the
/// runtime's function.
#[no_mangle]
pub unsafe extern "C" fn cudaLaunchCooperativeKernel(
    func: *const c_void,
    grid: Dim3,
    block: Dim3,
    args: *mut *mut c_void,
    shmem: usize,
    stream: *mut c_void,
) -> c_int {
    // cudaError_t (const void*, dim3, dim3, void**, size_t, cudaStream_t).
    let Some(f) = real!(cudaLaunchCooperativeKernel: crate::launch::LaunchFn).for_shim() else {
        return NO_REAL_FUNCTION;
    };
    let shape = LaunchShape {
        grid,
        block,
        shmem,
        stream: stream as u64,
    };
    // SAFETY: the program's own arguments, for the runtime's function.
    let call = || unsafe { f(func, grid, block, args, shmem, stream) };
    // SAFETY: `args` are the argument pointers `call` hands the runtime.
    unsafe {
        launch_by(
            call,
            Vendor::Cuda,
            semantic::LAUNCH_COOPERATIVE,
            "cudaLaunchCooperativeKernel",
            func as u64,
            shape,
            args,
            resolve_cuda_stub,
            &|_| {},
        )
    }
}

/// # Safety
/// Called by the program in place of the runtime's function.
#[no_mangle]
pub unsafe extern "C" fn hipLaunchCooperativeKernel(
    func: *const c_void,
    grid: Dim3,
    block: Dim3,
    args: *mut *mut c_void,
    shmem: c_uint,
    stream: *mut c_void,
) -> c_int {
    // hipError_t (const void*, dim3, dim3, void**, unsigned int sharedMemBytes, hipStream_t).
    type CoopFn = unsafe extern "C" fn(
        *const c_void,
        Dim3,
        Dim3,
        *mut *mut c_void,
        c_uint,
        *mut c_void,
    ) -> c_int;
    let Some(f) = real!(hipLaunchCooperativeKernel: CoopFn).for_shim() else {
        return NO_REAL_FUNCTION;
    };
    let shape = LaunchShape {
        grid,
        block,
        shmem: shmem as usize,
        stream: stream as u64,
    };
    // SAFETY: the program's own arguments, for the runtime's function.
    let call = || unsafe { f(func, grid, block, args, shmem, stream) };
    // SAFETY: `args` are the argument pointers `call` hands the runtime.
    unsafe {
        launch_by(
            call,
            Vendor::Hip,
            semantic::LAUNCH_COOPERATIVE,
            "hipLaunchCooperativeKernel",
            func as u64,
            shape,
            args,
            resolve_hip_stub,
            &|_| {},
        )
    }
}

/// Defines a cooperative module launch shim of `$vendor` (`cuLaunchCooperativeKernel` is
/// what nvcc's static runtime makes of `cudaLaunchCooperativeKernel`); `$stream` maps the
/// stream as recorded (the `_ptsz` form's 0 is the per-thread stream).
macro_rules! module_coop_shim {
    ($name:ident, $vendor:expr, $stream:expr) => {
        /// # Safety
        /// Called by the program in place of the runtime's or driver's function.
        #[no_mangle]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "C" fn $name(
            f: *mut c_void,
            gx: c_uint,
            gy: c_uint,
            gz: c_uint,
            bx: c_uint,
            by: c_uint,
            bz: c_uint,
            shmem: c_uint,
            stream: *mut c_void,
            params: *mut *mut c_void,
        ) -> c_int {
            let Some(real) = real!($name: sigs::ModuleLaunchCooperative).for_shim() else {
                return NO_REAL_FUNCTION;
            };
            let recorded: fn(u64) -> u64 = $stream;
            let shape = LaunchShape::from_xyz(
                [gx, gy, gz],
                [bx, by, bz],
                shmem as usize,
                recorded(stream as u64),
            );
            // SAFETY: the program's own arguments.
            let call = || unsafe { real(f, gx, gy, gz, bx, by, bz, shmem, stream, params) };
            module_launch(
                semantic::LAUNCH_COOPERATIVE,
                $vendor,
                stringify!($name),
                f as u64,
                shape,
                params,
                std::ptr::null_mut(),
                call,
                &|_| {},
            )
        }
    };
}

// HIP 5.5 and later, and the CUDA driver's.
module_coop_shim!(hipModuleLaunchCooperativeKernel, Vendor::Hip, |s| s);
module_coop_shim!(cuLaunchCooperativeKernel, Vendor::Cuda, |s| s);
module_coop_shim!(
    cuLaunchCooperativeKernel_ptsz,
    Vendor::Cuda,
    crate::per_thread::per_thread
);

/// hipExtLaunchKernel's events and flags, as its record carries them.
fn encode_ext_launch(p: &mut PayloadWriter, start: u64, stop: u64, flags: c_int) {
    p.handle(fid::START_EVENT, start)
        .handle(fid::STOP_EVENT, stop)
        .i64(fid::LAUNCH_FLAGS, flags as i64);
}

/// # Safety
/// Called by the program (and `hipExtLaunchKernelGGL`) in place of the runtime's function.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn hipExtLaunchKernel(
    func: *const c_void,
    grid: Dim3,
    block: Dim3,
    args: *mut *mut c_void,
    shmem: usize,
    stream: *mut c_void,
    start: *mut c_void,
    stop: *mut c_void,
    flags: c_int,
) -> c_int {
    // hipError_t (const void*, dim3, dim3, void**, size_t, hipStream_t, hipEvent_t start,
    // hipEvent_t stop, int flags).
    type ExtFn = unsafe extern "C" fn(
        *const c_void,
        Dim3,
        Dim3,
        *mut *mut c_void,
        usize,
        *mut c_void,
        *mut c_void,
        *mut c_void,
        c_int,
    ) -> c_int;
    let Some(f) = real!(hipExtLaunchKernel: ExtFn).for_shim() else {
        return NO_REAL_FUNCTION;
    };
    let shape = LaunchShape {
        grid,
        block,
        shmem,
        stream: stream as u64,
    };
    // SAFETY: the program's own arguments, for the runtime's function.
    let call = || unsafe { f(func, grid, block, args, shmem, stream, start, stop, flags) };
    let extra = |p: &mut PayloadWriter| encode_ext_launch(p, start as u64, stop as u64, flags);
    // SAFETY: `args` are the argument pointers `call` hands the runtime.
    unsafe {
        launch_by(
            call,
            Vendor::Hip,
            semantic::HIP_EXT_LAUNCH,
            "hipExtLaunchKernel",
            func as u64,
            shape,
            args,
            resolve_hip_stub,
            &extra,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hrr_archive::payload::Payload;

    #[test]
    fn each_setting_has_its_record_and_fields() {
        let s = FuncSetting::Attribute {
            attr: 8,
            value: 99 * 1024,
        };
        assert_eq!(s.record_id(), semantic::FUNC_SET_ATTRIBUTE);
        let mut w = PayloadWriter::new();
        s.encode(&mut w);
        let bytes = w.finish();
        let p = Payload::parse(&bytes).unwrap();
        assert_eq!(p.i64(fid::FUNC_ATTRIBUTE, "attr").unwrap(), 8);
        assert_eq!(p.i64(fid::CONFIG_VALUE, "value").unwrap(), 99 * 1024);
        let c = FuncSetting::CacheConfig(2);
        assert_eq!(c.record_id(), semantic::FUNC_SET_CACHE_CONFIG);
        let mut w = PayloadWriter::new();
        c.encode(&mut w);
        let bytes = w.finish();
        let p = Payload::parse(&bytes).unwrap();
        assert!(p.get(fid::FUNC_ATTRIBUTE).is_none());
        assert_eq!(p.i64(fid::CONFIG_VALUE, "config").unwrap(), 2);
        assert_eq!(
            FuncSetting::SharedMemConfig(1).record_id(),
            semantic::FUNC_SET_SHARED_MEM_CONFIG
        );
    }

    #[test]
    fn a_setting_names_its_kernel_by_stub_or_by_kernel_handle() {
        let reg = KernelRegistry::default();
        reg.add_fat_binary(1, hrr_archive::ContentHash::of(b"co"));
        reg.register_function(1, 0x10, "k".into());
        reg.bind_kernel(0xa0, 0x10);
        assert_eq!(stub_of(&reg, 0x10), 0x10);
        assert_eq!(stub_of(&reg, 0xa0), 0x10);
        assert_eq!(stub_of(&reg, 0xb0), 0);
    }

    #[test]
    fn an_ext_launch_carries_its_events_and_flags() {
        let mut w = PayloadWriter::new();
        encode_ext_launch(&mut w, 0x70, 0, 1);
        let bytes = w.finish();
        let p = Payload::parse(&bytes).unwrap();
        assert_eq!(p.handle(fid::START_EVENT, "start").unwrap(), 0x70);
        assert_eq!(p.handle(fid::STOP_EVENT, "stop").unwrap(), 0);
        assert_eq!(p.i64(fid::LAUNCH_FLAGS, "flags").unwrap(), 1);
    }
}
