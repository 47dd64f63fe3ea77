//! Pinned host memory a kernel reads directly: a launch record carries the content of
//! each pinned host allocation its arguments point into, as it is when the kernel is
//! launched (no copy call carries those bytes, HRR seed 001). Replay writes them back
//! before the launch.
//!
//! An allocation is recorded in pieces of [`pieces::PIECE`] bytes, each
//! hashed where it lies (the pieces of a large allocation on several threads at once): a
//! piece whose content is stored already is named by its hash alone, and only new pieces
//! are copied and written. A program whose launches read a large buffer again and again,
//! synchronising between them and each changing a part of it, pays one hashing pass per
//! launch, not a copy and a write of the whole buffer. Managed memory is read through the host or by the copy engine (`dma`),
//! whichever has cost that allocation less (`read_choice`).
//!
//! A managed or page-locked allocation that an earlier launch still in flight reaches
//! (`mapped::in_flight`: no synchronisation capture saw has completed it) is not
//! snapshotted: until then the host cannot write it without racing that kernel, and its
//! content is what the kernels make, which replay makes too. A snapshot taken then would
//! record a kernel's output half written, and replay would write that back under its own
//! kernels (the CUDA samples' zero-copy shape: 16 streams each launching over its own
//! chunk of one mapped buffer; each launch's snapshot held the other chunks mid-kernel, and
//! hashed all of the buffer). The launch names the allocation and the launch in flight
//! instead (`SNAPSHOT_IN_FLIGHT`). `HRR_CAPTURE_SNAPSHOTS=every` takes every snapshot, for
//! a program whose host writes other bytes of the buffer while a kernel runs on it.

use hrr_archive::api::fid;
use hrr_archive::payload::PayloadWriter;
use hrr_archive::ArchiveError;

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

use crate::alloc::Space;
use crate::ffi::host_bytes;
use crate::in_flight::InFlight;
use crate::pieces;
use crate::read_choice::{Costs, Way};
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

/// Appends one PINNED_SNAPSHOT field per (start, len) allocation to the launch record;
/// `in_flight(start, len)` says whether launches capture has not seen completed reach the
/// memory, and whether they still run (`mapped::in_flight`): memory a running launch
/// reaches is left out (`SNAPSHOT_IN_FLIGHT`); memory whose launches all finished
/// unobserved is snapshotted, each stream's latest such launch named
/// (`SNAPSHOT_AFTER`: replay completes it before restoring). The cap counts the
/// allocations snapshotted, not those left out.
#[inline]
pub fn snapshot_pinned(
    cap: &Capture,
    in_flight: impl Fn(u64, u64) -> InFlight,
    p: &mut PayloadWriter,
    pinned: &[(u64, u64)],
) -> Result<(), SnapshotError> {
    let mut taken = Vec::with_capacity(pinned.len());
    for &(start, len) in pinned {
        let state = match cap.snapshots_every {
            true => InFlight::Settled,
            false => in_flight(start, len),
        };
        match state {
            InFlight::Running(launch) => {
                let mut s = PayloadWriter::new();
                s.u64(fid::SNAPSHOT_START, start)
                    .u64(fid::SNAPSHOT_SIZE, len)
                    .u64(fid::SNAPSHOT_IN_FLIGHT_LAUNCH, launch);
                p.nested(fid::SNAPSHOT_IN_FLIGHT, &s);
                crate::in_flight::skipped();
            }
            InFlight::Finished(launches) => {
                for (stream, launch) in launches {
                    let mut s = PayloadWriter::new();
                    s.u64(fid::SNAPSHOT_START, start)
                        .u64(fid::SNAPSHOT_IN_FLIGHT_LAUNCH, launch);
                    // A stream destroyed since is named by no stream: replay waits for
                    // the device.
                    if !crate::reach::is_gone(stream) {
                        s.handle(fid::SNAPSHOT_STREAM, stream);
                    }
                    p.nested(fid::SNAPSHOT_AFTER, &s);
                }
                taken.push((start, len));
            }
            InFlight::Settled => taken.push((start, len)),
        }
    }
    let total: u64 = taken.iter().map(|(_, n)| n).sum();
    if total > cap.pinned_snapshot_max {
        return Err(SnapshotError::OverCap {
            total,
            cap: cap.pinned_snapshot_max,
        });
    }
    for (start, len) in taken {
        // A copy's pending read of this memory first: the snapshot must see its bytes.
        crate::outputs::wait_overlapping(start, start.saturating_add(len));
        let managed = matches!(cap.allocs.lookup(start), Some((_, _, Space::Managed)));
        let way = if managed { choose(start) } else { Way::Host };
        let t0 = Instant::now();
        if way == Way::Copy {
            if snapshot_by_copy(cap, p, start, len)? {
                observe(start, |c| c.observe(Way::Copy, elapsed_ns(t0), len));
                continue;
            }
            observe(start, Costs::copy_unavailable);
        }
        // SAFETY: a live pinned host or managed allocation of `len` bytes from the
        // allocation table.
        let bytes = unsafe { host_bytes(start, len) };
        // A kernel launched with this memory may be writing it now: new content is
        // copied once and the copy is what is named and stored.
        record_pieces(cap, p, start, bytes, true)?;
        if managed {
            observe(start, |c| c.observe(Way::Host, elapsed_ns(t0), len));
        }
    }
    Ok(())
}

/// What reading each managed allocation's snapshots cost so far, by its start
/// (`read_choice`). Only ever tried: a thread finding it taken reads through the host and
/// learns nothing.
static COSTS: Mutex<Option<HashMap<u64, Costs>>> = Mutex::new(None);
/// Allocations remembered at most; past it the table starts again.
const COSTS_KEPT: usize = 4096;

fn choose(start: u64) -> Way {
    match COSTS.try_lock() {
        Ok(mut t) => t
            .get_or_insert_with(HashMap::new)
            .get(&start)
            .copied()
            .unwrap_or_default()
            .choose(),
        Err(_) => Way::Host,
    }
}

fn observe(start: u64, f: impl FnOnce(&mut Costs)) {
    if let Ok(mut t) = COSTS.try_lock() {
        let t = t.get_or_insert_with(HashMap::new);
        if t.len() >= COSTS_KEPT && !t.contains_key(&start) {
            t.clear();
        }
        f(t.entry(start).or_default());
    }
}

fn elapsed_ns(t0: Instant) -> u64 {
    u64::try_from(t0.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// Managed memory read by the copy engine (`dma`), a batch of pieces at a time, so its
/// pages stay where the program put them. Ok(false), with nothing recorded, when the copy
/// path is not there for the first batch: the caller reads through the host. A later
/// batch the copy path refuses is read through the host.
fn snapshot_by_copy(
    cap: &Capture,
    p: &mut PayloadWriter,
    start: u64,
    len: u64,
) -> Result<bool, SnapshotError> {
    let mut off = 0u64;
    while off < len {
        let n = (len - off).min(crate::dma::STAGING_BYTES as u64);
        let at = start + off;
        // SAFETY: [at, at + n) lies inside the managed allocation [start, start + len).
        let read =
            unsafe { crate::dma::read(at, n as usize, |b| record_pieces(cap, p, at, b, false)) };
        match read {
            Some(r) => r?,
            None if off == 0 => return Ok(false),
            None => {
                // SAFETY: as above; host-readable managed memory.
                let bytes = unsafe { host_bytes(at, n) };
                record_pieces(cap, p, at, bytes, true)?;
            }
        }
        off += n;
    }
    Ok(true)
}

/// One PINNED_SNAPSHOT field per piece of `bytes`, which lie at `start` (`pieces`): a
/// piece stored already is named by its hash alone. `volatile`: something may write
/// `bytes` meanwhile (the program's own memory), so new content is copied once before
/// it is stored.
fn record_pieces(
    cap: &Capture,
    p: &mut PayloadWriter,
    start: u64,
    bytes: &[u8],
    volatile: bool,
) -> Result<(), SnapshotError> {
    let source = if volatile {
        pieces::Source::Program
    } else {
        pieces::Source::Staged
    };
    for piece in pieces::store(cap.writer(), start, bytes, source, pieces::Likely::Stored) {
        let r = piece.blob.map_err(SnapshotError::Store)?;
        let mut s = PayloadWriter::new();
        s.u64(fid::SNAPSHOT_START, piece.at)
            .u64(fid::SNAPSHOT_SIZE, piece.len)
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
