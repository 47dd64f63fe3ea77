//! `hrr-harness control`: negative controls. For each control, its fix is removed in a
//! temporary git worktree of HEAD, capture and replay are built from it, and the
//! control's guard cases run against that build: they must fail, or the fix is untested.
//! The guard cases must pass on the unmodified tree first (the baseline).
//!
//! One control is three steps: remove (`remove.rs`) -> build (`build.rs`) -> run the
//! cases, and a pure classification of what they found (`classify.rs`). Controls come
//! from `spec.rs`; what a run writes (`outcomes.json` as each control finishes, plain
//! lists a person can grep, per-control logs and the removed diff, JUnit and Markdown)
//! from `report.rs`. Worktrees are removed afterwards, also when interrupted.

mod build;
mod classify;
mod outcome;
pub mod publish;
mod remove;
mod report;
mod spec;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use hrr_matrix::{Disposition, Expectation, Family, Matrix, ResolvedCase};
use hrr_reports::{CaseResult, Status};

use crate::builder::Built;
use crate::error::HarnessError;
use crate::gpu::Gpu;
use crate::process;
use crate::repo::SourceTree;
use crate::runner::{self, RunContext};

pub use classify::exit_code;
pub use outcome::{GuardResult, Outcomes};
pub use report::{junit, markdown};
pub use spec::{controls_from_commits, CommitsError, ControlSpec};

use classify::{classify, Attempt, GuardRuns};
use outcome::ControlResult;

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

    /// Runs `names` against `built`, each expected to pass, results and logs under `out`.
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
                crate::out!(
                    "    {:<14} {:<24} {}",
                    r.status.as_str().to_uppercase(),
                    r.case,
                    r.message.lines().next().unwrap_or("")
                );
            },
        )
    }

    /// Runs the baseline, then every control unless the baseline failed; `outcomes.json`
    /// and the lists are rewritten after the baseline and after each control.
    pub fn run(&self, specs: &[ControlSpec]) -> Result<Outcomes, HarnessError> {
        std::fs::create_dir_all(&self.output)
            .map_err(|e| HarnessError::usage(format!("{}: {e}", self.output.display())))?;
        for f in report::FILES {
            let _ = std::fs::remove_file(self.output.join(f));
        }
        let mut all_cases: Vec<String> = Vec::new();
        for s in specs {
            for c in s.cases() {
                if !all_cases.contains(&c) {
                    all_cases.push(c);
                }
            }
        }
        crate::out!("baseline: the unmodified tree, {} case(s)", all_cases.len());
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
        let baseline_passed = base.iter().all(|r| r.status == Status::Pass);
        let mut outcomes = Outcomes {
            family: self.family.name.clone(),
            source_revision: self.tree.revision(),
            baseline: base.iter().map(GuardResult::from).collect(),
            baseline_passed,
            controls: Vec::new(),
        };
        report::write_outcomes(&self.output, &outcomes);
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
            crate::out!("control {}: {}", spec.name, spec.removal);
            let r = self.run_one(spec, &wt_root, &limit);
            crate::out!("  => {} {}", r.outcome.as_str().to_uppercase(), r.summary);
            outcomes.controls.push(r);
            report::write_outcomes(&self.output, &outcomes);
        }
        Ok(outcomes)
    }

    /// One control: its steps, then their classification.
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
        let attempt = self.attempt(spec, wt_root, &dir, limit);
        let verdict = classify(&attempt);
        let (guards, collateral) = match attempt {
            Attempt::Ran(r) => (r.guards, r.collateral),
            _ => (vec![], vec![]),
        };
        ControlResult {
            name: spec.name.clone(),
            removal: spec.removal.clone(),
            outcome: verdict.outcome,
            summary: verdict.summary,
            guards,
            collateral,
            duration_s: start.elapsed().as_secs_f64(),
            dir: dir.display().to_string(),
        }
    }

    /// Remove -> build -> run, stopping at the first step that fails; the worktree is
    /// gone when this returns.
    fn attempt(
        &self,
        spec: &ControlSpec,
        wt_root: &Path,
        dir: &Path,
        limit: &dyn Fn(&str) -> Duration,
    ) -> Attempt {
        let wt_path = wt_root.join(format!("{}-{}", spec.name, std::process::id()));
        let wt = match remove::remove_fix(&self.tree.root, &spec.removal, &wt_path, dir) {
            Ok(wt) => wt,
            Err(e) => return Attempt::NotRemoved(e),
        };
        let built = match self.build_without_fix(spec, wt.path(), dir) {
            Ok(b) => b,
            Err(stop) => return Attempt::NotBuilt(stop),
        };
        if let Some(out) = &self.build_only {
            let to = out.join(&spec.name);
            let copied = build::copy_tools(&built, &to);
            return Attempt::BuiltOnly { dir: to, copied };
        }
        let runs = self.run_cases(&built, &spec.cases(), dir, limit);
        drop(wt);
        Attempt::Ran(GuardRuns::of(spec, &runs, process::interrupted()))
    }
}
