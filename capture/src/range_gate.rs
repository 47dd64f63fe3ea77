//! The range gate (`HRR_CAPTURE_RANGE`, issue 23): which phase of a range capture the
//! process is in, and so whether a record is kept. Every record path asks it; it depends
//! on nothing of capture's state (the range's start and stop, with the snapshot, are
//! `range`'s).

use std::os::raw::c_int;
use std::sync::atomic::{AtomicI64, AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::sync::OnceLock;

use hrr_contract::CaptureRange;

use hrr_archive::api::{semantic, work};
use hrr_archive::ProcessWriter;

/// No range asked for: everything is recorded.
pub const NONE: u8 = 0;
pub const BEFORE: u8 = 1;
pub const INSIDE: u8 = 2;
pub const AFTER: u8 = 3;

pub static PHASE: AtomicU8 = AtomicU8::new(NONE);
/// Which profiler range to record (1 = the first).
pub static WANTED: AtomicU32 = AtomicU32::new(0);
/// Profiler starts seen so far.
pub static STARTS: AtomicU32 = AtomicU32::new(0);
/// Stream captures begun and not ended (their calls build graphs: always kept).
pub static OPEN_CAPTURES: AtomicI64 = AtomicI64::new(0);
pub static SNAPSHOT_BYTES: AtomicU64 = AtomicU64::new(0);
pub static SNAPSHOT_ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
pub static SNAPSHOT_NS: AtomicU64 = AtomicU64::new(0);

/// Why the range asked for cannot be seen in this process, when it cannot (an NVTX
/// tool already named: `nvtx::prepare`); said at exit.
static BLOCKED: OnceLock<String> = OnceLock::new();

/// Records why the range asked for cannot be seen (the first reason is kept).
pub fn set_blocked(why: String) {
    let _ = BLOCKED.set(why);
}

/// The range asked for, once the configuration is read.
static RANGE: OnceLock<CaptureRange> = OnceLock::new();

/// The trigger's name in records and messages: `profiler` or `nvtx:NAME`.
pub fn trigger() -> String {
    match RANGE.get() {
        Some(CaptureRange::Nvtx { name, .. }) => format!("nvtx:{name}"),
        _ => "profiler".to_string(),
    }
}

/// The NVTX (or roctx) range name asked for, when the range is one.
pub fn nvtx_name() -> Option<&'static str> {
    match RANGE.get() {
        Some(CaptureRange::Nvtx { name, .. }) => Some(name),
        _ => None,
    }
}

/// Whether the range asked for is a profiler range.
pub fn wants_profiler() -> bool {
    matches!(RANGE.get(), Some(CaptureRange::Profiler { .. }))
}

/// Called once the configuration is read: `Some(r)` records only that range.
pub fn configure(range: Option<CaptureRange>) {
    if let Some(r) = range {
        WANTED.store(r.occurrence(), Ordering::SeqCst);
        let _ = RANGE.set(r);
        PHASE.store(BEFORE, Ordering::SeqCst);
    }
}

/// Whether a record of `id` is kept now.
#[inline]
pub fn keeps(id: u16) -> bool {
    match PHASE.load(Ordering::Relaxed) {
        NONE | INSIDE => true,
        BEFORE => !work::is_work(id) || OPEN_CAPTURES.load(Ordering::Relaxed) > 0,
        // The output of an asynchronous copy made inside the range, read once it
        // completed: part of the range.
        _ => id == semantic::COPY_OUTPUT,
    }
}

/// After a table row's call: stream captures opened and closed.
#[inline]
pub fn after_row(id: u16, ret: c_int) {
    if PHASE.load(Ordering::Relaxed) == NONE {
        return;
    }
    if work::begins_capture(id) && ret == 0 {
        OPEN_CAPTURES.fetch_add(1, Ordering::SeqCst);
    } else if work::ends_capture(id) {
        let _ = OPEN_CAPTURES
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| Some((n - 1).max(0)));
    }
}

/// Whether the range asked for started (its set-up may then be pruned at exit).
pub fn started() -> bool {
    matches!(PHASE.load(Ordering::SeqCst), INSIDE | AFTER)
}

/// What the range holds, said at exit (`warning:` first when it never started, and then
/// noted unreplayable in `w`); None when no range was asked for.
pub fn at_exit(w: &ProcessWriter) -> Option<String> {
    let n = WANTED.load(Ordering::SeqCst);
    match PHASE.load(Ordering::SeqCst) {
        NONE => None,
        BEFORE => {
            let trigger = trigger();
            let mut why = format!(
                "HRR_CAPTURE_RANGE={trigger}:{n}: the program started {} {} range(s), so range {n} never started; the archive holds set-up calls only",
                STARTS.load(Ordering::SeqCst),
                match nvtx_name() {
                    Some(name) => format!("NVTX or roctx {name:?}"),
                    None => "profiler".to_string(),
                }
            );
            if let Some(blocked) = BLOCKED.get() {
                why.push_str(&format!(" ({blocked})"));
            }
            w.note_unreplayable("HRR_CAPTURE_RANGE", &why);
            Some(format!("warning: {why}"))
        }
        phase => Some(format!(
            "range {}:{n}: snapshot of {} allocations, {} bytes in {:.1} ms at its start; {}",
            trigger(),
            SNAPSHOT_ALLOCATIONS.load(Ordering::SeqCst),
            SNAPSHOT_BYTES.load(Ordering::SeqCst),
            SNAPSHOT_NS.load(Ordering::SeqCst) as f64 / 1e6,
            if phase == AFTER {
                "ended at the matching stop"
            } else {
                "still open at exit"
            }
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hrr_archive::api::id;

    #[test]
    fn before_the_range_work_is_left_out_unless_a_stream_captures() {
        // The phases as seen by one record kind each (the statics are process-wide, so
        // one test walks them in order).
        assert!(keeps(id::Memcpy), "no range asked for: everything is kept");
        configure(Some(CaptureRange::Profiler { occurrence: 2 }));
        assert!(!keeps(id::Memcpy) && !keeps(semantic::LAUNCH_KERNEL));
        assert!(keeps(id::Malloc) && keeps(semantic::MODULE_LOAD));
        after_row(id::StreamBeginCapture, 0);
        assert!(
            keeps(id::MemcpyAsync),
            "a capturing stream's copy builds a graph"
        );
        after_row(id::StreamEndCapture, 0);
        assert!(!keeps(id::MemcpyAsync));
        PHASE.store(INSIDE, Ordering::SeqCst);
        assert!(keeps(id::Memcpy) && keeps(id::Malloc));
        PHASE.store(AFTER, Ordering::SeqCst);
        assert!(!keeps(id::Malloc) && !keeps(id::Memcpy));
        PHASE.store(NONE, Ordering::SeqCst);
    }
}
