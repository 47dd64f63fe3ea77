//! Which cases are running, since when and in which step, so a run without a terminal
//! still shows life: a case running longer than a threshold gets one `SLOW` line each
//! time another threshold passes (as nextest's), naming its step (issue 25: on CI a
//! 23-second case printed nothing until it ended).

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A case's first SLOW line comes after this long, then one each time as long again.
pub const SLOW_AFTER: Duration = Duration::from_secs(20);

struct Running {
    since: Instant,
    step: &'static str,
    /// SLOW lines already printed.
    told: u32,
}

static RUNNING: Mutex<BTreeMap<String, Running>> = Mutex::new(BTreeMap::new());

fn running() -> std::sync::MutexGuard<'static, BTreeMap<String, Running>> {
    RUNNING.lock().unwrap_or_else(|e| e.into_inner())
}

/// `case` starts (its first step: building or preparing).
pub fn started(case: &str) {
    running().insert(
        case.to_string(),
        Running {
            since: Instant::now(),
            step: "start",
            told: 0,
        },
    );
}

/// `case` enters `step` (native, capture, replay, ...).
pub fn step(case: &str, step: &'static str) {
    if let Some(r) = running().get_mut(case) {
        r.step = step;
    }
}

/// `case` ended.
pub fn finished(case: &str) {
    running().remove(case);
}

/// The SLOW lines due at `now`, one per case that passed another multiple of `every`
/// since its last line: `[  20 s] SLOW big_copy (capture)`.
pub fn due(now: Instant, every: Duration) -> Vec<String> {
    let mut lines = Vec::new();
    for (case, r) in running().iter_mut() {
        let ran = now.saturating_duration_since(r.since);
        let passed = (ran.as_secs_f64() / every.as_secs_f64()) as u32;
        if passed > r.told {
            r.told = passed;
            lines.push(format!("[{:>4} s] SLOW {case} ({})", ran.as_secs(), r.step));
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_case_is_slow_once_per_threshold_with_its_step() {
        let every = Duration::from_millis(40);
        started("hb_case");
        let t0 = Instant::now();
        assert!(due(t0, every).iter().all(|l| !l.contains("hb_case")));
        step("hb_case", "capture");
        let at = |ms| t0 + Duration::from_millis(ms);
        let mine = |v: Vec<String>| {
            v.into_iter()
                .filter(|l| l.contains("hb_case"))
                .collect::<Vec<_>>()
        };
        let first = mine(due(at(50), every));
        assert_eq!(first.len(), 1, "{first:?}");
        assert!(first[0].ends_with("SLOW hb_case (capture)"), "{first:?}");
        assert!(mine(due(at(60), every)).is_empty(), "once per threshold");
        step("hb_case", "replay");
        let second = mine(due(at(90), every));
        assert!(
            second.len() == 1 && second[0].ends_with("(replay)"),
            "{second:?}"
        );
        finished("hb_case");
        assert!(mine(due(at(500), every)).is_empty());
    }
}
