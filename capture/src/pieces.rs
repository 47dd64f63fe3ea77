//! Host memory stored as pieces of [`PIECE`] bytes, on up to 8 threads at once: the one
//! way capture stores a large buffer it reads again and again (pinned and managed
//! snapshots at launches, mapped and managed outputs at synchronisations). A piece's
//! name is the plain XXH3-128 of its bytes, so a piece a launch's snapshot stored and a
//! synchronisation's output finds unchanged (or the other way round) is stored once and
//! named by its hash alone after that: issue 22's unified-memory shape reads one 256 MiB
//! managed buffer at a launch and again at the next synchronisation, pass after pass.
//!
//! The program's memory may be written while it is read (a kernel still running on
//! it), so new content is copied once and the copy is what is hashed and stored; a
//! thread's copy buffer is reused piece after piece (`SCRATCH`), so copying costs no
//! page faults.

use std::sync::Mutex;

use hrr_archive::hash::{self, ContentHash};
use hrr_archive::payload::BlobRef;
use hrr_archive::{ArchiveError, ProcessWriter};

/// The size of the pieces (a tree leaf's: below `TREE_MIN_BYTES`, so a piece's name is
/// the plain XXH3-128 of its bytes).
pub const PIECE: u64 = hrr_archive::hash::TREE_LEAF_BYTES as u64;

/// Threads storing one buffer's pieces at most.
const THREADS: usize = 8;

/// Where the bytes lie.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Source {
    /// The program's memory, which a kernel may be writing: new content is copied once
    /// and the copy is stored.
    Program,
    /// Capture's own staging buffer, which nothing else writes.
    Staged,
}

/// What the pieces most likely are, which decides whether a piece is hashed where it
/// lies before it is copied (a piece found stored is never copied) or copied first (a
/// new piece is read once).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Likely {
    /// Stored already (a snapshot: the buffer a launch reads, mostly unchanged).
    Stored,
    /// New (an output: what kernels just wrote).
    New,
}

/// One piece: where it lies and its blob, or why the archive did not take it.
#[derive(Debug)]
pub struct Piece {
    pub at: u64,
    pub len: u64,
    pub blob: Result<BlobRef, ArchiveError>,
}

/// Stores `bytes`, which lie at `start`, as pieces in order.
pub fn store(
    w: &ProcessWriter,
    start: u64,
    bytes: &[u8],
    source: Source,
    likely: Likely,
) -> Vec<Piece> {
    let pieces: Vec<&[u8]> = bytes.chunks(PIECE as usize).collect();
    let blobs: Vec<Result<BlobRef, ArchiveError>> = if pieces.len() <= 1 {
        pieces.iter().map(|p| one(w, p, source, likely)).collect()
    } else {
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .clamp(1, THREADS)
            .min(pieces.len());
        let per = pieces.len().div_ceil(threads);
        std::thread::scope(|s| {
            let parts: Vec<_> = pieces
                .chunks(per)
                .map(|chunk| {
                    s.spawn(move || {
                        chunk
                            .iter()
                            .map(|p| one(w, p, source, likely))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            parts
                .into_iter()
                .flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                .collect()
        })
    };
    let mut at = start;
    pieces
        .iter()
        .zip(blobs)
        .map(|(p, blob)| {
            let piece = Piece {
                at,
                len: p.len() as u64,
                blob,
            };
            at += p.len() as u64;
            piece
        })
        .collect()
}

/// One piece's blob: named by its hash alone when the archive holds it.
fn one(
    w: &ProcessWriter,
    piece: &[u8],
    source: Source,
    likely: Likely,
) -> Result<BlobRef, ArchiveError> {
    let len = piece.len() as u64;
    if source == Source::Staged || likely == Likely::Stored {
        let h = ContentHash::of(piece);
        if let Some(r) = w.stored_blob(h, len) {
            return Ok(r);
        }
        if source == Source::Staged {
            return w.put_blob_hashed(h, piece);
        }
    }
    let mut scratch = take_scratch();
    if scratch.len() < piece.len() {
        scratch.resize(piece.len(), 0);
    }
    let copy = &mut scratch[..piece.len()];
    let stored = match hash::copy_into_and_hash(piece, copy) {
        Some(h) => match w.stored_blob(h, len) {
            Some(r) => Ok(r),
            None => w.put_blob_hashed(h, copy),
        },
        // Not reached: a piece is below the tree's size.
        None => w.put_blob_volatile(piece),
    };
    give_scratch(scratch);
    stored
}

/// Copy buffers kept for reuse (at most one a thread of `store`, so at most 128 MiB
/// once a buffer of 8 pieces or more was stored). Only ever tried: a
/// thread finding the lock taken (or a forked child finding it held) takes a new buffer.
static SCRATCH: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());

fn take_scratch() -> Vec<u8> {
    SCRATCH
        .try_lock()
        .ok()
        .and_then(|mut s| s.pop())
        .unwrap_or_default()
}

fn give_scratch(b: Vec<u8>) {
    if let Ok(mut s) = SCRATCH.try_lock() {
        if s.len() < THREADS {
            s.push(b);
        }
    }
}
