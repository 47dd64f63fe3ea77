//! The driver API's module and library calls beyond `modules` (loads from a file, fat
//! binaries, globals, unloads, the CUDA 12+ library API) and `cuLaunchKernelEx`. A load
//! stores its image as `cuModuleLoadData` does (a file's bytes are read once the driver
//! has read them); a library is a module whose kernels are `CUkernel`s, launched like
//! module functions; a global's address is recorded as a `__device__` variable's
//! (`SYMBOL_ADDRESS`) and entered in the allocation table. The memory, copy, context,
//! stream and event calls of the driver are table rows (`generic`).

use std::ffi::c_char;
use std::os::raw::{c_int, c_uint, c_void};

use hrr_archive::api::sigs;
use hrr_archive::api::{fid, semantic, Vendor};
use hrr_archive::payload::PayloadWriter;

use crate::alloc::Space;
use crate::ffi::{c_string, read_at};
use crate::launch::{attrs_at, cuda_param_layout, encode_launch_attrs, CudaHandle, LaunchShape};
use crate::modules::{module_launch, record_get_function, record_module_image, stored_handle};
use crate::real::NO_REAL_FUNCTION;
use crate::state::{self, guarded};

/// Largest module file read back from disk.
const MAX_MODULE_FILE: u64 = 1 << 30;

/// The bytes of the module file `path` names, as the driver has just read them.
fn module_file(path: &str) -> Result<Vec<u8>, String> {
    let len = std::fs::metadata(path)
        .map_err(|e| format!("module file {path} not read back: {e}"))?
        .len();
    if len > MAX_MODULE_FILE {
        return Err(format!(
            "module file {path} is {len} bytes, over {MAX_MODULE_FILE}"
        ));
    }
    std::fs::read(path).map_err(|e| format!("module file {path} not read back: {e}"))
}

/// Records a load from the file `fname` into `*out`.
fn record_file_load(
    vendor: Vendor,
    out: *mut *mut c_void,
    fname: *const c_char,
    ret: c_int,
    api: &str,
) {
    // SAFETY: the path the program passed, which the driver has just read.
    let path = unsafe { c_string(fname) };
    let image = module_file(&path);
    record_module_image(
        vendor,
        out,
        Some(image.as_deref().map_err(Clone::clone)),
        ret,
        api,
    );
}

/// Records a global's address after a successful lookup: asked again of the driver with
/// capture's own out parameters (the program may pass null for either), recorded as a
/// `__device__` variable's and entered in the allocation table.
fn record_global(
    vendor: Vendor,
    real: sigs::ModuleGetGlobal,
    module: *mut c_void,
    name: *const c_char,
    space: Space,
    api: &str,
) {
    let Some((cap, _g)) = state::enter(vendor) else {
        return;
    };
    guarded(api, || {
        let (mut dptr, mut bytes) = (0u64, 0usize);
        // SAFETY: valid out pointers; the module and name the program's call just used.
        if unsafe { real(&mut dptr, &mut bytes, module, name) } != 0 || dptr == 0 {
            return;
        }
        // SAFETY: the name the program passed, which the driver has just read.
        let var = unsafe { c_string(name) };
        cap.allocs.insert(dptr, bytes as u64, space);
        let mut p = PayloadWriter::new();
        p.u64(fid::HOST_STUB, 0)
            .handle(fid::HANDLE, module as u64)
            .str(fid::NAME, &var)
            .devptr(fid::DEVICE_ADDRESS, dptr)
            .u64(fid::SIZE, bytes as u64);
        let co = cap.kernels.module_code_object(module as u64);
        if let Some(h) = co {
            p.str(fid::CODE_OBJECT, &h.to_hex());
        }
        let incomplete = co.is_none().then_some(crate::modules::UNSEEN_LOAD_GLOBAL);
        cap.record(semantic::SYMBOL_ADDRESS, 0, &p, incomplete, api);
    });
}

fn record_unload(vendor: Vendor, module: *mut c_void, ret: c_int, api: &str) {
    let Some((cap, _g)) = state::enter(vendor) else {
        return;
    };
    guarded(api, || {
        let mut p = PayloadWriter::new();
        p.handle(fid::HANDLE, module as u64);
        cap.record(semantic::MODULE_UNLOAD, ret, &p, None, api);
    });
}

/// The file-load, global and unload shims of one vendor.
macro_rules! driver_module_shims {
    ($vendor:expr, $load:ident, $get_global:ident, $unload:ident) => {
        /// # Safety
        /// Called by the program in place of the driver's or runtime's function.
        #[no_mangle]
        pub unsafe extern "C" fn $load(module: *mut *mut c_void, fname: *const c_char) -> c_int {
            // (module*, const char* fname)
            let real = real!($load: unsafe extern "C" fn(*mut *mut c_void, *const c_char) -> c_int);
            let Some(f) = real.for_shim() else {
                return NO_REAL_FUNCTION;
            };
            // SAFETY: the program's own arguments.
            let ret = unsafe { f(module, fname) };
            record_file_load($vendor, module, fname, ret, stringify!($load));
            ret
        }

        /// # Safety
        /// Called by the program in place of the driver's or runtime's function.
        #[no_mangle]
        pub unsafe extern "C" fn $get_global(
            dptr: *mut u64,
            bytes: *mut usize,
            module: *mut c_void,
            name: *const c_char,
        ) -> c_int {
            let Some(f) = real!($get_global: sigs::ModuleGetGlobal).for_shim() else {
                return NO_REAL_FUNCTION;
            };
            // SAFETY: the program's own arguments.
            let ret = unsafe { f(dptr, bytes, module, name) };
            if ret == 0 {
                record_global($vendor, f, module, name, Space::Device, stringify!($get_global));
            }
            ret
        }

        /// # Safety
        /// Called by the program in place of the driver's or runtime's function.
        #[no_mangle]
        pub unsafe extern "C" fn $unload(module: *mut c_void) -> c_int {
            let Some(f) = real!($unload: unsafe extern "C" fn(*mut c_void) -> c_int).for_shim() else {
                return NO_REAL_FUNCTION;
            };
            // SAFETY: the program's own argument.
            let ret = unsafe { f(module) };
            record_unload($vendor, module, ret, stringify!($unload));
            ret
        }
    };
}

driver_module_shims!(
    Vendor::Cuda,
    cuModuleLoad,
    cuModuleGetGlobal_v2,
    cuModuleUnload
);
driver_module_shims!(
    Vendor::Hip,
    hipModuleLoad,
    hipModuleGetGlobal,
    hipModuleUnload
);

/// # Safety
/// Called by the program in place of the driver's function.
#[no_mangle]
pub unsafe extern "C" fn cuModuleLoadFatBinary(
    module: *mut *mut c_void,
    fat: *const c_void,
) -> c_int {
    // CUresult cuModuleLoadFatBinary(CUmodule*, const void* fatCubin).
    let real = real!(cuModuleLoadFatBinary: unsafe extern "C" fn(*mut *mut c_void, *const c_void) -> c_int);
    let Some(f) = real.for_shim() else {
        return NO_REAL_FUNCTION;
    };
    // SAFETY: the program's own arguments.
    let ret = unsafe { f(module, fat) };
    // SAFETY: the image the driver has just read in full.
    let image = unsafe { crate::modules::module_image(fat) };
    record_module_image(
        Vendor::Cuda,
        module,
        image.map(Ok),
        ret,
        "cuModuleLoadFatBinary",
    );
    ret
}

/// C type of `cuLibraryLoadData` / `cuLibraryLoadFromFile`: `(CUlibrary*, const void*
/// code or const char* file, CUjit_option*, void**, unsigned, CUlibraryOption*, void**,
/// unsigned)`.
type LibraryLoadFn = unsafe extern "C" fn(
    *mut *mut c_void,
    *const c_void,
    *mut c_void,
    *mut *mut c_void,
    c_uint,
    *mut c_void,
    *mut *mut c_void,
    c_uint,
) -> c_int;

/// The bodies of the library API, shared by the driver's functions (`cuLibrary*`) and the
/// runtime's (`cudaLibrary*`, same C types: `cudaLibrary_t` is a `CUlibrary`, a
/// `cudaKernel_t` a `CUkernel`). The shared runtime's own driver calls inside its
/// `cudaLibrary*` are its implementation (never recorded: `lookup`), so each load is
/// recorded once, at whichever function the program called.
mod library;

/// One exported function per library call and API (driver, runtime), each finding its
/// own real function and running the shared body.
macro_rules! library_shims {
    ($load_data:ident, $load_file:ident, $get_kernel:ident, $get_global:ident, $unload:ident) => {
        /// # Safety
        /// Called by the program in place of the library function of the same name.
        #[no_mangle]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "C" fn $load_data(
            library: *mut *mut c_void,
            code: *const c_void,
            jit_options: *mut c_void,
            jit_values: *mut *mut c_void,
            n_jit: c_uint,
            lib_options: *mut c_void,
            lib_values: *mut *mut c_void,
            n_lib: c_uint,
        ) -> c_int {
            let Some(f) = real!($load_data: LibraryLoadFn).for_shim() else {
                return NO_REAL_FUNCTION;
            };
            // SAFETY: the program's own arguments.
            unsafe {
                library::load_data(
                    stringify!($load_data), f, library, code, jit_options, jit_values, n_jit,
                    lib_options, lib_values, n_lib,
                )
            }
        }

        /// # Safety
        /// Called by the program in place of the library function of the same name.
        #[no_mangle]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "C" fn $load_file(
            library: *mut *mut c_void,
            file: *const c_char,
            jit_options: *mut c_void,
            jit_values: *mut *mut c_void,
            n_jit: c_uint,
            lib_options: *mut c_void,
            lib_values: *mut *mut c_void,
            n_lib: c_uint,
        ) -> c_int {
            let Some(f) = real!($load_file: LibraryLoadFn).for_shim() else {
                return NO_REAL_FUNCTION;
            };
            // SAFETY: the program's own arguments.
            unsafe {
                library::load_file(
                    stringify!($load_file), f, library, file, jit_options, jit_values, n_jit,
                    lib_options, lib_values, n_lib,
                )
            }
        }

        /// # Safety
        /// Called by the program in place of the library function of the same name.
        #[no_mangle]
        pub unsafe extern "C" fn $get_kernel(
            kernel: *mut *mut c_void,
            library: *mut c_void,
            name: *const c_char,
        ) -> c_int {
            let Some(f) = real!($get_kernel: library::GetKernelFn).for_shim() else {
                return NO_REAL_FUNCTION;
            };
            // SAFETY: the program's own arguments.
            unsafe { library::get_kernel(stringify!($get_kernel), f, kernel, library, name) }
        }

        /// # Safety
        /// Called by the program in place of the library function of the same name.
        #[no_mangle]
        pub unsafe extern "C" fn $get_global(
            dptr: *mut u64,
            bytes: *mut usize,
            library: *mut c_void,
            name: *const c_char,
        ) -> c_int {
            let Some(f) = real!($get_global: sigs::ModuleGetGlobal).for_shim() else {
                return NO_REAL_FUNCTION;
            };
            // SAFETY: the program's own arguments.
            unsafe { library::get_global(stringify!($get_global), f, dptr, bytes, library, name, Space::Device) }
        }

        /// # Safety
        /// Called by the program in place of the library function of the same name.
        #[no_mangle]
        pub unsafe extern "C" fn $unload(library: *mut c_void) -> c_int {
            let Some(f) =
                real!($unload: unsafe extern "C" fn(*mut c_void) -> c_int).for_shim()
            else {
                return NO_REAL_FUNCTION;
            };
            // SAFETY: the program's own argument.
            unsafe { library::unload(stringify!($unload), f, library) }
        }
    };
}

/// A library's kernel list and managed variables, per API.
macro_rules! library_list_shims {
    ($enumerate:ident, $managed:ident) => {
        /// # Safety
        /// Called by the program in place of the library function of the same name.
        #[no_mangle]
        pub unsafe extern "C" fn $enumerate(
            kernels: *mut *mut c_void,
            count: c_uint,
            library: *mut c_void,
        ) -> c_int {
            let Some(f) = real!($enumerate: library::EnumerateFn).for_shim() else {
                return NO_REAL_FUNCTION;
            };
            // SAFETY: the program's own arguments.
            unsafe { library::enumerate_kernels(stringify!($enumerate), f, kernels, count, library) }
        }

        /// # Safety
        /// Called by the program in place of the library function of the same name.
        #[no_mangle]
        pub unsafe extern "C" fn $managed(
            dptr: *mut u64,
            bytes: *mut usize,
            library: *mut c_void,
            name: *const c_char,
        ) -> c_int {
            let Some(f) = real!($managed: sigs::ModuleGetGlobal).for_shim() else {
                return NO_REAL_FUNCTION;
            };
            // SAFETY: the program's own arguments.
            unsafe { library::get_global(stringify!($managed), f, dptr, bytes, library, name, Space::Managed) }
        }
    };
}

library_list_shims!(cuLibraryEnumerateKernels, cuLibraryGetManaged);
library_list_shims!(cudaLibraryEnumerateKernels, cudaLibraryGetManaged);

library_shims!(
    cuLibraryLoadData,
    cuLibraryLoadFromFile,
    cuLibraryGetKernel,
    cuLibraryGetGlobal,
    cuLibraryUnload
);
library_shims!(
    cudaLibraryLoadData,
    cudaLibraryLoadFromFile,
    cudaLibraryGetKernel,
    cudaLibraryGetGlobal,
    cudaLibraryUnload
);

/// # Safety
/// Called by the program in place of the driver's function.
#[no_mangle]
pub unsafe extern "C" fn cuKernelGetFunction(func: *mut *mut c_void, kernel: *mut c_void) -> c_int {
    // CUresult cuKernelGetFunction(CUfunction*, CUkernel).
    let real =
        real!(cuKernelGetFunction: unsafe extern "C" fn(*mut *mut c_void, *mut c_void) -> c_int);
    let Some(f) = real.for_shim() else {
        return NO_REAL_FUNCTION;
    };
    // SAFETY: the program's own arguments.
    let ret = unsafe { f(func, kernel) };
    let Some((cap, _g)) = state::enter(Vendor::Cuda) else {
        return ret;
    };
    guarded("cuKernelGetFunction", || {
        // SAFETY: the program's out pointer, written on success.
        let handle = unsafe { stored_handle(ret, func) };
        let mut p = PayloadWriter::new();
        p.handle(fid::HANDLE, handle)
            .handle(fid::KERNEL, kernel as u64);
        let known = cap.kernels.alias_function(kernel as u64, handle);
        if let Some((name, co)) = &known {
            p.str(fid::NAME, name).str(fid::CODE_OBJECT, &co.to_hex());
        }
        let incomplete = known
            .is_none()
            .then_some(crate::modules::UNSEEN_LOAD_KERNEL);
        cap.record(
            semantic::MODULE_GET_FUNCTION,
            ret,
            &p,
            incomplete,
            "cuKernelGetFunction",
        );
    });
    ret
}

/// `CUlaunchConfig` on x86-64: grid x, y, z, block x, y, z, shared memory (7 u32), the
/// stream at 32, the attribute array at 40, their count at 48.
const LAUNCH_CONFIG_SIZE: usize = 56;

/// A launch's shape and attribute count from a `CUlaunchConfig`'s bytes.
fn launch_config(b: &[u8; LAUNCH_CONFIG_SIZE]) -> (LaunchShape, u32) {
    let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap_or([0; 4]));
    let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap_or([0; 8]));
    let shape = LaunchShape::from_xyz(
        [u32_at(0), u32_at(4), u32_at(8)],
        [u32_at(12), u32_at(16), u32_at(20)],
        u32_at(24) as usize,
        u64_at(32),
    );
    (shape, u32_at(48))
}

/// # Safety
/// Called by the program in place of the driver's function.
#[no_mangle]
pub unsafe extern "C" fn cuLaunchKernelEx(
    config: *const c_void,
    f: *mut c_void,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> c_int {
    // CUresult cuLaunchKernelEx(const CUlaunchConfig*, CUfunction, void**, void**).
    let Some(real) = real!(cuLaunchKernelEx: sigs::LaunchKernelEx).for_shim() else {
        return NO_REAL_FUNCTION;
    };
    // SAFETY: the program's own arguments.
    let call = || unsafe { real(config, f, params, extra) };
    if config.is_null() {
        return call();
    }
    // SAFETY: the program's config, which the driver is about to read in full.
    let raw: [u8; LAUNCH_CONFIG_SIZE] = unsafe { read_at(config as u64) };
    let (shape, num_attrs) = launch_config(&raw);
    let attrs_ptr = u64::from_le_bytes(raw[40..48].try_into().unwrap_or([0; 8]));
    // SAFETY: the driver is about to read `num_attrs` attributes there.
    let attrs = unsafe { attrs_at(attrs_ptr, num_attrs) };
    // With attributes: the record `cudaLaunchKernelExC` writes (replay launches it through
    // `cuLaunchKernelEx` with each attribute translated, or refuses naming it).
    let id = if attrs.is_empty() {
        semantic::MODULE_LAUNCH_KERNEL
    } else {
        semantic::LAUNCH_KERNEL_EX
    };
    module_launch(
        id,
        Vendor::Cuda,
        "cuLaunchKernelEx",
        f as u64,
        shape,
        params,
        extra,
        call,
        &|p| encode_launch_attrs(p, &attrs),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ffi::Dim3;

    #[test]
    fn a_launch_config_gives_grid_block_memory_stream_and_attributes() {
        let mut b = [0u8; LAUNCH_CONFIG_SIZE];
        for (i, v) in [4u32, 2, 1, 128, 1, 1, 256].iter().enumerate() {
            b[i * 4..i * 4 + 4].copy_from_slice(&v.to_le_bytes());
        }
        b[32..40].copy_from_slice(&0x7700u64.to_le_bytes());
        b[48..52].copy_from_slice(&2u32.to_le_bytes());
        let (s, attrs) = launch_config(&b);
        assert_eq!(
            (s.grid, s.block),
            (Dim3 { x: 4, y: 2, z: 1 }, Dim3 { x: 128, y: 1, z: 1 })
        );
        assert_eq!((s.shmem, s.stream, attrs), (256, 0x7700, 2));
    }

    #[test]
    fn a_module_file_is_read_back_or_its_failure_named() {
        let dir = std::env::temp_dir().join(format!("hrr-driver-{}", std::process::id()));
        std::fs::write(&dir, b"\x7fELF image").unwrap();
        assert_eq!(
            module_file(dir.to_str().unwrap()).unwrap(),
            b"\x7fELF image"
        );
        std::fs::remove_file(&dir).unwrap();
        let e = module_file(dir.to_str().unwrap()).unwrap_err();
        assert!(
            e.starts_with("module file ") && e.contains("not read back"),
            "{e}"
        );
    }
}
