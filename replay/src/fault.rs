//! Failing programs (issue 26): an archive whose program hit a sticky error (a kernel's
//! illegal address or instruction, a device-side assert: `api::faults`) is the archive
//! an engineer wants replayed, not a broken one. `find` names the fault from the captured
//! results alone: the first call that returned a sticky error and the last launch before
//! it. After the replay, `judge` decides: replay's result at that call equal to capture's,
//! and every other event as captured, is a reproduction (REPRODUCED, exit 4, or 0 under
//! `--expect-fault`); anything else is a FAIL naming the captured fault.

use hrr_archive::api::{self, faults, fid, semantic};
use hrr_archive::payload::Payload;
use hrr_archive::Archive;
use hrr_contract::{Fault, ReplayExit, ReplayResult, Vendor, Verdict};

/// The launch records a faulting kernel may have come from.
const LAUNCHES: &[u16] = &[
    semantic::LAUNCH_KERNEL,
    semantic::LAUNCH_KERNEL_BY_HANDLE,
    semantic::MODULE_LAUNCH_KERNEL,
    semantic::LAUNCH_KERNEL_EX,
    semantic::LAUNCH_COOPERATIVE,
    semantic::HIP_EXT_LAUNCH,
    semantic::GRAPH_LAUNCH,
];

/// The first sticky error the captured program hit, in process order (not yet judged).
pub fn find(archive: &Archive, vendor: Vendor) -> Option<Fault> {
    for p in &archive.processes {
        let mut last_launch = None;
        for ev in &p.events {
            let h = &ev.header;
            if LAUNCHES.contains(&h.api_id) && h.ret == 0 {
                let name = Payload::parse(&ev.payload)
                    .ok()
                    .and_then(|p| p.str(fid::NAME, "kernel").ok().map(str::to_string))
                    .unwrap_or_else(|| api::call_name(h.api_id, vendor));
                last_launch = Some((h.seq, name));
            }
            if let Some(error) = faults::name(h.ret, vendor) {
                return Some(Fault {
                    code: h.ret,
                    error: error.to_string(),
                    pid: p.entry.pid,
                    seq: h.seq,
                    api: api::call_name(h.api_id, vendor),
                    kernel: last_launch,
                    reproduced: false,
                });
            }
        }
    }
    None
}

/// One line on the fault, as the summary gives it.
pub fn describe(f: &Fault) -> String {
    let kernel = match &f.kernel {
        Some((seq, name)) => format!("kernel {name} (seq {seq})"),
        None => "the program".to_string(),
    };
    let at = if f.reproduced {
        "at capture and at replay"
    } else {
        "at capture, not so at replay"
    };
    format!(
        "{kernel} faulted with {} ({}) {at}; first failing call pid {} seq {} {}",
        f.code, f.error, f.pid, f.seq, f.api
    )
}

/// Judges a replayed archive that faulted at capture (`result.fault`), after `verdict`
/// judged it as any other: returns the exit code and sets the verdict and reason.
/// `expect_fault` (`--expect-fault`): a reproduction exits 0, an archive without a fault
/// fails.
pub fn judge(result: &mut ReplayResult, judged: ReplayExit, expect_fault: bool) -> ReplayExit {
    let Some(f) = result.fault.as_mut() else {
        if expect_fault && judged == ReplayExit::Pass {
            result.verdict = Verdict::Fail;
            result.reason = "--expect-fault: the captured program hit no sticky error, so there is no fault to reproduce".into();
            return ReplayExit::Fail;
        }
        return judged;
    };
    // Reproduced only on evidence: some call returned at replay the error it returned at
    // capture (`failed_as_captured`), and the first failing call did not differ. Absence
    // of failures alone is no reproduction: a replay that ignored return codes would have
    // none.
    f.reproduced = result.counts.failed_as_captured > 0
        && !result
            .failures
            .iter()
            .any(|x| x.pid == f.pid && x.seq == f.seq);
    let line = describe(f);
    if f.reproduced && result.failures.is_empty() && judged != ReplayExit::Invalid {
        result.verdict = Verdict::Reproduced;
        result.reason = line;
        return if expect_fault {
            ReplayExit::Pass
        } else {
            ReplayExit::Reproduced
        };
    }
    if matches!(judged, ReplayExit::Fail | ReplayExit::Pass) {
        result.verdict = Verdict::Fail;
        result.reason = format!("{line}; {}", result.reason);
        return ReplayExit::Fail;
    }
    judged
}

#[cfg(test)]
mod tests {
    use super::*;
    use hrr_contract::{Failure, FailureKind};

    fn fault() -> Fault {
        Fault {
            code: 715,
            error: "cudaErrorIllegalInstruction".into(),
            pid: 7,
            seq: 10,
            api: "cudaDeviceSynchronize".into(),
            kernel: Some((9, "_Z11binary_scanPiPKi".into())),
            reproduced: false,
        }
    }

    fn failure(seq: u64) -> Failure {
        Failure::event(
            7,
            seq,
            "cudaDeviceSynchronize",
            FailureKind::ReturnCode,
            "returned 0, capture returned 715",
        )
    }

    #[test]
    fn the_same_fault_at_the_same_call_is_a_reproduction() {
        let mut r = ReplayResult::failed("a".into(), ReplayExit::Fail, String::new());
        r.fault = Some(fault());
        r.counts.failed_as_captured = 3;
        // Nothing verified by bytes: the fault itself is what was reproduced.
        assert_eq!(
            judge(&mut r, ReplayExit::Fail, false),
            ReplayExit::Reproduced
        );
        assert_eq!(r.verdict, Verdict::Reproduced);
        assert_eq!(
            r.reason,
            "kernel _Z11binary_scanPiPKi (seq 9) faulted with 715 (cudaErrorIllegalInstruction) at capture and at replay; first failing call pid 7 seq 10 cudaDeviceSynchronize"
        );
        let mut r2 = ReplayResult::failed("a".into(), ReplayExit::Fail, String::new());
        r2.fault = Some(fault());
        r2.counts.failed_as_captured = 3;
        assert_eq!(judge(&mut r2, ReplayExit::Fail, true), ReplayExit::Pass);
        // No call failed as captured (a replay that ignored return codes): not reproduced.
        let mut r3 = ReplayResult::failed("a".into(), ReplayExit::Fail, String::new());
        r3.fault = Some(fault());
        assert_eq!(judge(&mut r3, ReplayExit::Fail, false), ReplayExit::Fail);
        assert!(r3.reason.contains("not so at replay"), "{}", r3.reason);
    }

    #[test]
    fn a_fault_replay_did_not_hit_fails_naming_both() {
        let mut r = ReplayResult::failed("a".into(), ReplayExit::Fail, "1 failure(s)".into());
        r.fault = Some(fault());
        r.failures.push(failure(10));
        assert_eq!(judge(&mut r, ReplayExit::Fail, true), ReplayExit::Fail);
        assert_eq!(r.verdict, Verdict::Fail);
        assert!(
            r.reason.contains("at capture, not so at replay"),
            "{}",
            r.reason
        );
        assert!(r.reason.ends_with("; 1 failure(s)"));
        // Faulted as captured, but another event differs: not a reproduction either.
        let mut r = ReplayResult::failed("a".into(), ReplayExit::Fail, "1 failure(s)".into());
        r.fault = Some(fault());
        r.counts.failed_as_captured = 2;
        r.failures.push(failure(3));
        assert_eq!(judge(&mut r, ReplayExit::Fail, false), ReplayExit::Fail);
        assert!(r.fault.as_ref().unwrap().reproduced);
    }

    #[test]
    fn expecting_a_fault_where_there_was_none_fails() {
        let mut r = ReplayResult::failed("a".into(), ReplayExit::Pass, String::new());
        r.verdict = Verdict::Pass;
        assert_eq!(judge(&mut r, ReplayExit::Pass, true), ReplayExit::Fail);
        assert_eq!(r.verdict, Verdict::Fail);
        let mut r = ReplayResult::failed("a".into(), ReplayExit::Pass, String::new());
        r.verdict = Verdict::Pass;
        assert_eq!(judge(&mut r, ReplayExit::Pass, false), ReplayExit::Pass);
    }
}
