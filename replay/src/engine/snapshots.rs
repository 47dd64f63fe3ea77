//! Pinned snapshots restored before a launch: the content capture recorded of each
//! page-locked host or managed allocation the launch's arguments reach
//! (`capture::pinned`), written back where replay's allocation of it lies.
//!
//! Page-locked host memory is written by the host. Managed memory is written by the copy
//! engine, from the piece page-locked once, on a replay-private non-blocking stream that
//! is waited for before the launch: a host write would migrate every page of it to the
//! host and the kernel would migrate them back (on the H200, 118 ms per launch for a
//! 256 MiB buffer against 5 ms by copy: `bench/RESULTS.md`, 2026-12-04). The restore is
//! complete when the launch is issued either way, as capture's read was when it was.
//!
//! A `SNAPSHOT_AFTER` field (launches reaching the memory had finished on the device when
//! capture read it, though the program made no synchronisation capture followed) has
//! replay synchronise that launch's stream first: its own launch must not run under the
//! bytes capture read after it (a kernel updating the memory in place would apply twice).
//! A stream the program destroyed since is the device's work, all of it; a stream that
//! is capturing now (replay's own capture of it) is not waited for: its launches were
//! captured, not run, and a wait would end the capture.
//!
//! A `SNAPSHOT_IN_FLIGHT` mark (capture left the snapshot out: an earlier launch reaching
//! the memory was in flight) restores nothing; the allocation is remembered with that
//! launch until a later snapshot of it, so a mismatch of its bytes can name the snapshot
//! left out as a cause (a host write capture could not see completed).

use std::collections::HashMap;
use std::rc::Rc;

use hrr_archive::api::{fid, id};
use hrr_archive::payload::Payload;
use hrr_archive::ProcessArchive;

use super::error::{EvResult, EventError};
use super::owned::Owned;
use super::recent_blobs::{Piece, RecentBlobs};
use super::resource::Resource;
use super::translation::Translation;
use crate::pages::Pages;
use crate::runtime::Runtime;
use crate::translate::Translated;

/// `cudaMemcpyHostToDevice`, `hipMemcpyHostToDevice`.
const HOST_TO_DEVICE: u64 = 1;
/// `cudaStreamNonBlocking`, `hipStreamNonBlocking`.
const NON_BLOCKING: u64 = 1;

/// Whether `stream` is capturing into a graph now (the legacy stream: also while a
/// blocking stream captures, which the runtime answers with an error).
fn capturing(rt: &Runtime, stream: u64) -> Result<bool, EventError> {
    let mut status = 0i32;
    // SAFETY: StreamIsCapturing(stream, &status): a stream of this replay (or a default
    // one), an out pointer to a local.
    let r = unsafe {
        rt.call_table(
            id::StreamIsCapturing,
            &[stream, &mut status as *mut i32 as u64],
        )
    };
    match r {
        Ok(r) => Ok(r != 0 || status != 0),
        // A runtime without the query has no stream capture.
        Err(crate::runtime::RuntimeError::MissingSymbol { .. }) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// Where a pinned snapshot of `len` bytes captured at some address is restored: both
/// its ends must map into one replay allocation, `len` bytes apart, and the snapshot
/// must hold `len` bytes.
fn snapshot_target(first: Translated, last: Translated, len: u64, data_len: usize) -> Option<u64> {
    match (first, last) {
        (Translated::Mapped(a), Translated::Mapped(b))
            if b == a + len.max(1) - 1 && data_len as u64 == len =>
        {
            Some(a)
        }
        _ => None,
    }
}

/// The pieces loaded last and the stream managed memory is restored on.
#[derive(Default)]
pub(super) struct Snapshots {
    recent: RecentBlobs,
    /// Replay's own copy stream (0: not made yet).
    stream: u64,
    /// Captured allocation start -> the launch in flight for which a launch's snapshot of
    /// it was left out last, while no later snapshot restored it.
    left_out: HashMap<u64, u64>,
}

impl Snapshots {
    /// Restores the pinned host and managed memory a kernel reads directly, as it was
    /// at capture.
    pub(super) fn restore(
        &mut self,
        rt: &Runtime,
        proc_: &ProcessArchive,
        tr: &Translation,
        owned: &Owned,
        p: &Payload,
    ) -> EvResult {
        let mut completed: Vec<Option<u64>> = Vec::new();
        for after in p.all(fid::SNAPSHOT_AFTER) {
            let after = after.as_nested()?;
            // No stream: the program destroyed the launch's stream before the snapshot.
            let stream = match after.get(fid::SNAPSHOT_STREAM) {
                Some(_) => Some(after.handle(fid::SNAPSHOT_STREAM, "stream")?),
                None => None,
            };
            let launch = after.u64(fid::SNAPSHOT_IN_FLIGHT_LAUNCH, "launch")?;
            if completed.contains(&stream) {
                continue;
            }
            completed.push(stream);
            // A stream the program destroyed since (its handle no stream of replay's
            // now): the device's work, all of it; while a stream captures (a device
            // synchronisation would end the capture), each stream not capturing.
            let waits: Vec<(u16, Vec<u64>)> = match stream.map(|s| tr.handle(s)) {
                Some(Ok(h)) if h <= 2 || owned.live.get(&h) == Some(&Resource::Stream) => {
                    match capturing(rt, h)? {
                        true => Vec::new(),
                        false => vec![(id::StreamSynchronize, vec![h])],
                    }
                }
                _ => {
                    let mut idle = Vec::new();
                    let mut any_capturing = false;
                    let mut live: Vec<u64> = owned
                        .live
                        .iter()
                        .filter(|(_, r)| **r == Resource::Stream)
                        .map(|(h, _)| *h)
                        .collect();
                    live.sort_unstable();
                    for h in std::iter::once(0).chain(live) {
                        match capturing(rt, h)? {
                            true => any_capturing = true,
                            false => idle.push((id::StreamSynchronize, vec![h])),
                        }
                    }
                    match any_capturing {
                        true => idle,
                        false => vec![(id::DeviceSynchronize, Vec::new())],
                    }
                }
            };
            for (row, args) in waits {
                // SAFETY: a synchronize row, given a stream handle replay created (or a
                // default stream), or none for the device's.
                match unsafe { rt.call_table(row, &args) }? {
                    0 => {}
                    code => {
                        return Err(EventError::Call {
                            call: format!(
                                "completing the launch at seq {launch} before restoring the snapshot capture read after it finished"
                            ),
                            code,
                        })
                    }
                }
            }
        }
        for mark in p.all(fid::SNAPSHOT_IN_FLIGHT) {
            let mark = mark.as_nested()?;
            let start = mark.u64(fid::SNAPSHOT_START, "snapshot start")?;
            let launch = mark.u64(fid::SNAPSHOT_IN_FLIGHT_LAUNCH, "launch in flight")?;
            if let Some((s, _, _)) = tr.addrs.holder(start) {
                self.left_out.insert(s, launch);
            }
        }
        for snap in p.all(fid::PINNED_SNAPSHOT) {
            let snap = snap.as_nested()?;
            let start = snap.u64(fid::SNAPSHOT_START, "snapshot start")?;
            let len = snap.u64(fid::SNAPSHOT_SIZE, "snapshot size")?;
            let r = snap.blob(fid::SNAPSHOT_BYTES, "snapshot bytes")?;
            let Some(end) = start.checked_add(len.max(1) - 1) else {
                return Err(EventError::Inconsistent(format!(
                    "pinned snapshot of {len} bytes at {start:#x} runs past the address space"
                )));
            };
            let data = match self.recent.get(&r.hash) {
                Some(d) if d.bytes().len() as u64 == r.len => d,
                _ => {
                    let n = super::error::host_len(proc_, r.len, "a pinned snapshot's piece")?;
                    let mut pages = Pages::new(n)?;
                    proc_.load_blob_into(&r, pages.as_mut_slice())?;
                    let d = Rc::new(Piece::new(pages));
                    let dropped = self.recent.keep(r.hash, d.clone());
                    unregister(rt, &dropped);
                    d
                }
            };
            if let Some((s, _, _)) = tr.addrs.holder(start) {
                self.left_out.remove(&s);
            }
            let first = tr.addrs.translate(start);
            let last = tr.addrs.translate(end);
            let Some(a) = snapshot_target(first, last, len, data.bytes().len()) else {
                return Err(EventError::Inconsistent(format!(
                    "pinned snapshot of {len} bytes at {start:#x} maps to no replay pinned allocation of that size"
                )));
            };
            let managed = tr
                .addrs
                .holder(start)
                .is_some_and(|(s, _, _)| tr.managed.contains(&s));
            if managed && len > 0 {
                self.copy_in(rt, a, &data, start)?;
            } else {
                // SAFETY: [a, a+len) lies inside one replay pinned host allocation (both
                // ends map into the same range), which replay allocated and owns.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        data.bytes().as_ptr(),
                        a as usize as *mut u8,
                        len as usize,
                    )
                };
            }
        }
        Ok(())
    }

    /// Why the bytes of the captured allocation holding `start` may differ, if a launch's
    /// snapshot of it was left out since its last one.
    pub(super) fn left_out_cause(&self, tr: &Translation, start: u64) -> Option<String> {
        let (s, _, _) = tr.addrs.holder(start)?;
        let launch = self.left_out.get(&s)?;
        Some(format!(
            "capture left a launch's snapshot of this memory out, the launch at seq {launch} reaching it being in flight as far as capture saw: a host write made then is not in the archive; capture again with HRR_CAPTURE_SNAPSHOTS=every to record it"
        ))
    }

    /// Writes `piece` at managed address `at` by the copy engine and waits for it.
    fn copy_in(&mut self, rt: &Runtime, at: u64, piece: &Piece, captured: u64) -> EvResult {
        let len = piece.bytes().len() as u64;
        let src = piece.bytes().as_ptr() as u64;
        if !piece.registered.get() {
            // SAFETY: HostRegister of the piece's own pages, unregistered before they are
            // dropped (`unregister`). A refusal leaves them pageable, which a copy accepts.
            let r = unsafe { rt.call_table(id::HostRegister, &[src, len, 0]) }?;
            piece.registered.set(r == 0);
        }
        if self.stream == 0 {
            let mut s: u64 = 0;
            // SAFETY: the out pointer is a local of ours.
            let r = unsafe {
                rt.call_table(
                    id::StreamCreateWithFlags,
                    &[&mut s as *mut u64 as u64, NON_BLOCKING],
                )
            }?;
            if r != 0 || s == 0 {
                return Err(EventError::Call {
                    call: "creating replay's stream for managed snapshots".into(),
                    code: r,
                });
            }
            self.stream = s;
        }
        // SAFETY: `at` starts `len` bytes of one replay managed allocation (both ends of
        // the snapshot translated into it); `src` holds `len` bytes, kept alive by the
        // caller's `Rc` until the stream is waited for below.
        let r = unsafe {
            rt.call_table(
                id::MemcpyAsync,
                &[at, src, len, HOST_TO_DEVICE, self.stream],
            )
        }?;
        // SAFETY: replay's own stream.
        let w = unsafe { rt.call_table(id::StreamSynchronize, &[self.stream]) }?;
        match (r, w) {
            (0, 0) => Ok(()),
            (0, code) | (code, _) => Err(EventError::Call {
                call: format!("restoring the {len}-byte managed snapshot at {captured:#x} by copy"),
                code,
            }),
        }
    }

    /// Unregisters every piece and destroys the stream: before a device reset (which
    /// drops both under them) and when the process's replay ends.
    pub(super) fn release(&mut self, rt: &Runtime) {
        let all = self.recent.take_all();
        unregister(rt, &all);
        if self.stream != 0 {
            // SAFETY: replay's own stream, not used after this.
            let _ = unsafe { rt.call_table(id::StreamDestroy, &[self.stream]) };
            self.stream = 0;
        }
    }
}

/// Unregisters the registered ones of `pieces` (their pages are unmapped when the last
/// `Rc` goes).
fn unregister(rt: &Runtime, pieces: &[Rc<Piece>]) {
    for p in pieces.iter().filter(|p| p.registered.get()) {
        // SAFETY: pages this piece registered and still owns.
        let _ = unsafe { rt.call_table(id::HostUnregister, &[p.bytes().as_ptr() as u64]) };
        p.registered.set(false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshots_land_only_in_one_allocation_of_their_size() {
        use Translated::*;
        assert_eq!(snapshot_target(Mapped(100), Mapped(109), 10, 10), Some(100));
        // Ends in different allocations, a short snapshot, or an unmapped end: refused.
        assert_eq!(snapshot_target(Mapped(100), Mapped(500), 10, 10), None);
        assert_eq!(snapshot_target(Mapped(100), Mapped(109), 10, 9), None);
        assert_eq!(snapshot_target(Unmapped, Mapped(109), 10, 10), None);
        assert_eq!(snapshot_target(Mapped(100), Mapped(100), 0, 0), Some(100));
    }
}
