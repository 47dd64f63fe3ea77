//! One status enum for every case, and the baseline mapping (as deqp-runner does it) from
//! what happened (raw outcomes of one or two attempts) and what the matrix expects to the
//! status reported. A case that could not run has a status of its own, never `pass`:
//! `compiled-not-run` (compile-only mode: built for the family's targets, no GPU used)
//! `not-run` (its shard never reported to the merge) and `stand-in` (every check passed
//! against the stand-in runtime, no GPU used).

use serde::{Deserialize, Serialize};

/// What one attempt of a case did, before expectations are applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RawOutcome {
    Pass,
    /// A check failed.
    Fail,
    /// A process died on a signal, or a tool failed in a way no check explains.
    Crash,
    Timeout,
}

/// What the matrix expects of a case on this family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expected {
    Pass,
    Fail,
    Flake,
}

/// The status of a case in a report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    Pass,
    Fail,
    Crash,
    Timeout,
    Skip,
    ExpectedFail,
    UnexpectedPass,
    Flake,
    /// Compile-only mode: the case compiled for the family's targets; no GPU ran it.
    CompiledNotRun,
    /// The case's shard never reported (a merge that expected it); fails the merge.
    NotRun,
    /// Every check passed against the stand-in runtime (`run --stand-in`: capture, archive
    /// and replay over host memory, no kernel run): never a GPU pass.
    StandIn,
}

impl Status {
    pub const ALL: [Status; 11] = [
        Status::Pass,
        Status::Fail,
        Status::Crash,
        Status::Timeout,
        Status::Skip,
        Status::ExpectedFail,
        Status::UnexpectedPass,
        Status::Flake,
        Status::CompiledNotRun,
        Status::NotRun,
        Status::StandIn,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail => "fail",
            Status::Crash => "crash",
            Status::Timeout => "timeout",
            Status::Skip => "skip",
            Status::ExpectedFail => "expected-fail",
            Status::UnexpectedPass => "unexpected-pass",
            Status::Flake => "flake",
            Status::CompiledNotRun => "compiled-not-run",
            Status::NotRun => "not-run",
            Status::StandIn => "stand-in",
        }
    }

    /// Whether this status makes the run fail (exit 1): the result differs from what the
    /// matrix expects, or it never ran because its shard is missing. A flake passed on
    /// one attempt: reported, not failing (unless the run says flakes fail, `--flake-fails`).
    /// `compiled-not-run` is what compile-only mode asks for: not a surprise, not a pass.
    pub fn is_unexpected(self) -> bool {
        matches!(
            self,
            Status::Fail
                | Status::Crash
                | Status::Timeout
                | Status::UnexpectedPass
                | Status::NotRun
        )
    }

    /// Whether a GPU (or the host command) actually ran the case to this status.
    pub fn ran(self) -> bool {
        !matches!(
            self,
            Status::Skip | Status::CompiledNotRun | Status::NotRun | Status::StandIn
        )
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether a first attempt's outcome is unexpected and so earns a second attempt.
pub fn needs_rerun(first: RawOutcome, expected: Expected) -> bool {
    match expected {
        Expected::Pass | Expected::Flake => first != RawOutcome::Pass,
        Expected::Fail => first == RawOutcome::Pass,
    }
}

fn failing_status(o: RawOutcome) -> Status {
    match o {
        RawOutcome::Pass => Status::Pass,
        RawOutcome::Fail => Status::Fail,
        RawOutcome::Crash => Status::Crash,
        RawOutcome::Timeout => Status::Timeout,
    }
}

/// Whether a case that has had `attempts` attempts so far gets another: its outcomes so
/// far are all unexpected (`needs_rerun`) and fewer than `1 + retries` attempts ran.
/// `--retries 0` never re-runs; the default, 1, is one re-run.
pub fn needs_another(outcomes: &[RawOutcome], expected: Expected, retries: u32) -> bool {
    match outcomes.first() {
        None => true,
        Some(first) => {
            outcomes.len() <= retries as usize
                && outcomes.iter().all(|o| *o == *first)
                && needs_rerun(*first, expected)
        }
    }
}

/// The reported status of any number of attempts (`classify` for one or two): an attempt
/// that passed next to one that did not is a flake; otherwise the first outcome decides,
/// mapped through the expectation.
pub fn classify_attempts(outcomes: &[RawOutcome], expected: Expected) -> Status {
    let Some(first) = outcomes.first().copied() else {
        return Status::NotRun;
    };
    let passed = outcomes.iter().filter(|o| **o == RawOutcome::Pass).count();
    if passed > 0 && passed < outcomes.len() {
        return Status::Flake;
    }
    classify(first, None, expected)
}

/// The reported status. `second` is the re-run's outcome, present when `needs_rerun` said
/// so. An attempt that passed next to one that did not is a flake, whatever was expected;
/// two agreeing attempts keep their status, mapped through the expectation.
pub fn classify(first: RawOutcome, second: Option<RawOutcome>, expected: Expected) -> Status {
    let passed = |o: RawOutcome| o == RawOutcome::Pass;
    if let Some(s) = second {
        if passed(first) != passed(s) {
            return Status::Flake;
        }
    }
    match (expected, passed(first)) {
        (Expected::Fail, true) => Status::UnexpectedPass,
        (Expected::Fail, false) => Status::ExpectedFail,
        (_, true) => Status::Pass,
        (_, false) => failing_status(first),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use RawOutcome::*;

    #[test]
    fn baseline_mapping() {
        // Expected pass.
        assert!(!needs_rerun(Pass, Expected::Pass));
        assert_eq!(classify(Pass, None, Expected::Pass), Status::Pass);
        assert!(needs_rerun(Fail, Expected::Pass));
        assert_eq!(classify(Fail, Some(Fail), Expected::Pass), Status::Fail);
        assert_eq!(classify(Crash, Some(Crash), Expected::Pass), Status::Crash);
        assert_eq!(
            classify(Timeout, Some(Timeout), Expected::Pass),
            Status::Timeout
        );
        assert_eq!(classify(Fail, Some(Pass), Expected::Pass), Status::Flake);
        assert_eq!(classify(Timeout, Some(Pass), Expected::Pass), Status::Flake);
        // Two failing attempts of different kinds keep the first kind.
        assert_eq!(classify(Crash, Some(Fail), Expected::Pass), Status::Crash);
        // Expected failure.
        assert!(!needs_rerun(Fail, Expected::Fail));
        assert_eq!(classify(Fail, None, Expected::Fail), Status::ExpectedFail);
        assert_eq!(classify(Crash, None, Expected::Fail), Status::ExpectedFail);
        assert!(needs_rerun(Pass, Expected::Fail));
        assert_eq!(
            classify(Pass, Some(Pass), Expected::Fail),
            Status::UnexpectedPass
        );
        assert_eq!(classify(Pass, Some(Fail), Expected::Fail), Status::Flake);
        // Known flake.
        assert_eq!(classify(Pass, None, Expected::Flake), Status::Pass);
        assert_eq!(classify(Fail, Some(Pass), Expected::Flake), Status::Flake);
        assert_eq!(classify(Fail, Some(Fail), Expected::Flake), Status::Fail);
    }

    #[test]
    fn retries_stop_at_the_first_expected_outcome_and_any_mix_is_a_flake() {
        // Default (one re-run): as before.
        assert!(needs_another(&[Fail], Expected::Pass, 1));
        assert!(!needs_another(&[Fail, Fail], Expected::Pass, 1));
        assert!(!needs_another(&[Pass], Expected::Pass, 1));
        // --retries 0: never re-run.
        assert!(!needs_another(&[Fail], Expected::Pass, 0));
        // --retries 3: up to four attempts, stopping at the first pass.
        assert!(needs_another(&[Fail, Fail, Fail], Expected::Pass, 3));
        assert!(!needs_another(&[Fail, Fail, Fail, Fail], Expected::Pass, 3));
        assert!(!needs_another(&[Fail, Pass], Expected::Pass, 3));
        assert!(needs_another(&[Pass, Pass], Expected::Fail, 3));
        assert!(!needs_another(&[Pass, Fail], Expected::Fail, 3));
        assert_eq!(
            classify_attempts(&[Fail, Fail, Pass], Expected::Pass),
            Status::Flake
        );
        assert_eq!(
            classify_attempts(&[Timeout, Fail, Fail], Expected::Pass),
            Status::Timeout
        );
        assert_eq!(
            classify_attempts(&[Pass, Pass, Pass], Expected::Fail),
            Status::UnexpectedPass
        );
        assert_eq!(
            classify_attempts(&[Fail], Expected::Fail),
            Status::ExpectedFail
        );
        assert_eq!(classify_attempts(&[], Expected::Pass), Status::NotRun);
        // Agrees with the two-attempt classify wherever both apply.
        for e in [Expected::Pass, Expected::Fail, Expected::Flake] {
            for a in [Pass, Fail, Crash, Timeout] {
                for b in [Pass, Fail, Crash, Timeout] {
                    assert_eq!(classify_attempts(&[a, b], e), classify(a, Some(b), e));
                }
                assert_eq!(classify_attempts(&[a], e), classify(a, None, e));
            }
        }
    }

    #[test]
    fn only_real_surprises_fail_the_run() {
        let failing: Vec<Status> = Status::ALL
            .into_iter()
            .filter(|s| s.is_unexpected())
            .collect();
        assert_eq!(
            failing,
            vec![
                Status::Fail,
                Status::Crash,
                Status::Timeout,
                Status::UnexpectedPass,
                Status::NotRun
            ]
        );
        assert!(!Status::CompiledNotRun.is_unexpected() && !Status::CompiledNotRun.ran());
    }
}
