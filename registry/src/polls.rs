//! Polls: the query rows a program calls until its work is done (`cudaEventQuery`,
//! `cudaStreamQuery`, the driver's and HIP's per-thread forms), each with the
//! synchronisation row that reaches what a successful query observed. Replay makes that
//! synchronisation where capture's query succeeded, and skips a query that found the work
//! still running (it changed nothing), so a polling loop costs replay neither a race nor
//! thousands of calls. Capture records the first poll of a run that found the work
//! running and counts the rest ([`PollRun`]); the next recorded poll of that handle
//! carries the count (`POLLS_SKIPPED_FIELD`).

use super::id;

/// `cudaErrorNotReady`, `hipErrorNotReady` and `CUDA_ERROR_NOT_READY`: the same number.
pub const NOT_READY: i32 = 600;

/// The synchronisation row whose success is what a successful `row` observed (same
/// handle, at argument 0), if `row` is a poll.
pub fn completion_of(row: u16) -> Option<u16> {
    Some(match row {
        id::StreamQuery => id::StreamSynchronize,
        id::EventQuery => id::EventSynchronize,
        id::CuStreamQuery => id::CuStreamSynchronize,
        id::CuEventQuery => id::CuEventSynchronize,
        id::StreamQuerySpt => id::StreamSynchronizeSpt,
        _ => return None,
    })
}

/// What capture does with one poll of a thread's run ([`PollRun::observe`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Poll {
    /// Record it, carrying the number of polls counted and not recorded before it.
    Record { skipped: u64 },
    /// Count it: a repeat of the run's not-ready poll, which changed nothing.
    Skip,
}

/// One thread's run of polls (pure): the poll row and handle of the last not-ready poll
/// recorded, and the not-ready polls of that handle counted since.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PollRun {
    run: Option<(u16, u64, u64)>,
}

impl PollRun {
    /// The decision for a poll of `row` on `handle` that returned `ret`.
    pub fn observe(&mut self, row: u16, handle: u64, ret: i32) -> Poll {
        let same = matches!(self.run, Some((r, h, _)) if r == row && h == handle);
        match (ret == NOT_READY, same) {
            (true, true) => {
                if let Some((_, _, n)) = &mut self.run {
                    *n += 1;
                }
                Poll::Skip
            }
            (true, false) => {
                let skipped = self.take_for(row, handle);
                self.run = Some((row, handle, 0));
                Poll::Record { skipped }
            }
            (false, _) => Poll::Record {
                skipped: self.take_for(row, handle),
            },
        }
    }

    /// The count of the run on (`row`, `handle`), ending it; 0 for another run, which
    /// goes on.
    fn take_for(&mut self, row: u16, handle: u64) -> u64 {
        match self.run {
            Some((r, h, n)) if r == row && h == handle => {
                self.run = None;
                n
            }
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{desc, ParamKind};

    #[test]
    fn each_poll_completes_through_a_row_of_the_same_handle() {
        let mut polls = 0;
        for d in crate::API_TABLE {
            let Some(sync) = completion_of(d.id) else {
                continue;
            };
            polls += 1;
            let s = desc(sync).unwrap();
            // The query's result is not compared as an error; the two take one handle of
            // the same kind, and exist for the same vendors.
            assert_eq!(d.ret, crate::RetPolicy::Any, "{}", d.name);
            assert_eq!(d.params.len(), 1, "{}", d.name);
            assert_eq!(s.params.len(), 1, "{}", s.name);
            assert_eq!(d.params[0].kind, s.params[0].kind, "{}", d.name);
            assert!(matches!(
                d.params[0].kind,
                ParamKind::Stream | ParamKind::Event
            ));
            assert_eq!(
                (d.cuda.is_some(), d.hip.is_some()),
                (s.cuda.is_some(), s.hip.is_some())
            );
        }
        assert_eq!(polls, 5);
        assert_eq!(completion_of(id::StreamSynchronize), None);
    }

    #[test]
    fn a_run_of_not_ready_polls_is_one_record_and_a_count() {
        let mut run = PollRun::default();
        let q = id::EventQuery;
        assert_eq!(run.observe(q, 0xe1, NOT_READY), Poll::Record { skipped: 0 });
        for _ in 0..1400 {
            assert_eq!(run.observe(q, 0xe1, NOT_READY), Poll::Skip);
        }
        // Another handle's poll is recorded and leaves the run alone.
        assert_eq!(run.observe(q, 0xe2, 0), Poll::Record { skipped: 0 });
        assert_eq!(run.observe(q, 0xe1, 0), Poll::Record { skipped: 1400 });
        // The run ended: the next not-ready poll starts a new one.
        assert_eq!(run.observe(q, 0xe1, NOT_READY), Poll::Record { skipped: 0 });
        // A not-ready poll of another row or handle starts its own run; the count of the
        // one it replaces is carried by that handle's next recorded poll only.
        assert_eq!(
            run.observe(id::StreamQuery, 0x5, NOT_READY),
            Poll::Record { skipped: 0 }
        );
        assert_eq!(run.observe(id::StreamQuery, 0x5, NOT_READY), Poll::Skip);
        assert_eq!(
            run.observe(id::StreamQuery, 0x5, 1),
            Poll::Record { skipped: 1 }
        );
    }
}
