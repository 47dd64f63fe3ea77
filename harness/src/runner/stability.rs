//! Instability, decided from replay's typed results alone (no I/O here): the `stability`
//! check that holds a case to its declared `unstable: {runs, max_bytes}`, the excluded
//! bytes an attempt reports, and the diagnosis of a D2H mismatch in a case that
//! declares none (replayed again several times: the bytes that differ between replays
//! are named as the program's own nondeterminism).

use hrr_contract::{ReplayResult, UnstableCheck, UnstableVerdict};
use hrr_matrix::Unstable;
use hrr_reports::{CheckResult, ExcludedBytes};

/// The most unstable checks a detail names (the replay's JSON result lists all).
const NAMED_CHECKS: usize = 8;

/// Replays the harness makes to diagnose a D2H mismatch in a case declaring no
/// instability.
pub const DIAGNOSIS_RUNS: u32 = 3;

/// "seq 40 cudaMemcpy: 6 of 32 bytes at 0..3, 4..7 [stable_bytes_match]; ...".
fn name_checks(checks: &[UnstableCheck]) -> String {
    let mut parts: Vec<String> = checks
        .iter()
        .take(NAMED_CHECKS)
        .map(|u| {
            let ranges: Vec<String> = u.ranges.iter().map(|r| r.to_string()).collect();
            let more = u.ranges_total.saturating_sub(u.ranges.len() as u64);
            format!(
                "pid {} seq {} {}: {} of {} bytes at {}{} [{}]",
                u.pid,
                u.seq,
                u.api,
                u.unstable_bytes,
                u.bytes,
                ranges.join(", "),
                if more > 0 {
                    format!(" (and {more} more range(s))")
                } else {
                    String::new()
                },
                u.verdict
            )
        })
        .collect();
    if checks.len() > NAMED_CHECKS {
        parts.push(format!("and {} more check(s)", checks.len() - NAMED_CHECKS));
    }
    parts.join("; ")
}

fn check(passed: bool, detail: String) -> CheckResult {
    CheckResult {
        name: "stability".into(),
        passed,
        detail,
    }
}

/// `stability`: the replay compared `declared.runs` replays, found at most
/// `declared.max_bytes` bytes that differ between them, and no check without a stable
/// byte. Fewer unstable bytes, none included, pass (the declaration is a bound).
pub fn stability(r: &ReplayResult, declared: Option<&Unstable>) -> CheckResult {
    let Some(d) = declared else {
        return check(
            false,
            "the case declares no `unstable:` for this check to hold".into(),
        );
    };
    let c = &r.counts;
    if r.stability_runs != d.runs {
        return check(
            false,
            format!(
                "the replay compared {} replay(s), the case declares {}: its instability was not learned as declared",
                r.stability_runs, d.runs
            ),
        );
    }
    let all: Vec<UnstableCheck> = r
        .unstable
        .iter()
        .filter(|u| u.verdict == UnstableVerdict::AllUnstable)
        .cloned()
        .collect();
    if !all.is_empty() {
        return check(
            false,
            format!(
                "{} D2H check(s) had no byte the same in all {} replays, so nothing of them was verified: {}",
                all.len(),
                d.runs,
                name_checks(&all)
            ),
        );
    }
    if c.unstable_bytes > d.max_bytes {
        return check(
            false,
            format!(
                "{} byte(s) differed between {} replays, more than the {} the case declares (new nondeterminism, or a replay that no longer reproduces): {}",
                c.unstable_bytes,
                d.runs,
                d.max_bytes,
                name_checks(&r.unstable)
            ),
        );
    }
    if c.unstable_bytes == 0 {
        return check(
            true,
            format!(
                "{} replays agreed on every byte (the case declares at most {} unstable)",
                d.runs, d.max_bytes
            ),
        );
    }
    check(
        true,
        format!(
            "{} byte(s) differed between {} replays and were excluded, within the {} the case declares: {}",
            c.unstable_bytes,
            d.runs,
            d.max_bytes,
            name_checks(&r.unstable)
        ),
    )
}

/// The bytes a replay excluded, for the attempt's report; None when it excluded none.
pub fn excluded(r: &ReplayResult, declared: Option<&Unstable>) -> Option<ExcludedBytes> {
    let c = &r.counts;
    (c.unstable_bytes > 0).then(|| ExcludedBytes {
        bytes: c.unstable_bytes,
        checks: r.unstable.len() as u64,
        runs: r.stability_runs,
        why: format!(
            "they differed between {} replays of the archive, so the program does not reproduce them; {}",
            r.stability_runs,
            match declared {
                Some(d) => format!("the case declares at most {} such bytes", d.max_bytes),
                None => "the case declares none".into(),
            }
        ),
    })
}

/// What several replays of an archive whose single replay mismatched say about it:
/// None when they show no instability (the mismatch is a regression as reported).
pub fn diagnosis(r: &ReplayResult) -> Option<String> {
    (r.counts.unstable_bytes > 0).then(|| {
        format!(
            "replayed {} times to diagnose: {} byte(s) differ between the replays themselves, the program's own nondeterminism (new, or never declared: `unstable:` in the matrix declares what is expected): {}",
            r.stability_runs,
            r.counts.unstable_bytes,
            name_checks(&r.unstable)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use hrr_contract::{ByteRange, ReplayExit, Verdict};

    const DECLARED: Unstable = Unstable {
        runs: 3,
        max_bytes: 8,
    };

    fn unstable(seq: u64, bytes: u64, verdict: UnstableVerdict) -> UnstableCheck {
        UnstableCheck {
            pid: 9,
            seq,
            api: "cudaMemcpy".into(),
            bytes: 32,
            unstable_bytes: bytes,
            ranges: vec![ByteRange {
                start: 0,
                len: bytes,
            }],
            ranges_total: 1,
            verdict,
        }
    }

    fn result(runs: u32, checks: Vec<UnstableCheck>) -> ReplayResult {
        let mut r = ReplayResult::failed("/a".into(), ReplayExit::Pass, String::new());
        r.verdict = Verdict::Pass;
        r.stability_runs = runs;
        r.counts.unstable_bytes = checks.iter().map(|u| u.unstable_bytes).sum();
        r.unstable = checks;
        r
    }

    #[test]
    fn instability_within_the_declaration_passes_naming_the_bytes() {
        let r = result(3, vec![unstable(40, 6, UnstableVerdict::StableBytesMatch)]);
        let c = stability(&r, Some(&DECLARED));
        assert!(c.passed, "{}", c.detail);
        assert_eq!(
            c.detail,
            "6 byte(s) differed between 3 replays and were excluded, within the 8 the case declares: pid 9 seq 40 cudaMemcpy: 6 of 32 bytes at 0..6 [stable_bytes_match]"
        );
        let e = excluded(&r, Some(&DECLARED)).unwrap();
        assert_eq!((e.bytes, e.checks, e.runs), (6, 1, 3));
        assert!(
            e.why.ends_with("the case declares at most 8 such bytes"),
            "{}",
            e.why
        );
    }

    /// A declaration is an upper bound: replays that agree on everything (the stand-in
    /// runtime's, say) pass it.
    #[test]
    fn no_instability_at_all_passes_a_declaration() {
        let r = result(3, vec![]);
        let c = stability(&r, Some(&DECLARED));
        assert!(c.passed, "{}", c.detail);
        assert_eq!(
            c.detail,
            "3 replays agreed on every byte (the case declares at most 8 unstable)"
        );
        assert_eq!(excluded(&r, Some(&DECLARED)), None);
    }

    #[test]
    fn instability_beyond_the_declaration_fails_naming_the_bytes() {
        let r = result(
            3,
            vec![
                unstable(40, 6, UnstableVerdict::StableBytesMatch),
                unstable(41, 3, UnstableVerdict::StableBytesMatch),
            ],
        );
        let c = stability(&r, Some(&DECLARED));
        assert!(!c.passed);
        assert!(
            c.detail.starts_with(
                "9 byte(s) differed between 3 replays, more than the 8 the case declares"
            ),
            "{}",
            c.detail
        );
        assert!(
            c.detail
                .contains("pid 9 seq 41 cudaMemcpy: 3 of 32 bytes at 0..3"),
            "{}",
            c.detail
        );
    }

    #[test]
    fn a_check_with_no_stable_byte_fails_the_declaration() {
        let r = result(3, vec![unstable(40, 4, UnstableVerdict::AllUnstable)]);
        let c = stability(&r, Some(&DECLARED));
        assert!(!c.passed);
        assert!(
            c.detail.contains("nothing of them was verified"),
            "{}",
            c.detail
        );
    }

    /// A replay that did not learn as declared (an older replay, or one that ignored
    /// the request) cannot pass: its instability is unknown.
    #[test]
    fn a_replay_of_other_runs_or_no_declaration_fails() {
        let c = stability(&result(1, vec![]), Some(&DECLARED));
        assert!(!c.passed);
        assert!(
            c.detail
                .contains("compared 1 replay(s), the case declares 3"),
            "{}",
            c.detail
        );
        assert!(!stability(&result(3, vec![]), None).passed);
    }

    #[test]
    fn named_checks_are_bounded() {
        let many: Vec<UnstableCheck> = (0..12)
            .map(|s| unstable(s, 1, UnstableVerdict::StableBytesMatch))
            .collect();
        let text = name_checks(&many);
        assert!(text.ends_with("; and 4 more check(s)"), "{text}");
        assert_eq!(text.matches("cudaMemcpy").count(), NAMED_CHECKS);
    }

    #[test]
    fn a_diagnosis_names_instability_or_nothing() {
        assert_eq!(diagnosis(&result(3, vec![])), None);
        let d = diagnosis(&result(
            3,
            vec![unstable(40, 2, UnstableVerdict::StableBytesMatch)],
        ))
        .unwrap();
        assert!(
            d.starts_with(
                "replayed 3 times to diagnose: 2 byte(s) differ between the replays themselves"
            ),
            "{d}"
        );
        assert!(
            d.ends_with("pid 9 seq 40 cudaMemcpy: 2 of 32 bytes at 0..2 [stable_bytes_match]"),
            "{d}"
        );
    }
}
