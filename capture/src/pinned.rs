//! Pinned host memory a kernel reads directly: a launch record carries the content of
//! each pinned host allocation its arguments point into, as it is when the kernel is
//! launched (no copy call carries those bytes, HRR seed 001). Replay writes them back
//! before the launch.

use hrr_archive::api::fid;
use hrr_archive::payload::PayloadWriter;
use hrr_archive::ArchiveError;

use crate::ffi::host_bytes;
use crate::state::Capture;

/// Why a launch's pinned memory was not recorded (the launch is then incomplete).
#[derive(Debug)]
pub enum SnapshotError {
    /// Over the cap: recorded incomplete, loudly, never truncated.
    OverCap { total: u64, cap: u64 },
    /// The archive refused the blob (capture stopped, disk full).
    Store(ArchiveError),
}

impl std::fmt::Display for SnapshotError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SnapshotError::OverCap { total, cap } => write!(
                f,
                "pinned host memory read by the kernel ({total} bytes) exceeds the snapshot cap ({cap} bytes, HRR_CAPTURE_PINNED_SNAPSHOT_MAX)"
            ),
            SnapshotError::Store(e) => write!(f, "pinned snapshot not recorded: {e}"),
        }
    }
}

impl std::error::Error for SnapshotError {}

/// Appends one PINNED_SNAPSHOT field per (start, len) allocation to the launch record.
#[inline]
pub fn snapshot_pinned(
    cap: &Capture,
    p: &mut PayloadWriter,
    pinned: &[(u64, u64)],
) -> Result<(), SnapshotError> {
    let total: u64 = pinned.iter().map(|(_, n)| n).sum();
    if total > cap.pinned_snapshot_max {
        return Err(SnapshotError::OverCap {
            total,
            cap: cap.pinned_snapshot_max,
        });
    }
    for &(start, len) in pinned {
        // A copy's pending read of this memory first: the snapshot must see its bytes.
        crate::outputs::wait_overlapping(start, start.saturating_add(len));
        // SAFETY: a live pinned host allocation of `len` bytes from the allocation table.
        let bytes = unsafe { host_bytes(start, len) };
        // A kernel launched with this memory may be writing it now.
        let r = cap
            .writer()
            .put_blob_volatile(bytes)
            .map_err(SnapshotError::Store)?;
        let mut s = PayloadWriter::new();
        s.u64(fid::SNAPSHOT_START, start)
            .u64(fid::SNAPSHOT_SIZE, len)
            .blob(fid::SNAPSHOT_BYTES, r);
        p.nested(fid::PINNED_SNAPSHOT, &s);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn over_the_cap_names_the_variable() {
        let e = SnapshotError::OverCap { total: 10, cap: 4 };
        assert_eq!(
            e.to_string(),
            "pinned host memory read by the kernel (10 bytes) exceeds the snapshot cap (4 bytes, HRR_CAPTURE_PINNED_SNAPSHOT_MAX)"
        );
    }
}
