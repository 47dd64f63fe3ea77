//! Step 3 of a control, and the verdict over all of them, with no I/O: what the remove,
//! build and run steps found (`Attempt`) becomes one outcome with a one-line reason, and
//! a finished run's outcomes become the exit code. Like cargo-mutants' `summary()`.

use std::path::PathBuf;

use hrr_reports::{CaseResult, Status};

use super::build::BuildStop;
use super::outcome::{GuardResult, Outcome, Outcomes};
use super::remove::RemoveError;
use super::spec::ControlSpec;
use crate::exit::{Exit, CONTROL_PRECEDENCE};

/// The guard and keep-passing results of a control whose tools were built.
#[derive(Clone, Debug, Default)]
pub struct GuardRuns {
    /// The guard cases, in the order they finished.
    pub guards: Vec<GuardResult>,
    /// keep_passing cases that did not pass.
    pub collateral: Vec<GuardResult>,
    /// The run was interrupted while (or before) the cases ran.
    pub interrupted: bool,
}

impl GuardRuns {
    /// Sorts the case results of `spec`'s run into guards and collateral.
    pub fn of(spec: &ControlSpec, runs: &[CaseResult], interrupted: bool) -> GuardRuns {
        GuardRuns {
            guards: runs
                .iter()
                .filter(|r| spec.guards.contains(&r.case))
                .map(GuardResult::from)
                .collect(),
            collateral: runs
                .iter()
                .filter(|r| spec.keep_passing.contains(&r.case) && r.status != Status::Pass)
                .map(GuardResult::from)
                .collect(),
            interrupted,
        }
    }
}

/// How far one control got, and what stopped it.
#[derive(Debug)]
pub enum Attempt {
    /// Step 1: the fix is still in.
    NotRemoved(RemoveError),
    /// Step 2: no tools (or no case binaries) to run.
    NotBuilt(BuildStop),
    /// `--build-only`: the tools were built, and copied to `dir` (or not).
    BuiltOnly {
        dir: PathBuf,
        copied: Result<(), std::io::Error>,
    },
    /// The guard cases ran.
    Ran(GuardRuns),
}

/// A control's outcome and its one-line reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    pub outcome: Outcome,
    pub summary: String,
}

pub(super) fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

fn names<'a>(gs: impl IntoIterator<Item = &'a GuardResult>) -> String {
    gs.into_iter()
        .map(|g| g.case.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether a guard's status means it noticed nothing: it passed (or was skipped, so it
/// cannot have failed).
fn still_passes(s: Status) -> bool {
    matches!(s, Status::Pass | Status::Flake | Status::Skip)
}

/// The outcome of one control. A guard that still passes makes it missed whatever the
/// others did; else a guard that timed out makes it a timeout; else it is caught.
pub fn classify(a: &Attempt) -> Verdict {
    let v = |outcome, summary: String| Verdict { outcome, summary };
    match a {
        Attempt::NotRemoved(RemoveError::Worktree(e)) => v(Outcome::Error, e.to_string()),
        Attempt::NotRemoved(RemoveError::NotApplied { error, log }) => v(
            Outcome::Unviable,
            format!(
                "the fix could not be removed: {error} (log: {})",
                log.display()
            ),
        ),
        Attempt::NotBuilt(BuildStop::MissingPrebuilt { dir }) => v(
            Outcome::Error,
            format!(
                "--prebuilt: {} has no hrr-replay (make it with --build-only)",
                dir.display()
            ),
        ),
        Attempt::NotBuilt(BuildStop::Interrupted) => v(Outcome::Error, "interrupted".into()),
        Attempt::NotBuilt(BuildStop::Tree(e)) => v(
            Outcome::Unviable,
            format!(
                "the tree does not build without the fix: {}",
                first_line(&e.to_string())
            ),
        ),
        Attempt::NotBuilt(BuildStop::Case { case, message }) => v(
            Outcome::Unviable,
            format!("case {case} does not build without the fix: {message}"),
        ),
        Attempt::BuiltOnly {
            dir,
            copied: Ok(()),
        } => v(
            Outcome::Built,
            format!(
                "built without the fix (--build-only): tools in {}; no case ran (run them with --prebuilt)",
                dir.display()
            ),
        ),
        Attempt::BuiltOnly {
            dir,
            copied: Err(e),
        } => v(
            Outcome::Error,
            format!("--build-only {}: {e}", dir.display()),
        ),
        Attempt::Ran(r) => classify_runs(r),
    }
}

fn classify_runs(r: &GuardRuns) -> Verdict {
    if r.interrupted {
        return Verdict {
            outcome: Outcome::Error,
            summary: "interrupted".into(),
        };
    }
    let collateral = if r.collateral.is_empty() {
        String::new()
    } else {
        format!(
            "; and {} case(s) that must keep passing failed: {}",
            r.collateral.len(),
            names(&r.collateral)
        )
    };
    let passed: Vec<&GuardResult> = r.guards.iter().filter(|g| still_passes(g.status)).collect();
    let timed_out: Vec<&GuardResult> = r
        .guards
        .iter()
        .filter(|g| g.status == Status::Timeout)
        .collect();
    if !passed.is_empty() {
        Verdict {
            outcome: Outcome::Missed,
            summary: format!(
                "still passed without the fix: {} (the fix is untested by them){collateral}",
                names(passed)
            ),
        }
    } else if !timed_out.is_empty() {
        Verdict {
            outcome: Outcome::Timeout,
            summary: format!(
                "timed out without the fix: {}{collateral}",
                names(timed_out)
            ),
        }
    } else {
        Verdict {
            outcome: Outcome::Caught,
            summary: format!(
                "every guard failed: {}{collateral}",
                r.guards
                    .iter()
                    .map(|g| format!("{} ({})", g.case, first_line(&g.message)))
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
        }
    }
}

/// How many controls ended with each outcome.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub caught: usize,
    pub missed: usize,
    pub unviable: usize,
    pub timeout: usize,
    pub error: usize,
    pub built: usize,
}

impl Tally {
    pub fn of(o: &Outcomes) -> Tally {
        let mut t = Tally::default();
        for c in &o.controls {
            *match c.outcome {
                Outcome::Caught => &mut t.caught,
                Outcome::Missed => &mut t.missed,
                Outcome::Unviable => &mut t.unviable,
                Outcome::Timeout => &mut t.timeout,
                Outcome::Error => &mut t.error,
                Outcome::Built => &mut t.built,
            } += 1;
        }
        t
    }
}

/// The exit code one control's outcome asks for.
fn exit_of(o: Outcome) -> Exit {
    match o {
        Outcome::Caught | Outcome::Built => Exit::Ok,
        Outcome::Missed => Exit::Missed,
        Outcome::Timeout => Exit::Timeout,
        Outcome::Unviable | Outcome::Error => Exit::Unviable,
    }
}

/// The exit code of a finished run: a failed baseline first, then the first of
/// `CONTROL_PRECEDENCE` that some control asks for, else `Ok`.
pub fn exit_code(o: &Outcomes) -> Exit {
    if !o.baseline_passed {
        return Exit::BaselineFailed;
    }
    let asked: Vec<Exit> = o.controls.iter().map(|c| exit_of(c.outcome)).collect();
    CONTROL_PRECEDENCE
        .into_iter()
        .find(|e| asked.contains(e))
        .unwrap_or(Exit::Ok)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::control::outcome::ControlResult;
    use crate::control::remove::{GitError, WorktreeError};
    use crate::control::spec::Removal;
    use crate::error::HarnessError;

    fn g(case: &str, status: Status, message: &str) -> GuardResult {
        GuardResult {
            case: case.into(),
            status,
            message: message.into(),
        }
    }

    fn ran(guards: Vec<GuardResult>, collateral: Vec<GuardResult>) -> Attempt {
        Attempt::Ran(GuardRuns {
            guards,
            collateral,
            interrupted: false,
        })
    }

    fn outcome(a: &Attempt) -> Outcome {
        classify(a).outcome
    }

    #[test]
    fn every_guard_failing_is_caught_with_each_reason() {
        let v = classify(&ran(
            vec![
                g("a", Status::Fail, "replay: D2H #3 differs\nmore"),
                g("b", Status::Crash, "signal 11"),
            ],
            vec![],
        ));
        assert_eq!(v.outcome, Outcome::Caught);
        assert_eq!(
            v.summary,
            "every guard failed: a (replay: D2H #3 differs); b (signal 11)"
        );
    }

    #[test]
    fn one_passing_guard_makes_it_missed_whatever_the_others_did() {
        for other in [Status::Fail, Status::Timeout, Status::Crash] {
            let v = classify(&ran(
                vec![g("a", other, "x"), g("b", Status::Pass, "")],
                vec![],
            ));
            assert_eq!(v.outcome, Outcome::Missed, "{other:?}");
            assert_eq!(
                v.summary,
                "still passed without the fix: b (the fix is untested by them)"
            );
        }
        // A flake passed once and a skipped case cannot have failed: neither noticed.
        for s in [Status::Flake, Status::Skip] {
            assert_eq!(
                outcome(&ran(vec![g("a", s, "")], vec![])),
                Outcome::Missed,
                "{s:?}"
            );
        }
    }

    #[test]
    fn a_timeout_without_a_passing_guard_is_a_timeout() {
        let v = classify(&ran(
            vec![g("a", Status::Fail, "x"), g("b", Status::Timeout, "limit")],
            vec![],
        ));
        assert_eq!(v.outcome, Outcome::Timeout);
        assert_eq!(v.summary, "timed out without the fix: b");
    }

    #[test]
    fn keep_passing_failures_are_reported_but_do_not_change_the_outcome() {
        let collateral = vec![g("k1", Status::Fail, ""), g("k2", Status::Crash, "")];
        let v = classify(&ran(vec![g("a", Status::Fail, "bad")], collateral.clone()));
        assert_eq!(v.outcome, Outcome::Caught);
        assert_eq!(
            v.summary,
            "every guard failed: a (bad); and 2 case(s) that must keep passing failed: k1, k2"
        );
        let v = classify(&ran(vec![g("a", Status::Pass, "")], collateral));
        assert_eq!(v.outcome, Outcome::Missed);
        assert!(
            v.summary.ends_with("must keep passing failed: k1, k2"),
            "{}",
            v.summary
        );
    }

    #[test]
    fn guard_runs_split_guards_from_failing_keep_passing_cases() {
        let spec = ControlSpec {
            name: "c".into(),
            removal: Removal::Revert { commit: "x".into() },
            guards: vec!["a".into()],
            keep_passing: vec!["k".into(), "ok".into()],
        };
        let r = |case: &str, status| CaseResult {
            family: "sm90".into(),
            shard: "1/1".into(),
            case: case.into(),
            status,
            duration_s: 0.0,
            message: String::new(),
            attempts: vec![],
            artifacts: None,
        };
        let runs = GuardRuns::of(
            &spec,
            &[
                r("k", Status::Fail),
                r("a", Status::Fail),
                r("ok", Status::Pass),
                r("other", Status::Fail),
            ],
            false,
        );
        assert_eq!(names(&runs.guards), "a");
        assert_eq!(names(&runs.collateral), "k");
    }

    #[test]
    fn an_interrupted_run_is_an_error_even_if_guards_failed() {
        let a = Attempt::Ran(GuardRuns {
            guards: vec![g("a", Status::Fail, "")],
            collateral: vec![],
            interrupted: true,
        });
        assert_eq!(
            classify(&a),
            Verdict {
                outcome: Outcome::Error,
                summary: "interrupted".into()
            }
        );
    }

    #[test]
    fn steps_that_stop_early_are_unviable_or_errors() {
        let not_applied = Attempt::NotRemoved(RemoveError::NotApplied {
            error: GitError::Failed {
                args: "apply x.patch".into(),
                stderr: "error: patch failed | error: x: patch does not apply".into(),
            },
            log: "/o/control.log".into(),
        });
        let v = classify(&not_applied);
        assert_eq!(v.outcome, Outcome::Unviable);
        assert_eq!(v.summary, "the fix could not be removed: git apply x.patch failed: error: patch failed | error: x: patch does not apply (log: /o/control.log)");
        let no_worktree = Attempt::NotRemoved(RemoveError::Worktree(WorktreeError::Refused(
            "fatal: invalid reference: HEAD".into(),
        )));
        assert_eq!(
            classify(&no_worktree),
            Verdict {
                outcome: Outcome::Error,
                summary: "git worktree add: fatal: invalid reference: HEAD".into()
            }
        );
        let tree = Attempt::NotBuilt(BuildStop::Tree(HarnessError::failed(
            "`sh build.sh` failed (exit 1)\ntool.c:7: error",
        )));
        assert_eq!(
            classify(&tree).summary,
            "the tree does not build without the fix: `sh build.sh` failed (exit 1)"
        );
        assert_eq!(outcome(&tree), Outcome::Unviable);
        let case = Attempt::NotBuilt(BuildStop::Case {
            case: "adds".into(),
            message: "nvcc: error".into(),
        });
        assert_eq!(outcome(&case), Outcome::Unviable);
        assert_eq!(
            classify(&case).summary,
            "case adds does not build without the fix: nvcc: error"
        );
        for stop in [
            BuildStop::Interrupted,
            BuildStop::MissingPrebuilt { dir: "/p/c".into() },
        ] {
            assert_eq!(outcome(&Attempt::NotBuilt(stop)), Outcome::Error);
        }
        let built_only = Attempt::BuiltOnly {
            dir: "/b/c".into(),
            copied: Ok(()),
        };
        assert_eq!(
            classify(&built_only),
            Verdict {
                outcome: Outcome::Built,
                summary: "built without the fix (--build-only): tools in /b/c; no case ran (run them with --prebuilt)".into()
            }
        );
    }

    fn outcomes(baseline_passed: bool, controls: &[Outcome]) -> Outcomes {
        Outcomes {
            family: "sm90".into(),
            source_revision: "r".into(),
            baseline: vec![],
            baseline_passed,
            controls: controls
                .iter()
                .enumerate()
                .map(|(i, o)| ControlResult {
                    name: format!("c{i}"),
                    removal: Removal::Revert { commit: "x".into() },
                    outcome: *o,
                    summary: String::new(),
                    guards: vec![],
                    collateral: vec![],
                    duration_s: 0.0,
                    dir: String::new(),
                })
                .collect(),
        }
    }

    #[test]
    fn exit_codes_follow_the_documented_precedence() {
        use Outcome::*;
        let cases: [(bool, &[Outcome], Exit); 11] = [
            (true, &[], Exit::Ok),
            (true, &[Caught, Caught], Exit::Ok),
            (false, &[], Exit::BaselineFailed),
            (false, &[Missed, Timeout], Exit::BaselineFailed),
            (true, &[Caught, Missed], Exit::Missed),
            (true, &[Timeout, Unviable, Missed], Exit::Missed),
            (true, &[Unviable, Timeout], Exit::Timeout),
            (true, &[Caught, Unviable], Exit::Unviable),
            (true, &[Error], Exit::Unviable),
            (true, &[Error, Timeout], Exit::Timeout),
            (true, &[Timeout], Exit::Timeout),
        ];
        for (baseline, controls, want) in cases {
            assert_eq!(
                exit_code(&outcomes(baseline, controls)),
                want,
                "{baseline} {controls:?}"
            );
        }
    }

    #[test]
    fn the_tally_counts_each_outcome() {
        use Outcome::*;
        let t = Tally::of(&outcomes(
            true,
            &[Caught, Caught, Missed, Unviable, Timeout, Error, Error],
        ));
        assert_eq!(
            t,
            Tally {
                caught: 2,
                missed: 1,
                unviable: 1,
                timeout: 1,
                error: 2,
                built: 0
            }
        );
    }

    #[test]
    fn a_build_only_run_exits_ok_and_a_failed_copy_does_not() {
        assert_eq!(
            exit_code(&outcomes(true, &[Outcome::Built, Outcome::Built])),
            Exit::Ok
        );
        assert_eq!(
            exit_code(&outcomes(true, &[Outcome::Built, Outcome::Error])),
            Exit::Unviable
        );
        let failed_copy = Attempt::BuiltOnly {
            dir: "/b/c".into(),
            copied: Err(std::io::Error::other("disk full")),
        };
        assert_eq!(outcome(&failed_copy), Outcome::Error);
    }
}
