//! One status enum for every case, and the baseline mapping (as deqp-runner does it) from
//! what happened (raw outcomes of one or two attempts) and what the matrix expects to the
//! status reported.

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
}

impl Status {
    pub const ALL: [Status; 8] = [
        Status::Pass,
        Status::Fail,
        Status::Crash,
        Status::Timeout,
        Status::Skip,
        Status::ExpectedFail,
        Status::UnexpectedPass,
        Status::Flake,
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
        }
    }

    /// Whether this status makes the run fail (exit 1): the result differs from what the
    /// matrix expects. A flake passed on one attempt: reported, not failing.
    pub fn is_unexpected(self) -> bool {
        matches!(
            self,
            Status::Fail | Status::Crash | Status::Timeout | Status::UnexpectedPass
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
                Status::UnexpectedPass
            ]
        );
    }
}
