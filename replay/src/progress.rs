//! `--progress SECONDS`: a heartbeat on stderr while a replay runs (events done of the
//! process's total, kernels launched, D2H checks passed and failed, and the event running
//! now with how long it has run), so a long replay shows it moves and a slow one where it
//! is. On by default (every 10 s) when stderr is a terminal. The engine stores its
//! counters after each event (relaxed atomic stores); a thread prints.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The period when stderr is a terminal and no `--progress` was given.
pub const DEFAULT_TERMINAL_S: u64 = 10;

static ARMED: AtomicBool = AtomicBool::new(false);
static PID: AtomicU32 = AtomicU32::new(0);
static DONE: AtomicU64 = AtomicU64::new(0);
static TOTAL: AtomicU64 = AtomicU64::new(0);
static KERNELS: AtomicU64 = AtomicU64::new(0);
static PASSED: AtomicU64 = AtomicU64::new(0);
static FAILED: AtomicU64 = AtomicU64::new(0);
/// The running event's sequence id plus one (0: none), and when it began (ms since start).
static RUNNING: AtomicU64 = AtomicU64::new(0);
static SINCE_MS: AtomicU64 = AtomicU64::new(0);
static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();

fn now_ms() -> u64 {
    START.get_or_init(Instant::now).elapsed().as_millis() as u64
}

/// What one heartbeat says: a pure function of the counters, for the tests.
#[allow(clippy::too_many_arguments)]
pub fn line(
    elapsed: Duration,
    pid: u32,
    done: u64,
    total: u64,
    kernels: u64,
    passed: u64,
    failed: u64,
    running: Option<(u64, Duration)>,
) -> String {
    let now = match running {
        Some((seq, ran)) if ran >= Duration::from_secs(1) => {
            format!("; seq {seq} running for {:.0} s", ran.as_secs_f64())
        }
        _ => String::new(),
    };
    format!(
        "hrr-replay: progress {:.0} s: pid {pid} event {done} of {total}, {kernels} kernels, D2H {passed} pass / {failed} fail{now}",
        elapsed.as_secs_f64()
    )
}

/// Starts the heartbeat: a line every `every` on stderr.
pub fn arm(every: Duration) {
    now_ms();
    if ARMED.swap(true, Ordering::SeqCst) {
        return;
    }
    let _ = std::thread::Builder::new()
        .name("hrr-progress".into())
        .spawn(move || loop {
            std::thread::sleep(every);
            let running = match RUNNING.load(Ordering::Relaxed) {
                0 => None,
                s => Some((
                    s - 1,
                    Duration::from_millis(
                        now_ms().saturating_sub(SINCE_MS.load(Ordering::Relaxed)),
                    ),
                )),
            };
            let text = line(
                Duration::from_millis(now_ms()),
                PID.load(Ordering::Relaxed),
                DONE.load(Ordering::Relaxed),
                TOTAL.load(Ordering::Relaxed),
                KERNELS.load(Ordering::Relaxed),
                PASSED.load(Ordering::Relaxed),
                FAILED.load(Ordering::Relaxed),
                running,
            ) + "\n";
            // Straight to file descriptor 2: the replay's thread holds Rust's stderr lock
            // while it prints its summary (as the watchdog's message does).
            // SAFETY: writes the bytes of a live String to stderr's descriptor.
            unsafe { libc::write(2, text.as_ptr().cast(), text.len()) };
        });
}

/// Whether a heartbeat is armed (the engine skips its stores otherwise).
#[inline]
pub fn armed() -> bool {
    ARMED.load(Ordering::Relaxed)
}

/// A process's replay begins: `total` events.
pub fn process(pid: u32, total: u64) {
    PID.store(pid, Ordering::Relaxed);
    TOTAL.store(total, Ordering::Relaxed);
    DONE.store(0, Ordering::Relaxed);
}

/// The event with sequence id `seq` is about to run.
pub fn running(seq: u64) {
    SINCE_MS.store(now_ms(), Ordering::Relaxed);
    RUNNING.store(seq + 1, Ordering::Relaxed);
}

/// After an event: how many are done, and the counts so far.
pub fn done(n: u64, kernels: u64, passed: u64, failed: u64) {
    RUNNING.store(0, Ordering::Relaxed);
    DONE.store(n, Ordering::Relaxed);
    KERNELS.store(kernels, Ordering::Relaxed);
    PASSED.store(passed, Ordering::Relaxed);
    FAILED.store(failed, Ordering::Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_heartbeat_names_the_counts_and_a_long_running_event() {
        let s = Duration::from_secs;
        assert_eq!(
            line(s(20), 41, 1200, 9700, 300, 52, 1, None),
            "hrr-replay: progress 20 s: pid 41 event 1200 of 9700, 300 kernels, D2H 52 pass / 1 fail"
        );
        assert_eq!(
            line(s(30), 41, 1200, 9700, 300, 52, 1, Some((1201, s(12)))),
            "hrr-replay: progress 30 s: pid 41 event 1200 of 9700, 300 kernels, D2H 52 pass / 1 fail; seq 1201 running for 12 s"
        );
        assert!(
            !line(s(1), 1, 0, 1, 0, 0, 0, Some((0, Duration::from_millis(5)))).contains("running")
        );
    }
}
