//! The range gate (`HRR_CAPTURE_RANGE`, issue 23): which phase of a range capture the
//! process is in, and so whether a record is kept. Every record path asks it; it depends
//! on nothing of capture's state (the range's start and stop, with the snapshot, are
//! `range`'s).

use std::os::raw::c_int;
use std::sync::atomic::{AtomicI64, AtomicU32, AtomicU64, AtomicU8, Ordering};

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

/// The trigger's name in records and messages.
pub const TRIGGER: &str = "profiler";

/// Called once the configuration is read: `Some(n)` records only the n-th range.
pub fn configure(occurrence: Option<u32>) {
    if let Some(n) = occurrence {
        WANTED.store(n, Ordering::SeqCst);
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

/// What the range holds, said at exit (`warning:` first when it never started, and then
/// noted unreplayable in `w`); None when no range was asked for.
pub fn at_exit(w: &ProcessWriter) -> Option<String> {
    let n = WANTED.load(Ordering::SeqCst);
    match PHASE.load(Ordering::SeqCst) {
        NONE => None,
        BEFORE => {
            let why = format!(
                "HRR_CAPTURE_RANGE={TRIGGER}:{n}: the program started {} profiler range(s), so range {n} never started; the archive holds set-up calls only",
                STARTS.load(Ordering::SeqCst)
            );
            w.note_unreplayable("HRR_CAPTURE_RANGE", &why);
            Some(format!("warning: {why}"))
        }
        phase => Some(format!(
            "range {TRIGGER}:{n}: snapshot of {} allocations, {} bytes in {:.1} ms at its start; {}",
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
        configure(Some(2));
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
