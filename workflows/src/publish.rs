//! `.github/workflows/publish.yml`: results of the gpu and controls workflows as check runs
//! on the tested commit, for every pull request including forks (the pattern
//! EnricoMi/publish-unit-test-result-action documents). It runs on `workflow_run`, i.e.
//! from the default branch with a token that may write checks, and never checks out or
//! executes the pull request's code: the harness it runs is built from the default branch,
//! and the triggering run's artifacts (junit.xml, summary.md) are untrusted data it only
//! reads. The head SHA comes from GitHub's `workflow_run` event, not from an artifact.

use crate::pins::DOWNLOAD_ARTIFACT;
use crate::steps;

/// The whole workflow.
pub fn workflow() -> String {
    let mut y = String::from(crate::HEADER);
    y.push_str(
        r#"name: publish
on:
  workflow_run: # zizmor: ignore[dangerous-triggers] runs only the default branch's code; the triggering run's artifacts are read as data
    workflows: [gpu, controls]
    types: [completed]
permissions: {}
concurrency:
  group: publish-${{ github.event.workflow_run.id }}
  cancel-in-progress: false
jobs:
  publish:
    name: check run for ${{ github.event.workflow_run.name }}
    if: github.event.workflow_run.conclusion != 'skipped' && github.event.workflow_run.conclusion != 'cancelled'
    runs-on: ubuntu-latest
    timeout-minutes: 30
    permissions:
      actions: read # download the triggering run's artifact
      checks: write # create the check run on its head commit
      contents: read # check out the default branch
    steps:
"#,
    );
    // No cargo cache here: a cache entry is the one thing a pull request's run could have
    // written, and this job holds a token that can write.
    y.push_str(&steps::checkout_default());
    y.push_str(
        r#"      - name: Build the harness from the default branch
        run: cargo build --release --locked -p hrr-harness
"#,
    );
    y.push_str(&format!(
        r#"      - name: Download the run's report (untrusted data)
        uses: {uses}
        with:
          name: ${{{{ github.event.workflow_run.name == 'gpu' && 'hrr-merged' || 'hrr-controls' }}}}
          path: untrusted-report
          run-id: ${{{{ github.event.workflow_run.id }}}}
          github-token: ${{{{ github.token }}}}
"#,
        uses = DOWNLOAD_ARTIFACT.uses(),
    ));
    y.push_str(
        r#"      - name: Publish the JUnit as a check run with an annotation per failing case
        env:
          GITHUB_TOKEN: ${{ github.token }}
          HEAD_SHA: ${{ github.event.workflow_run.head_sha }}
          WORKFLOW: ${{ github.event.workflow_run.name }}
        run: |
          target/release/hrr-harness report publish --junit untrusted-report/junit.xml \
            --summary untrusted-report/summary.md --check-name "hrr-harness $WORKFLOW" --head-sha "$HEAD_SHA"
"#,
    );
    y
}
