//! `.github/workflows/gpu.yml`: the matrix as jobs. A CPU job builds the tools once; one
//! job per family on its runner labels, one matrix leg per shard, each running exactly
//! `hrr-harness run --family F --shard K/N` (what an engineer types); one job merging
//! every shard's report against what the matrix says must be there.

use std::fmt::Write;

use hrr_matrix::{Family, Matrix};

use crate::steps::{self, AFTER_APPROVAL};

/// The job id of a family's shard jobs.
pub fn job_id(f: &Family) -> String {
    format!("gpu-{}", f.name.replace('_', "-"))
}

/// The environment variable carrying a family's shard-job result into the merge job.
fn result_var(f: &Family) -> String {
    let up: String = f
        .name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("RESULT_{up}")
}

/// A shard job's limit: every case's timeout twice (a re-run) plus building, capped by
/// GitHub's 6-hour maximum.
fn minutes(m: &Matrix, f: &Family) -> u64 {
    let per_case = f
        .timeout
        .or(m.defaults.timeout)
        .map(|t| t.0.as_secs())
        .unwrap_or(120);
    (m.cases.len() as u64 * 2 * per_case / 60 + 30).min(360)
}

const HEAD: &str = r#"name: gpu
on:
  push:
    branches: [main]
  # Pull requests run with the workflow file of the base branch (a fork cannot edit the
  # gate), read-only permissions and no secrets; forks wait in the approval job.
  pull_request_target: # zizmor: ignore[dangerous-triggers] gated by the approval job; no secrets, read-only token, no cache written
    types: [opened, synchronize, reopened]
  schedule:
    - cron: '17 2 * * *'
  workflow_dispatch:
    inputs:
      families:
        description: 'Families to run, comma-separated (empty: every family of the matrix)'
        type: string
        default: ''
      compile_only:
        description: 'Compile every case and run none (checks the runners and their compilers)'
        type: boolean
        default: false
permissions:
  contents: read
# One run per pull request (a new push cancels the previous one); pushes, schedules and
# dispatches one group per commit, never cancelled by a later push.
concurrency:
  group: gpu-${{ github.event_name }}-${{ github.event.pull_request.number || github.sha }}
  cancel-in-progress: ${{ github.event_name == 'pull_request_target' }}
jobs:
"#;

fn tools_job(m: &Matrix) -> String {
    let all: Vec<&str> = m.families.iter().map(|f| f.name.as_str()).collect();
    let mut y = format!(
        r#"  tools:
    name: build the tools (CPU)
    needs: approval
    if: {AFTER_APPROVAL}
    runs-on: ubuntu-latest
    timeout-minutes: 45
    permissions:
      contents: read
    outputs:
      families: ${{{{ steps.families.outputs.json }}}}
      family-list: ${{{{ steps.families.outputs.list }}}}
    steps:
      - name: Families to run
        id: families
        env:
          REQUESTED: ${{{{ inputs.families }}}}
        run: |
          set -f
          all="{all}"
          selected=""
          for f in $(printf '%s' "$REQUESTED" | tr ',' ' '); do
            case " $all " in
              *" $f "*) case " $selected " in *" $f "*) ;; *) selected="$selected $f" ;; esac ;;
              *) echo "::error::unknown family '$f' (the matrix has: $all)"; exit 1 ;;
            esac
          done
          [ -n "$selected" ] || selected="$all"
          list=$(echo $selected | tr ' ' ',')
          json=$(printf '"%s",' $selected)
          echo "list=$list" >> "$GITHUB_OUTPUT"
          echo "json=[${{json%,}}]" >> "$GITHUB_OUTPUT"
          echo "families: $list"
"#,
        all = all.join(" ")
    );
    y.push_str(&steps::checkout(false, false));
    y.push_str(&steps::cargo_cache_restore("tools"));
    y.push_str(&steps::build_tools());
    let _ = write!(
        y,
        r#"      - name: Restore the previous merged durations (balances the shards; not for a fork's code)
        if: {own}
        uses: {uses}
        with:
          path: hrr-merged/durations.json
          key: hrr-durations-${{{{ github.run_id }}}}
          restore-keys: |
            hrr-durations-
      - name: Stage the durations
        run: if [ -f hrr-merged/durations.json ]; then cp hrr-merged/durations.json hrr-tools/; fi
"#,
        uses = crate::pins::CACHE.uses_sub("/restore"),
        own = steps::OWN_CODE,
    );
    y.push_str(&steps::cargo_cache_save("tools"));
    y.push_str(&steps::upload("hrr-tools", "hrr-tools", 1, None));
    y
}

fn family_job(m: &Matrix, f: &Family) -> String {
    let shards: Vec<String> = (1..=f.shards).map(|k| k.to_string()).collect();
    let mut y = format!(
        r#"  {id}:
    name: {name} (shard ${{{{ matrix.shard }}}}/{n})
    needs: tools
    if: ${{{{ !cancelled() && needs.tools.result == 'success' && contains(fromJSON(needs.tools.outputs.families), '{name}') }}}}
    runs-on: {labels}
    timeout-minutes: {minutes}
    permissions:
      contents: read
    strategy:
      fail-fast: false
      matrix:
        shard: [{shards}]
"#,
        id = job_id(f),
        name = f.name,
        n = f.shards,
        labels = steps::labels(&f.runner),
        minutes = minutes(m, f),
        shards = shards.join(", "),
    );
    if !f.env.is_empty() {
        y.push_str("    env:\n");
        for (k, v) in &f.env {
            let _ = writeln!(y, "      {k}: {}", steps::yaml_str(v));
        }
    }
    y.push_str("    steps:\n");
    y.push_str(&steps::checkout(false, false));
    y.push_str(&steps::download("hrr-tools", "hrr-tools"));
    let _ = write!(
        y,
        r#"      - name: hrr-harness run --family {name} --shard ${{{{ matrix.shard }}}}/{n}
        env:
          SHARD: ${{{{ matrix.shard }}}}
          COMPILE_ONLY: ${{{{ inputs.compile_only }}}}
        run: |
          chmod +x hrr-tools/hrr-harness hrr-tools/hrr-replay
          args=(run --family {name} --shard "$SHARD/{n}" --tools hrr-tools --output hrr-results)
          if [ -f hrr-tools/durations.json ]; then args+=(--durations hrr-tools/durations.json); fi
          if [ "$COMPILE_ONLY" = true ]; then args+=(--compile-only); fi
          hrr-tools/hrr-harness "${{args[@]}}"
"#,
        name = f.name,
        n = f.shards,
    );
    y.push_str(&steps::upload(
        &format!("hrr-results-{}-shard-${{{{ matrix.shard }}}}", f.name),
        "hrr-results",
        14,
        Some("${{ !cancelled() }}"),
    ));
    y
}

fn report_job(m: &Matrix) -> String {
    let needs: Vec<String> = m.families.iter().map(job_id).collect();
    let mut y = format!(
        r#"  report:
    name: merged report
    needs: [tools, {needs}]
    if: ${{{{ !cancelled() }}}}
    runs-on: ubuntu-latest
    timeout-minutes: 15
    permissions:
      contents: read
    steps:
"#,
        needs = needs.join(", ")
    );
    y.push_str(&steps::checkout(false, false));
    y.push_str(&steps::download("hrr-tools", "hrr-tools"));
    y.push_str(&steps::download_pattern("hrr-results-*", "shards"));
    y.push_str(
        r#"      - name: Merge every expected family and shard (a missing shard is "not run" and fails)
        env:
          FAMILIES: ${{ needs.tools.outputs.family-list }}
        run: |
          chmod +x hrr-tools/hrr-harness
          mkdir -p shards
          hrr-tools/hrr-harness report merge shards --output hrr-merged --expect matrix --families "$FAMILIES"
"#,
    );
    y.push_str(&steps::upload(
        "hrr-merged",
        "hrr-merged",
        30,
        Some("${{ !cancelled() }}"),
    ));
    let _ = write!(
        y,
        r#"      - name: Keep the durations for the next run's shards (main only)
        if: ${{{{ !cancelled() && (github.event_name == 'push' || github.event_name == 'schedule') && hashFiles('hrr-merged/durations.json') != '' }}}}
        uses: {uses}
        with:
          path: hrr-merged/durations.json
          key: hrr-durations-${{{{ github.run_id }}}}
"#,
        uses = crate::pins::CACHE.uses_sub("/save"),
    );
    y.push_str(
        r#"      - name: Every selected family's shard jobs succeeded
        if: ${{ !cancelled() }}
        env:
          FAMILIES: ${{ needs.tools.outputs.family-list }}
          TOOLS: ${{ needs.tools.result }}
"#,
    );
    for f in &m.families {
        let _ = writeln!(
            y,
            "          {}: ${{{{ needs.{}.result }}}}",
            result_var(f),
            job_id(f)
        );
    }
    y.push_str(
        r#"        run: |
          bad=0
          if [ "$TOOLS" != success ]; then echo "::error::the tools job: $TOOLS"; bad=1; fi
          check() {
            case ",$FAMILIES," in
              *",$1,"*) if [ "$2" != success ]; then echo "::error::$1: shard jobs $2"; bad=1; fi ;;
            esac
          }
"#,
    );
    for f in &m.families {
        let _ = writeln!(y, "          check {} \"${}\"", f.name, result_var(f));
    }
    y.push_str("          exit $bad\n");
    y
}

/// The whole workflow.
pub fn workflow(m: &Matrix) -> String {
    let mut y = String::from(crate::HEADER);
    y.push_str(HEAD);
    y.push_str(&steps::approval_job());
    y.push_str(&tools_job(m));
    for f in &m.families {
        y.push_str(&family_job(m, f));
    }
    y.push_str(&report_job(m));
    y
}
