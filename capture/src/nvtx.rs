//! NVTX and roctx ranges as range-capture triggers (`HRR_CAPTURE_RANGE=nvtx:NAME[:N]`,
//! issue 23): the N-th range named NAME, pushed or started, is recorded from its push
//! (or start) to the matching pop (or end), as `range.rs` records a profiler range.
//!
//! NVTX 3 is header-only: a program's NVTX calls reach a tool only through an injection
//! library, which the NVTX loader of each NVTX instance (the program, PyTorch, cuBLAS...)
//! takes from `NVTX_INJECTION64_PATH` at its first NVTX call and initialises through the
//! library's exported `InitializeInjectionNvtx2`. So when an NVTX range is asked for,
//! capture names itself there at load ([`prepare`]); a variable that already names
//! another tool (Nsight Systems sets it) is left alone and said, and the range then never
//! starts (the archive is noted unreplayable at exit, never passed). Initialised,
//! capture attaches only to the range calls of the core and domain modules (push, pop,
//! start, end, in each message form) and to domain creation and string registration
//! (handles a message may name). Every other NVTX call stays the no-op it is without a
//! tool; a push or pop returns `NVTX_NO_PUSH_POP_TRACKING` (-2) as without a tool; a start
//! returns an id of capture's (0 without a tool), which the program hands back to its end.
//!
//! roctx (AMD) is a shared library (`libroctx64.so`): capture exports `roctxRangePushA`,
//! `roctxRangePop`, `roctxRangeStartA` and `roctxRangeStop`, forwarding each to the real
//! one, so no variable is needed there.

use std::cell::RefCell;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

use hrr_archive::api::Vendor;
use hrr_archive::writer::current_tid;

use crate::range::{range_start, range_stop};
use crate::range_gate::{nvtx_name, set_blocked};

/// The variable the NVTX loader reads in a 64-bit process.
const INJECTION_VAR: &str = "NVTX_INJECTION64_PATH";
/// `NVTX_NO_PUSH_POP_TRACKING`: what a push or pop returns without a tool.
const NO_PUSH_POP_TRACKING: c_int = -2;
/// `NVTX_ETID_CALLBACKS`, `NVTX_CB_MODULE_CORE`, `NVTX_CB_MODULE_CORE2`.
const ETID_CALLBACKS: u32 = 1;
const MODULE_CORE: c_int = 1;
const MODULE_CORE2: c_int = 5;
/// `nvtxEventAttributes_t` (versions 1-3 share this prefix): the message type at 32,
/// the message at 40, 48 bytes in all.
const ATTR_MESSAGE_TYPE: usize = 32;
const ATTR_MESSAGE: usize = 40;
const ATTR_MIN_SIZE: u16 = 48;
const MESSAGE_ASCII: i32 = 1;
const MESSAGE_UNICODE: i32 = 2;
const MESSAGE_REGISTERED: i32 = 3;
/// Longest message compared (a longer one is not the name asked for).
const MAX_MESSAGE: usize = 4096;
/// Most strings registered and domains created that get a handle of capture's; later
/// ones get 0, as without a tool.
const MAX_HANDLES: usize = 1 << 16;

#[used]
#[link_section = ".init_array"]
static ON_LOAD: extern "C" fn() = on_load;

/// Runs at library load, before `main`: when capture is on (as `state`'s load decides:
/// asked for, not a secure-execution process) and an NVTX range is asked for, capture
/// names itself the NVTX injection library ([`prepare`]).
extern "C" fn on_load() {
    if !crate::config::wanted(std::env::var_os("HRR_CAPTURE_OUTPUT")) {
        return;
    }
    // SAFETY: getauxval has no preconditions.
    if unsafe { libc::getauxval(libc::AT_SECURE) } != 0 {
        return;
    }
    let range = std::env::var("HRR_CAPTURE_RANGE")
        .ok()
        .and_then(|v| crate::config::range(&v).ok());
    if matches!(range, Some(hrr_contract::CaptureRange::Nvtx { .. })) {
        prepare();
    }
}

/// At load, when `HRR_CAPTURE_RANGE` asks for an NVTX range: names this library in
/// `NVTX_INJECTION64_PATH` unless the variable already names another (then says why the
/// range will not be seen). Runs in the library's constructor, before `main` and before
/// any thread of the program exists.
pub fn prepare() {
    let own = own_path();
    match (std::env::var_os(INJECTION_VAR), own) {
        (Some(v), Some(own)) if v == own.as_os_str() => {}
        (Some(v), _) if !v.is_empty() => {
            let why = format!(
                "{INJECTION_VAR} already names another NVTX tool ({}), so capture cannot see NVTX ranges; run without that tool",
                v.to_string_lossy()
            );
            crate::state::note(&format!("warning: {why}"));
            set_blocked(why);
        }
        (_, Some(own)) => {
            // Called from the library constructor, before main: no other thread of the
            // program exists yet to read the environment concurrently.
            std::env::set_var(INJECTION_VAR, own);
        }
        (_, None) => {
            let why =
                "capture could not find its own file to name in NVTX_INJECTION64_PATH".to_string();
            crate::state::note(&format!("warning: {why}"));
            set_blocked(why);
        }
    }
}

/// This library's file, as the dynamic loader knows it.
fn own_path() -> Option<std::path::PathBuf> {
    // SAFETY: Dl_info is plain data (pointers and integers); all-zero is a valid value.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr reads the loader's tables for an address of this library; `info`
    // is a valid out pointer.
    let ok = unsafe { libc::dladdr(prepare as *const c_void, &mut info) };
    if ok == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dli_fname is a NUL-terminated string the loader owns for the library's life.
    let name = unsafe { CStr::from_ptr(info.dli_fname) };
    let p = std::path::PathBuf::from(std::ffi::OsStr::new(
        std::str::from_utf8(name.to_bytes()).ok()?,
    ));
    std::fs::canonicalize(&p).ok().or(Some(p))
}

/// Where the range asked for started, so its own pop or end stops it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Active {
    /// Pushed on thread `tid` in `domain`, at nesting `depth` (0 = outermost).
    Push { tid: u32, domain: usize, depth: u32 },
    /// Started with this id (start/end ranges may end on another thread).
    Start { id: u64 },
}

static ACTIVE: Mutex<Option<Active>> = Mutex::new(None);
static NEXT_RANGE_ID: AtomicU64 = AtomicU64::new(1);
static HANDLES: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// This thread's push depth per domain (0: the core module's ranges).
    static DEPTHS: RefCell<Vec<(usize, u32)>> = const { RefCell::new(Vec::new()) };
}

fn active() -> std::sync::MutexGuard<'static, Option<Active>> {
    ACTIVE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Whether `message` is the range name asked for.
fn wanted(message: Option<String>) -> bool {
    matches!((message, nvtx_name()), (Some(m), Some(n)) if m == n)
}

/// A push in `domain` on this thread: its depth counted; the range starts here when it
/// is the occurrence asked for.
fn push(vendor: Vendor, api: &'static str, domain: usize, message: Option<String>) {
    let depth = DEPTHS
        .try_with(|d| {
            let mut d = d.borrow_mut();
            match d.iter_mut().find(|(k, _)| *k == domain) {
                Some((_, n)) => {
                    *n += 1;
                    *n - 1
                }
                None => {
                    d.push((domain, 1));
                    0
                }
            }
        })
        .unwrap_or(0);
    if wanted(message) && range_start(vendor, api) {
        *active() = Some(Active::Push {
            tid: current_tid(),
            domain,
            depth,
        });
    }
}

/// A pop in `domain` on this thread: the range stops when it pops the push that started it.
fn pop(vendor: Vendor, api: &'static str, domain: usize) {
    let Ok(Some(depth)) = DEPTHS.try_with(|d| {
        let mut d = d.borrow_mut();
        d.iter_mut()
            .find(|(k, n)| *k == domain && *n > 0)
            .map(|(_, n)| {
                *n -= 1;
                *n
            })
    }) else {
        return;
    };
    let this = Active::Push {
        tid: current_tid(),
        domain,
        depth,
    };
    let mut a = active();
    if *a == Some(this) {
        *a = None;
        drop(a);
        range_stop(vendor, api);
    }
}

/// A start, whose end will name `id`: the range starts here when it is the occurrence
/// asked for.
fn start_with(vendor: Vendor, api: &'static str, id: u64, message: Option<String>) {
    if wanted(message) && range_start(vendor, api) {
        *active() = Some(Active::Start { id });
    }
}

/// An NVTX start: a fresh id of capture's (the tool hands out ids), then [`start_with`].
fn start(vendor: Vendor, api: &'static str, message: Option<String>) -> u64 {
    let id = NEXT_RANGE_ID.fetch_add(1, Ordering::Relaxed);
    start_with(vendor, api, id, message);
    id
}

/// An end: the range stops when it ends the start that began it.
fn end(vendor: Vendor, api: &'static str, id: u64) {
    let mut a = active();
    if *a == Some(Active::Start { id }) {
        *a = None;
        drop(a);
        range_stop(vendor, api);
    }
}

/// A NUL-terminated narrow string, at most [`MAX_MESSAGE`] bytes read.
///
/// # Safety
/// `p` is null or points at a NUL-terminated string (the NVTX contract).
unsafe fn narrow(p: *const c_char) -> Option<String> {
    if p.is_null() {
        return None;
    }
    let mut n = 0;
    // SAFETY: the caller's contract; the walk stops at the NUL or the bound.
    while n <= MAX_MESSAGE && unsafe { *p.add(n) } != 0 {
        n += 1;
    }
    if n > MAX_MESSAGE {
        return None;
    }
    // SAFETY: `n` bytes before the NUL, read above.
    let bytes = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), n) };
    String::from_utf8(bytes.to_vec()).ok()
}

/// A NUL-terminated `wchar_t` string (UTF-32 on Linux), at most [`MAX_MESSAGE`] characters.
///
/// # Safety
/// `p` is null or points at a NUL-terminated wide string (the NVTX contract).
unsafe fn wide(p: *const u32) -> Option<String> {
    if p.is_null() {
        return None;
    }
    let mut s = String::new();
    for i in 0..=MAX_MESSAGE {
        // SAFETY: the caller's contract; the walk stops at the NUL or the bound.
        match unsafe { *p.add(i) } {
            0 => return Some(s),
            c => s.push(char::from_u32(c)?),
        }
    }
    None
}

/// The message of an event attribute structure, in any of its three forms.
///
/// # Safety
/// `attr` is null or points at an `nvtxEventAttributes_t` of the size it declares.
unsafe fn attr_message(attr: *const u8) -> Option<String> {
    if attr.is_null() {
        return None;
    }
    // SAFETY: the structure's first four bytes (version, size) are always present.
    let size = u16::from_le_bytes(unsafe { [*attr.add(2), *attr.add(3)] });
    if size < ATTR_MIN_SIZE {
        return None;
    }
    // SAFETY: `size` bytes are the program's structure; both reads lie within 48.
    let (ty, msg) = unsafe {
        (
            attr.add(ATTR_MESSAGE_TYPE).cast::<i32>().read_unaligned(),
            attr.add(ATTR_MESSAGE).cast::<usize>().read_unaligned(),
        )
    };
    match ty {
        // SAFETY: the message union holds a string of the declared type.
        MESSAGE_ASCII => unsafe { narrow(msg as *const c_char) },
        // SAFETY: as above.
        MESSAGE_UNICODE => unsafe { wide(msg as *const u32) },
        // A registered handle is capture's own leaked string (`register_string`).
        // SAFETY: capture's handles are NUL-terminated strings it never frees.
        MESSAGE_REGISTERED => unsafe { narrow(msg as *const c_char) },
        _ => None,
    }
}

// The callbacks NVTX calls once capture attached them.

unsafe extern "C" fn range_push_a(message: *const c_char) -> c_int {
    // SAFETY: NVTX hands the program's string.
    push(Vendor::Cuda, "nvtxRangePushA", 0, unsafe {
        narrow(message)
    });
    NO_PUSH_POP_TRACKING
}
unsafe extern "C" fn range_push_w(message: *const u32) -> c_int {
    // SAFETY: as above.
    push(Vendor::Cuda, "nvtxRangePushW", 0, unsafe { wide(message) });
    NO_PUSH_POP_TRACKING
}
unsafe extern "C" fn range_push_ex(attr: *const u8) -> c_int {
    // SAFETY: NVTX hands the program's attributes.
    push(Vendor::Cuda, "nvtxRangePushEx", 0, unsafe {
        attr_message(attr)
    });
    NO_PUSH_POP_TRACKING
}
extern "C" fn range_pop() -> c_int {
    pop(Vendor::Cuda, "nvtxRangePop", 0);
    NO_PUSH_POP_TRACKING
}
unsafe extern "C" fn range_start_a(message: *const c_char) -> u64 {
    // SAFETY: as above.
    start(Vendor::Cuda, "nvtxRangeStartA", unsafe { narrow(message) })
}
unsafe extern "C" fn range_start_w(message: *const u32) -> u64 {
    // SAFETY: as above.
    start(Vendor::Cuda, "nvtxRangeStartW", unsafe { wide(message) })
}
unsafe extern "C" fn range_start_ex(attr: *const u8) -> u64 {
    // SAFETY: as above.
    start(Vendor::Cuda, "nvtxRangeStartEx", unsafe {
        attr_message(attr)
    })
}
extern "C" fn range_end(id: u64) {
    end(Vendor::Cuda, "nvtxRangeEnd", id);
}
unsafe extern "C" fn domain_range_push_ex(domain: *mut c_void, attr: *const u8) -> c_int {
    // SAFETY: as above.
    let m = unsafe { attr_message(attr) };
    push(Vendor::Cuda, "nvtxDomainRangePushEx", domain as usize, m);
    NO_PUSH_POP_TRACKING
}
extern "C" fn domain_range_pop(domain: *mut c_void) -> c_int {
    pop(Vendor::Cuda, "nvtxDomainRangePop", domain as usize);
    NO_PUSH_POP_TRACKING
}
unsafe extern "C" fn domain_range_start_ex(_domain: *mut c_void, attr: *const u8) -> u64 {
    // SAFETY: as above.
    start(Vendor::Cuda, "nvtxDomainRangeStartEx", unsafe {
        attr_message(attr)
    })
}
extern "C" fn domain_range_end(_domain: *mut c_void, id: u64) {
    end(Vendor::Cuda, "nvtxDomainRangeEnd", id);
}

/// A handle of capture's for a string or domain name: the string itself, copied and
/// never freed (a registered message is read back through it); null past [`MAX_HANDLES`].
fn leak_handle(s: Option<String>) -> *mut c_void {
    if HANDLES.fetch_add(1, Ordering::Relaxed) >= MAX_HANDLES {
        return std::ptr::null_mut();
    }
    let s = s.unwrap_or_default().replace('\0', "");
    std::ffi::CString::new(s).map_or(std::ptr::null_mut(), |c| c.into_raw().cast())
}
unsafe extern "C" fn register_string_a(_domain: *mut c_void, s: *const c_char) -> *mut c_void {
    // SAFETY: as above.
    leak_handle(unsafe { narrow(s) })
}
unsafe extern "C" fn register_string_w(_domain: *mut c_void, s: *const u32) -> *mut c_void {
    // SAFETY: as above.
    leak_handle(unsafe { wide(s) })
}
unsafe extern "C" fn domain_create_a(name: *const c_char) -> *mut c_void {
    // SAFETY: as above.
    leak_handle(unsafe { narrow(name) })
}
unsafe extern "C" fn domain_create_w(name: *const u32) -> *mut c_void {
    // SAFETY: as above.
    leak_handle(unsafe { wide(name) })
}

/// `NvtxExportTableCallbacks`.
#[repr(C)]
struct ExportTableCallbacks {
    struct_size: usize,
    get_module_function_table:
        Option<unsafe extern "C" fn(c_int, *mut *mut *mut *const c_void, *mut u32) -> c_int>,
}

type GetExportTable = unsafe extern "C" fn(u32) -> *const c_void;

/// Writes `entries` (callback id, function) into `module`'s table; false if NVTX has
/// no such module.
///
/// # Safety
/// `get` is the NVTX instance's `GetModuleFunctionTable`.
unsafe fn attach(
    get: unsafe extern "C" fn(c_int, *mut *mut *mut *const c_void, *mut u32) -> c_int,
    module: c_int,
    entries: &[(usize, *const c_void)],
) -> bool {
    let mut table: *mut *mut *const c_void = std::ptr::null_mut();
    let mut size: u32 = 0;
    // SAFETY: valid out pointers, as the NVTX loader's contract asks.
    if unsafe { get(module, &mut table, &mut size) } == 0 || table.is_null() {
        return false;
    }
    for &(id, f) in entries {
        if id == 0 || id > size as usize {
            continue;
        }
        // SAFETY: the table holds `size + 1` pointers to the instance's function
        // pointers (index 0 unused); `id` is within it.
        unsafe {
            let slot = *table.add(id);
            if !slot.is_null() {
                *slot = f;
            }
        }
    }
    true
}

/// The NVTX loader's entry point into an injection library: attaches capture's range
/// callbacks to the calling NVTX instance; nonzero on success.
///
/// # Safety
/// Called by an NVTX loader with its instance's export-table getter.
#[no_mangle]
pub unsafe extern "C" fn InitializeInjectionNvtx2(
    get_export_table: Option<GetExportTable>,
) -> c_int {
    let Some(get_table) = get_export_table else {
        return 0;
    };
    // SAFETY: the loader's getter, asked for its callbacks table.
    let cb = unsafe { get_table(ETID_CALLBACKS) }.cast::<ExportTableCallbacks>();
    if cb.is_null() {
        return 0;
    }
    // SAFETY: the instance's callbacks table, which lives as long as the instance.
    let Some(get) = (unsafe { &*cb }).get_module_function_table else {
        return 0;
    };
    let f = |p: *const ()| p as *const c_void;
    let core = [
        (4, f(range_start_ex as *const ())),
        (5, f(range_start_a as *const ())),
        (6, f(range_start_w as *const ())),
        (7, f(range_end as *const ())),
        (8, f(range_push_ex as *const ())),
        (9, f(range_push_a as *const ())),
        (10, f(range_push_w as *const ())),
        (11, f(range_pop as *const ())),
    ];
    let core2 = [
        (2, f(domain_range_start_ex as *const ())),
        (3, f(domain_range_end as *const ())),
        (4, f(domain_range_push_ex as *const ())),
        (5, f(domain_range_pop as *const ())),
        (10, f(register_string_a as *const ())),
        (11, f(register_string_w as *const ())),
        (12, f(domain_create_a as *const ())),
        (13, f(domain_create_w as *const ())),
    ];
    // SAFETY: `get` is this instance's GetModuleFunctionTable.
    let ok = unsafe { attach(get, MODULE_CORE, &core) };
    // SAFETY: as above.
    let _ = unsafe { attach(get, MODULE_CORE2, &core2) };
    c_int::from(ok)
}

// roctx: the shared library's functions, forwarded.

type RoctxPushFn = unsafe extern "C" fn(*const c_char) -> c_int;
type RoctxPopFn = unsafe extern "C" fn() -> c_int;
type RoctxStartFn = unsafe extern "C" fn(*const c_char) -> u64;
type RoctxStopFn = unsafe extern "C" fn(u64);

/// # Safety
/// Called by the program in place of libroctx64's function.
#[no_mangle]
pub unsafe extern "C" fn roctxRangePushA(message: *const c_char) -> c_int {
    let ret = match real!(roctxRangePushA: RoctxPushFn).for_shim() {
        // SAFETY: the program's argument, for the real function.
        Some(f) => unsafe { f(message) },
        None => -1,
    };
    // SAFETY: the program's string (roctx's contract).
    push(Vendor::Hip, "roctxRangePushA", 0, unsafe {
        narrow(message)
    });
    ret
}

/// # Safety
/// Called by the program in place of libroctx64's function.
#[no_mangle]
pub unsafe extern "C" fn roctxRangePop() -> c_int {
    pop(Vendor::Hip, "roctxRangePop", 0);
    match real!(roctxRangePop: RoctxPopFn).for_shim() {
        // SAFETY: no arguments.
        Some(f) => unsafe { f() },
        None => -1,
    }
}

/// # Safety
/// Called by the program in place of libroctx64's function.
#[no_mangle]
pub unsafe extern "C" fn roctxRangeStartA(message: *const c_char) -> u64 {
    let id = match real!(roctxRangeStartA: RoctxStartFn).for_shim() {
        // SAFETY: the program's argument, for the real function.
        Some(f) => unsafe { f(message) },
        None => 0,
    };
    // SAFETY: the program's string (roctx's contract).
    start_with(Vendor::Hip, "roctxRangeStartA", id, unsafe {
        narrow(message)
    });
    id
}

/// # Safety
/// Called by the program in place of libroctx64's function.
#[no_mangle]
pub unsafe extern "C" fn roctxRangeStop(id: u64) {
    end(Vendor::Hip, "roctxRangeStop", id);
    if let Some(f) = real!(roctxRangeStop: RoctxStopFn).for_shim() {
        // SAFETY: the program's argument, for the real function.
        unsafe { f(id) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_read_in_each_form_and_bounded() {
        let a = c"step";
        // SAFETY: a NUL-terminated string.
        assert_eq!(unsafe { narrow(a.as_ptr()) }.as_deref(), Some("step"));
        let w: Vec<u32> = "stép\0".chars().map(|c| c as u32).collect();
        // SAFETY: a NUL-terminated wide string.
        assert_eq!(unsafe { wide(w.as_ptr()) }.as_deref(), Some("stép"));
        let long = std::ffi::CString::new("x".repeat(MAX_MESSAGE + 1)).unwrap();
        // SAFETY: as above.
        assert_eq!(unsafe { narrow(long.as_ptr()) }, None);
        let mut attr = [0u8; 48];
        attr[2..4].copy_from_slice(&48u16.to_le_bytes());
        attr[32..36].copy_from_slice(&MESSAGE_ASCII.to_le_bytes());
        attr[40..48].copy_from_slice(&(a.as_ptr() as usize).to_le_bytes());
        // SAFETY: a 48-byte attribute structure naming a live string.
        assert_eq!(
            unsafe { attr_message(attr.as_ptr()) }.as_deref(),
            Some("step")
        );
        attr[2..4].copy_from_slice(&40u16.to_le_bytes());
        // SAFETY: as above; the declared size is too small to hold a message.
        assert_eq!(unsafe { attr_message(attr.as_ptr()) }, None);
        let h = leak_handle(Some("step".into()));
        attr[2..4].copy_from_slice(&48u16.to_le_bytes());
        attr[32..36].copy_from_slice(&MESSAGE_REGISTERED.to_le_bytes());
        attr[40..48].copy_from_slice(&(h as usize).to_le_bytes());
        // SAFETY: a registered handle of capture's.
        assert_eq!(
            unsafe { attr_message(attr.as_ptr()) }.as_deref(),
            Some("step")
        );
    }
}
