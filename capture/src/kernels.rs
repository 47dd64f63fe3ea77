//! Hand-written shims whose meaning is not in their parameter types: code-object
//! registration (CUDA and HIP), kernel-handle lookup, and kernel launches, plus the
//! runtime and device metadata written into the manifest.
//!
//! A launch record is self-contained: the kernel's mangled name, the hash of the code
//! object that holds it, grid, block, shared memory, stream, and per parameter its
//! offset, size, bytes and the offsets of words that point into live allocations.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::{c_char, CStr};
use std::os::raw::{c_int, c_uint, c_void};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};

use hrr_archive::api::{fid, semantic, Vendor};
use hrr_archive::codeobject;
use hrr_archive::payload::PayloadWriter;
use hrr_archive::writer::current_tid;
use hrr_archive::ContentHash;
use parking_lot::Mutex;

use crate::alloc::Space;
use crate::real::{cuda_driver_symbol, RealFn};
use crate::state::{self, guarded};

/// CUDA's and HIP's `dim3`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Dim3 {
    pub x: c_uint,
    pub y: c_uint,
    pub z: c_uint,
}

#[derive(Default)]
struct Registry {
    /// Fat-binary handle -> code object hash.
    fatbins: HashMap<u64, ContentHash>,
    /// Host stub -> (device function name, code object hash).
    stubs: HashMap<u64, (String, ContentHash)>,
    /// cudaKernel_t -> host stub.
    kernels: HashMap<u64, u64>,
    /// Function or kernel handle -> parameter (offset, size) list.
    params: HashMap<u64, Vec<(u64, u64)>>,
    /// HIP: (code object, kernel name) -> explicit parameter (offset, size) list, from the
    /// code object's AMDGPU metadata note.
    hip_params: HashMap<(ContentHash, String), Vec<(u64, u64)>>,
    /// Host stub -> its launch records' fixed fields (name, code object), encoded once.
    launch_prefix: HashMap<u64, std::sync::Arc<PayloadWriter>>,
    /// Host shadow of a `__device__`/`__constant__` variable -> (name, code object, size).
    vars: HashMap<u64, (String, ContentHash, u64)>,
    /// Variables whose device address was already recorded.
    symbols_noted: std::collections::HashSet<u64>,
    /// Module handle (cuModuleLoadData / hipModuleLoadData) -> its code object.
    modules: HashMap<u64, ContentHash>,
}

/// Bumped whenever a stub or kernel handle is (re)bound to a name and code object, so
/// each thread's launch cache drops what it resolved before.
static REGISTRY_GENERATION: AtomicU64 = AtomicU64::new(0);

/// What a launch record needs about its kernel besides the arguments, resolved once per
/// kernel per thread: a launch then takes no global lock and copies no parameter list.
#[derive(Clone)]
struct KernelInfo {
    kernel: u64,
    stub: u64,
    /// Parameter (offset, size) list; None when the layout is unavailable.
    params: Option<Arc<[(u64, u64)]>>,
    /// The record's fixed fields (name, code object), encoded once; None when the stub
    /// was never registered.
    prefix: Option<Arc<PayloadWriter>>,
}

impl KernelInfo {
    fn new(kernel: u64, stub: u64, params: Option<Vec<(u64, u64)>>) -> Self {
        let prefix = {
            let mut reg = REGISTRY.lock();
            match reg.launch_prefix.get(&stub) {
                Some(pre) => Some(pre.clone()),
                None => reg.stubs.get(&stub).cloned().map(|(name, co)| {
                    let mut pre = PayloadWriter::new();
                    pre.str(fid::NAME, &name)
                        .str(fid::CODE_OBJECT, &co.to_hex());
                    let pre = Arc::new(pre);
                    reg.launch_prefix.insert(stub, pre.clone());
                    pre
                }),
            }
        };
        KernelInfo {
            kernel,
            stub,
            params: params.map(Arc::from),
            prefix,
        }
    }
}

type LaunchCache = (u64, HashMap<(u16, u64), KernelInfo>);

thread_local! {
    /// (registry generation, (launch API id, first launch argument) -> kernel info).
    static LAUNCH_CACHE: RefCell<LaunchCache> = RefCell::new((0, HashMap::new()));
}

/// The kernel info for launch API `id` called with `first` (a kernel handle or a host
/// stub), from this thread's cache or resolved by `resolve` (kernel, stub, layout).
/// Only complete infos are cached: a stub registered later is then still found.
fn kernel_info_cached(
    id: u16,
    first: u64,
    resolve: impl FnOnce(u64) -> (u64, u64, Option<Vec<(u64, u64)>>),
) -> KernelInfo {
    let generation = REGISTRY_GENERATION.load(Ordering::Acquire);
    let hit = LAUNCH_CACHE
        .try_with(|c| {
            let mut c = c.borrow_mut();
            if c.0 != generation {
                *c = (generation, HashMap::new());
            }
            c.1.get(&(id, first)).cloned()
        })
        .ok()
        .flatten();
    if let Some(info) = hit {
        return info;
    }
    let (kernel, stub, params) = resolve(first);
    let info = KernelInfo::new(kernel, stub, params);
    if info.params.is_some() && info.prefix.is_some() {
        let _ = LAUNCH_CACHE.try_with(|c| {
            let mut c = c.borrow_mut();
            if c.0 == generation {
                c.1.insert((id, first), info.clone());
            }
        });
    }
    info
}

/// A registered variable's name, code object and size, by its host shadow's address.
pub fn var_info(host_var: u64) -> Option<(String, ContentHash, u64)> {
    REGISTRY.lock().vars.get(&host_var).cloned()
}

/// Marks a variable's address as recorded; true the first time.
pub fn first_symbol_use(host_var: u64) -> bool {
    REGISTRY.lock().symbols_noted.insert(host_var)
}

static REGISTRY: LazyLock<Mutex<Registry>> = LazyLock::new(|| Mutex::new(Registry::default()));

pub fn fork_prepare() {
    std::mem::forget(REGISTRY.lock());
}

/// # Safety
/// Must follow `fork_prepare` on the same thread.
pub unsafe fn fork_release() {
    // SAFETY: the caller's contract: fork_prepare holds the lock.
    unsafe { REGISTRY.force_unlock() };
}

/// Reads `len` bytes at `p` (only called on memory the runtime itself reads).
///
/// # Safety
/// `p` must be valid for `len` bytes.
unsafe fn bytes_at<'a>(p: *const u8, len: usize) -> &'a [u8] {
    if p.is_null() || len == 0 {
        return &[];
    }
    // SAFETY: the caller's contract.
    unsafe { std::slice::from_raw_parts(p, len) }
}

fn cstr_at(p: *const c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: registration names are NUL-terminated strings in the program's image.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// The code object bytes behind a registration wrapper, sized from their own headers.
///
/// # Safety
/// `wrapper` must be the pointer the compiler-generated code passes to the register call.
unsafe fn code_object_bytes<'a>(wrapper: *const c_void, vendor: Vendor) -> Option<&'a [u8]> {
    if wrapper.is_null() {
        return None;
    }
    // SAFETY: both wrappers start with {u32 magic, u32 version, const void* data}.
    let (magic, data) = unsafe {
        let w = wrapper as *const u32;
        (*w, *(wrapper as *const u8).add(8).cast::<*const u8>())
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

pub(crate) fn record(
    vendor: Vendor,
    id: u16,
    ret: i32,
    p: &PayloadWriter,
    incomplete: Option<&str>,
    api: &str,
) {
    if let Some(cap) = state::current() {
        let flags = if incomplete.is_some() {
            hrr_archive::record::RECORD_FLAG_INCOMPLETE
        } else {
            0
        };
        if let Some(seq) = cap
            .writer()
            .append(id, flags, current_tid(), ret, p.as_bytes())
        {
            if let Some(why) = incomplete {
                cap.writer().note_capture_failure(seq, api, why);
            }
        }
    }
    let _ = vendor;
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
                        // Argument layouts come from the metadata note; without them a
                        // launch is recorded without its arguments, marked incomplete.
                        if let Ok(ks) = hrr_archive::amdgpu::kernels_of_code_object(bytes) {
                            let mut reg = REGISTRY.lock();
                            for k in ks {
                                reg.hip_params
                                    .insert((h, k.name.clone()), k.explicit_params());
                            }
                        }
                    }
                    REGISTRY.lock().fatbins.insert(handle as u64, h);
                    p.str(fid::CODE_OBJECT, &h.to_hex());
                    p.u64(fid::SIZE, bytes.len() as u64);
                    None
                }
                Err(_) => Some("code object not stored (capture stopped)"),
            },
            None => Some("unrecognised fat-binary wrapper: code object not stored"),
        };
        record(
            vendor,
            semantic::REGISTER_FAT_BINARY,
            0,
            &p,
            incomplete,
            api,
        );
    });
}

fn register_function(
    vendor: Vendor,
    handle: *mut *mut c_void,
    stub: *const c_void,
    name: *const c_char,
    api: &str,
) {
    let Some((_cap, _g)) = state::enter(vendor) else {
        return;
    };
    guarded(api, || {
        let name = cstr_at(name);
        let mut p = PayloadWriter::new();
        p.handle(fid::HANDLE, handle as u64)
            .u64(fid::HOST_STUB, stub as u64)
            .str(fid::NAME, &name);
        let mut reg = REGISTRY.lock();
        let co = reg.fatbins.get(&(handle as u64)).copied();
        if let Some(h) = co {
            p.str(fid::CODE_OBJECT, &h.to_hex());
            reg.launch_prefix.remove(&(stub as u64));
            reg.stubs.insert(stub as u64, (name, h));
            REGISTRY_GENERATION.fetch_add(1, Ordering::Release);
        }
        drop(reg);
        record(vendor, semantic::REGISTER_FUNCTION, 0, &p, None, api);
    });
}

#[allow(clippy::too_many_arguments)]
fn register_var(
    vendor: Vendor,
    handle: *mut *mut c_void,
    host_var: *const c_void,
    name: *const c_char,
    size: usize,
    constant: c_int,
    api: &str,
) {
    let Some((_cap, _g)) = state::enter(vendor) else {
        return;
    };
    guarded(api, || {
        let mut p = PayloadWriter::new();
        p.handle(fid::HANDLE, handle as u64)
            .u64(fid::HOST_STUB, host_var as u64)
            .str(fid::NAME, &cstr_at(name))
            .u64(fid::SIZE, size as u64)
            .u64(fid::SHARED_MEM, constant as u64);
        let var_name = cstr_at(name);
        {
            let mut reg = REGISTRY.lock();
            if let Some(h) = reg.fatbins.get(&(handle as u64)).copied() {
                p.str(fid::CODE_OBJECT, &h.to_hex());
                reg.vars.insert(host_var as u64, (var_name, h, size as u64));
                reg.symbols_noted.remove(&(host_var as u64));
            }
        }
        record(vendor, semantic::REGISTER_VAR, 0, &p, None, api);
    });
}

// ---- CUDA registration ----

/// # Safety
/// Called by nvcc-generated constructors.
#[no_mangle]
pub unsafe extern "C" fn __cudaRegisterFatBinary(fat_cubin: *mut c_void) -> *mut *mut c_void {
    let real = real!("__cudaRegisterFatBinary");
    // SAFETY: the runtime's definition of this symbol: void**(void*).
    let f: unsafe extern "C" fn(*mut c_void) -> *mut *mut c_void =
        unsafe { std::mem::transmute(real) };
    // SAFETY: the program's own argument.
    let handle = unsafe { f(fat_cubin) };
    register_fat_binary(Vendor::Cuda, fat_cubin, handle, "__cudaRegisterFatBinary");
    handle
}

/// A kernel-registration shim (`__cudaRegisterFunction`, `__hipRegisterFunction`): the
/// compiler-generated constructors call it once per kernel with the fat binary's handle,
/// the host stub and the device name. The two C signatures differ only in names and in
/// the signedness of the thread limit, which the ABI passes alike.
macro_rules! register_function_shim {
    ($name:ident, $vendor:expr) => {
        /// # Safety
        /// Called by the compiler-generated constructors, in place of the runtime's.
        #[no_mangle]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "C" fn $name(
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
            let real = real!(@ident $name);
            // SAFETY: the runtime's definition of this symbol, same C signature.
            unsafe {
                let f: unsafe extern "C" fn(
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
                ) = std::mem::transmute(real);
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
                );
            }
            register_function($vendor, handle, host_fun, device_name, stringify!($name));
        }
    };
}

register_function_shim!(__cudaRegisterFunction, Vendor::Cuda);

/// A variable-registration shim (`__cudaRegisterVar`, `__hipRegisterVar`): called once
/// per `__device__`/`__constant__` variable with the fat binary's handle, the variable's
/// host shadow (second argument) and its device name (fourth). The two C signatures have
/// the same types in the same places; only the names of the middle two differ.
macro_rules! register_var_shim {
    ($name:ident, $vendor:expr) => {
        /// # Safety
        /// Called by the compiler-generated constructors, in place of the runtime's.
        #[no_mangle]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "C" fn $name(
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
            let real = real!(@ident $name);
            // SAFETY: the runtime's definition of this symbol, same C signature.
            unsafe {
                let f: unsafe extern "C" fn(
                    *mut *mut c_void,
                    *mut c_void,
                    *mut c_char,
                    *const c_char,
                    c_int,
                    usize,
                    c_int,
                    c_int,
                ) = std::mem::transmute(real);
                f(handle, host_var, passed_through, device_name, ext, size, constant, global);
            }
            register_var($vendor, handle, host_var, device_name, size, constant, stringify!($name));
        }
    };
}

register_var_shim!(__cudaRegisterVar, Vendor::Cuda);

/// # Safety
/// Called by nvcc-generated code (CUDA 12.4+ launch stubs), once per stub.
#[no_mangle]
pub unsafe extern "C" fn __cudaGetKernel(kernel: *mut *mut c_void, stub: *const c_void) -> c_int {
    let real = real!("__cudaGetKernel");
    // SAFETY: the runtime's definition: cudaError_t(cudaKernel_t*, const void*).
    let ret = unsafe {
        let f: unsafe extern "C" fn(*mut *mut c_void, *const c_void) -> c_int =
            std::mem::transmute(real);
        f(kernel, stub)
    };
    if ret == 0 && !kernel.is_null() && state::current().is_some() {
        // SAFETY: on success the runtime stored the handle.
        let k = unsafe { *kernel } as u64;
        let _ = guarded("__cudaGetKernel", || {
            let old = REGISTRY.lock().kernels.insert(k, stub as u64);
            if old.is_some_and(|o| o != stub as u64) {
                REGISTRY_GENERATION.fetch_add(1, Ordering::Release);
            }
        });
    }
    ret
}

/// Parameter layout of a CUDA kernel from the driver: (offset, size) per parameter.
fn cuda_param_info(handle: u64, by_kernel: bool) -> Option<Vec<(u64, u64)>> {
    if let Some(v) = REGISTRY.lock().params.get(&handle) {
        return Some(v.clone());
    }
    let sym = if by_kernel {
        c"cuKernelGetParamInfo"
    } else {
        c"cuFuncGetParamInfo"
    };
    let f = cuda_driver_symbol(sym);
    if f.is_null() {
        return None;
    }
    // SAFETY: CUresult (CUkernel|CUfunction, size_t, size_t*, size_t*), CUDA 12.4+.
    let f: unsafe extern "C" fn(*mut c_void, usize, *mut usize, *mut usize) -> c_int =
        unsafe { std::mem::transmute(f) };
    let mut out = Vec::new();
    for i in 0..4096usize {
        let (mut off, mut size) = (0usize, 0usize);
        // SAFETY: valid out pointers; the handle came from the runtime.
        if unsafe { f(handle as usize as *mut c_void, i, &mut off, &mut size) } != 0 {
            break;
        }
        out.push((off as u64, size as u64));
    }
    REGISTRY.lock().params.insert(handle, out.clone());
    Some(out)
}

/// Builds and records a launch event. `params` is the kernel's parameter layout.
#[allow(clippy::too_many_arguments)]
fn record_launch(
    vendor: Vendor,
    id: u16,
    api: &str,
    info: &KernelInfo,
    grid: Dim3,
    block: Dim3,
    args: *mut *mut c_void,
    shmem: usize,
    stream: u64,
    ret: c_int,
) {
    let Some(cap) = state::current() else { return };
    // This thread's payload buffer from its last launch, reused: no allocation per launch.
    let mut p = LAUNCH_PAYLOAD
        .try_with(|b| std::mem::take(&mut *b.borrow_mut()))
        .unwrap_or_default();
    p.clear();
    p.handle(fid::KERNEL, info.kernel)
        .u64(fid::HOST_STUB, info.stub);
    let mut incomplete: Option<String> = None;
    match &info.prefix {
        Some(pre) => {
            p.extend_encoded(pre);
        }
        None => incomplete = Some(format!("kernel stub {:#x} was never registered", info.stub)),
    }
    p.u64_array(fid::GRID, &[grid.x as u64, grid.y as u64, grid.z as u64]);
    p.u64_array(
        fid::BLOCK,
        &[block.x as u64, block.y as u64, block.z as u64],
    );
    p.u64(fid::SHARED_MEM, shmem as u64)
        .handle(fid::STREAM, stream);
    match info.params.as_deref() {
        Some(list) if !args.is_null() || list.is_empty() => {
            // Pinned host allocations the arguments point into: snapshotted below.
            let mut pinned: Vec<(u64, u64)> = Vec::new();
            for (i, (off, size)) in list.iter().enumerate() {
                // SAFETY: args[i] points at parameter i's value of `size` bytes (launch ABI).
                let bytes = unsafe { bytes_at(*args.add(i) as *const u8, *size as usize) };
                p.nested_with(fid::ARG, |a| {
                    a.u64(fid::ARG_OFFSET, *off).u64(fid::ARG_SIZE, *size);
                    a.bytes(fid::ARG_BYTES, bytes, false);
                    // Words that point into live allocations (also inside by-value structs),
                    // kept on the stack for the common few.
                    let mut inline = [0u64; 16];
                    let mut found = 0usize;
                    let mut spilled: Vec<u64> = Vec::new();
                    for (w, word) in bytes.chunks_exact(8).enumerate() {
                        let v = u64::from_le_bytes(word.try_into().unwrap_or([0; 8]));
                        if let Some((start, len, space)) = cap.allocs.lookup(v) {
                            let at = (w * 8) as u64;
                            if found < inline.len() {
                                inline[found] = at;
                            } else {
                                if spilled.is_empty() {
                                    spilled.extend_from_slice(&inline);
                                }
                                spilled.push(at);
                            }
                            found += 1;
                            if space == Space::PinnedHost
                                && !pinned.iter().any(|(s, _)| *s == start)
                            {
                                pinned.push((start, len));
                            }
                        }
                    }
                    if found > inline.len() {
                        a.u64_array(4, &spilled);
                    } else if found > 0 {
                        a.u64_array(4, &inline[..found]);
                    }
                });
            }
            if let Err(why) = snapshot_pinned(cap, &mut p, &pinned) {
                incomplete = Some(why);
            }
        }
        _ => {
            incomplete = Some("kernel parameter layout unavailable: arguments not recorded".into())
        }
    }
    record(vendor, id, ret, &p, incomplete.as_deref(), api);
    let _ = LAUNCH_PAYLOAD.try_with(|b| *b.borrow_mut() = p);
}

thread_local! {
    /// The payload buffer of this thread's launch records, kept between launches.
    static LAUNCH_PAYLOAD: RefCell<PayloadWriter> = RefCell::new(PayloadWriter::with_capacity(512));
}

/// Most bytes of pinned host memory snapshotted for one launch (`HRR_CAPTURE_PINNED_SNAPSHOT_MAX`
/// changes it); a launch over the cap is recorded incomplete, loudly, never truncated.
fn pinned_snapshot_cap() -> u64 {
    static CAP: LazyLock<u64> =
        LazyLock::new(|| match std::env::var("HRR_CAPTURE_PINNED_SNAPSHOT_MAX") {
            Ok(v) if !v.trim().is_empty() => match hrr_archive::diskspace::parse_size(&v) {
                Ok(n) => n,
                Err(e) => {
                    eprintln!("hrr-capture: HRR_CAPTURE_PINNED_SNAPSHOT_MAX={v:?}: {e}; using 1G");
                    1 << 30
                }
            },
            _ => 1 << 30,
        });
    *CAP
}

/// Records the content of each pinned host allocation a launch's arguments point into, as
/// it is when the kernel is launched: a kernel reads mapped pinned memory directly, so no
/// copy call carries those bytes (HRR seed 001). Replay writes them back before the launch.
fn snapshot_pinned(
    cap: &state::Capture,
    p: &mut PayloadWriter,
    pinned: &[(u64, u64)],
) -> Result<(), String> {
    let total: u64 = pinned.iter().map(|(_, n)| n).sum();
    if total > pinned_snapshot_cap() {
        return Err(format!(
            "pinned host memory read by the kernel ({total} bytes) exceeds the snapshot cap ({} bytes, HRR_CAPTURE_PINNED_SNAPSHOT_MAX)",
            pinned_snapshot_cap()
        ));
    }
    for &(start, len) in pinned {
        // SAFETY: a live pinned host allocation of `len` bytes from the allocation table.
        let bytes = unsafe { bytes_at(start as usize as *const u8, len as usize) };
        let r = cap
            .writer()
            .put_blob(bytes)
            .map_err(|e| format!("pinned snapshot not recorded: {e}"))?;
        let mut s = PayloadWriter::new();
        s.u64(fid::SNAPSHOT_START, start)
            .u64(fid::SNAPSHOT_SIZE, len)
            .blob(fid::SNAPSHOT_BYTES, r);
        p.nested(fid::PINNED_SNAPSHOT, &s);
    }
    Ok(())
}

/// C signature shared by `__cudaLaunchKernel`, `cudaLaunchKernel` and `hipLaunchKernel`
/// (the first parameter is a kernel handle or a host stub).
type LaunchFn =
    unsafe extern "C" fn(*const c_void, Dim3, Dim3, *mut *mut c_void, usize, *mut c_void) -> c_int;

/// The path every launch shim shares: call the real function exactly once, then record
/// the launch. `resolve(first)` gives (kernel handle, host stub, parameter layout).
///
/// # Safety
/// `real` must be the runtime's definition of a [`LaunchFn`] symbol; the other
/// arguments are the program's own.
#[allow(clippy::too_many_arguments)]
unsafe fn launch_shim(
    real: *mut c_void,
    vendor: Vendor,
    id: u16,
    api: &str,
    first: *const c_void,
    grid: Dim3,
    block: Dim3,
    args: *mut *mut c_void,
    shmem: usize,
    stream: *mut c_void,
    resolve: impl FnOnce(u64) -> (u64, u64, Option<Vec<(u64, u64)>>),
) -> c_int {
    // SAFETY: the caller's contract: `real` has the LaunchFn signature.
    let f: LaunchFn = unsafe { std::mem::transmute(real) };
    let Some((_cap, _g)) = state::enter(vendor) else {
        // SAFETY: the program's own arguments.
        return unsafe { f(first, grid, block, args, shmem, stream) };
    };
    // SAFETY: the program's own arguments.
    let ret = unsafe { f(first, grid, block, args, shmem, stream) };
    guarded(api, || {
        let info = kernel_info_cached(id, first as u64, resolve);
        record_launch(
            vendor,
            id,
            api,
            &info,
            grid,
            block,
            args,
            shmem,
            stream as u64,
            ret,
        );
    });
    ret
}

/// # Safety
/// Called by nvcc-generated launch stubs (CUDA 12.4+), in place of the runtime's.
#[no_mangle]
pub unsafe extern "C" fn __cudaLaunchKernel(
    kernel: *mut c_void,
    grid: Dim3,
    block: Dim3,
    args: *mut *mut c_void,
    shmem: usize,
    stream: *mut c_void,
) -> c_int {
    let real = real!("__cudaLaunchKernel");
    // SAFETY: __cudaLaunchKernel has the LaunchFn signature; the arguments are the program's.
    unsafe {
        launch_shim(
            real,
            Vendor::Cuda,
            semantic::LAUNCH_KERNEL_BY_HANDLE,
            "__cudaLaunchKernel",
            kernel,
            grid,
            block,
            args,
            shmem,
            stream,
            |k| {
                let stub = REGISTRY.lock().kernels.get(&k).copied().unwrap_or(0);
                (k, stub, cuda_param_info(k, true))
            },
        )
    }
}

/// # Safety
/// Called by the program in place of the runtime's cudaLaunchKernel.
#[no_mangle]
pub unsafe extern "C" fn cudaLaunchKernel(
    func: *const c_void,
    grid: Dim3,
    block: Dim3,
    args: *mut *mut c_void,
    shmem: usize,
    stream: *mut c_void,
) -> c_int {
    let real = real!("cudaLaunchKernel");
    let resolve = |stub: u64| {
        let (function, params) = cuda_function_of_stub(stub);
        (function, stub, params)
    };
    // SAFETY: cudaLaunchKernel has the LaunchFn signature; the arguments are the program's.
    unsafe {
        launch_shim(
            real,
            Vendor::Cuda,
            semantic::LAUNCH_KERNEL,
            "cudaLaunchKernel",
            func,
            grid,
            block,
            args,
            shmem,
            stream,
            resolve,
        )
    }
}

/// The head of CUDA's `cudaLaunchConfig_t` (CUDA 11.8+).
#[repr(C)]
pub struct LaunchConfig {
    grid: Dim3,
    block: Dim3,
    shmem: usize,
    stream: *mut c_void,
    attrs: *mut c_void,
    num_attrs: c_uint,
}

/// The driver function behind a host stub (for its parameter layout).
fn cuda_function_of_stub(stub: u64) -> (u64, Option<Vec<(u64, u64)>>) {
    let get = real!("cudaGetFuncBySymbol");
    if get.is_null() {
        return (0, None);
    }
    let mut function: *mut c_void = std::ptr::null_mut();
    // SAFETY: cudaError_t cudaGetFuncBySymbol(cudaFunction_t*, const void*).
    let r = unsafe {
        let g: unsafe extern "C" fn(*mut *mut c_void, *const c_void) -> c_int =
            std::mem::transmute(get);
        g(&mut function, stub as usize as *const c_void)
    };
    if r == 0 {
        (function as u64, cuda_param_info(function as u64, false))
    } else {
        (0, None)
    }
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
    let real = real!("cudaLaunchKernelExC");
    // SAFETY: the runtime's definition: cudaError_t(const cudaLaunchConfig_t*, const void*, void**).
    let f: unsafe extern "C" fn(*const LaunchConfig, *const c_void, *mut *mut c_void) -> c_int =
        unsafe { std::mem::transmute(real) };
    let Some((_cap, _g)) = state::enter(Vendor::Cuda) else {
        // SAFETY: the program's own arguments.
        return unsafe { f(config, func, args) };
    };
    // SAFETY: the program's own arguments.
    let ret = unsafe { f(config, func, args) };
    if config.is_null() {
        return ret;
    }
    // SAFETY: the runtime has just read the same configuration.
    let cfg = unsafe { &*config };
    guarded("cudaLaunchKernelExC", || {
        let info = kernel_info_cached(semantic::LAUNCH_KERNEL, func as u64, |stub| {
            let (function, params) = cuda_function_of_stub(stub);
            (function, stub, params)
        });
        record_launch(
            Vendor::Cuda,
            semantic::LAUNCH_KERNEL,
            "cudaLaunchKernelExC",
            &info,
            cfg.grid,
            cfg.block,
            args,
            cfg.shmem,
            cfg.stream as u64,
            ret,
        );
        if cfg.num_attrs > 0 {
            if let Some(c) = state::current() {
                c.writer().note_unreplayable(
                    "cudaLaunchKernelExC attributes",
                    "launch attributes (clusters, priorities, programmatic serialization) are not recorded: the kernel is replayed with a plain launch",
                );
            }
        }
    });
    ret
}

// ---- Modules loaded by the program (driver API / hipModule*) ----

/// Largest PTX text accepted from a module load.
const MAX_PTX_BYTES: usize = 256 << 20;

/// The bytes of an image passed to a module-load call.
///
/// # Safety
/// `image` is what the program passed to the load call, which the driver reads in full.
unsafe fn module_image<'a>(image: *const c_void) -> Option<&'a [u8]> {
    if image.is_null() {
        return None;
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

fn record_module_load(
    vendor: Vendor,
    module_out: *mut *mut c_void,
    image: *const c_void,
    ret: c_int,
    api: &str,
) {
    let Some((cap, _g)) = state::enter(vendor) else {
        return;
    };
    guarded(api, || {
        let mut p = PayloadWriter::new();
        let module = if ret == 0 && !module_out.is_null() {
            // SAFETY: on success the call stored the module handle.
            unsafe { *module_out as u64 }
        } else {
            0
        };
        p.handle(fid::HANDLE, module);
        // SAFETY: the program's image, which the driver has just read.
        let incomplete = match unsafe { module_image(image) } {
            Some(bytes) => match cap.writer().put_code_object(bytes) {
                Ok(h) => {
                    p.str(fid::CODE_OBJECT, &h.to_hex())
                        .u64(fid::SIZE, bytes.len() as u64);
                    let mut reg = REGISTRY.lock();
                    reg.modules.insert(module, h);
                    if vendor == Vendor::Hip {
                        if let Ok(ks) = hrr_archive::amdgpu::kernels_of_code_object(bytes) {
                            for k in ks {
                                reg.hip_params
                                    .insert((h, k.name.clone()), k.explicit_params());
                            }
                        }
                    }
                    None
                }
                Err(_) => Some("code object not stored (capture stopped)"),
            },
            None => Some(
                "unrecognised module image (not a fat binary, bundle, ELF or PTX text): not stored",
            ),
        };
        record(vendor, semantic::MODULE_LOAD, ret, &p, incomplete, api);
    });
}

fn record_get_function(
    vendor: Vendor,
    func_out: *mut *mut c_void,
    module: *mut c_void,
    name: *const c_char,
    ret: c_int,
    api: &str,
) {
    let Some((_cap, _g)) = state::enter(vendor) else {
        return;
    };
    guarded(api, || {
        let name = cstr_at(name);
        let func = if ret == 0 && !func_out.is_null() {
            // SAFETY: on success the call stored the function handle.
            unsafe { *func_out as u64 }
        } else {
            0
        };
        let mut p = PayloadWriter::new();
        p.handle(fid::HANDLE, func)
            .handle(fid::KERNEL, module as u64)
            .str(fid::NAME, &name);
        let mut reg = REGISTRY.lock();
        let co = reg.modules.get(&(module as u64)).copied();
        if let Some(h) = co {
            p.str(fid::CODE_OBJECT, &h.to_hex());
            if func != 0 {
                // A module function launches like a registered stub: same name lookup.
                reg.launch_prefix.remove(&func);
                reg.stubs.insert(func, (name, h));
                REGISTRY_GENERATION.fetch_add(1, Ordering::Release);
            }
        }
        drop(reg);
        let incomplete = co
            .is_none()
            .then_some("the function's module was loaded before capture saw it");
        record(
            vendor,
            semantic::MODULE_GET_FUNCTION,
            ret,
            &p,
            incomplete,
            api,
        );
    });
}

/// Records a module launch; `params`/`extra` as the driver takes them.
#[allow(clippy::too_many_arguments)]
fn record_module_launch(
    vendor: Vendor,
    api: &str,
    f: u64,
    grid: Dim3,
    block: Dim3,
    shmem: usize,
    stream: u64,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
    ret: c_int,
) {
    let Some((_cap, _g)) = state::enter(vendor) else {
        return;
    };
    guarded(api, || {
        let layout = if params.is_null() && !extra.is_null() {
            None // arguments packed in `extra`: not recorded, the launch is marked incomplete
        } else {
            match vendor {
                Vendor::Cuda => cuda_param_info(f, false),
                Vendor::Hip => {
                    let reg = REGISTRY.lock();
                    reg.stubs
                        .get(&f)
                        .and_then(|(name, h)| reg.hip_params.get(&(*h, name.clone())))
                        .cloned()
                }
            }
        };
        record_launch(
            vendor,
            semantic::MODULE_LAUNCH_KERNEL,
            api,
            &KernelInfo::new(f, f, layout),
            grid,
            block,
            params,
            shmem,
            stream,
            ret,
        );
    });
}

/// A module-load shim: `(module*, const void* image)`.
macro_rules! module_load_shim {
    ($name:ident, $vendor:expr) => {
        /// # Safety
        /// Called by the program in place of the driver's or runtime's function.
        #[no_mangle]
        pub unsafe extern "C" fn $name(module: *mut *mut c_void, image: *const c_void) -> c_int {
            let real = real!(@ident $name);
            if real.is_null() {
                return 999;
            }
            // SAFETY: cuModuleLoadData / hipModuleLoadData(module*, const void*).
            let ret = unsafe {
                let f: unsafe extern "C" fn(*mut *mut c_void, *const c_void) -> c_int = std::mem::transmute(real);
                f(module, image)
            };
            record_module_load($vendor, module, image, ret, stringify!($name));
            ret
        }
    };
}

/// A get-function shim: `(function*, module, const char* name)`.
macro_rules! get_function_shim {
    ($name:ident, $vendor:expr) => {
        /// # Safety
        /// Called by the program in place of the driver's or runtime's function.
        #[no_mangle]
        pub unsafe extern "C" fn $name(func: *mut *mut c_void, module: *mut c_void, name: *const c_char) -> c_int {
            let real = real!(@ident $name);
            if real.is_null() {
                return 999;
            }
            // SAFETY: cuModuleGetFunction / hipModuleGetFunction(function*, module, const char*).
            let ret = unsafe {
                let f: unsafe extern "C" fn(*mut *mut c_void, *mut c_void, *const c_char) -> c_int = std::mem::transmute(real);
                f(func, module, name)
            };
            record_get_function($vendor, func, module, name, ret, stringify!($name));
            ret
        }
    };
}

/// A module-launch shim: `(function, grid xyz, block xyz, shmem, stream, params, extra)`.
macro_rules! module_launch_shim {
    ($name:ident, $vendor:expr) => {
        /// # Safety
        /// Called by the program in place of the driver's or runtime's function.
        #[no_mangle]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "C" fn $name(f: *mut c_void, gx: c_uint, gy: c_uint, gz: c_uint, bx: c_uint, by: c_uint, bz: c_uint, shmem: c_uint, stream: *mut c_void, params: *mut *mut c_void, extra: *mut *mut c_void) -> c_int {
            let real = real!(@ident $name);
            if real.is_null() {
                return 999;
            }
            // SAFETY: cuLaunchKernel / hipModuleLaunchKernel(function, 6 x unsigned, unsigned,
            // stream, void**, void**).
            let ret = unsafe {
                let g: unsafe extern "C" fn(*mut c_void, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, *mut c_void, *mut *mut c_void, *mut *mut c_void) -> c_int = std::mem::transmute(real);
                g(f, gx, gy, gz, bx, by, bz, shmem, stream, params, extra)
            };
            record_module_launch($vendor, stringify!($name), f as u64, Dim3 { x: gx, y: gy, z: gz }, Dim3 { x: bx, y: by, z: bz }, shmem as usize, stream as u64, params, extra, ret);
            ret
        }
    };
}

module_load_shim!(cuModuleLoadData, Vendor::Cuda);
module_load_shim!(hipModuleLoadData, Vendor::Hip);
get_function_shim!(cuModuleGetFunction, Vendor::Cuda);
get_function_shim!(hipModuleGetFunction, Vendor::Hip);
module_launch_shim!(cuLaunchKernel, Vendor::Cuda);
module_launch_shim!(hipModuleLaunchKernel, Vendor::Hip);

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
    let real = real!("cuModuleLoadDataEx");
    if real.is_null() {
        return 999;
    }
    // SAFETY: CUresult cuModuleLoadDataEx(CUmodule*, const void*, unsigned, CUjit_option*, void**).
    let ret = unsafe {
        let f: unsafe extern "C" fn(
            *mut *mut c_void,
            *const c_void,
            c_uint,
            *mut c_void,
            *mut *mut c_void,
        ) -> c_int = std::mem::transmute(real);
        f(module, image, n, options, values)
    };
    record_module_load(Vendor::Cuda, module, image, ret, "cuModuleLoadDataEx");
    ret
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
    let real = real!("hipExtModuleLaunchKernel");
    if real.is_null() {
        return 999;
    }
    // SAFETY: hipError_t hipExtModuleLaunchKernel(hipFunction_t, 6 x uint32_t, size_t,
    // hipStream_t, void**, void**, hipEvent_t, hipEvent_t, uint32_t).
    let ret = unsafe {
        let g: unsafe extern "C" fn(
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
        ) -> c_int = std::mem::transmute(real);
        g(
            f, gx, gy, gz, lx, ly, lz, shmem, stream, params, extra, start, stop, flags,
        )
    };
    let div = |g: u32, l: u32| if l == 0 { 0 } else { g.div_ceil(l) };
    let grid = Dim3 {
        x: div(gx, lx),
        y: div(gy, ly),
        z: div(gz, lz),
    };
    record_module_launch(
        Vendor::Hip,
        "hipExtModuleLaunchKernel",
        f as u64,
        grid,
        Dim3 {
            x: lx,
            y: ly,
            z: lz,
        },
        shmem,
        stream as u64,
        params,
        extra,
        ret,
    );
    ret
}

// ---- HIP registration and launch ----

/// # Safety
/// Called by hipcc-generated constructors.
#[no_mangle]
pub unsafe extern "C" fn __hipRegisterFatBinary(data: *const c_void) -> *mut *mut c_void {
    let real = real!("__hipRegisterFatBinary");
    // SAFETY: the runtime's definition: void**(const void*).
    let f: unsafe extern "C" fn(*const c_void) -> *mut *mut c_void =
        unsafe { std::mem::transmute(real) };
    // SAFETY: the program's own argument.
    let handle = unsafe { f(data) };
    register_fat_binary(Vendor::Hip, data, handle, "__hipRegisterFatBinary");
    handle
}

register_function_shim!(__hipRegisterFunction, Vendor::Hip);

register_var_shim!(__hipRegisterVar, Vendor::Hip);

/// # Safety
/// Called by hipcc-generated launch stubs in place of the runtime's hipLaunchKernel.
#[no_mangle]
pub unsafe extern "C" fn hipLaunchKernel(
    func: *const c_void,
    grid: Dim3,
    block: Dim3,
    args: *mut *mut c_void,
    shmem: usize,
    stream: *mut c_void,
) -> c_int {
    let real = real!("hipLaunchKernel");
    // SAFETY: hipLaunchKernel has the LaunchFn signature; the arguments are the program's.
    unsafe {
        launch_shim(
            real,
            Vendor::Hip,
            semantic::LAUNCH_KERNEL,
            "hipLaunchKernel",
            func,
            grid,
            block,
            args,
            shmem,
            stream,
            // Parameter layouts for HIP come from the code object's AMDGPU metadata note,
            // parsed at registration.
            |stub| {
                let reg = REGISTRY.lock();
                let params = reg
                    .stubs
                    .get(&stub)
                    .and_then(|(name, h)| reg.hip_params.get(&(*h, name.clone())))
                    .cloned();
                (0, stub, params)
            },
        )
    }
}

static RUNTIME_NOTED: AtomicBool = AtomicBool::new(false);

/// Writes runtime and device metadata once a context exists (after the first malloc),
/// using the real functions so nothing is recorded and no context is created early.
pub fn note_runtime_once(vendor: Vendor) {
    if RUNTIME_NOTED.swap(true, Ordering::SeqCst) {
        return;
    }
    let Some(cap) = state::current() else { return };
    let int_out = |p: *mut c_void| -> Option<i32> {
        if p.is_null() {
            return None;
        }
        let mut v: c_int = 0;
        // SAFETY: cudaRuntimeGetVersion / cudaDriverGetVersion / cudaGetDevice style: int(int*).
        let f: unsafe extern "C" fn(*mut c_int) -> c_int = unsafe { std::mem::transmute(p) };
        (unsafe { f(&mut v) } == 0).then_some(v)
    };
    let (rt, drv, dev) = match vendor {
        Vendor::Cuda => (
            real!("cudaRuntimeGetVersion"),
            real!("cudaDriverGetVersion"),
            real!("cudaGetDevice"),
        ),
        Vendor::Hip => (
            real!("hipRuntimeGetVersion"),
            real!("hipDriverGetVersion"),
            real!("hipGetDevice"),
        ),
    };
    let runtime_version = int_out(rt).map(|v| v.to_string()).unwrap_or_default();
    let driver_version = int_out(drv).map(|v| v.to_string()).unwrap_or_default();
    let device = int_out(dev).unwrap_or(0);
    let attr = match vendor {
        Vendor::Cuda => real!("cudaDeviceGetAttribute"),
        Vendor::Hip => real!("hipDeviceGetAttribute"),
    };
    let get_attr = |a: c_int| -> Option<i32> {
        if attr.is_null() {
            return None;
        }
        let mut v: c_int = 0;
        // SAFETY: cudaDeviceGetAttribute(int*, enum, int device).
        let f: unsafe extern "C" fn(*mut c_int, c_int, c_int) -> c_int =
            unsafe { std::mem::transmute(attr) };
        (unsafe { f(&mut v, a, device) } == 0).then_some(v)
    };
    let arch = match vendor {
        // cudaDevAttrComputeCapabilityMajor = 75, Minor = 76.
        Vendor::Cuda => match (get_attr(75), get_attr(76)) {
            (Some(ma), Some(mi)) => format!("sm_{ma}{mi}"),
            _ => String::new(),
        },
        Vendor::Hip => String::new(),
    };
    let name = {
        let mut buf = [0 as c_char; 256];
        let f = match vendor {
            Vendor::Cuda => cuda_driver_symbol(c"cuDeviceGetName"),
            Vendor::Hip => real!("hipDeviceGetName"),
        };
        if f.is_null() {
            String::new()
        } else {
            // SAFETY: cuDeviceGetName / hipDeviceGetName(char*, int len, int device).
            let f: unsafe extern "C" fn(*mut c_char, c_int, c_int) -> c_int =
                unsafe { std::mem::transmute(f) };
            if unsafe { f(buf.as_mut_ptr(), 255, device) } == 0 {
                cstr_at(buf.as_ptr())
            } else {
                String::new()
            }
        }
    };
    cap.writer().update_runtime(|r| {
        r.runtime_version = runtime_version;
        r.driver_version = driver_version;
        r.devices = vec![hrr_archive::manifest::DeviceInfo {
            index: device as u32,
            name,
            arch,
            total_memory: 0,
        }];
    });
}
