//! `hrr-harness run`: each case natively, under capture and replayed, its checks applied,
//! an unexpected result re-run once, the status decided by `hrr_reports::classify`. Cases
//! run in parallel, one worker per GPU, each worker's processes pinned to its GPU.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{mpsc, Mutex};
use std::time::Instant;

use hrr_archive::edit::{edit_expected_output, EditedOutput};
use hrr_archive::{Archive, Limits};
use hrr_contract::{FailureKind, ReplayExit, ReplayResult, Verdict};
use hrr_matrix::{CaseKind, Check, Disposition, Expectation, Family, ResolvedCase};
use hrr_reports::status::needs_rerun;
use hrr_reports::{classify, AttemptResult, CaseResult, CheckResult, Expected, RawOutcome, Status};

use crate::builder::{Built, CaseBuild};
use crate::gpu::Gpu;
use crate::process::{self, Exit};
use crate::service::{ReplayService, ServiceError, ServiceSlot};

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

/// A step's outcome when it did not finish normally.
fn abnormal(step: &str, e: Exit) -> Option<(RawOutcome, String)> {
    match e {
        Exit::Code(_) => None,
        Exit::Signal(_) => Some((RawOutcome::Crash, format!("{step}: {}", e.describe()))),
        Exit::Timeout => Some((RawOutcome::Timeout, format!("{step}: timed out"))),
        Exit::Interrupted => Some((RawOutcome::Crash, format!("{step}: interrupted"))),
    }
}

struct Attempt<'a> {
    ctx: &'a RunContext<'a>,
    rc: &'a ResolvedCase,
    gpu: Option<&'a Gpu>,
    /// The worker's replay service, where it has one.
    service: &'a mut ServiceSlot,
    dir: PathBuf,
    deadline: Instant,
    checks: Vec<CheckResult>,
    output: String,
}

impl Attempt<'_> {
    fn command(&self, program: &Path) -> Command {
        let mut c = Command::new(program);
        c.envs(&self.ctx.family.env);
        if let Some(g) = self.gpu {
            c.env(
                self.ctx.family.vendor.visible_devices_var(),
                g.index.to_string(),
            );
        }
        c
    }

    /// The case's program: `command`, plus HRR_MODULE_FILE when the case has a module.
    fn program(&self, binary: &Path) -> Command {
        let mut c = self.command(binary);
        if let Some(CaseBuild::Built {
            module: Some(m), ..
        }) = self.ctx.built.cases.get(&self.rc.case.name)
        {
            c.env("HRR_MODULE_FILE", m);
        }
        c
    }

    fn run(&self, step: &str, cmd: Command) -> Result<Exit, (RawOutcome, String)> {
        let log = self.dir.join(format!("{step}.log"));
        match process::run_logged(cmd, &log, self.deadline) {
            Ok(f) => match abnormal(step, f.exit) {
                Some(a) => Err(a),
                None => Ok(f.exit),
            },
            Err(e) => Err((RawOutcome::Crash, format!("{step}: cannot start: {e}"))),
        }
    }

    fn check(&mut self, name: &str, passed: bool, detail: String) {
        self.checks.push(CheckResult {
            name: name.into(),
            passed,
            detail,
        });
    }

    /// Replays `archives` in one `hrr-replay` process (the runtime starts once) and returns
    /// each archive's exit code and result, in order.
    fn replay(
        &mut self,
        step: &str,
        archives: &[&Path],
    ) -> Result<Vec<(i32, ReplayResult)>, (RawOutcome, String)> {
        let json = self.dir.join(format!("{step}.json"));
        let log = self.dir.join(format!("{step}.log"));
        let code = if let Some(service) = self.service.get() {
            let request = serde_json::json!({
                "archives": archives,
                "json": json,
                "log": log,
                "continue_on_error": true,
            });
            match service.request(&request, self.deadline) {
                Ok(reply) => {
                    if !reply.healthy {
                        self.service.discard();
                    }
                    reply.exit_code
                }
                Err(ServiceError::Timeout) => {
                    self.service.discard();
                    return Err((
                        RawOutcome::Timeout,
                        format!("{step}: the replay did not finish before the case's time limit"),
                    ));
                }
                Err(ServiceError::Failed(why)) => {
                    self.service.discard();
                    return Err((RawOutcome::Crash, format!("{step}: {why}")));
                }
            }
        } else {
            let mut cmd = self.command(&self.ctx.built.replay);
            cmd.args(archives)
                .arg("--continue-on-error")
                .arg("--json")
                .arg(&json);
            match self.run(step, cmd)? {
                Exit::Code(c) => c,
                _ => -1,
            }
        };
        let names: Vec<String> = archives.iter().map(|a| a.display().to_string()).collect();
        self.output
            .push_str(&format!("$ hrr-replay {} (exit {code})\n", names.join(" ")));
        self.output
            .push_str(&process::tail(&self.dir.join(format!("{step}.log")), 4000));
        let data = std::fs::read(&json).ok();
        let parsed: Option<Vec<ReplayResult>> = data.as_deref().and_then(|d| {
            if archives.len() == 1 {
                serde_json::from_slice::<ReplayResult>(d)
                    .ok()
                    .map(|r| vec![r])
            } else {
                serde_json::from_slice(d).ok()
            }
        });
        match parsed {
            Some(rs) if rs.len() == archives.len() => {
                if let Some(r) = rs.iter().find(|r| r.exit_code == ReplayExit::NoGpu) {
                    return Err((
                        RawOutcome::Crash,
                        format!("{step}: GPU or runtime unavailable: {}", r.reason),
                    ));
                }
                Ok(rs
                    .into_iter()
                    .map(|r| (i32::from(r.exit_code.code()), r))
                    .collect())
            }
            _ if ReplayExit::from_code(code) == Some(ReplayExit::NoGpu) => Err((
                RawOutcome::Crash,
                format!("{step}: GPU or runtime unavailable (exit 3, no JSON result)"),
            )),
            _ => Err((
                RawOutcome::Crash,
                format!(
                    "{step}: exit {code} and no JSON result for {} archive(s) ({})",
                    archives.len(),
                    json.display()
                ),
            )),
        }
    }

    /// The GPU case's steps; Err ends the attempt early with that outcome.
    fn gpu_steps(&mut self, binary: &Path) -> Result<(), (RawOutcome, String)> {
        let case = &self.rc.case;
        // 1. Under capture. Cases check their own results, so a captured run that exits
        // as the case expects ran correctly; only when it does not is the program run
        // natively, to tell a broken program from a capture that changed its behaviour
        // (one process fewer per case: each pays the GPU runtime's start-up).
        let archive = self.dir.join("archive");
        let expected = Exit::Code(case.exit_code);
        let mut cap = self.program(binary);
        // The archive is the case's scratch output, thrown away when it passes: it needs
        // no durability against a machine crash, so its writes are not fsync'd.
        cap.current_dir(&self.dir)
            .env("HRR_CAPTURE_OUTPUT", &archive)
            .env("HRR_CAPTURE_FSYNC", "off")
            .env("LD_PRELOAD", &self.ctx.built.capture);
        let cap_result = self.run("capture", cap);
        match &cap_result {
            Ok(e) if *e == expected => {}
            Err((RawOutcome::Timeout, m)) => return Err((RawOutcome::Timeout, m.clone())),
            other => {
                let (cap_outcome, cap_desc) = match other {
                    Ok(e) => (RawOutcome::Fail, e.describe()),
                    Err((o, m)) => (*o, m.clone()),
                };
                let mut native = self.program(binary);
                native.current_dir(&self.dir);
                return Err(match self.run("native", native) {
                    Ok(e) if e == expected => (
                        cap_outcome,
                        format!(
                            "capture changed the program's behaviour: {cap_desc} under capture, {} natively; see capture.log: {}",
                            e.describe(),
                            process::tail(&self.dir.join("capture.log"), 300).replace('\n', " | ")
                        ),
                    ),
                    Ok(e) => (
                        RawOutcome::Fail,
                        format!(
                            "the program fails without capture too: native run {} (the case expects exit {}); see native.log: {}",
                            e.describe(),
                            case.exit_code,
                            process::tail(&self.dir.join("native.log"), 300).replace('\n', " | ")
                        ),
                    ),
                    Err((o, m)) => (o, format!("native run: {m} (and under capture: {cap_desc})")),
                });
            }
        }
        if !archive.join("manifest.json").is_file() {
            return Err((
                RawOutcome::Fail,
                format!(
                    "capture wrote no archive: {}",
                    process::tail(&self.dir.join("capture.log"), 400).replace('\n', " | ")
                ),
            ));
        }
        // 2. The blob-edit check's copy: one expected output changed by one byte.
        let edited = if case.checks.contains(&Check::BlobEdit) {
            Some(self.edited_copy(&archive))
        } else {
            None
        };
        // 3. Replay: the archive, and the edited copy in the same process.
        let mut to_replay = vec![archive.as_path()];
        let edited_dir = self.dir.join("archive-edited");
        if let Some(Ok(_)) = &edited {
            to_replay.push(&edited_dir);
        }
        let mut results = self.replay("replay", &to_replay)?.into_iter();
        let Some((code, r)) = results.next() else {
            return Err((RawOutcome::Crash, "replay returned no result".into()));
        };
        let edited_replay = results.next();
        let c = &r.counts;
        let summary = format!(
            "replay exit {code} {}: {} of {} events, {} kernels, D2H {} pass / {} fail / {} skipped, {} failed as captured",
            r.verdict, c.events_replayed, c.events_total, c.kernels_launched, c.d2h_pass, c.d2h_fail, c.d2h_skipped, c.failed_as_captured
        );
        let first_failure = r
            .failures
            .first()
            .map(|f| f.message.clone())
            .unwrap_or_else(|| r.reason.clone());
        for check in &case.checks {
            match check {
                Check::Roundtrip => {
                    let ok = code == 0 && r.verdict == Verdict::Pass;
                    let detail = if ok {
                        summary.clone()
                    } else {
                        format!("{summary}; first failure: {first_failure}")
                    };
                    self.check("roundtrip", ok, detail);
                }
                Check::FailedCall => {
                    let ok = c.failed_as_captured >= 1;
                    self.check(
                        "failed-call",
                        ok,
                        format!(
                            "{} call(s) failed at replay exactly as at capture (need at least 1)",
                            c.failed_as_captured
                        ),
                    );
                }
                Check::Refused(apis) => {
                    let refused: Vec<&str> = r
                        .failures
                        .iter()
                        .filter(|f| f.kind == FailureKind::Unreplayable)
                        .map(|f| f.api.as_str())
                        .collect();
                    let others: Vec<&str> = r
                        .failures
                        .iter()
                        .filter(|f| f.kind != FailureKind::Unreplayable)
                        .map(|f| f.message.as_str())
                        .collect();
                    // Names in the matrix leave out the vendor prefix: `StreamAddCallback`
                    // matches cudaStreamAddCallback and hipStreamAddCallback.
                    let missing: Vec<&String> = apis
                        .iter()
                        .filter(|a| !refused.iter().any(|r| r.ends_with(a.as_str())))
                        .collect();
                    let ok = code == 1 && missing.is_empty() && others.is_empty() && c.d2h_pass > 0;
                    self.check(
                        "refused",
                        ok,
                        format!(
                            "replay refused [{}]; expected [{}]; other failures: {}; D2H passed {}",
                            refused.join(", "),
                            apis.iter()
                                .map(|s| s.as_str())
                                .collect::<Vec<_>>()
                                .join(", "),
                            if others.is_empty() {
                                "none".to_string()
                            } else {
                                others.join(" | ")
                            },
                            c.d2h_pass
                        ),
                    );
                }
                Check::Processes(n) => {
                    let found =
                        Archive::open(&archive, Limits::default()).map(|a| a.processes.len());
                    let (ok, detail) = match found {
                        Ok(k) => (
                            k as u32 == *n,
                            format!("archive holds {k} process(es), expected {n}"),
                        ),
                        Err(e) => (false, format!("cannot open the archive: {e}")),
                    };
                    self.check("processes", ok, detail);
                }
                Check::BlobEdit => {
                    let (ok, detail) = match (&edited, &edited_replay) {
                        (Some(Ok(e)), Some((code, r))) => blob_edit_verdict(e, *code, r),
                        (Some(Err(why)), _) => (false, why.clone()),
                        _ => (false, "the edited archive was not replayed".into()),
                    };
                    self.check("blob-edit", ok, detail);
                }
                Check::ExitZero => {}
            }
        }
        Ok(())
    }

    /// Copies the archive (hard links: capture never rewrites a file in place, and the
    /// edit replaces the files it changes) and changes one byte of one expected output.
    fn edited_copy(&self, archive: &Path) -> Result<EditedOutput, String> {
        let edited = self.dir.join("archive-edited");
        link_tree(archive, &edited).map_err(|e| format!("cannot copy the archive: {e}"))?;
        let limits = Limits::default();
        match edit_expected_output(&edited, None, BLOB_EDIT_OFFSET, limits) {
            Ok(e) => Ok(e),
            Err(e) if e.to_string().contains("outside") => {
                edit_expected_output(&edited, None, 0, limits)
            }
            Err(e) => Err(e),
        }
        .map_err(|err| format!("no expected output to edit: {err}"))
    }

    fn host_steps(&mut self) -> Result<(), (RawOutcome, String)> {
        let case = &self.rc.case;
        let mut cmd = self.command(Path::new(&case.command[0]));
        cmd.args(&case.command[1..])
            .current_dir(self.ctx.built.source.join("cases").join(&case.dir))
            .env("HRR_REPLAY", &self.ctx.built.replay)
            .env("HRR_CAPTURE", &self.ctx.built.capture)
            .env("HRR_BUILD_DIR", &self.ctx.built.dir)
            .env("HRR_CASE_OUTPUT", &self.dir);
        let exit = self.run("command", cmd)?;
        self.output
            .push_str(&process::tail(&self.dir.join("command.log"), 4000));
        self.check(
            "exit-zero",
            exit == Exit::Code(0),
            format!("`{}`: {}", case.command.join(" "), exit.describe()),
        );
        Ok(())
    }
}

/// The blob-edit check: replay of the edited copy must fail that one check, at that
/// sequence id and offset, and nothing else.
fn blob_edit_verdict(e: &EditedOutput, code: i32, r: &ReplayResult) -> (bool, String) {
    let hit = r.failures.iter().find(|f| {
        f.kind == FailureKind::D2hMismatch
            && f.pid == e.pid
            && f.seq == e.seq
            && f.first_differing_offset == Some(e.offset)
            && f.differing_bytes == Some(1)
    });
    let ok = code == 1 && hit.is_some() && r.failures.len() == 1;
    let detail = match (ok, hit) {
        (true, Some(f)) => format!(
            "changed byte {} of pid {} seq {} ({:#04x} -> {:#04x}); replay failed exactly that check: {}",
            e.offset, e.pid, e.seq, e.old, e.new, f.message
        ),
        _ => format!(
            "changed byte {} of pid {} seq {}; replay exit {code} with {} failure(s): {} (the comparison does not catch an edited output)",
            e.offset,
            e.pid,
            e.seq,
            r.failures.len(),
            r.failures.iter().map(|f| f.message.as_str()).collect::<Vec<_>>().join(" | ")
        ),
    };
    (ok, detail)
}

/// Mirrors a directory tree with hard links (a copy where linking fails, e.g. across
/// file systems).
fn link_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)? {
        let e = e?;
        let t = e.file_type()?;
        let dest = to.join(e.file_name());
        if t.is_dir() {
            link_tree(&e.path(), &dest)?;
        } else if t.is_file() && std::fs::hard_link(e.path(), &dest).is_err() {
            std::fs::copy(e.path(), dest)?;
        }
    }
    Ok(())
}

fn attempt(
    ctx: &RunContext,
    rc: &ResolvedCase,
    gpu: Option<&Gpu>,
    service: &mut ServiceSlot,
    dir: PathBuf,
    binary: Option<&Path>,
) -> AttemptResult {
    let start = Instant::now();
    let _ = std::fs::remove_dir_all(&dir);
    if let Err(e) = std::fs::create_dir_all(&dir) {
        return AttemptResult {
            outcome: RawOutcome::Crash,
            duration_s: 0.0,
            message: format!("cannot create {}: {e}", dir.display()),
            checks: vec![],
            output: String::new(),
        };
    }
    let mut a = Attempt {
        ctx,
        rc,
        gpu,
        service,
        dir,
        deadline: start + rc.timeout,
        checks: Vec::new(),
        output: String::new(),
    };
    let early = match (rc.case.kind, binary) {
        (CaseKind::Host, _) => a.host_steps(),
        (CaseKind::Gpu, Some(b)) => a.gpu_steps(b),
        (CaseKind::Gpu, None) => Err((RawOutcome::Crash, "no binary".into())),
    };
    let (outcome, message) = match early {
        Err((o, m)) => (o, m),
        Ok(()) => match a.checks.iter().find(|c| !c.passed) {
            Some(f) => (RawOutcome::Fail, format!("{}: {}", f.name, f.detail)),
            None => (
                RawOutcome::Pass,
                format!(
                    "{} check(s) passed: {}",
                    a.checks.len(),
                    a.checks
                        .iter()
                        .map(|c| c.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ),
        },
    };
    AttemptResult {
        outcome,
        duration_s: start.elapsed().as_secs_f64(),
        message,
        checks: a.checks,
        output: a.output,
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
