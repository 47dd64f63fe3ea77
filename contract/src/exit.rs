//! `hrr-replay`'s exit codes, and its `--serve` answer (the exit code one request got).

use serde::{Deserialize, Serialize};

/// How `hrr-replay` exits, for one archive or (the worst of them) for several.
/// Ordered by severity: an unavailable GPU outranks an invalid archive, which outranks a
/// failed check.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
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
            _ => None,
        }
    }

    /// The exit code of several archives replayed in one process; none: `Invalid`.
    pub fn worst(codes: impl IntoIterator<Item = ReplayExit>) -> ReplayExit {
        codes.into_iter().max().unwrap_or(ReplayExit::Invalid)
    }
}

impl From<ReplayExit> for u8 {
    fn from(e: ReplayExit) -> u8 {
        e.code()
    }
}

/// An exit code replay never gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0} is not an hrr-replay exit code (0 pass, 1 fail, 2 invalid, 3 no GPU)")]
pub struct UnknownExitCode(pub u8);

impl TryFrom<u8> for ReplayExit {
    type Error = UnknownExitCode;
    fn try_from(c: u8) -> Result<Self, UnknownExitCode> {
        ReplayExit::from_code(i32::from(c)).ok_or(UnknownExitCode(c))
    }
}

/// `hrr-replay --serve`'s answer to a request it replayed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServeReply {
    /// The exit code `hrr-replay ARCHIVES...` would have given.
    pub exit_code: ReplayExit,
    /// False: the device is unusable after this request; the service has ended.
    pub healthy: bool,
}

/// One line of `hrr-replay --serve`'s output: a reply, or why a request was refused
/// (unreadable, or its log could not be created); the service goes on after a refusal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ServeAnswer {
    Replied(ServeReply),
    Refused { error: String },
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn codes_round_trip_and_order_by_severity() {
        for c in 0..=3u8 {
            let e = ReplayExit::try_from(c).unwrap();
            assert_eq!(e.code(), c);
            assert_eq!(serde_json::to_value(e).unwrap(), json!(c));
            assert_eq!(ReplayExit::from_code(i32::from(c)), Some(e));
        }
        assert_eq!(ReplayExit::try_from(4), Err(UnknownExitCode(4)));
        assert!(serde_json::from_value::<ReplayExit>(json!(7)).is_err());
        assert_eq!(ReplayExit::from_code(-1), None);
        use ReplayExit::*;
        assert_eq!(ReplayExit::worst([Fail, NoGpu, Invalid]), NoGpu);
        assert_eq!(ReplayExit::worst([Pass, Fail, Pass]), Fail);
        assert_eq!(ReplayExit::worst([Pass, Invalid]), Invalid);
        assert_eq!(ReplayExit::worst([]), Invalid);
    }

    #[test]
    fn serve_answers_keep_their_shape() {
        let r = ServeAnswer::Replied(ServeReply {
            exit_code: ReplayExit::Fail,
            healthy: true,
        });
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v, json!({"exit_code": 1, "healthy": true}));
        assert_eq!(serde_json::from_value::<ServeAnswer>(v).unwrap(), r);
        let refused: ServeAnswer = serde_json::from_str(r#"{"error": "bad request: x"}"#).unwrap();
        assert_eq!(
            refused,
            ServeAnswer::Refused {
                error: "bad request: x".into()
            }
        );
        assert!(
            serde_json::from_str::<ServeAnswer>(r#"{"exit_code": 9, "healthy": true}"#).is_err()
        );
    }
}
