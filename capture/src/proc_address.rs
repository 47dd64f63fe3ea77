//! Entry-point lookups (`hipGetProcAddress`, `hipGetDriverEntryPoint` and their `_spt`
//! forms, ROCm 6+). A function pointer handed out this way bypasses LD_PRELOAD, so a
//! library resolving its functions at run time would never reach a shim. After the real
//! lookup, the name the runtime resolved (the symbol at the pointer it returned, which
//! carries the version and per-thread choice the runtime made: `hipGetDeviceProperties`
//! asked at version 600 is `hipGetDevicePropertiesR0600`) is looked up in
//! libhrr_capture.so itself: a modelled function is handed out as capture's shim, which
//! records; an unmodelled one as its counting pass-through. A name capture exports
//! neither way keeps the runtime's pointer, and gets one `UNMODELLED_CALL` record naming
//! it (library `libamdhip64.so via hipGetProcAddress`), so replay refuses the archive by
//! that name rather than miss its calls.

use std::collections::BTreeSet;
use std::ffi::{c_char, c_void, CStr};
use std::os::raw::{c_int, c_ulonglong};
use std::sync::OnceLock;

use hrr_archive::sync::{ForkLock, Mutex};

use hrr_archive::api::surface::surface_of;
use hrr_archive::api::{exported_symbols, fid, semantic, Vendor};
use hrr_archive::payload::PayloadWriter;
use hrr_archive::writer::current_tid;

use crate::real::NO_REAL_FUNCTION;
use crate::state;
use crate::unseen::UNMODELLED;

/// `hipGetProcAddress(symbol, pfn, hipVersion, flags, symbolStatus)`.
type ProcAddressFn =
    unsafe extern "C" fn(*const c_char, *mut *mut c_void, c_int, u64, *mut c_int) -> c_int;
/// `hipGetDriverEntryPoint(symbol, funcPtr, flags, driverStatus)`.
type EntryPointFn =
    unsafe extern "C" fn(*const c_char, *mut *mut c_void, c_ulonglong, *mut c_int) -> c_int;

/// Where capture handed out its own function, or why it did not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Handed {
    /// Capture's function of this name replaced the runtime's.
    Capture(String),
    /// Capture exports nothing of this name: the runtime's pointer stays (noted).
    Runtime(String),
}

/// The name of the exported symbol at `p`, when `p` is exactly one.
fn symbol_at(p: *mut c_void) -> Option<String> {
    // SAFETY: dladdr only reads the loader's tables; `info` is a valid out struct.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    if unsafe { libc::dladdr(p, &mut info) } == 0 || info.dli_sname.is_null() || info.dli_saddr != p
    {
        return None;
    }
    // SAFETY: dladdr's name is a NUL-terminated string of the loaded object.
    Some(
        unsafe { CStr::from_ptr(info.dli_sname) }
            .to_string_lossy()
            .into_owned(),
    )
}

/// libhrr_capture.so's own handle (found from one of its functions), loaded already.
fn own_handle() -> *mut c_void {
    static HANDLE: OnceLock<usize> = OnceLock::new();
    *HANDLE.get_or_init(|| {
        // SAFETY: as in symbol_at; RTLD_NOLOAD only returns an object already loaded.
        unsafe {
            let mut info: libc::Dl_info = std::mem::zeroed();
            let here = own_handle as *const () as *const c_void;
            if libc::dladdr(here, &mut info) == 0 || info.dli_fname.is_null() {
                return 0;
            }
            libc::dlopen(info.dli_fname, libc::RTLD_NOW | libc::RTLD_NOLOAD) as usize
        }
    }) as *mut c_void
}

/// Whether libhrr_capture.so exports `name` (a shim, or a pass-through on x86_64).
fn capture_exports(name: &str) -> bool {
    exported_symbols().any(|s| s == name)
        || (cfg!(target_arch = "x86_64") && UNMODELLED.iter().any(|u| u.name() == name))
}

/// Capture's function for `name`, if it exports one.
pub fn own_function(name: &str) -> Option<*mut c_void> {
    if !capture_exports(name) {
        return None;
    }
    let h = own_handle();
    let c = std::ffi::CString::new(name).ok()?;
    // SAFETY: dlsym on capture's own handle with a NUL-terminated name.
    let p = (!h.is_null()).then(|| unsafe { libc::dlsym(h, c.as_ptr()) })?;
    (!p.is_null()).then_some(p)
}

/// The symbol a lookup of `requested` at `hip_version` (100 * major + minor; None for
/// `hipGetDriverEntryPoint`, which takes none) resolves, when the pointer names none: the
/// R0600 name from version 600 on. None when that depends on a version not given.
pub fn by_version(requested: &str, hip_version: Option<i32>) -> Option<String> {
    let r0600 = format!("{requested}R0600");
    if surface_of(&r0600).is_none() {
        return Some(requested.to_string());
    }
    hip_version.map(|v| {
        if v >= 600 {
            r0600
        } else {
            requested.to_string()
        }
    })
}

/// After a successful lookup of `requested` that wrote `*pfn`: capture's function in its
/// place where capture has one; otherwise the name is noted.
///
/// # Safety
/// `pfn` must be the lookup's out pointer, holding what the runtime wrote.
pub unsafe fn substitute(
    requested: &str,
    hip_version: Option<i32>,
    pfn: *mut *mut c_void,
    via: &str,
) -> Option<Handed> {
    // SAFETY: the caller's contract.
    let real = unsafe { *pfn };
    if real.is_null() {
        return None;
    }
    let Some(name) = symbol_at(real).or_else(|| by_version(requested, hip_version)) else {
        note_unmodelled(requested, via);
        return Some(Handed::Runtime(requested.to_string()));
    };
    if let Some(own) = own_function(&name) {
        if own != real {
            // SAFETY: as above; the program reads the pointer after the call returns.
            unsafe { *pfn = own };
        }
        return Some(Handed::Capture(name));
    }
    note_unmodelled(&name, via);
    Some(Handed::Runtime(name))
}

/// The names noted by [`note_unmodelled`].
static NOTED: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());

/// The lock of the names noted, for the fork protocol (`fork.rs`).
pub fn fork_locks() -> [&'static dyn ForkLock; 1] {
    [&NOTED]
}

/// One `UNMODELLED_CALL` record per name handed out that capture does not export.
fn note_unmodelled(name: &str, via: &str) {
    note_unmodelled_from(name, via, "libamdhip64.so");
}

/// As `note_unmodelled`, for a function of `library` handed out by `via`.
pub fn note_unmodelled_from(name: &str, via: &str, library: &str) {
    let first = NOTED.lock().insert(name.to_string());
    let Some(cap) = state::current().filter(|_| first) else {
        return;
    };
    let _ = state::guarded(via, || {
        let mut p = PayloadWriter::new();
        let library = format!("{library} via {via}");
        p.str(fid::API_NAME, name).str(fid::LIBRARY, &library);
        let w = cap.writer();
        w.append(semantic::UNMODELLED_CALL, 0, current_tid(), 0, p.as_bytes());
        crate::say::say(&format!("warning: {via} handed out {name}, which capture does not model: its calls are not seen; hrr-replay will refuse the archive"));
    });
}

/// The requested name, as text.
///
/// # Safety
/// `symbol` must be null or a NUL-terminated string.
unsafe fn requested(symbol: *const c_char) -> String {
    if symbol.is_null() {
        return String::new();
    }
    // SAFETY: the caller's contract.
    unsafe { CStr::from_ptr(symbol) }
        .to_string_lossy()
        .into_owned()
}

macro_rules! proc_address_shim {
    ($name:ident) => {
        /// # Safety
        /// Called by the program in place of the runtime's function of this name.
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            symbol: *const c_char,
            pfn: *mut *mut c_void,
            version: c_int,
            flags: u64,
            status: *mut c_int,
        ) -> c_int {
            let Some(f) = real!($name: ProcAddressFn).for_shim() else {
                return NO_REAL_FUNCTION;
            };
            let Some((_cap, guard)) = state::enter(Vendor::Hip) else {
                // SAFETY: the program's own arguments, passed on unchanged.
                return unsafe { f(symbol, pfn, version, flags, status) };
            };
            // SAFETY: as above.
            let ret = unsafe { f(symbol, pfn, version, flags, status) };
            if ret == 0 && !pfn.is_null() {
                // SAFETY: the runtime wrote `*pfn`; `symbol` is the program's name.
                let _ = state::guarded(stringify!($name), || unsafe {
                    substitute(&requested(symbol), Some(version), pfn, stringify!($name))
                });
            }
            drop(guard);
            ret
        }
    };
}

macro_rules! entry_point_shim {
    ($name:ident) => {
        /// # Safety
        /// Called by the program in place of the runtime's function of this name.
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            symbol: *const c_char,
            pfn: *mut *mut c_void,
            flags: c_ulonglong,
            status: *mut c_int,
        ) -> c_int {
            let Some(f) = real!($name: EntryPointFn).for_shim() else {
                return NO_REAL_FUNCTION;
            };
            let Some((_cap, guard)) = state::enter(Vendor::Hip) else {
                // SAFETY: the program's own arguments, passed on unchanged.
                return unsafe { f(symbol, pfn, flags, status) };
            };
            // SAFETY: as above.
            let ret = unsafe { f(symbol, pfn, flags, status) };
            if ret == 0 && !pfn.is_null() {
                // SAFETY: the runtime wrote `*pfn`; `symbol` is the program's name.
                let _ = state::guarded(stringify!($name), || unsafe {
                    substitute(&requested(symbol), None, pfn, stringify!($name))
                });
            }
            drop(guard);
            ret
        }
    };
}

proc_address_shim!(hipGetProcAddress);
proc_address_shim!(hipGetProcAddress_spt);
entry_point_shim!(hipGetDriverEntryPoint);
entry_point_shim!(hipGetDriverEntryPoint_spt);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_version_picks_the_r0600_name_and_an_unknown_version_picks_none() {
        let at = |v| by_version("hipGetDeviceProperties", v);
        assert_eq!(
            at(Some(601)).as_deref(),
            Some("hipGetDevicePropertiesR0600")
        );
        assert_eq!(at(Some(502)).as_deref(), Some("hipGetDeviceProperties"));
        assert_eq!(at(None), None);
        assert_eq!(by_version("hipMalloc", None).as_deref(), Some("hipMalloc"));
    }

    #[test]
    fn capture_exports_its_shims_and_pass_throughs() {
        assert!(capture_exports("hipGetDevicePropertiesR0600"));
        assert!(capture_exports("hipMemcpyAsync_spt"));
        assert!(capture_exports("hipGraphAddNode") == cfg!(target_arch = "x86_64"));
        assert!(!capture_exports("hipNoSuchFunction"));
    }
}
