//! One attempt of one case, step by step: for a GPU case the program under capture
//! (and natively only when the captured run did not exit as the case expects), the
//! blob-edit copy, replay, then the case's checks; for a host case its command. An
//! attempt that ends early says why with a `StepError`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use hrr_archive::edit::{edit_expected_output, EditedOutput};
use hrr_archive::{Archive, ArchiveError, Limits};
use hrr_contract::FailureKind;
use hrr_matrix::{CaseKind, Check, ResolvedCase};
use hrr_reports::{AttemptResult, CheckResult, DeclaredMatches, ExcludedBytes, RawOutcome};

use super::error::{EditCopyError, StepError};
use super::unchanged::{self, NativeCache, Seen};
use super::{checks, stability, RunContext, BLOB_EDIT_OFFSET};
use crate::builder::CaseBuild;
use crate::gpu::Gpu;
use crate::process::{self, Exit};
use crate::service::ServiceSlot;

pub(super) struct Attempt<'a> {
    pub(super) ctx: &'a RunContext<'a>,
    pub(super) rc: &'a ResolvedCase,
    gpu: Option<&'a Gpu>,
    /// The worker's replay service, where it has one.
    pub(super) service: &'a mut ServiceSlot,
    pub(super) dir: PathBuf,
    pub(super) deadline: Instant,
    checks: Vec<CheckResult>,
    pub(super) output: String,
    /// Bytes the replay excluded as unstable (`stability`).
    excluded: Option<ExcludedBytes>,
    /// Checks matched only by the case's declared comparison.
    declared: Option<DeclaredMatches>,
}

/// Why a step's process did not finish normally; None when it exited with a code.
fn abnormal(step: &'static str, e: Exit) -> Option<StepError> {
    match e {
        Exit::Code(_) => None,
        Exit::Signal(_) => Some(StepError::Signalled {
            step,
            exit: e.describe(),
        }),
        Exit::Timeout => Some(StepError::TimedOut { step }),
        Exit::Interrupted => Some(StepError::Interrupted { step }),
    }
}

/// What the report says about how a step ran besides its exit: its log cut at the cap,
/// processes it left running (killed).
fn step_notes(step: &str, f: &process::Finished) -> String {
    let mut notes = String::new();
    if f.log_cut > 0 {
        notes += &format!(
            "note: {step}.log was cut: {} bytes of output over the log cap (HRR_HARNESS_LOG_CAP) were dropped\n",
            f.log_cut
        );
    }
    if f.stragglers > 0 {
        notes += &format!(
            "note: {step} left {} process(es) running; they were killed\n",
            f.stragglers
        );
    }
    notes
}

/// Why the attempt ends after a captured run that did not exit as the case expects,
/// from how the captured run ended (`under_capture`: its outcome and description) and
/// from the native run. `log_tail` gives the end of a step's log on one line.
fn diagnose(
    under_capture: (RawOutcome, String),
    native: Result<Exit, StepError>,
    expected: i32,
    log_tail: impl Fn(&str) -> String,
) -> StepError {
    let (outcome, under_capture) = under_capture;
    match native {
        Ok(e) if e == Exit::Code(expected) => StepError::CaptureChanged {
            outcome,
            under_capture,
            natively: e.describe(),
            log: log_tail("capture"),
        },
        Ok(e) => StepError::FailsNatively {
            native: e.describe(),
            expected,
            log: log_tail("native"),
        },
        Err(e) => StepError::NativeRun {
            native: Box::new(e),
            under_capture,
        },
    }
}

/// The attempt's outcome and message from its checks: the first failing check, or
/// which passed.
fn conclude(checks: &[CheckResult]) -> (RawOutcome, String) {
    match checks.iter().find(|c| !c.passed) {
        Some(f) => (RawOutcome::Fail, format!("{}: {}", f.name, f.detail)),
        None => (
            RawOutcome::Pass,
            format!(
                "{} check(s) passed: {}",
                checks.len(),
                checks
                    .iter()
                    .map(|c| c.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ),
    }
}

impl Attempt<'_> {
    pub(super) fn command(&self, program: &Path) -> Command {
        let mut c = crate::process::command(program);
        c.envs(&self.ctx.family.env);
        if let Some(g) = self.gpu {
            c.env(
                self.ctx.family.vendor.visible_devices_var(),
                g.select.clone(),
            );
        }
        c
    }

    /// The case's program: `command`, plus HRR_MODULE_FILE when the case has a module
    /// and HRR_CASE_LIBRARY when it has a library.
    fn program(&self, binary: &Path) -> Command {
        let mut c = self.command(binary);
        if let Some(CaseBuild::Built {
            module, library, ..
        }) = self.ctx.built.cases.get(&self.rc.case.name)
        {
            if let Some(m) = module {
                c.env("HRR_MODULE_FILE", m);
            }
            if let Some(l) = library {
                c.env("HRR_CASE_LIBRARY", l);
            }
        }
        c
    }

    /// Runs one step's process, its output in `STEP.log`; the attempt's output says when
    /// the log was cut at its cap or the step left processes running.
    pub(super) fn run(&mut self, step: &'static str, cmd: Command) -> Result<Exit, StepError> {
        self.run_step(step, cmd, false).map(|s| s.exit)
    }

    /// As [`Attempt::run`], keeping the standard output when `keep_stdout` (empty when
    /// not kept).
    fn run_step(
        &mut self,
        step: &'static str,
        cmd: Command,
        keep_stdout: bool,
    ) -> Result<Seen, StepError> {
        let log = self.dir.join(format!("{step}.log"));
        super::heartbeat::step(&self.rc.case.name, step);
        let f = if keep_stdout {
            process::run_logged_keeping_stdout(cmd, &log, self.deadline)
        } else {
            process::run_logged(cmd, &log, self.deadline)
        }
        .map_err(|source| StepError::CannotStart { step, source })?;
        self.output.push_str(&step_notes(step, &f));
        match abnormal(step, f.exit) {
            Some(e) => Err(e),
            None => Ok(Seen {
                exit: f.exit,
                stdout: f.stdout.unwrap_or_default(),
            }),
        }
    }

    /// The program run natively (in a directory of its own), once per build of the case:
    /// a later attempt or run of the same binary reuses it.
    fn native(&mut self, binary: &Path) -> Result<Seen, StepError> {
        let mut env: Vec<String> = self
            .ctx
            .family
            .env
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        env.sort();
        env.push(format!("family={}", self.ctx.family.name));
        if let Some(g) = self.gpu {
            env.push(format!("gpu={}", g.select));
        }
        let cache = NativeCache::new(
            &self.ctx.built.dir,
            &self.rc.case.name,
            binary,
            env.join("\n"),
        );
        if let Some(seen) = cache.load() {
            self.output
                .push_str("note: the native run of this build of the case was reused\n");
            return Ok(seen);
        }
        let cwd = self.dir.join("native-cwd");
        std::fs::create_dir_all(&cwd).map_err(|source| StepError::CannotStart {
            step: "native",
            source,
        })?;
        let mut native = self.program(binary);
        native.current_dir(&cwd);
        let seen = self.run_step("native", native, true)?;
        cache.store(&seen);
        Ok(seen)
    }

    /// The end of `STEP.log`, on one line.
    fn log_tail(&self, step: &str, max: usize) -> String {
        process::tail(&self.dir.join(format!("{step}.log")), max).replace('\n', " | ")
    }

    /// Step 1, the program natively (cached per build) and under capture; returns the
    /// archive. A captured run that does not exit as the case expects ends the attempt,
    /// its error telling a broken program (the native run fails too) from a capture that
    /// changed its behaviour. Otherwise the `unchanged` check compares the two runs.
    fn capture(&mut self, binary: &Path) -> Result<PathBuf, StepError> {
        let archive = self.dir.join("archive");
        let expected = self.rc.case.exit_code;
        let native = self.native(binary);
        let mut cap = self.program(binary);
        // The archive is the case's scratch output, thrown away when it passes: it needs
        // no durability against a machine crash, so its writes are not fsync'd.
        cap.current_dir(&self.dir)
            .env("HRR_CAPTURE_OUTPUT", &archive)
            .env("HRR_CAPTURE_FSYNC", "off")
            .env("LD_PRELOAD", &self.ctx.built.capture);
        if let Some(range) = &self.rc.case.capture_range {
            // One profiler range, after a snapshot of the memory live at its start.
            cap.env("HRR_CAPTURE_RANGE", range);
        }
        let captured = self.run_step("capture", cap, true);
        let under_capture = match &captured {
            Ok(s) if s.exit == Exit::Code(expected) => None,
            Err(StepError::TimedOut { step }) => return Err(StepError::TimedOut { step }),
            Ok(s) => Some((RawOutcome::Fail, s.exit.describe())),
            Err(e) => Some((e.outcome(), e.to_string())),
        };
        if let Some(under_capture) = under_capture {
            let native = native.map(|s| s.exit);
            return Err(diagnose(under_capture, native, expected, |step| {
                self.log_tail(step, 300)
            }));
        }
        // Both ran: did capture change anything the program shows?
        if let Ok(captured) = &captured {
            let check = match &native {
                Ok(n) => unchanged::compare(captured, n, &self.rc.case.stdout_varies),
                Err(e) => CheckResult {
                    name: "unchanged".into(),
                    passed: false,
                    detail: format!("no native run to compare with: {e}"),
                },
            };
            self.checks.push(check);
        }
        if !archive.join("manifest.json").is_file() {
            return Err(StepError::NoArchive {
                log: self.log_tail("capture", 400),
            });
        }
        Ok(archive)
    }

    /// The GPU case's steps; Err ends the attempt early.
    fn gpu_steps(&mut self, binary: &Path) -> Result<(), StepError> {
        let archive = self.capture(binary)?;
        self.replay_steps(&archive)
    }

    /// An archive case's steps: its packed archive (checked against the matrix's SHA-256
    /// before the attempt) unpacked into the attempt's directory, then replayed and
    /// checked as a GPU case's capture is.
    fn archive_steps(&mut self, hrrz: &Path) -> Result<(), StepError> {
        let archive = self.dir.join("archive");
        super::heartbeat::step(&self.rc.case.name, "unpack");
        hrr_archive::pack::unpack(hrrz, &archive, Limits::default()).map_err(|source| {
            StepError::Unpack {
                hrrz: hrrz.to_path_buf(),
                source,
            }
        })?;
        self.replay_steps(&archive)
    }

    /// Replays `archive` (and its blob-edit copy) and runs the case's checks.
    fn replay_steps(&mut self, archive: &Path) -> Result<(), StepError> {
        let rc = self.rc;
        let archive = archive.to_path_buf();
        // 2. The blob-edit check's copy: one expected output changed by one byte.
        let edited = rc
            .case
            .checks
            .contains(&Check::BlobEdit)
            .then(|| self.edited_copy(&archive));
        // 3. Replay: the archive, and the edited copy in the same process.
        let edited_dir = self.dir.join("archive-edited");
        let mut to_replay = vec![archive.as_path()];
        if let Some(Ok(_)) = &edited {
            to_replay.push(&edited_dir);
        }
        let declared = rc.case.unstable;
        let runs = declared.map_or(1, |u| u.runs);
        let mut results = self.replay("replay", &to_replay, runs)?.into_iter();
        let r = results.next().ok_or(StepError::EmptyResult)?;
        let edited_replay = results.next();
        self.excluded = stability::excluded(&r, declared.as_ref());
        self.declared = checks::declared_matches(&r);
        // 4. The case's checks, from the typed results.
        for check in &rc.case.checks {
            let result = match check {
                Check::Roundtrip => checks::roundtrip(&r),
                Check::FailedCall => checks::failed_call(&r),
                Check::Refused(apis) => checks::refused(&r, apis),
                Check::Processes(n) => {
                    let found =
                        Archive::open(&archive, Limits::default()).map(|a| a.processes.len());
                    checks::processes(found, *n)
                }
                Check::BlobEdit => checks::blob_edit(edited.as_ref(), edited_replay.as_ref()),
                Check::Stability => stability::stability(&r, declared.as_ref()),
                Check::Reproduces(want) => checks::reproduces(&r, want.error.code()),
                Check::ExitZero => continue,
            };
            self.checks.push(result);
        }
        if declared.is_none()
            && r.failures
                .iter()
                .any(|f| f.kind == FailureKind::D2hMismatch)
        {
            self.diagnose_mismatch(&archive);
        }
        Ok(())
    }

    /// A D2H mismatch in a case that declares no instability: the archive is replayed
    /// `DIAGNOSIS_RUNS` times, and bytes that differ between those replays are named in
    /// the roundtrip check's detail as the program's own nondeterminism. The case fails
    /// either way; a diagnosis replay that fails to run changes nothing.
    fn diagnose_mismatch(&mut self, archive: &Path) {
        let found = match self.replay("diagnosis", &[archive], stability::DIAGNOSIS_RUNS) {
            Ok(rs) => rs.first().and_then(stability::diagnosis),
            Err(e) => {
                self.output
                    .push_str(&format!("note: the diagnosis replay did not run: {e}\n"));
                None
            }
        };
        if let Some(text) = found {
            for c in self.checks.iter_mut().filter(|c| c.name == "roundtrip") {
                c.detail = format!("{}; {text}", c.detail);
            }
        }
    }

    /// Copies the archive (hard links: capture never rewrites a file in place, and the
    /// edit replaces the files it changes) and changes one byte of one expected output:
    /// byte `BLOB_EDIT_OFFSET`, or byte 0 of an output too short for it.
    fn edited_copy(&self, archive: &Path) -> Result<EditedOutput, EditCopyError> {
        let edited = self.dir.join("archive-edited");
        link_tree(archive, &edited)?;
        let limits = Limits::default();
        match edit_expected_output(&edited, None, BLOB_EDIT_OFFSET, limits) {
            Ok(e) => Ok(e),
            // The output is shorter than the offset.
            Err(ArchiveError::OffsetOutside { .. }) => {
                edit_expected_output(&edited, None, 0, limits)
            }
            Err(e) => Err(e),
        }
        .map_err(EditCopyError::from)
    }

    fn host_steps(&mut self) -> Result<(), StepError> {
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
        self.checks.push(CheckResult {
            name: "exit-zero".into(),
            passed: exit == Exit::Code(0),
            detail: format!("`{}`: {}", case.command.join(" "), exit.describe()),
        });
        Ok(())
    }
}

/// Mirrors a directory tree with hard links (a copy where linking fails, e.g. across
/// file systems).
fn link_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    // walkdir yields each directory before what it holds, the root first.
    for e in walkdir::WalkDir::new(from) {
        let e = e?;
        let Ok(rel) = e.path().strip_prefix(from) else {
            continue;
        };
        let dest = to.join(rel);
        let t = e.file_type();
        if t.is_dir() {
            std::fs::create_dir_all(&dest)?;
        } else if t.is_file() && std::fs::hard_link(e.path(), &dest).is_err() {
            std::fs::copy(e.path(), dest)?;
        }
    }
    Ok(())
}

/// Runs one attempt of `rc` in `dir` (emptied first).
pub(super) fn attempt(
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
            excluded: None,
            declared: None,
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
        excluded: None,
        declared: None,
    };
    let early = match (rc.case.kind, binary) {
        (CaseKind::Host, _) => a.host_steps(),
        (CaseKind::Gpu, Some(b)) => a.gpu_steps(b),
        (CaseKind::Gpu, None) => Err(StepError::NoBinary),
        (CaseKind::Archive, Some(hrrz)) => a.archive_steps(hrrz),
        (CaseKind::Archive, None) => Err(StepError::NoBinary),
    };
    let (outcome, message) = match early {
        Err(e) => (e.outcome(), e.to_string()),
        Ok(()) => conclude(&a.checks),
    };
    // A pass says what it did not compare.
    let message = match (&a.excluded, outcome) {
        (Some(e), RawOutcome::Pass) => format!("{message}; {}", e.line()),
        _ => message,
    };
    let message = match (&a.declared, outcome) {
        (Some(d), RawOutcome::Pass) => format!(
            "{message}; {} check(s) matched as {} only",
            d.checks, d.comparison
        ),
        _ => message,
    };
    AttemptResult {
        outcome,
        duration_s: start.elapsed().as_secs_f64(),
        message,
        checks: a.checks,
        output: a.output,
        excluded: a.excluded,
        declared: a.declared,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tail(step: &str) -> String {
        format!("end of {step}.log")
    }

    #[test]
    fn a_program_that_passes_natively_blames_capture() {
        let e = diagnose(
            (RawOutcome::Fail, "exit 1".into()),
            Ok(Exit::Code(0)),
            0,
            tail,
        );
        assert_eq!(e.outcome(), RawOutcome::Fail);
        assert_eq!(
            e.to_string(),
            "capture changed the program's behaviour: exit 1 under capture, exit 0 natively; see capture.log: end of capture.log"
        );
        // A crash under capture stays a crash.
        let e = diagnose(
            (
                RawOutcome::Crash,
                "capture: killed by signal 11 (SIGSEGV)".into(),
            ),
            Ok(Exit::Code(0)),
            0,
            tail,
        );
        assert_eq!(e.outcome(), RawOutcome::Crash);
    }

    #[test]
    fn a_program_that_fails_natively_too_is_broken() {
        let e = diagnose(
            (RawOutcome::Fail, "exit 1".into()),
            Ok(Exit::Code(1)),
            0,
            tail,
        );
        assert_eq!(e.outcome(), RawOutcome::Fail);
        assert_eq!(
            e.to_string(),
            "the program fails without capture too: native run exit 1 (the case expects exit 0); see native.log: end of native.log"
        );
        let e = diagnose(
            (RawOutcome::Fail, "exit 1".into()),
            Err(StepError::Interrupted { step: "native" }),
            0,
            tail,
        );
        assert_eq!(e.outcome(), RawOutcome::Crash);
        assert_eq!(
            e.to_string(),
            "native run: native: interrupted (and under capture: exit 1)"
        );
    }

    #[test]
    fn abnormal_exits_become_step_errors() {
        assert!(abnormal("capture", Exit::Code(3)).is_none());
        let e = abnormal("capture", Exit::Timeout).unwrap();
        assert_eq!(
            (e.outcome(), e.to_string()),
            (RawOutcome::Timeout, "capture: timed out".to_string())
        );
        let e = abnormal("replay", Exit::Signal(9)).unwrap();
        assert_eq!(e.outcome(), RawOutcome::Crash);
        assert!(
            e.to_string().starts_with("replay: killed by signal 9"),
            "{e}"
        );
    }

    #[test]
    fn a_cut_log_and_stragglers_are_noted() {
        let f = |log_cut, stragglers| process::Finished {
            exit: Exit::Code(0),
            duration: std::time::Duration::ZERO,
            log_cut,
            stragglers,
            stdout: None,
        };
        assert_eq!(step_notes("command", &f(0, 0)), "");
        let n = step_notes("command", &f(1234, 2));
        assert!(n.contains("command.log was cut: 1234 bytes"), "{n}");
        assert!(n.contains("command left 2 process(es) running"), "{n}");
    }

    #[test]
    fn the_first_failing_check_decides() {
        let c = |name: &str, passed| CheckResult {
            name: name.into(),
            passed,
            detail: format!("{name} detail"),
        };
        assert_eq!(
            conclude(&[c("roundtrip", true), c("blob-edit", true)]),
            (
                RawOutcome::Pass,
                "2 check(s) passed: roundtrip, blob-edit".into()
            )
        );
        assert_eq!(
            conclude(&[c("roundtrip", true), c("refused", false), c("x", false)]),
            (RawOutcome::Fail, "refused: refused detail".into())
        );
    }

    #[test]
    fn link_tree_mirrors_nested_directories() {
        let t = tempfile::tempdir().unwrap();
        let from = t.path().join("a");
        std::fs::create_dir_all(from.join("pid-1/blobs/ab")).unwrap();
        std::fs::write(from.join("manifest.json"), "{}").unwrap();
        std::fs::write(from.join("pid-1/blobs/ab/x.blob"), "b").unwrap();
        let to = t.path().join("b");
        link_tree(&from, &to).unwrap();
        assert_eq!(
            std::fs::read(to.join("pid-1/blobs/ab/x.blob")).unwrap(),
            b"b"
        );
        assert_eq!(std::fs::read(to.join("manifest.json")).unwrap(), b"{}");
    }
}
