//! Why a case's attempt ended before its checks: each variant knows the raw outcome it
//! stands for (`StepError::outcome`), and its text is the attempt's message.

use std::path::PathBuf;

use hrr_reports::RawOutcome;

use crate::service::ServiceError;

#[derive(Debug, thiserror::Error)]
pub enum StepError {
    /// A step's process was killed by a signal (`exit` says which).
    #[error("{step}: {exit}")]
    Signalled { step: &'static str, exit: String },
    #[error("{step}: timed out")]
    TimedOut { step: &'static str },
    #[error("{step}: interrupted")]
    Interrupted { step: &'static str },
    #[error("{step}: cannot start: {source}")]
    CannotStart {
        step: &'static str,
        source: std::io::Error,
    },
    /// The replay service gave no answer before the case's deadline (it was killed).
    #[error("{step}: the replay did not finish before the case's time limit")]
    ReplayTimedOut { step: &'static str },
    #[error("{step}: {source}")]
    Service {
        step: &'static str,
        source: ServiceError,
    },
    /// Replay exited 3 for an archive.
    #[error("{step}: GPU or runtime unavailable: {reason}")]
    NoGpu { step: &'static str, reason: String },
    #[error("{step}: GPU or runtime unavailable (exit 3, no JSON result)")]
    NoGpuNoResult { step: &'static str },
    #[error("{step}: exit {code} and no JSON result for {count} archive(s) ({}){}", json.display(), why.as_deref().map(|w| format!(": {w}")).unwrap_or_default())]
    NoResult {
        step: &'static str,
        code: i32,
        count: usize,
        json: PathBuf,
        /// Why a JSON file that exists could not be read as results.
        why: Option<String>,
    },
    #[error("replay returned no result")]
    EmptyResult,
    /// The captured run did not exit as the case expects, the native run did.
    #[error("capture changed the program's behaviour: {under_capture} under capture, {natively} natively; see capture.log: {log}")]
    CaptureChanged {
        outcome: RawOutcome,
        under_capture: String,
        natively: String,
        log: String,
    },
    #[error("the program fails without capture too: native run {native} (the case expects exit {expected}); see native.log: {log}")]
    FailsNatively {
        native: String,
        expected: i32,
        log: String,
    },
    /// The native run, made after the captured run failed, did not finish either.
    #[error("native run: {native} (and under capture: {under_capture})")]
    NativeRun {
        native: Box<StepError>,
        under_capture: String,
    },
    #[error("capture wrote no archive: {log}")]
    NoArchive { log: String },
    #[error("no binary")]
    NoBinary,
    /// An archive case's packed archive did not unpack (it was checked against its
    /// SHA-256 before: damage after that, or a full disk).
    #[error("unpacking the stored archive {}: {source}", hrrz.display())]
    Unpack {
        hrrz: PathBuf,
        source: hrr_archive::ArchiveError,
    },
}

/// Why the blob-edit check's copy of the archive could not be made.
#[derive(Debug, thiserror::Error)]
pub enum EditCopyError {
    #[error("cannot copy the archive: {0}")]
    Copy(#[from] std::io::Error),
    #[error("no expected output to edit: {0}")]
    Edit(#[from] hrr_archive::ArchiveError),
}

impl StepError {
    /// The raw outcome the attempt reports.
    pub fn outcome(&self) -> RawOutcome {
        match self {
            StepError::TimedOut { .. } | StepError::ReplayTimedOut { .. } => RawOutcome::Timeout,
            StepError::CaptureChanged { outcome, .. } => *outcome,
            StepError::NativeRun { native, .. } => native.outcome(),
            StepError::FailsNatively { .. }
            | StepError::NoArchive { .. }
            | StepError::Unpack { .. } => RawOutcome::Fail,
            StepError::Signalled { .. }
            | StepError::Interrupted { .. }
            | StepError::CannotStart { .. }
            | StepError::Service { .. }
            | StepError::NoGpu { .. }
            | StepError::NoGpuNoResult { .. }
            | StepError::NoResult { .. }
            | StepError::EmptyResult
            | StepError::NoBinary => RawOutcome::Crash,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_follow_the_variant() {
        assert_eq!(
            StepError::TimedOut { step: "capture" }.outcome(),
            RawOutcome::Timeout
        );
        let native = StepError::NativeRun {
            native: Box::new(StepError::TimedOut { step: "native" }),
            under_capture: "exit 1".into(),
        };
        assert_eq!(native.outcome(), RawOutcome::Timeout);
        assert_eq!(
            native.to_string(),
            "native run: native: timed out (and under capture: exit 1)"
        );
        let changed = StepError::CaptureChanged {
            outcome: RawOutcome::Crash,
            under_capture: "capture: killed by signal 11 (SIGSEGV)".into(),
            natively: "exit 0".into(),
            log: "x".into(),
        };
        assert_eq!(changed.outcome(), RawOutcome::Crash);
        assert_eq!(
            StepError::NoArchive { log: String::new() }.outcome(),
            RawOutcome::Fail
        );
        assert_eq!(StepError::EmptyResult.outcome(), RawOutcome::Crash);
    }

    #[test]
    fn a_missing_result_says_why_only_when_there_is_a_file() {
        let e = |why: Option<&str>| StepError::NoResult {
            step: "replay",
            code: 1,
            count: 2,
            json: PathBuf::from("/o/replay.json"),
            why: why.map(String::from),
        };
        assert_eq!(
            e(None).to_string(),
            "replay: exit 1 and no JSON result for 2 archive(s) (/o/replay.json)"
        );
        assert!(e(Some("schema version 2.0 is newer"))
            .to_string()
            .ends_with("(/o/replay.json): schema version 2.0 is newer"));
    }
}
