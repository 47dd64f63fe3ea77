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

use crate::pages::{self, Pages};
use crate::profile::{self, Part};
use crate::runtime::Runtime;

pub use crate::pages::NoMemory;

/// Buffers at least this large are page-locked.
pub const PIN_MIN_BYTES: usize = pages::LARGE_BYTES;

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
    pages: Pages,
    pinned: bool,
    /// The fill the buffer is known to hold from its first byte (`poison_for_fill`).
    holds: Option<Fill>,
}

impl HostBuf {
    fn cap(&self) -> usize {
        self.pages.len()
    }

    fn bytes(&mut self, len: usize) -> &mut [u8] {
        &mut self.pages.as_mut_slice()[..len]
    }
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
        if self.bufs[i].cap() < len {
            self.unpin(i);
            // The old buffer goes first: it is not needed, and both at once may not fit.
            self.bufs[i] = HostBuf::default();
            if role == Role::Expected {
                self.expected_content = None;
            }
            let cap = grown_capacity(len, self.max_bytes);
            let alloc = profile::span(Part::Alloc);
            let pages = Pages::new(cap)?;
            drop(alloc);
            self.bufs[i] = HostBuf {
                pages,
                pinned: false,
                holds: None,
            };
        }
        if role == Role::Expected {
            self.expected_content = None;
            self.expected_fill = None;
        }
        if !self.bufs[i].pinned && self.bufs[i].cap() >= PIN_MIN_BYTES {
            self.pin(i);
        }
        Ok(self.bufs[i].bytes(len))
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
        Some(self.bufs[Role::Source as usize].bytes(len))
    }

    /// The result to check, as the copy left it in the result buffer, with the expected
    /// content (`result_len` and `expected_len` bytes, as `get` last gave them out).
    pub fn result_check(&mut self, result_len: usize, expected_len: usize) -> ResultCheck<'_> {
        let [_, r, e] = &mut self.bufs;
        let (rc, ec) = (r.cap(), e.cap());
        ResultCheck {
            found: &mut r.pages.as_mut_slice()[..result_len.min(rc)],
            expected_fill: self.expected_fill.as_ref(),
            expected: &e.pages.as_slice()[..expected_len.min(ec)],
            holds: &mut r.holds,
        }
    }

    /// Makes sure no byte of the first `result_len` bytes of the result buffer equals
    /// the expected byte, so a byte the replayed copy never wrote can never pass the
    /// check: a reused buffer would otherwise still hold an earlier event's, possibly
    /// equal, result. The buffer gets the expected bytes' complement (0xa5 past their
    /// end), unless it is known to hold a fill that differs from an expected fill at
    /// every byte already (`poison_for_fill`).
    pub fn poison_result(&mut self, result_len: usize, expected_len: usize) {
        let [_, r, e] = &mut self.bufs;
        let holds = r.holds.take();
        let found = r.bytes(result_len);
        match &self.expected_fill {
            Some(fill) => poison_for_fill(found, holds, fill),
            None => {
                let expected = &e.pages.as_slice()[..expected_len.min(result_len)];
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
        let _t = profile::span(Part::Pin);
        let b = &mut self.bufs[i];
        // SAFETY: HostRegister(ptr, size, flags 0) over memory this buffer owns, which
        // stays allocated, unmoved, until `unpin` unregisters it.
        match unsafe {
            self.rt
                .call_table(id::HostRegister, &[b.pages.addr(), b.cap() as u64, 0])
        } {
            Ok(0) => b.pinned = true,
            _ => self.pin_refused = true,
        }
    }

    fn unpin(&mut self, i: usize) {
        let b = &mut self.bufs[i];
        if b.pinned {
            let _t = profile::span(Part::Unpin);
            // SAFETY: HostUnregister of the address `pin` registered.
            let _ = unsafe { self.rt.call_table(id::HostUnregister, &[b.pages.addr()]) };
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

/// A page-aligned host buffer of its own (one per asynchronous copy whose comparison
/// waits for a later record), page-locked from `PIN_MIN_BYTES` on, unregistered when
/// dropped.
pub struct OwnedBuf<'a> {
    rt: &'a Runtime,
    pages: Pages,
    pinned: bool,
    /// The fill the buffer is known to hold from its first byte (`poison_for_fill`).
    pub holds: Option<Fill>,
}

impl<'a> OwnedBuf<'a> {
    /// `len` bytes (contents unspecified), page-locked when `pin` and at least
    /// `PIN_MIN_BYTES`, or the system's refusal.
    pub fn new(rt: &'a Runtime, len: usize, pin: bool) -> Result<OwnedBuf<'a>, NoMemory> {
        let alloc = profile::span(Part::Alloc);
        let pages = Pages::new(len)?;
        drop(alloc);
        let mut b = OwnedBuf {
            rt,
            pages,
            pinned: false,
            holds: None,
        };
        if pin && len >= PIN_MIN_BYTES {
            let _t = profile::span(Part::Pin);
            // SAFETY: HostRegister over memory this buffer owns, which stays allocated,
            // unmoved, until `drop` unregisters it.
            b.pinned = matches!(
                unsafe { rt.call_table(id::HostRegister, &[b.pages.addr(), len as u64, 0]) },
                Ok(0)
            );
        }
        Ok(b)
    }

    /// Its length in bytes.
    pub fn bytes(&self) -> usize {
        self.pages.len()
    }

    pub fn as_slice(&self) -> &[u8] {
        self.pages.as_slice()
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        self.pages.as_mut_slice()
    }
}

impl Drop for OwnedBuf<'_> {
    fn drop(&mut self) {
        if self.pinned {
            let _t = profile::span(Part::Unpin);
            // SAFETY: HostUnregister of the address `new` registered, before the memory
            // is freed.
            let _ = unsafe { self.rt.call_table(id::HostUnregister, &[self.pages.addr()]) };
        }
    }
}

/// A D2H result in the result buffer, ready to be checked.
pub struct ResultCheck<'s> {
    pub found: &'s mut [u8],
    /// The expected content when it is a fill (`expected` then holds nothing of it).
    pub expected_fill: Option<&'s Fill>,
    pub expected: &'s [u8],
    /// What the result buffer is known to hold after the check: the check sets it when
    /// it leaves a fill there (`Fill::matches_then_complement`).
    pub holds: &'s mut Option<Fill>,
}

/// Poisons `out` against an expected `fill` (`complement_fill_into`), unless `holds`,
/// the fill `out` is known to hold, differs from `fill` at every byte already: a byte
/// the copy never wrote then cannot pass either. A comparison that passed leaves the
/// complement of what it compared (`Fill::matches_then_complement`), which differs from
/// the next round's different fill at every byte almost always: the result buffer is
/// then written once per round, by the comparison, instead of twice.
pub fn poison_for_fill(out: &mut [u8], holds: Option<Fill>, fill: &Fill) {
    let differs_everywhere = holds.is_some_and(|h| {
        h.len >= out.len() as u64
            && fill.len == out.len() as u64
            && h.unit.iter().zip(&fill.unit).all(|(a, b)| a != b)
    });
    if !differs_everywhere {
        complement_fill_into(out, fill);
    }
}

/// `complement_into` for expected content that is a fill: `out[i] = !fill[i]` over the
/// fill's length, 0xa5 past it.
pub fn complement_fill_into(out: &mut [u8], fill: &Fill) {
    let _t = profile::span(Part::Poison);
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
    let _t = profile::span(Part::Poison);
    const PARALLEL_BYTES: usize = 4 << 20;
    let n = expected.len().min(out.len());
    let (head, tail) = out.split_at_mut(n);
    tail.fill(0xa5);
    let expected = &expected[..n];
    let fill = |o: &mut [u8], e: &[u8]| o.iter_mut().zip(e).for_each(|(o, x)| *o = !x);
    if n < PARALLEL_BYTES {
        return fill(head, expected);
    }
    let step = n.div_ceil(pages::threads());
    std::thread::scope(|s| {
        for (o, e) in head.chunks_mut(step).zip(expected.chunks(step)) {
            s.spawn(move || fill(o, e));
        }
    });
}

#[cfg(test)]
mod tests {
    use super::{complement_into, grown_capacity, poison_for_fill};
    use hrr_archive::fill::Fill;

    #[test]
    fn a_poisoned_result_differs_from_an_expected_fill_everywhere_whatever_it_held() {
        let len = (1 << 20) + 16;
        let fill = |v: u32| {
            let mut unit = [0u8; 16];
            for (i, b) in unit.iter_mut().enumerate() {
                *b = v.to_le_bytes()[i % 4];
            }
            Fill {
                unit,
                len: len as u64,
            }
        };
        let round = |k: u32| fill(25 * k);
        for (held, want) in [
            // The complement a passing comparison leaves, then the next round's value.
            (Some(round(1).complement()), round(2)),
            // A complement that equals the next value in one byte: poisoned again.
            (Some(fill(0x0000_00ff).complement()), fill(0x0000_0000)),
            // The same value again.
            (Some(round(3)), round(3)),
            (None, round(4)),
        ] {
            let mut out = vec![0u8; len];
            if let Some(h) = held {
                h.expand_into(&mut out);
            }
            poison_for_fill(&mut out, held, &want);
            assert!(
                out.iter().enumerate().all(|(i, &b)| b != want.byte(i)),
                "held {held:?}, want {want:?}"
            );
        }
    }

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
