//! The security and hygiene rules of the generated workflows, checked on the parsed YAML:
//! least-privilege permissions, actions pinned to commits, artifacts that expire, no
//! secrets near pull-request code, self-hosted jobs only behind the fork approval, the
//! merge job's completeness checks; and zizmor (PyPI, `--offline`, which .ci/install installs)
//! finds nothing in them.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_norway::Value;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn matrix() -> hrr_matrix::Matrix {
    let r = repo();
    hrr_matrix::load(&r.join("matrix/matrix.yaml"), &r.join("cases"))
        .unwrap_or_else(|e| panic!("{e}"))
}

/// (path, text, parsed) of every generated workflow.
fn workflows() -> Vec<(String, String, Value)> {
    hrr_workflows::generate(&matrix())
        .into_iter()
        .filter(|(p, _)| p.starts_with(".github/workflows/"))
        .map(|(p, t)| {
            let v: Value = serde_norway::from_str(&t).unwrap_or_else(|e| panic!("{p}: {e}"));
            (p, t, v)
        })
        .collect()
}

fn s(v: &Value) -> &str {
    v.as_str().unwrap_or("")
}

fn jobs(w: &Value) -> Vec<(String, &Value)> {
    w["jobs"]
        .as_mapping()
        .expect("jobs")
        .iter()
        .map(|(k, v)| (s(k).to_string(), v))
        .collect()
}

fn steps(job: &Value) -> &[Value] {
    job["steps"].as_sequence().map(Vec::as_slice).unwrap_or(&[])
}

fn triggers(w: &Value) -> Vec<String> {
    // serde_norway reads the key `on` as a string (YAML 1.2 core schema).
    w["on"]
        .as_mapping()
        .expect("on:")
        .keys()
        .map(|k| s(k).to_string())
        .collect()
}

fn runs_self_hosted(job: &Value) -> bool {
    job["runs-on"]
        .as_sequence()
        .is_some_and(|l| l.iter().any(|x| s(x) == "self-hosted"))
}

#[test]
fn permissions_are_read_only_except_the_publishing_job() {
    for (p, _, w) in workflows() {
        let top = &w["permissions"];
        let top_ok = top
            .as_mapping()
            .is_some_and(|m| m.iter().all(|(k, v)| s(k) == "contents" && s(v) == "read"));
        assert!(
            top_ok,
            "{p}: workflow-level permissions beyond contents: read: {top:?}"
        );
        for (id, job) in jobs(&w) {
            let perms = job["permissions"]
                .as_mapping()
                .unwrap_or_else(|| panic!("{p}: job {id} sets no permissions"));
            let writes: Vec<&str> = perms
                .iter()
                .filter(|(_, v)| s(v) == "write")
                .map(|(k, _)| s(k))
                .collect();
            if p == hrr_workflows::PUBLISH_WORKFLOW {
                assert_eq!(writes, ["checks"], "{p}: {id}");
            } else {
                assert!(writes.is_empty(), "{p}: job {id} may write {writes:?}");
            }
        }
    }
}

#[test]
fn every_action_is_pinned_to_a_commit_with_its_version() {
    let mut seen = 0;
    for (p, text, w) in workflows() {
        for (id, job) in jobs(&w) {
            for st in steps(job) {
                let Some(uses) = st["uses"].as_str() else {
                    continue;
                };
                seen += 1;
                let (action, sha) = uses.split_once('@').expect("@");
                assert!(
                    sha.len() == 40 && sha.chars().all(|c| c.is_ascii_hexdigit()),
                    "{p}: {id}: {uses} is not pinned to a commit"
                );
                let pin = hrr_workflows::pins::ALL
                    .iter()
                    .find(|pin| action.starts_with(pin.action))
                    .unwrap_or_else(|| panic!("{p}: {uses}: not in pins::ALL"));
                assert_eq!(sha, pin.sha, "{p}: {uses}");
                assert!(
                    text.contains(&format!("@{sha} # {}", pin.version)),
                    "{p}: {uses} has no version comment"
                );
            }
        }
    }
    assert!(seen > 10, "only {seen} actions found");
}

#[test]
fn artifacts_expire_and_checkouts_keep_no_credentials() {
    for (p, _, w) in workflows() {
        for (id, job) in jobs(&w) {
            for st in steps(job) {
                let uses = s(&st["uses"]);
                if uses.starts_with("actions/upload-artifact@") {
                    let days = st["with"]["retention-days"].as_u64();
                    assert!(
                        days.is_some_and(|d| (1..=30).contains(&d)),
                        "{p}: {id}: upload without retention-days"
                    );
                }
                if uses.starts_with("actions/checkout@") {
                    assert_eq!(
                        st["with"]["persist-credentials"].as_bool(),
                        Some(false),
                        "{p}: {id}: checkout persists the token in .git/config"
                    );
                }
            }
        }
    }
}

#[test]
fn no_secret_near_pull_request_code() {
    for (p, text, w) in workflows() {
        assert!(!text.contains("secrets."), "{p} reads a secret");
        if p == hrr_workflows::PUBLISH_WORKFLOW {
            continue;
        }
        // The token only in the approval job's repository check, which runs the base
        // branch's harness before any of the pull request's code, reading (`actions:
        // read`) what no job can write.
        let mut handed = 0;
        for (id, job) in jobs(&w) {
            for st in steps(job) {
                let st_text = serde_norway::to_string(st).unwrap();
                if st_text.contains("github.token") || st_text.contains("GITHUB_TOKEN") {
                    assert_eq!(id, "approval", "{p}: job {id} gets the token");
                    assert_eq!(s(&st["env"]["GITHUB_TOKEN"]), "${{ github.token }}", "{p}");
                    assert_eq!(
                        s(&st["run"]),
                        hrr_workflows::steps::repo_check_script(),
                        "{p}: the token's step runs anything but the repository check"
                    );
                    handed += 1;
                }
            }
            if id == "approval" {
                for st in steps(job) {
                    if s(&st["uses"]).starts_with("actions/checkout@") {
                        assert!(
                            st["with"]["ref"].is_null() && st["with"]["repository"].is_null(),
                            "{p}: the approval job checks out the pull request"
                        );
                    }
                }
                let perms = job["permissions"].as_mapping().unwrap();
                let perms: Vec<(&str, &str)> = perms.iter().map(|(k, v)| (s(k), s(v))).collect();
                assert_eq!(perms, [("actions", "read"), ("contents", "read")], "{p}");
            }
        }
        let has_approval = !w["jobs"]["approval"].is_null();
        assert_eq!(handed, usize::from(has_approval), "{p}");
        assert_eq!(
            text.matches("github.token").count() + text.matches("GITHUB_TOKEN").count(),
            2 * handed,
            "{p}: the token elsewhere than the check's env"
        );
    }
    // The publisher: the token only in the step that runs the default branch's harness,
    // which never checks out the pull request (no ref, no head SHA).
    let (_, text, w) = workflows()
        .into_iter()
        .find(|(p, _, _)| p == hrr_workflows::PUBLISH_WORKFLOW)
        .unwrap();
    assert_eq!(triggers(&w), ["workflow_run"]);
    assert!(!text.contains("head.sha") && !text.contains("ref:"));
    for (_, job) in jobs(&w) {
        for st in steps(job) {
            if s(&st["uses"]).starts_with("actions/checkout@") {
                assert!(st["with"]["ref"].is_null() && st["with"]["repository"].is_null());
            }
        }
    }
}

/// A job's transitive `needs`.
fn ancestors(w: &Value, id: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut todo = vec![id.to_string()];
    while let Some(j) = todo.pop() {
        let needs = &w["jobs"][j.as_str()]["needs"];
        let list: Vec<String> = match needs {
            Value::String(n) => vec![n.clone()],
            Value::Sequence(l) => l.iter().map(|x| s(x).to_string()).collect(),
            _ => vec![],
        };
        for n in list {
            if !out.contains(&n) {
                out.push(n.clone());
                todo.push(n);
            }
        }
    }
    out
}

#[test]
fn self_hosted_runners_only_run_approved_heads_from_base_branch_workflows() {
    let mut gated = 0;
    for (p, _, w) in workflows() {
        let self_hosted: Vec<String> = jobs(&w)
            .into_iter()
            .filter(|(_, j)| runs_self_hosted(j))
            .map(|(id, _)| id)
            .collect();
        if self_hosted.is_empty() {
            continue;
        }
        // `pull_request` would run the pull request's own copy of this file.
        let on = triggers(&w);
        assert!(!on.contains(&"pull_request".to_string()), "{p}: {on:?}");
        assert!(
            on.contains(&"pull_request_target".to_string()),
            "{p}: {on:?}"
        );
        let approval = &w["jobs"]["approval"];
        assert_eq!(
            s(&approval["environment"]),
            hrr_workflows::steps::ENVIRONMENT,
            "{p}"
        );
        assert!(
            s(&approval["if"])
                .contains("github.event.pull_request.head.repo.full_name != github.repository"),
            "{p}: the approval job must hold exactly the fork pull requests"
        );
        // An environment missing or without required reviewers lets the approval job
        // start at once: its repository check fails it there, so nothing after it runs.
        assert!(
            steps(approval)
                .iter()
                .any(|st| s(&st["run"]) == hrr_workflows::steps::repo_check_script()),
            "{p}: the approval job does not run `workflows check --repo`"
        );
        for id in self_hosted {
            assert!(
                ancestors(&w, &id).contains(&"approval".to_string()),
                "{p}: {id} runs on a self-hosted runner without the approval job"
            );
            // Checks out the approved head SHA in pull_request_target runs.
            let job = &w["jobs"][id.as_str()];
            let pr_checkout = steps(job).iter().find(|st| {
                s(&st["uses"]).starts_with("actions/checkout@")
                    && (s(&st["if"]) == "github.event_name == 'pull_request_target'"
                        || (st["if"].is_null() && on == ["pull_request_target"]))
            });
            assert_eq!(
                pr_checkout.map(|st| s(&st["with"]["ref"])),
                Some("${{ github.event.pull_request.head.sha }}"),
                "{p}: {id}"
            );
            gated += 1;
        }
        // Whatever needs the approval tolerates only success or "skipped" (not a fork).
        for (id, job) in jobs(&w) {
            if s(&job["needs"]) == "approval" {
                assert!(
                    s(&job["if"]).contains(
                        "needs.approval.result == 'success' || needs.approval.result == 'skipped'"
                    ),
                    "{p}: {id}"
                );
            }
        }
    }
    assert!(gated >= matrix().families.len(), "{gated}");
}

#[test]
fn caches_are_written_only_by_main_and_concurrency_never_cancels_pushes() {
    for (p, _, w) in workflows() {
        for (id, job) in jobs(&w) {
            for st in steps(job) {
                if s(&st["uses"]).starts_with("actions/cache/save@") {
                    let cond = s(&st["if"]);
                    assert!(
                        cond.contains("github.event_name == 'push'")
                            && !cond.contains("pull_request"),
                        "{p}: {id}: cache saved from {cond:?}"
                    );
                }
                assert!(
                    !s(&st["uses"]).starts_with("actions/cache@"),
                    "{p}: {id}: actions/cache saves on every event; use restore and save"
                );
                // A fork's pull request, run under pull_request_target after approval, is
                // in the base repository's cache scope: it restores nothing of main's.
                if s(&st["uses"]).starts_with("actions/cache/restore@")
                    && triggers(&w).iter().any(|t| t == "pull_request_target")
                {
                    assert_eq!(
                        s(&st["if"]),
                        hrr_workflows::steps::OWN_CODE,
                        "{p}: {id}: a cache restored for a fork's code"
                    );
                }
            }
        }
        let c = &w["concurrency"];
        let group = s(&c["group"]);
        let on = triggers(&w);
        if on.iter().any(|t| t.starts_with("pull_request")) {
            assert!(
                group.contains("github.event.pull_request.number"),
                "{p}: {group}"
            );
        } else {
            assert!(group.contains("workflow_run.id"), "{p}: {group}");
        }
        if on.contains(&"push".to_string()) {
            assert!(
                group.contains("github.sha"),
                "{p}: pushes share a group: {group}"
            );
            let cancel = &c["cancel-in-progress"];
            assert!(
                cancel.as_bool() != Some(true) && s(cancel).contains("github.event_name =="),
                "{p}: a push would cancel the previous push's run"
            );
        }
    }
}

#[test]
fn the_merge_job_is_complete_or_red() {
    let m = matrix();
    let (_, _, w) = workflows()
        .into_iter()
        .find(|(p, _, _)| p == hrr_workflows::GPU_WORKFLOW)
        .unwrap();
    let on = triggers(&w);
    assert!(on.contains(&"schedule".to_string()) && on.contains(&"workflow_dispatch".to_string()));
    assert!(!w["on"]["workflow_dispatch"]["inputs"]["families"].is_null());
    let report = &w["jobs"]["report"];
    assert_eq!(s(&report["if"]), "${{ !cancelled() }}");
    let needs: Vec<&str> = report["needs"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(s)
        .collect();
    let merge = steps(report)
        .iter()
        .find(|st| s(&st["run"]).contains("report merge"))
        .expect("a merge step");
    assert!(s(&merge["run"]).contains("--expect matrix --families \"$FAMILIES\""));
    let check = steps(report)
        .iter()
        .find(|st| s(&st["run"]).contains("exit $bad"))
        .expect("a step checking needs.*.result");
    assert_eq!(s(&check["if"]), "${{ !cancelled() }}");
    for f in &m.families {
        let id = hrr_workflows::gpu::job_id(f);
        assert!(needs.contains(&id.as_str()), "report does not need {id}");
        let env = check["env"].as_mapping().unwrap();
        assert!(
            env.values()
                .any(|v| s(v) == format!("${{{{ needs.{id}.result }}}}")),
            "{id}'s result is not checked"
        );
        assert!(s(&check["run"]).contains(&format!("check {} ", f.name)));
        let job = &w["jobs"][id.as_str()];
        assert!(s(&job["if"]).contains(&format!("'{}'", f.name)));
    }
}

#[test]
fn controls_build_on_a_cpu_runner_and_the_gpu_runner_builds_no_rust() {
    let files = hrr_workflows::generate(&matrix());
    let text = &files
        .iter()
        .find(|(p, _)| p == hrr_workflows::CONTROLS_WORKFLOW)
        .unwrap()
        .1;
    let w: Value = serde_norway::from_str(text).unwrap();
    for (id, job) in jobs(&w) {
        let runs: String = steps(job).iter().map(|st| s(&st["run"])).collect();
        if runs_self_hosted(job) {
            assert!(
                !runs.contains("cargo "),
                "{id} builds Rust on the GPU runner"
            );
            assert!(runs.contains("--prebuilt"), "{id}");
        } else if runs.contains("control ") {
            assert!(runs.contains("--build-only"), "{id}");
        }
    }
}

#[test]
fn zizmor_finds_nothing() {
    let Some(z) = hrr_testkit::tool(&hrr_testkit::tools::ZIZMOR) else {
        return;
    };
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join(".github/workflows");
    std::fs::create_dir_all(&dir).unwrap();
    for (p, text) in hrr_workflows::generate(&matrix()) {
        std::fs::write(t.path().join(&p), text).unwrap();
    }
    let o = Command::new(&z)
        .args(["--offline", "--no-progress"])
        .arg(t.path().join(".github/workflows"))
        .output()
        .expect("run zizmor");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success() && out.contains("No findings"),
        "zizmor: {}\n{out}{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    // It does report: an unpinned action and a template injection in a pull_request_target.
    std::fs::write(
        dir.join("bad.yml"),
        "on: pull_request_target\njobs:\n  x:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n        with:\n          ref: ${{ github.event.pull_request.head.sha }}\n      - run: echo ${{ github.event.pull_request.title }}\n",
    )
    .unwrap();
    let o = Command::new(&z)
        .args(["--offline", "--no-progress"])
        .arg(dir.join("bad.yml"))
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(!o.status.success(), "{out}");
    assert!(
        out.contains("template-injection") && out.contains("unpinned-uses"),
        "{out}"
    );
}
