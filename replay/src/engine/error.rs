//! Why an event could not be replayed as captured. Each variant carries its failure kind
//! (`EventError::kind`), so the result says what happened without reading the message.

use std::os::raw::c_int;

use hrr_archive::payload::FieldError;
use hrr_archive::ArchiveError;
use hrr_contract::FailureKind;

use crate::runtime::RuntimeError;
use crate::staging::NoMemory;

/// Why an event could not be replayed (turned into a Failure with its seq and API).
pub(super) type EvResult = Result<(), EventError>;

/// A host buffer length from the archive, refused above the process's `max_host_bytes`.
pub(super) fn host_len(
    proc_: &hrr_archive::ProcessArchive,
    n: u64,
    what: &str,
) -> Result<usize, EventError> {
    let limit = proc_.limits.max_host_bytes;
    usize::try_from(n)
        .ok()
        .filter(|_| n <= limit)
        .ok_or_else(|| EventError::TooLarge {
            what: format!("{what}: {n} bytes"),
            limit: Some(limit),
        })
}

#[derive(Debug, thiserror::Error)]
pub enum EventError {
    /// Capture recorded the call as one replay cannot re-execute.
    #[error("unreplayable: {api}: {reason}")]
    Unreplayable { api: String, reason: String },
    /// Replay stopped here on purpose (`--divergence-abort`), saying why.
    #[error("{0}")]
    Stopped(String),
    /// A table row returned another code than at capture.
    #[error("returned {got}, capture returned {want}")]
    ReturnCode { got: c_int, want: c_int },
    /// A kernel launch succeeded where capture's failed, or failed where it succeeded
    /// (the runtime's and the driver's error numbers differ, so only that is compared).
    /// Reported as "return_code"; before the kinds were typed it read "error", because
    /// its message does not begin with "returned".
    #[error("{call} of {kernel} returned {got}, capture returned {want}")]
    LaunchReturnCode {
        call: &'static str,
        kernel: String,
        got: c_int,
        want: c_int,
    },
    /// Capture could not record the call whole (`RECORD_FLAG_INCOMPLETE`).
    #[error("not replayable: {0}")]
    Incomplete(String),
    #[error("unknown API id {0} (archive from a newer capture?)")]
    UnknownApi(u16),
    #[error("payload: {0}")]
    Payload(#[from] FieldError),
    /// A blob or code object could not be read.
    #[error("{0}")]
    Archive(#[from] ArchiveError),
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    /// A call replay makes on its own behalf (module load, symbol lookup, stream wait) failed.
    #[error("{call} failed ({code})")]
    Call { call: String, code: c_int },
    #[error("handle {0:#x} was never created in this capture")]
    UnknownHandle(u64),
    /// A host buffer the event needs is larger than `max_host_bytes` allows.
    #[error("{what} exceeds max_host_bytes{}", limit.map(|l| format!(" ({l})")).unwrap_or_default())]
    TooLarge { what: String, limit: Option<u64> },
    /// A copy's count differs from the length of the blob that holds its host side:
    /// the archive contradicts itself (capture stores exactly the bytes copied), and
    /// issuing the copy would read or compare past replay's buffer.
    #[error("{what}: the blob holds {blob} bytes, the copy is {copy}")]
    BlobLength {
        what: &'static str,
        blob: u64,
        copy: u64,
    },
    /// The system refused host memory for a copy's buffer.
    #[error(transparent)]
    NoMemory(#[from] NoMemory),
    /// A call replay cannot re-execute as recorded.
    #[error("{0}")]
    Unsupported(&'static str),
    /// A recorded setting replay cannot honour, named (a launch attribute, a function
    /// attribute, a pool attribute): replaying without it would run something else.
    #[error("cannot honour {what}: {why}")]
    CannotHonour { what: String, why: String },
    /// A range the call would read or write runs past the replay allocation holding its
    /// start (`holder`: its captured start and size), or no allocation holds it: refused
    /// before the call, never handed to the runtime.
    #[error(
        "{what}: {len} bytes from {addr:#x} {}: refused, not handed to the runtime",
        match holder {
            Some((start, size)) => format!(
                "run past the allocation holding it ({size} bytes from {start:#x}, as captured)"
            ),
            None => "lie in no allocation this replay made".to_string(),
        }
    )]
    OutOfRange {
        what: &'static str,
        addr: u64,
        len: u64,
        holder: Option<(u64, u64)>,
    },
    /// The archive's record contradicts itself or the replay module (sizes, geometry,
    /// pitches, snapshots): what differs.
    #[error("{0}")]
    Inconsistent(String),
}

impl EventError {
    /// Whether the event shows the archive invalid or refused by a limit (replay then
    /// exits 2, as for an archive it cannot open) rather than a replay that differs.
    pub fn refuses_archive(&self) -> bool {
        matches!(
            self,
            EventError::TooLarge { .. }
                | EventError::BlobLength { .. }
                | EventError::NoMemory(_)
                | EventError::OutOfRange { .. }
        )
    }

    /// The failure kind the replay result reports for this error.
    pub fn kind(&self) -> FailureKind {
        match self {
            EventError::Unreplayable { .. } => FailureKind::Unreplayable,
            EventError::ReturnCode { .. } | EventError::LaunchReturnCode { .. } => {
                FailureKind::ReturnCode
            }
            _ => FailureKind::Error,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_come_from_the_variant() {
        let unreplayable = EventError::Unreplayable {
            api: "cudaStreamAddCallback".into(),
            reason: "host callback".into(),
        };
        assert_eq!(unreplayable.kind(), FailureKind::Unreplayable);
        assert_eq!(
            unreplayable.to_string(),
            "unreplayable: cudaStreamAddCallback: host callback"
        );
        let ret = EventError::ReturnCode { got: 0, want: 2 };
        assert_eq!(ret.kind(), FailureKind::ReturnCode);
        assert_eq!(ret.to_string(), "returned 0, capture returned 2");
        let launch = EventError::LaunchReturnCode {
            call: "cuLaunchKernel",
            kernel: "k".into(),
            got: 1,
            want: 0,
        };
        assert_eq!(launch.kind(), FailureKind::ReturnCode);
        // A message that merely begins like another kind's is not that kind.
        let e = EventError::Inconsistent("unreplayable-looking text".into());
        assert_eq!(e.kind(), FailureKind::Error);
        assert_eq!(EventError::UnknownApi(9999).kind(), FailureKind::Error);
    }

    #[test]
    fn limit_messages_name_the_limit_where_known() {
        let e = EventError::TooLarge {
            what: "source bytes: 10 bytes".into(),
            limit: Some(4),
        };
        assert_eq!(
            e.to_string(),
            "source bytes: 10 bytes exceeds max_host_bytes (4)"
        );
        let e = EventError::TooLarge {
            what: "registering 10 bytes".into(),
            limit: None,
        };
        assert_eq!(e.to_string(), "registering 10 bytes exceeds max_host_bytes");
    }
}
