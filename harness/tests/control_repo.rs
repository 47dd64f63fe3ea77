//! `hrr-harness run` and `hrr-harness control` end to end, without a GPU, against a small
//! real git repository built here: a C "tool" built by a real build step (cc) standing
//! in for capture and replay, host cases that check it, fixes in its history with
//! `Guarded-by:` trailers, and controls in its matrix.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;
use common::{text, write};

const HARNESS: &str = env!("CARGO_BIN_EXE_hrr-harness");

fn sh(dir: &Path, script: &str) {
    let o = Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{script}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

const TOOL_BUGGY: &str = r#"#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char** argv) {
    if (argc > 3 && !strcmp(argv[1], "add")) { printf("%d\n", atoi(argv[2]) - atoi(argv[3])); return 0; }
    if (argc > 1 && !strcmp(argv[1], "hello")) { printf("hello\n"); return 0; }
    if (argc > 1 && !strcmp(argv[1], "loop")) { for (;;) {} }
    return 1;
}
"#;

fn matrix(controls: &str) -> String {
    format!(
        r#"version: 1
tools:
  build: [sh, build.sh]
  capture: "{{target_dir}}/release/libhrr_capture.so"
  replay: "{{target_dir}}/release/hrr-replay"
defaults:
  timeout: 60s
families:
  - name: sm90
    vendor: nvidia
    targets: [sm_90]
    runner: [self-hosted, sm90]
cases:
  - name: adds
    dir: adds
    kind: host
    command: [sh, run.sh]
    checks: [exit-zero]
  - name: hello
    dir: hello
    kind: host
    command: [sh, run.sh]
    checks: [exit-zero]
  - name: loops
    dir: loops
    kind: host
    command: [sh, run.sh]
    checks: [exit-zero]
  - name: broken
    dir: broken
    kind: host
    command: [sh, run.sh]
    checks: [exit-zero]
  - name: gpu_case
    dir: gpu_case
    checks: [roundtrip, blob-edit]
rules:
  - family: sm90
    case: broken
    expect: fail
    reason: fails on purpose (the failing-baseline test uses it)
controls:
{controls}"#
    )
}

/// The repository: a buggy tool, then three fix commits (two real, one cosmetic).
fn make_repo() -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("repo");
    std::fs::create_dir_all(&root).unwrap();
    write(&root, "build.sh", "set -e\nmkdir -p \"$CARGO_TARGET_DIR/release\"\ncc -O0 -o \"$CARGO_TARGET_DIR/release/hrr-replay\" tool.c\n: > \"$CARGO_TARGET_DIR/release/libhrr_capture.so\"\n");
    write(&root, "tool.c", TOOL_BUGGY);
    write(
        &root,
        "cases/adds/run.sh",
        "test \"$(\"$HRR_REPLAY\" add 2 2)\" = 4\n",
    );
    write(
        &root,
        "cases/hello/run.sh",
        "test \"$(\"$HRR_REPLAY\" hello)\" = hello\n",
    );
    write(&root, "cases/loops/run.sh", "\"$HRR_REPLAY\" loop\n");
    write(&root, "cases/broken/run.sh", "echo always fails; exit 1\n");
    write(
        &root,
        "cases/gpu_case/main.cpp",
        "int main() { return 0; }\n",
    );
    write(
        &root,
        "cases/common/README",
        "shared headers would live here\n",
    );
    let controls = r#"  - name: add_patch
    patch: controls/add.patch
    guards: [adds]
    keep_passing: [hello]
  - name: conflict
    patch: controls/conflict.patch
    guards: [adds]
  - name: no_build
    patch: controls/no_build.patch
    guards: [hello]
  - name: bad_baseline
    patch: controls/add.patch
    guards: [broken]
"#;
    write(&root, "matrix/matrix.yaml", &matrix(controls));
    sh(&root, "git init -q -b main . && git config user.email t@t && git config user.name t && git add -A && git commit -qm initial");
    // Fix 1: add adds. Guarded by `adds`.
    commit_edit(
        &root,
        "atoi(argv[2]) - atoi(argv[3])",
        "atoi(argv[2]) + atoi(argv[3])",
        "tool: add adds",
        "adds",
    );
    // Fix 2: loop returns. Its guard hangs without it.
    commit_edit(
        &root,
        "for (;;) {}",
        "return 0;",
        "tool: loop returns",
        "loops",
    );
    // A cosmetic change claiming a guard that cannot notice it.
    commit_edit(
        &root,
        "#include <stdio.h>",
        "#include <stdio.h> /* io */",
        "tool: comment",
        "hello",
    );
    // Patches against HEAD: one that removes the add fix, one that cannot apply, one that
    // breaks the build.
    sh(&root, "sed -i 's/atoi(argv\\[2\\]) + atoi/atoi(argv[2]) * atoi/' tool.c && sed -i 's/\"%d\\\\n\", atoi(argv\\[2\\]) \\* atoi(argv\\[3\\])/\"%d\\\\n\", atoi(argv[2]) * atoi(argv[3]) + 1/' tool.c && mkdir -p controls && git diff > controls/add.patch && git checkout -q tool.c");
    sh(&root, "sed 's/atoi(argv\\[2\\])/atoi(argv[9])/' controls/add.patch > /dev/null; printf -- '--- a/tool.c\\n+++ b/tool.c\\n@@ -1,1 +1,1 @@\\n-no such line\\n+other\\n' > controls/conflict.patch");
    sh(&root, "sed -i 's/return 1;/return 1 /' tool.c && git diff > controls/no_build.patch && git checkout -q tool.c");
    sh(&root, "git add -A && git commit -qm 'controls'");
    (t, root)
}

/// Replaces `from` with `to` in tool.c and commits it with a `Guarded-by:` trailer.
fn commit_edit(root: &Path, from: &str, to: &str, subject: &str, guards: &str) {
    let text = std::fs::read_to_string(root.join("tool.c")).unwrap();
    assert!(text.contains(from), "tool.c has no {from:?}");
    std::fs::write(root.join("tool.c"), text.replace(from, to)).unwrap();
    sh(
        root,
        &format!("git commit -qam '{subject}' -m 'Guarded-by: {guards}'"),
    );
}

fn harness(root: &Path, args: &[&str]) -> Output {
    Command::new(HARNESS)
        .args(args)
        .current_dir(root)
        .env_remove("GITHUB_STEP_SUMMARY")
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("NVCC", "/nonexistent/nvcc")
        .output()
        .unwrap()
}

fn outcomes(dir: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(dir.join("outcomes.json")).unwrap()).unwrap()
}

fn outcome_of(o: &serde_json::Value, name: &str) -> String {
    o["controls"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap()["outcome"]
        .as_str()
        .unwrap()
        .to_string()
}

fn no_worktrees_left(root: &Path) {
    let o = Command::new("git")
        .args(["worktree", "list"])
        .current_dir(root)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).lines().count(),
        1,
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let st = Command::new("git")
        .args(["status", "--porcelain", "--untracked-files=no"])
        .current_dir(root)
        .output()
        .unwrap();
    assert!(
        st.stdout.is_empty(),
        "the checkout changed: {}",
        String::from_utf8_lossy(&st.stdout)
    );
}

#[test]
fn run_without_a_gpu_is_an_infrastructure_error_and_compile_only_runs_host_cases() {
    let (_t, root) = make_repo();
    // No GPU of the family: no case runs, exit 7, what is missing named.
    let o = harness(
        &root,
        &[
            "run",
            "--family",
            "sm90",
            "--output",
            "out",
            "--no-progress",
        ],
    );
    let s = text(&o);
    assert_eq!(o.status.code(), Some(7), "{s}");
    assert!(
        s.contains("no GPU of family sm90 (sm_90) visible here") && s.contains("--compile-only"),
        "{s}"
    );
    assert!(!root.join("out/results.json").exists());
    // Compile-only without the compiler: host cases run, the GPU case is not-run, exit 7.
    let o = harness(
        &root,
        &[
            "run",
            "--family",
            "sm90",
            "--compile-only",
            "--output",
            "out",
            "--no-progress",
        ],
    );
    let s = text(&o);
    assert_eq!(o.status.code(), Some(7), "{s}");
    let r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(root.join("out/results.json")).unwrap()).unwrap();
    let status = |c: &str| {
        r["cases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["case"] == c)
            .unwrap()["status"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(status("adds"), "pass");
    assert_eq!(status("hello"), "pass");
    assert_eq!(status("broken"), "expected-fail");
    assert_eq!(status("gpu_case"), "not-run");
    assert!(s.contains("nvcc not found"), "{s}");
    assert!(s.contains("GPU case(s) were not compiled"), "{s}");
    assert_eq!(status("loops"), "pass");
    let junit = std::fs::read_to_string(root.join("out/junit.xml")).unwrap();
    assert!(junit.contains("<testsuite name=\"hrr-sm90\""));
    let xsd = Path::new(env!("CARGO_MANIFEST_DIR")).join("../reports/schema/junit-10.xsd");
    if let Some(xmllint) = hrr_testkit::tool(&hrr_testkit::tools::XMLLINT) {
        let v = Command::new(xmllint)
            .arg("--noout")
            .arg("--schema")
            .arg(&xsd)
            .arg(root.join("out/junit.xml"))
            .output()
            .unwrap();
        assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stderr));
    }
    // A family this machine cannot be, and bad flags: exit 2 with the reason.
    let o = harness(&root, &["run", "--family", "gfx950"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("unknown family `gfx950`"));
    let o = harness(&root, &["run", "--family", "sm90", "--shard", "3/2"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("need 1 <= K <= N"));
}

#[test]
fn controls_are_caught_missed_unviable_and_timed_out() {
    let (_t, root) = make_repo();
    let out = root.join("target/ctl");
    let o = harness(
        &root,
        &[
            "control",
            "--family",
            "sm90",
            "--commits",
            "HEAD~4..HEAD",
            "--control",
            "add_patch",
            "--control",
            "conflict",
            "--control",
            "no_build",
            "--timeout-floor",
            "2s",
            "--output",
            out.to_str().unwrap(),
        ],
    );
    let s = text(&o);
    let oc = outcomes(&out);
    assert!(oc["baseline_passed"].as_bool().unwrap(), "{s}");
    assert_eq!(outcome_of(&oc, "add_patch"), "caught", "{s}");
    assert_eq!(outcome_of(&oc, "conflict"), "unviable", "{s}");
    assert_eq!(outcome_of(&oc, "no_build"), "unviable", "{s}");
    let commits: Vec<&serde_json::Value> = oc["controls"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["name"].as_str().unwrap().starts_with("commit-"))
        .collect();
    assert_eq!(commits.len(), 3, "{s}");
    let by_outcome = |x: &str| commits.iter().filter(|c| c["outcome"] == x).count();
    assert_eq!(by_outcome("caught"), 1, "{s}"); // add adds
    assert_eq!(by_outcome("timeout"), 1, "{s}"); // loop returns
    assert_eq!(by_outcome("missed"), 1, "{s}"); // the comment
                                                // Missed wins the exit code.
    assert_eq!(o.status.code(), Some(3), "{s}");
    let missed = std::fs::read_to_string(out.join("missed.txt")).unwrap();
    assert_eq!(missed.lines().count(), 1);
    assert_eq!(
        std::fs::read_to_string(out.join("unviable.txt"))
            .unwrap()
            .lines()
            .count(),
        2
    );
    assert!(
        std::fs::read_to_string(out.join("controls/add_patch/removed.diff"))
            .unwrap()
            .contains("tool.c")
    );
    assert!(s.contains("still passed without the fix: hello"), "{s}");
    let junit = std::fs::read_to_string(out.join("junit.xml")).unwrap();
    assert!(junit.contains("classname=\"controls-sm90\""));
    no_worktrees_left(&root);
}

#[test]
fn a_failing_baseline_stops_the_run_and_bad_trailers_are_errors() {
    let (_t, root) = make_repo();
    let out = root.join("target/ctl");
    let o = harness(
        &root,
        &[
            "control",
            "--family",
            "sm90",
            "--control",
            "bad_baseline",
            "--output",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(4), "{}", text(&o));
    assert!(text(&o).contains("Baseline failed"));
    assert!(outcomes(&out)["controls"].as_array().unwrap().is_empty());
    // A trailer naming an unknown case.
    sh(
        &root,
        "git commit -q --allow-empty -m 'x' -m 'Guarded-by: adds, nosuchcase'",
    );
    let o = harness(
        &root,
        &["control", "--family", "sm90", "--commits", "HEAD~1..HEAD"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).contains("Guarded-by names unknown case(s): nosuchcase"),
        "{}",
        text(&o)
    );
    no_worktrees_left(&root);
}

#[test]
fn an_interrupted_control_run_removes_its_worktrees() {
    let (_t, root) = make_repo();
    let out = root.join("target/ctl");
    // The loop control hangs until its timeout; interrupt it meanwhile.
    let mut child = Command::new(HARNESS)
        .args([
            "control",
            "--family",
            "sm90",
            "--commits",
            "HEAD~3..HEAD~2",
            "--timeout-floor",
            "60s",
            "--output",
        ])
        .arg(&out)
        .current_dir(&root)
        .env("NVCC", "/nonexistent/nvcc")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let wt = root.join("target/hrr-build/worktrees");
    let start = std::time::Instant::now();
    while !(wt.is_dir()
        && std::fs::read_dir(&wt)
            .map(|d| d.count() > 0)
            .unwrap_or(false))
    {
        assert!(start.elapsed().as_secs() < 60, "no worktree appeared");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(1500));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert_eq!(
        std::fs::read_dir(&wt).unwrap().count(),
        0,
        "worktree left behind"
    );
    no_worktrees_left(&root);
    assert!(out.join("outcomes.json").is_file());
}

#[test]
fn build_only_tools_serve_as_prebuilt_tools() {
    let (_t, root) = make_repo();
    let tools = root.join("target/control-tools");
    let run = |extra: &[&str], out: &str| {
        let mut args = vec![
            "control",
            "--family",
            "sm90",
            "--control",
            "add_patch",
            "--output",
            out,
        ];
        args.extend_from_slice(extra);
        harness(&root, &args)
    };
    // --build-only: the tools of the tree without the fix, copied out; no case runs, so
    // the control proves nothing yet and nothing failed ("built", exit 0: the CI job that
    // builds them for the GPU runner must pass).
    let o = run(&["--build-only", tools.to_str().unwrap()], "bo");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("BUILT, NOT RUN"), "{}", text(&o));
    let oc = outcomes(&root.join("bo"));
    assert_eq!(outcome_of(&oc, "add_patch"), "built");
    assert!(oc["baseline"].as_array().unwrap().is_empty());
    assert!(tools.join("add_patch/hrr-replay").is_file());
    assert!(tools.join("add_patch/libhrr_capture.so").is_file());
    // --prebuilt: the same control on those tools, without building them again.
    let o = run(&["--prebuilt", tools.to_str().unwrap()], "pre");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(
        outcome_of(&outcomes(&root.join("pre")), "add_patch"),
        "caught"
    );
    // A prebuilt directory without this control's tools: an error, not a silent build.
    let empty = root.join("target/no-tools");
    std::fs::create_dir_all(&empty).unwrap();
    let o = run(&["--prebuilt", empty.to_str().unwrap()], "none");
    assert_eq!(o.status.code(), Some(5), "{}", text(&o));
    let oc = outcomes(&root.join("none"));
    assert_eq!(outcome_of(&oc, "add_patch"), "error");
    assert!(
        text(&o).contains("has no hrr-replay (make it with --build-only)"),
        "{}",
        text(&o)
    );
    no_worktrees_left(&root);
}

#[test]
fn a_pull_request_without_trailers_controls_nothing_and_passes() {
    let (_t, root) = make_repo();
    // The pull request: one commit without a trailer on top of the base branch.
    sh(
        &root,
        "git update-ref refs/remotes/origin/main HEAD && git commit -q --allow-empty -m 'docs only'",
    );
    let out = root.join("target/pr");
    let o = Command::new(HARNESS)
        .args(["control", "--family", "sm90", "--pr", "--output"])
        .arg(&out)
        .current_dir(&root)
        .env("GITHUB_BASE_REF", "main")
        .env_remove("GITHUB_TOKEN")
        .env_remove("GITHUB_STEP_SUMMARY")
        .env("NVCC", "/nonexistent/nvcc")
        .output()
        .unwrap();
    let s = text(&o);
    assert_eq!(o.status.code(), Some(0), "{s}");
    assert!(s.contains("nothing to control"), "{s}");
    assert!(s.contains("GITHUB_TOKEN is not set"), "{s}");
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(md.contains("**PASS**: 0 caught"), "{md}");
    assert!(out.join("junit.xml").is_file());
    no_worktrees_left(&root);
}
