//! `.github/workflows/ci.yml`: the GPU-free checks (`.ci/run`) on every push to main and
//! every pull request, on a GitHub-hosted runner with a read-only token.

use crate::steps;

/// The whole workflow.
pub fn workflow() -> String {
    let mut y = String::from(crate::HEADER);
    y.push_str(
        r#"name: ci
on:
  push:
    branches: [main]
  pull_request:
  schedule:
    - cron: '47 1 * * *'
permissions:
  contents: read
# One run per pull request (a new push cancels the previous one); pushes one group per
# commit, never cancelled by a later push.
concurrency:
  group: ci-${{ github.event_name }}-${{ github.event.pull_request.number || github.sha }}
  cancel-in-progress: ${{ github.event_name == 'pull_request' }}
jobs:
  test:
    # The act run (workflows/tests/act_run.rs) needs local copies of the pinned actions
    # (../shared/actions), which GitHub-hosted runners lack: here it is declared not run,
    # by HRR_ACT_WITHOUT_LOCAL_ACTIONS below, never passed silently; it runs where
    # .ci/run runs beside them.
    name: tests and lints (no GPU; the act run declared not run here)
    runs-on: ubuntu-latest
    timeout-minutes: 90
    permissions:
      contents: read
    steps:
"#,
    );
    y.push_str(&steps::checkout_default());
    y.push_str(&steps::cargo_cache_restore("ci"));
    y.push_str(
        r#"      - name: .ci/run (fmt, clippy, deny, tests)
        run: .ci/run
        env:
          HRR_ACT_WITHOUT_LOCAL_ACTIONS: declared-not-run
"#,
    );
    y.push_str(&steps::cargo_cache_save("ci"));
    y
}
