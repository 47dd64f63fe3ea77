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
    let build = ctx.built.cases.get(&rc.case.name);
    let is_gpu = rc.case.kind == CaseKind::Gpu;
    let no_gpu = is_gpu && ctx.gpus.is_empty();
    let binary: Option<PathBuf> = match build {
        Some(CaseBuild::Built { binary, .. }) => Some(binary.clone()),
        _ => None,
    };
    let build_problem: Option<String> = match build {
        None => Some("the case was not built".into()),
        Some(CaseBuild::Failed { message, log }) => {
            Some(format!("build failed: {message} (log: {})", log.display()))
        }
        Some(CaseBuild::Unsupported { reason }) if !no_gpu => Some(format!(
            "cannot build for {} here: {reason}",
            ctx.family.name
        )),
        Some(CaseBuild::CompileChecked { targets, .. }) if !no_gpu => Some(format!(
            "the compiler here only compile-checks {} (it cannot link a runnable program for them): install a newer ROCm",
            targets.join(", ")
        )),
        Some(CaseBuild::CompileChecked { targets, .. }) => {
            return skipped(
                ctx,
                rc,
                format!(
                    "{}; compile-checked for {} (no runnable program can be linked here)",
                    ctx.no_gpu_reason,
                    targets.join(", ")
                ),
            );
        }
        Some(CaseBuild::Unsupported { reason }) => {
            return skipped(
                ctx,
                rc,
                format!(
                    "{}; and no compiler here builds it: {reason}",
                    ctx.no_gpu_reason
                ),
            );
        }
        _ => None,
    };
    if let Some(problem) = build_problem {
        let a = AttemptResult {
            outcome: RawOutcome::Fail,
            duration_s: 0.0,
            message: problem.clone(),
            checks: vec![],
            output: String::new(),
        };
        let status = classify(RawOutcome::Fail, None, expected);
        return CaseResult {
            family: ctx.family.name.clone(),
            shard: ctx.shard.clone(),
            case: rc.case.name.clone(),
            status,
            duration_s: 0.0,
            message: problem,
            attempts: vec![a],
            artifacts: None,
        };
    }
    if no_gpu {
        return skipped(
            ctx,
            rc,
            format!(
                "{}; compiled for {}",
                ctx.no_gpu_reason,
                ctx.family.targets.join(", ")
            ),
        );
    }
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
    let failing = attempts.iter().find(|a| a.outcome != RawOutcome::Pass);
    let message = match status {
        Status::Pass => attempts[0].message.clone(),
        Status::ExpectedFail => format!(
            "expected failure ({exp_reason}): {}",
            failing.map(|a| a.message.as_str()).unwrap_or("")
        ),
        Status::UnexpectedPass => format!("expected to fail ({exp_reason}) but passed twice"),
        Status::Flake => format!(
            "passed on one attempt, not the other: {}",
            failing.map(|a| a.message.as_str()).unwrap_or("")
        ),
        _ => attempts[0].message.clone(),
    };
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
