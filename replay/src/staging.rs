//! Host buffers for replayed copies: where a captured H2D source is loaded, where a D2H
//! result lands, and where its expected bytes are loaded to compare with it.
//!
//! A fresh buffer per event costs more than the copy it serves: a gigabyte of new pages
//! is a quarter of a million page faults, and a pageable copy runs at a fraction of the
//! bus's speed. So each role keeps one buffer, reused from event to event and grown (to
//! a power of two) when an event needs more. Buffers of `PIN_MIN_BYTES` and more are
//! page-locked through the runtime's own HostRegister row, so their copies are DMA at
//! full speed; where registering fails they stay pageable, which is slower and still
//! correct.
//!
//! Programs often upload what they just read back (a result fed to the next step). The
//! expected bytes of the last D2H check stay in their buffer, verified against their
//! hash; an H2D source with that hash takes the buffer over (`reuse_expected_as_source`)
//! instead of reading and verifying the blob again.
//!
//! A page-locked source given to an asynchronous copy must not be refilled until that
//! copy is done: the engine synchronises the copy's stream after issuing it
//! (`needs_stream_sync`). A device reset drops every registration, so the engine calls
//! `unpin_all` before replaying one.
//!
//! Lengths come from an untrusted archive. The engine checks each against
//! `max_host_bytes` (and against its blob) before asking for a buffer; here growth to a
//! power of two never passes that limit, and an allocation the system refuses is an
//! error of the event (`NoMemory`), not an abort of replay.

use hrr_archive::api::id;
use hrr_archive::fill::Fill;
use hrr_archive::ContentHash;

use crate::runtime::Runtime;

/// Buffers at least this large are page-locked.
pub const PIN_MIN_BYTES: usize = 8 << 20;
const PAGE: usize = 4096;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// An H2D copy's source bytes.
    Source = 0,
    /// Where a D2H copy's result lands.
    Result = 1,
    /// The D2H copy's expected bytes (page-locked too, so they can become a source).
    Expected = 2,
}

#[derive(Default)]
struct HostBuf {
    /// Over-allocated by a page so the used part starts page-aligned.
    mem: Vec<u8>,
    offset: usize,
    cap: usize,
    pinned: bool,
}

/// The system refused memory for a staging buffer.
#[derive(Debug, thiserror::Error)]
#[error("cannot allocate {bytes} bytes of host memory for the copy")]
pub struct NoMemory {
    pub bytes: usize,
}

pub struct Staging<'a> {
    rt: &'a Runtime,
    /// No buffer grows past this (`max_host_bytes`), however it is rounded.
    max_bytes: usize,
    bufs: [HostBuf; 3],
    /// The content of the expected buffer, as loaded and verified: (hash, length).
    expected_content: Option<(ContentHash, usize)>,
    /// The expected content when it is a fill, compared as it is: the expected buffer
    /// then holds nothing of it.
    expected_fill: Option<Fill>,
    /// Registering failed once (no permission, no memory): do not try again.
    pin_refused: bool,
}

impl<'a> Staging<'a> {
    pub fn new(rt: &'a Runtime, max_bytes: u64) -> Self {
        Staging {
            rt,
            max_bytes: usize::try_from(max_bytes).unwrap_or(usize::MAX),
            bufs: Default::default(),
            expected_content: None,
            expected_fill: None,
            pin_refused: false,
        }
    }

    /// The `role` buffer, exactly `len` bytes, its contents unspecified.
    pub fn get(&mut self, role: Role, len: usize) -> Result<&mut [u8], NoMemory> {
        let i = role as usize;
        if self.bufs[i].cap < len {
            self.unpin(i);
            // The old buffer goes first: it is not needed, and both at once may not fit.
            self.bufs[i] = HostBuf::default();
            if role == Role::Expected {
                self.expected_content = None;
            }
            let cap = grown_capacity(len, self.max_bytes);
            let bytes = cap
                .checked_add(PAGE)
                .ok_or(NoMemory { bytes: usize::MAX })?;
            // Ask the allocator first, so a refusal is an error rather than an abort.
            let mut probe: Vec<u8> = Vec::new();
            probe
                .try_reserve_exact(bytes)
                .map_err(|_| NoMemory { bytes })?;
            drop(probe);
            // Fresh pages from the allocator (calloc: no zeroing pass of our own), faulted
            // in by several threads before the runtime pins them: registering faults
            // every page on one thread otherwise.
            let mut mem = vec![0u8; bytes];
            let offset = (PAGE - mem.as_ptr() as usize % PAGE) % PAGE;
            if cap >= PIN_MIN_BYTES {
                touch_pages(&mut mem[offset..offset + cap]);
            }
            self.bufs[i] = HostBuf {
                mem,
                offset,
                cap,
                pinned: false,
            };
        }
        if role == Role::Expected {
            self.expected_content = None;
            self.expected_fill = None;
        }
        if !self.bufs[i].pinned && self.bufs[i].cap >= PIN_MIN_BYTES {
            self.pin(i);
        }
        let b = &mut self.bufs[i];
        Ok(&mut b.mem[b.offset..b.offset + len])
    }

    /// Records that the expected buffer now holds `len` bytes verified to hash to `hash`.
    pub fn set_expected_content(&mut self, hash: ContentHash, len: usize) {
        self.expected_content = Some((hash, len));
    }

    /// Records that the expected content is `fill`, which the expected buffer does not
    /// hold (nothing is loaded, nothing expanded).
    pub fn set_expected_fill(&mut self, fill: Fill) {
        self.expected_content = None;
        self.expected_fill = Some(fill);
    }

    /// The expected content, when `set_expected_fill` gave it as a fill.
    pub fn expected_fill(&self) -> Option<&Fill> {
        self.expected_fill.as_ref()
    }

    /// When the expected buffer holds exactly the content `hash` of `len` bytes, makes it
    /// the source buffer (the old source buffer becomes the expected one) and returns it.
    pub fn reuse_expected_as_source(
        &mut self,
        hash: &ContentHash,
        len: usize,
    ) -> Option<&mut [u8]> {
        if self.expected_content != Some((*hash, len)) {
            return None;
        }
        self.expected_content = None;
        self.bufs
            .swap(Role::Source as usize, Role::Expected as usize);
        let b = &mut self.bufs[Role::Source as usize];
        Some(&mut b.mem[b.offset..b.offset + len])
    }

    /// The first `result_len` bytes of the result buffer and `expected_len` of the
    /// expected one, both as `get` last left them.
    pub fn result_and_expected(&self, result_len: usize, expected_len: usize) -> (&[u8], &[u8]) {
        let r = &self.bufs[Role::Result as usize];
        let e = &self.bufs[Role::Expected as usize];
        (
            &r.mem[r.offset..r.offset + result_len.min(r.cap)],
            &e.mem[e.offset..e.offset + expected_len.min(e.cap)],
        )
    }

    /// Fills the first `result_len` bytes of the result buffer with the complement of
    /// the expected bytes (0xa5 past their end), so a byte the replayed copy never wrote
    /// can never pass the check: a reused buffer would otherwise still hold an earlier
    /// event's, possibly equal, result. An expected fill (`set_expected_fill`) is complemented as its unit, never
    /// expanded anywhere else.
    pub fn poison_result(&mut self, result_len: usize, expected_len: usize) {
        let [_, r, e] = &mut self.bufs;
        let found = &mut r.mem[r.offset..r.offset + result_len];
        match &self.expected_fill {
            Some(fill) => complement_fill_into(found, fill),
            None => {
                let expected = &e.mem[e.offset..e.offset + expected_len.min(result_len)];
                complement_into(found, expected);
            }
        }
    }

    /// Whether `role`'s buffer is page-locked, so an asynchronous copy reads it after the
    /// call returns: its stream must finish before the buffer is reused.
    pub fn needs_stream_sync(&self, role: Role) -> bool {
        self.bufs[role as usize].pinned
    }

    /// Releases every registration (before a device reset, which would drop them).
    pub fn unpin_all(&mut self) {
        for i in 0..self.bufs.len() {
            self.unpin(i);
        }
    }

    fn pin(&mut self, i: usize) {
        if self.pin_refused {
            return;
        }
        let b = &mut self.bufs[i];
        let ptr = b.mem[b.offset..].as_mut_ptr() as u64;
        // SAFETY: HostRegister(ptr, size, flags 0) over memory this buffer owns, which
        // stays allocated, unmoved, until `unpin` unregisters it.
        match unsafe {
            self.rt
                .call_table(id::HostRegister, &[ptr, b.cap as u64, 0])
        } {
            Ok(0) => b.pinned = true,
            _ => self.pin_refused = true,
        }
    }

    fn unpin(&mut self, i: usize) {
        let b = &mut self.bufs[i];
        if b.pinned {
            let ptr = b.mem[b.offset..].as_mut_ptr() as u64;
            // SAFETY: HostUnregister of the address `pin` registered.
            let _ = unsafe { self.rt.call_table(id::HostUnregister, &[ptr]) };
            b.pinned = false;
        }
    }
}

impl Drop for Staging<'_> {
    fn drop(&mut self) {
        self.unpin_all();
    }
}

/// The capacity a buffer grows to for `len` bytes: the next power of two (fewer
/// regrowths), but never past `max` unless `len` itself is.
fn grown_capacity(len: usize, max: usize) -> usize {
    len.checked_next_power_of_two()
        .unwrap_or(len)
        .min(max.max(len))
}

/// Writes one byte of every page of `buf` from several threads, so the kernel maps (and
/// zeroes) its pages in parallel.
fn touch_pages(buf: &mut [u8]) {
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get().min(8));
    let step = buf.len().div_ceil(threads).div_ceil(PAGE).max(1) * PAGE;
    std::thread::scope(|s| {
        for part in buf.chunks_mut(step) {
            s.spawn(move || {
                for page in part.chunks_mut(PAGE) {
                    // Not 0: a store of zero into calloc memory may be optimised away.
                    page[0] = 1;
                }
            });
        }
    });
}

/// A page-aligned host buffer of its own (one per asynchronous copy whose comparison
/// waits for a later record), page-locked from `PIN_MIN_BYTES` on, unregistered when
/// dropped.
pub struct OwnedBuf<'a> {
    rt: &'a Runtime,
    mem: Vec<u8>,
    offset: usize,
    len: usize,
    pinned: bool,
}

impl<'a> OwnedBuf<'a> {
    /// `len` bytes (contents unspecified), page-locked when `pin` and at least
    /// `PIN_MIN_BYTES`, or the system's refusal.
    pub fn new(rt: &'a Runtime, len: usize, pin: bool) -> Result<OwnedBuf<'a>, NoMemory> {
        let bytes = len
            .checked_add(PAGE)
            .ok_or(NoMemory { bytes: usize::MAX })?;
        let mut probe: Vec<u8> = Vec::new();
        probe
            .try_reserve_exact(bytes)
            .map_err(|_| NoMemory { bytes })?;
        drop(probe);
        let mem = vec![0u8; bytes];
        let offset = (PAGE - mem.as_ptr() as usize % PAGE) % PAGE;
        let mut b = OwnedBuf {
            rt,
            mem,
            offset,
            len,
            pinned: false,
        };
        if len >= PIN_MIN_BYTES {
            touch_pages(&mut b.mem[offset..offset + len]);
        }
        if pin && len >= PIN_MIN_BYTES {
            let ptr = b.mem[offset..].as_mut_ptr() as u64;
            // SAFETY: HostRegister over memory this buffer owns, which stays allocated,
            // unmoved, until `drop` unregisters it.
            b.pinned = matches!(
                unsafe { rt.call_table(id::HostRegister, &[ptr, len as u64, 0]) },
                Ok(0)
            );
        }
        Ok(b)
    }

    /// Its length in bytes.
    pub fn bytes(&self) -> usize {
        self.len
    }

    pub fn as_slice(&self) -> &[u8] {
        &self.mem[self.offset..self.offset + self.len]
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        &mut self.mem[self.offset..self.offset + self.len]
    }
}

impl Drop for OwnedBuf<'_> {
    fn drop(&mut self) {
        if self.pinned {
            let ptr = self.mem[self.offset..].as_mut_ptr() as u64;
            // SAFETY: HostUnregister of the address `new` registered, before the memory
            // is freed.
            let _ = unsafe { self.rt.call_table(id::HostUnregister, &[ptr]) };
        }
    }
}

/// `complement_into` for expected content that is a fill: `out[i] = !fill[i]` over the
/// fill's length, 0xa5 past it.
pub fn complement_fill_into(out: &mut [u8], fill: &Fill) {
    let n = (fill.len as usize).min(out.len());
    let (head, tail) = out.split_at_mut(n);
    Fill {
        len: n as u64,
        ..fill.complement()
    }
    .expand_into(head);
    tail.fill(0xa5);
}

/// `out[i] = !expected[i]` over `expected`'s length, 0xa5 past it; several threads for
/// large buffers.
pub fn complement_into(out: &mut [u8], expected: &[u8]) {
    const PARALLEL_BYTES: usize = 4 << 20;
    let n = expected.len().min(out.len());
    let (head, tail) = out.split_at_mut(n);
    tail.fill(0xa5);
    let expected = &expected[..n];
    let fill = |o: &mut [u8], e: &[u8]| o.iter_mut().zip(e).for_each(|(o, x)| *o = !x);
    if n < PARALLEL_BYTES {
        return fill(head, expected);
    }
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get().min(8));
    let step = n.div_ceil(threads);
    std::thread::scope(|s| {
        for (o, e) in head.chunks_mut(step).zip(expected.chunks(step)) {
            s.spawn(move || fill(o, e));
        }
    });
}

#[cfg(test)]
mod tests {
    use super::{complement_into, grown_capacity};

    #[test]
    fn growth_rounds_up_to_a_power_of_two_within_the_limit() {
        assert_eq!(grown_capacity(5, 1 << 20), 8);
        assert_eq!(grown_capacity(1 << 20, 1 << 20), 1 << 20);
        // 5 GiB would round to 8 GiB: the limit of 6 GiB caps it.
        assert_eq!(grown_capacity(5 << 30, 6 << 30), 6 << 30);
        assert_eq!(grown_capacity(usize::MAX - 3, 16), usize::MAX - 3);
    }

    #[test]
    fn every_byte_of_a_poisoned_result_differs_from_the_expected_one() {
        for len in [0usize, 1, 4095, (64 << 20) + 3] {
            let expected: Vec<u8> = (0..len).map(|i| (i * 7 + i / 251) as u8).collect();
            let mut out = vec![0u8; len + 5];
            complement_into(&mut out, &expected);
            assert!(
                out[..len].iter().zip(&expected).all(|(o, e)| o != e),
                "{len}"
            );
            assert!(out[len..].iter().all(|&b| b == 0xa5));
        }
    }
}
