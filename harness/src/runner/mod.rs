//! `hrr-harness run`: each GPU case under capture and replayed, its checks applied (the
//! program runs natively too only when the captured run did not exit as the case
//! expects, to tell a broken program from a capture that changed it); a host case runs
//! its command. An unexpected result is re-run once, the status decided by
//! `hrr_reports::classify`. Cases run in parallel, one worker per GPU, each worker's
//! processes pinned to its GPU.
//!
//! This module runs cases to their status and spreads them over workers; one attempt's
//! steps are in `attempt`, the replay step in `replay`, the checks (pure, from replay's
//! typed results) in `checks`, and why an attempt ended early in `error`.

mod attempt;
mod checks;
mod error;
mod replay;

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{mpsc, Mutex};
use std::time::Instant;

use hrr_matrix::{CaseKind, Disposition, Expectation, Family, ResolvedCase};
use hrr_reports::status::needs_rerun;
use hrr_reports::{classify, AttemptResult, CaseResult, Expected, RawOutcome, Status};

use crate::builder::{Built, CaseBuild};
use crate::gpu::Gpu;
use crate::process;
use crate::service::{ReplayService, ServiceSlot};

use attempt::attempt;

pub struct RunContext<'a> {
    pub family: &'a Family,
    pub built: &'a Built,
    /// The family's GPUs on this machine; empty: GPU cases are skipped with `no_gpu_reason`.
    pub gpus: Vec<Gpu>,
    pub no_gpu_reason: String,
    pub output: PathBuf,
    pub keep_archives: bool,
    pub shard: String,
}

/// The byte of the first expected output the blob-edit check changes (0 when the output is
/// shorter): not 0, so a report of "offset 0" cannot pass by accident.
pub const BLOB_EDIT_OFFSET: u64 = 100;

fn expected_of(e: &Expectation) -> (Expected, String) {
    match e {
        Expectation::Pass => (Expected::Pass, String::new()),
        Expectation::Fail { reason } => (Expected::Fail, reason.clone()),
        Expectation::Flake { reason } => (Expected::Flake, reason.clone()),
    }
}

fn skipped(ctx: &RunContext, rc: &ResolvedCase, reason: String) -> CaseResult {
    CaseResult {
        family: ctx.family.name.clone(),
        shard: ctx.shard.clone(),
        case: rc.case.name.clone(),
        status: Status::Skip,
        duration_s: 0.0,
        message: reason,
        attempts: vec![],
        artifacts: None,
    }
}

/// Whether a case can run here, from its build and the machine.
#[derive(Debug, PartialEq, Eq)]
enum Readiness {
    /// Run it (`binary`: the GPU case's program; a host case has none).
    Run { binary: Option<PathBuf> },
    /// Skipped: no GPU of the family here (and why it was not or could not be built).
    Skip(String),
    /// It should run here and cannot: a failed or missing build (a failure).
    Broken(String),
}

/// Decides `Readiness` from the case's build; `no_gpu`: a GPU case on a machine without
/// the family's GPUs (`no_gpu_reason` says why there are none).
fn readiness(
    build: Option<&CaseBuild>,
    no_gpu: bool,
    family: &Family,
    no_gpu_reason: &str,
) -> Readiness {
    match build {
        None => Readiness::Broken("the case was not built".into()),
        Some(CaseBuild::Failed { message, log }) => {
            Readiness::Broken(format!("build failed: {message} (log: {})", log.display()))
        }
        Some(CaseBuild::Unsupported { reason }) if !no_gpu => {
            Readiness::Broken(format!("cannot build for {} here: {reason}", family.name))
        }
        Some(CaseBuild::CompileChecked { targets, .. }) if !no_gpu => Readiness::Broken(format!(
            "the compiler here only compile-checks {} (it cannot link a runnable program for them): install a newer ROCm",
            targets.join(", ")
        )),
        Some(CaseBuild::CompileChecked { targets, .. }) => Readiness::Skip(format!(
            "{no_gpu_reason}; compile-checked for {} (no runnable program can be linked here)",
            targets.join(", ")
        )),
        Some(CaseBuild::Unsupported { reason }) => Readiness::Skip(format!(
            "{no_gpu_reason}; and no compiler here builds it: {reason}"
        )),
        Some(_) if no_gpu => Readiness::Skip(format!(
            "{no_gpu_reason}; compiled for {}",
            family.targets.join(", ")
        )),
        Some(CaseBuild::Built { binary, .. }) => Readiness::Run {
            binary: Some(binary.clone()),
        },
        Some(CaseBuild::Host) => Readiness::Run { binary: None },
    }
}

/// The case's message from its status and attempts.
fn case_message(status: Status, attempts: &[AttemptResult], exp_reason: &str) -> String {
    let failing = attempts.iter().find(|a| a.outcome != RawOutcome::Pass);
    let failing = failing.map(|a| a.message.as_str()).unwrap_or("");
    let first = attempts
        .first()
        .map(|a| a.message.clone())
        .unwrap_or_default();
    match status {
        Status::ExpectedFail => format!("expected failure ({exp_reason}): {failing}"),
        Status::UnexpectedPass => format!("expected to fail ({exp_reason}) but passed twice"),
        Status::Flake => format!("passed on one attempt, not the other: {failing}"),
        _ => first,
    }
}

/// Runs one case to its final status.
pub fn run_case(
    ctx: &RunContext,
    rc: &ResolvedCase,
    gpu: Option<&Gpu>,
    service: &mut ServiceSlot,
) -> CaseResult {
    if let Disposition::Skip { reason, .. } = &rc.disposition {
        return skipped(ctx, rc, reason.clone());
    }
    let (expected, exp_reason) = expected_of(&rc.expectation);
    let case_dir = ctx.output.join("cases").join(&rc.case.name);
    let no_gpu = rc.case.kind == CaseKind::Gpu && ctx.gpus.is_empty();
    let build = ctx.built.cases.get(&rc.case.name);
    let binary = match readiness(build, no_gpu, ctx.family, &ctx.no_gpu_reason) {
        Readiness::Run { binary } => binary,
        Readiness::Skip(reason) => return skipped(ctx, rc, reason),
        Readiness::Broken(problem) => {
            let a = AttemptResult {
                outcome: RawOutcome::Fail,
                duration_s: 0.0,
                message: problem.clone(),
                checks: vec![],
                output: String::new(),
            };
            return CaseResult {
                family: ctx.family.name.clone(),
                shard: ctx.shard.clone(),
                case: rc.case.name.clone(),
                status: classify(RawOutcome::Fail, None, expected),
                duration_s: 0.0,
                message: problem,
                attempts: vec![a],
                artifacts: None,
            };
        }
    };
    let start = Instant::now();
    let first = attempt(
        ctx,
        rc,
        gpu,
        service,
        case_dir.join("attempt-1"),
        binary.as_deref(),
    );
    let mut attempts = vec![first];
    if needs_rerun(attempts[0].outcome, expected) && !process::interrupted() {
        attempts.push(attempt(
            ctx,
            rc,
            gpu,
            service,
            case_dir.join("attempt-2"),
            binary.as_deref(),
        ));
    }
    let status = classify(
        attempts[0].outcome,
        attempts.get(1).map(|a| a.outcome),
        expected,
    );
    let message = case_message(status, &attempts, &exp_reason);
    let keep = ctx.keep_archives || status != Status::Pass;
    let artifacts = if keep {
        Some(case_dir.display().to_string())
    } else {
        let _ = std::fs::remove_dir_all(&case_dir);
        None
    };
    CaseResult {
        family: ctx.family.name.clone(),
        shard: ctx.shard.clone(),
        case: rc.case.name.clone(),
        status,
        duration_s: start.elapsed().as_secs_f64(),
        message,
        attempts,
        artifacts,
    }
}

/// The replay service for a worker on `gpu` (see `service`), or none: no GPU, or one
/// in an exclusive compute mode (it admits one process, which must be the case's).
fn service_slot(ctx: &RunContext, gpu: Option<&Gpu>, worker: usize) -> ServiceSlot {
    let Some(g) = gpu.filter(|g| !g.exclusive) else {
        return ServiceSlot::none();
    };
    let vendor = match ctx.family.vendor {
        hrr_matrix::Vendor::Nvidia => "cuda",
        hrr_matrix::Vendor::Amd => "hip",
    };
    let mut envs: Vec<(String, String)> = ctx
        .family
        .env
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    envs.push((
        ctx.family.vendor.visible_devices_var().to_string(),
        g.index.to_string(),
    ));
    let replay = ctx.built.replay.clone();
    let log = ctx.output.join(format!("replay-service-{worker}.log"));
    ServiceSlot::new(move || ReplayService::start(&replay, vendor, &envs, log.clone()))
}

/// Runs `cases` on `jobs` workers; worker i uses GPU i modulo the GPUs. `on_result` sees
/// each result as it arrives (progress, incremental JSON). Results come back in input
/// order.
pub fn run_all(
    ctx: &RunContext,
    cases: &[ResolvedCase],
    jobs: usize,
    mut on_start: impl FnMut(&str),
    mut on_result: impl FnMut(&CaseResult),
) -> Vec<CaseResult> {
    // Longest first (the case's time limit stands in for its duration), so one long case
    // does not start last and leave the other workers idle at the end.
    let mut order: Vec<(usize, &ResolvedCase)> = cases.iter().enumerate().collect();
    order.sort_by_key(|(i, rc)| (std::cmp::Reverse(rc.timeout), *i));
    let queue: Mutex<VecDeque<(usize, &ResolvedCase)>> = Mutex::new(order.into_iter().collect());
    let (tx, rx) = mpsc::channel::<(usize, Option<CaseResult>, String)>();
    let mut results: Vec<Option<CaseResult>> = vec![None; cases.len()];
    std::thread::scope(|s| {
        for w in 0..jobs.max(1) {
            let tx = tx.clone();
            let queue = &queue;
            let gpu = if ctx.gpus.is_empty() {
                None
            } else {
                Some(&ctx.gpus[w % ctx.gpus.len()])
            };
            s.spawn(move || {
                let mut service = service_slot(ctx, gpu, w);
                loop {
                    if process::interrupted() {
                        return;
                    }
                    let Some((i, rc)) = queue.lock().unwrap().pop_front() else {
                        return;
                    };
                    let _ = tx.send((i, None, rc.case.name.clone()));
                    let r = run_case(ctx, rc, gpu, &mut service);
                    let _ = tx.send((i, Some(r), String::new()));
                }
            });
        }
        drop(tx);
        while let Ok((i, r, name)) = rx.recv() {
            match r {
                None => on_start(&name),
                Some(r) => {
                    on_result(&r);
                    results[i] = Some(r);
                }
            }
        }
    });
    results.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn family() -> Family {
        Family {
            name: "sm90".into(),
            vendor: hrr_matrix::Vendor::Nvidia,
            targets: vec!["sm_90".into()],
            runner: vec![],
            gpus_per_runner: 1,
            shards: 1,
            timeout: None,
            env: Default::default(),
        }
    }

    #[test]
    fn a_built_case_runs_and_a_failed_build_is_a_failure() {
        let f = family();
        let built = CaseBuild::Built {
            binary: "/b/case".into(),
            module: None,
            reused: false,
        };
        assert_eq!(
            readiness(Some(&built), false, &f, ""),
            Readiness::Run {
                binary: Some("/b/case".into())
            }
        );
        assert_eq!(
            readiness(Some(&CaseBuild::Host), false, &f, ""),
            Readiness::Run { binary: None }
        );
        let failed = CaseBuild::Failed {
            message: "nvcc exit 1".into(),
            log: "/b/case.log".into(),
        };
        // A failed build fails with or without a GPU here.
        for no_gpu in [false, true] {
            assert_eq!(
                readiness(Some(&failed), no_gpu, &f, "no GPU"),
                Readiness::Broken("build failed: nvcc exit 1 (log: /b/case.log)".into())
            );
        }
        assert_eq!(
            readiness(None, false, &f, ""),
            Readiness::Broken("the case was not built".into())
        );
    }

    #[test]
    fn without_a_gpu_a_case_is_skipped_with_what_was_built() {
        let f = family();
        let built = CaseBuild::Built {
            binary: "/b/case".into(),
            module: None,
            reused: true,
        };
        assert_eq!(
            readiness(Some(&built), true, &f, "no sm90 GPU"),
            Readiness::Skip("no sm90 GPU; compiled for sm_90".into())
        );
        let unsupported = CaseBuild::Unsupported {
            reason: "no nvcc".into(),
        };
        assert_eq!(
            readiness(Some(&unsupported), true, &f, "no sm90 GPU"),
            Readiness::Skip("no sm90 GPU; and no compiler here builds it: no nvcc".into())
        );
        // With the GPU here, an unsupported build is a failure.
        assert_eq!(
            readiness(Some(&unsupported), false, &f, ""),
            Readiness::Broken("cannot build for sm90 here: no nvcc".into())
        );
        let checked = CaseBuild::CompileChecked {
            object: "/b/o".into(),
            targets: vec!["gfx1200".into()],
        };
        assert!(matches!(
            readiness(Some(&checked), true, &f, "x"),
            Readiness::Skip(_)
        ));
        assert!(matches!(
            readiness(Some(&checked), false, &f, "x"),
            Readiness::Broken(_)
        ));
    }

    #[test]
    fn the_message_follows_the_status() {
        let a = |outcome, message: &str| AttemptResult {
            outcome,
            duration_s: 0.0,
            message: message.into(),
            checks: vec![],
            output: String::new(),
        };
        let pass_fail = [
            a(RawOutcome::Pass, "ok"),
            a(RawOutcome::Fail, "roundtrip: x"),
        ];
        assert_eq!(
            case_message(Status::Flake, &pass_fail, ""),
            "passed on one attempt, not the other: roundtrip: x"
        );
        assert_eq!(case_message(Status::Pass, &pass_fail[..1], ""), "ok");
        assert_eq!(
            case_message(Status::ExpectedFail, &pass_fail[1..], "bug 7"),
            "expected failure (bug 7): roundtrip: x"
        );
        assert_eq!(
            case_message(Status::UnexpectedPass, &pass_fail[..1], "bug 7"),
            "expected to fail (bug 7) but passed twice"
        );
    }
}
