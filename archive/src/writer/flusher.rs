//! The flusher thread: it writes idle buffers every flush interval, so a program that
//! stops making calls still gets its events to disk, and a killed one loses at most one
//! interval.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};

use super::ProcessWriter;

impl ProcessWriter {
    /// Starts a thread that flushes idle buffers every interval (so a program that stops
    /// making calls still gets its events to disk). It ends when the writer is dropped or
    /// finished.
    pub fn start_flusher(self: &Arc<Self>) {
        let weak: Weak<ProcessWriter> = Arc::downgrade(self);
        let interval = self.settings.flush_interval;
        self.flusher_running.store(true, Ordering::Relaxed);
        let spawned = std::thread::Builder::new()
            .name("hrr-flush".into())
            .spawn(move || {
                let mut last = std::time::Instant::now();
                loop {
                    // Sleep until the interval since the last checkpoint began passes (a slow
                    // fsync does not stretch the cadence) or an appending thread fills the buffer.
                    let woken_early = {
                        let Some(w) = weak.upgrade() else { return };
                        let mut wake = w.flush_wake.lock();
                        let left = interval.saturating_sub(last.elapsed());
                        if !*wake && !left.is_zero() {
                            w.flush_cv.wait_for(&mut wake, left);
                        }
                        std::mem::take(&mut *wake)
                    };
                    let Some(w) = weak.upgrade() else { return };
                    if w.log.buf.lock().closed || w.stopped.load(Ordering::Relaxed) {
                        w.flusher_running.store(false, Ordering::Relaxed);
                        return;
                    }
                    if !woken_early {
                        // Make the checkpoint's interval test true for an idle buffer.
                        let mut b = w.log.buf.lock();
                        b.last_flush_ns =
                            b.last_flush_ns.saturating_sub(interval.as_nanos() as u64);
                    }
                    last = std::time::Instant::now();
                    w.checkpoint();
                }
            });
        if spawned.is_err() {
            self.flusher_running.store(false, Ordering::Relaxed);
        }
    }
}
