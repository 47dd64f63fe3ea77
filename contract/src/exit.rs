//! `hrr-replay`'s exit codes, ordered by severity.

use serde::{Deserialize, Serialize};

/// How `hrr-replay` exits, for one archive or (the worst of them) for several.
/// Ordered by severity (`severity`, not the code): an unavailable GPU outranks an invalid
/// archive, which outranks a failed check, which outranks a reproduced fault.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "u8", try_from = "u8")]
pub enum ReplayExit {
    /// 0: every check passed (or --info/--events/--repair/--version succeeded). Also
    /// what a result written before `exit_code` existed reads as.
    #[default]
    Pass = 0,
    /// 1: a D2H check failed, every check was skipped, or an event failed differently
    /// from capture.
    Fail = 1,
    /// 2: bad usage, or the archive is invalid or refused by a limit.
    Invalid = 2,
    /// 3: the GPU or its runtime is unavailable.
    NoGpu = 3,
    /// 4: the program faulted at capture (a sticky error such as an illegal address) and
    /// replay faulted the same way at the same call, every other event as captured: the
    /// failure reproduced. `--expect-fault` makes this 0.
    Reproduced = 4,
}

impl ReplayExit {
    pub fn code(self) -> u8 {
        self as u8
    }

    /// The exit code a process exited with, if it is one of replay's.
    pub fn from_code(code: i32) -> Option<ReplayExit> {
        match code {
            0 => Some(ReplayExit::Pass),
            1 => Some(ReplayExit::Fail),
            2 => Some(ReplayExit::Invalid),
            3 => Some(ReplayExit::NoGpu),
            4 => Some(ReplayExit::Reproduced),
            _ => None,
        }
    }

    /// Its rank among the outcomes, lowest first.
    pub fn severity(self) -> u8 {
        match self {
            ReplayExit::Pass => 0,
            ReplayExit::Reproduced => 1,
            ReplayExit::Fail => 2,
            ReplayExit::Invalid => 3,
            ReplayExit::NoGpu => 4,
        }
    }

    /// The exit code of several archives replayed in one process; none: `Invalid`.
    pub fn worst(codes: impl IntoIterator<Item = ReplayExit>) -> ReplayExit {
        codes
            .into_iter()
            .max_by_key(|c| c.severity())
            .unwrap_or(ReplayExit::Invalid)
    }
}

impl From<ReplayExit> for u8 {
    fn from(e: ReplayExit) -> u8 {
        e.code()
    }
}

/// An exit code replay never gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0} is not an hrr-replay exit code (0 pass, 1 fail, 2 invalid, 3 no GPU, 4 reproduced)")]
pub struct UnknownExitCode(pub u8);

impl TryFrom<u8> for ReplayExit {
    type Error = UnknownExitCode;
    fn try_from(c: u8) -> Result<Self, UnknownExitCode> {
        ReplayExit::from_code(i32::from(c)).ok_or(UnknownExitCode(c))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn codes_round_trip_and_order_by_severity() {
        for c in 0..=4u8 {
            let e = ReplayExit::try_from(c).unwrap();
            assert_eq!(e.code(), c);
            assert_eq!(serde_json::to_value(e).unwrap(), json!(c));
            assert_eq!(ReplayExit::from_code(i32::from(c)), Some(e));
        }
        assert_eq!(ReplayExit::try_from(5), Err(UnknownExitCode(5)));
        assert!(serde_json::from_value::<ReplayExit>(json!(7)).is_err());
        assert_eq!(ReplayExit::from_code(-1), None);
        use ReplayExit::*;
        assert_eq!(ReplayExit::worst([Fail, NoGpu, Invalid]), NoGpu);
        assert_eq!(ReplayExit::worst([Pass, Fail, Pass]), Fail);
        assert_eq!(ReplayExit::worst([Pass, Invalid]), Invalid);
        assert_eq!(ReplayExit::worst([]), Invalid);
        assert_eq!(ReplayExit::worst([Pass, Reproduced]), Reproduced);
        assert_eq!(ReplayExit::worst([Reproduced, Fail]), Fail);
    }
}
