//! Driver entry points, however a caller finds them (HRR issue 21). LD_PRELOAD reaches
//! only calls bound by name at load time; nvcc's default static runtime, cuBLAS, cuDNN
//! and PyTorch's libraries bind none: they `dlopen("libcuda.so.1")`, `dlsym` its
//! `cuGetProcAddress_v2`, and take every driver function from that (on the H200: 346
//! names, 440 lookups for a vectorAdd; 7 `cuGetExportTable` tables; no `dlvsym`, no
//! `dlmopen`: bench/gpu/lookups/).
//!
//! So capture exports `dlsym` and `dlvsym` themselves, as trampolines that keep the
//! caller's return address (glibc answers `RTLD_NEXT` relative to the caller: a plain
//! Rust function forwarding the call would move every `RTLD_NEXT` lookup of the program
//! to capture's place in the search order). The trampoline asks [`decide`]; on null it
//! jumps to libc's own function (found in libc's symbol table: `dl_real`) with the stack
//! and registers as the caller left them, so the C library sees the original caller.
//!
//! What is handed out in place of the driver's function (`hand_out`):
//! - a lookup whose result lies in the driver (`libcuda.so*`) and names a function
//!   capture exports: capture's function, so its calls are recorded (a modelled row) or
//!   counted (a pass-through), `cuGetProcAddress(_v2)` included: capture's own, which does
//!   the same for every function it hands out, at whatever version and per-thread form
//!   the driver chose (the name of the exported symbol at the driver's pointer);
//! - `cuGetExportTable`: the driver's own. Its tables are the runtime's private
//!   machinery, reached only through the runtime's public calls, which are recorded;
//! - a driver function capture does not export: the driver's pointer, and one
//!   `UNMODELLED_CALL` naming it, so replay refuses by name what capture cannot see.
//!
//! Who is left alone: capture itself, the driver itself, `RTLD_NEXT` lookups (interposers
//! chaining to the next definition), names not starting `cu`, and the shared CUDA runtime
//! (`libcudart.so*`): capture records the program's calls at that runtime's own entry
//! points, so the driver calls it makes inside them are its implementation, not the
//! program's (each GPU operation recorded once: docs/api.md, "Any CUDA program").
//!
//! x86_64 only (the trampolines); elsewhere libc's `dlsym` is the program's.

use std::cell::Cell;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};

use crate::dl_real;
use crate::namespaces;
use crate::proc_address;
use crate::real::NO_REAL_FUNCTION;

thread_local! {
    /// Inside [`decide`] on this thread: a lookup made from there is forwarded.
    static IN_LOOKUP: Cell<bool> = const { Cell::new(false) };
}

/// What the loader says of an address (one `dladdr`).
struct Place {
    /// The holding object's base address.
    base: usize,
    /// Its file name (the last component).
    file: String,
    /// Its path as the loader opened it.
    path: String,
    /// The exported symbol that starts exactly at the address, if one does.
    symbol: Option<String>,
}

fn place_of(addr: usize) -> Option<Place> {
    // SAFETY: dladdr only reads the loader's tables; `info` is a valid out struct.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    if unsafe { libc::dladdr(addr as *const c_void, &mut info) } == 0 {
        return None;
    }
    // SAFETY: the loader's NUL-terminated strings, valid while the object is loaded.
    let text =
        |p: *const c_char| (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy());
    let path = text(info.dli_fname)
        .map(|p| p.into_owned())
        .unwrap_or_default();
    let file = path.rsplit('/').next().unwrap_or("").to_string();
    let symbol = text(info.dli_sname)
        .filter(|_| info.dli_saddr as usize == addr)
        .map(|s| s.into_owned());
    Some(Place {
        base: info.dli_fbase as usize,
        file,
        path,
        symbol,
    })
}

/// libhrr_capture.so's base address (asked once).
fn own_base() -> usize {
    static BASE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *BASE.get_or_init(|| place_of(own_base as *const () as usize).map_or(0, |p| p.base))
}

/// Whether a file name is the CUDA driver's.
fn is_driver(file: &str) -> bool {
    file.starts_with("libcuda.so")
}

/// Whether a file name is the shared CUDA runtime, whose entry points capture records.
fn is_shared_runtime(file: &str) -> bool {
    file.starts_with("libcudart.so")
}

/// Who asked, as [`decide`] and `cuGetProcAddress` judge it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Asker {
    /// Capture itself, the driver itself, or the shared runtime: left alone.
    Exempt,
    /// Anyone else: handed capture's functions.
    Program,
}

/// Classifies the object at `caller` (a return address).
pub fn asker_at(caller: usize) -> Asker {
    match place_of(caller) {
        Some(p) if p.base == own_base() => Asker::Exempt,
        Some(p) if is_driver(&p.file) || is_shared_runtime(&p.file) => Asker::Exempt,
        _ => Asker::Program,
    }
}

/// What to hand out for the driver pointer `p` a lookup returned (`via` names the
/// lookup), or None to keep it.
pub fn hand_out(p: *mut c_void, via: &str) -> Option<*mut c_void> {
    if p.is_null() {
        return None;
    }
    let place = place_of(p as usize)?;
    if !is_driver(&place.file) {
        return None;
    }
    let name = place.symbol?;
    if name == "cuGetExportTable" {
        return None;
    }
    // A driver loaded into a namespace of its own (dlmopen): capture's function would
    // forward to the base namespace's driver, another instance (`namespaces`).
    if !namespaces::in_base_namespace(&place.path, place.base) {
        proc_address::note_unmodelled_from(&name, via, "libcuda.so.1 in a dlmopen namespace");
        return None;
    }
    match proc_address::own_function(&name) {
        Some(own) => Some(own),
        None => {
            proc_address::note_unmodelled_from(&name, via, "libcuda.so.1");
            None
        }
    }
}

/// The hook behind both trampolines: a replacement for what libc would answer, or null
/// to let libc answer (`version` is `dlvsym`'s).
fn decide(
    handle: *mut c_void,
    name: *const c_char,
    version: *const c_char,
    caller: usize,
) -> *mut c_void {
    let none = std::ptr::null_mut();
    if name.is_null() || handle == libc::RTLD_NEXT {
        return none;
    }
    // SAFETY: the caller's NUL-terminated symbol name.
    if !unsafe { CStr::from_ptr(name) }
        .to_bytes()
        .starts_with(b"cu")
    {
        return none;
    }
    if IN_LOOKUP.try_with(|c| c.replace(true)).unwrap_or(true) {
        return none;
    }
    let out = std::panic::catch_unwind(|| {
        if asker_at(caller) == Asker::Exempt {
            return none;
        }
        // SAFETY: libc's own functions with the caller's arguments.
        let p = unsafe {
            if version.is_null() {
                dl_real::dlsym().map_or(none, |f| f(handle, name))
            } else {
                dl_real::dlvsym().map_or(none, |f| f(handle, name, version))
            }
        };
        hand_out(p, if version.is_null() { "dlsym" } else { "dlvsym" }).unwrap_or(none)
    })
    .unwrap_or(none);
    let _ = IN_LOOKUP.try_with(|c| c.set(false));
    out
}

/// Makes sure the trampolines have libc's functions to jump to; without them no lookup
/// could be answered, so the process stops with the reason.
fn ready() {
    if !dl_real::resolve() {
        crate::say::say("fatal: libc's dlsym and dlvsym were not found in libc.so.6's symbol table; capture cannot forward the program's lookups");
        std::process::abort();
    }
}

extern "C" fn hook_dlsym(handle: *mut c_void, name: *const c_char, caller: usize) -> *mut c_void {
    ready();
    decide(handle, name, std::ptr::null(), caller)
}

extern "C" fn hook_dlvsym(
    handle: *mut c_void,
    name: *const c_char,
    version: *const c_char,
    caller: usize,
) -> *mut c_void {
    ready();
    decide(handle, name, version, caller)
}

/// `dlsym(3)`: capture's function in place of a driver function the program looks up;
/// otherwise libc's answer, asked with the caller's own return address.
///
/// # Safety
/// Called by the program in place of libc's `dlsym`.
#[cfg(target_arch = "x86_64")]
#[unsafe(naked)]
#[no_mangle]
pub unsafe extern "C" fn dlsym(handle: *mut c_void, name: *const c_char) -> *mut c_void {
    core::arch::naked_asm!(
        "endbr64",
        "push rdi",
        "push rsi",
        "sub rsp, 8",
        // The caller's return address, above the two saved registers and the padding.
        "mov rdx, [rsp + 24]",
        "call {hook}",
        "add rsp, 8",
        "pop rsi",
        "pop rdi",
        "test rax, rax",
        "jz 2f",
        "ret",
        "2:",
        "jmp qword ptr [rip + {real}]",
        hook = sym hook_dlsym,
        real = sym dl_real::REAL_DLSYM,
    )
}

/// `dlvsym(3)`: as [`dlsym`], for a versioned lookup.
///
/// # Safety
/// Called by the program in place of libc's `dlvsym`.
#[cfg(target_arch = "x86_64")]
#[unsafe(naked)]
#[no_mangle]
pub unsafe extern "C" fn dlvsym(
    handle: *mut c_void,
    name: *const c_char,
    version: *const c_char,
) -> *mut c_void {
    core::arch::naked_asm!(
        "endbr64",
        "push rdi",
        "push rsi",
        "push rdx",
        "mov rcx, [rsp + 24]",
        "call {hook}",
        "pop rdx",
        "pop rsi",
        "pop rdi",
        "test rax, rax",
        "jz 2f",
        "ret",
        "2:",
        "jmp qword ptr [rip + {real}]",
        hook = sym hook_dlvsym,
        real = sym dl_real::REAL_DLVSYM,
    )
}

/// `cuGetProcAddress_v2(symbol, pfn, cudaVersion, flags, symbolStatus)`.
type GetProcAddressV2 =
    unsafe extern "C" fn(*const c_char, *mut *mut c_void, c_int, u64, *mut c_int) -> c_int;
/// `cuGetProcAddress(symbol, pfn, cudaVersion, flags)` (before CUDA 12).
type GetProcAddressV1 = unsafe extern "C" fn(*const c_char, *mut *mut c_void, c_int, u64) -> c_int;

/// After the driver's lookup returned `r`: on success, capture's function in `*pfn`
/// where `hand_out` says so; `r` is the caller's result either way.
///
/// # Safety
/// `pfn` is the lookup's out pointer, written by the driver when `r` is 0.
unsafe fn after_lookup(r: c_int, pfn: *mut *mut c_void, via: &str) -> c_int {
    if r != 0 || pfn.is_null() {
        return r;
    }
    // SAFETY: the caller's contract.
    let p = unsafe { *pfn };
    if let Some(mine) = std::panic::catch_unwind(|| hand_out(p, via)).ok().flatten() {
        // SAFETY: as above; the caller reads it after we return.
        unsafe { *pfn = mine };
    }
    r
}

/// `cuGetProcAddress_v2`: the driver's lookup, then capture's function for each driver
/// function capture exports (its version and per-thread form as the driver chose).
///
/// # Safety
/// Called in place of the driver's `cuGetProcAddress_v2`, with its arguments.
#[no_mangle]
pub unsafe extern "C" fn cuGetProcAddress_v2(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    cuda_version: c_int,
    flags: u64,
    status: *mut c_int,
) -> c_int {
    let Some(real) = real!(cuGetProcAddress_v2: GetProcAddressV2).for_shim() else {
        return NO_REAL_FUNCTION;
    };
    // SAFETY: the driver's function with the caller's arguments.
    let r = unsafe { real(symbol, pfn, cuda_version, flags, status) };
    // SAFETY: the lookup's own out pointer, written when it succeeded.
    unsafe { after_lookup(r, pfn, "cuGetProcAddress_v2") }
}

/// `cuGetProcAddress` (CUDA 11's form): as [`cuGetProcAddress_v2`].
///
/// # Safety
/// Called in place of the driver's `cuGetProcAddress`, with its arguments.
#[no_mangle]
pub unsafe extern "C" fn cuGetProcAddress(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    cuda_version: c_int,
    flags: u64,
) -> c_int {
    let Some(real) = real!(cuGetProcAddress: GetProcAddressV1).for_shim() else {
        return NO_REAL_FUNCTION;
    };
    // SAFETY: the driver's function with the caller's arguments.
    let r = unsafe { real(symbol, pfn, cuda_version, flags) };
    // SAFETY: the lookup's own out pointer, written when it succeeded.
    unsafe { after_lookup(r, pfn, "cuGetProcAddress") }
}

/// `cudaGetDriverEntryPoint[_ptsz](symbol, funcPtr, flags, driverStatus)` (CUDA 12+).
type EntryPointFn = unsafe extern "C" fn(*const c_char, *mut *mut c_void, u64, *mut c_int) -> c_int;
/// `cudaGetDriverEntryPointByVersion[_ptsz](symbol, funcPtr, cudaVersion, flags,
/// driverStatus)`.
type EntryPointByVersionFn =
    unsafe extern "C" fn(*const c_char, *mut *mut c_void, c_uint, u64, *mut c_int) -> c_int;

/// The shared runtime's lookups of driver functions for the program
/// (`cudaGetDriverEntryPoint*`). The runtime asks the driver itself, with lookups capture
/// leaves alone (it is the shared runtime's own machinery), so its answer is the
/// driver's function: handed out as capture's, as `cuGetProcAddress` would be (PyTorch
/// reaches the virtual memory calls of its expandable segments this way).
macro_rules! runtime_entry_point_shims {
    ($($name:ident: $ty:ident ($($arg:ident: $t:ty),*);)*) => {$(
        /// As the shared runtime's function of this name, then capture's function for
        /// the driver function it found (see `runtime_entry_point_shims!`).
        ///
        /// # Safety
        /// Called in place of the runtime's function, with its arguments.
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            symbol: *const c_char,
            pfn: *mut *mut c_void,
            $($arg: $t,)*
            status: *mut c_int,
        ) -> c_int {
            let Some(real) = real!($name: $ty).for_shim() else {
                return NO_REAL_FUNCTION;
            };
            // SAFETY: the runtime's function with the caller's arguments.
            let r = unsafe { real(symbol, pfn, $($arg,)* status) };
            // SAFETY: the lookup's own out pointer, written when it succeeded.
            unsafe { after_lookup(r, pfn, stringify!($name)) }
        }
    )*};
}

runtime_entry_point_shims! {
    cudaGetDriverEntryPoint: EntryPointFn(flags: u64);
    cudaGetDriverEntryPoint_ptsz: EntryPointFn(flags: u64);
    cudaGetDriverEntryPointByVersion: EntryPointByVersionFn(cuda_version: c_uint, flags: u64);
    cudaGetDriverEntryPointByVersion_ptsz: EntryPointByVersionFn(cuda_version: c_uint, flags: u64);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_told_apart_by_name() {
        assert!(is_driver("libcuda.so.1") && is_driver("libcuda.so.580.159.04"));
        assert!(!is_driver("libcudart.so.13") && !is_driver("libcudnn.so.9"));
        assert!(is_shared_runtime("libcudart.so.13") && !is_shared_runtime("libcuda.so.1"));
    }

    #[test]
    fn lookups_through_the_trampoline_answer_as_libc_does() {
        // This test binary holds capture's dlsym: the calls below go through it.
        // SAFETY: dlsym and dlvsym with NUL-terminated names.
        unsafe {
            let p = libc::dlsym(libc::RTLD_DEFAULT, c"strlen".as_ptr());
            assert_eq!(p as usize, libc::strlen as *const () as usize);
            assert!(libc::dlsym(libc::RTLD_DEFAULT, c"hrr_no_such_symbol".as_ptr()).is_null());
            assert!(
                !libc::dlerror().is_null(),
                "a failed lookup leaves libc's error"
            );
            let q = libc::dlvsym(
                libc::RTLD_DEFAULT,
                c"strlen".as_ptr(),
                c"GLIBC_2.2.5".as_ptr(),
            );
            assert_eq!(q as usize, libc::strlen as *const () as usize);
            // RTLD_NEXT from here: the next definition after this object, libc's.
            let n = libc::dlsym(libc::RTLD_NEXT, c"strlen".as_ptr());
            assert_eq!(n as usize, libc::strlen as *const () as usize);
        }
    }

    #[test]
    fn a_pointer_outside_the_driver_is_never_replaced() {
        assert_eq!(hand_out(libc::strlen as *mut c_void, "dlsym"), None);
        assert_eq!(hand_out(std::ptr::null_mut(), "dlsym"), None);
        assert_eq!(asker_at(own_base as *const () as usize), Asker::Exempt);
    }
}
