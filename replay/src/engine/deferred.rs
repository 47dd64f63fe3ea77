//! Asynchronous D2H copies whose captured output comes in a later `CopyOutput` record
//! (capture read it on a reader thread when the copy completed): replay issues the copy
//! into a buffer of its own, records an event of its own after it, and compares when
//! the attaching record arrives, waiting on that event only, so replay keeps the
//! program's streams overlapping as capture did. The buffer stays reserved until it is
//! compared; the comparison's failure names the copy (sequence id, API, offset).
//!
//! The expected bytes are loaded (from the attaching record's blob, found ahead in the
//! log) before the copy is issued, and the result buffer holds their complement (or a
//! fill differing from them at every byte: `poison_for_fill`), so a byte the replayed
//! copy never wrote cannot pass.

use std::collections::{HashMap, VecDeque};
use std::rc::Rc;

use hrr_archive::api::{fid, id, semantic};
use hrr_archive::fill::Fill;
use hrr_archive::payload::Payload;
use hrr_archive::{ContentHash, ProcessArchive};

use super::error::EventError;
use crate::compare::Want;
use crate::runtime::Runtime;
use crate::staging::OwnedBuf;

/// cudaEventDisableTiming / hipEventDisableTiming.
pub(super) const EVENT_DISABLE_TIMING: u64 = 0x2;
/// Free buffers of each kind kept for reuse at most (the oldest go first).
const KEEP_FREE: usize = 16;
/// Verified contents kept before the oldest one's buffer is reused for new content.
const KEEP_VERIFIED: usize = 4;
/// Copies whose output record arrived but whose copy may still be running: their
/// comparison waits (the GPU runs on meanwhile) until their event has completed, or
/// until more than this many wait.
pub(super) const MAX_READY: usize = 4;

/// Expected bytes loaded from a blob and verified against its hash: shared by every
/// copy waiting for the same content (the four quarters of a buffer that hold the same
/// bytes, a result read back again and again), and kept for the next.
pub(super) struct Expected<'a> {
    pub(super) content: Content<'a>,
    pub(super) hash: ContentHash,
}

/// What an expected content is held as.
pub(super) enum Content<'a> {
    /// Loaded into a buffer of its own.
    Bytes(OwnedBuf<'a>),
    /// A fill, compared as its unit: no buffer at all.
    Fill(Fill),
}

impl Expected<'_> {
    pub(super) fn bytes(&self) -> usize {
        match &self.content {
            Content::Bytes(b) => b.bytes(),
            Content::Fill(f) => f.len as usize,
        }
    }

    pub(super) fn want(&self) -> Want<'_> {
        match &self.content {
            Content::Bytes(b) => Want::Bytes(b.as_slice()),
            Content::Fill(f) => Want::Fill(f),
        }
    }
}

/// A copy issued, not yet compared.
pub(super) struct Waiting<'a> {
    pub(super) api: String,
    pub(super) event: u64,
    pub(super) result: OwnedBuf<'a>,
    /// None when capture could not record the output (its record is refused by name).
    pub(super) expected: Option<Rc<Expected<'a>>>,
}

/// A copy staged by `stage`, until `issued` files it.
pub(super) struct Staged<'a> {
    pub(super) copy_seq: u64,
    pub(super) result: OwnedBuf<'a>,
    pub(super) expected: Option<Rc<Expected<'a>>>,
}

/// The deferred comparisons of one process's replay.
#[derive(Default)]
pub(super) struct Deferred<'a> {
    /// (copy seq, graph node seq for a graph launch's output) -> index of its
    /// `CopyOutput` record (built on first use).
    pub(super) attached: Option<HashMap<(u64, Option<u64>), usize>>,
    pub(super) waiting: HashMap<u64, Waiting<'a>>,
    /// Result buffers (page-locked from 8 MiB) for reuse.
    pub(super) free: Vec<OwnedBuf<'a>>,
    /// Verified expected contents no copy waits for now, kept for reuse.
    pub(super) verified: Vec<Rc<Expected<'a>>>,
    pub(super) events: Vec<u64>,
    /// Bytes held by waiting comparisons (both buffers), bounded by max_host_bytes.
    pub(super) reserved: u64,
    /// Copies whose `CopyOutput` record arrived, in the order of the records: compared
    /// once complete (`compare_ready`).
    pub(super) ready: VecDeque<u64>,
}

pub(super) fn attach_index(p: &ProcessArchive) -> HashMap<(u64, Option<u64>), usize> {
    p.events
        .iter()
        .enumerate()
        .filter(|(_, e)| e.header.api_id == semantic::COPY_OUTPUT)
        .filter_map(|(i, e)| {
            let pl = Payload::parse(&e.payload).ok()?;
            let node = pl
                .get(fid::COPY_NODE)
                .map(|f| f.as_u64())
                .transpose()
                .ok()?;
            Some(((pl.u64(fid::COPY_SEQ, "copy").ok()?, node), i))
        })
        .collect()
}

impl<'a> Deferred<'a> {
    /// A result buffer of exactly `len` bytes: a free one, or a new page-locked one.
    pub(super) fn result_buffer(
        &mut self,
        rt: &'a Runtime,
        len: usize,
    ) -> Result<OwnedBuf<'a>, EventError> {
        match self.free.iter().position(|b| b.bytes() == len) {
            Some(i) => Ok(self.free.swap_remove(i)),
            None => Ok(OwnedBuf::new(rt, len, true)?),
        }
    }

    pub(super) fn give_back(&mut self, b: OwnedBuf<'a>) {
        if self.free.len() >= KEEP_FREE {
            self.free.remove(0);
        }
        self.free.push(b);
    }

    /// The verified content `hash` of `len` bytes, if a waiting copy or the kept ones
    /// hold it.
    pub(super) fn shared(&self, hash: &ContentHash, len: usize) -> Option<Rc<Expected<'a>>> {
        let fits = |e: &&Rc<Expected<'a>>| e.hash == *hash && e.bytes() == len;
        self.waiting
            .values()
            .filter_map(|w| w.expected.as_ref())
            .find(fits)
            .or_else(|| self.verified.iter().find(fits))
            .cloned()
    }

    /// The buffer of the oldest kept content of `len` bytes no copy holds, once at least
    /// `KEEP_VERIFIED` contents are kept: a program whose every round reads back new
    /// bytes reuses faulted-in memory instead of fresh pages each round.
    pub(super) fn recycled(&mut self, len: usize) -> Option<OwnedBuf<'a>> {
        if self.verified.len() < KEEP_VERIFIED {
            return None;
        }
        let i = self.verified.iter().position(|e| {
            Rc::strong_count(e) == 1 && matches!(&e.content, Content::Bytes(b) if b.bytes() == len)
        })?;
        match Rc::try_unwrap(self.verified.remove(i)).ok()?.content {
            Content::Bytes(b) => Some(b),
            Content::Fill(_) => None,
        }
    }

    /// A copy is done with its expected content: kept while no one else holds it.
    pub(super) fn done_with(&mut self, e: Option<Rc<Expected<'a>>>) {
        let Some(e) = e else { return };
        if Rc::strong_count(&e) > 1 || self.verified.iter().any(|v| Rc::ptr_eq(v, &e)) {
            return;
        }
        if self.verified.len() >= KEEP_FREE {
            self.verified.remove(0);
        }
        self.verified.push(e);
    }

    /// Releases every buffer (their registrations) and every event (end of the
    /// process's replay).
    pub(super) fn release(&mut self, rt: &Runtime) {
        self.ready.clear();
        let events: Vec<u64> = self.waiting.drain().map(|(_, w)| w.event).collect();
        self.events.extend(events);
        self.free.clear();
        self.verified.clear();
        for e in self.events.drain(..) {
            // SAFETY: EventDestroy of an event this replay created.
            let _ = unsafe { rt.call_table(id::EventDestroy, &[e]) };
        }
        self.reserved = 0;
    }
}
