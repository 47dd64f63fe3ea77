//! Which mapped (page-locked) and managed allocations launched kernels reach, until a
//! synchronisation completes them (pure: no runtime, no threads; `mapped` applies it).
//!
//! A kernel writes such memory directly; no copy carries the result, so the program
//! sees it only after a synchronisation that completes the kernel. The rules match
//! `pending`'s for D2H reads: a device-wide synchronisation completes every launch; a
//! blocking copy, the launches on the default streams; a stream's synchronisation (or a
//! successful query), its launches (a default stream's: every launch); an event's, the
//! launches of its stream issued up to the event's record point (an event of a default
//! stream: every launch up to it; an event never seen recorded: every launch).
//!
//! An allocation that a launch not yet completed also reaches is not read at this
//! synchronisation (that kernel may still write it): the synchronisation completing that
//! launch records it.
//!
//! A stream that waits for an event (`cudaStreamWaitEvent`) joins the work up to the
//! event's record point: synchronising the stream past the wait completes that work too,
//! and so on through the waits of the event's own stream (the CUDA samples' shape: work
//! on 16 streams, each recording an event the first stream waits for, then one event of
//! the first stream synchronised; without joins the other 15 streams' launches stayed
//! open, and the memory they reached was never recorded).

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};

use crate::pending::{is_default_stream, Cover};

/// Where the names of streams the program destroyed begin: a destroyed stream's open
/// launches, its events' record points and its waits move to a name of their own at or
/// past it (a new stream may get the handle), no stream handle (a user-space address).
const GONE_BASE: u64 = 0xffff_0000_0000_0000;

/// Whether `stream` names a stream the program destroyed (see [`GONE_BASE`]).
pub fn is_gone(stream: u64) -> bool {
    stream >= GONE_BASE
}

/// One launch's reach into one allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reach {
    /// The launch's place in issue order.
    pub ticket: u64,
    pub stream: u64,
    /// The launch record's sequence id.
    pub launch_seq: u64,
    /// The allocation: host-readable start and size.
    pub start: u64,
    pub size: u64,
}

/// An allocation a synchronisation completed kernels' work in, ready to be recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completed {
    pub start: u64,
    pub size: u64,
    /// The last completed launch that reached it.
    pub launch_seq: u64,
}

/// The launches not yet completed, the program's events' record points and the waits
/// for them.
#[derive(Debug, Default)]
pub struct Reaches {
    /// Launches, event records and waits, counted in issue order: a ticket.
    issued: u64,
    open: Vec<Reach>,
    /// Event handle -> (stream, its ticket at the record).
    events: HashMap<u64, (u64, u64)>,
    /// Stream -> its waits for events not yet covered by a synchronisation: (the wait's
    /// ticket, what the event covered then), oldest first.
    joins: HashMap<u64, VecDeque<(u64, Cover)>>,
    /// Streams destroyed so far (each one's new name: `GONE_BASE` + its number).
    gone: u64,
}

/// Waits kept a stream at most; past it the oldest is dropped. A dropped wait only makes
/// a synchronisation complete less (its memory is recorded at a later, wider one, or
/// never): never work still running.
const JOINS_KEPT: usize = 1024;

/// What a synchronisation completes once widened through the waits: each stream's
/// launches up to a ticket, every launch up to a ticket, the default streams' launches.
#[derive(Debug, Default)]
struct Widened {
    streams: HashMap<u64, u64>,
    all: Option<u64>,
    default_streams: bool,
}

impl Widened {
    fn covers(&self, r: &Reach) -> bool {
        self.all.is_some_and(|t| r.ticket <= t)
            || self.streams.get(&r.stream).is_some_and(|&t| r.ticket <= t)
            || (self.default_streams && is_default_stream(r.stream))
    }
}

impl Reaches {
    /// A launch on `stream`, recorded at `launch_seq`, reaching `allocs` (start, size).
    pub fn launch(&mut self, stream: u64, launch_seq: u64, allocs: &[(u64, u64)]) {
        self.issued += 1;
        for &(start, size) in allocs {
            self.open.push(Reach {
                ticket: self.issued,
                stream,
                launch_seq,
                start,
                size,
            });
        }
    }

    pub fn is_empty(&self) -> bool {
        self.open.is_empty()
    }

    /// The program recorded `event` on `stream`.
    pub fn event_recorded(&mut self, event: u64, stream: u64) {
        self.issued += 1;
        self.events.insert(event, (stream, self.issued));
    }

    /// The program made `stream` wait for `event` (a stream not capturing: a captured
    /// wait is a graph's edge, not this stream's). A default stream's waits need no join:
    /// synchronising a default stream completes every launch issued before.
    /// An event never seen recorded joins nothing: a wait for it is taken to wait for no
    /// work (joining every launch would complete work issued after the wait).
    pub fn stream_waited(&mut self, stream: u64, event: u64) {
        self.issued += 1;
        if is_default_stream(stream) || !self.events.contains_key(&event) {
            return;
        }
        let cover = self.event_cover(event);
        let waits = self.joins.entry(stream).or_default();
        if waits.len() >= JOINS_KEPT {
            waits.pop_front();
        }
        waits.push_back((self.issued, cover));
    }

    /// The program destroyed `stream`: its open launches, its events' record points and
    /// its waits (and the waits for its events) are no longer its handle's, which a new
    /// stream may get, but a name of their own ([`is_gone`]). An event recorded on it
    /// still completes them; a synchronisation of the new stream does not.
    pub fn stream_destroyed(&mut self, stream: u64) {
        if is_default_stream(stream) || is_gone(stream) {
            self.joins.remove(&stream);
            return;
        }
        let name = GONE_BASE + self.gone;
        self.gone += 1;
        for r in self.open.iter_mut().filter(|r| r.stream == stream) {
            r.stream = name;
        }
        for (s, _) in self.events.values_mut().filter(|(s, _)| *s == stream) {
            *s = name;
        }
        if let Some(waits) = self.joins.remove(&stream) {
            self.joins.insert(name, waits);
        }
        for waits in self.joins.values_mut() {
            for (_, cover) in waits.iter_mut() {
                if let Cover::StreamUpTo(s, t) = *cover {
                    if s == stream {
                        *cover = Cover::StreamUpTo(name, t);
                    }
                }
            }
        }
    }

    pub fn event_destroyed(&mut self, event: u64) {
        self.events.remove(&event);
    }

    /// What synchronising `stream` covers.
    pub fn stream_cover(&self, stream: u64) -> Cover {
        if is_default_stream(stream) {
            Cover::AllUpTo(u64::MAX)
        } else {
            Cover::StreamUpTo(stream, u64::MAX)
        }
    }

    /// What synchronising `event` covers.
    pub fn event_cover(&self, event: u64) -> Cover {
        match self.events.get(&event) {
            Some(&(s, t)) if is_default_stream(s) => Cover::AllUpTo(t),
            Some(&(s, t)) => Cover::StreamUpTo(s, t),
            None => Cover::AllUpTo(u64::MAX),
        }
    }

    /// Takes the launches `cover` completes; returns the allocations they reached that
    /// no open launch still reaches, by start, each with its last completed launch.
    pub fn complete(&mut self, cover: Cover) -> Vec<Completed> {
        let widened = self.widen(cover);
        let (done, open): (Vec<Reach>, Vec<Reach>) =
            self.open.drain(..).partition(|r| widened.covers(r));
        self.open = open;
        let mut by_start: BTreeMap<u64, Completed> = BTreeMap::new();
        for r in done {
            let c = by_start.entry(r.start).or_insert(Completed {
                start: r.start,
                size: r.size,
                launch_seq: r.launch_seq,
            });
            c.launch_seq = c.launch_seq.max(r.launch_seq);
            c.size = c.size.max(r.size);
        }
        let still = |c: &Completed| {
            self.open
                .iter()
                .any(|r| r.start < c.start + c.size && c.start < r.start + r.size)
        };
        by_start.into_values().filter(|c| !still(c)).collect()
    }

    /// `cover` widened through the waits it reaches, and through the waits of their
    /// events' streams in turn; the waits reached are dropped (the work they join is
    /// completed now). Each wait is taken once, and the covers are merged by stream, so
    /// the work is bounded by the waits kept.
    fn widen(&mut self, cover: Cover) -> Widened {
        let mut w = Widened::default();
        let mut work = vec![cover];
        while let Some(c) = work.pop() {
            match c {
                Cover::StreamUpTo(s, t) => {
                    if w.streams.get(&s).is_some_and(|&had| had >= t) {
                        continue;
                    }
                    w.streams.insert(s, t);
                    if let Some(waits) = self.joins.get_mut(&s) {
                        while waits.front().is_some_and(|&(at, _)| at <= t) {
                            work.extend(waits.pop_front().map(|(_, c)| c));
                        }
                    }
                }
                Cover::AllUpTo(t) => {
                    if w.all.is_some_and(|had| had >= t) {
                        continue;
                    }
                    w.all = Some(t);
                    // Every wait before `t` joins work issued before it: covered already.
                    for waits in self.joins.values_mut() {
                        waits.retain(|&(at, _)| at > t);
                    }
                }
                Cover::DefaultStreams => w.default_streams = true,
            }
        }
        self.joins.retain(|_, waits| !waits.is_empty());
        w
    }

    /// The latest launch not yet completed that reaches into `[start, start + size)` (the
    /// tests' summary of `open_by_stream`).
    #[cfg(test)]
    pub fn open_launch(&self, start: u64, size: u64) -> Option<u64> {
        self.open_by_stream(start, size)
            .into_iter()
            .map(|(_, seq)| seq)
            .max()
    }

    /// The launches not yet completed that reach into `[start, start + size)`, as
    /// (stream, launch sequence id), the latest first.
    pub fn open_reaching(&self, start: u64, size: u64) -> Vec<(u64, u64)> {
        let mut v: Vec<(u64, u64)> = self
            .open
            .iter()
            .filter(|r| r.start < start.saturating_add(size) && start < r.start + r.size)
            .map(|r| (r.stream, r.launch_seq))
            .collect();
        v.sort_by_key(|&(_, seq)| std::cmp::Reverse(seq));
        v.dedup();
        v
    }

    /// As [`open_reaching`](Self::open_reaching), the latest of each stream only, by
    /// stream.
    pub fn open_by_stream(&self, start: u64, size: u64) -> Vec<(u64, u64)> {
        let mut by: BTreeMap<u64, u64> = BTreeMap::new();
        for (stream, seq) in self.open_reaching(start, size) {
            by.entry(stream).or_insert(seq);
        }
        by.into_iter().collect()
    }

    /// The open launches issued on `stream`.
    pub fn open_on(&self, stream: u64) -> HashSet<u64> {
        self.open
            .iter()
            .filter(|r| r.stream == stream)
            .map(|r| r.launch_seq)
            .collect()
    }

    /// The launches that still reach an allocation no synchronisation completed.
    pub fn open_launches(&self) -> HashSet<u64> {
        self.open.iter().map(|r| r.launch_seq).collect()
    }

    /// A device reset or a freed allocation: its reaches are gone.
    pub fn forget(&mut self, start: u64) {
        self.open.retain(|r| r.start != start);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pending::ALL;

    #[test]
    fn an_allocation_is_in_flight_until_a_synchronisation_completes_its_launches() {
        let mut r = Reaches::default();
        assert_eq!(r.open_launch(0x1000, 64), None);
        r.launch(0x50, 10, &[(0x1000, 64)]);
        r.launch(0x60, 11, &[(0x1000, 64), (0x3000, 4)]);
        assert_eq!(r.open_launch(0x1000, 64), Some(11));
        assert_eq!(r.open_launch(0x3000, 4), Some(11));
        assert_eq!(r.open_launch(0x2000, 8), None, "not reached");
        r.complete(r.stream_cover(0x60));
        assert_eq!(
            r.open_launch(0x1000, 64),
            Some(10),
            "the other stream's still runs"
        );
        r.complete(ALL);
        assert_eq!(r.open_launch(0x1000, 64), None);
    }

    #[test]
    fn the_open_launches_reaching_memory_are_each_streams_latest() {
        let mut r = Reaches::default();
        r.launch(0x50, 10, &[(0x1000, 64)]);
        r.launch(0x60, 11, &[(0x1000, 64)]);
        r.launch(0x50, 12, &[(0x1000, 64), (0x3000, 4)]);
        assert_eq!(r.open_by_stream(0x1000, 64), [(0x50, 12), (0x60, 11)]);
        assert_eq!(r.open_by_stream(0x3000, 4), [(0x50, 12)]);
        assert_eq!(r.open_by_stream(0x2000, 8), []);
        assert_eq!(r.open_launches(), HashSet::from([10, 11, 12]));
        r.complete(r.stream_cover(0x50));
        assert_eq!(r.open_by_stream(0x1000, 64), [(0x60, 11)]);
        assert_eq!(r.open_launches(), HashSet::from([11]));
    }

    #[test]
    fn every_open_launch_is_listed_and_a_destroyed_streams_are_gone() {
        let mut r = Reaches::default();
        r.launch(0x50, 10, &[(0x1000, 64)]);
        r.launch(0x60, 11, &[(0x1000, 64)]);
        r.launch(0x50, 12, &[(0x1000, 64), (0x3000, 4)]);
        assert_eq!(
            r.open_reaching(0x1000, 64),
            [(0x50, 12), (0x60, 11), (0x50, 10)]
        );
        r.event_recorded(0xe1, 0x50);
        r.stream_destroyed(0x50);
        // A new stream with the handle: its launch is not the destroyed stream's.
        r.launch(0x50, 13, &[(0x1000, 64)]);
        let open = r.open_by_stream(0x1000, 64);
        assert_eq!(open[..2], [(0x50, 13), (0x60, 11)]);
        let gone = open[2].0;
        assert!(is_gone(gone) && open[2].1 == 12, "{open:?}");
        r.complete(r.stream_cover(0x50));
        assert_eq!(r.open_by_stream(0x1000, 64), [(0x60, 11), (gone, 12)]);
        // The event recorded on the destroyed stream completes its launches.
        r.complete(r.event_cover(0xe1));
        assert_eq!(r.open_reaching(0x1000, 64), [(0x60, 11)]);
        r.stream_destroyed(0x60);
        assert!(is_gone(r.open_reaching(0x1000, 64)[0].0));
        assert_ne!(r.open_reaching(0x1000, 64)[0].0, gone, "a name of its own");
        r.complete(ALL);
        assert_eq!(r.open_reaching(0x1000, 64), []);
    }

    #[test]
    fn a_device_synchronisation_completes_every_launch_once() {
        let mut r = Reaches::default();
        r.launch(0x50, 10, &[(0x1000, 64), (0x2000, 8)]);
        r.launch(0x60, 12, &[(0x1000, 64)]);
        let c = r.complete(ALL);
        assert_eq!(
            c,
            vec![
                Completed {
                    start: 0x1000,
                    size: 64,
                    launch_seq: 12
                },
                Completed {
                    start: 0x2000,
                    size: 8,
                    launch_seq: 10
                }
            ]
        );
        assert!(r.is_empty());
        assert!(r.complete(ALL).is_empty(), "nothing launched since");
    }

    #[test]
    fn a_stream_completes_its_own_and_an_allocation_another_stream_still_reaches_waits() {
        let mut r = Reaches::default();
        r.launch(0x50, 10, &[(0x1000, 64)]);
        r.launch(0x60, 11, &[(0x1000, 64), (0x3000, 4)]);
        r.launch(0x50, 12, &[(0x2000, 8)]);
        let c = r.complete(r.stream_cover(0x50));
        // 0x1000 is still reached by the launch on 0x60: read when that one completes.
        assert_eq!(
            c,
            vec![Completed {
                start: 0x2000,
                size: 8,
                launch_seq: 12
            }]
        );
        let c = r.complete(r.stream_cover(0x60));
        assert_eq!(
            c.iter().map(|c| c.start).collect::<Vec<_>>(),
            [0x1000, 0x3000]
        );
        // A default stream's synchronisation completes every stream's launches.
        r.launch(0x60, 20, &[(0x1000, 64)]);
        assert_eq!(r.complete(r.stream_cover(0)).len(), 1);
    }

    #[test]
    fn an_event_completes_its_stream_up_to_its_record_point() {
        let mut r = Reaches::default();
        r.launch(0x50, 10, &[(0x1000, 64)]);
        r.event_recorded(0xe1, 0x50);
        r.launch(0x50, 12, &[(0x2000, 8)]);
        let c = r.complete(r.event_cover(0xe1));
        assert_eq!(c.iter().map(|c| c.start).collect::<Vec<_>>(), [0x1000]);
        // An event never seen recorded covers everything; a blocking copy the default
        // streams only.
        r.launch(0, 13, &[(0x3000, 8)]);
        assert_eq!(
            r.complete(Cover::DefaultStreams)
                .iter()
                .map(|c| c.start)
                .collect::<Vec<_>>(),
            [0x3000]
        );
        r.event_destroyed(0xe1);
        assert_eq!(r.event_cover(0xe1), ALL);
        assert_eq!(r.complete(r.event_cover(0xe1)).len(), 1);
    }

    #[test]
    fn a_wait_joins_the_event_stream_work_to_the_waiting_stream() {
        let mut r = Reaches::default();
        // Streams 0x51 and 0x52 launch, each records an event the first stream waits for,
        // then an event of the first stream is synchronised (unified_memory_perf's pass).
        r.launch(0x50, 10, &[(0x1000, 64)]);
        r.launch(0x51, 11, &[(0x1000, 64)]);
        r.launch(0x52, 12, &[(0x1000, 64)]);
        r.event_recorded(0xe1, 0x51);
        r.stream_waited(0x50, 0xe1);
        r.event_recorded(0xe2, 0x52);
        r.stream_waited(0x50, 0xe2);
        r.event_recorded(0xe0, 0x50);
        let c = r.complete(r.event_cover(0xe0));
        assert_eq!(
            c,
            vec![Completed {
                start: 0x1000,
                size: 64,
                launch_seq: 12
            }]
        );
        assert!(r.is_empty() && r.joins.is_empty());
    }

    #[test]
    fn a_wait_joins_only_work_before_the_record_and_only_after_it_is_made() {
        let mut r = Reaches::default();
        r.launch(0x51, 11, &[(0x1000, 64)]);
        r.event_recorded(0xe1, 0x51);
        r.launch(0x51, 12, &[(0x2000, 64)]);
        // An event of the first stream recorded before its wait covers no join.
        r.event_recorded(0xe0, 0x50);
        r.stream_waited(0x50, 0xe1);
        assert!(r.complete(r.event_cover(0xe0)).is_empty());
        // After the wait: the work up to the waited event's record, not the launch after.
        let c = r.complete(r.stream_cover(0x50));
        assert_eq!(c.iter().map(|c| c.start).collect::<Vec<_>>(), [0x1000]);
        assert_eq!(r.open_launch(0x2000, 64), Some(12));
        // Through a chain: 0x52 waits for 0x51's event, 0x50 for 0x52's.
        r.event_recorded(0xe1, 0x51);
        r.stream_waited(0x52, 0xe1);
        r.event_recorded(0xe2, 0x52);
        r.stream_waited(0x50, 0xe2);
        let c = r.complete(r.stream_cover(0x50));
        assert_eq!(c.iter().map(|c| c.start).collect::<Vec<_>>(), [0x2000]);
        assert!(r.is_empty() && r.joins.is_empty());
    }

    #[test]
    fn many_waits_widen_once_and_an_unknown_event_joins_nothing() {
        let mut r = Reaches::default();
        // 5,000 rounds of 0x50 waiting for 0x51's event, then a launch on 0x51 after the
        // last wait, still running when 0x50 is synchronised.
        r.launch(0x51, 1, &[(0x1000, 64)]);
        for _ in 0..5000 {
            r.event_recorded(0xe1, 0x51);
            r.stream_waited(0x50, 0xe1);
        }
        r.launch(0x51, 2, &[(0x2000, 64)]);
        assert_eq!(r.joins[&0x50].len(), JOINS_KEPT, "the oldest waits dropped");
        let c = r.complete(r.stream_cover(0x50));
        assert_eq!(c.iter().map(|c| c.start).collect::<Vec<_>>(), [0x1000]);
        assert_eq!(r.open_launch(0x2000, 64), Some(2), "issued after the waits");
        assert!(r.joins.is_empty());
        // A wait for an event never seen recorded joins nothing; a destroyed stream's
        // waits go with it.
        r.stream_waited(0x52, 0xee);
        assert!(r.joins.is_empty());
        r.event_recorded(0xe1, 0x51);
        r.stream_waited(0x53, 0xe1);
        r.stream_destroyed(0x53);
        assert!(r.complete(r.stream_cover(0x53)).is_empty());
        assert_eq!(r.open_launch(0x2000, 64), Some(2));
    }
}
