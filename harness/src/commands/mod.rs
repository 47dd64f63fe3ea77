//! The subcommands: each resolves its inputs (tree, matrix, family, GPUs), calls the
//! module that does the work and turns the outcome into an exit code. The modules' typed
//! errors get their context (the flag, the file) and their exit code here. `matrix`,
//! `build` and `workflows` are here with the shared helpers; `run` (`run.rs`), `report
//! merge` (`merge.rs`), `report fetch` (`fetch.rs`), `report publish` (`publish.rs`) and
//! `control` (`control.rs`) have files of their own.

mod control;
mod fetch;
mod merge;
mod report_publish;
mod run;

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use hrr_matrix::{resolve_family, Disposition, Expectation, Family, Matrix};

use crate::builder::{self, BuildRequest, Built, CaseBuild};
use crate::cli::{BuildOpts, MatrixCmd, WorkflowsCmd};
use crate::error::HarnessError;
use crate::exit::Exit;
use crate::gpu::{self, Detection};
use crate::repo::SourceTree;

pub use control::control;
pub use fetch::fetch;
pub use merge::merge_with;
pub use report_publish::publish;
pub use run::run;

type Res = Result<Exit, HarnessError>;

fn family<'m>(m: &'m Matrix, name: &str) -> Result<&'m Family, HarnessError> {
    m.families.iter().find(|f| f.name == name).ok_or_else(|| {
        HarnessError::usage(format!(
            "unknown family `{name}`; the matrix has: {}",
            m.families
                .iter()
                .map(|f| f.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))
    })
}

pub fn matrix(matrix: Option<&Path>, cmd: &MatrixCmd) -> Res {
    crate::output::output_only();
    let tree = SourceTree::locate(matrix)?;
    let m = tree.load_matrix()?;
    match cmd {
        MatrixCmd::Check => {
            crate::out!(
                "{}: valid: {} families, {} cases, {} rules, {} controls",
                tree.matrix.display(),
                m.families.len(),
                m.cases.len(),
                m.rules.len(),
                m.controls.len()
            );
        }
        MatrixCmd::List { family: name, json } => {
            let f = family(&m, name)?;
            let resolved = resolve_family(&m, f);
            if *json {
                crate::out!(
                    "{}",
                    serde_json::to_string_pretty(&resolved).unwrap_or_default()
                );
                return Ok(Exit::Ok);
            }
            crate::out!(
                "family {} ({}, targets {}, {} shard(s), runner [{}])",
                f.name,
                f.vendor.as_str(),
                f.targets.join(", "),
                f.shards,
                f.runner.join(", ")
            );
            for rc in &resolved {
                let rule = rc
                    .rule
                    .map(|i| format!(" [rule {}]", i + 1))
                    .unwrap_or_default();
                let what = match (&rc.disposition, &rc.expectation) {
                    (Disposition::Skip { reason, .. }, _) => {
                        format!("skip            {reason}{rule}")
                    }
                    (Disposition::Run, Expectation::Pass) => "run".to_string(),
                    (Disposition::Run, Expectation::Fail { reason }) => {
                        format!("run, expect fail  {reason}{rule}")
                    }
                    (Disposition::Run, Expectation::Flake { reason }) => {
                        format!("run, known flake  {reason}{rule}")
                    }
                };
                crate::out!(
                    "  {:<22} {:>5}  {:<34} {}",
                    rc.case.name,
                    hrr_matrix::duration::format(rc.timeout),
                    rc.case
                        .checks
                        .iter()
                        .map(|c| c.name())
                        .collect::<Vec<_>>()
                        .join(","),
                    what
                );
            }
        }
    }
    Ok(Exit::Ok)
}

/// The tree to build from and the cargo target directory for its tools.
fn source_and_target(
    tree: &SourceTree,
    opts: &BuildOpts,
) -> Result<(SourceTree, PathBuf, PathBuf), HarnessError> {
    let build_root = opts
        .build_dir
        .clone()
        .unwrap_or_else(|| tree.root.join("target/hrr-build"));
    let build_root = absolute(&build_root);
    match &opts.source {
        Some(s) => {
            let root = s
                .canonicalize()
                .map_err(|e| HarnessError::usage(format!("--source {}: {e}", s.display())))?;
            let src = SourceTree::at(&root);
            if !src.cases_dir().is_dir() {
                return Err(HarnessError::usage(format!(
                    "--source {}: no cases/ directory: not an hrr-harness checkout",
                    root.display()
                )));
            }
            let target = if root == tree.root {
                std::env::var_os("CARGO_TARGET_DIR")
                    .map(PathBuf::from)
                    .unwrap_or_else(|| root.join("target"))
            } else {
                build_root.join("cargo-target")
            };
            Ok((src, absolute(&target), build_root))
        }
        None => {
            let target = std::env::var_os("CARGO_TARGET_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| tree.root.join("target"));
            Ok((tree.clone(), absolute(&target), build_root))
        }
    }
}

fn absolute(p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|c| c.join(p))
            .unwrap_or_else(|_| p.to_path_buf())
    }
}

/// `--family auto`: the family of this machine's GPUs; with no GPU, the first family whose
/// compiler is installed here (so its cases are at least compile-checked), else the first.
fn pick_family<'m>(m: &'m Matrix, name: &str, d: &Detection) -> Result<&'m Family, HarnessError> {
    pick_family_for(m, name, d, true)
}

/// `pick_family`; without `allow_no_gpu` (a run that must run cases on GPUs), `auto` on a
/// machine with no GPU is an infrastructure error naming what was looked at.
fn pick_family_for<'m>(
    m: &'m Matrix,
    name: &str,
    d: &Detection,
    allow_no_gpu: bool,
) -> Result<&'m Family, HarnessError> {
    if name != "auto" {
        return family(m, name);
    }
    if d.gpus.is_empty() && !allow_no_gpu {
        return Err(HarnessError::missing(format!(
            "--family auto: {}. No case ran: a run without a GPU is not a pass. To compile the cases without a GPU: hrr-harness run --family auto --compile-only",
            d.none_reason()
        )));
    }
    match gpu::auto_family(m, d).map_err(|e| HarnessError::usage(format!("--family auto: {e}")))? {
        Some(f) => {
            eprintln!(
                "hrr-harness: --family auto: {} ({})",
                f.name,
                d.gpus
                    .iter()
                    .map(|g| g.to_string())
                    .collect::<Vec<_>>()
                    .join("; ")
            );
            Ok(f)
        }
        None => {
            let f = m
                .families
                .iter()
                .find(|f| crate::toolchain::find_compiler(f.vendor).is_some())
                .unwrap_or(&m.families[0]);
            eprintln!(
                "hrr-harness: --family auto: {}; using family {} for compile checks and GPU-free checks (its compiler is {})",
                d.none_reason(),
                f.name,
                if crate::toolchain::find_compiler(f.vendor).is_some() { "installed" } else { "missing too" }
            );
            Ok(f)
        }
    }
}

fn do_build(
    tree: &SourceTree,
    m: &Matrix,
    f: &Family,
    opts: &BuildOpts,
    only: Option<Vec<String>>,
    stand_in: bool,
) -> Result<Built, HarnessError> {
    let (src, target, build_root) = source_and_target(tree, opts)?;
    let src_matrix;
    let matrix_for_build = if src.root != tree.root && src.matrix.is_file() {
        // The control tree's own tools.build (it may differ); cases are the same names.
        src_matrix = src.load_matrix().unwrap_or_else(|_| m.clone());
        &src_matrix
    } else {
        m
    };
    builder::build(&BuildRequest {
        matrix: matrix_for_build,
        family: f,
        source: &src,
        build_root,
        tools_dir: opts.tools.clone().map(|t| absolute(&t)),
        cargo_target_dir: target,
        only,
        verbose: true,
        stand_in,
    })
}

pub fn build(matrix: Option<&Path>, opts: &BuildOpts) -> Res {
    let tree = SourceTree::locate(matrix)?;
    let m = tree.load_matrix()?;
    let d = gpu::detect();
    let f = pick_family(&m, &opts.family, &d)?;
    let built = do_build(&tree, &m, f, opts, None, false)?;
    crate::out!(
        "build {} at {}: {}",
        f.name,
        built.revision,
        built.dir.display()
    );
    crate::out!("  capture  {}", built.capture.display());
    crate::out!("  replay   {}", built.replay.display());
    crate::out!("  compiler {}", built.toolchain);
    let mut failed = 0;
    // A target no compiler here builds is a compile failure; the matrix marks targets the
    // project does not support with skip rules instead.
    for (t, why) in &built.unsupported_targets {
        failed += 1;
        crate::out!("  target {t} not built: {why}");
    }
    for (name, b) in &built.cases {
        let line = match b {
            CaseBuild::Built {
                binary,
                module,
                reused,
                ..
            } => format!(
                "{} {}{}",
                if *reused { "up to date" } else { "built     " },
                binary.display(),
                module
                    .as_ref()
                    .map(|m| format!(" (module {})", m.display()))
                    .unwrap_or_default()
            ),
            CaseBuild::CompileChecked { object, targets } => {
                format!(
                    "compiled   {} (compile check for {}: no runnable program here)",
                    object.display(),
                    targets.join(", ")
                )
            }
            CaseBuild::Host => "host case (nothing to compile)".into(),
            CaseBuild::Archive { hrrz, .. } => {
                format!("archive case (nothing to compile): {}", hrrz.display())
            }
            CaseBuild::Unsupported { reason } => format!("not built: {reason}"),
            CaseBuild::Failed { message, .. } => {
                failed += 1;
                format!("FAILED: {message}")
            }
        };
        crate::out!("  {name:<24} {line}");
    }
    if let Some(why) = &built.no_compiler {
        return Err(HarnessError::missing(format!(
            "family {}: no GPU case was compiled: {why}",
            f.name
        )));
    }
    Ok(if failed > 0 {
        Exit::Unexpected
    } else {
        Exit::Ok
    })
}

/// The machine's GPUs that belong to `f`; refuses when it has GPUs but none of them do.
fn family_gpus(d: &Detection, f: &Family) -> Result<Vec<gpu::Gpu>, HarnessError> {
    let mine: Vec<gpu::Gpu> = d
        .gpus
        .iter()
        .filter(|g| gpu::belongs(g, f))
        .cloned()
        .collect();
    if !d.gpus.is_empty() && mine.is_empty() {
        return Err(HarnessError::usage(format!(
            "this machine's GPUs do not belong to family {} (targets {}): found {}",
            f.name,
            f.targets.join(", "),
            d.gpus
                .iter()
                .map(|g| g.to_string())
                .collect::<Vec<_>>()
                .join("; ")
        )));
    }
    Ok(mine)
}

fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

pub fn workflows(matrix: Option<&Path>, cmd: &WorkflowsCmd) -> Res {
    let tree = SourceTree::locate(matrix)?;
    let m = tree.load_matrix()?;
    let files = hrr_workflows::generate(&m);
    let mut stale = Vec::new();
    for (rel, text) in &files {
        let path = tree.root.join(rel);
        match cmd {
            WorkflowsCmd::Generate => {
                if let Some(p) = path.parent() {
                    std::fs::create_dir_all(p)
                        .map_err(|e| HarnessError::failed(format!("{}: {e}", p.display())))?;
                }
                std::fs::write(&path, text)
                    .map_err(|e| HarnessError::failed(format!("{}: {e}", path.display())))?;
                crate::out!("wrote {}", path.display());
            }
            WorkflowsCmd::Check(_) => {
                if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
                    stale.push(rel.clone());
                }
            }
        }
    }
    if !stale.is_empty() {
        eprintln!(
            "hrr-harness: {} out of date with {}: run `hrr-harness workflows generate` and commit",
            stale.join(", "),
            tree.matrix.display()
        );
        return Ok(Exit::Unexpected);
    }
    if let WorkflowsCmd::Check(args) = cmd {
        crate::out!("workflows up to date with {}", tree.matrix.display());
        if let Some(repo) = &args.repo {
            return check_repo(&m, repo, args);
        }
    }
    Ok(Exit::Ok)
}

/// The GitHub token from GITHUB_TOKEN or GH_TOKEN (read as a secret: never printed, never
/// passed on), or a usage error saying `missing`.
pub(crate) fn github_token(missing: &str) -> Result<String, HarnessError> {
    ["GITHUB_TOKEN", "GH_TOKEN"]
        .iter()
        .find_map(|v| crate::process::secrets::secret(v))
        .ok_or_else(|| HarnessError::usage(missing.to_string()))
}

/// The API's base URL: the flag's, else $GITHUB_API_URL, else github.com's.
pub(crate) fn github_api_url(flag: Option<&str>) -> String {
    flag.map(str::to_string)
        .or_else(|| {
            std::env::var("GITHUB_API_URL")
                .ok()
                .filter(|u| !u.is_empty())
        })
        .unwrap_or_else(|| "https://api.github.com".into())
}

/// `workflows check --repo`: the repository settings the generated workflows rely on.
fn check_repo(m: &hrr_matrix::Matrix, repo: &str, args: &crate::cli::WorkflowsCheckArgs) -> Res {
    let (owner, name) = repo
        .split_once('/')
        .filter(|(o, r)| !o.is_empty() && !r.is_empty() && !r.contains('/'))
        .ok_or_else(|| HarnessError::usage(format!("--repo {repo}: expected OWNER/NAME")))?;
    let token = github_token(
        "workflows check --repo: GITHUB_TOKEN is not set: reading the repository's environments needs a token (e.g. `GITHUB_TOKEN=$(gh auth token)`)",
    )?;
    let api_url = github_api_url(args.api_url.as_deref());
    let families: Vec<(String, Vec<String>)> = m
        .families
        .iter()
        .map(|f| (f.name.clone(), f.runner.clone()))
        .collect();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| HarnessError::failed(format!("workflows check: {e}")))?;
    let timeout = std::time::Duration::from_secs(args.timeout.max(1));
    let found = rt.block_on(async {
        let gh = crate::github::client(&api_url, &token).map_err(|e| match e {
            crate::github::ClientError::ApiUrl { .. } => {
                HarnessError::usage(format!("--api-url {api_url}: {e}"))
            }
            _ => HarnessError::failed(format!("workflows check: {e}")),
        })?;
        crate::repocheck::check(&gh, owner, name, &families, timeout)
            .await
            .map_err(|e| HarnessError::failed(format!("workflows check --repo {repo}: {e}")))
    })?;
    for line in found.lines(repo) {
        crate::out!("{line}");
    }
    Ok(if found.safe() {
        Exit::Ok
    } else {
        Exit::Unexpected
    })
}
