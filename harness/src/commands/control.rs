//! `hrr-harness control`: the flags checked, the controls selected (from the matrix, from
//! `Guarded-by:` trailers, or from a pull request's commits), the run handed to
//! `control`, and its outcomes turned into the report files and the exit code.

use std::path::Path;

use crate::cli::ControlArgs;
use crate::control::{self, CommitsError, ControlRun, ControlSpec};
use crate::error::HarnessError;
use crate::exit::Exit;
use crate::gpu;
use crate::output;
use crate::repo::SourceTree;

use super::{absolute, family_gpus, pick_family};

type Res = Result<Exit, HarnessError>;

pub fn control(matrix: Option<&Path>, args: &ControlArgs) -> Res {
    let tree = SourceTree::locate(matrix)?;
    let m = tree.load_matrix()?;
    let d = gpu::detect();
    let f = pick_family(&m, &args.family, &d)?;
    let mine = family_gpus(&d, f)?;
    let floor = hrr_matrix::duration::parse(&args.timeout_floor)
        .map_err(|e| HarnessError::usage(format!("--timeout-floor {e}")))?;
    if !(args.timeout_factor.is_finite() && args.timeout_factor >= 1.0) {
        return Err(HarnessError::usage(format!(
            "--timeout-factor {}: must be at least 1",
            args.timeout_factor
        )));
    }
    let commits = match (&args.commits, args.pr) {
        (Some(c), _) => Some(c.clone()),
        (None, true) => {
            let base = std::env::var("GITHUB_BASE_REF").ok().filter(|s| !s.is_empty()).ok_or_else(|| {
                HarnessError::usage("--pr: GITHUB_BASE_REF is not set (run it from a pull_request workflow, or use --commits BASE..HEAD)")
            })?;
            Some(format!("origin/{base}..HEAD"))
        }
        (None, false) => None,
    };
    let mut specs: Vec<ControlSpec> = Vec::new();
    if args.all {
        for c in &m.controls {
            if c.applies_to(&f.name) {
                specs.push(ControlSpec::from_matrix(c));
            } else {
                crate::out!(
                    "control {}: not run on {}: its guards catch the removal on {} only",
                    c.name,
                    f.name,
                    c.families.join(", ")
                );
            }
        }
    }
    for name in &args.controls {
        let c = m.controls.iter().find(|c| &c.name == name).ok_or_else(|| {
            HarnessError::usage(format!(
                "unknown control `{name}`; the matrix has: {}",
                m.controls
                    .iter()
                    .map(|c| c.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?;
        if !c.applies_to(&f.name) {
            return Err(HarnessError::usage(format!(
                "control `{name}` cannot be caught on {}: its guards catch the removal on {} only (the matrix's `families`)",
                f.name,
                c.families.join(", ")
            )));
        }
        specs.push(ControlSpec::from_matrix(c));
    }
    if let Some(range) = &commits {
        specs.extend(
            control::controls_from_commits(&tree.root, range, &m).map_err(|e| match e {
                CommitsError::GitLog(_) => HarnessError::failed(e.to_string()),
                CommitsError::NotARange(_)
                | CommitsError::BadRange { .. }
                | CommitsError::UnknownCases { .. } => HarnessError::usage(e.to_string()),
            })?,
        );
    }
    if specs.is_empty() && !args.pr {
        return Err(HarnessError::usage(
            "no control selected: use --control NAME, --all, --commits BASE..HEAD or --pr",
        ));
    }
    let output = absolute(
        &args
            .output
            .clone()
            .unwrap_or_else(|| tree.root.join("target/hrr-controls").join(&f.name)),
    );
    let build_root = absolute(
        &args
            .build_dir
            .clone()
            .unwrap_or_else(|| tree.root.join("target/hrr-build")),
    );
    if tree.revision().ends_with("-dirty") {
        eprintln!("hrr-harness: warning: the checkout has uncommitted changes; the baseline includes them, controls are built from HEAD without them");
    }
    let run = ControlRun {
        tree: &tree,
        matrix: &m,
        family: f,
        gpus: mine,
        no_gpu_reason: d.none_reason(),
        output: output.clone(),
        cargo_target_dir: build_root.join("cargo-target"),
        build_root,
        tools_dir: args.tools.clone().map(|t| absolute(&t)),
        timeout_factor: args.timeout_factor,
        timeout_floor: floor,
        prebuilt: args.prebuilt.clone().map(|p| absolute(&p)),
        build_only: args.build_only.clone().map(|p| absolute(&p)),
    };
    let outcomes = if specs.is_empty() {
        // `run` makes the output directory; here nothing runs, but the reports are written.
        std::fs::create_dir_all(&output)
            .map_err(|e| HarnessError::usage(format!("--output {}: {e}", output.display())))?;
        crate::out!(
            "no commit in the pull request declares a Guarded-by trailer: nothing to control"
        );
        control::Outcomes {
            family: f.name.clone(),
            source_revision: tree.revision(),
            baseline: vec![],
            baseline_passed: true,
            controls: vec![],
        }
    } else {
        run.run(&specs)?
    };
    let md = control::markdown(&outcomes);
    let write = |name: &str, data: &str| {
        let path = output.join(name);
        hrr_reports::result::write_atomic(&path, data.as_bytes())
            .map_err(|e| HarnessError::failed(format!("writing {}: {e}", path.display())))
    };
    write("summary.md", &md)?;
    write("junit.xml", &control::junit(&outcomes))?;
    output::append_step_summary(&md);
    let code = control::exit_code(&outcomes);
    if args.pr {
        crate::control::publish::publish_from_env(&md, code.code());
    }
    print!("{md}");
    crate::out!("outcomes in {}", output.join("outcomes.json").display());
    if crate::process::interrupted() {
        return Err(HarnessError::Interrupted);
    }
    Ok(code)
}
