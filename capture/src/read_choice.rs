//! How a managed allocation's launch snapshot is read: through the host or by the copy
//! engine (`dma`), chosen per allocation by what each way has cost it so far (pure; the
//! table of costs is `pinned`'s).
//!
//! Neither way is the faster one everywhere (H200, `bench/RESULTS.md`, 2026-12-04): a
//! 256 MiB buffer a kernel had just written read by copy in 21 ms against 74 ms through
//! the host, whose read migrates every page to the host (and the next kernel migrates
//! them back); the same buffer just written by the host, pages still there, read through
//! the host in 30% less time than by copy. Where the pages are depends on the program,
//! so each allocation's first snapshot is read through the host, its second by copy, and
//! after that the cheaper way per byte so far, the other tried again every
//! [`REPROBE_EVERY`]th time so a change of pattern is followed. Both ways give the same
//! bytes: only the time differs.

/// Every this many snapshots of an allocation, the way that looked dearer is tried again.
pub const REPROBE_EVERY: u32 = 16;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Way {
    Host,
    Copy,
}

/// What each way cost one allocation: nanoseconds per byte, smoothed.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Costs {
    host: Option<f64>,
    copy: Option<f64>,
    snapshots: u32,
}

impl Costs {
    /// The way to read the next snapshot.
    pub fn choose(&self) -> Way {
        let (Some(host), Some(copy)) = (self.host, self.copy) else {
            return if self.host.is_none() {
                Way::Host
            } else {
                Way::Copy
            };
        };
        let cheaper = if copy < host { Way::Copy } else { Way::Host };
        if self.snapshots % REPROBE_EVERY == REPROBE_EVERY - 1 {
            match cheaper {
                Way::Copy => Way::Host,
                Way::Host => Way::Copy,
            }
        } else {
            cheaper
        }
    }

    /// A snapshot of `bytes` read `way` in `ns`.
    pub fn observe(&mut self, way: Way, ns: u64, bytes: u64) {
        let per_byte = ns as f64 / bytes.max(1) as f64;
        let slot = match way {
            Way::Host => &mut self.host,
            Way::Copy => &mut self.copy,
        };
        *slot = Some(match *slot {
            Some(old) => (old + per_byte) / 2.0,
            None => per_byte,
        });
        self.snapshots = self.snapshots.wrapping_add(1);
    }

    /// The copy path was not there (no driver, staging refused): through the host from
    /// now on, as if copying cost without bound.
    pub fn copy_unavailable(&mut self) {
        self.copy = Some(f64::INFINITY);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_first_then_copy_then_the_cheaper_with_a_reprobe() {
        let mut c = Costs::default();
        assert_eq!(c.choose(), Way::Host);
        c.observe(Way::Host, 300, 100);
        assert_eq!(c.choose(), Way::Copy);
        c.observe(Way::Copy, 100, 100);
        let mut ways = Vec::new();
        for _ in 0..2 * REPROBE_EVERY {
            let w = c.choose();
            ways.push(w);
            // Each way keeps its cost: copying stays cheaper.
            c.observe(w, if w == Way::Copy { 100 } else { 300 }, 100);
        }
        let hosts = ways.iter().filter(|w| **w == Way::Host).count();
        assert_eq!(hosts, 2, "one re-probe per {REPROBE_EVERY}: {ways:?}");
    }

    #[test]
    fn a_change_of_pattern_is_followed() {
        let mut c = Costs::default();
        c.observe(Way::Host, 100, 100);
        c.observe(Way::Copy, 300, 100);
        assert_eq!(c.choose(), Way::Host);
        // The pages moved to the device: the host read got dear.
        for _ in 0..REPROBE_EVERY * 2 {
            let w = c.choose();
            c.observe(w, if w == Way::Copy { 300 } else { 2000 }, 100);
        }
        assert_eq!(c.choose(), Way::Copy);
    }

    #[test]
    fn no_copy_path_means_the_host() {
        let mut c = Costs::default();
        c.observe(Way::Host, 1000, 1);
        c.copy_unavailable();
        for _ in 0..REPROBE_EVERY - 2 {
            assert_eq!(c.choose(), Way::Host);
            c.observe(Way::Host, 1000, 1);
        }
    }
}
