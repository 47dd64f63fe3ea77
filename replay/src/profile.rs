//! `--profile`: where a replay's wall time goes, printed to stderr when it ends. The
//! phases (starting the runtime, opening archives, replaying events, the final drain
//! and release, unloading the runtime) add up to the time from `main` to the report; the host work inside the
//! events (buffers allocated, page-locked and released, blobs loaded, results poisoned,
//! compared and waited for) and each API's events are broken out beside them. Off, a
//! span costs one relaxed load.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    // Phases: together, the whole of `main` up to the report.
    Start,
    Open,
    Events,
    Drain,
    Release,
    Unload,
    // Host work within the phases.
    Alloc,
    Pin,
    Unpin,
    Load,
    Poison,
    Compare,
    Wait,
}

const PARTS: [(Part, &str); 13] = [
    (
        Part::Start,
        "start the runtime (load, device count, context)",
    ),
    (Part::Open, "open and verify archives"),
    (Part::Events, "replay events"),
    (Part::Drain, "compare copies still queued at the end"),
    (Part::Release, "release what the program left"),
    (Part::Unload, "unload the runtime (its own teardown)"),
    (Part::Alloc, "allocate and fault in host buffers"),
    (Part::Pin, "page-lock host buffers (HostRegister)"),
    (Part::Unpin, "unlock host buffers (HostUnregister)"),
    (Part::Load, "load and verify blobs"),
    (Part::Poison, "poison result buffers"),
    (Part::Compare, "compare results"),
    (Part::Wait, "wait for copies (stream or event synchronise)"),
];
const PHASES: usize = 6;

static ON: AtomicBool = AtomicBool::new(false);
static NANOS: [AtomicU64; PARTS.len()] = [const { AtomicU64::new(0) }; PARTS.len()];
static COUNTS: [AtomicU64; PARTS.len()] = [const { AtomicU64::new(0) }; PARTS.len()];
/// API label -> (events, nanoseconds), whole events as `replay_event` ran them.
static APIS: Mutex<BTreeMap<String, (u64, u64)>> = Mutex::new(BTreeMap::new());

/// A part's slot in `PARTS`, `NANOS` and `COUNTS` (the enum lists them in that order).
fn index(p: Part) -> usize {
    p as usize
}

/// Turns the profile on (`--profile`), from now on.
pub fn enable() {
    ON.store(true, Ordering::Relaxed);
}

pub fn enabled() -> bool {
    ON.load(Ordering::Relaxed)
}

/// Times its scope as `part` while the profile is on.
#[must_use]
pub struct Span(Option<(Part, Instant)>);

pub fn span(part: Part) -> Span {
    Span(enabled().then(|| (part, Instant::now())))
}

impl Drop for Span {
    fn drop(&mut self) {
        if let Some((p, t)) = self.0 {
            let i = index(p);
            NANOS[i].fetch_add(t.elapsed().as_nanos() as u64, Ordering::Relaxed);
            COUNTS[i].fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// The start of an event's replay, when the profile is on; `api_done` adds it to `api`.
pub fn api_start() -> Option<Instant> {
    enabled().then(Instant::now)
}

pub fn api_done(start: Option<Instant>, api: impl FnOnce() -> String) {
    let Some(t) = start else { return };
    let nanos = t.elapsed().as_nanos() as u64;
    if let Ok(mut m) = APIS.lock() {
        let e = m.entry(api()).or_default();
        e.0 += 1;
        e.1 += nanos;
    }
}

fn ms(nanos: u64) -> f64 {
    nanos as f64 / 1e6
}

/// The report: `total` is the time since `main` began.
pub fn report(total: std::time::Duration) -> String {
    let total = total.as_nanos() as u64;
    let mut s = format!(
        "hrr-replay: profile: {:.1} ms from main to this report (process exit not included)\n",
        ms(total)
    );
    let mut phases = 0u64;
    for (i, (_, what)) in PARTS.iter().enumerate() {
        if i == PHASES {
            let _ = writeln!(
                s,
                "  {:>9.1} ms  elsewhere (argument parsing, summary, JSON)\n  host work within the phases:",
                ms(total.saturating_sub(phases))
            );
        }
        let n = NANOS[i].load(Ordering::Relaxed);
        if i < PHASES {
            phases += n;
        }
        let c = COUNTS[i].load(Ordering::Relaxed);
        if i < PHASES || c > 0 {
            let _ = writeln!(s, "  {:>9.1} ms  {what} ({c}x)", ms(n));
        }
    }
    let apis = APIS.lock().map(|m| m.clone()).unwrap_or_default();
    let mut apis: Vec<_> = apis.into_iter().collect();
    apis.sort_by_key(|a| std::cmp::Reverse(a.1 .1));
    let _ = writeln!(s, "  events by API, slowest first:");
    for (api, (n, nanos)) in apis.iter().take(12) {
        let _ = writeln!(s, "  {:>9.1} ms  {api} ({n}x)", ms(*nanos));
    }
    if apis.len() > 12 {
        let rest: u64 = apis[12..].iter().map(|a| a.1 .1).sum();
        let _ = writeln!(s, "  {:>9.1} ms  {} other APIs", ms(rest), apis.len() - 12);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_lists_every_part_in_the_enum_order() {
        assert!(PARTS.iter().enumerate().all(|(i, (p, _))| index(*p) == i));
    }

    #[test]
    fn spans_count_only_while_on_and_the_report_names_every_phase() {
        drop(span(Part::Poison));
        assert_eq!(COUNTS[index(Part::Poison)].load(Ordering::Relaxed), 0);
        api_done(api_start(), || "cudaMemcpy".into());
        enable();
        {
            let _s = span(Part::Poison);
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        api_done(api_start(), || "cudaMemcpy".into());
        let r = report(std::time::Duration::from_millis(50));
        // Other tests of this binary may poison buffers meanwhile: at least this span.
        assert!(COUNTS[index(Part::Poison)].load(Ordering::Relaxed) >= 1);
        assert!(NANOS[index(Part::Poison)].load(Ordering::Relaxed) >= 2_000_000);
        assert!(r.contains("poison result buffers ("), "{r}");
        assert!(r.contains("cudaMemcpy (1x)"), "{r}");
        for (_, what) in &PARTS[..PHASES] {
            assert!(r.contains(what), "{what} missing from {r}");
        }
    }
}
