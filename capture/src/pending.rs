//! The bookkeeping of pending reads (pure: no runtime, no threads): which asynchronous
//! device-to-host copies still wait for capture to read their destination, which host
//! bytes each covers, and which of them a synchronisation the program makes covers.
//!
//! The rules (`outputs` applies them):
//! - a read is *covered* by a synchronisation that makes its copy's completion visible
//!   to the program: a device-wide one covers every read; a blocking copy, the reads of
//!   copies on the default streams (the others it orders itself after are complete, and
//!   the caller waits for every read whose copy is complete); a stream's, the reads of copies
//!   issued on that stream (the default streams 0, 1 and 2 cover every read: the legacy
//!   default stream orders itself with every blocking stream); an event's, the reads of
//!   its stream issued up to the event's record point (an event of a default stream: all
//!   reads issued up to it); an event capture never saw recorded, every read;
//! - a new copy, or any host read capture makes, whose host bytes overlap a pending read
//!   waits for that read first (the program may legally reuse a buffer in stream order,
//!   and capture must read the first copy's bytes before the second overwrites them).

use std::collections::BTreeMap;

use crate::events::Event;
use crate::regions::HostRegion;

/// A pending read's place in issue order (one counter for the process).
pub type Ticket = u64;

/// Where a pending read is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadState {
    /// Its reader waits for the copy's completion.
    Waiting,
    /// The copy completed and its reader gathers and stores the bytes.
    Reading,
}

/// One pending read: the copy's stream, the host bytes `[start, end)` it covers, the
/// capture-owned event recorded after it, its state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub stream: u64,
    pub span: (u64, u64),
    pub event: Event,
    pub state: ReadState,
}

/// The reads a synchronisation covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cover {
    /// Every read issued up to this ticket (`Ticket::MAX`: every read).
    AllUpTo(Ticket),
    /// The reads of one stream issued up to this ticket.
    StreamUpTo(u64, Ticket),
    /// The reads of copies issued on the default streams (a blocking copy: it runs on
    /// the default stream after the work of every blocking stream, whose copies are then
    /// complete and found so by their events).
    DefaultStreams,
}

/// Every read, whenever issued.
pub const ALL: Cover = Cover::AllUpTo(Ticket::MAX);

/// Whether a stream handle is a default stream (0, cudaStreamLegacy, cudaStreamPerThread
/// and their HIP equivalents), which capture treats as ordering every stream.
pub fn is_default_stream(stream: u64) -> bool {
    stream <= 2
}

/// The host bytes `[start, end)` a region spans (rows and boxes include the padding
/// between them: a conservative span for the overlap rule).
pub fn span(region: &HostRegion) -> (u64, u64) {
    match *region {
        HostRegion::Linear { ptr, len } => (ptr, ptr.saturating_add(len)),
        HostRegion::Rows {
            ptr,
            pitch,
            width,
            height,
        } => {
            let last = pitch.saturating_mul(height.saturating_sub(1));
            (ptr, ptr.saturating_add(last).saturating_add(width))
        }
        HostRegion::Box { side, extent } => {
            let [w, h, d] = extent;
            let slice = side.pitch.saturating_mul(side.ysize);
            let start = side
                .ptr
                .saturating_add(side.z.saturating_mul(slice))
                .saturating_add(side.y.saturating_mul(side.pitch))
                .saturating_add(side.x);
            let last = slice
                .saturating_mul(d.saturating_sub(1))
                .saturating_add(side.pitch.saturating_mul(h.saturating_sub(1)));
            (start, start.saturating_add(last).saturating_add(w))
        }
    }
}

fn overlaps(a: (u64, u64), b: (u64, u64)) -> bool {
    a.0 < b.1 && b.0 < a.1
}

/// The pending reads of a process and the program's events' record points.
#[derive(Debug)]
pub struct PendingReads {
    next: Ticket,
    entries: BTreeMap<Ticket, Entry>,
    /// The program's events: handle -> (stream, last ticket issued when it was recorded).
    events: BTreeMap<u64, (u64, Ticket)>,
}

impl Default for PendingReads {
    fn default() -> Self {
        Self::new()
    }
}

impl PendingReads {
    pub const fn new() -> Self {
        PendingReads {
            next: 1,
            entries: BTreeMap::new(),
            events: BTreeMap::new(),
        }
    }

    /// Registers a read of `span` for a copy on `stream`, its completion marked by the
    /// capture-owned `event`.
    pub fn add(&mut self, stream: u64, span: (u64, u64), event: Event) -> Ticket {
        let t = self.next;
        self.next += 1;
        self.entries.insert(
            t,
            Entry {
                stream,
                span,
                event,
                state: ReadState::Waiting,
            },
        );
        t
    }

    pub fn get(&self, t: Ticket) -> Option<&Entry> {
        self.entries.get(&t)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Bytes still to be read.
    pub fn bytes(&self) -> u64 {
        self.entries
            .values()
            .map(|e| e.span.1 - e.span.0)
            .fold(0, u64::saturating_add)
    }

    /// The oldest pending read.
    pub fn oldest(&self) -> Option<Ticket> {
        self.entries.keys().next().copied()
    }

    /// The reader found the copy complete: Waiting -> Reading. False when the read is no
    /// longer pending (abandoned at exit): the reader must not write it.
    pub fn start_reading(&mut self, t: Ticket) -> bool {
        match self.entries.get_mut(&t) {
            Some(e) if e.state == ReadState::Waiting => {
                e.state = ReadState::Reading;
                true
            }
            _ => false,
        }
    }

    /// The read is written (or recorded as not recorded): it is no longer pending.
    pub fn finish(&mut self, t: Ticket) {
        self.entries.remove(&t);
    }

    /// Gives up a read whose copy has not completed (exit's bounded wait ran out): true
    /// when it was still waiting, so the caller records it as not recorded.
    pub fn abandon(&mut self, t: Ticket) -> bool {
        match self.entries.get(&t) {
            Some(e) if e.state == ReadState::Waiting => {
                self.entries.remove(&t);
                true
            }
            _ => false,
        }
    }

    /// The pending reads whose host bytes overlap `span`.
    pub fn overlapping(&self, span: (u64, u64)) -> Vec<Ticket> {
        self.entries
            .iter()
            .filter(|(_, e)| overlaps(e.span, span))
            .map(|(&t, _)| t)
            .collect()
    }

    /// The pending reads a synchronisation covers.
    pub fn covered(&self, cover: Cover) -> Vec<Ticket> {
        self.entries
            .iter()
            .filter(|(&t, e)| match cover {
                Cover::AllUpTo(upto) => t <= upto,
                Cover::StreamUpTo(s, upto) => t <= upto && e.stream == s,
                Cover::DefaultStreams => is_default_stream(e.stream),
            })
            .map(|(&t, _)| t)
            .collect()
    }

    /// What synchronising `stream` covers.
    pub fn stream_cover(&self, stream: u64) -> Cover {
        if is_default_stream(stream) {
            ALL
        } else {
            Cover::StreamUpTo(stream, Ticket::MAX)
        }
    }

    /// The program recorded `event` on `stream`: its record point is the last read
    /// issued so far.
    pub fn on_event_record(&mut self, event: u64, stream: u64) {
        self.events.insert(event, (stream, self.next - 1));
    }

    /// The program destroyed `event`.
    pub fn on_event_destroy(&mut self, event: u64) {
        self.events.remove(&event);
    }

    /// What synchronising with `event` (or a successful query of it) covers.
    /// The stream `event` was last seen recorded on.
    pub fn event_stream(&self, event: u64) -> Option<u64> {
        self.events.get(&event).map(|&(s, _)| s)
    }

    pub fn event_cover(&self, event: u64) -> Cover {
        match self.events.get(&event) {
            Some(&(s, upto)) if is_default_stream(s) => Cover::AllUpTo(upto),
            Some(&(s, upto)) => Cover::StreamUpTo(s, upto),
            None => ALL,
        }
    }

    /// Forgets everything (a forked child: its parent's reads are not its own).
    pub fn clear(&mut self) {
        self.entries.clear();
        self.events.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hrr_archive::api::memcpy3d;

    const S1: u64 = 0x5100;
    const S2: u64 = 0x5200;

    #[test]
    fn overlap_is_by_bytes_half_open() {
        let mut r = PendingReads::new();
        let a = r.add(S1, (0x1000, 0x2000), Event::for_test(1));
        let b = r.add(S2, (0x2000, 0x3000), Event::for_test(2));
        assert_eq!(r.overlapping((0x1fff, 0x2001)), [a, b]);
        assert_eq!(r.overlapping((0x2000, 0x2001)), [b]);
        assert_eq!(r.overlapping((0x0, 0x1000)), Vec::<Ticket>::new());
        assert_eq!(r.overlapping((0x3000, 0x4000)), Vec::<Ticket>::new());
        assert_eq!(r.bytes(), 0x2000);
    }

    #[test]
    fn a_stream_covers_its_own_reads_and_a_default_stream_all() {
        let mut r = PendingReads::new();
        let a = r.add(S1, (0, 10), Event::for_test(1));
        let b = r.add(S2, (10, 20), Event::for_test(2));
        let c = r.add(S1, (20, 30), Event::for_test(3));
        assert_eq!(r.covered(r.stream_cover(S1)), [a, c]);
        assert_eq!(r.covered(r.stream_cover(S2)), [b]);
        for default in [0, 1, 2] {
            assert_eq!(r.covered(r.stream_cover(default)), [a, b, c]);
        }
        assert_eq!(r.covered(ALL), [a, b, c]);
        let d = r.add(0, (30, 40), Event::for_test(4));
        let e = r.add(2, (40, 50), Event::for_test(5));
        assert_eq!(r.covered(Cover::DefaultStreams), [d, e]);
    }

    #[test]
    fn an_event_covers_its_streams_reads_up_to_its_record_point() {
        let mut r = PendingReads::new();
        let a = r.add(S1, (0, 10), Event::for_test(1));
        let _b = r.add(S2, (10, 20), Event::for_test(2));
        r.on_event_record(0xe1, S1);
        r.on_event_record(0xe0, 0);
        let _c = r.add(S1, (20, 30), Event::for_test(3));
        // Only the S1 read issued before the record.
        assert_eq!(r.covered(r.event_cover(0xe1)), [a]);
        // An event of the default stream: everything issued before it.
        assert_eq!(r.covered(r.event_cover(0xe0)), [a, _b]);
        // Re-recorded later, it covers the later read too.
        r.on_event_record(0xe1, S1);
        assert_eq!(r.covered(r.event_cover(0xe1)), [a, _c]);
        // An event never seen recorded (or destroyed) covers everything.
        r.on_event_destroy(0xe1);
        assert_eq!(r.covered(r.event_cover(0xe1)).len(), 3);
        assert_eq!(r.covered(r.event_cover(0xbad)).len(), 3);
    }

    #[test]
    fn a_read_is_written_once_and_an_abandoned_one_never() {
        let mut r = PendingReads::new();
        let a = r.add(S1, (0, 10), Event::for_test(1));
        let b = r.add(S1, (10, 20), Event::for_test(2));
        assert_eq!(r.oldest(), Some(a));
        assert!(r.start_reading(a));
        assert!(!r.start_reading(a));
        // Being read: exit waits for it rather than abandoning it.
        assert!(!r.abandon(a));
        r.finish(a);
        assert!(r.abandon(b));
        assert!(!r.start_reading(b));
        assert!(r.is_empty());
    }

    #[test]
    fn spans_of_rows_and_boxes() {
        let rows = HostRegion::Rows {
            ptr: 1000,
            pitch: 64,
            width: 10,
            height: 3,
        };
        assert_eq!(span(&rows), (1000, 1000 + 128 + 10));
        let side = memcpy3d::Side {
            ptr: 4096,
            pitch: 32,
            xsize: 32,
            ysize: 4,
            x: 2,
            y: 1,
            z: 1,
        };
        let b = HostRegion::Box {
            side,
            extent: [8, 2, 2],
        };
        let start = 4096 + 128 + 32 + 2;
        assert_eq!(span(&b), (start, start + 128 + 32 + 8));
        assert_eq!(span(&HostRegion::Linear { ptr: 5, len: 7 }), (5, 12));
    }
}
