//! A D2H check's verdict and what it adds to the result. Replayed once, the bytes are
//! compared with the captured ones (`compare`). Under `--stability-runs` a learning run
//! only records what it found, and the last run judges each check with what the runs
//! learned (`crate::stability`): unstable bytes are counted and listed apart, never as a
//! pass; a stable byte that differs from the capture fails as always.

use hrr_archive::fill::Fill;
use hrr_contract::{Comparison, DeclaredMatch, UnstableCheck};

use super::checks::Checks;
use super::error::EventError;
use crate::compare::{compare_want, mismatch_failure, Want};
use crate::declared;
use crate::stability::{Classified, Learner};

/// The verdict on check `key` (sequence id, graph node or 0): None in a learning run.
fn judge(
    learner: Option<&mut Learner>,
    declared: Option<&Comparison>,
    key: (u64, u64),
    expected: Want<'_>,
    found: &[u8],
) -> Result<Option<Classified>, EventError> {
    let _t = crate::profile::span(crate::profile::Part::Compare);
    match learner {
        None => Ok(Some(match compare_want(expected, found) {
            None => Classified::Pass,
            Some(mismatch) => by_declared(
                declared,
                &expected.bytes(),
                found,
                Classified::Mismatch {
                    mismatch,
                    unstable: Default::default(),
                },
            ),
        })),
        Some(l) if l.judging() => {
            let want = expected.bytes();
            let v = l.judge(key, &want, found);
            Ok(Some(by_declared(declared, &want, found, v)))
        }
        Some(l) => l
            .observe(key, found)
            .map(|()| None)
            .map_err(|e| EventError::TooLarge {
                what: format!(
                    "stability runs: keeping {} bytes of replayed D2H results",
                    e.needed
                ),
                limit: Some(e.limit),
            }),
    }
}

/// A mismatch that the declared comparison accepts becomes `Declared`; one it does not
/// (or with none declared) gets the cause replay can name (`declared::name_cause`).
/// Every other verdict is kept.
fn by_declared(
    declared: Option<&Comparison>,
    expected: &[u8],
    found: &[u8],
    v: Classified,
) -> Classified {
    match v {
        Classified::Mismatch {
            mut mismatch,
            unstable,
        } => {
            if let Some(o) = declared.and_then(|c| declared::matches(c, expected, found)) {
                return Classified::Declared(o);
            }
            mismatch.cause = declared::name_cause(expected, found);
            Classified::Mismatch { mismatch, unstable }
        }
        v => v,
    }
}

/// `judge` for a result whose buffer is reused after it: a fill that matches is left
/// complemented (`Fill::matches_then_complement`), and that complement is returned, for
/// the next copy into the buffer to need no poisoning of its own (`poison_for_fill`).
/// Stability runs keep the result as it is.
fn judge_reused(
    learner: Option<&mut Learner>,
    declared: Option<&Comparison>,
    key: (u64, u64),
    expected: Want<'_>,
    found: &mut [u8],
) -> Result<(Option<Classified>, Option<Fill>), EventError> {
    if let (None, Want::Fill(f)) = (&learner, expected) {
        let matched = {
            let _t = crate::profile::span(crate::profile::Part::Compare);
            f.matches_then_complement(found)
        };
        if matched {
            return Ok((Some(Classified::Pass), Some(f.complement())));
        }
    }
    judge(learner, declared, key, expected, found).map(|v| (v, None))
}

impl Checks<'_> {
    /// `judge` with this replay's learner and declared comparison.
    pub(super) fn judge(
        &mut self,
        key: (u64, u64),
        expected: Want<'_>,
        found: &[u8],
    ) -> Result<Option<Classified>, EventError> {
        judge(
            self.learner.as_deref_mut(),
            self.comparison.as_ref(),
            key,
            expected,
            found,
        )
    }

    /// `judge_reused` with this replay's learner and declared comparison.
    pub(super) fn judge_reused(
        &mut self,
        key: (u64, u64),
        expected: Want<'_>,
        found: &mut [u8],
    ) -> Result<(Option<Classified>, Option<Fill>), EventError> {
        judge_reused(
            self.learner.as_deref_mut(),
            self.comparison.as_ref(),
            key,
            expected,
            found,
        )
    }

    /// `by_declared` with this replay's declared comparison.
    pub(super) fn by_declared(&self, expected: &[u8], found: &[u8], v: Classified) -> Classified {
        by_declared(self.comparison.as_ref(), expected, found, v)
    }

    /// Counts a judged check (nothing for a learning run's None) and records its
    /// failure or its unstable bytes.
    pub(super) fn record(
        &mut self,
        seq: u64,
        api: String,
        expected_len: usize,
        verdict: Option<Classified>,
    ) {
        let Some(v) = verdict else { return };
        // After a launch --kernel-filter left out, a result may depend on it: skipped.
        if self.filtered_since.is_some_and(|first| seq > first) {
            self.counts.d2h_skipped += 1;
            self.counts.d2h_after_filtered += 1;
            return;
        }
        if self.after_unmodelled.is_some_and(|first| seq > first)
            && matches!(
                v,
                Classified::Pass | Classified::Mismatch { .. } | Classified::Declared(_)
            )
        {
            self.counts.checks_after_unmodelled += 1;
        }
        let runs = self.learner.as_ref().map_or(1, |l| l.runs());
        if let Some((u, verdict)) = v.unstable() {
            self.counts.unstable_bytes += u.bytes;
            self.unstable.push(UnstableCheck {
                pid: self.pid,
                seq,
                api: api.clone(),
                bytes: expected_len as u64,
                unstable_bytes: u.bytes,
                ranges: u.ranges.clone(),
                ranges_total: u.ranges_total,
                verdict,
            });
        }
        match v {
            Classified::Pass => self.counts.d2h_pass += 1,
            Classified::Declared(o) => {
                self.counts.d2h_declared_match += 1;
                self.declared.push(DeclaredMatch {
                    pid: self.pid,
                    seq,
                    api,
                    bytes: expected_len as u64,
                    elements_differing: o.elements_differing,
                    max_ulps: o.max_ulps,
                });
            }
            Classified::StableMatch(_) => self.counts.d2h_unstable += 1,
            Classified::AllUnstable(_) => self.counts.d2h_all_unstable += 1,
            Classified::Mismatch {
                mut mismatch,
                unstable,
            } => {
                self.counts.d2h_fail += 1;
                if mismatch.cause.is_none() {
                    mismatch.cause = self.shared_cause(seq);
                }
                let mut f = mismatch_failure(self.pid, seq, api, expected_len, mismatch);
                if unstable.bytes > 0 {
                    f.message += &format!(
                        " (stable bytes only: {} differed between {runs} replays and were excluded)",
                        unstable.describe()
                    );
                }
                self.failures.push(f);
            }
        }
    }
}
