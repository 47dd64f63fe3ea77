//! Outputs kernels wrote straight into mapped (page-locked) or managed memory: a
//! `MappedOutput` record follows the synchronisation that completed them at capture.
//! Replay has just replayed that synchronisation; it reads its own allocation (host
//! memory it allocated, mapped or managed, into which the captured range maps) and
//! compares it with the captured bytes. A failure names the allocation, the
//! synchronisation and the last launch that reached it. Polls are replayed as the
//! synchronisation a successful one observed (`replay_poll`).

use hrr_archive::api::{self, fid};
use hrr_archive::payload::Payload;
use hrr_archive::Event;

use super::ctx::Ctx;
use super::error::{EvResult, EventError};
use crate::compare::compare;
use crate::stability::Classified;
use crate::translate::Translated;

/// Where `len` bytes captured at `start` are in replay's memory: both ends must map into
/// the same replay allocation, `len` bytes apart.
fn target(first: Translated, last: Translated, len: u64) -> Option<u64> {
    match (first, last) {
        (Translated::Mapped(a), Translated::Mapped(b)) if b == a + len.max(1) - 1 => Some(a),
        _ => None,
    }
}

impl Ctx<'_> {
    /// A poll (`api::polls`: `cudaEventQuery`, `cudaStreamQuery`, the driver's and HIP's
    /// per-thread forms). One that found the work done at capture is replayed as the
    /// synchronisation it observed, so replay reaches the same state before going on (a
    /// query alone may find replay's work still running: H200, an elapsed time read after
    /// 1,400 polls returned 600 at replay where capture had 0). One that found the work
    /// running changed nothing and is not made. Any other result is replayed as a call.
    pub(super) fn replay_poll(
        &mut self,
        ev: &Event,
        desc: &'static api::ApiDesc,
        sync: u16,
    ) -> EvResult {
        match ev.header.ret {
            0 => {
                let p = Payload::parse(&ev.payload)?;
                let h = self.handle(p.handle(api::ApiDesc::field_id(0), "handle")?)?;
                // SAFETY: the synchronize row, given a handle replay created (or a
                // default stream).
                match unsafe { self.rt.call_table(sync, &[h]) }? {
                    0 => Ok(()),
                    code => Err(EventError::Call {
                        call: format!(
                            "completing {} as at capture (it found the work done there)",
                            desc.name
                        ),
                        code,
                    }),
                }
            }
            api::polls::NOT_READY => Ok(()),
            _ => self.replay_generic(ev, desc),
        }
    }

    /// A query that succeeded at capture may not have at replay: the synchronisation it
    /// stood for is made here (on the same stream or event) before memory is read.
    fn complete_like_capture(&mut self, sync_seq: u64) -> EvResult {
        let events = &self.proc_.events;
        let Ok(i) = events.binary_search_by_key(&sync_seq, |e| e.header.seq) else {
            return Ok(());
        };
        let ev = &events[i];
        let Some(row) = api::polls::completion_of(ev.header.api_id) else {
            return Ok(());
        };
        let p = Payload::parse(&ev.payload)?;
        let h = self.handle(p.handle(api::ApiDesc::field_id(0), "handle")?)?;
        // SAFETY: the synchronize row, given a handle replay created (or a default stream).
        match unsafe { self.rt.call_table(row, &[h]) }? {
            0 => Ok(()),
            code => Err(EventError::Call {
                call: format!("completing the query at seq {sync_seq}"),
                code,
            }),
        }
    }

    pub(super) fn replay_mapped_output(&mut self, ev: &Event) -> EvResult {
        let p = Payload::parse(&ev.payload)?;
        let start = p.devptr(fid::MAPPED_START, "allocation")?;
        let size = p.u64(fid::MAPPED_SIZE, "size")?;
        let launch = p.u64(fid::MAPPED_LAUNCH, "launch")?;
        let sync_seq = p.u64(fid::MAPPED_SYNC, "synchronisation")?;
        let r = p.blob(fid::MAPPED_BYTES, "bytes")?;
        // One piece of a larger allocation, or (absent) the whole allocation.
        let piece_of = p
            .get(fid::MAPPED_ALLOCATION)
            .map(|f| f.as_u64())
            .transpose()?;
        let len = self.host_len(size, "mapped output")?;
        if r.len != size {
            return Err(EventError::BlobLength {
                what: "mapped output",
                blob: r.len,
                copy: size,
            });
        }
        let last = start.checked_add(size.max(1) - 1).ok_or_else(|| {
            EventError::Inconsistent(format!(
                "mapped output of {size} bytes at {start:#x} runs past the address space"
            ))
        })?;
        let Some(at) = target(
            self.tr.addrs.translate(start),
            self.tr.addrs.translate(last),
            size,
        ) else {
            return Err(EventError::Inconsistent(format!(
                "mapped output of {size} bytes at {start:#x} maps to no replay allocation of that size"
            )));
        };
        self.complete_like_capture(sync_seq)?;
        let expected = self.proc_.load_blob(&r)?;
        // SAFETY: [at, at+len) lies inside one host-readable allocation replay made
        // (mapped page-locked or managed memory: both ends map into it), and the
        // synchronisation just replayed completed the kernels writing it.
        let found = unsafe { std::slice::from_raw_parts(at as usize as *const u8, len) };
        let v = match compare(&expected, found) {
            None => Classified::Pass,
            Some(mismatch) => self.checks.by_declared(
                &expected,
                found,
                Classified::Mismatch {
                    mismatch,
                    unstable: Default::default(),
                },
            ),
        };
        // Unexplained by the bytes: a snapshot capture left out may be why.
        let v = match v {
            Classified::Mismatch {
                mut mismatch,
                unstable,
            } if mismatch.cause.is_none() => {
                mismatch.cause = self.snapshots.left_out_cause(&self.tr, start);
                Classified::Mismatch { mismatch, unstable }
            }
            v => v,
        };
        let sync = self.sync_label(sync_seq);
        let what = match piece_of {
            Some(alloc) => format!(
                "bytes {:#x}..{:#x} of the allocation at {alloc:#x}",
                start.wrapping_sub(alloc),
                start.wrapping_sub(alloc).wrapping_add(size)
            ),
            None => format!("allocation {start:#x}, {size} bytes"),
        };
        let api = format!(
            "MappedOutput ({what}, after {sync} at seq {sync_seq}, written by the launch at seq {launch})"
        );
        self.checks.record(ev.header.seq, api, len, Some(v));
        Ok(())
    }

    /// The API of the event at `seq`, for a failure's name.
    fn sync_label(&self, seq: u64) -> String {
        let events = &self.proc_.events;
        match events.binary_search_by_key(&seq, |e| e.header.seq) {
            Ok(i) => self.event_api_label(&events[i]),
            Err(_) => "a synchronisation".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_ends_must_map_into_one_allocation() {
        let m = Translated::Mapped;
        assert_eq!(target(m(0x100), m(0x13f), 64), Some(0x100));
        assert_eq!(target(m(0x100), m(0x900), 64), None);
        assert_eq!(target(m(0x100), Translated::Unmapped, 64), None);
        assert_eq!(target(Translated::Null, m(0x13f), 64), None);
    }
}
