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

use std::collections::{BTreeMap, HashMap};

use crate::pending::{is_default_stream, Cover, ALL};

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
    /// ticket, what the event covered then).
    joins: HashMap<u64, Vec<(u64, Cover)>>,
}

/// Covers a synchronisation expands into through the waits, at most: past it, every
/// launch is taken as completed by the synchronisation's own rule widened to all streams
/// (never reached by a program's wait graph; a bound on a hostile one).
const JOIN_EXPANSION_MAX: usize = 4096;

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
    pub fn stream_waited(&mut self, stream: u64, event: u64) {
        self.issued += 1;
        if is_default_stream(stream) {
            return;
        }
        let cover = self.event_cover(event);
        self.joins
            .entry(stream)
            .or_default()
            .push((self.issued, cover));
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
        let covers = self.expand(cover);
        let covered = |r: &Reach| {
            covers.iter().any(|&c| match c {
                Cover::AllUpTo(t) => r.ticket <= t,
                Cover::StreamUpTo(s, t) => r.stream == s && r.ticket <= t,
                Cover::DefaultStreams => is_default_stream(r.stream),
            })
        };
        let (done, open): (Vec<Reach>, Vec<Reach>) = self.open.drain(..).partition(covered);
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

    /// `cover` and the covers of the waits it reaches, through the waits' own streams;
    /// the waits covered are dropped (the work they join is completed now).
    fn expand(&mut self, cover: Cover) -> Vec<Cover> {
        let mut out = vec![cover];
        let mut i = 0;
        while i < out.len() {
            if out.len() > JOIN_EXPANSION_MAX {
                return vec![ALL];
            }
            match out[i] {
                Cover::StreamUpTo(s, t) => {
                    if let Some(waits) = self.joins.get_mut(&s) {
                        let (reached, later): (Vec<_>, Vec<_>) =
                            waits.drain(..).partition(|&(w, _)| w <= t);
                        *waits = later;
                        out.extend(reached.into_iter().map(|(_, c)| c));
                    }
                }
                Cover::AllUpTo(t) => {
                    // Every wait before `t` joins work issued before it: covered already.
                    for waits in self.joins.values_mut() {
                        waits.retain(|&(w, _)| w > t);
                    }
                }
                Cover::DefaultStreams => {}
            }
            i += 1;
        }
        self.joins.retain(|_, w| !w.is_empty());
        out
    }

    /// The latest launch not yet completed that reaches into `[start, start + size)`.
    pub fn open_launch(&self, start: u64, size: u64) -> Option<u64> {
        self.open
            .iter()
            .filter(|r| r.start < start.saturating_add(size) && start < r.start + r.size)
            .map(|r| r.launch_seq)
            .max()
    }

    /// A device reset or a freed allocation: its reaches are gone.
    pub fn forget(&mut self, start: u64) {
        self.open.retain(|r| r.start != start);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn a_wait_graph_past_the_bound_completes_everything() {
        let mut r = Reaches::default();
        r.launch(0x99, 1, &[(0x1000, 64)]);
        for s in 0..(JOIN_EXPANSION_MAX as u64 + 10) {
            r.event_recorded(0xe000 + s, 0x100 + s);
            r.stream_waited(0x101 + s, 0xe000 + s);
        }
        let last = 0x101 + JOIN_EXPANSION_MAX as u64 + 9;
        assert_eq!(r.complete(r.stream_cover(last)).len(), 1);
        assert!(r.is_empty());
    }
}
