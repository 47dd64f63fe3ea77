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
    name: tests, lints and the act run (no GPU)
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
"#,
    );
    y.push_str(&steps::cargo_cache_save("ci"));
    y
}
