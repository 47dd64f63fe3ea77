//! Stability: which bytes of a D2H result the program itself does not reproduce, learned
//! by replaying an archive several times (`--stability-runs N`). A byte is unstable when
//! the replays disagree on it; every other byte is stable and must equal the captured
//! byte, as always: a regression (every replay agreeing on a wrong byte) is a mismatch,
//! never instability. The captured bytes are the reference, never a vote.
//!
//! `classify` (captured, replays) -> `Classified` is the pure core. `Learner` applies it
//! across runs without keeping every replay: it keeps the first replay's bytes of each
//! check and marks the offsets where a later replay differs from them; the last run
//! judges each check with `classify_marked`.

use std::collections::HashMap;

use hrr_contract::{ByteRange, UnstableVerdict, UNSTABLE_RANGES_LISTED};

/// The most replays `--stability-runs` takes.
pub const MAX_RUNS: i64 = 64;

use crate::compare::{hex, Mismatch};

/// Offsets where the replays disagreed, one bit per byte of a check.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Marks {
    bits: Vec<u64>,
}

impl Marks {
    fn new(len: usize) -> Marks {
        Marks {
            bits: vec![0; len.div_ceil(64)],
        }
    }
    fn set(&mut self, i: usize) {
        self.bits[i / 64] |= 1 << (i % 64);
    }
    fn get(&self, i: usize) -> bool {
        self.bits
            .get(i / 64)
            .is_some_and(|w| w & (1 << (i % 64)) != 0)
    }
    /// Marks every offset where `a` and `b` differ (over their common length).
    fn mark_differences(&mut self, a: &[u8], b: &[u8]) {
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            if x != y {
                self.set(i);
            }
        }
    }
    fn count(&self) -> u64 {
        self.bits.iter().map(|w| u64::from(w.count_ones())).sum()
    }
}

/// The unstable bytes of a check: how many, and where (the first
/// `UNSTABLE_RANGES_LISTED` ranges of consecutive offsets, and how many ranges in all).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Unstable {
    pub bytes: u64,
    pub ranges: Vec<ByteRange>,
    pub ranges_total: u64,
}

impl Unstable {
    fn of(marks: &Marks, len: usize) -> Unstable {
        let mut u = Unstable {
            bytes: marks.count(),
            ..Unstable::default()
        };
        let mut i = 0;
        while i < len {
            if !marks.get(i) {
                i += 1;
                continue;
            }
            let start = i;
            while i < len && marks.get(i) {
                i += 1;
            }
            u.ranges_total += 1;
            if u.ranges.len() < UNSTABLE_RANGES_LISTED {
                u.ranges.push(ByteRange {
                    start: start as u64,
                    len: (i - start) as u64,
                });
            }
        }
        u
    }

    /// "N bytes at 0..3, 8 (and K more ranges)".
    pub fn describe(&self) -> String {
        let listed: Vec<String> = self.ranges.iter().map(|r| r.to_string()).collect();
        let more = self.ranges_total.saturating_sub(self.ranges.len() as u64);
        format!(
            "{} byte(s) at {}{}",
            self.bytes,
            listed.join(", "),
            if more > 0 {
                format!(" (and {more} more range(s))")
            } else {
                String::new()
            }
        )
    }
}

/// The verdict on one D2H check replayed one or more times.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Classified {
    /// Every byte the same in every replay and equal to the captured byte.
    Pass,
    /// Some bytes differed between replays (excluded); every other byte equals the
    /// captured one. Not a pass.
    StableMatch(Unstable),
    /// No byte was the same in every replay: nothing verified. Not a pass.
    AllUnstable(Unstable),
    /// A stable byte differs from the captured one (or the lengths differ): a failure,
    /// whatever else was unstable. `mismatch.differing` counts stable bytes only.
    Mismatch {
        mismatch: Mismatch,
        unstable: Unstable,
    },
    /// Not byte-exact, but matched by the comparison the case declared (a float
    /// tolerance, or the same elements in other positions): passed as such, never as
    /// byte-exact.
    Declared(crate::declared::DeclaredOutcome),
}

impl Classified {
    /// The unstable bytes this verdict excluded, with the contract's verdict for them;
    /// None for a check with none.
    pub fn unstable(&self) -> Option<(&Unstable, UnstableVerdict)> {
        match self {
            Classified::Pass => None,
            Classified::StableMatch(u) => Some((u, UnstableVerdict::StableBytesMatch)),
            Classified::AllUnstable(u) => Some((u, UnstableVerdict::AllUnstable)),
            Classified::Mismatch { unstable, .. } if unstable.bytes > 0 => {
                Some((unstable, UnstableVerdict::StableBytesDiffer))
            }
            Classified::Mismatch { .. } | Classified::Declared(_) => None,
        }
    }
}

/// Classifies a check from the captured bytes and every replay's bytes (at least one).
pub fn classify(captured: &[u8], replays: &[&[u8]]) -> Classified {
    let Some((first, rest)) = replays.split_first() else {
        return Classified::AllUnstable(Unstable::default());
    };
    let mut marks = Marks::new(first.len());
    for r in rest {
        marks.mark_differences(first, r);
    }
    let lengths_agree = rest.iter().all(|r| r.len() == first.len());
    classify_marked(captured, first, &marks, lengths_agree)
}

/// Classifies a check from the captured bytes, one replay's bytes, and the offsets where
/// the replays disagreed (`lengths_agree`: every replay had this replay's length).
pub fn classify_marked(
    captured: &[u8],
    replay: &[u8],
    marks: &Marks,
    lengths_agree: bool,
) -> Classified {
    let n = captured.len().min(replay.len());
    let unstable = Unstable::of(marks, n);
    // A length difference is never instability: those bytes count as differing.
    let extra = captured.len().abs_diff(replay.len()) as u64 + if lengths_agree { 0 } else { 1 };
    let mut differing = 0u64;
    let mut first = None;
    for i in (0..n).filter(|&i| captured[i] != replay[i] && !marks.get(i)) {
        differing += 1;
        first.get_or_insert(i);
    }
    if differing > 0 || extra > 0 {
        let first = first.unwrap_or(n);
        let end = |v: &[u8]| hex(&v[first.min(v.len())..(first + 16).min(v.len())]);
        return Classified::Mismatch {
            mismatch: Mismatch {
                differing: differing + extra,
                first: first as u64,
                expected_hex: end(captured),
                found_hex: end(replay),
                cause: None,
            },
            unstable,
        };
    }
    match unstable.bytes {
        0 => Classified::Pass,
        u if u == n as u64 => Classified::AllUnstable(unstable),
        _ => Classified::StableMatch(unstable),
    }
}

/// Why a stability run cannot keep what it learned.
#[derive(Debug, thiserror::Error)]
#[error("stability runs: keeping {needed} bytes of replayed D2H results exceeds max_host_bytes ({limit})")]
pub struct LearnError {
    pub needed: u64,
    pub limit: u64,
}

/// What the runs so far found for one check: the first replay's bytes and the offsets
/// where a later replay differed from them.
struct Learned {
    first: Vec<u8>,
    marks: Marks,
    lengths_agree: bool,
}

/// What several replays of one process learned, check by check. A check is keyed by
/// (sequence id, node): a graph launch checks several nodes at one sequence id.
pub struct Learner {
    runs: u32,
    run: u32,
    checks: HashMap<(u64, u64), Learned>,
    kept: u64,
    limit: u64,
}

impl Learner {
    /// A learner for `runs` replays (at least 2) keeping at most `limit` bytes.
    pub fn new(runs: u32, limit: u64) -> Learner {
        Learner {
            runs,
            run: 1,
            checks: HashMap::new(),
            kept: 0,
            limit,
        }
    }

    pub fn runs(&self) -> u32 {
        self.runs
    }

    /// The next run begins.
    pub fn next_run(&mut self) {
        self.run += 1;
    }

    /// Whether this run is the last one, whose checks are judged.
    pub fn judging(&self) -> bool {
        self.run >= self.runs
    }

    /// A learning run's bytes of check `key`.
    pub fn observe(&mut self, key: (u64, u64), found: &[u8]) -> Result<(), LearnError> {
        if let Some(l) = self.checks.get_mut(&key) {
            l.marks.mark_differences(&l.first, found);
            l.lengths_agree &= l.first.len() == found.len();
            return Ok(());
        }
        let needed = self.kept + found.len() as u64;
        if needed > self.limit {
            return Err(LearnError {
                needed,
                limit: self.limit,
            });
        }
        self.kept = needed;
        self.checks.insert(
            key,
            Learned {
                first: found.to_vec(),
                marks: Marks::new(found.len()),
                lengths_agree: true,
            },
        );
        Ok(())
    }

    /// The last run's verdict on check `key`, from everything learned (a check the
    /// learning runs never reached is judged on this replay alone).
    pub fn judge(&mut self, key: (u64, u64), captured: &[u8], found: &[u8]) -> Classified {
        match self.checks.remove(&key) {
            Some(mut l) => {
                l.marks.mark_differences(&l.first, found);
                let agree = l.lengths_agree && l.first.len() == found.len();
                classify_marked(captured, found, &l.marks, agree)
            }
            None => classify(captured, &[found]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unstable(v: &Classified) -> &Unstable {
        v.unstable().expect("unstable bytes").0
    }

    #[test]
    fn identical_replays_equal_to_the_capture_pass() {
        let c = [1, 2, 3, 4];
        assert_eq!(classify(&c, &[&c, &c, &c]), Classified::Pass);
        assert_eq!(classify(&c, &[&c]), Classified::Pass);
        assert_eq!(classify(&[], &[&[], &[]]), Classified::Pass);
    }

    #[test]
    fn bytes_that_differ_between_replays_are_unstable_and_the_rest_compared() {
        // A float's low bytes vary; the high ones and an integer beside it do not.
        let c = [0x11, 0x22, 0x80, 0x44, 7, 0, 0, 0];
        let a = [0x13, 0x21, 0x80, 0x44, 7, 0, 0, 0];
        let b = [0x11, 0x25, 0x80, 0x44, 7, 0, 0, 0];
        let v = classify(&c, &[&a, &b, &c]);
        let Classified::StableMatch(u) = &v else {
            panic!("{v:?}")
        };
        assert_eq!(u.bytes, 2);
        assert_eq!(u.ranges, vec![ByteRange { start: 0, len: 2 }]);
        assert_eq!(u.ranges_total, 1);
        assert_eq!(u.describe(), "2 byte(s) at 0..2");
        assert_eq!(v.unstable().unwrap().1, UnstableVerdict::StableBytesMatch);
    }

    #[test]
    fn a_byte_one_replay_reproduces_and_another_does_not_is_unstable() {
        let c = [5, 5];
        let v = classify(&c, &[&[5, 5], &[5, 6]]);
        assert_eq!(unstable(&v).ranges, vec![ByteRange { start: 1, len: 1 }]);
        assert!(matches!(v, Classified::StableMatch(_)));
    }

    /// The regression instability must never mask: every replay agrees on a byte the
    /// capture does not hold. It is a mismatch naming that byte, not instability.
    #[test]
    fn replays_agreeing_on_a_wrong_byte_fail_even_beside_unstable_bytes() {
        let c = [1, 2, 3, 4, 5, 6];
        let v = classify(&c, &[&[1, 2, 9, 4, 5, 6], &[1, 2, 9, 4, 5, 6]]);
        let Classified::Mismatch { mismatch, unstable } = &v else {
            panic!("{v:?}")
        };
        assert_eq!((mismatch.differing, mismatch.first), (1, 2));
        assert_eq!(mismatch.expected_hex, "03040506");
        assert_eq!(mismatch.found_hex, "09040506");
        assert_eq!(unstable.bytes, 0);
        assert!(v.unstable().is_none());
        // With unstable bytes beside it: still a mismatch, counting stable bytes only.
        let v = classify(&c, &[&[7, 2, 9, 4, 5, 6], &[8, 2, 9, 4, 5, 6]]);
        let Classified::Mismatch { mismatch, unstable } = &v else {
            panic!("{v:?}")
        };
        assert_eq!((mismatch.differing, mismatch.first), (1, 2));
        assert_eq!(unstable.bytes, 1);
        assert_eq!(v.unstable().unwrap().1, UnstableVerdict::StableBytesDiffer);
    }

    #[test]
    fn a_check_with_no_stable_byte_is_all_unstable_never_a_pass() {
        let v = classify(&[1, 2], &[&[3, 4], &[5, 6]]);
        assert_eq!(unstable(&v).bytes, 2);
        assert!(matches!(v, Classified::AllUnstable(_)));
        assert_eq!(v.unstable().unwrap().1, UnstableVerdict::AllUnstable);
        // Unstable bytes that happen to equal the capture in one replay change nothing.
        let v = classify(&[1, 2], &[&[1, 2], &[5, 6]]);
        assert!(matches!(v, Classified::AllUnstable(_)), "{v:?}");
    }

    #[test]
    fn one_replay_is_the_plain_comparison() {
        let v = classify(&[1, 2, 3], &[&[1, 0, 3]]);
        let Classified::Mismatch { mismatch, .. } = v else {
            panic!()
        };
        assert_eq!((mismatch.differing, mismatch.first), (1, 1));
    }

    #[test]
    fn a_length_difference_is_never_instability() {
        let v = classify(&[1, 2, 3], &[&[1, 2], &[1, 2]]);
        let Classified::Mismatch { mismatch, .. } = v else {
            panic!()
        };
        assert_eq!((mismatch.differing, mismatch.first), (1, 2));
        // Replays of different lengths: a failure too.
        let v = classify(&[1, 2], &[&[1, 2], &[1, 2, 3]]);
        assert!(matches!(v, Classified::Mismatch { .. }), "{v:?}");
    }

    #[test]
    fn ranges_are_bounded_and_counted() {
        let n = 200;
        let c = vec![0u8; n];
        // Every other byte varies: 100 ranges of one byte.
        let b: Vec<u8> = (0..n).map(|i| (i % 2) as u8).collect();
        let v = classify(&c, &[&c, &b]);
        let u = unstable(&v);
        assert_eq!(u.bytes, 100);
        assert_eq!(u.ranges.len(), UNSTABLE_RANGES_LISTED);
        assert_eq!(u.ranges_total, 100);
        assert_eq!(u.ranges[1], ByteRange { start: 3, len: 1 });
        assert!(
            u.describe().ends_with("(and 84 more range(s))"),
            "{}",
            u.describe()
        );
    }

    #[test]
    fn the_learner_judges_the_last_run_with_what_earlier_runs_showed() {
        let c = [1, 2, 3, 4];
        let mut l = Learner::new(3, 1 << 20);
        assert!(!l.judging());
        l.observe((10, 0), &[1, 2, 3, 4]).unwrap();
        l.observe((11, 0), &[1, 2, 3, 4]).unwrap();
        l.next_run();
        l.observe((10, 0), &[9, 2, 3, 4]).unwrap();
        l.observe((11, 0), &[1, 2, 3, 4]).unwrap();
        l.next_run();
        assert!(l.judging());
        // Byte 0 varied in the learning runs; the last run reproduces the capture.
        let v = l.judge((10, 0), &c, &c);
        assert_eq!(unstable(&v).ranges, vec![ByteRange { start: 0, len: 1 }]);
        // The last run alone differs: byte 2 is unstable, as any other replay's would be.
        let v = l.judge((11, 0), &c, &[1, 2, 7, 4]);
        assert_eq!(unstable(&v).ranges, vec![ByteRange { start: 2, len: 1 }]);
        // A check only the last run reached: the plain comparison.
        assert_eq!(l.judge((12, 0), &c, &c), Classified::Pass);
        assert!(matches!(
            l.judge((13, 0), &c, &[0, 2, 3, 4]),
            Classified::Mismatch { .. }
        ));
    }

    /// What `matrix/controls/instability_ignored.patch` breaks: a byte every run gets
    /// wrong alike is a regression, never instability, however many runs there were.
    #[test]
    fn the_learner_never_calls_a_byte_every_run_gets_wrong_unstable() {
        let c = [1, 2, 3, 4];
        let mut l = Learner::new(3, 1 << 20);
        l.observe((10, 0), &[1, 2, 9, 4]).unwrap();
        l.next_run();
        l.observe((10, 0), &[1, 2, 9, 4]).unwrap();
        l.next_run();
        let v = l.judge((10, 0), &c, &[1, 2, 9, 4]);
        let Classified::Mismatch { mismatch, unstable } = &v else {
            panic!("{v:?}")
        };
        assert_eq!((mismatch.differing, mismatch.first), (1, 2));
        assert_eq!(unstable.bytes, 0);
    }

    #[test]
    fn the_learner_keeps_no_more_than_its_limit() {
        let mut l = Learner::new(2, 6);
        l.observe((1, 0), &[0; 4]).unwrap();
        let e = l.observe((2, 0), &[0; 4]).unwrap_err();
        assert_eq!((e.needed, e.limit), (8, 6));
        // A check it already keeps costs nothing more.
        l.observe((1, 0), &[0; 4]).unwrap();
    }
}
