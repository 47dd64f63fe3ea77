//! `hrr-harness run`: each GPU case under capture and replayed, its checks applied (the
//! program runs natively too only when the captured run did not exit as the case
//! expects, to tell a broken program from a capture that changed it); a host case runs
//! its command. An unexpected result is re-run (`--retries`, once by default), the status
//! decided by `hrr_reports::status::classify_attempts`. Cases run in parallel, one worker
//! per GPU, each worker's processes pinned to its GPU. In compile-only mode a GPU case is
//! only built: `compiled-not-run`, or a failure when it or one of its targets did not
//! compile; host cases still run.
//!
//! This module runs cases to their status and spreads them over workers; one attempt's
//! steps are in `attempt`, the replay step in `replay`, the checks (pure, from replay's
//! typed results) in `checks`, and why an attempt ended early in `error`.

mod archive_case;
mod attempt;
mod checks;
mod error;
pub mod heartbeat;
mod replay;
mod stability;
mod unchanged;

use std::path::{Path, PathBuf};
use std::time::Instant;

use hrr_matrix::{CaseKind, Disposition, Expectation, Family, ResolvedCase};
use hrr_reports::status::{classify_attempts, needs_another};
use hrr_reports::{classify, AttemptResult, CaseResult, Expected, RawOutcome, Status};

use crate::builder::{Built, CaseBuild};
use crate::gpu::Gpu;
use crate::pool::Event;
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

/// How `run` treats cases beyond the context: `run_all` uses the default (today's one
/// re-run, cases run), `run_all_with` what `run`'s flags say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunPolicy {
    /// Build GPU cases, run none of them (`run --compile-only`).
    pub compile_only: bool,
    /// Re-runs of a case whose outcome is unexpected (`--retries`, default 1).
    pub retries: u32,
    /// The GPU cases run against the stand-in runtime (`run --stand-in`): a case whose
    /// checks all pass is `stand-in`, never `pass`.
    pub stand_in: bool,
}

impl Default for RunPolicy {
    fn default() -> Self {
        RunPolicy {
            compile_only: false,
            retries: 1,
            stand_in: false,
        }
    }
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

/// A result with no attempt: skipped, compiled only, or not run.
fn unrun(ctx: &RunContext, rc: &ResolvedCase, status: Status, message: String) -> CaseResult {
    CaseResult {
        family: ctx.family.name.clone(),
        shard: ctx.shard.clone(),
        case: rc.case.name.clone(),
        status,
        duration_s: 0.0,
        message,
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
    /// Compile-only mode: built for every target of the family; not run.
    Compiled(String),
    /// No compiler here builds the family's targets: infrastructure, not the case.
    NotRun(String),
}

/// What the run and its build say about GPU cases, for `readiness`.
#[derive(Clone, Copy, Debug)]
struct Here<'a> {
    /// A GPU case on a machine without the family's GPUs.
    no_gpu: bool,
    no_gpu_reason: &'a str,
    compile_only: bool,
    /// `Built::no_compiler`.
    no_compiler: Option<&'a str>,
    /// `Built::unsupported_targets`.
    unsupported_targets: &'a [(String, String)],
    /// The run is against the stand-in runtime (`run --stand-in`).
    stand_in: bool,
}

/// Decides `Readiness` from the case's build and `here`.
fn readiness(build: Option<&CaseBuild>, here: Here, family: &Family) -> Readiness {
    if matches!(build, Some(CaseBuild::Host)) {
        return Readiness::Run { binary: None };
    }
    if let Some(CaseBuild::Archive { hrrz, sha256 }) = build {
        return archive_case::readiness(hrrz, sha256, here, family);
    }
    if here.compile_only {
        return compiled(build, here, family);
    }
    if let (Some(why), false) = (here.no_compiler, here.no_gpu) {
        return Readiness::NotRun(why.to_string());
    }
    let (no_gpu, no_gpu_reason) = (here.no_gpu, here.no_gpu_reason);
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
        Some(CaseBuild::Archive { hrrz, sha256 }) => {
            archive_case::readiness(hrrz, sha256, here, family)
        }
    }
}

/// Compile-only mode's verdict on a GPU case: compiled for every target of the family, or
/// a compile failure (a target no compiler here builds is one: the matrix marks a target
/// the project does not support with a skip rule, which never reaches this point).
fn compiled(build: Option<&CaseBuild>, here: Here, family: &Family) -> Readiness {
    if let Some(why) = here.no_compiler {
        return Readiness::NotRun(why.to_string());
    }
    let not_built = || {
        here.unsupported_targets
            .iter()
            .map(|(t, why)| format!("not compiled for {t}: {why}"))
            .collect::<Vec<_>>()
            .join("; ")
    };
    match build {
        None => Readiness::Broken("the case was not built".into()),
        Some(CaseBuild::Failed { message, log }) => {
            Readiness::Broken(format!("build failed: {message} (log: {})", log.display()))
        }
        Some(CaseBuild::Unsupported { reason }) => {
            Readiness::Broken(format!("cannot build for {} here: {reason}", family.name))
        }
        Some(_) if !here.unsupported_targets.is_empty() => Readiness::Broken(not_built()),
        Some(CaseBuild::CompileChecked { targets, .. }) => Readiness::Compiled(format!(
            "compiled for {} (compile check: no runnable program links here); not run: compile-only",
            targets.join(", ")
        )),
        Some(_) => Readiness::Compiled(format!(
            "compiled for {}; not run: compile-only",
            family.targets.join(", ")
        )),
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
        Status::UnexpectedPass => format!(
            "expected to fail ({exp_reason}) but passed on {}",
            match attempts.len() {
                1 => "its only attempt".to_string(),
                n => format!("all {n} attempts"),
            }
        ),
        Status::Flake => format!("passed on one attempt, not the other: {failing}"),
        _ => first,
    }
}

/// What a case that passed against the stand-in proved: its checks, no kernel run.
/// A passing case's archives and working directories go (the bulk of its directory: every
/// directory of each attempt); its logs and replay results, the attempt's files, stay, so
/// the report links them (a run that passed showed nothing but "no log").
fn drop_archives(case_dir: &Path) {
    let Ok(attempts) = std::fs::read_dir(case_dir) else {
        return;
    };
    for attempt in attempts.flatten() {
        let Ok(entries) = std::fs::read_dir(attempt.path()) else {
            continue;
        };
        for e in entries.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
}

/// A case that did not pass: each attempt's captured archive packed into one file beside
/// it (`archive.hrrz`, `hrr_archive::pack`), which replaces the directory, so CI's
/// results artifact carries one file per archive and a failure is replayed elsewhere with
/// `hrr-replay .../archive.hrrz`. An archive that cannot be packed (capture left it
/// unfinished) stays a directory.
fn pack_archives(case_dir: &Path) {
    let Ok(attempts) = std::fs::read_dir(case_dir) else {
        return;
    };
    for attempt in attempts.flatten() {
        let dir = attempt.path().join("archive");
        if !std::fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()) {
            continue;
        }
        let packed = attempt.path().join("archive.hrrz");
        match hrr_archive::pack::pack(&dir, &packed, hrr_archive::Limits::default()) {
            Ok(_) => {
                let _ = std::fs::remove_dir_all(&dir);
            }
            Err(e) => {
                let _ = std::fs::remove_file(&packed);
                eprintln!(
                    "hrr-harness: {}: kept as a directory, not packed: {e}",
                    dir.display()
                );
            }
        }
    }
}

fn stand_in_message(attempts: &[AttemptResult]) -> String {
    let checks = attempts
        .last()
        .map(|a| {
            a.checks
                .iter()
                .map(|c| c.name.clone())
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default();
    format!("passed against the stand-in runtime (no GPU, no kernel run): {checks}")
}

/// Runs one case to its final status.
pub fn run_case(
    ctx: &RunContext,
    policy: RunPolicy,
    rc: &ResolvedCase,
    gpu: Option<&Gpu>,
    service: &mut ServiceSlot,
) -> CaseResult {
    if let Disposition::Skip { reason, .. } = &rc.disposition {
        return unrun(ctx, rc, Status::Skip, reason.clone());
    }
    let (expected, exp_reason) = expected_of(&rc.expectation);
    let case_dir = ctx.output.join("cases").join(&rc.case.name);
    let here = Here {
        no_gpu: matches!(rc.case.kind, CaseKind::Gpu | CaseKind::Archive) && ctx.gpus.is_empty(),
        no_gpu_reason: &ctx.no_gpu_reason,
        compile_only: policy.compile_only,
        no_compiler: ctx.built.no_compiler.as_deref(),
        unsupported_targets: &ctx.built.unsupported_targets,
        stand_in: policy.stand_in,
    };
    let build = ctx.built.cases.get(&rc.case.name);
    let binary = match readiness(build, here, ctx.family) {
        Readiness::Run { binary } => binary,
        Readiness::Skip(reason) => return unrun(ctx, rc, Status::Skip, reason),
        Readiness::Compiled(what) => return unrun(ctx, rc, Status::CompiledNotRun, what),
        Readiness::NotRun(why) => return unrun(ctx, rc, Status::NotRun, why),
        Readiness::Broken(problem) => {
            let a = AttemptResult {
                outcome: RawOutcome::Fail,
                duration_s: 0.0,
                message: problem.clone(),
                checks: vec![],
                output: String::new(),
                excluded: None,
                declared: None,
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
    let outcomes = |a: &[AttemptResult]| a.iter().map(|a| a.outcome).collect::<Vec<_>>();
    while needs_another(&outcomes(&attempts), expected, policy.retries) && !process::interrupted() {
        let n = attempts.len() + 1;
        attempts.push(attempt(
            ctx,
            rc,
            gpu,
            service,
            case_dir.join(format!("attempt-{n}")),
            binary.as_deref(),
        ));
    }
    let status = classify_attempts(&outcomes(&attempts), expected);
    let mut message = case_message(status, &attempts, &exp_reason);
    let keep = ctx.keep_archives || status != Status::Pass;
    let status = match status {
        Status::Pass if policy.stand_in && rc.case.kind.needs_gpu() => {
            message = stand_in_message(&attempts);
            Status::StandIn
        }
        s => s,
    };
    let artifacts = if keep {
        if status != Status::Pass && status != Status::StandIn {
            pack_archives(&case_dir);
        }
        Some(case_dir.display().to_string())
    } else {
        drop_archives(&case_dir);
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
        g.select.clone(),
    ));
    let replay = ctx.built.replay.clone();
    let log = ctx.output.join(format!("replay-service-{worker}.log"));
    ServiceSlot::new(move || ReplayService::start(&replay, vendor, &envs, log.clone()))
}

/// `run_all_with` the default policy (what `control` runs its cases with).
pub fn run_all(
    ctx: &RunContext,
    cases: &[ResolvedCase],
    jobs: usize,
    on_start: impl FnMut(&str),
    on_result: impl FnMut(&CaseResult),
) -> Vec<CaseResult> {
    run_all_with(
        ctx,
        RunPolicy::default(),
        cases,
        jobs,
        on_start,
        on_result,
        |line| crate::out!("{line}"),
    )
}

/// Runs `cases` on `jobs` workers; worker i uses GPU i modulo the GPUs. `on_result` sees
/// each result as it arrives (progress, incremental JSON). Results come back in input
/// order.
pub fn run_all_with(
    ctx: &RunContext,
    policy: RunPolicy,
    cases: &[ResolvedCase],
    jobs: usize,
    mut on_start: impl FnMut(&str),
    mut on_result: impl FnMut(&CaseResult),
    mut on_slow: impl FnMut(&str),
) -> Vec<CaseResult> {
    // Longest first (the case's time limit stands in for its duration), so one long case
    // does not start last and leave the other workers idle at the end.
    let mut order: Vec<usize> = (0..cases.len()).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(cases[i].timeout), i));
    let mut results: Vec<Option<CaseResult>> = vec![None; cases.len()];
    crate::pool::run(
        cases,
        Some(order),
        jobs,
        process::interrupted,
        |w| {
            // Worker w uses GPU w modulo the GPUs, and a replay service there.
            let gpu = (!ctx.gpus.is_empty()).then(|| &ctx.gpus[w % ctx.gpus.len()]);
            (gpu, service_slot(ctx, gpu, w))
        },
        |(gpu, service), _, rc| {
            heartbeat::started(&rc.case.name);
            let r = run_case(ctx, policy, rc, *gpu, service);
            heartbeat::finished(&rc.case.name);
            r
        },
        |e| {
            // A case running long says so, with its step (on a terminal too: the bar
            // shows the cases, not how long each has run).
            for line in heartbeat::due(Instant::now(), heartbeat::SLOW_AFTER) {
                on_slow(&line);
            }
            match e {
                Event::Started(i) => on_start(&cases[i].case.name),
                Event::Finished(i, r) => {
                    on_result(&r);
                    results[i] = Some(r);
                }
                Event::Tick => {}
            }
        },
    );
    results.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests;
