//! The CUDA 12+ library API's loads, kernels, globals, managed variables, kernel lists and
//! unloads (`cuLibrary*`, `cudaLibrary*`), shared by the driver's and the runtime's shims.

use super::*;

/// A load of `code` (an image in memory) into `*library`.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn load_data(
    api: &'static str,
    f: LibraryLoadFn,
    library: *mut *mut c_void,
    code: *const c_void,
    jit_options: *mut c_void,
    jit_values: *mut *mut c_void,
    n_jit: c_uint,
    lib_options: *mut c_void,
    lib_values: *mut *mut c_void,
    n_lib: c_uint,
) -> c_int {
    // SAFETY: the program's own arguments.
    let ret = unsafe {
        f(
            library,
            code,
            jit_options,
            jit_values,
            n_jit,
            lib_options,
            lib_values,
            n_lib,
        )
    };
    // SAFETY: the image the driver has just read in full.
    let image = unsafe { crate::modules::module_image(code) };
    record_module_image(Vendor::Cuda, library, image.map(Ok), ret, api);
    ret
}

/// A load of the file `file` into `*library`.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn load_file(
    api: &'static str,
    f: LibraryLoadFn,
    library: *mut *mut c_void,
    file: *const c_char,
    jit_options: *mut c_void,
    jit_values: *mut *mut c_void,
    n_jit: c_uint,
    lib_options: *mut c_void,
    lib_values: *mut *mut c_void,
    n_lib: c_uint,
) -> c_int {
    // SAFETY: the program's own arguments.
    let ret = unsafe {
        f(
            library,
            file.cast(),
            jit_options,
            jit_values,
            n_jit,
            lib_options,
            lib_values,
            n_lib,
        )
    };
    record_file_load(Vendor::Cuda, library, file, ret, api);
    ret
}

/// `CUresult (CUkernel*, CUlibrary, const char*)`.
pub(super) type GetKernelFn =
    unsafe extern "C" fn(*mut *mut c_void, *mut c_void, *const c_char) -> c_int;

/// The kernel `name` of a library, into `*kernel`.
pub(super) unsafe fn get_kernel(
    api: &'static str,
    f: GetKernelFn,
    kernel: *mut *mut c_void,
    library: *mut c_void,
    name: *const c_char,
) -> c_int {
    // SAFETY: the program's own arguments.
    let ret = unsafe { f(kernel, library, name) };
    // SAFETY: the call's out slot and the name it has just read.
    unsafe { record_kernel(api, kernel, library, name, ret) };
    ret
}

/// Records the kernel `name` of `library` at `kernel` (the call returned `ret`).
///
/// # Safety
/// `kernel` is the call's out slot; `name` a NUL-terminated name.
unsafe fn record_kernel(
    api: &'static str,
    kernel: *mut *mut c_void,
    library: *mut c_void,
    name: *const c_char,
    ret: c_int,
) {
    record_get_function(Vendor::Cuda, kernel, library, name, ret, api);
    // A CUkernel passed to cuLaunchKernel: its layout is the kernel's, asked now.
    // SAFETY: the program's out pointer, written on success.
    let k = unsafe { stored_handle(ret, kernel) };
    if let (Some(cap), true) = (state::current(), k != 0) {
        guarded(api, || {
            cuda_param_layout(&cap.kernels, k, CudaHandle::Kernel)
        });
    }
}

/// The global `name` of a library, or its managed variable (`__managed__`): recorded as a
/// `__device__` variable's address, its range of `space` (managed memory's host writes are
/// read as `cudaMallocManaged`'s are).
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn get_global(
    api: &'static str,
    f: sigs::ModuleGetGlobal,
    dptr: *mut u64,
    bytes: *mut usize,
    library: *mut c_void,
    name: *const c_char,
    space: Space,
) -> c_int {
    // SAFETY: the program's own arguments.
    let ret = unsafe { f(dptr, bytes, library, name) };
    if ret == 0 {
        record_global(Vendor::Cuda, f, library, name, space, api);
    }
    ret
}

/// `CUresult (CUkernel*, unsigned, CUlibrary)`.
pub(super) type EnumerateFn = unsafe extern "C" fn(*mut *mut c_void, c_uint, *mut c_void) -> c_int;

const UNCOUNTED: &str = "lists a library's kernels whose number the driver does not give (cuLibraryGetKernelCount), so capture cannot tell which handles the call wrote";

const UNNAMED: &str = "lists a kernel whose name the driver does not give (cuKernelGetName), which replay would find its kernel by";

/// A library's kernels listed into `kernels`: each recorded as the `GetKernel` of its
/// name that returns it (the name asked of the driver, `cuKernelGetName`), so replay
/// finds each in its own load of the library.
pub(super) unsafe fn enumerate_kernels(
    api: &'static str,
    f: EnumerateFn,
    kernels: *mut *mut c_void,
    count: c_uint,
    library: *mut c_void,
) -> c_int {
    // SAFETY: the program's own arguments.
    let ret = unsafe { f(kernels, count, library) };
    if ret != 0 || kernels.is_null() {
        return ret;
    }
    // The call writes at most `count` handles: as many as the library has, if fewer.
    type CountFn = unsafe extern "C" fn(*mut c_uint, *mut c_void) -> c_int;
    let mut has: c_uint = 0;
    let counted = real!(driver cuLibraryGetKernelCount: CountFn)
        .get()
        // SAFETY: an out pointer to a local and the library the call just listed.
        .is_some_and(|g| unsafe { g(&mut has, library) } == 0);
    if !counted {
        crate::unreplayable::record(Vendor::Cuda, api, UNCOUNTED, ret, &[library as usize]);
        return ret;
    }
    type NameFn = unsafe extern "C" fn(*mut *const c_char, *mut c_void) -> c_int;
    let name_of = real!(driver cuKernelGetName: NameFn).get();
    for i in 0..count.min(has) as usize {
        // SAFETY: the call wrote this many handles at `kernels`.
        let slot = unsafe { kernels.add(i) };
        let mut name: *const c_char = std::ptr::null();
        // SAFETY: the handle the call just wrote, and an out pointer to a local.
        let named = name_of.is_some_and(|g| unsafe { g(&mut name, *slot) } == 0 && !name.is_null());
        if !named {
            crate::unreplayable::record(Vendor::Cuda, api, UNNAMED, ret, &[library as usize]);
            continue;
        }
        // SAFETY: the handle's out slot and the driver's name for it.
        unsafe { record_kernel(api, slot, library, name, ret) };
    }
    ret
}

/// A library unloaded.
pub(super) unsafe fn unload(
    api: &'static str,
    f: unsafe extern "C" fn(*mut c_void) -> c_int,
    library: *mut c_void,
) -> c_int {
    // SAFETY: the program's own argument.
    let ret = unsafe { f(library) };
    record_unload(Vendor::Cuda, library, ret, api);
    ret
}
