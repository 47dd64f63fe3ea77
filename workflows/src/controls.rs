//! `.github/workflows/controls.yml`: the negative controls a pull request's commits declare
//! (`Guarded-by:` trailers). A CPU job builds every control's capture and replay
//! (`control --build-only`); the GPU job removes each fix in a worktree and runs the guard
//! cases with those builds (`control --prebuilt`), building no Rust. Neither job holds a
//! token that can write: the outcome (junit.xml, summary.md) is an artifact that
//! `publish.yml` turns into a check run from the default branch's code.

use hrr_matrix::{Matrix, Vendor};

use crate::steps::{self, AFTER_APPROVAL};

/// The family whose runner runs the controls: the first NVIDIA family, else the first.
fn family(m: &Matrix) -> Option<&hrr_matrix::Family> {
    m.families
        .iter()
        .find(|f| f.vendor == Vendor::Nvidia)
        .or(m.families.first())
}

/// The whole workflow.
pub fn workflow(m: &Matrix) -> String {
    let (name, labels) = match family(m) {
        Some(f) => (f.name.clone(), steps::labels(&f.runner)),
        None => (String::new(), "[]".into()),
    };
    let mut y = String::from(crate::HEADER);
    y.push_str(
        r#"name: controls
on:
  # The workflow file of the base branch (a fork cannot edit the gate), read-only
  # permissions, no secrets; forks wait in the approval job.
  pull_request_target: # zizmor: ignore[dangerous-triggers] gated by the approval job; no secrets, read-only token, no cache written
    types: [opened, synchronize, reopened]
permissions:
  contents: read
concurrency:
  group: controls-pr-${{ github.event.pull_request.number }}
  cancel-in-progress: true
jobs:
"#,
    );
    y.push_str(&steps::approval_job());
    y.push_str(&format!(
        r#"  build:
    name: build each control's capture and replay (CPU)
    needs: approval
    if: {AFTER_APPROVAL}
    runs-on: ubuntu-latest
    timeout-minutes: 60
    permissions:
      contents: read
    steps:
"#
    ));
    y.push_str(&steps::checkout(true, true));
    y.push_str(&steps::cargo_cache_restore("controls"));
    y.push_str(&steps::build_tools());
    y.push_str(&format!(
        r#"      - name: hrr-harness control --pr --family {name} --build-only
        run: hrr-tools/hrr-harness control --pr --family {name} --build-only hrr-tools/controls
"#
    ));
    y.push_str(&steps::upload("hrr-control-tools", "hrr-tools", 1, None));
    y.push_str(&format!(
        r#"  controls:
    name: negative controls ({name})
    needs: build
    if: ${{{{ !cancelled() && needs.build.result == 'success' }}}}
    runs-on: {labels}
    timeout-minutes: 180
    permissions:
      contents: read
    steps:
"#
    ));
    y.push_str(&steps::checkout(true, true));
    y.push_str(&steps::download("hrr-control-tools", "hrr-tools"));
    y.push_str(&format!(
        r#"      - name: hrr-harness control --pr --family {name} --prebuilt
        run: |
          chmod +x hrr-tools/hrr-harness hrr-tools/hrr-replay
          find hrr-tools/controls -name hrr-replay -exec chmod +x {{}} +
          hrr-tools/hrr-harness control --pr --family {name} --tools hrr-tools --prebuilt hrr-tools/controls --output hrr-controls
"#
    ));
    y.push_str(&steps::upload(
        "hrr-controls",
        "hrr-controls",
        14,
        Some("${{ !cancelled() }}"),
    ));
    y
}
