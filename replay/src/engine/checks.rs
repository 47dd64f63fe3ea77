//! What a process's replay found: its counts, its failures, the first event that refused
//! the archive, and what each D2H check is judged against (earlier stability runs, a
//! declared comparison, the first launch `--kernel-filter` left out, the first refused
//! unmodelled call). Verdicts on single checks are `observe`'s.

use std::os::raw::c_int;

use hrr_archive::api::RetPolicy;
use hrr_archive::Event;
use hrr_contract::{Comparison, Counts, DeclaredMatch, Failure, UnstableCheck};

use super::error::{EvResult, EventError};
use crate::stability::Learner;

pub(super) struct Checks<'a> {
    /// The process replayed (each failure names it).
    pub(super) pid: u32,
    pub(super) counts: Counts,
    pub(super) failures: Vec<Failure>,
    /// The first event that showed the archive invalid or refused by a limit.
    pub(super) refused: Option<String>,
    /// Under `--stability-runs`: what earlier replays of this process found (`observe`).
    pub(super) learner: Option<&'a mut Learner>,
    /// Checks with bytes that differed between replays (judged in the last run).
    pub(super) unstable: Vec<UnstableCheck>,
    /// The declared comparison (`Options::comparison`), and the checks matched only by it.
    pub(super) comparison: Option<Comparison>,
    pub(super) declared: Vec<DeclaredMatch>,
    /// The first launch `--kernel-filter` left out: later checks are skipped.
    pub(super) filtered_since: Option<u64>,
    /// The sequence id of the first unmodelled call the replay refused for (replayed on
    /// under --continue-on-error): checks of later calls are marked.
    pub(super) after_unmodelled: Option<u64>,
    /// The first call that handed another process a handle to this one's memory or
    /// events (sequence id, API): a later mismatch names it as a possible cause.
    pub(super) shared: Option<(u64, &'static str)>,
}

impl<'a> Checks<'a> {
    pub(super) fn new(
        pid: u32,
        events: u64,
        learner: Option<&'a mut Learner>,
        comparison: Option<Comparison>,
        after_unmodelled: Option<u64>,
    ) -> Checks<'a> {
        Checks {
            pid,
            counts: Counts {
                events_total: events,
                ..Counts::default()
            },
            failures: Vec::new(),
            refused: None,
            learner,
            unstable: Vec::new(),
            comparison,
            declared: Vec::new(),
            filtered_since: None,
            after_unmodelled,
            shared: None,
        }
    }

    /// A call at `seq` handed another process a handle to this one's memory or events.
    pub(super) fn note_shared(&mut self, seq: u64, api: &'static str) {
        self.shared.get_or_insert((seq, api));
    }

    /// The clause naming the handles handed to other processes before check `seq`.
    pub(super) fn shared_cause(&self, seq: u64) -> Option<String> {
        self.shared
            .filter(|&(at, _)| at < seq)
            .map(|(at, api)| format!("this process handed another process a handle to its memory or events ({api} at event {at}): what that process wrote or recorded there is not replayed"))
    }

    /// Records event `ev`'s failure (`api` names it); the first that refuses the archive
    /// is kept as the reason.
    pub(super) fn fail(&mut self, ev: &Event, api: String, e: EventError) {
        if e.refuses_archive() && self.refused.is_none() {
            self.refused = Some(format!("pid {} seq {} {api}: {e}", self.pid, ev.header.seq));
        }
        self.failures.push(Failure::event(
            self.pid,
            ev.header.seq,
            api,
            e.kind(),
            e.to_string(),
        ));
    }

    /// A call's return code against capture's, as the row's policy says; a failure
    /// capture saw too is counted.
    pub(super) fn check_ret(&mut self, ev: &Event, policy: RetPolicy, got: c_int) -> EvResult {
        if policy == RetPolicy::Any {
            return Ok(());
        }
        let want = ev.header.ret;
        if got == want {
            if want != 0 {
                self.counts.failed_as_captured += 1;
            }
            return Ok(());
        }
        Err(EventError::ReturnCode { got, want })
    }

    /// A launch at `seq` that `--kernel-filter` left out.
    pub(super) fn filtered(&mut self, seq: u64) {
        self.counts.kernels_filtered += 1;
        self.filtered_since.get_or_insert(seq);
    }

    /// Marks the failures from `from` on that belong to calls after the first refused
    /// unmodelled call.
    pub(super) fn mark_after_unmodelled(&mut self, from: usize) {
        if let Some(first) = self.after_unmodelled {
            for f in &mut self.failures[from..] {
                f.after_unmodelled_call |= f.seq > first;
            }
        }
    }
}
