//! `--sync-watchdog SECONDS`: a replay stuck in one call (a synchronisation waiting for
//! a kernel that never finishes, a copy behind it) is stopped and named, well before a
//! harness's case timeout. The engine notes the event it is about to replay and each
//! kernel it launched (`enter`, `launched`: a few atomic stores); a thread checks every
//! 100 ms and, once one event has run longer than the limit, says which event of which
//! process, for how long, and the last kernel launched before it, then ends the process
//! at once (exit 1; no JSON result is written).

use std::sync::atomic::{AtomicBool, AtomicU16, AtomicU32, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use hrr_contract::ReplayExit;

/// The longest limit a `--sync-watchdog` or a serve request may set (a day).
pub const MAX_LIMIT_S: u64 = 86_400;

static ARMED: AtomicBool = AtomicBool::new(false);
/// The limit in milliseconds (the last `arm`'s: a service's requests may each set one).
static LIMIT_MS: AtomicU64 = AtomicU64::new(u64::MAX);
static PID: AtomicU32 = AtomicU32::new(0);
static SEQ: AtomicU64 = AtomicU64::new(0);
static API: AtomicU16 = AtomicU16::new(0);
/// When the current event began, in milliseconds since `START`; 0: no event running.
static SINCE_MS: AtomicU64 = AtomicU64::new(0);
/// The last kernel launched (sequence id, name), written only at launches.
static LAST_LAUNCH: Mutex<Option<(u64, String)>> = Mutex::new(None);
static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
/// How the current event's API is named (the vendor's symbol), set with the runtime.
static NAMER: std::sync::OnceLock<fn(u16) -> String> = std::sync::OnceLock::new();

fn now_ms() -> u64 {
    START.get_or_init(Instant::now).elapsed().as_millis() as u64 + 1
}

/// Starts the watchdog thread: an event running longer than `limit` ends the process.
/// `name` turns an API id into the name the message gives.
pub fn arm(limit: Duration, name: fn(u16) -> String) {
    let _ = NAMER.set(name);
    now_ms();
    LIMIT_MS.store(limit.as_millis() as u64, Ordering::Release);
    if ARMED.swap(true, Ordering::SeqCst) {
        return;
    }
    let _ = std::thread::Builder::new()
        .name("hrr-watchdog".into())
        .spawn(move || loop {
            std::thread::sleep(Duration::from_millis(100));
            let since = SINCE_MS.load(Ordering::Acquire);
            if since == 0 {
                continue;
            }
            let ran = Duration::from_millis(now_ms().saturating_sub(since));
            let limit = Duration::from_millis(LIMIT_MS.load(Ordering::Acquire));
            if ran < limit {
                continue;
            }
            // Straight to file descriptor 2: the replay's thread holds Rust's stderr lock
            // for its whole run (its summary goes there), so eprintln would wait for the
            // stuck call.
            let text = format!("hrr-replay: {}\n", message(ran, limit));
            // SAFETY: writes the bytes of a live String to stderr's descriptor.
            unsafe { libc::write(2, text.as_ptr().cast(), text.len()) };
            // SAFETY: _exit ends the process at once. `exit` would run the C library's
            // exit handlers first, and the runtime's may wait on the stuck call (seen:
            // the process outlived the stuck synchronisation, not the limit).
            unsafe { libc::_exit(ReplayExit::Fail.code().into()) };
        });
}

/// The message for an event that has run `ran` (past `limit`).
fn message(ran: Duration, limit: Duration) -> String {
    let api = API.load(Ordering::Acquire);
    let name = NAMER.get().map_or_else(|| api.to_string(), |n| n(api));
    let last = LAST_LAUNCH.lock().ok().and_then(|l| l.clone());
    let kernel = match last {
        Some((seq, k)) => format!("the last kernel launched: {k} (seq {seq})"),
        None => "no kernel was launched before it".into(),
    };
    format!(
        "watchdog: pid {} seq {} {name} has not returned after {:.1} s (--sync-watchdog {} s); {kernel}; stopping the replay",
        PID.load(Ordering::Acquire),
        SEQ.load(Ordering::Acquire),
        ran.as_secs_f64(),
        limit.as_secs()
    )
}

/// The name `--sync-watchdog`'s messages give an API id: its CUDA symbol, else its HIP
/// one, else the record's name.
pub fn api_symbol(id: u16) -> String {
    hrr_archive::api::desc(id)
        .and_then(|d| d.cuda.or(d.hip))
        .map(str::to_string)
        .unwrap_or_else(|| hrr_archive::api::api_name(id))
}

/// The engine is about to replay event `seq` (API `api`) of process `pid`.
#[inline]
pub fn enter(pid: u32, seq: u64, api: u16) {
    if !ARMED.load(Ordering::Relaxed) {
        return;
    }
    SINCE_MS.store(0, Ordering::Release);
    PID.store(pid, Ordering::Release);
    SEQ.store(seq, Ordering::Release);
    API.store(api, Ordering::Release);
    SINCE_MS.store(now_ms(), Ordering::Release);
}

/// The engine finished replaying events (a process ended).
pub fn leave() {
    SINCE_MS.store(0, Ordering::Release);
}

/// The engine launched kernel `name` for event `seq`.
pub fn launched(seq: u64, name: &str) {
    if !ARMED.load(Ordering::Relaxed) {
        return;
    }
    if let Ok(mut l) = LAST_LAUNCH.lock() {
        *l = Some((seq, name.to_string()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_names_the_event_its_time_and_the_last_kernel() {
        PID.store(42, Ordering::Release);
        SEQ.store(10, Ordering::Release);
        API.store(4, Ordering::Release);
        *LAST_LAUNCH.lock().unwrap() = Some((9, "spin".into()));
        let m = message(Duration::from_millis(2500), Duration::from_secs(2));
        assert!(m.starts_with("watchdog: pid 42 seq 10 "), "{m}");
        assert!(
            m.contains("has not returned after 2.5 s (--sync-watchdog 2 s)"),
            "{m}"
        );
        assert!(m.contains("the last kernel launched: spin (seq 9)"), "{m}");
    }
}
