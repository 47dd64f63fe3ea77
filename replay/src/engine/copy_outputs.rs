//! Replaying asynchronous D2H copies whose output arrives later (`deferred` holds their
//! buffers and expected bytes): staged with the expected bytes' complement, issued with
//! an event recorded after them, and compared when their `CopyOutput` record arrives and
//! their event has completed.

use std::rc::Rc;

use hrr_archive::api::{fid, id, BLOB_FIELD};
use hrr_archive::payload::{BlobRef, Payload};
use hrr_archive::record::RECORD_FLAG_INCOMPLETE;
use hrr_archive::Event;

use super::ctx::Ctx;
use super::deferred::{
    attach_index, Content, Expected, Staged, Waiting, EVENT_DISABLE_TIMING, MAX_READY,
};
use super::error::{EvResult, EventError};
use crate::profile::{self, Part};
use crate::staging::{complement_into, poison_for_fill, OwnedBuf};

impl<'a> Ctx<'a> {
    /// The `CopyOutput` record attached to the copy at `copy_seq` (to its graph node
    /// `node`, for a graph launch's output), found ahead in the log.
    fn attached(&mut self, copy_seq: u64, node: Option<u64>) -> Option<&'a Event> {
        let proc_ = self.proc_;
        let index = self
            .deferred
            .attached
            .get_or_insert_with(|| attach_index(proc_));
        index.get(&(copy_seq, node)).map(|&at| &proc_.events[at])
    }

    /// The bytes graph launch `launch_seq`'s D2H node `node` wrote at capture, from the
    /// `CopyOutput` record a reader appended; None when capture recorded that it could
    /// not read them (that record is refused by name), an error when no record carries
    /// them.
    pub(super) fn attached_node_output(
        &mut self,
        launch_seq: u64,
        node: u64,
    ) -> Result<Option<BlobRef>, EventError> {
        let Some(attach) = self.attached(launch_seq, Some(node)) else {
            return Err(EventError::Incomplete(format!(
                "the output of its D2H node seq {node} is pending and no CopyOutput record carries it (the captured process ended before capture read it)"
            )));
        };
        if attach.header.flags & RECORD_FLAG_INCOMPLETE != 0 {
            return Ok(None);
        }
        let r = Payload::parse(&attach.payload)?
            .blob(BLOB_FIELD | fid::GRAPH_OUTPUT, "graph node bytes")?;
        Ok(Some(r))
    }

    /// The record carrying a copy's source that capture read when the copy ran.
    pub(super) fn attached_source(
        &mut self,
        copy_seq: u64,
        what: &'static str,
    ) -> Result<Payload<'a>, EventError> {
        let Some(attach) = self.attached(copy_seq, None) else {
            return Err(EventError::Incomplete(format!(
                "its {what} was to be read when the copy ran, behind a host function, and no CopyOutput record carries it (the captured process ended first)"
            )));
        };
        if attach.header.flags & RECORD_FLAG_INCOMPLETE != 0 {
            return Err(EventError::Incomplete(format!(
                "its {what}, read when the copy ran, was not recorded (CopyOutput seq {})",
                attach.header.seq
            )));
        }
        Ok(Payload::parse(&attach.payload)?)
    }

    /// The blob of the `CopyOutput` record attached to the copy at `copy_seq` (found
    /// ahead in the log), None when capture recorded that it could not read it (that
    /// record is refused by name), an error when no record carries it.
    pub(super) fn attached_blob(
        &mut self,
        copy_seq: u64,
        id: u16,
        what: &'static str,
        n: u64,
    ) -> Result<Option<BlobRef>, EventError> {
        let Some(attach) = self.attached(copy_seq, None) else {
            return Err(EventError::Incomplete(format!(
                "its output is pending and no CopyOutput record carries it (the captured process ended before capture read {what})"
            )));
        };
        if attach.header.flags & RECORD_FLAG_INCOMPLETE != 0 {
            return Ok(None);
        }
        let r = Payload::parse(&attach.payload)?.blob(BLOB_FIELD | id, what)?;
        if r.len != n {
            return Err(EventError::BlobLength {
                what,
                blob: r.len,
                copy: n,
            });
        }
        Ok(Some(r))
    }

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
        let len = self.host_len(n, "the copy's result")?;
        if n.saturating_mul(2).saturating_add(self.deferred.reserved) > proc_.limits.max_host_bytes
        {
            // Buffers held by copies that only wait to be compared come back first.
            self.compare_ready(true)?;
        }
        let total = n.saturating_mul(2).saturating_add(self.deferred.reserved);
        if total > proc_.limits.max_host_bytes {
            return Err(EventError::TooLarge {
                what: format!("copies awaiting their outputs: {total} bytes"),
                limit: Some(proc_.limits.max_host_bytes),
            });
        }
        let blob = self.attached_blob(copy_seq, id, what, n)?;
        let expected = match blob {
            None => None,
            Some(r) => Some(match self.deferred.shared(&r.hash, len) {
                Some(e) => e,
                None => {
                    let content = match proc_.blob_fill(&r)? {
                        Some(fill) => Content::Fill(fill),
                        None => {
                            let mut buf = match self.deferred.recycled(len) {
                                Some(b) => b,
                                None => OwnedBuf::new(self.rt, len, false)?,
                            };
                            let _t = profile::span(Part::Load);
                            proc_.load_blob_into(&r, buf.as_mut_slice())?;
                            Content::Bytes(buf)
                        }
                    };
                    Rc::new(Expected {
                        content,
                        hash: r.hash,
                    })
                }
            }),
        };
        let mut result = self.deferred.result_buffer(self.rt, len)?;
        let holds = result.holds.take();
        match expected.as_ref().map(|e| &e.content) {
            Some(Content::Bytes(b)) => complement_into(result.as_mut_slice(), b.as_slice()),
            Some(Content::Fill(f)) => poison_for_fill(result.as_mut_slice(), holds, f),
            None => {
                let _t = profile::span(Part::Poison);
                result.as_mut_slice().fill(0xa5)
            }
        }
        let dst = result.as_slice().as_ptr() as u64;
        Ok((
            dst,
            Staged {
                copy_seq,
                result,
                expected,
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
            self.checks.counts.d2h_skipped += 1;
            self.deferred.give_back(s.result);
            self.deferred.done_with(s.expected);
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
        self.deferred.reserved += 2 * s.result.bytes() as u64;
        self.deferred.waiting.insert(
            s.copy_seq,
            Waiting {
                api,
                event,
                result: s.result,
                expected: s.expected,
            },
        );
        Ok(())
    }

    /// A `CopyOutput` record: its copy is compared once it has completed, without
    /// holding the replay up while the GPU still works (capture read the output on a
    /// thread of its own; the program went on meanwhile).
    pub(super) fn replay_copy_output(&mut self, ev: &Event) -> EvResult {
        let p = Payload::parse(&ev.payload)?;
        let copy_seq = p.u64(fid::COPY_SEQ, "copy")?;
        // A copy that failed at replay, was refused, or was compared already (before a
        // device reset) has nothing waiting.
        if self.deferred.waiting.contains_key(&copy_seq) {
            self.deferred.ready.push_back(copy_seq);
        }
        self.compare_ready(false)
    }

    /// Compares the copies whose output records arrived, oldest first: every one when
    /// `all` (waiting for each), otherwise those complete already and any past
    /// `MAX_READY`.
    pub(super) fn compare_ready(&mut self, all: bool) -> EvResult {
        while let Some(&seq) = self.deferred.ready.front() {
            if !all && self.deferred.ready.len() <= MAX_READY {
                let Some(w) = self.deferred.waiting.get(&seq) else {
                    self.deferred.ready.pop_front();
                    continue;
                };
                // SAFETY: EventQuery of replay's own event, recorded after the copy.
                let r = unsafe { self.rt.call_table(id::EventQuery, &[w.event]) };
                if !matches!(r, Ok(0)) {
                    // Still running (not ready), or an error the comparison's wait names.
                    break;
                }
            }
            self.deferred.ready.pop_front();
            self.compare_waiting(seq)?;
        }
        Ok(())
    }

    /// Compares every copy still waiting (before a device reset, which would destroy
    /// their events), the expected bytes being loaded already.
    pub(super) fn compare_all_waiting(&mut self) -> EvResult {
        self.deferred.ready.clear();
        let mut seqs: Vec<u64> = self.deferred.waiting.keys().copied().collect();
        seqs.sort_unstable();
        seqs.into_iter().try_for_each(|s| self.compare_waiting(s))
    }

    fn compare_waiting(&mut self, copy_seq: u64) -> EvResult {
        let Some(mut w) = self.deferred.waiting.remove(&copy_seq) else {
            return Ok(());
        };
        self.deferred.reserved -= 2 * w.result.bytes() as u64;
        let wait = profile::span(Part::Wait);
        // SAFETY: EventSynchronize of replay's own event, recorded after the copy.
        let r = unsafe { self.rt.call_table(id::EventSynchronize, &[w.event]) };
        drop(wait);
        self.deferred.events.push(w.event);
        let outcome = match (r, &w.expected) {
            (Ok(0), Some(e)) => {
                let key = (copy_seq, 0);
                let found = w.result.as_mut_slice();
                self.checks
                    .judge_reused(key, e.want(), found)
                    .map(|(v, holds)| {
                        w.result.holds = holds;
                        self.checks.record(copy_seq, w.api.clone(), e.bytes(), v)
                    })
            }
            // Capture could not record the output: this record is refused by name
            // before it reaches here, and nothing is compared.
            (Ok(0), None) => Ok(()),
            (Ok(code), _) => Err(EventError::Call {
                call: format!("waiting for the copy at seq {copy_seq} ({})", w.api),
                code,
            }),
            (Err(e), _) => Err(e.into()),
        };
        self.deferred.give_back(w.result);
        self.deferred.done_with(w.expected);
        outcome
    }
}
