//! The command line's shape: every subcommand's flags and arguments (clap), and
//! `--version`'s text. `main` parses it and hands each command to `commands`.

use std::path::PathBuf;
use std::sync::LazyLock;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::exit;

/// `--version`: the tool's version, the archive format its capture writes and its replay
/// reads, and the replay result schema it reads (`hrr_contract`).
static VERSION: LazyLock<String> = LazyLock::new(|| {
    format!(
        "{} (archive format {}, replay result schema {})",
        env!("CARGO_PKG_VERSION"),
        hrr_archive::FORMAT_VERSION,
        hrr_contract::SchemaVersion::CURRENT
    )
});

#[derive(Parser)]
#[command(
    name = "hrr-harness",
    version = VERSION.as_str(),
    about = "Build, run and report GPU record-and-replay cases per GPU family",
    after_help = exit::general_help()
)]
pub struct Cli {
    /// The matrix file (default: matrix/matrix.yaml in this directory or one above it).
    #[arg(long, global = true)]
    pub matrix: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Cmd,
}

#[derive(Subcommand)]
pub enum Cmd {
    /// Validate the matrix, or list what a family runs.
    #[command(subcommand)]
    Matrix(MatrixCmd),
    /// Build capture, replay and the family's cases.
    #[command(after_help = exit::general_help())]
    Build(BuildArgs),
    /// Build, then run the family's cases: captured, replayed, checked (a case is also run
    /// natively when its captured run fails, to tell a broken program from capture). With
    /// no GPU of the family here it stops (exit 7) and says what is missing; --compile-only
    /// compiles every case instead and runs none on a GPU.
    #[command(after_help = exit::general_help())]
    Run(RunArgs),
    /// Combine reports.
    #[command(subcommand)]
    Report(ReportCmd),
    /// Generate (or check) the GitHub Actions workflows from the matrix.
    #[command(subcommand)]
    Workflows(WorkflowsCmd),
    /// Negative controls: remove a fix, rebuild, and require its guard cases to fail.
    #[command(after_help = exit::control_help())]
    Control(ControlArgs),
}

#[derive(Args)]
pub struct ControlArgs {
    /// The GPU family whose GPUs run the guard cases (`auto`: this machine's).
    #[arg(long)]
    pub family: String,
    /// Run this control from the matrix (repeatable).
    #[arg(long = "control")]
    pub controls: Vec<String>,
    /// Run every control of the matrix.
    #[arg(long)]
    pub all: bool,
    /// Run the controls that commits in BASE..HEAD declare with `Guarded-by:` trailers.
    #[arg(long)]
    pub commits: Option<String>,
    /// In GitHub Actions: the pull request's commits, outcome published on the pull request.
    #[arg(long)]
    pub pr: bool,
    /// Outputs (default: target/hrr-controls/FAMILY).
    #[arg(long)]
    pub output: Option<PathBuf>,
    /// Where builds go (default: target/hrr-build).
    #[arg(long)]
    pub build_dir: Option<PathBuf>,
    /// Prebuilt capture and replay for the baseline (controls build their own, or take
    /// them from --prebuilt).
    #[arg(long)]
    pub tools: Option<PathBuf>,
    /// A guard case's limit without the fix: this many times its baseline duration...
    #[arg(long, default_value_t = 5.0)]
    pub timeout_factor: f64,
    /// ...and never less than this.
    #[arg(long, default_value = "20s")]
    pub timeout_floor: String,
    /// Use DIR/CONTROL/{libhrr_capture.so,hrr-replay} for each control instead of building
    /// (a GPU machine without a Rust toolchain); the fix is still removed in a worktree.
    #[arg(long)]
    pub prebuilt: Option<PathBuf>,
    /// Build each control's capture and replay into DIR/CONTROL and run no case.
    #[arg(long, conflicts_with = "prebuilt")]
    pub build_only: Option<PathBuf>,
}

#[derive(Subcommand)]
pub enum MatrixCmd {
    /// Validate the matrix and the case directories; print a one-line summary.
    Check,
    /// Print the resolved cases of a family: run or skip, expectation, timeout, why.
    List {
        #[arg(long)]
        family: String,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Args, Clone)]
pub struct BuildOpts {
    /// The GPU family (a name from the matrix; `auto` for this machine's GPUs).
    #[arg(long)]
    pub family: String,
    /// Build from this checkout instead of the one the matrix lives in.
    #[arg(long)]
    pub source: Option<PathBuf>,
    /// Where builds go (default: target/hrr-build in the checkout).
    #[arg(long)]
    pub build_dir: Option<PathBuf>,
    /// Use prebuilt libhrr_capture.so and hrr-replay from DIR instead of building them.
    #[arg(long)]
    pub tools: Option<PathBuf>,
}

#[derive(Args)]
pub struct BuildArgs {
    #[command(flatten)]
    pub opts: BuildOpts,
}

#[derive(Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub opts: BuildOpts,
    /// Parallel workers; worker i runs its cases on GPU i modulo the family's GPUs here
    /// (default: one worker per GPU of the family this process may use: a runner's
    /// CUDA_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES or HIP_VISIBLE_DEVICES is honoured).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Run shard K of N (1-based): a deterministic share, the same on every runner.
    #[arg(long)]
    pub shard: Option<String>,
    /// Deal the shards by earlier durations (a results.json, or the durations.json
    /// `report merge` writes): longest first onto the least-loaded shard.
    #[arg(long, value_name = "FILE")]
    pub durations: Option<PathBuf>,
    /// Only cases whose name matches this glob (repeatable).
    #[arg(long = "case")]
    pub cases: Vec<String>,
    /// Only cases with a tag matching this glob (repeatable: any of them).
    #[arg(long = "tag", value_name = "TAG")]
    pub tags: Vec<String>,
    /// Leave out cases with a tag matching this glob (repeatable).
    #[arg(long = "exclude-tag", value_name = "TAG")]
    pub exclude_tags: Vec<String>,
    /// Only the cases an earlier results.json reports as unexpected for this family
    /// (fail, crash, timeout, unexpected-pass, not-run).
    #[arg(long, value_name = "RESULTS")]
    pub rerun_failed: Option<PathBuf>,
    /// Compile every GPU case for the family's targets and run none of them (no GPU
    /// needed; host cases still run): GPU cases report `compiled-not-run`, never `pass`.
    #[arg(long)]
    pub compile_only: bool,
    /// Run the GPU cases against the stand-in runtimes of standin/ (no GPU: host memory;
    /// the cases' kernels do not run, only the stand-in's own test kernel would): capture,
    /// archive, replay and the checks that stay meaningful.
    /// Reported as `stand-in`, never as a GPU pass.
    #[arg(long, conflicts_with = "compile_only")]
    pub stand_in: bool,
    /// Print what would run, be skipped or be expected to fail, per shard, and why;
    /// build and run nothing.
    #[arg(long)]
    pub list: bool,
    /// With --list: JSON, one object per case.
    #[arg(long, requires = "list")]
    pub json: bool,
    /// Re-runs of a case whose outcome is unexpected; it stops at the first expected one
    /// (a pass next to a failure is a flake).
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub retries: u32,
    /// A flake (passed on one attempt, failed on another) fails the run.
    #[arg(long)]
    pub flake_fails: bool,
    /// Results directory (default: target/hrr-results/FAMILY[-shard-K-of-N]).
    #[arg(long)]
    pub output: Option<PathBuf>,
    /// Keep the archives of passing cases too.
    #[arg(long)]
    pub keep_archives: bool,
    /// Plain one-line-per-case output even on a terminal.
    #[arg(long)]
    pub no_progress: bool,
}

/// Where a merge learns which families and shards must have reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ExpectFrom {
    /// Every family of the matrix (or --families), each with its `shards`.
    Matrix,
}

/// `report merge`'s completeness check: a missing family or shard is named, its cases are
/// reported `not-run`, and the merge exits 1.
#[derive(Args, Clone, Debug, Default)]
pub struct ExpectArgs {
    /// Which families x shards must have reported: `matrix` (each family's `shards`).
    #[arg(long, value_enum)]
    pub expect: Option<ExpectFrom>,
    /// With --expect matrix: only these families (a workflow_dispatch subset).
    #[arg(long, value_delimiter = ',', requires = "expect")]
    pub families: Vec<String>,
    /// The expected shards from FILE, one `FAMILY K/N` per line (written by a workflow).
    #[arg(long, value_name = "FILE", conflicts_with = "expect")]
    pub expect_list: Option<PathBuf>,
}

#[derive(Subcommand)]
pub enum ReportCmd {
    /// Merge the results.json under each DIR into one JUnit, results.json, Markdown table
    /// and durations.json (case -> seconds, for the next run's --durations).
    Merge {
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        #[arg(long, default_value = "hrr-merged")]
        output: PathBuf,
        #[command(flatten)]
        expect: ExpectArgs,
    },
    /// Download a GitHub Actions run's result artifacts (GITHUB_TOKEN), unpack them into
    /// OUTPUT/ARTIFACT and merge them there as `merge` does: the failing cases' archives are
    /// then local, ready to replay.
    Fetch(FetchArgs),
    /// Publish a JUnit report as a check run on a commit, with an annotation per failing
    /// case (GITHUB_TOKEN, GITHUB_REPOSITORY, GITHUB_API_URL). For a `workflow_run`
    /// workflow: the files may come from a fork's pull request and are read as untrusted
    /// data (size-capped, parsed with bounds, never run).
    #[command(after_help = exit::publish_help())]
    Publish(PublishArgs),
}

#[derive(Args)]
pub struct PublishArgs {
    /// The JUnit report (at most 32 MiB).
    #[arg(long)]
    pub junit: PathBuf,
    /// The Markdown summary shown in the check run (at most 1 MiB; cut to 65,535 bytes).
    #[arg(long)]
    pub summary: PathBuf,
    /// The check run's name.
    #[arg(long)]
    pub check_name: String,
    /// The commit the check run is on (the pull request's head SHA, 40 hex digits).
    #[arg(long)]
    pub head_sha: String,
}

#[derive(Args)]
pub struct FetchArgs {
    /// The repository, OWNER/NAME.
    #[arg(long)]
    pub repo: String,
    /// The workflow run's id (the number in its URL: .../actions/runs/ID).
    #[arg(long)]
    pub run: u64,
    /// Where the artifacts and the merged report go (default: hrr-run-ID).
    #[arg(long)]
    pub output: Option<PathBuf>,
    /// The API base (default: GITHUB_API_URL, else https://api.github.com).
    #[arg(long)]
    pub api_url: Option<String>,
    /// Fetch the artifacts whose name matches this glob (repeatable).
    #[arg(long = "artifact", default_value = "hrr-results-*")]
    pub artifacts: Vec<String>,
    /// Plain lines instead of a progress bar even on a terminal.
    #[arg(long)]
    pub no_progress: bool,
    /// Seconds one network step may take (a listing page, a response's head, one chunk of
    /// a download) before it is tried again (3 tries in all) or given up, naming it.
    #[arg(long, value_name = "SECONDS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub timeout: u64,
    #[command(flatten)]
    pub expect: ExpectArgs,
}

#[derive(Subcommand)]
pub enum WorkflowsCmd {
    /// Write the workflow files under .github/workflows and .github/actionlint.yaml.
    Generate,
    /// Fail (exit 1) if the committed workflow files differ from what the matrix
    /// generates. With --repo, also check the repository's settings the workflows rely
    /// on: the environment fork pull requests wait in exists with required reviewers (else
    /// exit 1), and whether each family's runners are ephemeral.
    Check(WorkflowsCheckArgs),
}

#[derive(Args)]
pub struct WorkflowsCheckArgs {
    /// OWNER/NAME: check this repository's settings through the GitHub API (token from
    /// GITHUB_TOKEN or GH_TOKEN).
    #[arg(long)]
    pub repo: Option<String>,
    /// The API's base URL (default: $GITHUB_API_URL, else https://api.github.com).
    #[arg(long)]
    pub api_url: Option<String>,
    /// Seconds one network step may take.
    #[arg(long, default_value_t = 30)]
    pub timeout: u64,
}
