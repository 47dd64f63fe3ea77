//! Pinned host memory a kernel reads directly: a launch record carries the content of
//! each pinned host allocation its arguments point into, as it is when the kernel is
//! launched (no copy call carries those bytes, HRR seed 001). Replay writes them back
//! before the launch.
//!
//! An allocation is recorded in pieces of [`SNAPSHOT_PIECE`] bytes, each hashed where it
//! lies (the pieces of a large allocation on several threads at once): a piece whose
//! content is stored already is named by its hash alone, and only new pieces are copied
//! and written. A program whose launches read a large buffer again and again, each
//! changing a part of it, pays one hashing pass per launch, not a copy and a write of
//! the whole buffer (issue 22's unified-memory shape: 16 launches over a 256 MiB managed
//! buffer).

use hrr_archive::api::fid;
use hrr_archive::hash::ContentHash;
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
        let pieces: Vec<&[u8]> = bytes.chunks(SNAPSHOT_PIECE as usize).collect();
        let hashes = piece_hashes(&pieces);
        let mut at = start;
        for (piece, hash) in pieces.iter().zip(hashes) {
            let w = cap.writer();
            // A kernel launched with this memory may be writing it now: new content is
            // copied once and the copy is what is named and stored.
            let r = match w.stored_blob(hash, piece.len() as u64) {
                Some(r) => r,
                None => w.put_blob_volatile(piece).map_err(SnapshotError::Store)?,
            };
            let mut s = PayloadWriter::new();
            s.u64(fid::SNAPSHOT_START, at)
                .u64(fid::SNAPSHOT_SIZE, piece.len() as u64)
                .blob(fid::SNAPSHOT_BYTES, r);
            p.nested(fid::PINNED_SNAPSHOT, &s);
            at += piece.len() as u64;
        }
    }
    Ok(())
}

/// The size of the pieces a snapshot is recorded in (a tree leaf's: below
/// `TREE_MIN_BYTES`, so a piece's name is the plain XXH3-128 of its bytes).
pub const SNAPSHOT_PIECE: u64 = hrr_archive::hash::TREE_LEAF_BYTES as u64;

/// Each piece's content hash; the pieces spread over up to 8 threads when there are
/// several.
fn piece_hashes(pieces: &[&[u8]]) -> Vec<ContentHash> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 8)
        .min(pieces.len());
    if threads <= 1 {
        return pieces.iter().map(|p| ContentHash::of(p)).collect();
    }
    let per = pieces.len().div_ceil(threads);
    std::thread::scope(|s| {
        let parts: Vec<_> = pieces
            .chunks(per)
            .map(|chunk| {
                s.spawn(move || chunk.iter().map(|p| ContentHash::of(p)).collect::<Vec<_>>())
            })
            .collect();
        parts
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    })
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
