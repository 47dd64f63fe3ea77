//! `hrr-harness control`: negative controls. For each control, a temporary git worktree of
//! HEAD with one fix removed (a commit reverted, or a patch applied), capture and replay
//! built from it, and the control's guard cases run against that build: they must fail,
//! or the fix is untested. The guard cases must pass on the unmodified tree first.
//!
//! Outcomes are written as each control finishes (`outcomes.json`), with plain lists a
//! person can grep (`caught.txt`, `missed.txt`, `unviable.txt`, `timeout.txt`), per-control
//! logs and the removed diff, JUnit (one testcase per control) and a Markdown summary.
//! Worktrees are removed afterwards, also when interrupted.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use hrr_matrix::{Control, Disposition, Expectation, Family, Matrix, ResolvedCase};
use hrr_reports::{CaseResult, RunReport, Status, Totals};
use serde::{Deserialize, Serialize};

use crate::builder::{self, BuildRequest, Built};
use crate::error::HarnessError;
use crate::gpu::Gpu;
use crate::process;
use crate::repo::SourceTree;
use crate::runner::{self, RunContext};

/// Exit codes of `hrr-harness control`.
pub mod exit {
    pub const ALL_CAUGHT: u8 = 0;
    pub const MISSED: u8 = 3;
    pub const BASELINE_FAILED: u8 = 4;
    pub const UNVIABLE: u8 = 5;
    pub const TIMEOUT: u8 = 6;
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Every guard case failed without the fix.
    Caught,
    /// Some guard case still passed: the fix is untested by it.
    Missed,
    /// The fix could not be removed (conflict) or the tree did not build without it.
    Unviable,
    /// A guard case ran past its limit (scaled from the baseline).
    Timeout,
    /// Something else went wrong (the harness could not run the control).
    Error,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Caught => "caught",
            Outcome::Missed => "missed",
            Outcome::Unviable => "unviable",
            Outcome::Timeout => "timeout",
            Outcome::Error => "error",
        }
    }
}

/// How the fix is removed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Removal {
    Revert { commit: String },
    Patch { file: String, reverse: bool },
}

/// One control to run (from the matrix, or from a commit's `Guarded-by:` trailer).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ControlSpec {
    pub name: String,
    pub removal: Removal,
    pub guards: Vec<String>,
    pub keep_passing: Vec<String>,
}

impl ControlSpec {
    pub fn from_matrix(c: &Control) -> ControlSpec {
        let removal = match (&c.revert, &c.patch) {
            (Some(commit), _) => Removal::Revert {
                commit: commit.clone(),
            },
            (None, Some(file)) => Removal::Patch {
                file: file.clone(),
                reverse: c.reverse,
            },
            (None, None) => Removal::Patch {
                file: String::new(),
                reverse: false,
            },
        };
        ControlSpec {
            name: c.name.clone(),
            removal,
            guards: c.guards.clone(),
            keep_passing: c.keep_passing.clone(),
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GuardResult {
    pub case: String,
    pub status: Status,
    pub message: String,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ControlResult {
    pub name: String,
    pub removal: Removal,
    pub outcome: Outcome,
    /// One line: what failed, what still passed, or why it could not run.
    pub summary: String,
    pub guards: Vec<GuardResult>,
    /// keep_passing cases that failed without the fix (the control is not narrow).
    pub collateral: Vec<GuardResult>,
    pub duration_s: f64,
    /// Logs, the removed diff and the build of this control.
    pub dir: String,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Outcomes {
    pub family: String,
    pub source_revision: String,
    pub baseline: Vec<GuardResult>,
    pub baseline_passed: bool,
    pub controls: Vec<ControlResult>,
}

/// Finds `Guarded-by: A, B` trailers in the commits of `range` (BASE..HEAD), one control
/// per commit, reverting that commit. Unknown case names are an error.
pub fn controls_from_commits(
    root: &Path,
    range: &str,
    m: &Matrix,
) -> Result<Vec<ControlSpec>, HarnessError> {
    if !range.contains("..") {
        return Err(HarnessError::usage(format!(
            "--commits {range}: expected BASE..HEAD"
        )));
    }
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["log", "--reverse", "--format=%H%x00%s%x00%B%x1e", range])
        .output()
        .map_err(|e| HarnessError::failed(format!("git log: {e}")))?;
    if !out.status.success() {
        return Err(HarnessError::usage(format!(
            "--commits {range}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let known: BTreeSet<&str> = m.cases.iter().map(|c| c.name.as_str()).collect();
    let mut specs = Vec::new();
    for rec in String::from_utf8_lossy(&out.stdout).split('\x1e') {
        let mut parts = rec.trim_start_matches('\n').splitn(3, '\0');
        let (Some(hash), Some(subject), Some(body)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let guards = parse_trailer(body);
        if guards.is_empty() {
            continue;
        }
        let unknown: Vec<&String> = guards
            .iter()
            .filter(|g| !known.contains(g.as_str()))
            .collect();
        if !unknown.is_empty() {
            return Err(HarnessError::usage(format!(
                "commit {} ({subject}): Guarded-by names unknown case(s): {}",
                &hash[..hash.len().min(12)],
                unknown
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        specs.push(ControlSpec {
            name: format!("commit-{}", &hash[..hash.len().min(12)]),
            removal: Removal::Revert {
                commit: hash.to_string(),
            },
            guards,
            keep_passing: vec![],
        });
    }
    Ok(specs)
}

/// Case names of every `Guarded-by:` line of a commit message (case-insensitive key,
/// names separated by commas or spaces).
pub fn parse_trailer(body: &str) -> Vec<String> {
    let mut names = Vec::new();
    for line in body.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        if key.trim().eq_ignore_ascii_case("guarded-by") {
            for n in value
                .split([',', ' ', '\t'])
                .map(str::trim)
                .filter(|s| !s.is_empty())
            {
                if !names.iter().any(|x| x == n) {
                    names.push(n.to_string());
                }
            }
        }
    }
    names
}

/// A worktree that is removed when dropped (normal end, error or interruption).
struct Worktree {
    repo: PathBuf,
    path: PathBuf,
}

impl Worktree {
    fn add(repo: &Path, path: &Path) -> Result<Worktree, String> {
        let out = Command::new("git")
            .arg("-C")
            .arg(repo)
            .args(["worktree", "add", "--detach", "--quiet"])
            .arg(path)
            .arg("HEAD")
            .output()
            .map_err(|e| format!("git worktree add: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "git worktree add: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(Worktree {
            repo: repo.to_path_buf(),
            path: path.to_path_buf(),
        })
    }
}

impl Drop for Worktree {
    fn drop(&mut self) {
        let _ = Command::new("git")
            .arg("-C")
            .arg(&self.repo)
            .args(["worktree", "remove", "--force"])
            .arg(&self.path)
            .output();
        let _ = std::fs::remove_dir_all(&self.path);
        let _ = Command::new("git")
            .arg("-C")
            .arg(&self.repo)
            .args(["worktree", "prune"])
            .output();
    }
}

fn git_in(dir: &Path, args: &[&str], log: &Path) -> Result<(), String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .map_err(|e| format!("git {}: {e}", args.join(" ")))?;
    let mut text = format!("$ git {}\n", args.join(" "));
    text.push_str(&String::from_utf8_lossy(&out.stdout));
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    let _ = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .and_then(|mut f| std::io::Write::write_all(&mut f, text.as_bytes()));
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "git {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .take(3)
                .collect::<Vec<_>>()
                .join(" | ")
        ))
    }
}

pub struct ControlRun<'a> {
    pub tree: &'a SourceTree,
    pub matrix: &'a Matrix,
    pub family: &'a Family,
    pub gpus: Vec<Gpu>,
    pub no_gpu_reason: String,
    pub output: PathBuf,
    pub build_root: PathBuf,
    pub tools_dir: Option<PathBuf>,
    pub cargo_target_dir: PathBuf,
    /// Guard limits: this many times the baseline duration...
    pub timeout_factor: f64,
    /// ...but never under this.
    pub timeout_floor: Duration,
    /// `--prebuilt DIR`: control NAME uses DIR/NAME's capture and replay instead of
    /// building them (for GPU machines without a Rust toolchain; made by `--build-only`).
    pub prebuilt: Option<PathBuf>,
    /// `--build-only DIR`: build each control's tools into DIR/NAME and run no case.
    pub build_only: Option<PathBuf>,
}

impl ControlRun<'_> {
    fn resolved(&self, name: &str, timeout: Duration) -> Option<ResolvedCase> {
        let case = self.matrix.cases.iter().find(|c| c.name == name)?;
        Some(ResolvedCase {
            case: case.clone(),
            disposition: Disposition::Run,
            expectation: Expectation::Pass,
            timeout,
            rule: None,
        })
    }

    fn run_cases(
        &self,
        built: &Built,
        names: &[String],
        out: &Path,
        timeouts: &dyn Fn(&str) -> Duration,
    ) -> Vec<CaseResult> {
        let ctx = RunContext {
            family: self.family,
            built,
            gpus: self.gpus.clone(),
            no_gpu_reason: self.no_gpu_reason.clone(),
            output: out.to_path_buf(),
            keep_archives: false,
            shard: "1/1".into(),
        };
        let cases: Vec<ResolvedCase> = names
            .iter()
            .filter_map(|n| self.resolved(n, timeouts(n)))
            .collect();
        runner::run_all(
            &ctx,
            &cases,
            self.gpus.len().max(1),
            |_| {},
            |r| {
                println!(
                    "    {:<14} {:<24} {}",
                    r.status.as_str().to_uppercase(),
                    r.case,
                    r.message.lines().next().unwrap_or("")
                );
            },
        )
    }

    fn build(
        &self,
        source: &SourceTree,
        tools_dir: Option<PathBuf>,
        only: Vec<String>,
    ) -> Result<Built, HarnessError> {
        builder::build(&BuildRequest {
            matrix: self.matrix,
            family: self.family,
            source,
            build_root: self.build_root.clone(),
            tools_dir,
            cargo_target_dir: self.cargo_target_dir.clone(),
            only: Some(only),
            verbose: false,
        })
    }

    /// Runs the baseline and every control; `on_outcome` sees each control as it finishes.
    pub fn run(&self, specs: &[ControlSpec]) -> Result<Outcomes, HarnessError> {
        std::fs::create_dir_all(&self.output)
            .map_err(|e| HarnessError::usage(format!("{}: {e}", self.output.display())))?;
        for f in [
            "outcomes.json",
            "caught.txt",
            "missed.txt",
            "unviable.txt",
            "timeout.txt",
            "junit.xml",
            "summary.md",
        ] {
            let _ = std::fs::remove_file(self.output.join(f));
        }
        let mut all_cases: Vec<String> = Vec::new();
        for s in specs {
            for c in s.guards.iter().chain(&s.keep_passing) {
                if !all_cases.contains(c) {
                    all_cases.push(c.clone());
                }
            }
        }
        println!("baseline: the unmodified tree, {} case(s)", all_cases.len());
        let baseline_built = self.build(self.tree, self.tools_dir.clone(), all_cases.clone())?;
        let base_dir = self.output.join("baseline");
        let _ = std::fs::remove_dir_all(&base_dir);
        let baseline_cases: &[String] = if self.build_only.is_some() {
            &[]
        } else {
            &all_cases
        };
        let base = self.run_cases(&baseline_built, baseline_cases, &base_dir, &|n| {
            self.matrix
                .cases
                .iter()
                .find(|c| c.name == n)
                .and_then(|c| c.timeout)
                .map(|t| t.0)
                .unwrap_or(hrr_matrix::resolve::DEFAULT_TIMEOUT)
        });
        let baseline: Vec<GuardResult> = base
            .iter()
            .map(|r| GuardResult {
                case: r.case.clone(),
                status: r.status,
                message: r.message.clone(),
            })
            .collect();
        let baseline_passed = base.iter().all(|r| r.status == Status::Pass);
        let mut outcomes = Outcomes {
            family: self.family.name.clone(),
            source_revision: self.tree.revision(),
            baseline,
            baseline_passed,
            controls: Vec::new(),
        };
        self.write_outcomes(&outcomes);
        if (!baseline_passed && self.build_only.is_none()) || process::interrupted() {
            return Ok(outcomes);
        }
        let limit = |n: &str| {
            let secs = base
                .iter()
                .find(|r| r.case == n)
                .map(|r| r.duration_s)
                .unwrap_or(0.0);
            Duration::from_secs_f64(secs * self.timeout_factor).max(self.timeout_floor)
        };
        let wt_root = self.build_root.join("worktrees");
        let _ = std::fs::create_dir_all(&wt_root);
        for spec in specs {
            if process::interrupted() {
                break;
            }
            println!("control {}: {}", spec.name, describe(&spec.removal));
            let r = self.run_one(spec, &wt_root, &limit);
            println!("  => {} {}", r.outcome.as_str().to_uppercase(), r.summary);
            outcomes.controls.push(r);
            self.write_outcomes(&outcomes);
        }
        Ok(outcomes)
    }

    fn run_one(
        &self,
        spec: &ControlSpec,
        wt_root: &Path,
        limit: &dyn Fn(&str) -> Duration,
    ) -> ControlResult {
        let start = Instant::now();
        let dir = self.output.join("controls").join(&spec.name);
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::create_dir_all(&dir);
        let log = dir.join("control.log");
        let mut result = ControlResult {
            name: spec.name.clone(),
            removal: spec.removal.clone(),
            outcome: Outcome::Error,
            summary: String::new(),
            guards: vec![],
            collateral: vec![],
            duration_s: 0.0,
            dir: dir.display().to_string(),
        };
        let finish = |mut r: ControlResult, outcome: Outcome, summary: String| {
            r.outcome = outcome;
            r.summary = summary;
            r.duration_s = start.elapsed().as_secs_f64();
            r
        };
        let wt_path = wt_root.join(format!("{}-{}", spec.name, std::process::id()));
        let _ = std::fs::remove_dir_all(&wt_path);
        let wt = match Worktree::add(&self.tree.root, &wt_path) {
            Ok(w) => w,
            Err(e) => return finish(result, Outcome::Error, e),
        };
        let removed = match &spec.removal {
            Removal::Revert { commit } => {
                git_in(&wt.path, &["revert", "--no-commit", commit], &log)
            }
            Removal::Patch { file, reverse } => {
                let p = self.tree.root.join(file);
                let p = p.to_string_lossy().into_owned();
                let mut args = vec!["apply"];
                if *reverse {
                    args.push("-R");
                }
                args.push(&p);
                git_in(&wt.path, &args, &log)
            }
        };
        if let Err(e) = removed {
            return finish(
                result,
                Outcome::Unviable,
                format!("the fix could not be removed: {e} (log: {})", log.display()),
            );
        }
        if let Ok(o) = Command::new("git")
            .arg("-C")
            .arg(&wt.path)
            .args(["diff", "HEAD"])
            .output()
        {
            let _ = std::fs::write(dir.join("removed.diff"), &o.stdout);
        }
        let names: Vec<String> = spec
            .guards
            .iter()
            .chain(&spec.keep_passing)
            .cloned()
            .collect();
        let source = SourceTree::at(&wt.path);
        let prebuilt = self.prebuilt.as_ref().map(|d| d.join(&spec.name));
        if let Some(p) = &prebuilt {
            if !p.join("hrr-replay").is_file() {
                return finish(
                    result,
                    Outcome::Error,
                    format!(
                        "--prebuilt: {} has no hrr-replay (make it with --build-only)",
                        p.display()
                    ),
                );
            }
        }
        let built = match self.build(&source, prebuilt, names.clone()) {
            Ok(b) => b,
            Err(HarnessError::Interrupted) => {
                return finish(result, Outcome::Error, "interrupted".into())
            }
            Err(e) => {
                let _ = std::fs::write(dir.join("build.log"), e.to_string());
                return finish(
                    result,
                    Outcome::Unviable,
                    format!(
                        "the tree does not build without the fix: {}",
                        first_line(&e.to_string())
                    ),
                );
            }
        };
        if let Some((case, why)) = built.cases.iter().find_map(|(n, b)| match b {
            builder::CaseBuild::Failed { message, .. } => Some((n.clone(), message.clone())),
            _ => None,
        }) {
            return finish(
                result,
                Outcome::Unviable,
                format!("case {case} does not build without the fix: {why}"),
            );
        }
        if let Some(out) = &self.build_only {
            let to = out.join(&spec.name);
            let copied = std::fs::create_dir_all(&to)
                .and_then(|_| std::fs::copy(&built.capture, to.join("libhrr_capture.so")))
                .and_then(|_| std::fs::copy(&built.replay, to.join("hrr-replay")));
            return match copied {
                Ok(_) => finish(
                    result,
                    Outcome::Error,
                    format!("built only (--build-only): tools in {}", to.display()),
                ),
                Err(e) => finish(
                    result,
                    Outcome::Error,
                    format!("--build-only {}: {e}", to.display()),
                ),
            };
        }
        let runs = self.run_cases(&built, &names, &dir, limit);
        let gr = |r: &CaseResult| GuardResult {
            case: r.case.clone(),
            status: r.status,
            message: r.message.clone(),
        };
        result.guards = runs
            .iter()
            .filter(|r| spec.guards.contains(&r.case))
            .map(gr)
            .collect();
        result.collateral = runs
            .iter()
            .filter(|r| spec.keep_passing.contains(&r.case) && r.status != Status::Pass)
            .map(gr)
            .collect();
        drop(wt);
        let passed: Vec<&GuardResult> = result
            .guards
            .iter()
            .filter(|g| matches!(g.status, Status::Pass | Status::Flake | Status::Skip))
            .collect();
        let timed_out: Vec<&GuardResult> = result
            .guards
            .iter()
            .filter(|g| g.status == Status::Timeout)
            .collect();
        let collateral = if result.collateral.is_empty() {
            String::new()
        } else {
            format!(
                "; and {} case(s) that must keep passing failed: {}",
                result.collateral.len(),
                result
                    .collateral
                    .iter()
                    .map(|g| g.case.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        if process::interrupted() {
            return finish(result, Outcome::Error, "interrupted".into());
        }
        if !passed.is_empty() {
            let s = format!(
                "still passed without the fix: {} (the fix is untested by them){collateral}",
                passed
                    .iter()
                    .map(|g| g.case.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            finish(result, Outcome::Missed, s)
        } else if !timed_out.is_empty() {
            let s = format!(
                "timed out without the fix: {}{collateral}",
                timed_out
                    .iter()
                    .map(|g| g.case.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            finish(result, Outcome::Timeout, s)
        } else {
            let s = format!(
                "every guard failed: {}{collateral}",
                result
                    .guards
                    .iter()
                    .map(|g| format!("{} ({})", g.case, first_line(&g.message)))
                    .collect::<Vec<_>>()
                    .join("; ")
            );
            finish(result, Outcome::Caught, s)
        }
    }

    fn write_outcomes(&self, o: &Outcomes) {
        if let Ok(d) = serde_json::to_vec_pretty(o) {
            let _ = hrr_reports::result::write_atomic(&self.output.join("outcomes.json"), &d);
        }
        for outcome in [
            Outcome::Caught,
            Outcome::Missed,
            Outcome::Unviable,
            Outcome::Timeout,
        ] {
            let lines: String = o
                .controls
                .iter()
                .filter(|c| c.outcome == outcome)
                .map(|c| format!("{}\n", c.name))
                .collect();
            let _ = std::fs::write(self.output.join(format!("{}.txt", outcome.as_str())), lines);
        }
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

pub fn describe(r: &Removal) -> String {
    match r {
        Removal::Revert { commit } => format!("revert {}", &commit[..commit.len().min(12)]),
        Removal::Patch {
            file,
            reverse: false,
        } => format!("apply {file}"),
        Removal::Patch {
            file,
            reverse: true,
        } => format!("apply {file} in reverse"),
    }
}

/// The exit code for a finished set of outcomes.
pub fn exit_code(o: &Outcomes) -> u8 {
    let has = |x: Outcome| o.controls.iter().any(|c| c.outcome == x);
    if !o.baseline_passed {
        exit::BASELINE_FAILED
    } else if has(Outcome::Missed) {
        exit::MISSED
    } else if has(Outcome::Timeout) {
        exit::TIMEOUT
    } else if has(Outcome::Unviable) || has(Outcome::Error) {
        exit::UNVIABLE
    } else {
        exit::ALL_CAUGHT
    }
}

/// The Markdown table of outcomes (also what a pull request gets).
pub fn markdown(o: &Outcomes) -> String {
    let mut s = format!("## hrr-harness negative controls: {}\n\n", o.family);
    if !o.baseline_passed {
        s.push_str("**Baseline failed**: the guard cases must pass on the unmodified tree before a control proves anything.\n\n| case | status | detail |\n| --- | --- | --- |\n");
        for b in &o.baseline {
            s.push_str(&format!(
                "| {} | {} | {} |\n",
                b.case,
                b.status,
                first_line(&b.message).replace('|', "\\|")
            ));
        }
        return s;
    }
    let count = |x: Outcome| o.controls.iter().filter(|c| c.outcome == x).count();
    s.push_str(&format!(
        "{}: {} caught, {} missed, {} unviable, {} timeout, {} error (revision `{}`)\n\n| control | removes | outcome | detail |\n| --- | --- | --- | --- |\n",
        if exit_code(o) == 0 { "**PASS**" } else { "**FAIL**" },
        count(Outcome::Caught),
        count(Outcome::Missed),
        count(Outcome::Unviable),
        count(Outcome::Timeout),
        count(Outcome::Error),
        o.source_revision
    ));
    for c in &o.controls {
        let mut d = c.summary.replace('|', "\\|");
        if d.len() > 400 {
            let mut cut = 400;
            while !d.is_char_boundary(cut) {
                cut -= 1;
            }
            d.truncate(cut);
            d.push('…');
        }
        s.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            c.name,
            describe(&c.removal),
            c.outcome.as_str(),
            d
        ));
    }
    s
}

/// JUnit: one testcase per control, classname `controls-FAMILY`; a missed control is a
/// failure, an unviable one an error.
pub fn junit(o: &Outcomes) -> String {
    let family = format!("controls-{}", o.family);
    let cases: Vec<CaseResult> = o
        .controls
        .iter()
        .map(|c| CaseResult {
            family: family.clone(),
            shard: "1/1".into(),
            case: c.name.clone(),
            status: match c.outcome {
                Outcome::Caught => Status::Pass,
                Outcome::Missed => Status::Fail,
                Outcome::Timeout => Status::Timeout,
                Outcome::Unviable | Outcome::Error => Status::Crash,
            },
            duration_s: c.duration_s,
            message: format!("{}: {}", c.outcome.as_str(), c.summary),
            attempts: vec![],
            artifacts: Some(c.dir.clone()),
        })
        .collect();
    let report = RunReport {
        tool_version: env!("CARGO_PKG_VERSION").into(),
        source_revision: o.source_revision.clone(),
        families: vec![family],
        shard: "1/1".into(),
        gpus: vec![],
        hostname: String::new(),
        started_unix: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
        duration_s: o.controls.iter().map(|c| c.duration_s).sum(),
        totals: Totals::of(&cases),
        cases,
    };
    hrr_reports::junit::render(&[&report])
}

#[cfg(test)]
mod tests {
    use super::parse_trailer;

    #[test]
    fn trailers_are_parsed_from_commit_messages() {
        let body = "Fix pinned snapshots\n\nLonger text: with a colon.\n\nGuarded-by: PinnedHostRoundtrip, PinnedHostSnapshotCap\nguarded-by:   other  third\nSigned-off-by: A <a@b>\n";
        assert_eq!(
            parse_trailer(body),
            vec![
                "PinnedHostRoundtrip",
                "PinnedHostSnapshotCap",
                "other",
                "third"
            ]
        );
        assert!(parse_trailer("no trailer here\nGuarded by: x\n").is_empty());
    }
}
