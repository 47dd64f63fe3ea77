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

use std::collections::{BTreeMap, HashMap};

use crate::pending::{is_default_stream, Cover};

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

/// The launches not yet completed and the program's events' record points.
#[derive(Debug, Default)]
pub struct Reaches {
    issued: u64,
    open: Vec<Reach>,
    /// Event handle -> (stream, last ticket issued when it was recorded).
    events: HashMap<u64, (u64, u64)>,
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
        self.events.insert(event, (stream, self.issued));
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
        let covers = |r: &Reach| match cover {
            Cover::AllUpTo(t) => r.ticket <= t,
            Cover::StreamUpTo(s, t) => r.stream == s && r.ticket <= t,
            Cover::DefaultStreams => is_default_stream(r.stream),
        };
        let (done, open): (Vec<Reach>, Vec<Reach>) = self.open.drain(..).partition(covers);
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
}
