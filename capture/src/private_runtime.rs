//! Loaded objects that run GPU code through a runtime of their own (a library linked
//! with the static CUDA runtime, as cuBLAS is): found at exit among the loaded objects
//! (`dl_iterate_phdr`, each file read back bounded through
//! `hrr_archive::api::private_runtime::scan_elf`), each recorded as an unmodelled,
//! non-exempt call named after the object, so replay refuses the archive naming the
//! library instead of reporting a mismatch it cannot explain.
//!
//! Its work has no place in the log, so its record carries `SINCE_SEQ` 0: every check
//! may be affected. An object loaded and unloaded before exit is not seen.
//!
//! On x86_64 a private CUDA runtime is not refused: it reaches the driver only through
//! `dlsym`/`dlvsym` and `cuGetProcAddress`, which capture interposes (`lookup.rs`), so its
//! work is recorded at the driver. A private HIP runtime still is.

use std::ffi::{c_void, CStr};
use std::os::unix::fs::FileExt as _;
use std::path::PathBuf;

use hrr_archive::api::private_runtime::{api_name, scan_elf, ElfScanError};
use hrr_archive::api::{fid, semantic};
use hrr_archive::manifest::UnmodelledApi;
use hrr_archive::payload::PayloadWriter;
use hrr_archive::sync::{ForkLock, Mutex};
use hrr_archive::writer::{current_tid, ProcessWriter};

/// The entries found, for the manifest (the unmodelled calls' hook appends them).
static FOUND: Mutex<Vec<UnmodelledApi>> = Mutex::new(Vec::new());

/// Appends the private-runtime entries to the manifest's unmodelled calls.
pub fn fill_manifest(apis: &mut Vec<UnmodelledApi>) {
    apis.extend(FOUND.lock().iter().cloned());
}

/// The file of every loaded object: the main program as `/proc/self/exe`.
fn loaded_objects() -> Vec<PathBuf> {
    unsafe extern "C" fn each(info: *mut libc::dl_phdr_info, _: usize, data: *mut c_void) -> i32 {
        // SAFETY: dl_iterate_phdr passes a valid info and our own Vec as data; the name
        // is a NUL-terminated string the loader owns for the call.
        unsafe {
            let out = &mut *(data as *mut Vec<PathBuf>);
            let name = (*info).dlpi_name;
            let name = if name.is_null() {
                &b""[..]
            } else {
                CStr::from_ptr(name).to_bytes()
            };
            out.push(if name.is_empty() && out.is_empty() {
                PathBuf::from("/proc/self/exe")
            } else {
                PathBuf::from(std::ffi::OsStr::from_encoded_bytes_unchecked(name))
            });
        }
        0
    }
    let mut out: Vec<PathBuf> = Vec::new();
    // SAFETY: the callback only pushes onto `out`, which outlives the call.
    unsafe {
        libc::dl_iterate_phdr(Some(each), &mut out as *mut Vec<PathBuf> as *mut c_void);
    }
    out.retain(|p| !p.as_os_str().is_empty());
    out
}

/// The vendors whose code `path` runs through a private runtime (empty when the file
/// cannot be read: the vDSO, a deleted file).
fn private_runtimes_of(path: &PathBuf) -> Result<Vec<&'static str>, ElfScanError> {
    let f = std::fs::File::open(path).map_err(|_| ElfScanError::Read { what: "the file" })?;
    let len = f
        .metadata()
        .map_err(|_| ElfScanError::Read { what: "the file" })?
        .len();
    let facts = scan_elf(len, |off, n| {
        let mut buf = vec![0u8; n];
        f.read_exact_at(&mut buf, off).ok().map(|_| buf)
    })?;
    Ok(facts.private_runtimes())
}

/// Whether capture records a private runtime of this vendor through the driver's lookups.
fn covered_at_the_driver(runtime: &str) -> bool {
    cfg!(target_arch = "x86_64") && runtime == "CUDA"
}

/// Scans the loaded objects and records each one with a private runtime (before the
/// writer finishes).
pub fn record_at_exit(w: &ProcessWriter) {
    for path in loaded_objects() {
        let Ok(runtimes) = private_runtimes_of(&path) else {
            continue;
        };
        let shown = if path.as_os_str() == "/proc/self/exe" {
            std::fs::read_link(&path).unwrap_or(path)
        } else {
            path
        };
        let full = shown.to_string_lossy().into_owned();
        let file = full.rsplit('/').next().unwrap_or(&full).to_string();
        for runtime in runtimes.into_iter().filter(|r| !covered_at_the_driver(r)) {
            refuse(
                w,
                &api_name(&file, runtime),
                &full,
                &format!("warning: {full} carries {runtime} GPU code run by its own copy of the runtime: its launches and copies bypass the shared runtime and were not recorded; hrr-replay will refuse the archive"),
            );
        }
    }
}

/// Records `api` (found in the object at `library`) as an unmodelled, non-exempt call
/// that may affect every check (`SINCE_SEQ` 0), lists it for the manifest, and says
/// `warning` on stderr: the archive is refused by that name.
pub fn refuse(w: &ProcessWriter, api: &str, library: &str, warning: &str) {
    let mut p = PayloadWriter::new();
    p.str(fid::API_NAME, api)
        .str(fid::LIBRARY, library)
        .u64(fid::SINCE_SEQ, 0);
    let seq = w.append(semantic::UNMODELLED_CALL, 0, current_tid(), 0, p.as_bytes());
    crate::say::say(warning);
    FOUND.lock().push(UnmodelledApi {
        api: api.to_string(),
        library: library.to_string(),
        count: 1,
        first_seq: seq,
        exempt: None,
    });
}

/// The lock of `FOUND`, for the fork protocol (`fork.rs`).
pub fn fork_locks() -> [&'static dyn ForkLock; 1] {
    [&FOUND]
}
