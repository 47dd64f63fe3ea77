//! The process-wide capture: it owns the process's capture state (the archive writer,
//! the allocation table, the kernel registry), created on the first runtime call so
//! processes that never touch the GPU leave nothing behind; the re-entrancy guard,
//! fork handlers, the crash flush it hands to `crash`, panic containment and the exit
//! notice.
//!
//! Lock order, outermost first: kernel registry → allocation table → the writer's
//! file → buf → blobs → meta. No code holds a capture lock while calling the writer;
//! `fork_prepare` takes them all in this order.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering};

use hrr_archive::api::Vendor;
use hrr_archive::payload::PayloadWriter;
use hrr_archive::record::RECORD_FLAG_INCOMPLETE;
use hrr_archive::writer::current_tid;
use hrr_archive::ProcessWriter;
use parking_lot::Mutex;

use crate::alloc::AllocTable;
use crate::config::{self, Config};
use crate::registry::KernelRegistry;

/// Everything a shim needs once capture is on.
pub struct Capture {
    pub writer: AtomicPtr<ProcessWriter>,
    pub allocs: AllocTable,
    pub kernels: KernelRegistry,
}

impl Capture {
    pub fn writer(&self) -> &'static ProcessWriter {
        // SAFETY: the pointer always comes from Arc::into_raw of a writer that is never
        // released (writers live until the process ends), so it is valid for 'static.
        unsafe { &*self.writer.load(Ordering::Acquire) }
    }

    /// Appends a hand-written record; `incomplete` says what it lacks (the record is then
    /// flagged and the manifest names the reason against `api`).
    #[inline]
    pub fn record(
        &self,
        id: u16,
        ret: i32,
        payload: &PayloadWriter,
        incomplete: Option<&str>,
        api: &str,
    ) {
        let flags = if incomplete.is_some() {
            RECORD_FLAG_INCOMPLETE
        } else {
            0
        };
        let w = self.writer();
        if let Some(seq) = w.append(id, flags, current_tid(), ret, payload.as_bytes()) {
            if let Some(why) = incomplete {
                w.note_capture_failure(seq, api, why);
            }
        }
    }
}

static STATE: AtomicPtr<Capture> = AtomicPtr::new(std::ptr::null_mut());
static DISABLED: AtomicBool = AtomicBool::new(false);
static INIT_LOCK: Mutex<()> = Mutex::new(());
static CALLS_SEEN: AtomicU64 = AtomicU64::new(0);

thread_local! {
    static IN_SHIM: Cell<bool> = const { Cell::new(false) };
}

fn note(msg: &str) {
    eprintln!("hrr-capture: {msg}");
}

fn secure_execution() -> bool {
    // SAFETY: getauxval has no preconditions.
    unsafe { libc::getauxval(libc::AT_SECURE) != 0 }
}

/// Runs at library load: reports a secure-execution refusal and registers the exit notice.
extern "C" fn on_load() {
    if !config::wanted(std::env::var_os("HRR_CAPTURE_OUTPUT")) {
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
    let Config { output, settings } = match config::from_env() {
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
    let writer = match ProcessWriter::create(&output, settings, ppid) {
        Ok(w) => w,
        Err(e) => {
            DISABLED.store(true, Ordering::SeqCst);
            note(&format!("capture off: {e}"));
            return None;
        }
    };
    writer.start_flusher();
    writer.update_runtime(|r| r.vendor = vendor.as_str().into());
    note(&format!(
        "recording pid {} into {}",
        writer.pid(),
        writer.dir().display()
    ));
    let cap = Box::new(Capture {
        writer: AtomicPtr::new(std::sync::Arc::into_raw(writer) as *mut ProcessWriter),
        allocs: AllocTable::default(),
        kernels: KernelRegistry::default(),
    });
    STATE.store(Box::into_raw(cap), Ordering::Release);
    crate::crash::install(flush_buffered);
    // SAFETY: registering plain extern "C" fns; they follow the documented lock order.
    unsafe {
        libc::pthread_atfork(Some(fork_prepare), Some(fork_parent), Some(fork_child));
    }
    current()
}

/// What a fatal signal runs before the process dies: buffered events reach the disk
/// (`emergency_flush` only try-locks and calls write(2)).
fn flush_buffered() {
    if let Some(c) = current() {
        c.writer().emergency_flush();
    }
}

extern "C" fn fork_prepare() {
    if let Some(c) = current() {
        c.kernels.fork_prepare();
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
            c.kernels.fork_release();
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
            c.kernels.fork_release();
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
