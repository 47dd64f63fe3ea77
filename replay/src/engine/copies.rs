//! Copies' host side: an H2D source and a D2H result's expected bytes loaded from their
//! blobs into the staging buffers, the copy's stream awaited where a buffer is read or
//! reused next, and the D2H result compared with the captured bytes.

use hrr_archive::api::{
    self, ApiDesc, ParamKind, BLOB_FIELD, OUTPUT_PENDING_FIELD, POINTER_WORDS_FIELD,
    SOURCE_PENDING_FIELD,
};
use hrr_archive::payload::{BlobRef, Payload};
use hrr_archive::Event;

use super::call_buffers::CallBuffers;
use super::ctx::Ctx;
use super::error::{EvResult, EventError};
use crate::compare::Want;
use crate::profile::{self, Part};
use crate::staging::Role;
use crate::translate::{AddressMap, Translated};

impl<'a> Ctx<'a> {
    /// Loads an H2D copy's source blob (payload field `BLOB_FIELD | id`) into the source
    /// buffer and returns its address; `len`, where the copy's geometry fixes it, must
    /// be the blob's.
    pub(super) fn stage_source(
        &mut self,
        p: &Payload,
        seq: u64,
        id: u16,
        what: &'static str,
        len: Option<u64>,
    ) -> Result<u64, EventError> {
        // Read when the copy ran (behind a host function): in the record naming the copy.
        let later = p
            .get(SOURCE_PENDING_FIELD)
            .map(|f| f.as_u64())
            .transpose()?;
        let attached;
        let p = match later {
            Some(f) if f == id as u64 => {
                attached = self.attached_source(seq, what)?;
                &attached
            }
            _ => p,
        };
        let r = p.blob(BLOB_FIELD | id, what)?;
        if let Some(n) = len {
            // The copy reads `n` bytes from the buffer the blob is loaded into: a count
            // past the blob's end would read past replay's buffer.
            self.host_len(n, what)?;
            if n != r.len {
                return Err(EventError::BlobLength {
                    what,
                    blob: r.len,
                    copy: n,
                });
            }
        }
        let n = self.host_len(r.len, what)?;
        // Device pointers the program wrote into these bytes: translated in the loaded
        // copy (never in a buffer reused from an expected result).
        let words = p.get(POINTER_WORDS_FIELD | id).map(|f| f.value);
        if words.is_none() {
            if let Some(buf) = self.staging.reuse_expected_as_source(&r.hash, n) {
                return Ok(buf.as_ptr() as u64);
            }
        }
        let buf = self.staging.get(Role::Source, n)?;
        let _t = profile::span(Part::Load);
        self.proc_.load_blob_into(&r, buf)?;
        if let Some(words) = words {
            let (addrs, counts) = (&self.tr.addrs, &mut self.checks.counts);
            super::kernels::translate_pointer_words(buf, words, |v| {
                translate_counted(addrs, counts, v)
            })?;
        }
        Ok(buf.as_ptr() as u64)
    }

    /// Loads a D2H copy's expected blob and returns where its `n`-byte result is to land,
    /// with the (result, expected) lengths the check compares. Capture stores exactly
    /// the bytes the copy wrote, so a blob of another length is refused before any
    /// buffer is allocated for either.
    pub(super) fn stage_result(
        &mut self,
        r: BlobRef,
        what: &'static str,
        n: u64,
        pointer_words: Option<&[u8]>,
    ) -> Result<(u64, (usize, usize)), EventError> {
        let result_len = self.host_len(n, "the copy's result")?;
        let expected_len = self.host_len(r.len, what)?;
        if r.len != n {
            return Err(EventError::BlobLength {
                what,
                blob: r.len,
                copy: n,
            });
        }
        // Content stored as a fill is compared as one: no expected buffer, no expansion.
        // Expected bytes holding device pointers are loaded whole and each pointer
        // translated to replay's address: the result must hold replay's pointers there.
        let fill = match pointer_words {
            None => self.proc_.blob_fill(&r)?,
            Some(_) => None,
        };
        match (fill, pointer_words) {
            (_, Some(words)) => {
                let buf = self.staging.get(Role::Expected, expected_len)?;
                let _t = profile::span(Part::Load);
                self.proc_.load_blob_into(&r, buf)?;
                let (addrs, counts) = (&self.tr.addrs, &mut self.checks.counts);
                super::kernels::translate_pointer_words(buf, words, |v| {
                    translate_counted(addrs, counts, v)
                })?;
            }
            (Some(fill), None) => self.staging.set_expected_fill(fill),
            (None, None) => {
                let buf = self.staging.get(Role::Expected, expected_len)?;
                let _t = profile::span(Part::Load);
                self.proc_.load_blob_into(&r, buf)?;
                self.staging.set_expected_content(r.hash, expected_len);
            }
        }
        let dst = self.staging.get(Role::Result, result_len)?.as_ptr() as u64;
        self.staging.poison_result(result_len, expected_len);
        Ok((dst, (result_len, expected_len)))
    }

    /// Waits for a copy's stream: a driver row's with the driver's `cuStreamSynchronize`
    /// (its stream may belong to a context of the program's own), any other with the
    /// runtime's.
    fn copy_stream_sync(&mut self, desc: &ApiDesc, stream: u64, what: &str) -> EvResult {
        if !desc.is_driver(self.rt.vendor) {
            return self.stream_sync(stream, what);
        }
        let _t = profile::span(Part::Wait);
        // SAFETY: cuStreamSynchronize(stream) with a stream of this replay.
        match unsafe { self.rt.call_table(api::id::CuStreamSynchronize, &[stream]) }? {
            0 => Ok(()),
            code => Err(EventError::Call {
                call: format!("waiting for the copy's stream ({what})"),
                code,
            }),
        }
    }

    /// Where a D2H copy's result is to land: for an asynchronous copy whose output is
    /// pending (capture read it when the copy completed), its own buffer, compared when
    /// its `CopyOutput` record arrives; otherwise the result staging buffer, compared
    /// right after the call with the inline or attached expected bytes.
    pub(super) fn stage_d2h(
        &mut self,
        p: &Payload,
        id: u16,
        what: &'static str,
        n: u64,
        bufs: &mut CallBuffers<'a>,
    ) -> Result<u64, EventError> {
        let pending = p
            .get(OUTPUT_PENDING_FIELD)
            .map(|f| f.as_u64())
            .transpose()?;
        if bufs.failed_at_capture && pending.is_none() && p.get(BLOB_FIELD | id).is_none() {
            // The copy failed at capture (a faulted program's, say): no result to expect.
            // Replay's call writes into scratch memory and only its return code is
            // compared with capture's.
            let n = self.host_len(n, what)?;
            bufs.scratch = vec![0u8; n];
            return Ok(bufs.scratch.as_mut_ptr() as u64);
        }
        let r = if pending != Some(id as u64) {
            p.blob(BLOB_FIELD | id, what)?
        } else {
            match self.attached_blob(bufs.seq, id, what, n)? {
                // A blocking copy is complete when its call returns: compared then, in
                // the staging buffers, like a copy whose output is inline.
                Some(r) if !bufs.streamed => r,
                _ => {
                    let (dst, staged) = self.stage_deferred(bufs.seq, id, what, n)?;
                    bufs.deferred = Some(staged);
                    return Ok(dst);
                }
            }
        };
        let words = p.get(POINTER_WORDS_FIELD | id).map(|f| f.value);
        let (dst, lens) = self.stage_result(r, what, n, words)?;
        bufs.d2h = Some(lens);
        Ok(dst)
    }

    /// Waits for the copy's stream where its host buffer is read or reused next, checks a
    /// D2H result in the staging buffers against the captured bytes, and files a copy
    /// whose output is pending to be compared when its `CopyOutput` record arrives.
    pub(super) fn finish_copies(
        &mut self,
        ev: &Event,
        desc: &ApiDesc,
        ret: i32,
        args: &[u64],
        bufs: &mut CallBuffers<'a>,
    ) -> EvResult {
        let (source_in_flight, d2h) = (bufs.source_in_flight, bufs.d2h);
        let stream = desc
            .params
            .iter()
            .position(|p| p.kind == ParamKind::Stream)
            .map(|si| args[si]);
        if let Some(s) = bufs.deferred.take() {
            let api = self.api_label(ev.header.api_id);
            self.issued_deferred(s, ret, stream.unwrap_or(0), api)?;
        }
        // An asynchronous copy still reads a page-locked source after the call returns:
        // it must finish before the next event refills the buffer.
        if let Some(s) = stream.filter(|_| {
            ret == 0 && source_in_flight && self.staging.needs_stream_sync(Role::Source)
        }) {
            self.copy_stream_sync(desc, s, "source")?;
        }
        if let Some((result_len, expected_len)) = d2h {
            if ret == 0 {
                if let Some(s) = stream {
                    self.copy_stream_sync(desc, s, "result")?;
                }
                let c = self.staging.result_check(result_len, expected_len);
                let want = match c.expected_fill {
                    Some(fill) => Want::Fill(fill),
                    None => Want::Bytes(c.expected),
                };
                let key = (ev.header.seq, 0);
                let (v, holds) = self.checks.judge_reused(key, want, c.found)?;
                *c.holds = holds;
                let api = self.api_label(ev.header.api_id);
                self.checks.record(ev.header.seq, api, expected_len, v);
            } else {
                self.checks.counts.d2h_skipped += 1;
            }
        }
        Ok(())
    }
}

/// `Ctx::translate` for a caller holding a staging buffer: a captured address to
/// replay's, an untranslatable one counted and passed as null.
fn translate_counted(addrs: &AddressMap, counts: &mut hrr_contract::Counts, v: u64) -> u64 {
    match addrs.translate(v) {
        Translated::Null => 0,
        Translated::Mapped(a) => a,
        Translated::Unmapped => {
            counts.untranslated_pointers += 1;
            0
        }
    }
}
