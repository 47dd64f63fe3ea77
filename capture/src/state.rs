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
use std::os::raw::c_int;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering};

use hrr_archive::api::Vendor;
use hrr_archive::payload::PayloadWriter;
use hrr_archive::record::RECORD_FLAG_INCOMPLETE;
use hrr_archive::sync::{ForkLock, Mutex};
use hrr_archive::writer::{current_tid, SignalFlush};
use hrr_archive::ProcessWriter;

use crate::alloc::AllocTable;
use crate::config::{self, Config};
use crate::crash::AfterFlush;
use crate::registry::KernelRegistry;

/// Everything a shim needs once capture is on.
pub struct Capture {
    /// This process's writer; null in a forked child until its first runtime call.
    pub writer: AtomicPtr<ProcessWriter>,
    /// In a forked child: the parent's writer, abandoned at the fork (its directory holds
    /// the code objects the parent registered, which the child's launches name).
    pub forked_from: AtomicPtr<ProcessWriter>,
    pub allocs: AllocTable,
    /// Live arrays and texture/surface objects.
    pub objects: crate::objects::ObjectTable,
    pub kernels: KernelRegistry,
    /// HRR_CAPTURE_PINNED_SNAPSHOT_MAX.
    pub pinned_snapshot_max: u64,
    /// HRR_CAPTURE_SNAPSHOTS=every (`config`).
    pub snapshots_every: bool,
    /// HRR_CAPTURE_MAPPED_OUTPUT_MAX.
    pub mapped_output_max: u64,
}

impl Capture {
    /// The writer; only after [`enter`] returned this capture (which opens it).
    #[inline]
    pub fn writer(&self) -> &'static ProcessWriter {
        // SAFETY: enter() made the pointer non-null, and it always comes from
        // Arc::into_raw of a writer that is never released, so it is valid for 'static.
        unsafe { &*self.writer.load(Ordering::Acquire) }
    }

    /// The writer, if this process opened one.
    pub fn writer_opt(&self) -> Option<&'static ProcessWriter> {
        let p = self.writer.load(Ordering::Acquire);
        // SAFETY: as for writer(): a leaked Arc's pointer, or null.
        (!p.is_null()).then(|| unsafe { &*p })
    }

    /// Appends a hand-written record; `incomplete` says what it lacks (the record is then
    /// flagged and the manifest names the reason against `api`). Its sequence id, unless
    /// the writer refused it (capture stopped).
    #[inline]
    pub fn record(
        &self,
        id: u16,
        ret: i32,
        payload: &PayloadWriter,
        incomplete: Option<&str>,
        api: &str,
    ) -> Option<u64> {
        if !crate::range_gate::keeps(id) {
            return None;
        }
        let flags = if incomplete.is_some() {
            RECORD_FLAG_INCOMPLETE
        } else {
            0
        };
        let w = self.writer();
        let seq = w.append(id, flags, current_tid(), ret, payload.as_bytes());
        if let (Some(seq), Some(why)) = (seq, incomplete) {
            w.note_capture_failure(seq, api, why);
        }
        seq
    }
}

static STATE: AtomicPtr<Capture> = AtomicPtr::new(std::ptr::null_mut());
static DISABLED: AtomicBool = AtomicBool::new(false);
static INIT_LOCK: Mutex<()> = Mutex::new(());
static CALLS_SEEN: AtomicU64 = AtomicU64::new(0);

thread_local! {
    static IN_SHIM: Cell<bool> = const { Cell::new(false) };
}

pub fn note(msg: &str) {
    crate::say::say(msg);
}

fn secure_execution() -> bool {
    // SAFETY: getauxval has no preconditions.
    unsafe { libc::getauxval(libc::AT_SECURE) != 0 }
}

/// Runs at library load: reports a secure-execution refusal, makes a relative output
/// path absolute, and registers the exit notice.
extern "C" fn on_load() {
    let output = std::env::var_os("HRR_CAPTURE_OUTPUT");
    if !config::wanted(output.clone()) {
        DISABLED.store(true, Ordering::SeqCst);
        return;
    }
    if secure_execution() {
        DISABLED.store(true, Ordering::SeqCst);
        note("HRR_CAPTURE_OUTPUT ignored: this is a secure-execution (setuid/setgid/capabilities) process");
        return;
    }
    // Resolved now, before the program can change directory: the archive goes where the
    // variable named when the program started, and programs it execs inherit the same
    // absolute path. Only a relative value is rewritten; the program has not started
    // (library constructors run before main), so no thread reads the environment yet.
    let store = std::env::var_os("HRR_CAPTURE_CODE_STORE").filter(|s| !s.is_empty());
    if let Ok(cwd) = std::env::current_dir() {
        for (var, value) in [
            ("HRR_CAPTURE_OUTPUT", output),
            ("HRR_CAPTURE_CODE_STORE", store),
        ] {
            let Some(v) = value else { continue };
            let abs = config::absolute(&v, &cwd);
            if abs.as_os_str() != v {
                std::env::set_var(var, abs);
            }
        }
    }
    // SAFETY: registering a plain extern "C" fn with atexit.
    unsafe {
        libc::atexit(on_exit);
    }
    // Resolved now: `_exit` may first be called from a signal handler, where dlsym is not
    // safe to call.
    let _ = (real_exit().get(), real_exit_upper().get());
}

/// C type of `_exit` and `_Exit`.
type ExitFn = unsafe extern "C" fn(c_int) -> !;

fn real_exit() -> &'static crate::real::Real<ExitFn> {
    real!(_exit: ExitFn)
}

fn real_exit_upper() -> &'static crate::real::Real<ExitFn> {
    real!(_Exit: ExitFn)
}

/// Before `_exit`/`_Exit` (which skip atexit, so the exit notice never runs): every
/// buffered event is written, the way a fatal signal writes it (`flush_at_exit`: no
/// allocation, never waiting for a lock this thread holds). The archive stays
/// incomplete, with every event appended before the call. A vfork child shares its
/// parent's memory and so its writer, whose pid is not the child's: it touches nothing.
fn flush_before_exit() {
    let Some(w) = current().and_then(Capture::writer_opt) else {
        return;
    };
    // SAFETY: getpid has no preconditions (async-signal-safe).
    if w.pid() != unsafe { libc::getpid() } as u32 {
        return;
    }
    DISABLED.store(true, Ordering::SeqCst);
    let _ = w.flush_at_exit();
}

/// Leaves through the real function, or, were there none, the system call itself.
fn exit_through(real: &'static crate::real::Real<ExitFn>, status: c_int) -> ! {
    match real.get() {
        // SAFETY: the C library's own `_exit`/`_Exit`, with the program's status.
        Some(f) => unsafe { f(status) },
        // SAFETY: exit_group ends every thread of the process; it does not return.
        None => unsafe {
            libc::syscall(libc::SYS_exit_group, status);
            libc::abort()
        },
    }
}

/// `_exit(2)`: what capture buffered is written first (a forked child usually leaves
/// this way, and its last flush interval would be lost), then the real `_exit`.
///
/// # Safety
/// Called by the program in place of the C library's `_exit`.
#[no_mangle]
pub unsafe extern "C" fn _exit(status: c_int) -> ! {
    flush_before_exit();
    exit_through(real_exit(), status)
}

/// `_Exit(3)`: as `_exit`.
///
/// # Safety
/// Called by the program in place of the C library's `_Exit`.
#[no_mangle]
#[allow(non_snake_case)]
pub unsafe extern "C" fn _Exit(status: c_int) -> ! {
    flush_before_exit();
    exit_through(real_exit_upper(), status)
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
    // Read first: a store to a line every thread shares only on the first call.
    if CALLS_SEEN.load(Ordering::Relaxed) == 0 {
        CALLS_SEEN.store(1, Ordering::Relaxed);
    }
    let cap = match current() {
        Some(c) => c,
        None => init(vendor)?,
    };
    if cap.writer.load(Ordering::Relaxed).is_null() {
        open_forked_writer(cap, vendor)?;
    }
    Some((cap, guard))
}

/// Whether this thread is inside a shim's own work (a call from there is the runtime's
/// or capture's, not the program's).
pub fn in_shim() -> bool {
    IN_SHIM.try_with(Cell::get).unwrap_or(true)
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
    let Config {
        output,
        settings,
        pinned_snapshot_max,
        mapped_output_max,
        range,
        snapshots_every,
    } = match config::from_env() {
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
    let writer = match ProcessWriter::create_for(&output, settings, ppid, vendor.as_str()) {
        Ok(w) => w,
        Err(e) => {
            DISABLED.store(true, Ordering::SeqCst);
            note(&format!("capture off: {e}"));
            return None;
        }
    };
    writer.start_flusher();
    crate::range_gate::configure(range);
    note(&format!(
        "recording pid {} into {}",
        writer.pid(),
        writer.dir().display()
    ));
    if let Some(why) = writer.code_store_refused() {
        note(&format!(
            "warning: HRR_CAPTURE_CODE_STORE not used, code objects go into the archive: {why}"
        ));
    }
    let cap = Box::new(Capture {
        writer: AtomicPtr::new(std::sync::Arc::into_raw(writer) as *mut ProcessWriter),
        forked_from: AtomicPtr::new(std::ptr::null_mut()),
        allocs: AllocTable::default(),
        objects: Default::default(),
        kernels: KernelRegistry::default(),
        pinned_snapshot_max,
        mapped_output_max,
        snapshots_every,
    });
    STATE.store(Box::into_raw(cap), Ordering::Release);
    crate::crash::install(flush_buffered);
    current()
}

/// A forked child's first runtime call: its own `pid-<pid>/`, with hard links to the code
/// objects its parent registered (its launches name them; each process directory stays
/// self-contained). Opened here rather than at the fork, so a child that only execs
/// leaves nothing and the program it execs records into `pid-<pid>/` itself.
#[cold]
fn open_forked_writer(cap: &'static Capture, vendor: Vendor) -> Option<()> {
    let _g = INIT_LOCK.lock();
    if !cap.writer.load(Ordering::Acquire).is_null() {
        return Some(());
    }
    let parent = cap.forked_from.load(Ordering::Acquire);
    if parent.is_null() || DISABLED.load(Ordering::SeqCst) {
        return None;
    }
    // SAFETY: forked_from holds a leaked writer (abandoned, never freed); only its
    // immutable fields (root, directory, settings, pid) are read.
    let parent: &'static ProcessWriter = unsafe { &*parent };
    let w = match ProcessWriter::create_for(
        parent.root(),
        parent.settings().clone(),
        parent.pid(),
        vendor.as_str(),
    ) {
        Ok(w) => w,
        Err(e) => {
            DISABLED.store(true, Ordering::SeqCst);
            note(&format!("capture off in forked child: {e}"));
            return None;
        }
    };
    for co in cap.kernels.code_objects() {
        if let Err(e) = w.link_code_object(parent.dir(), co) {
            note(&format!("forked child: code object {co}: {e}"));
        }
    }
    w.start_flusher();
    note(&format!(
        "forked child recording pid {} into {}",
        w.pid(),
        w.dir().display()
    ));
    cap.writer.store(
        std::sync::Arc::into_raw(w) as *mut ProcessWriter,
        Ordering::Release,
    );
    Some(())
}

/// What a fatal signal runs before the process dies: every buffered event reaches the
/// disk (`flush_for_signal`: async-signal-safe), or the thread the signal interrupted
/// holds the buffer and writes it, then raises the signal, when it releases it.
fn flush_buffered(sig: c_int) -> AfterFlush {
    match current().and_then(Capture::writer_opt) {
        Some(w) => match w.flush_for_signal(sig) {
            SignalFlush::Deferred => AfterFlush::LeftToThread,
            SignalFlush::Written | SignalFlush::Busy => AfterFlush::Raise,
        },
        None => AfterFlush::Raise,
    }
}

/// The lock that `init` and a forked child's first call hold, for the fork protocol
/// (`fork.rs`): outermost of all.
pub fn init_lock() -> &'static dyn ForkLock {
    &INIT_LOCK
}

/// The capture's own tables' locks, in the lock order, for the fork protocol.
pub fn table_locks(c: &'static Capture) -> [&'static dyn ForkLock; 4] {
    let [k] = c.kernels.fork_locks();
    let [a] = c.allocs.fork_locks();
    let [arrays, objects] = c.objects.fork_locks();
    [k, a, arrays, objects]
}

/// In a forked child, its locks reset: cached thread ids and symbols the parent recorded
/// are forgotten, and the parent's writer is abandoned, never freed (its locks are held
/// and its buffer holds the parent's events). The child opens its own on its first
/// runtime call (`open_forked_writer`).
pub fn fork_child_forget() {
    hrr_archive::writer::note_fork_in_child();
    if let Some(c) = current() {
        c.kernels.fork_child_forget_symbols();
        let w = c.writer.swap(std::ptr::null_mut(), Ordering::AcqRel);
        if !w.is_null() {
            // SAFETY: a leaked writer; fork_abandon only closes its inherited descriptor.
            unsafe { (*w).fork_abandon() };
            c.forked_from.store(w, Ordering::Release);
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
            if let Some(w) = current().and_then(Capture::writer_opt) {
                w.stop(&format!("internal error while capturing {api}: {msg}"));
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
        let foreign = crate::namespaces::foreign_paths();
        if !foreign.is_empty() {
            note(&format!(
                "nothing recorded: {} loaded into a link-map namespace of its own (dlmopen), \
                 where capture is not; the GPU work done through it was not seen",
                foreign.join(", ")
            ));
        } else if CALLS_SEEN.load(Ordering::Relaxed) == 0 && executable_has_gpu_code() {
            note(
                "nothing recorded: this program carries GPU code but made no call through a shared \
                 CUDA or HIP runtime; it probably links the runtime statically (nvcc's default). \
                 Rebuild with `-cudart shared`.",
            );
        }
        return;
    };
    // A forked child that made no runtime call has nothing to finish.
    let Some(w) = c.writer_opt() else { return };
    if let Some(said) = crate::range_gate::at_exit(w) {
        note(&said);
    }
    crate::private_runtime::record_at_exit(w);
    crate::namespaces::record_at_exit(w);
    DISABLED.store(true, Ordering::SeqCst);
    match w.finish() {
        Ok(s) => {
            let state = if s.complete {
                "complete".to_string()
            } else {
                format!(
                    "INCOMPLETE ({})",
                    s.stop_reason.as_deref().unwrap_or("unknown reason")
                )
            };
            let in_store = match s.code_objects_in_store {
                0 => String::new(),
                n => format!(" ({n} in the code store)"),
            };
            note(&format!(
                "pid {}: recorded {} events, {} blobs ({} bytes), {} code objects{in_store} into {}: {state}",
                w.pid(),
                s.events,
                s.blobs,
                s.blob_bytes,
                s.code_objects,
                s.dir.display()
            ));
            let settled = crate::in_flight::skips();
            if settled > 0 {
                note(&format!(
                    "pid {}: {settled} snapshots of managed or mapped memory not taken: an earlier launch reaching the memory was still in flight (HRR_CAPTURE_SNAPSHOTS=every takes them)",
                    w.pid()
                ));
            }
            if s.complete && crate::range_gate::started() {
                prune_range_setup(&s.dir, w.pid());
            }
        }
        Err(e) => note(&format!("could not finish the archive: {e}")),
    }
}

/// A range archive keeps only the set-up its range uses (`hrr_archive::prune`): the
/// registrations and loads of code objects nothing in it names are dropped, said here.
fn prune_range_setup(dir: &std::path::Path, pid: u32) {
    match hrr_archive::prune::prune_process(dir, pid, &hrr_archive::Limits::default()) {
        Ok(Some(p)) => note(&format!(
            "pid {pid}: the range's set-up cut to what it uses: {} of {} code registrations and loads dropped, with {} code objects ({} bytes)",
            p.events, p.candidates, p.code_objects, p.code_object_bytes
        )),
        Ok(None) => {}
        Err(e) => note(&format!(
            "warning: the range archive keeps all its set-up, unused included: {e}"
        )),
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
