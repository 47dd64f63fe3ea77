//! `hrr-harness run`: which cases (name globs, tags, an earlier run's unexpected cases, the
//! shard, dealt round robin or by earlier durations), whether this machine may run them
//! (the family's GPUs as this process sees them; none is an infrastructure error naming
//! what is missing, unless `--compile-only`), then build, run, report and the exit code.
//! `run --list` prints the choice per shard without building anything.

use std::path::Path;
use std::time::Instant;

use hrr_matrix::resolve::shard_by_durations;
use hrr_matrix::{shard, CaseKind, Disposition, Expectation, Family, Matrix};
use hrr_matrix::{ResolvedCase, Shard};
use hrr_reports::result::Durations;
use hrr_reports::{RunReport, Status, Totals};

use super::{absolute, do_build, family_gpus, hostname, now_unix, pick_family_for, Res};
use crate::builder::Built;
use crate::cli::RunArgs;
use crate::error::HarnessError;
use crate::exit::Exit;
use crate::gpu::{self, Detection, Gpu};
use crate::output::{self, Progress};
use crate::repo::SourceTree;
use crate::runner::{self, RunContext, RunPolicy};

/// The cases `args` select from the family, before sharding; `Ok(None)`: `--rerun-failed`
/// found nothing unexpected to re-run.
fn select(
    m: &Matrix,
    f: &Family,
    args: &RunArgs,
) -> Result<Option<Vec<ResolvedCase>>, HarnessError> {
    let on = match args.stand_in {
        true => hrr_matrix::RunsOn::StandIn,
        false => hrr_matrix::RunsOn::Gpu,
    };
    let mut cases = hrr_matrix::resolve_family_on(m, f, on);
    let any = |pats: &[String], s: &str| pats.iter().any(|p| hrr_matrix::glob::matches(p, s));
    if !args.cases.is_empty() {
        cases.retain(|rc| any(&args.cases, &rc.case.name));
        if cases.is_empty() {
            return Err(HarnessError::usage(format!(
                "--case {}: matches no case",
                args.cases.join(" ")
            )));
        }
    }
    if !args.tags.is_empty() {
        cases.retain(|rc| rc.case.tags.iter().any(|t| any(&args.tags, t)));
        if cases.is_empty() {
            return Err(HarnessError::usage(format!(
                "--tag {}: no case has such a tag",
                args.tags.join(" ")
            )));
        }
    }
    cases.retain(|rc| !rc.case.tags.iter().any(|t| any(&args.exclude_tags, t)));
    if args.stand_in && f.cuda_runtime() == hrr_matrix::CudaRuntime::Static {
        // nvcc's static runtime reaches the driver through its private export tables
        // (cuGetExportTable), which no stand-in provides: not run, never passed.
        for rc in &mut cases {
            if rc.case.kind == CaseKind::Gpu && rc.disposition == Disposition::Run {
                rc.disposition = Disposition::Skip {
                    skip: hrr_matrix::SkipKind::Unsupported,
                    reason: "the static CUDA runtime needs the real driver's private export tables, which the stand-in runtime does not provide".into(),
                };
            }
        }
    }
    if args.stand_in {
        for rc in &mut cases {
            if rc.case.kind == CaseKind::Gpu
                && rc.disposition == Disposition::Run
                && rc
                    .case
                    .tags
                    .iter()
                    .any(|t| t == crate::standin::NOT_MODELLED_TAG)
            {
                rc.disposition = Disposition::Skip {
                    skip: hrr_matrix::SkipKind::Unsupported,
                    reason: format!(
                        "the stand-in runtime does not model this case's APIs (tag {})",
                        crate::standin::NOT_MODELLED_TAG
                    ),
                };
            }
        }
    }
    if let Some(path) = &args.rerun_failed {
        let earlier = RunReport::read_json(path)
            .map_err(|e| HarnessError::usage(format!("--rerun-failed: {e}")))?;
        let failed: Vec<&str> = earlier
            .cases
            .iter()
            .filter(|c| c.family == f.name && c.status.is_unexpected())
            .map(|c| c.case.as_str())
            .collect();
        cases.retain(|rc| failed.contains(&rc.case.name.as_str()));
        if cases.is_empty() {
            crate::out!(
                "nothing to re-run: {} reports no unexpected case of family {} that this selection has",
                path.display(),
                f.name
            );
            return Ok(None);
        }
    }
    Ok(Some(cases))
}

/// Shard `sh` of `cases`: by `durations` when given, else round robin by name.
fn deal(cases: Vec<ResolvedCase>, sh: Shard, durations: Option<&Durations>) -> Vec<ResolvedCase> {
    match durations {
        Some(d) => shard_by_durations(cases, sh, d),
        None => shard(cases, sh),
    }
}

fn read_durations(args: &RunArgs) -> Result<Option<Durations>, HarnessError> {
    args.durations
        .as_ref()
        .map(|p| {
            hrr_reports::result::read_durations(p)
                .map_err(|e| HarnessError::usage(format!("--durations: {e}")))
        })
        .transpose()
}

/// What `--list` says a case would do, and why.
fn action(rc: &ResolvedCase) -> (&'static str, String) {
    let rule = rc
        .rule
        .map(|i| format!(" [rule {}]", i + 1))
        .unwrap_or_default();
    match (&rc.disposition, &rc.expectation) {
        (Disposition::Skip { reason, .. }, _) => ("skip", format!("{reason}{rule}")),
        (Disposition::Run, Expectation::Pass) => ("run", String::new()),
        (Disposition::Run, Expectation::Fail { reason }) => {
            ("expect-fail", format!("{reason}{rule}"))
        }
        (Disposition::Run, Expectation::Flake { reason }) => {
            ("known-flake", format!("{reason}{rule}"))
        }
    }
}

/// `run --list`: each shard's cases (only `--shard`'s when given, else all the family's
/// shards) with what would happen to them and why.
fn list(
    f: &Family,
    args: &RunArgs,
    cases: Vec<ResolvedCase>,
    durations: Option<&Durations>,
) -> Res {
    let shards: Vec<Shard> = match &args.shard {
        Some(s) => vec![Shard::parse(s).map_err(|e| HarnessError::usage(e.to_string()))?],
        None => (1..=f.shards.max(1))
            .map(|index| Shard {
                index,
                count: f.shards.max(1),
            })
            .collect(),
    };
    let estimate = durations;
    let mut rows = Vec::new();
    for sh in &shards {
        for rc in deal(cases.clone(), *sh, durations) {
            let (what, why) = action(&rc);
            let what = if args.compile_only && rc.case.kind.needs_gpu() && what != "skip" {
                "compile"
            } else {
                what
            };
            rows.push((*sh, rc, what, why));
        }
    }
    if args.json {
        let v: Vec<serde_json::Value> = rows
            .iter()
            .map(|(sh, rc, what, why)| {
                serde_json::json!({
                    "family": f.name,
                    "shard": sh.to_string(),
                    "case": rc.case.name,
                    "kind": match rc.case.kind { CaseKind::Gpu => "gpu", CaseKind::Host => "host", CaseKind::Archive => "archive" },
                    "tags": rc.case.tags,
                    "action": what,
                    "reason": why,
                    "timeout": hrr_matrix::duration::format(rc.timeout),
                    "estimated_s": estimate.and_then(|d| d.get(&rc.case.name)),
                    // Declared instability: replays compared, bytes that may differ.
                    "unstable": rc.case.unstable,
                })
            })
            .collect();
        crate::out!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
        return Ok(Exit::Ok);
    }
    crate::out!(
        "family {} ({}, targets {}): {} case(s) in {} shard(s), dealt {}{}",
        f.name,
        f.vendor.as_str(),
        f.targets.join(", "),
        cases.len(),
        shards.first().map(|s| s.count).unwrap_or(1),
        match &args.durations {
            Some(p) => format!("by the durations in {}", p.display()),
            None => "round robin by name".into(),
        },
        if args.compile_only {
            "; compile-only: GPU cases are compiled, not run"
        } else {
            ""
        }
    );
    for sh in &shards {
        let mine: Vec<_> = rows.iter().filter(|r| r.0 == *sh).collect();
        let secs: f64 = mine
            .iter()
            .filter_map(|r| estimate.and_then(|d| d.get(&r.1.case.name)))
            .sum();
        crate::out!(
            "shard {sh}: {} case(s){}",
            mine.len(),
            if estimate.is_some() {
                format!(", about {secs:.0} s by earlier durations")
            } else {
                String::new()
            }
        );
        for (_, rc, what, why) in mine {
            crate::out!(
                "  {:<24} {:>5}  {:<12} {}",
                rc.case.name,
                hrr_matrix::duration::format(rc.timeout),
                what,
                why
            );
        }
    }
    Ok(Exit::Ok)
}

/// Clears what a previous run left in the output directory (only files the harness writes).
fn prepare_output(dir: &Path) -> Result<(), HarnessError> {
    std::fs::create_dir_all(dir)
        .map_err(|e| HarnessError::usage(format!("--output {}: {e}", dir.display())))?;
    for f in ["results.json", "results.jsonl", "junit.xml", "summary.md"] {
        let _ = std::fs::remove_file(dir.join(f));
    }
    let _ = std::fs::remove_dir_all(dir.join("cases"));
    Ok(())
}

/// The last line of a run: the verdict and the counts (compile-only names its own).
fn final_line(t: &Totals, compile_only: bool, flake_fails: bool) -> String {
    let failed = t.unexpected > 0 || (flake_fails && t.count(Status::Flake) > 0);
    let verdict = if failed {
        "FAIL"
    } else {
        hrr_reports::markdown::verdict(t)
    };
    if compile_only {
        let passed = t.count(Status::Pass);
        let first = if t.count(Status::StandIn) > 0 {
            format!(
                "{} passed against the stand-in runtime",
                t.count(Status::StandIn)
            )
        } else {
            format!("{} compiled", t.count(Status::CompiledNotRun))
        };
        let mut parts = vec![
            first,
            format!(
                "{passed} host case{} passed",
                if passed == 1 { "" } else { "s" }
            ),
        ];
        parts.extend(
            Status::ALL
                .iter()
                .filter(|s| {
                    !matches!(s, Status::CompiledNotRun | Status::Pass | Status::StandIn)
                        && t.count(**s) > 0
                })
                .map(|s| format!("{} {s}", t.count(*s))),
        );
        format!("{verdict}: {} (no GPU used)", parts.join(", "))
    } else {
        format!(
            "{verdict}: {}",
            Status::ALL
                .iter()
                .filter(|s| t.count(**s) > 0)
                .map(|s| format!("{} {s}", t.count(*s)))
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

pub fn run(matrix: Option<&Path>, args: &RunArgs) -> Res {
    let tree = SourceTree::locate(matrix)?;
    let m = tree.load_matrix()?;
    let d = gpu::detect();
    let f = pick_family_for(
        &m,
        &args.opts.family,
        &d,
        args.compile_only || args.list || args.stand_in,
    )?;
    let sh = match &args.shard {
        Some(s) => Shard::parse(s).map_err(|e| HarnessError::usage(e.to_string()))?,
        None => Shard::ALL,
    };
    if args.jobs == Some(0) {
        return Err(HarnessError::usage("--jobs 0: need at least one job"));
    }
    let durations = read_durations(args)?;
    let Some(selected) = select(&m, f, args)? else {
        return Ok(Exit::Ok);
    };
    if args.list {
        crate::output::output_only();
        return list(f, args, selected, durations.as_ref());
    }
    let cases = deal(selected, sh, durations.as_ref());
    let gpu_cases = cases
        .iter()
        .filter(|c| c.case.kind.needs_gpu() && c.disposition == Disposition::Run)
        .count();
    let mine = if args.compile_only || args.stand_in {
        vec![]
    } else {
        let mine = family_gpus(&d, f)?;
        if mine.is_empty() && gpu_cases > 0 {
            return Err(no_gpu(f, &d));
        }
        mine
    };
    let output = absolute(&args.output.clone().unwrap_or_else(|| {
        let name = if sh == Shard::ALL {
            f.name.clone()
        } else {
            format!("{}-shard-{}-of-{}", f.name, sh.index, sh.count)
        };
        tree.root.join("target/hrr-results").join(name)
    }));
    prepare_output(&output)?;
    let started = Instant::now();
    let started_unix = now_unix();
    let to_build: Vec<String> = cases
        .iter()
        .filter(|c| c.disposition == Disposition::Run)
        .map(|c| c.case.name.clone())
        .collect();
    let built = do_build(&tree, &m, f, &args.opts, Some(to_build), args.stand_in)?;
    let (stand_in_family, mine) = if args.stand_in {
        let (sf, gpu) = stand_in_setup(f, &built, &output)?;
        (Some(sf), vec![gpu])
    } else {
        (None, mine)
    };
    let f = stand_in_family.as_ref().unwrap_or(f);
    let jobs = args.jobs.unwrap_or(mine.len().max(1));
    let gpus_desc: Vec<String> = if args.compile_only {
        vec!["none used: compile-only".into()]
    } else if args.stand_in {
        mine.iter()
            .map(|g| {
                format!(
                    "none used: the stand-in runtime of standin/ claiming {}",
                    g.arch
                )
            })
            .collect()
    } else if mine.is_empty() {
        vec![d.none_reason()]
    } else {
        mine.iter().map(|g| g.to_string()).collect()
    };
    eprintln!(
        "hrr-harness: family {} shard {sh}: {} case(s), {jobs} job(s), {}GPUs: {}; results in {}",
        f.name,
        cases.len(),
        if args.compile_only {
            "compile-only, "
        } else if args.stand_in {
            "stand-in runtime, "
        } else {
            ""
        },
        gpus_desc.join("; "),
        output.display()
    );
    let ctx = RunContext {
        family: f,
        built: &built,
        gpus: mine,
        no_gpu_reason: d.none_reason(),
        output: output.clone(),
        keep_archives: args.keep_archives,
        shard: sh.to_string(),
    };
    let policy = RunPolicy {
        compile_only: args.compile_only,
        retries: args.retries,
        stand_in: args.stand_in,
    };
    let jsonl = output.join("results.jsonl");
    let progress = std::cell::RefCell::new(Progress::new(cases.len(), !args.no_progress));
    let mut results = runner::run_all_with(
        &ctx,
        policy,
        &cases,
        jobs,
        |name| progress.borrow_mut().started(name),
        |r| {
            progress.borrow_mut().finished(r);
            output::append_jsonl(&jsonl, r);
        },
        |line| progress.borrow().slow(line),
    );
    progress.borrow().finish();
    results.sort_by(|a, b| a.case.cmp(&b.case));
    let report = RunReport {
        tool_version: env!("CARGO_PKG_VERSION").into(),
        source_revision: built.revision.clone(),
        families: vec![f.name.clone()],
        shard: sh.to_string(),
        gpus: gpus_desc,
        hostname: hostname(),
        started_unix,
        duration_s: started.elapsed().as_secs_f64(),
        totals: Totals::of(&results),
        cases: results,
    };
    output::write_reports(&output, &report, false).map_err(|e| {
        HarnessError::failed(format!("writing reports to {}: {e}", output.display()))
    })?;
    let t = &report.totals;
    crate::out!(
        "{} | junit {} | results {}",
        final_line(t, args.compile_only || args.stand_in, args.flake_fails),
        output.join("junit.xml").display(),
        output.join("results.json").display()
    );
    if crate::process::interrupted() {
        return Err(HarnessError::Interrupted);
    }
    if let (Some(why), true) = (&built.no_compiler, gpu_cases > 0) {
        return Err(HarnessError::missing(format!(
            "family {}: its {gpu_cases} GPU case(s) were not compiled: {why}",
            f.name
        )));
    }
    let flaky = args.flake_fails && t.count(Status::Flake) > 0;
    Ok(if t.unexpected == 0 && !flaky {
        Exit::Ok
    } else {
        Exit::Unexpected
    })
}

/// `run --stand-in`: the stand-in runtime built for the family's vendor, the family with
/// it on every child's loader path, and the stand-in "GPU" the workers use.
fn stand_in_setup(f: &Family, built: &Built, output: &Path) -> Result<(Family, Gpu), HarnessError> {
    let root = built.dir.parent().unwrap_or(&built.dir);
    let dir = crate::standin::build_runtime(&built.source, root, f.vendor)
        .map_err(|e| HarnessError::missing(e.to_string()))?;
    // Nothing links for the family (gfx950, gfx1153 here): its cases fail as unbuildable
    // against a device claiming the family's first target; none can pass.
    let arch = built
        .stand_in_arch
        .clone()
        .unwrap_or_else(|| f.targets.first().cloned().unwrap_or_default());
    let log = output.join("stand-in-runtime.jsonl");
    let _ = std::fs::remove_file(&log);
    eprintln!(
        "hrr-harness: stand-in runtime {} (device {arch}); GPU cases are captured and replayed over host memory, no kernel runs",
        dir.display()
    );
    Ok((
        crate::standin::family(f, &dir, &arch, &log),
        crate::standin::gpu(f, &arch),
    ))
}

/// The error of a run that needs the family's GPUs and has none.
fn no_gpu(f: &Family, d: &Detection) -> HarnessError {
    HarnessError::missing(format!(
        "{}. No case ran: a run without its GPUs is not a pass. To compile the cases without a GPU: hrr-harness run --family {} --compile-only",
        gpu::missing_report(f, d),
        f.name
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn totals(s: &[Status]) -> Totals {
        let cases: Vec<hrr_reports::CaseResult> = s
            .iter()
            .enumerate()
            .map(|(i, st)| hrr_reports::CaseResult {
                family: "sm90".into(),
                shard: "1/1".into(),
                case: format!("c{i}"),
                status: *st,
                duration_s: 0.0,
                message: String::new(),
                attempts: vec![],
                artifacts: None,
            })
            .collect();
        Totals::of(&cases)
    }

    #[test]
    fn the_last_line_never_calls_compile_only_a_pass_and_flakes_fail_when_asked() {
        use Status::*;
        let co = totals(&[CompiledNotRun, CompiledNotRun, Pass, Skip]);
        assert_eq!(
            final_line(&co, true, false),
            "COMPILED, NOT RUN: 2 compiled, 1 host case passed, 1 skip (no GPU used)"
        );
        let broken = totals(&[CompiledNotRun, Fail]);
        assert_eq!(
            final_line(&broken, true, false),
            "FAIL: 1 compiled, 0 host cases passed, 1 fail (no GPU used)"
        );
        let flaky = totals(&[Pass, Flake]);
        assert_eq!(final_line(&flaky, false, false), "PASS: 1 pass, 1 flake");
        assert_eq!(final_line(&flaky, false, true), "FAIL: 1 pass, 1 flake");
    }
}
