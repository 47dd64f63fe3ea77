//! Asynchronous D2H copies whose captured output comes in a later `CopyOutput` record
//! (capture read it on a reader thread when the copy completed): replay issues the copy
//! into a buffer of its own, records an event of its own after it, and compares when
//! the attaching record arrives, waiting on that event only, so replay keeps the
//! program's streams overlapping as capture did. The buffer stays reserved until it is
//! compared; the comparison's failure names the copy (sequence id, API, offset).
//!
//! The expected bytes are loaded (from the attaching record's blob, found ahead in the
//! log) before the copy is issued, and the result buffer holds their complement, so a
//! byte the replayed copy never wrote cannot pass.

use std::collections::HashMap;

use hrr_archive::api::{fid, id, semantic, BLOB_FIELD};
use hrr_archive::payload::Payload;
use hrr_archive::record::RECORD_FLAG_INCOMPLETE;
use hrr_archive::{ContentHash, Event, ProcessArchive};

use super::compare::{compare, mismatch_failure};
use super::{Ctx, EvResult, EventError};
use crate::runtime::Runtime;
use crate::staging::{complement_into, OwnedBuf};

/// cudaEventDisableTiming / hipEventDisableTiming.
const EVENT_DISABLE_TIMING: u64 = 0x2;
/// Free buffers kept for reuse at most (larger sets are released as they come back).
const KEEP_FREE: usize = 16;

/// A copy issued, not yet compared.
struct Waiting<'a> {
    api: String,
    holds: Option<ContentHash>,
    event: u64,
    result: OwnedBuf<'a>,
    expected: OwnedBuf<'a>,
}

/// A copy staged by `stage`, until `issued` files it.
pub(super) struct Staged<'a> {
    copy_seq: u64,
    result: OwnedBuf<'a>,
    expected: OwnedBuf<'a>,
    /// The verified content the expected buffer holds.
    holds: Option<ContentHash>,
}

/// The deferred comparisons of one process's replay.
#[derive(Default)]
pub(super) struct Deferred<'a> {
    /// Copy seq -> index of its `CopyOutput` record (built on first use).
    attached: Option<HashMap<u64, usize>>,
    waiting: HashMap<u64, Waiting<'a>>,
    /// Buffers for reuse, each with the content it holds verified, if any (a program
    /// reading the same bytes back again and again costs no blob read then).
    free: Vec<(OwnedBuf<'a>, Option<ContentHash>)>,
    events: Vec<u64>,
    /// Bytes held by waiting comparisons (both buffers), bounded by max_host_bytes.
    reserved: u64,
}

fn attach_index(p: &ProcessArchive) -> HashMap<u64, usize> {
    p.events
        .iter()
        .enumerate()
        .filter(|(_, e)| e.header.api_id == semantic::COPY_OUTPUT)
        .filter_map(|(i, e)| {
            let pl = Payload::parse(&e.payload).ok()?;
            Some((pl.u64(fid::COPY_SEQ, "copy").ok()?, i))
        })
        .collect()
}

impl<'a> Deferred<'a> {
    /// A buffer of exactly `len` bytes: a free one holding the verified content `want`
    /// (then true), else a free one of that length holding nothing wanted, else a new one.
    fn buffer(
        &mut self,
        rt: &'a Runtime,
        len: usize,
        want: Option<ContentHash>,
    ) -> Result<(OwnedBuf<'a>, bool), EventError> {
        if let Some(i) = self
            .free
            .iter()
            .position(|(b, h)| want.is_some() && *h == want && b.bytes() == len)
        {
            return Ok((self.free.swap_remove(i).0, true));
        }
        // One that holds nothing wanted first: a verified content is kept for its reuse.
        let fits = |(b, _): &(OwnedBuf, Option<ContentHash>)| b.bytes() == len;
        let i = self
            .free
            .iter()
            .position(|f| fits(f) && f.1.is_none())
            .or_else(|| self.free.iter().position(fits));
        match i {
            Some(i) => Ok((self.free.swap_remove(i).0, false)),
            None => Ok((OwnedBuf::new(rt, len)?, false)),
        }
    }

    /// Keeps a buffer, and the verified content it holds, for the next copy of its
    /// length (a bounded number of them).
    fn give_back(&mut self, b: OwnedBuf<'a>, holds: Option<ContentHash>) {
        if self.free.len() >= KEEP_FREE {
            self.free.remove(0);
        }
        self.free.push((b, holds));
    }

    /// Releases every buffer (their registrations) and every event (end of the
    /// process's replay).
    pub(super) fn release(&mut self, rt: &Runtime) {
        let events: Vec<u64> = self.waiting.drain().map(|(_, w)| w.event).collect();
        self.events.extend(events);
        self.free.clear();
        for e in self.events.drain(..) {
            // SAFETY: EventDestroy of an event this replay created.
            let _ = unsafe { rt.call_table(id::EventDestroy, &[e]) };
        }
        self.reserved = 0;
    }
}

impl<'a> Ctx<'a> {
    /// Stages a D2H copy at `copy_seq` whose output is pending: loads the expected bytes
    /// from its `CopyOutput` record, poisons a result buffer of its own with their
    /// complement, and returns where the copy is to land.
    pub(super) fn stage_deferred(
        &mut self,
        copy_seq: u64,
        id: u16,
        what: &'static str,
        n: u64,
    ) -> Result<(u64, Staged<'a>), EventError> {
        let proc_ = self.proc_;
        let index = self
            .deferred
            .attached
            .get_or_insert_with(|| attach_index(proc_));
        let Some(&at) = index.get(&copy_seq) else {
            return Err(EventError::Incomplete(format!(
                "its output is pending and no CopyOutput record carries it (the captured process ended before capture read {what})"
            )));
        };
        let len = self.host_len(n, "the copy's result")?;
        let total = n.saturating_mul(2).saturating_add(self.deferred.reserved);
        if total > proc_.limits.max_host_bytes {
            return Err(EventError::TooLarge {
                what: format!("copies awaiting their outputs: {total} bytes"),
                limit: Some(proc_.limits.max_host_bytes),
            });
        }
        let attach = &proc_.events[at];
        let blob = if attach.header.flags & RECORD_FLAG_INCOMPLETE == 0 {
            let r = Payload::parse(&attach.payload)?.blob(BLOB_FIELD | id, what)?;
            if r.len != n {
                return Err(EventError::BlobLength {
                    what,
                    blob: r.len,
                    copy: n,
                });
            }
            Some(r)
        } else {
            None
        };
        let (mut expected, loaded) = self
            .deferred
            .buffer(self.rt, len, blob.as_ref().map(|r| r.hash))?;
        if let (Some(r), false) = (&blob, loaded) {
            if let Err(e) = proc_.load_blob_into(r, expected.as_mut_slice()) {
                self.deferred.give_back(expected, None);
                return Err(e.into());
            }
        }
        let (mut result, _) = self.deferred.buffer(self.rt, len, None)?;
        complement_into(result.as_mut_slice(), expected.as_slice());
        let dst = result.as_slice().as_ptr() as u64;
        Ok((
            dst,
            Staged {
                copy_seq,
                result,
                expected,
                holds: blob.map(|r| r.hash),
            },
        ))
    }

    /// After the copy's call: a successful copy gets an event recorded after it on its
    /// (replay) stream and waits for its `CopyOutput`; a failed one is not compared.
    pub(super) fn issued_deferred(
        &mut self,
        s: Staged<'a>,
        ret: i32,
        stream: u64,
        api: String,
    ) -> EvResult {
        if ret != 0 {
            self.counts.d2h_skipped += 1;
            self.deferred.give_back(s.result, None);
            self.deferred.give_back(s.expected, s.holds);
            return Ok(());
        }
        let event = match self.deferred.events.pop() {
            Some(e) => e,
            None => {
                let mut slot = 0u64;
                let out = &mut slot as *mut u64 as u64;
                // SAFETY: EventCreateWithFlags(&slot, flags): the runtime writes the new
                // event into `slot`, which lives across the call.
                let r = unsafe {
                    self.rt
                        .call_table(id::EventCreateWithFlags, &[out, EVENT_DISABLE_TIMING])
                }?;
                if r != 0 {
                    return Err(EventError::Call {
                        call: "creating the event that marks the copy's completion".into(),
                        code: r,
                    });
                }
                slot
            }
        };
        // SAFETY: EventRecord of replay's own event on the stream the copy was issued to.
        let r = unsafe { self.rt.call_table(id::EventRecord, &[event, stream]) }?;
        if r != 0 {
            self.deferred.events.push(event);
            return Err(EventError::Call {
                call: "recording the event that marks the copy's completion".into(),
                code: r,
            });
        }
        self.deferred.reserved += (s.result.bytes() + s.expected.bytes()) as u64;
        self.deferred.waiting.insert(
            s.copy_seq,
            Waiting {
                api,
                holds: s.holds,
                event,
                result: s.result,
                expected: s.expected,
            },
        );
        Ok(())
    }

    /// A `CopyOutput` record: waits for its copy's event and compares.
    pub(super) fn replay_copy_output(&mut self, ev: &Event) -> EvResult {
        let p = Payload::parse(&ev.payload)?;
        let copy_seq = p.u64(fid::COPY_SEQ, "copy")?;
        // A copy that failed at replay, or was refused, has nothing waiting.
        let Some(w) = self.deferred.waiting.remove(&copy_seq) else {
            return Ok(());
        };
        self.deferred.reserved -= (w.result.bytes() + w.expected.bytes()) as u64;
        // SAFETY: EventSynchronize of replay's own event, recorded after the copy.
        let r = unsafe { self.rt.call_table(id::EventSynchronize, &[w.event]) };
        self.deferred.events.push(w.event);
        let outcome = match r {
            Ok(0) => {
                match compare(w.expected.as_slice(), w.result.as_slice()) {
                    None => self.counts.d2h_pass += 1,
                    Some(m) => {
                        self.counts.d2h_fail += 1;
                        let f = mismatch_failure(
                            self.proc_.entry.pid,
                            copy_seq,
                            w.api.clone(),
                            w.expected.bytes(),
                            m,
                        );
                        self.failures.push(f);
                    }
                }
                Ok(())
            }
            Ok(code) => Err(EventError::Call {
                call: format!("waiting for the copy at seq {copy_seq} ({})", w.api),
                code,
            }),
            Err(e) => Err(e.into()),
        };
        self.deferred.give_back(w.result, None);
        self.deferred.give_back(w.expected, w.holds);
        outcome
    }
}
