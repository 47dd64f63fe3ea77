//! Modules the program loads itself (the CUDA driver API, hipModule*): the load, the
//! function lookup and the launch shims. CUDA and HIP share each body; a vendor differs
//! only in where a kernel's parameter layout comes from (the driver, or the code
//! object's metadata note).

use std::ffi::c_char;
use std::os::raw::{c_int, c_uint, c_void};

/// Why a handle's module is unknown to capture: loaded before capture started, or by a
/// private entry of the driver's export tables (`cuGetExportTable`: the runtime's
/// interface table has module loaders with no public signature, and its address is
/// hashed by the runtime's integrity check, so capture cannot wrap it: docs/api.md,
/// "Export tables"). Either way the load is not in the archive: the record is incomplete
/// and replay refuses it by name at this first use.
macro_rules! unseen_load {
    ($what:literal) => {
        concat!(
            $what,
            " was loaded where capture could not see it (before capture started, or through a private export-table entry of the driver, which has no public call)"
        )
    };
}
pub(crate) const UNSEEN_LOAD_FUNCTION: &str = unseen_load!("the function's module");
pub(crate) const UNSEEN_LOAD_GLOBAL: &str = unseen_load!("the global's module");
pub(crate) const UNSEEN_LOAD_KERNEL: &str = unseen_load!("the kernel's library");

use hrr_archive::api::sigs;
use hrr_archive::api::{fid, semantic, Vendor};
use hrr_archive::codeobject;
use hrr_archive::payload::PayloadWriter;

use crate::ffi::{bytes_at, c_string, read_at, Dim3};
use crate::launch::{
    around_launch, launch_payload, resolve_cuda_function, KernelInfo, LaunchShape,
};
use crate::real::NO_REAL_FUNCTION;
use crate::state::{self, guarded};

/// Largest PTX text accepted from a module load.
const MAX_PTX_BYTES: usize = 256 << 20;

/// The bytes of an image passed to a module-load call.
///
/// # Safety
/// `image` is what the program passed to the load call, which the driver reads in full.
pub(crate) unsafe fn module_image<'a>(image: *const c_void) -> Option<&'a [u8]> {
    if image.is_null() {
        return None;
    }
    // A fat-binary wrapper (what registration passes) is an image the driver accepts too:
    // nvcc's static runtime loads its modules that way (H200: a 6-byte "image" was stored
    // before, cut at the wrapper's first NUL). Its fat binary is what is stored.
    // SAFETY: the wrapper's magic word, in an image the driver reads.
    if unsafe { read_at::<u32>(image as u64) } == codeobject::CUDA_WRAPPER_MAGIC {
        // SAFETY: the driver took `image` as a wrapper, so it is one.
        return unsafe { crate::register::code_object_bytes(image, Vendor::Cuda) };
    }
    let data = image as *const u8;
    let peek = |off: u64, len: u64| {
        // SAFETY: header fields of an image the driver reads in full.
        Some(unsafe { bytes_at(data.add(off as usize), len as usize) }.to_vec())
    };
    let size = match codeobject::module_image_size(peek) {
        Some(n) => n as usize,
        None => {
            // PTX text: NUL-terminated, as the driver reads it.
            // SAFETY: the driver reads the same NUL-terminated string.
            let n = unsafe { libc::strnlen(image as *const c_char, MAX_PTX_BYTES) };
            if n == MAX_PTX_BYTES {
                return None;
            }
            n + 1
        }
    };
    // SAFETY: the image's own header (or its NUL) says it spans `size` bytes.
    Some(unsafe { bytes_at(data, size) })
}

/// The handle a successful call stored through `out` (0 when it failed).
///
/// # Safety
/// A non-null `out` must be the out pointer the program passed to the call.
pub(crate) unsafe fn stored_handle(ret: c_int, out: *mut *mut c_void) -> u64 {
    if ret == 0 && !out.is_null() {
        // SAFETY: on success the call stored the handle there.
        unsafe { read_at::<u64>(out as u64) }
    } else {
        0
    }
}

fn record_module_load(
    vendor: Vendor,
    module_out: *mut *mut c_void,
    image: *const c_void,
    ret: c_int,
    api: &str,
) {
    // SAFETY: the program's image, which the driver has just read.
    let bytes = unsafe { module_image(image) };
    record_module_image(vendor, module_out, bytes.map(Ok), ret, api);
}

/// Records a module (or library) load whose image is `image`: its bytes, or why they
/// could not be had (a file that could not be read).
pub(crate) fn record_module_image(
    vendor: Vendor,
    module_out: *mut *mut c_void,
    image: Option<Result<&[u8], String>>,
    ret: c_int,
    api: &str,
) {
    let Some((cap, _g)) = state::enter(vendor) else {
        return;
    };
    guarded(api, || {
        let mut p = PayloadWriter::new();
        // SAFETY: the program's out pointer for the module.
        let module = unsafe { stored_handle(ret, module_out) };
        p.handle(fid::HANDLE, module);
        let why: String;
        let incomplete = match image {
            Some(Err(e)) => {
                why = e;
                Some(why.as_str())
            }
            Some(Ok(bytes)) => match cap.writer().put_code_object(bytes) {
                Ok(h) => {
                    p.str(fid::CODE_OBJECT, &h.to_hex())
                        .u64(fid::SIZE, bytes.len() as u64);
                    cap.kernels.add_module(module, h);
                    if vendor == Vendor::Hip {
                        cap.kernels.add_hip_layouts(h, bytes);
                    }
                    None
                }
                Err(_) => Some("code object not stored (capture stopped)"),
            },
            None => Some(
                "unrecognised module image (not a fat binary, bundle, ELF or PTX text): not stored",
            ),
        };
        cap.record(semantic::MODULE_LOAD, ret, &p, incomplete, api);
    });
}

pub(crate) fn record_get_function(
    vendor: Vendor,
    func_out: *mut *mut c_void,
    module: *mut c_void,
    name: *const c_char,
    ret: c_int,
    api: &str,
) {
    let Some((cap, _g)) = state::enter(vendor) else {
        return;
    };
    guarded(api, || {
        // SAFETY: the name the program passed, which the call has just read.
        let name = unsafe { c_string(name) };
        // SAFETY: the program's out pointer for the function.
        let func = unsafe { stored_handle(ret, func_out) };
        let mut p = PayloadWriter::new();
        p.handle(fid::HANDLE, func)
            .handle(fid::KERNEL, module as u64)
            .str(fid::NAME, &name);
        // A module function launches like a registered stub: same name lookup.
        let co = cap.kernels.bind_module_function(module as u64, func, name);
        if let Some(h) = co {
            p.str(fid::CODE_OBJECT, &h.to_hex());
        }
        let incomplete = co.is_none().then_some(UNSEEN_LOAD_FUNCTION);
        cap.record(semantic::MODULE_GET_FUNCTION, ret, &p, incomplete, api);
    });
}

/// The argument buffer a launch's `extra` hands over: the values of
/// `CU_LAUNCH_PARAM_BUFFER_POINTER` / `HIP_LAUNCH_PARAM_BUFFER_POINTER` (1) and of
/// `..._BUFFER_SIZE` (2, a pointer to a `size_t`), up to the end marker (CUDA 0, HIP 3).
/// `word(i)` reads entry `i` of the array; at most 64 entries are read. None when the
/// array names no buffer or no size.
pub(crate) fn extra_buffer(vendor: Vendor, word: impl Fn(usize) -> u64) -> Option<(u64, u64)> {
    let end = match vendor {
        Vendor::Cuda => 0,
        Vendor::Hip => 3,
    };
    let (mut buf, mut size_at) = (None, None);
    let mut i = 0;
    while i < 64 {
        match word(i) {
            k if k == end => break,
            1 => buf = Some(word(i + 1)),
            2 => size_at = Some(word(i + 1)),
            _ => {}
        }
        i += 2;
    }
    Some((buf?, size_at?))
}

/// Pointers to each parameter inside an `extra` argument buffer of `len` bytes at `buf`,
/// by the kernel's layout; None when a parameter lies outside the buffer.
pub(crate) fn params_in_buffer(
    buf: u64,
    len: u64,
    layout: &[(u64, u64)],
) -> Option<Vec<*mut c_void>> {
    layout
        .iter()
        .map(|&(off, size)| {
            (off.checked_add(size)? <= len).then(|| buf.wrapping_add(off) as usize as *mut c_void)
        })
        .collect()
}

/// A module launch (`params`/`extra` as the driver takes them): `call` makes the real
/// call exactly once, inside the shim guard; the record (kind `id`, `fields` adding what
/// the launch path carries beyond the shape: `cuLaunchKernelEx`'s launch attributes) is
/// built before it, so the snapshot of the host-visible memory the kernel reads is taken
/// before the kernel can write it, and written after it with its result.
#[allow(clippy::too_many_arguments)]
pub(crate) fn module_launch(
    id: u16,
    vendor: Vendor,
    api: &str,
    f: u64,
    shape: LaunchShape,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
    call: impl FnOnce() -> c_int,
    fields: &dyn Fn(&mut PayloadWriter),
) -> c_int {
    let Some((cap, _g)) = state::enter(vendor) else {
        return call();
    };
    let build = || {
        let mut layout = match vendor {
            // A `CUfunction`, or a `CUkernel` launched as one (nvcc's static runtime does).
            Vendor::Cuda => resolve_cuda_function(&cap.kernels, f).layout,
            Vendor::Hip => cap.kernels.hip_layout(f),
        };
        let mut params = params;
        // Arguments packed in `extra`'s buffer: a pointer to each, by the layout, so the
        // record is the one a `kernelParams` launch writes.
        let mut in_buffer: Vec<*mut c_void> = Vec::new();
        if params.is_null() && !extra.is_null() {
            // SAFETY: `extra` is the program's array of key/value words up to its end
            // marker, which the driver is about to read; the size value points at a
            // size_t.
            let found = extra_buffer(vendor, |i| unsafe {
                read_at::<u64>(extra as u64 + 8 * i as u64)
            })
            .map(|(buf, size_at)| (buf, unsafe { read_at::<u64>(size_at) }));
            match (found, layout.as_deref()) {
                (Some((buf, len)), Some(l)) => match params_in_buffer(buf, len, l) {
                    Some(v) => in_buffer = v,
                    None => layout = None,
                },
                _ => layout = None,
            }
            params = in_buffer.as_mut_ptr();
        }
        let info = KernelInfo::new(&cap.kernels, f, f, layout);
        // SAFETY: `params` are the program's argument pointers (the driver's `params`),
        // which the driver is about to read, or pointers into its `extra` buffer at the
        // layout's offsets, each inside the buffer; without a layout none is read.
        unsafe { launch_payload(cap, &info, shape, params) }
    };
    around_launch(cap, id, api, shape, build, call, fields)
}

/// A `cuLaunchKernel`-shaped call's arguments: function, grid, block, shared memory,
/// stream, kernelParams, extra.
type ModuleLaunchArgs = (
    *mut c_void,
    [c_uint; 3],
    [c_uint; 3],
    c_uint,
    *mut c_void,
    *mut *mut c_void,
    *mut *mut c_void,
);

/// What every `cuLaunchKernel`-shaped shim does: the real call with the program's own
/// arguments, recorded as a module launch on `recorded_stream` (the stream itself, or the
/// per-thread stream a `_ptsz` form's 0 means).
///
/// # Safety
/// `a` are the program's own arguments for `real`.
unsafe fn module_launch_shim(
    real: sigs::ModuleLaunchKernel,
    vendor: Vendor,
    api: &'static str,
    a: ModuleLaunchArgs,
    recorded_stream: u64,
) -> c_int {
    let (f, g, b, shmem, stream, params, extra) = a;
    let shape = LaunchShape::from_xyz(g, b, shmem as usize, recorded_stream);
    // SAFETY: the caller's contract.
    let call = || unsafe {
        real(
            f, g[0], g[1], g[2], b[0], b[1], b[2], shmem, stream, params, extra,
        )
    };
    module_launch(
        semantic::MODULE_LAUNCH_KERNEL,
        vendor,
        api,
        f as u64,
        shape,
        params,
        extra,
        call,
        &|_| {},
    )
}

/// The module shims of one vendor: load, get function, launch.
macro_rules! module_shims {
    ($vendor:expr, $load:ident, $get_function:ident, $launch:ident) => {
        /// # Safety
        /// Called by the program in place of the driver's or runtime's function.
        #[no_mangle]
        pub unsafe extern "C" fn $load(module: *mut *mut c_void, image: *const c_void) -> c_int {
            let Some(f) = real!($load: sigs::ModuleLoadData).for_shim() else {
                return NO_REAL_FUNCTION;
            };
            // SAFETY: the program's own arguments.
            let ret = unsafe { f(module, image) };
            record_module_load($vendor, module, image, ret, stringify!($load));
            ret
        }

        /// # Safety
        /// Called by the program in place of the driver's or runtime's function.
        #[no_mangle]
        pub unsafe extern "C" fn $get_function(
            func: *mut *mut c_void,
            module: *mut c_void,
            name: *const c_char,
        ) -> c_int {
            let Some(f) = real!($get_function: sigs::ModuleGetFunction).for_shim() else {
                return NO_REAL_FUNCTION;
            };
            // SAFETY: the program's own arguments.
            let ret = unsafe { f(func, module, name) };
            record_get_function($vendor, func, module, name, ret, stringify!($get_function));
            ret
        }

        /// # Safety
        /// Called by the program in place of the driver's or runtime's function.
        #[no_mangle]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "C" fn $launch(
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
            extra: *mut *mut c_void,
        ) -> c_int {
            let Some(real) = real!($launch: sigs::ModuleLaunchKernel).for_shim() else {
                return NO_REAL_FUNCTION;
            };
            // SAFETY: the program's own arguments, for the real function.
            unsafe {
                module_launch_shim(
                    real,
                    $vendor,
                    stringify!($launch),
                    (f, [gx, gy, gz], [bx, by, bz], shmem, stream, params, extra),
                    stream as u64,
                )
            }
        }
    };
}

module_shims!(
    Vendor::Cuda,
    cuModuleLoadData,
    cuModuleGetFunction,
    cuLaunchKernel
);
module_shims!(
    Vendor::Hip,
    hipModuleLoadData,
    hipModuleGetFunction,
    hipModuleLaunchKernel
);

/// `cuLaunchKernel`'s per-thread default stream form (what nvcc's static runtime calls in
/// a per-thread program): recorded as `cuLaunchKernel` with stream 0 written as the
/// per-thread stream (`api::per_thread`).
///
/// # Safety
/// Called by the program in place of the driver's function.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn cuLaunchKernel_ptsz(
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
    extra: *mut *mut c_void,
) -> c_int {
    let Some(real) = real!(cuLaunchKernel_ptsz: sigs::ModuleLaunchKernel).for_shim() else {
        return NO_REAL_FUNCTION;
    };
    // SAFETY: the program's own arguments, for the real function.
    unsafe {
        module_launch_shim(
            real,
            Vendor::Cuda,
            "cuLaunchKernel_ptsz",
            (f, [gx, gy, gz], [bx, by, bz], shmem, stream, params, extra),
            crate::per_thread::per_thread(stream as u64),
        )
    }
}

/// # Safety
/// Called by the program in place of the driver's function.
#[no_mangle]
pub unsafe extern "C" fn cuModuleLoadDataEx(
    module: *mut *mut c_void,
    image: *const c_void,
    n: c_uint,
    options: *mut c_void,
    values: *mut *mut c_void,
) -> c_int {
    // CUresult cuModuleLoadDataEx(CUmodule*, const void*, unsigned, CUjit_option*, void**).
    let real = real!(cuModuleLoadDataEx: unsafe extern "C" fn(*mut *mut c_void, *const c_void, c_uint, *mut c_void, *mut *mut c_void) -> c_int);
    let Some(f) = real.for_shim() else {
        return NO_REAL_FUNCTION;
    };
    // SAFETY: the program's own arguments.
    let ret = unsafe { f(module, image, n, options, values) };
    record_module_load(Vendor::Cuda, module, image, ret, "cuModuleLoadDataEx");
    ret
}

/// hipExtModuleLaunchKernel's global work size (in work items) as the grid (in blocks)
/// hipModuleLaunchKernel takes: global / local, rounded up.
fn grid_of_global_size(global: [u32; 3], local: [u32; 3]) -> Dim3 {
    let div = |g: u32, l: u32| if l == 0 { 0 } else { g.div_ceil(l) };
    Dim3 {
        x: div(global[0], local[0]),
        y: div(global[1], local[1]),
        z: div(global[2], local[2]),
    }
}

/// # Safety
/// Called by the program in place of the runtime's function. Global work sizes are in
/// work items; the grid recorded is global / local, as hipModuleLaunchKernel takes it.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn hipExtModuleLaunchKernel(
    f: *mut c_void,
    gx: u32,
    gy: u32,
    gz: u32,
    lx: u32,
    ly: u32,
    lz: u32,
    shmem: usize,
    stream: *mut c_void,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
    start: *mut c_void,
    stop: *mut c_void,
    flags: u32,
) -> c_int {
    // hipError_t hipExtModuleLaunchKernel(hipFunction_t, 6 x uint32_t, size_t, hipStream_t,
    // void**, void**, hipEvent_t, hipEvent_t, uint32_t).
    let Some(real) = real!(hipExtModuleLaunchKernel: sigs::ExtModuleLaunchKernel).for_shim() else {
        return NO_REAL_FUNCTION;
    };
    let shape = LaunchShape {
        grid: grid_of_global_size([gx, gy, gz], [lx, ly, lz]),
        block: Dim3 {
            x: lx,
            y: ly,
            z: lz,
        },
        shmem,
        stream: stream as u64,
    };
    // SAFETY: the program's own arguments.
    let call = || unsafe {
        real(
            f, gx, gy, gz, lx, ly, lz, shmem, stream, params, extra, start, stop, flags,
        )
    };
    module_launch(
        semantic::MODULE_LAUNCH_KERNEL,
        Vendor::Hip,
        "hipExtModuleLaunchKernel",
        f as u64,
        shape,
        params,
        extra,
        call,
        &|_| {},
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_global_work_size_becomes_blocks_rounded_up() {
        assert_eq!(
            grid_of_global_size([1000, 64, 1], [256, 64, 1]),
            Dim3 { x: 4, y: 1, z: 1 }
        );
        assert_eq!(
            grid_of_global_size([8, 8, 8], [0, 8, 8]),
            Dim3 { x: 0, y: 1, z: 1 }
        );
    }

    #[test]
    fn an_extra_array_names_its_buffer_and_size() {
        // {BUFFER_POINTER, buf, BUFFER_SIZE, &size, END}
        let cuda = [1u64, 0x9000, 2, 0x8000, 0];
        assert_eq!(
            extra_buffer(Vendor::Cuda, |i| cuda[i]),
            Some((0x9000, 0x8000))
        );
        let hip = [2u64, 0x8000, 1, 0x9000, 3];
        assert_eq!(
            extra_buffer(Vendor::Hip, |i| hip[i]),
            Some((0x9000, 0x8000))
        );
        let no_size = [1u64, 0x9000, 0];
        assert_eq!(extra_buffer(Vendor::Cuda, |i| no_size[i]), None);
        let layout = [(0u64, 8u64), (8, 4), (16, 8)];
        let p = params_in_buffer(0x1000, 24, &layout).unwrap();
        assert_eq!(
            p.iter().map(|&x| x as u64).collect::<Vec<_>>(),
            [0x1000, 0x1008, 0x1010]
        );
        assert!(
            params_in_buffer(0x1000, 23, &layout).is_none(),
            "past the buffer's end"
        );
    }

    #[test]
    fn a_ptx_image_spans_its_text_and_nul() {
        let ptx = c".version 8.0\n.target sm_90\n";
        // SAFETY: a NUL-terminated string standing for the program's image.
        let bytes = unsafe { module_image(ptx.as_ptr().cast()) }.unwrap();
        assert_eq!(bytes, ptx.to_bytes_with_nul());
        // SAFETY: null is refused before any read.
        assert!(unsafe { module_image(std::ptr::null()) }.is_none());
        // SAFETY: a null out pointer or a failed call is never read.
        unsafe {
            assert_eq!(stored_handle(0, std::ptr::null_mut()), 0);
            let mut h = 0x55usize as *mut c_void;
            assert_eq!(stored_handle(1, &mut h), 0);
            assert_eq!(stored_handle(0, &mut h), 0x55);
        }
    }
}
