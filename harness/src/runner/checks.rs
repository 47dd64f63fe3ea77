//! The checks a GPU case names in the matrix, decided from replay's typed results alone
//! (no I/O here): `roundtrip`, `failed-call`, `refused`, `processes` and `blob-edit`.

use hrr_archive::edit::EditedOutput;
use hrr_archive::ArchiveError;
use hrr_contract::{FailureKind, ReplayExit, ReplayResult, Verdict};
use hrr_reports::{CheckResult, DeclaredMatches};

use super::error::EditCopyError;

fn check(name: &str, passed: bool, detail: String) -> CheckResult {
    CheckResult {
        name: name.into(),
        passed,
        detail,
    }
}

/// One line on what the replay did, for a check's detail.
pub fn summary(r: &ReplayResult) -> String {
    let c = &r.counts;
    let unstable = if c.d2h_unstable + c.d2h_all_unstable > 0 {
        format!(
            " / {} matched on stable bytes only / {} with no stable byte ({} unstable byte(s) excluded over {} replays)",
            c.d2h_unstable, c.d2h_all_unstable, c.unstable_bytes, r.stability_runs
        )
    } else {
        String::new()
    };
    // Checks matched only by the case's declared comparison: named, never byte-exact.
    let declared = match (&r.comparison, c.d2h_declared_match) {
        (Some(cmp), n @ 1..) => {
            let widest = r.declared_matches.iter().filter_map(|d| d.max_ulps).max();
            format!(
                " / {n} matched as {} only, not byte-exact{}",
                cmp.describe(),
                widest
                    .map(|u| format!(" (widest {u} ulps)"))
                    .unwrap_or_default()
            )
        }
        _ => String::new(),
    };
    format!(
        "replay exit {} {}: {} of {} events, {} kernels, D2H {} pass / {} fail / {} skipped{unstable}{declared}, {} failed as captured",
        r.exit_code.code(), r.verdict, c.events_replayed, c.events_total, c.kernels_launched, c.d2h_pass, c.d2h_fail, c.d2h_skipped, c.failed_as_captured
    )
}

/// The checks a replay matched only by the declared comparison, for the attempt's
/// report; None when there were none.
pub fn declared_matches(r: &ReplayResult) -> Option<DeclaredMatches> {
    const LISTED: usize = 8;
    let cmp = r.comparison.as_ref()?;
    (r.counts.d2h_declared_match > 0).then(|| DeclaredMatches {
        checks: r.counts.d2h_declared_match,
        comparison: cmp.describe(),
        widest_ulps: r.declared_matches.iter().filter_map(|d| d.max_ulps).max(),
        listed: r
            .declared_matches
            .iter()
            .take(LISTED)
            .map(|d| d.describe(Some(cmp)))
            .collect(),
    })
}

/// `roundtrip`: replay passed.
pub fn roundtrip(r: &ReplayResult) -> CheckResult {
    let ok = r.exit_code == ReplayExit::Pass && r.verdict == Verdict::Pass;
    let unmodelled: Vec<&str> = r
        .failures
        .iter()
        .filter(|f| f.kind == FailureKind::Unmodelled)
        .map(|f| f.api.as_str())
        .collect();
    let detail = if ok {
        summary(r)
    } else if !unmodelled.is_empty() {
        format!(
            "{}; refused: the program called APIs capture does not model: {}; {}",
            summary(r),
            unmodelled.join(", "),
            r.reason
        )
    } else {
        let first_failure = r
            .failures
            .first()
            .map(|f| f.message.as_str())
            .unwrap_or(&r.reason);
        format!("{}; first failure: {first_failure}", summary(r))
    };
    check("roundtrip", ok, detail)
}

/// `reproduces`: the program faulted at capture with `code` and replay reproduced it
/// (the same sticky error at the same call, every other event as captured: replay's
/// REPRODUCED verdict, exit 4).
pub fn reproduces(r: &ReplayResult, code: i32) -> CheckResult {
    let detail = match &r.fault {
        Some(f) => {
            format!("{}: {}", r.verdict, r.reason)
                + &(if f.code == code {
                    String::new()
                } else {
                    format!("; the case expects error {code}")
                })
        }
        None => format!(
            "the captured program hit no sticky error (the case expects {code}): {}: {}",
            r.verdict, r.reason
        ),
    };
    let ok = r.verdict == Verdict::Reproduced
        && r.exit_code == ReplayExit::Reproduced
        && r.fault
            .as_ref()
            .is_some_and(|f| f.code == code && f.reproduced);
    check("reproduces", ok, detail)
}

/// `failed-call`: at least one call failed at replay exactly as at capture.
pub fn failed_call(r: &ReplayResult) -> CheckResult {
    let n = r.counts.failed_as_captured;
    check(
        "failed-call",
        n >= 1,
        format!("{n} call(s) failed at replay exactly as at capture (need at least 1)"),
    )
}

/// `refused`: replay refused exactly the unreplayable or unmodelled calls named (names in
/// the matrix leave out the vendor prefix: `StreamAddCallback` matches
/// cudaStreamAddCallback and hipStreamAddCallback), failed nothing else, and still
/// verified some D2H result (the harness replays with --continue-on-error).
pub fn refused(r: &ReplayResult, apis: &[String]) -> CheckResult {
    let is_refusal =
        |k: &FailureKind| matches!(k, FailureKind::Unreplayable | FailureKind::Unmodelled);
    let refused: Vec<&str> = r
        .failures
        .iter()
        .filter(|f| is_refusal(&f.kind))
        .map(|f| f.api.as_str())
        .collect();
    // A failure replay marked as after a refused unmodelled call is one whose cause is
    // named (a library with a private runtime changed what the program later copied).
    let others: Vec<&str> = r
        .failures
        .iter()
        .filter(|f| !is_refusal(&f.kind) && !f.after_unmodelled_call)
        .map(|f| f.message.as_str())
        .collect();
    let missing = apis
        .iter()
        .any(|a| !refused.iter().any(|r| r.ends_with(a.as_str())));
    let ok =
        r.exit_code == ReplayExit::Fail && !missing && others.is_empty() && r.counts.d2h_pass > 0;
    check(
        "refused",
        ok,
        format!(
            "replay refused [{}]; expected [{}]; other failures: {}; D2H passed {}",
            refused.join(", "),
            apis.join(", "),
            if others.is_empty() {
                "none".to_string()
            } else {
                others.join(" | ")
            },
            r.counts.d2h_pass
        ),
    )
}

/// `processes`: the archive holds `n` processes (`found`: how many it holds, or why it
/// could not be opened).
pub fn processes(found: Result<usize, ArchiveError>, n: u32) -> CheckResult {
    let (ok, detail) = match found {
        Ok(k) => (
            k as u32 == n,
            format!("archive holds {k} process(es), expected {n}"),
        ),
        Err(e) => (false, format!("cannot open the archive: {e}")),
    };
    check("processes", ok, detail)
}

/// `blob-edit`: replay of the copy with one expected byte changed must fail that one
/// check, at that sequence id and offset, and nothing else. `edited`: the edit made (or
/// why none could be); `replay`: the edited copy's result, if it was replayed.
pub fn blob_edit(
    edited: Option<&Result<EditedOutput, EditCopyError>>,
    replay: Option<&ReplayResult>,
) -> CheckResult {
    let (ok, detail) = match (edited, replay) {
        (Some(Ok(e)), Some(r)) => blob_edit_verdict(e, r),
        (Some(Err(why)), _) => (false, why.to_string()),
        _ => (false, "the edited archive was not replayed".into()),
    };
    check("blob-edit", ok, detail)
}

fn blob_edit_verdict(e: &EditedOutput, r: &ReplayResult) -> (bool, String) {
    let code = r.exit_code.code();
    let hit = r.failures.iter().find(|f| {
        f.kind == FailureKind::D2hMismatch
            && f.pid == e.pid
            && f.seq == e.seq
            && f.first_differing_offset == Some(e.offset)
            && f.differing_bytes == Some(1)
    });
    let ok = r.exit_code == ReplayExit::Fail && hit.is_some() && r.failures.len() == 1;
    let detail = match (ok, hit) {
        (true, Some(f)) => format!(
            "changed byte {} of pid {} seq {} ({:#04x} -> {:#04x}); replay failed exactly that check: {}",
            e.offset, e.pid, e.seq, e.old, e.new, f.message
        ),
        _ => format!(
            "changed byte {} of pid {} seq {}; replay exit {code} with {} failure(s): {} (the comparison does not catch an edited output)",
            e.offset,
            e.pid,
            e.seq,
            r.failures.len(),
            r.failures.iter().map(|f| f.message.as_str()).collect::<Vec<_>>().join(" | ")
        ),
    };
    (ok, detail)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hrr_contract::Failure;

    fn result(exit: ReplayExit) -> ReplayResult {
        let mut r = ReplayResult::failed("/a".into(), exit, "r".into());
        if exit == ReplayExit::Pass {
            r.verdict = Verdict::Pass;
        }
        r
    }

    fn failure(kind: FailureKind, api: &str, message: &str) -> Failure {
        Failure::event(10, 7, api, kind, message)
    }

    #[test]
    fn reproduces_needs_the_expected_fault_reproduced() {
        let fault = |code, reproduced| hrr_contract::Fault {
            code,
            error: "cudaErrorIllegalAddress".into(),
            pid: 1,
            seq: 9,
            api: "cudaDeviceSynchronize".into(),
            kernel: None,
            reproduced,
        };
        let mut r = result(ReplayExit::Reproduced);
        r.verdict = Verdict::Reproduced;
        r.fault = Some(fault(700, true));
        assert!(reproduces(&r, 700).passed);
        let c = reproduces(&r, 715);
        assert!(
            !c.passed && c.detail.ends_with("the case expects error 715"),
            "{}",
            c.detail
        );
        // A fault replay did not hit, a program that did not fault: both fail, said so.
        let mut r = result(ReplayExit::Fail);
        r.fault = Some(fault(700, false));
        assert!(!reproduces(&r, 700).passed);
        let c = reproduces(&result(ReplayExit::Pass), 700);
        assert!(
            !c.passed
                && c.detail
                    .starts_with("the captured program hit no sticky error")
        );
        // The matrix's names are the archive's numbers.
        for e in hrr_matrix::FaultError::ALL {
            let named = hrr_archive::api::faults::name(e.code(), hrr_contract::Vendor::Cuda);
            assert!(named.is_some(), "{e:?}");
        }
        assert_eq!(
            hrr_matrix::FaultError::ALL.len(),
            hrr_archive::api::faults::STICKY.len()
        );
    }

    #[test]
    fn roundtrip_needs_exit_0_and_pass() {
        let mut r = result(ReplayExit::Pass);
        r.counts.d2h_pass = 2;
        let c = roundtrip(&r);
        assert!(c.passed, "{}", c.detail);
        assert!(c.detail.starts_with("replay exit 0 PASS: "), "{}", c.detail);
        let mut r = result(ReplayExit::Fail);
        r.failures.push(failure(
            FailureKind::ReturnCode,
            "cudaMalloc",
            "returned 2, capture returned 0",
        ));
        let c = roundtrip(&r);
        assert!(!c.passed);
        assert!(
            c.detail
                .ends_with("first failure: returned 2, capture returned 0"),
            "{}",
            c.detail
        );
        // No failure: the reason stands in.
        let c = roundtrip(&result(ReplayExit::Fail));
        assert!(c.detail.ends_with("first failure: r"), "{}", c.detail);
        // A refusal for unmodelled calls names its cause and the APIs.
        let mut r = result(ReplayExit::Fail);
        r.failures.push(failure(
            FailureKind::Unmodelled,
            "cudaGraphicsMapResources",
            "not modelled by capture",
        ));
        let c = roundtrip(&r);
        assert!(!c.passed);
        assert!(
            c.detail.contains(
                "refused: the program called APIs capture does not model: cudaGraphicsMapResources; r"
            ),
            "{}",
            c.detail
        );
    }

    #[test]
    fn checks_matched_by_a_declared_comparison_are_said_apart() {
        let mut r = result(ReplayExit::Pass);
        r.counts.d2h_pass = 3;
        assert_eq!(declared_matches(&r), None);
        r.comparison = Some("f64:ulps=8".parse().unwrap());
        assert_eq!(declared_matches(&r), None);
        r.counts.d2h_declared_match = 2;
        for (seq, ulps) in [(40, 3), (41, 7)] {
            r.declared_matches.push(hrr_contract::DeclaredMatch {
                pid: 9,
                seq,
                api: "cudaMemcpy".into(),
                bytes: 8,
                elements_differing: 1,
                max_ulps: Some(ulps),
            });
        }
        assert!(
            summary(&r).contains(
                "D2H 3 pass / 0 fail / 0 skipped / 2 matched as f64 within 8 ulps only, not byte-exact (widest 7 ulps), "
            ),
            "{}",
            summary(&r)
        );
        let d = declared_matches(&r).unwrap();
        assert_eq!((d.checks, d.widest_ulps), (2, Some(7)));
        assert_eq!(
            d.listed[1],
            "seq 41 cudaMemcpy: 1 of 1 f64 element(s) differ, matched within 7 ulps"
        );
    }

    #[test]
    fn the_summary_counts_checks_with_unstable_bytes_apart() {
        let mut r = result(ReplayExit::Pass);
        r.counts.d2h_pass = 2;
        assert!(!summary(&r).contains("stable"), "{}", summary(&r));
        r.counts.d2h_unstable = 1;
        r.counts.unstable_bytes = 6;
        r.stability_runs = 6;
        assert!(
            summary(&r).contains("D2H 2 pass / 0 fail / 0 skipped / 1 matched on stable bytes only / 0 with no stable byte (6 unstable byte(s) excluded over 6 replays), "),
            "{}",
            summary(&r)
        );
    }

    #[test]
    fn failed_call_needs_one_call_failed_as_captured() {
        let mut r = result(ReplayExit::Pass);
        assert!(!failed_call(&r).passed);
        r.counts.failed_as_captured = 1;
        assert!(failed_call(&r).passed);
    }

    #[test]
    fn refused_matches_names_without_the_vendor_prefix_and_nothing_else() {
        let apis = vec!["StreamAddCallback".to_string()];
        let mut r = result(ReplayExit::Fail);
        r.counts.d2h_pass = 1;
        r.failures.push(failure(
            FailureKind::Unreplayable,
            "hipStreamAddCallback",
            "unreplayable: hipStreamAddCallback: host callback",
        ));
        let c = refused(&r, &apis);
        assert!(c.passed, "{}", c.detail);
        // A message that reads like a refusal but is of another kind is another failure.
        r.failures.push(failure(
            FailureKind::Error,
            "cudaFoo",
            "unreplayable-looking message",
        ));
        let c = refused(&r, &apis);
        assert!(!c.passed);
        assert!(
            c.detail
                .contains("other failures: unreplayable-looking message"),
            "{}",
            c.detail
        );
        // Nothing verified, or the named call not refused: fails.
        let mut r = result(ReplayExit::Fail);
        r.failures.push(failure(
            FailureKind::Unreplayable,
            "cudaStreamAddCallback",
            "u",
        ));
        assert!(!refused(&r, &apis).passed);
        r.counts.d2h_pass = 1;
        assert!(!refused(&r, &["GraphLaunch".to_string()]).passed);
        // An API capture does not model, refused by name, counts as refused.
        let mut r = result(ReplayExit::Fail);
        r.counts.d2h_pass = 1;
        r.failures.push(failure(
            FailureKind::Unmodelled,
            "cudaSetDeviceFlags",
            "not modelled by capture: cudaSetDeviceFlags",
        ));
        let c = refused(&r, &["SetDeviceFlags".to_string()]);
        assert!(c.passed, "{}", c.detail);
        // A library with a private runtime: a later mismatch replay marked as after the
        // refused call is explained; the same mismatch unmarked is another failure.
        let lib = "libcase_library.so (CUDA)".to_string();
        let mut r = result(ReplayExit::Fail);
        r.counts.d2h_pass = 1;
        r.failures.push(failure(
            FailureKind::Unmodelled,
            "private runtime: libcase_library.so (CUDA)",
            "not modelled by capture",
        ));
        let mut mismatch = failure(
            FailureKind::D2hMismatch,
            "hipMemcpy",
            "4 of 16 bytes differ",
        );
        mismatch.after_unmodelled_call = true;
        r.failures.push(mismatch.clone());
        let c = refused(&r, std::slice::from_ref(&lib));
        assert!(c.passed, "{}", c.detail);
        mismatch.after_unmodelled_call = false;
        r.failures.push(mismatch);
        assert!(!refused(&r, &[lib]).passed);
    }

    #[test]
    fn processes_compares_the_count() {
        assert!(processes(Ok(2), 2).passed);
        assert!(!processes(Ok(1), 2).passed);
        let e = ArchiveError::Invalid {
            path: "/a/manifest.json".into(),
            what: "no manifest".into(),
        };
        let c = processes(Err(e), 1);
        assert!(!c.passed, "{}", c.detail);
        assert!(
            c.detail.starts_with("cannot open the archive: "),
            "{}",
            c.detail
        );
    }

    #[test]
    fn blob_edit_needs_exactly_that_mismatch() {
        let e = EditedOutput {
            pid: 10,
            seq: 7,
            offset: 100,
            old: 0,
            new: 0xff,
        };
        let mut hit = failure(FailureKind::D2hMismatch, "cudaMemcpy", "D2H check failed");
        hit.first_differing_offset = Some(100);
        hit.differing_bytes = Some(1);
        let mut r = result(ReplayExit::Fail);
        r.failures.push(hit.clone());
        let c = blob_edit(Some(&Ok(e.clone())), Some(&r));
        assert!(c.passed, "{}", c.detail);
        // The same message under another kind, another offset, or a second failure: missed.
        let mut wrong_kind = r.clone();
        wrong_kind.failures[0].kind = FailureKind::Error;
        assert!(!blob_edit(Some(&Ok(e.clone())), Some(&wrong_kind)).passed);
        let mut wrong_offset = r.clone();
        wrong_offset.failures[0].first_differing_offset = Some(0);
        assert!(!blob_edit(Some(&Ok(e.clone())), Some(&wrong_offset)).passed);
        let mut two = r.clone();
        two.failures.push(hit);
        assert!(!blob_edit(Some(&Ok(e.clone())), Some(&two)).passed);
        assert!(!blob_edit(Some(&Ok(e)), None).passed);
        let why = EditCopyError::Copy(std::io::Error::other("disk full"));
        let c = blob_edit(Some(&Err(why)), None);
        assert_eq!(
            (c.passed, c.detail.as_str()),
            (false, "cannot copy the archive: disk full")
        );
    }
}
