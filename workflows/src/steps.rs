//! Step snippets shared by the workflows (each a YAML fragment at step indentation, six
//! spaces): the checkout of exactly the commit under test, the cargo cache, the tools
//! build, artifact upload and download. Expressions reach shell scripts only through
//! `env:`, never spliced into `run:` text (no template injection).

use crate::pins::{CACHE, CHECKOUT, DOWNLOAD_ARTIFACT, UPLOAD_ARTIFACT};

/// Single-quoted YAML scalar: only the quote itself needs escaping.
pub fn yaml_str(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// A runner label list: `['self-hosted', 'linux', 'sm90']`.
pub fn labels(l: &[String]) -> String {
    let l: Vec<String> = l.iter().map(|s| yaml_str(s)).collect();
    format!("[{}]", l.join(", "))
}

/// `true` in a `pull_request_target` run (whose default checkout is the base branch).
pub const IS_PR: &str = "github.event_name == 'pull_request_target'";

/// The commit under test, without persisted credentials. Pushes, schedules and dispatches
/// check out `github.sha`; a `pull_request_target` run checks out the pull request's head
/// SHA from its event: the commit a maintainer approved (fork pull requests wait for the
/// approval job's environment), never the branch's later state. A workflow with other
/// events gets two steps rather than one `ref:` expression, so a push run uses the plain
/// default checkout; `pr_only`: the workflow runs on `pull_request_target` alone.
pub fn checkout(fetch_depth_all: bool, pr_only: bool) -> String {
    let depth = if fetch_depth_all {
        "          fetch-depth: 0\n"
    } else {
        ""
    };
    let pr = format!(
        "      - name: Check out the pull request's head commit (the approved SHA)
{when}        uses: {uses}
        with:
          ref: ${{{{ github.event.pull_request.head.sha }}}}
          persist-credentials: false
{depth}",
        when = if pr_only {
            String::new()
        } else {
            format!("        if: {IS_PR}\n")
        },
        uses = CHECKOUT.uses(),
    );
    if pr_only {
        return pr;
    }
    format!(
        "      - name: Check out the pushed commit
        if: {not_pr}
        uses: {uses}
        with:
          persist-credentials: false
{depth}{pr}",
        not_pr = IS_PR.replace("==", "!="),
        uses = CHECKOUT.uses(),
    )
}

/// A plain checkout of the workflow's own commit (the default branch in `workflow_run`).
pub fn checkout_default() -> String {
    format!(
        "      - uses: {}
        with:
          persist-credentials: false
",
        CHECKOUT.uses()
    )
}

/// The cargo cache key prefix of a job: registry, git sources and the target directory.
fn cargo_key(job: &str) -> String {
    format!("cargo-{job}-${{{{ runner.os }}}}-${{{{ hashFiles('Cargo.lock') }}}}")
}

const CARGO_PATHS: &str = "          path: |
            ~/.cargo/registry/index
            ~/.cargo/registry/cache
            ~/.cargo/git/db
            target
";

/// `if:` of a cache restore: the repository's own code only. A fork's pull request,
/// run after approval under `pull_request_target`, runs in the base repository's cache
/// scope; it gets no cache of main's (and no save step writes one: `cargo_cache_save`).
pub const OWN_CODE: &str = "github.event_name != 'pull_request_target' || github.event.pull_request.head.repo.full_name == github.repository";

/// Restores the newest cargo cache of this job (the repository's own code only).
pub fn cargo_cache_restore(job: &str) -> String {
    format!(
        "      - name: Restore the cargo cache (not for a fork's code)
        if: {OWN_CODE}
        uses: {uses}
        with:
{CARGO_PATHS}          key: {key}-${{{{ github.sha }}}}
          restore-keys: |
            {key}-
",
        uses = CACHE.uses_sub("/restore"),
        key = cargo_key(job),
    )
}

/// Saves the cargo cache, only from runs of the default branch's own code (push,
/// schedule): a pull request's build never writes a cache that main's runs restore.
pub fn cargo_cache_save(job: &str) -> String {
    format!(
        "      - name: Save the cargo cache (main only)
        if: github.event_name == 'push' || github.event_name == 'schedule'
        uses: {uses}
        with:
{CARGO_PATHS}          key: {key}-${{{{ github.sha }}}}
",
        uses = CACHE.uses_sub("/save"),
        key = cargo_key(job),
    )
}

/// Builds capture, replay and the harness (release) and stages them in `hrr-tools/`.
/// `CARGO_TARGET_DIR` is honoured (a runner or a local act run may share one).
pub fn build_tools() -> String {
    "      - name: Build capture, replay and the harness
        run: cargo build --release --locked -p hrr-capture -p hrr-replay -p hrr-harness
      - name: Stage the tools in hrr-tools
        run: |
          mkdir -p hrr-tools
          release=\"${CARGO_TARGET_DIR:-target}/release\"
          cp \"$release/libhrr_capture.so\" \"$release/hrr-replay\" \"$release/hrr-harness\" hrr-tools/
"
    .into()
}

/// Uploads `path` as artifact `name`, kept `days` days. `when`: an optional step `if:`.
pub fn upload(name: &str, path: &str, days: u32, when: Option<&str>) -> String {
    let when = when
        .map(|w| format!("        if: {w}\n"))
        .unwrap_or_default();
    format!(
        "      - uses: {uses}
{when}        with:
          name: {name}
          path: {path}
          retention-days: {days}
",
        uses = UPLOAD_ARTIFACT.uses(),
    )
}

/// Downloads artifact `name` into `path`.
pub fn download(name: &str, path: &str) -> String {
    format!(
        "      - uses: {uses}
        with:
          name: {name}
          path: {path}
",
        uses = DOWNLOAD_ARTIFACT.uses(),
    )
}

/// Downloads every artifact whose name matches `pattern`, one folder each, into `path`.
pub fn download_pattern(pattern: &str, path: &str) -> String {
    format!(
        "      - uses: {uses}
        with:
          pattern: {pattern}
          path: {path}
",
        uses = DOWNLOAD_ARTIFACT.uses(),
    )
}

/// The job that holds a fork's pull request until a maintainer approves it: it runs only
/// for `pull_request_target` events whose head lives in another repository, in the
/// protected environment `ENVIRONMENT` (required reviewers, no secrets). GitHub shows the
/// reviewers the run, whose event fixes the head SHA; every later push is a new run that
/// waits again. Jobs that run the pull request's code need this one to succeed or be
/// skipped (not a fork).
///
/// The gate is a repository setting the workflow cannot write: an environment that does
/// not exist is created unprotected at the first run, and one without required reviewers
/// lets this job start at once. So its first steps run `hrr-harness workflows check --repo`
/// on the repository, built from the base branch (the checkout of a `pull_request_target`
/// run without a `ref`: never the pull request's code), with the
/// job's token: `actions: read` reads the environment's protection rules (GitHub's
/// "Get an environment"); listing the runners needs administration rights no job token
/// has, so the check says it cannot tell whether they are ephemeral and goes on. An
/// environment missing or without required reviewers fails the check with its message,
/// this job fails, and no job after it runs the fork's code.
pub fn approval_job() -> String {
    format!(
        "  approval:
    name: maintainer approval (fork pull requests)
    if: {IS_PR} && github.event.pull_request.head.repo.full_name != github.repository
    runs-on: ubuntu-latest
    timeout-minutes: 20
    environment: {ENVIRONMENT}
    permissions:
      actions: read # the environment's protection rules (workflows check --repo)
      contents: read # check out the base branch
    steps:
      - name: Check out the base branch (never the pull request's code)
        uses: {checkout}
        with:
          persist-credentials: false
      - name: Build the harness from the base branch
        run: cargo build --locked -p hrr-harness
      - name: hrr-harness workflows check --repo (the fork gate has required reviewers)
        env:
          GITHUB_TOKEN: ${{{{ github.token }}}}
          REPO: ${{{{ github.repository }}}}
        run: |
{check}      - name: Approved head commit
        env:
          HEAD_SHA: ${{{{ github.event.pull_request.head.sha }}}}
          HEAD_REPO: ${{{{ github.event.pull_request.head.repo.full_name }}}}
        run: echo \"A maintainer approved running $HEAD_REPO@$HEAD_SHA on the self-hosted runners\"
",
        checkout = CHECKOUT.uses(),
        check = repo_check_script()
            .lines()
            .map(|l| format!("          {l}\n"))
            .collect::<String>(),
    )
}

/// The approval job's repository check as its step runs it (bash, in the base branch's
/// checkout, `GITHUB_TOKEN` and `REPO` in its environment): the harness built there
/// (`CARGO_TARGET_DIR` honoured) runs `workflows check --repo`, whose lines say what is
/// wrong; a failure is also an error annotation on the run.
pub fn repo_check_script() -> String {
    format!(
        "if ! \"${{CARGO_TARGET_DIR:-target}}/debug/hrr-harness\" workflows check --repo \"$REPO\"; then
  echo \"::error::hrr-harness workflows check --repo $REPO failed (its lines above say why): a fork's code runs on the GPU runners only behind environment {ENVIRONMENT} with required reviewers\"
  exit 1
fi
"
    )
}

/// The protected environment fork pull requests wait in (configured in the repository's
/// settings with required reviewers and no secrets).
pub const ENVIRONMENT: &str = "gpu-fork-pull-requests";

/// `if:` of a job that needs the approval job: approved, or not a fork.
pub const AFTER_APPROVAL: &str = "${{ !cancelled() && (needs.approval.result == 'success' || needs.approval.result == 'skipped') }}";
