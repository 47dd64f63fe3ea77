//! The process-wide capture: configuration from the environment, the archive writer
//! (created on the first runtime call, so processes that never touch the GPU leave
//! nothing behind), fork handlers, panic containment and the exit notice.
//!
//! Lock order, outermost first: kernels registry → allocation table → the writer's
//! file → buf → blobs → meta. No code holds a capture lock while calling the writer;
//! `fork_prepare` takes them all in this order.

use std::cell::Cell;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering};
use std::time::Duration;

use hrr_archive::api::Vendor;
use hrr_archive::blob::Compression;
use hrr_archive::diskspace::ReservePolicy;
use hrr_archive::{CaptureSettings, ProcessWriter};
use parking_lot::Mutex;

use crate::alloc::AllocTable;

/// Everything a shim needs once capture is on.
pub struct Capture {
    pub writer: AtomicPtr<ProcessWriter>,
    pub allocs: AllocTable,
}

impl Capture {
    pub fn writer(&self) -> &'static ProcessWriter {
        // SAFETY: the pointer always comes from Arc::into_raw of a writer that is never
        // released (writers live until the process ends), so it is valid for 'static.
        unsafe { &*self.writer.load(Ordering::Acquire) }
    }
}

static STATE: AtomicPtr<Capture> = AtomicPtr::new(std::ptr::null_mut());
static DISABLED: AtomicBool = AtomicBool::new(false);
static INIT_LOCK: Mutex<()> = Mutex::new(());
static CALLS_SEEN: AtomicU64 = AtomicU64::new(0);
static VENDOR: AtomicU64 = AtomicU64::new(0);

thread_local! {
    static IN_SHIM: Cell<bool> = const { Cell::new(false) };
}

fn note(msg: &str) {
    eprintln!("hrr-capture: {msg}");
}

/// Reads the capture configuration. `Ok(None)`: capture is off.
pub fn config_from_env() -> Result<Option<(PathBuf, CaptureSettings)>, String> {
    config_from(|k| std::env::var_os(k))
}

pub fn config_from(
    get: impl Fn(&str) -> Option<OsString>,
) -> Result<Option<(PathBuf, CaptureSettings)>, String> {
    let Some(out) = get("HRR_CAPTURE_OUTPUT") else {
        return Ok(None);
    };
    if out.to_string_lossy().trim().is_empty() {
        return Ok(None);
    }
    let mut s = CaptureSettings::default();
    let text = |k: &str| {
        get(k)
            .map(|v| v.to_string_lossy().trim().to_string())
            .filter(|v| !v.is_empty())
    };
    if let Some(c) = text("HRR_CAPTURE_COMPRESS") {
        s.compression = match c.as_str() {
            "none" | "off" | "0" => Compression::None,
            "zstd" => Compression::Zstd { level: 3 },
            other => match other.strip_prefix("zstd:").map(|l| l.parse::<i32>()) {
                Some(Ok(level)) if (1..=22).contains(&level) => Compression::Zstd { level },
                _ => {
                    return Err(format!(
                        "HRR_CAPTURE_COMPRESS={other:?} is not one of none, zstd, zstd:LEVEL (1-22)"
                    ))
                }
            },
        };
    }
    if let Some(ms) = text("HRR_CAPTURE_FLUSH_MS") {
        match ms.parse::<u64>() {
            Ok(v) if v > 0 => s.flush_interval = Duration::from_millis(v),
            _ => {
                return Err(format!(
                    "HRR_CAPTURE_FLUSH_MS={ms:?} is not a positive number of milliseconds"
                ))
            }
        }
    }
    if let Some(f) = text("HRR_CAPTURE_FSYNC") {
        (s.fsync, s.fsync_blobs) = match f.as_str() {
            "1" | "on" | "true" | "yes" | "events" => (true, false),
            "all" => (true, true),
            "0" | "off" | "false" | "no" => (false, false),
            other => {
                return Err(format!(
                    "HRR_CAPTURE_FSYNC={other:?} is not on (events), all (events and blobs) or off"
                ))
            }
        };
    }
    if let Some(r) = text("HRR_CAPTURE_DISK_RESERVE") {
        s.reserve =
            ReservePolicy::parse(&r).map_err(|e| format!("HRR_CAPTURE_DISK_RESERVE: {e}"))?;
    }
    Ok(Some((PathBuf::from(out), s)))
}

fn secure_execution() -> bool {
    // SAFETY: getauxval has no preconditions.
    unsafe { libc::getauxval(libc::AT_SECURE) != 0 }
}

/// Runs at library load: reports a secure-execution refusal and registers the exit notice.
extern "C" fn on_load() {
    let wants = std::env::var_os("HRR_CAPTURE_OUTPUT")
        .is_some_and(|v| !v.to_string_lossy().trim().is_empty());
    if !wants {
        DISABLED.store(true, Ordering::SeqCst);
        return;
    }
    if secure_execution() {
        DISABLED.store(true, Ordering::SeqCst);
        note("HRR_CAPTURE_OUTPUT ignored: this is a secure-execution (setuid/setgid/capabilities) process");
        return;
    }
    // SAFETY: registering a plain extern "C" fn with atexit.
    unsafe {
        libc::atexit(on_exit);
    }
}

#[used]
#[link_section = ".init_array"]
static ON_LOAD: extern "C" fn() = on_load;

/// Called by every shim: returns the capture to record into, or `None` when the call
/// must go straight through (capture off, or already inside a shim on this thread).
pub fn enter(vendor: Vendor) -> Option<(&'static Capture, ShimGuard)> {
    if DISABLED.load(Ordering::Relaxed) {
        return None;
    }
    let nested = IN_SHIM.try_with(|c| c.replace(true)).unwrap_or(true);
    if nested {
        return None;
    }
    let guard = ShimGuard;
    CALLS_SEEN.fetch_add(1, Ordering::Relaxed);
    let cap = match current() {
        Some(c) => c,
        None => init(vendor)?,
    };
    Some((cap, guard))
}

/// Resets the per-thread re-entrancy flag when a shim's capture work ends.
pub struct ShimGuard;
impl Drop for ShimGuard {
    fn drop(&mut self) {
        let _ = IN_SHIM.try_with(|c| c.set(false));
    }
}

pub fn current() -> Option<&'static Capture> {
    let p = STATE.load(Ordering::Acquire);
    // SAFETY: STATE only ever holds a leaked Box<Capture>, never freed.
    (!p.is_null()).then(|| unsafe { &*p })
}

fn init(vendor: Vendor) -> Option<&'static Capture> {
    let _g = INIT_LOCK.lock();
    if let Some(c) = current() {
        return Some(c);
    }
    if DISABLED.load(Ordering::SeqCst) {
        return None;
    }
    let (root, settings) = match config_from_env() {
        Ok(Some(c)) => c,
        Ok(None) => {
            DISABLED.store(true, Ordering::SeqCst);
            return None;
        }
        Err(e) => {
            DISABLED.store(true, Ordering::SeqCst);
            note(&format!("capture off: {e}"));
            return None;
        }
    };
    // SAFETY: getppid has no preconditions.
    let ppid = unsafe { libc::getppid() } as u32;
    let writer = match ProcessWriter::create(&root, settings, ppid) {
        Ok(w) => w,
        Err(e) => {
            DISABLED.store(true, Ordering::SeqCst);
            note(&format!("capture off: {e}"));
            return None;
        }
    };
    writer.start_flusher();
    writer.update_runtime(|r| r.vendor = vendor.as_str().into());
    VENDOR.store(vendor as u64 + 1, Ordering::Relaxed);
    note(&format!(
        "recording pid {} into {}",
        writer.pid(),
        writer.dir().display()
    ));
    let cap = Box::new(Capture {
        writer: AtomicPtr::new(std::sync::Arc::into_raw(writer) as *mut ProcessWriter),
        allocs: AllocTable::default(),
    });
    STATE.store(Box::into_raw(cap), Ordering::Release);
    crate::crash::install();
    // SAFETY: registering plain extern "C" fns; they follow the documented lock order.
    unsafe {
        libc::pthread_atfork(Some(fork_prepare), Some(fork_parent), Some(fork_child));
    }
    current()
}

extern "C" fn fork_prepare() {
    if let Some(c) = current() {
        crate::kernels::fork_prepare();
        c.allocs.fork_prepare();
        c.writer().fork_prepare();
    }
}

extern "C" fn fork_parent() {
    if let Some(c) = current() {
        // SAFETY: fork_prepare took these locks on this thread just before fork.
        unsafe {
            c.writer().fork_parent();
            c.allocs.fork_release();
            crate::kernels::fork_release();
        }
    }
}

extern "C" fn fork_child() {
    hrr_archive::writer::note_fork_in_child();
    if let Some(c) = current() {
        // SAFETY: only this thread exists in the child; the locks were taken by
        // fork_prepare in the parent's copy of this thread.
        unsafe {
            c.allocs.fork_release();
            crate::kernels::fork_release();
        }
        match c.writer().fork_child() {
            Ok(w) => {
                // The parent's writer is abandoned, never freed (its locks are held).
                c.writer.store(
                    std::sync::Arc::into_raw(w) as *mut ProcessWriter,
                    Ordering::Release,
                );
                note(&format!(
                    "forked child recording pid {} into {}",
                    c.writer().pid(),
                    c.writer().dir().display()
                ));
            }
            Err(e) => {
                DISABLED.store(true, Ordering::SeqCst);
                note(&format!("capture off in forked child: {e}"));
            }
        }
    }
}

/// Contains a panic raised while capturing: capture stops, the archive is marked
/// incomplete, and the shim goes on to return the real result.
pub fn guarded<T>(api: &str, f: impl FnOnce() -> T) -> Option<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(v) => Some(v),
        Err(p) => {
            let msg = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "non-string panic".into());
            DISABLED.store(true, Ordering::SeqCst);
            if let Some(c) = current() {
                c.writer()
                    .stop(&format!("internal error while capturing {api}: {msg}"));
            }
            note(&format!(
                "capture stopped: internal error while capturing {api}: {msg}"
            ));
            None
        }
    }
}

extern "C" fn on_exit() {
    let Some(c) = current() else {
        if CALLS_SEEN.load(Ordering::Relaxed) == 0 && executable_has_gpu_code() {
            note(
                "nothing recorded: this program carries GPU code but made no call through a shared \
                 CUDA or HIP runtime; it probably links the runtime statically (nvcc's default). \
                 Rebuild with `-cudart shared`.",
            );
        }
        return;
    };
    note_invisible_libraries(c.writer());
    DISABLED.store(true, Ordering::SeqCst);
    match c.writer().finish() {
        Ok(s) => {
            let state = if s.complete {
                "complete".to_string()
            } else {
                format!(
                    "INCOMPLETE ({})",
                    s.stop_reason.as_deref().unwrap_or("unknown reason")
                )
            };
            note(&format!(
                "pid {}: recorded {} events, {} blobs ({} bytes), {} code objects into {}: {state}",
                c.writer().pid(),
                s.events,
                s.blobs,
                s.blob_bytes,
                s.code_objects,
                s.dir.display()
            ));
        }
        Err(e) => note(&format!("could not finish the archive: {e}")),
    }
}

/// Vendor libraries that carry their own static copy of the runtime: their kernels and
/// copies never pass through the shared runtime, so the manifest must say so.
const STATIC_RUNTIME_LIBS: &[&str] = &[
    "libcublas",
    "libcublasLt",
    "libcudnn",
    "libcufft",
    "libcusparse",
    "libcusolver",
    "libcurand",
    "libnccl",
    "librocblas",
    "libhipblaslt",
    "libMIOpen",
];

fn note_invisible_libraries(w: &ProcessWriter) {
    let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else {
        return;
    };
    let mut seen = std::collections::BTreeSet::new();
    for line in maps.lines() {
        let Some(path) = line.split_whitespace().nth(5) else {
            continue;
        };
        let file = path.rsplit('/').next().unwrap_or(path);
        let matches = STATIC_RUNTIME_LIBS
            .iter()
            .any(|l| file.starts_with(&format!("{l}.so")) || file.starts_with(&format!("{l}64")));
        if matches && seen.insert(file.to_string()) {
            {
                w.note_unreplayable(
                    file,
                    "library loaded with its own static GPU runtime: its kernel launches and copies bypass the shared runtime and were not recorded",
                );
            }
        }
    }
}

/// Whether the main executable embeds CUDA or HIP device code (section names).
fn executable_has_gpu_code() -> bool {
    let Ok(bytes) = std::fs::read("/proc/self/exe") else {
        return false;
    };
    [&b".nv_fatbin"[..], b"__hip_fatbin", b".hip_fatbin"]
        .iter()
        .any(|needle| bytes.windows(needle.len()).any(|w| w == *needle))
}

pub fn vendor() -> Option<Vendor> {
    match VENDOR.load(Ordering::Relaxed) {
        1 => Some(Vendor::Cuda),
        2 => Some(Vendor::Hip),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn cfg(pairs: &[(&str, &str)]) -> Result<Option<(PathBuf, CaptureSettings)>, String> {
        let m: HashMap<String, OsString> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), OsString::from(v)))
            .collect();
        config_from(|k| m.get(k).cloned())
    }

    #[test]
    fn empty_or_blank_output_means_off() {
        assert!(cfg(&[]).unwrap().is_none());
        assert!(cfg(&[("HRR_CAPTURE_OUTPUT", "")]).unwrap().is_none());
        assert!(cfg(&[("HRR_CAPTURE_OUTPUT", "  ")]).unwrap().is_none());
        assert!(cfg(&[("HRR_CAPTURE_OUTPUT", "/tmp/x")]).unwrap().is_some());
    }

    #[test]
    fn bad_settings_are_named() {
        let e = cfg(&[
            ("HRR_CAPTURE_OUTPUT", "/tmp/x"),
            ("HRR_CAPTURE_COMPRESS", "lz5"),
        ])
        .unwrap_err();
        assert!(
            e.contains("HRR_CAPTURE_COMPRESS") && e.contains("lz5"),
            "{e}"
        );
        let e = cfg(&[
            ("HRR_CAPTURE_OUTPUT", "/tmp/x"),
            ("HRR_CAPTURE_FLUSH_MS", "0"),
        ])
        .unwrap_err();
        assert!(e.contains("HRR_CAPTURE_FLUSH_MS"), "{e}");
        let e = cfg(&[
            ("HRR_CAPTURE_OUTPUT", "/tmp/x"),
            ("HRR_CAPTURE_DISK_RESERVE", "much"),
        ])
        .unwrap_err();
        assert!(e.contains("HRR_CAPTURE_DISK_RESERVE"), "{e}");
        let (_, s) = cfg(&[
            ("HRR_CAPTURE_OUTPUT", "/tmp/x"),
            ("HRR_CAPTURE_COMPRESS", "zstd:5"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(s.compression, Compression::Zstd { level: 5 });
    }

    #[test]
    fn fsync_levels() {
        let level = |v: &str| {
            cfg(&[("HRR_CAPTURE_OUTPUT", "/tmp/x"), ("HRR_CAPTURE_FSYNC", v)])
                .map(|c| c.map(|(_, s)| (s.fsync, s.fsync_blobs)))
        };
        let (_, default) = cfg(&[("HRR_CAPTURE_OUTPUT", "/tmp/x")]).unwrap().unwrap();
        assert_eq!((default.fsync, default.fsync_blobs), (true, false));
        assert_eq!(level("on"), Ok(Some((true, false))));
        assert_eq!(level("all"), Ok(Some((true, true))));
        assert_eq!(level("off"), Ok(Some((false, false))));
        let e = level("sometimes").unwrap_err();
        assert!(
            e.contains("HRR_CAPTURE_FSYNC") && e.contains("sometimes"),
            "{e}"
        );
    }
}
